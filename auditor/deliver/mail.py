"""Send the report by SMTP or Amazon SES (SendRawEmail), as configured in [email].

A message that cannot be sent is never lost: it is saved as an .eml file in the outbox
(auditor.deliver.channel), and `audit send-outbox` sends it later, to the recipients it was
addressed to.
"""

from __future__ import annotations

import hashlib
import os
import re
import smtplib
import ssl
from dataclasses import dataclass, replace
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import getaddresses
from pathlib import Path
from typing import ClassVar

import platformdirs

from auditor.config import EmailConfig
from auditor.deliver.audience import AudienceOf, delivered_partition, has_something_to_act_on, partition
from auditor.deliver.channel import Outbox, Unsent
from auditor.errors import AuditorError, ConfigError, ProblemLines
from auditor.files import write_atomic
from auditor.models import AuditReport
from auditor.report.email_message import build_report_message


class DeliveryError(AuditorError):
    """The mail server or SES refused or could not be reached."""


@dataclass(frozen=True)
class Delivery:
    recipients: tuple[str, ...]
    message: EmailMessage
    owner: str | None = None  # None: the configured recipients


def outbox_path(email: EmailConfig) -> Path:
    if email.outbox_dir:
        return Path(email.outbox_dir).expanduser()
    return Path(platformdirs.user_data_dir("sagemaker-auditor")) / "outbox"


# `--email-to-file` without [email] addresses: the message says who would have sent and received it.
PLACEHOLDER_SENDER = "sagemaker-auditor@localhost"
PLACEHOLDER_RECIPIENT = "recipients-not-configured@localhost"


def for_file(email: EmailConfig) -> EmailConfig:
    """The settings for writing messages to files: no login, placeholders for missing addresses."""
    return replace(email, smtp_username=None, smtp_password_env=None,
                   sender=email.sender or PLACEHOLDER_SENDER,
                   recipients=email.recipients or (PLACEHOLDER_RECIPIENT,))


def check_email_config(email: EmailConfig, to_file: bool = False) -> None:
    """Fail before the audit, not after it, when [email] cannot work. `to_file`: for --email-to-file,
    which needs no server, no login and no addresses (placeholders stand in)."""
    if to_file:
        return
    if not email.sender:
        raise ConfigError("email.sender is required to send the report (--email)")
    if not email.recipients:
        raise ConfigError("email.recipients must name at least one address to send the report (--email)")
    if email.transport == "smtp" and email.smtp_username and not email.smtp_password_env:
        raise ConfigError("email.smtp_password_env must name the environment variable holding the SMTP password")
    if email.smtp_password_env and email.smtp_password_env not in os.environ:
        raise ConfigError(f"environment variable {email.smtp_password_env} (email.smtp_password_env) is not set")


def _owner_address(value: str | None) -> str | None:
    """A tag value that is one plausible email address, else None (then it is not routed)."""
    if not value:
        return None
    value = value.strip()
    local, _, domain = value.partition("@")
    # No whitespace or control character (a CR/LF would forge headers), one @, no display name.
    plain = value.isprintable() and not any(c.isspace() or c in "<>,;\"@" for c in local + domain)
    return value if plain and local and "." in domain else None


def owner_of(tag: str) -> AudienceOf:
    """The audience of a resource for mail: the address in its `tag`, when it is one."""
    return lambda tags: _owner_address(tags.get(tag))


def split_by_owner(report: AuditReport, tag: str) -> dict[str | None, AuditReport]:
    """One report per owner address found in `tag`; None: the unrouted rest and the region-wide
    errors. A partition of every resource, finding, plan and error: see deliver.audience."""
    return partition(report, owner_of(tag))


