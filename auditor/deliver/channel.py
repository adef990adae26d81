"""What a delivery channel is, and the one outbox every channel keeps its unsent messages in.

A channel (mail: auditor.deliver.mail; Slack and Teams webhooks: auditor.deliver.chat) sends one
message, says which of its errors leave the message worth trying again, and stores a message as a
file and reads it back. The outbox does the rest once for every channel: a message that fails with
such an error is saved, atomically, as `<time>-<id><suffix>` in the outbox directory, and
`audit send-outbox` (or the next run) sends what waits there, oldest first by name, removing each
file once its message is sent and keeping it, with one line, when it fails again.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from auditor.errors import AuditorError
from auditor.files import write_atomic

MessageT = TypeVar("MessageT")


@dataclass(frozen=True)
class Unsent(Generic[MessageT]):
    """A message its channel could not send, and whether it waits in the outbox."""

    message: MessageT
    error: AuditorError  # why it was not sent: one line, never a secret
    outbox: Path
    kept: Path | OSError  # its file in the outbox, or why it could not be saved there


class Channel(Protocol[MessageT]):
    """One way to deliver a message; a channel never echoes a secret in an error or a stored file."""

    @property
    def name(self) -> str:
        """`mail`, `chat`: what the channel is, for people."""

    @property
    def noun(self) -> str:
        """What one of its messages is called in a line: `message`, `chat post`."""

    @property
    def outbox_suffix(self) -> str:
        """The end of the names of this channel's files in the outbox (`.eml`, `.chat.json`)."""

    @property
    def transient_errors(self) -> tuple[type[AuditorError], ...]:
        """The errors of `send` after which the message is kept in the outbox and tried again;
        any other error is a fault and propagates."""

    @property
    def configured(self) -> bool:
        """The settings name somewhere to send to (then its outbox is drained even when empty)."""

    def check(self) -> None:
        """Raise ConfigError when the channel cannot send at all; before its outbox is drained."""

    def send(self, message: MessageT) -> None:
        """Deliver one message; raise one of `transient_errors` when it could not be."""

    def dump(self, message: MessageT) -> bytes:
        """The message as its outbox file holds it (no secret: a webhook URL is stored by the name
        of the variable that holds it)."""

    def load(self, data: bytes) -> MessageT:
        """A message read back from its outbox file; ValueError: the file is not one."""

    def unsent_line(self, unsent: Unsent[MessageT]) -> str:
        """One line for a message that could not be sent: why, and where it waits."""

    def drained_line(self, sent: int) -> str:
        """What draining the outbox did, e.g. `sent 2 messages`."""


@dataclass(frozen=True)
class Drained:
    sent: int  # messages sent and removed from the outbox
    errors: tuple[str, ...]  # one line per message left there: `<file name>: <why>`


@dataclass(frozen=True)
class Outbox:
    """The directory unsent messages wait in (email.outbox_dir), for every channel."""

    directory: Path

    def save(self, channel: Channel[MessageT], message: MessageT) -> Path:
        """Written atomically: a crash or a full disk never leaves half a message. Raises OSError."""
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        final = self.directory / f"{stamp}-{uuid.uuid4().hex[:8]}{channel.outbox_suffix}"
        write_atomic(final, channel.dump(message))
        return final

    def send_or_keep(self, channel: Channel[MessageT],
                     messages: list[MessageT]) -> tuple[list[MessageT], list[Unsent[MessageT]]]:
        """Send each message in order; one that fails with a transient error is saved here and the
        next is still sent. Returns (the messages sent, those not sent)."""
        sent: list[MessageT] = []
        unsent: list[Unsent[MessageT]] = []
        for message in messages:
            try:
                channel.send(message)
            except channel.transient_errors as error:
                kept: Path | OSError
                try:
                    kept = self.save(channel, message)
                except OSError as save_error:
                    kept = save_error
                unsent.append(Unsent(message, error, self.directory, kept))
                continue
            sent.append(message)
        return sent, unsent

    def waiting(self, channel: Channel[MessageT]) -> list[Path]:
        """The channel's files, oldest first (their names start with the time they were saved)."""
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.glob(f"*{channel.outbox_suffix}"))

    def drain(self, channel: Channel[MessageT]) -> Drained:
        """Send every message waiting for `channel`; a sent one's file is removed, one that fails
        (or cannot be read) stays, with one line."""
        sent, errors = 0, []
        for path in self.waiting(channel):
            try:
                message = channel.load(path.read_bytes())
            except (OSError, ValueError) as exc:
                errors.append(f"{path.name}: not a saved {channel.noun} ({exc})")
                continue
            try:
                channel.send(message)
            except channel.transient_errors as exc:
                errors.append(f"{path.name}: {exc}")
                continue
            path.unlink()
            sent += 1
        return Drained(sent, tuple(errors))