def plan_deliveries(report: AuditReport, email: EmailConfig) -> list[Delivery]:
    """One message for the recipients, first; with route_by_tag, one per owner too, each with only
    the owner's resources. The recipients always get theirs; an owner with nothing to act on gets
    none unless email.send_empty_owner_reports, and their resources are in the recipients' mail."""
    assert email.sender is not None
    if not email.route_by_tag:
        message = build_report_message(report, email.sender, email.recipients, email.subject_prefix)
        return [Delivery(tuple(email.recipients), message)]
    send_empty = email.send_empty_owner_reports
    parts = delivered_partition(report, owner_of(email.route_by_tag),
                                lambda part: send_empty or has_something_to_act_on(part))
    deliveries = []
    for owner in [None, *(o for o in parts if o is not None)]:
        recipients = (owner,) if owner else tuple(email.recipients)
        message = build_report_message(parts[owner], email.sender, recipients, email.subject_prefix)
        deliveries.append(Delivery(recipients, message, owner))
    return deliveries


class DeliveryFailures(ProblemLines, DeliveryError):
    """Messages that could not be sent (each saved in the outbox): one line per message; `sent`:
    the recipients of those that were."""

    def __init__(self, lines: list[str], sent: tuple[str, ...] = ()) -> None:
        super().__init__(lines)
        self.sent = sent


def send_report(report: AuditReport, email: EmailConfig) -> list[Delivery]:
    """Send every planned message; those that fail go to the outbox, one line each in the error."""
    check_email_config(email)
    deliveries = plan_deliveries(report, email)
    channel = MailChannel(email)
    sent, unsent = outbox_of(email).send_or_keep(channel, deliveries)
    if unsent:
        raise DeliveryFailures([channel.unsent_line(u) for u in unsent],
                               tuple(r for delivery in sent for r in delivery.recipients))
    return deliveries


MAX_OWNER_FILE_PART = 64  # characters of an owner's address in a file name


def owner_file_part(owner: str, limit: int = MAX_OWNER_FILE_PART) -> str:
    """An owner's address as a safe file name part: letters, digits and `@ . _ + -` only, at most
    `limit` characters; an address that had to be changed or cut ends in a short hash of itself,
    so that two owners never share a file."""
    safe = re.sub(r"[^A-Za-z0-9@._+-]+", "-", owner).strip(".-")
    if safe == owner and len(safe) <= limit:
        return safe
    digest = hashlib.sha256(owner.encode("utf-8")).hexdigest()[:10]
    return f"{safe[: max(limit - len(digest) - 1, 0)]}-{digest}".strip("-")


def message_files(path: Path, owners: list[str]) -> dict[str, Path]:
    """The file of each owner's message beside `path` (the recipients'): `<stem>.<owner><suffix>`,
    within the file system's 255 bytes a name, and unique even where names differ only in case."""
    suffix = path.suffix or ".eml"
    room = 255 - len(f"{path.stem}.{suffix}".encode())
    taken = {path.name.casefold()}
    files: dict[str, Path] = {}
    limit = max(min(MAX_OWNER_FILE_PART, room), 12)
    for owner in owners:
        name, attempt = f"{path.stem}.{owner_file_part(owner, limit)}{suffix}", 0
        while name.casefold() in taken:  # A@x and a@x on a case-insensitive disk
            attempt += 1
            name = f"{path.stem}.{owner_file_part(f'{owner}#{attempt}', limit)}{suffix}"
        taken.add(name.casefold())
        files[owner] = path.with_name(name)
    return files


def write_messages(report: AuditReport, email: EmailConfig, path: Path) -> list[Path]:
    """`--email-to-file`: the messages that would be sent, as .eml files instead; the recipients'
    first, at `path`, then each owner's beside it."""
    email = for_file(email)
    deliveries = plan_deliveries(report, email)
    files = message_files(path, [d.owner for d in deliveries if d.owner is not None])
    written = []
    for delivery in deliveries:
        target = path if delivery.owner is None else files[delivery.owner]
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, bytes(delivery.message))
        written.append(target)
    return written


def transmit(message: EmailMessage, email: EmailConfig) -> None:
    if email.transport == "ses":
        send_with_ses(message, email)
    else:
        send_with_smtp(message, email)


def outbox_of(email: EmailConfig) -> Outbox:
    """The outbox of every channel: mail's setting names it (email.outbox_dir)."""
    return Outbox(outbox_path(email))


@dataclass(frozen=True)
class MailChannel:
    """Mail by SMTP or SES (email.transport). A message waits in the outbox as its .eml file and is
    sent again to the addresses in its To and Cc."""

    email: EmailConfig
    name: ClassVar[str] = "mail"
    noun: ClassVar[str] = "message"
    outbox_suffix: ClassVar[str] = ".eml"
    transient_errors: ClassVar[tuple[type[AuditorError], ...]] = (DeliveryError,)

    @property
    def configured(self) -> bool:
        return bool(self.email.sender)

    def check(self) -> None:
        check_email_config(self.email)

    def send(self, message: Delivery) -> None:
        transmit(message.message, self.email)

    def dump(self, message: Delivery) -> bytes:
        return bytes(message.message)

    def load(self, data: bytes) -> Delivery:
        message = message_from_bytes(data, policy=policy.default)
        assert isinstance(message, EmailMessage)  # policy.default builds EmailMessage objects
        return Delivery(tuple(_recipients(message)), message)

    def unsent_line(self, unsent: Unsent[Delivery]) -> str:
        whom = f"the unsent message to {', '.join(unsent.message.recipients)}"
        if isinstance(unsent.kept, OSError):
            return (f"{unsent.error}; {whom} could not be saved in {unsent.outbox}: "
                    f"{unsent.kept.strerror or unsent.kept}")
        return f"{unsent.error}; {whom} saved in {unsent.kept.parent} (retry: audit send-outbox)"

    def drained_line(self, sent: int) -> str:
        return f"sent {sent} message{'s' if sent != 1 else ''}"


def _recipients(message: EmailMessage) -> list[str]:
    return [address for _, address in getaddresses(message.get_all("To", []) + message.get_all("Cc", []))]


def send_with_smtp(message: EmailMessage, email: EmailConfig) -> None:
    where = f"{email.smtp_host}:{email.smtp_port}"
    try:
        if email.smtp_ssl:
            server: smtplib.SMTP = smtplib.SMTP_SSL(email.smtp_host, email.smtp_port, timeout=30,
                                                    context=ssl.create_default_context())
        else:
            server = smtplib.SMTP(email.smtp_host, email.smtp_port, timeout=30)
        with server:
            if email.smtp_starttls:
                server.starttls(context=ssl.create_default_context())
            if email.smtp_username:
                try:
                    server.login(email.smtp_username, os.environ.get(email.smtp_password_env or "", ""))
                except UnicodeError:  # its message quotes a character of the password
                    raise DeliveryError(f"cannot log in to SMTP server {where}: the user name or the password "
                                        f"(${email.smtp_password_env}) holds a character other than ASCII") from None
            server.send_message(message, from_addr=email.sender, to_addrs=_recipients(message))
    except smtplib.SMTPAuthenticationError as exc:
        raise DeliveryError(f"SMTP server {where} refused the login for {email.smtp_username}: "
                            f"{exc.smtp_code}") from None
    except smtplib.SMTPRecipientsRefused as exc:
        raise DeliveryError(f"SMTP server {where} refused the recipients {', '.join(exc.recipients)}") from None
    except smtplib.SMTPException as exc:
        raise DeliveryError(f"SMTP server {where} failed: {exc}") from None
    except OSError as exc:
        raise DeliveryError(f"cannot reach SMTP server {where}: {exc.strerror or exc}") from None


def send_with_ses(message: EmailMessage, email: EmailConfig) -> None:
    import boto3
    import botocore.exceptions

    region = email.ses_region or "us-east-1"
    try:
        client = boto3.session.Session().client("ses", region_name=region)
        client.send_raw_email(
            Source=email.sender, Destinations=_recipients(message), RawMessage={"Data": bytes(message)}
        )
    except botocore.exceptions.ClientError as exc:
        error = exc.response.get("Error", {})
        raise DeliveryError(f"SES in {region} rejected the message: "
                            f"{error.get('Code')}: {error.get('Message')}") from None
    except botocore.exceptions.BotoCoreError as exc:
        raise DeliveryError(f"cannot send with SES in {region}: {exc}") from None
