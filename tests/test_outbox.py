"""The one outbox of every channel (auditor.deliver.channel) against real peers: an SMTP server on
loopback (aiosmtpd) and a local webhook server. Files saved by earlier versions are read as they
are; the drain keeps order, removes what was sent, keeps what fails with one line each; a message
that cannot even be saved is named with the reason."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from email import message_from_bytes, policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import AuditConfig, ChatConfig, EmailConfig, HistoryConfig
from auditor.deliver.channel import Outbox
from auditor.deliver.chat import ChatChannel, ChatPost, deliver_posts
from auditor.deliver.mail import DeliveryFailures, MailChannel, send_report
from auditor.errors import AuditorError
from auditor.history.store import History
from auditor.tasks.weekly import weekly_digest
from fleet_report import synthetic_report
from helpers import NOW

runner = CliRunner()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _eml(subject: str, to: str = "b@example.com") -> bytes:
    return f"From: a@example.com\r\nTo: {to}\r\nSubject: {subject}\r\n\r\nbody\r\n".encode()


@pytest.fixture
def hooks() -> Iterator[tuple[str, list[tuple[str, Any]], set[str]]]:
    """A webhook server: (its URL, what it received, the paths it answers 500 to)."""
    received: list[tuple[str, Any]] = []
    failing: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            if self.path in failing:
                self.send_response(500)
            else:
                received.append((self.path, body))
                self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received, failing
    finally:
        server.shutdown()
        server.server_close()


def test_mail_waiting_is_sent_oldest_first_and_chat_files_are_left_to_chat(smtp_server, tmp_path: Path) -> None:
    controller, inbox = smtp_server
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    # Written as earlier versions wrote them: `<time>-<id>.eml`, the message as it would be sent.
    for name, subject in [("20261201T000000Z-bbbbbbbb.eml", "second"), ("20261130T000000Z-aaaaaaaa.eml", "first")]:
        (outbox / name).write_bytes(_eml(subject))
    post = outbox / "20261129T000000Z-cccccccc.chat.json"
    post.write_text(json.dumps({"service": "slack", "webhook_env": "X", "label": "default", "payload": {}}))
    email = EmailConfig(sender="a@example.com", recipients=("b@example.com",), smtp_host="127.0.0.1",
                        smtp_port=controller.port, outbox_dir=str(outbox))
    drained = Outbox(outbox).drain(MailChannel(email))
    assert (drained.sent, drained.errors) == (2, ())
    assert [m["Subject"] for m in inbox.messages] == ["first", "second"]
    assert [p.name for p in outbox.iterdir()] == [post.name]  # mail's drain never touches a chat post


def test_a_failed_drain_keeps_every_file_with_one_line_each(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    names = ["20261130T000000Z-aaaaaaaa.eml", "20261201T000000Z-bbbbbbbb.eml"]
    for name in names:
        (outbox / name).write_bytes(_eml(name))
    email = EmailConfig(sender="a@example.com", recipients=("b@example.com",), smtp_host="127.0.0.1",
                        smtp_port=_closed_port(), outbox_dir=str(outbox))
    drained = Outbox(outbox).drain(MailChannel(email))
    assert drained.sent == 0
    assert [line.split(": ", 1)[0] for line in drained.errors] == names
    assert all("cannot reach SMTP server 127.0.0.1:" in line for line in drained.errors)
    assert sorted(p.name for p in outbox.iterdir()) == names
    assert [(outbox / n).read_bytes() for n in names] == [_eml(n) for n in names]  # kept byte for byte


def test_a_saved_post_of_an_earlier_version_is_posted_and_a_damaged_one_is_named(hooks, monkeypatch,
                                                                                   tmp_path: Path) -> None:
    url, received, _ = hooks
    monkeypatch.setenv("AUDIT_SLACK", f"{url}/slack")
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    damaged = outbox / "20261130T000000Z-aaaaaaaa.chat.json"
    damaged.write_text('{"service": "slack", "webhook_env": "AUDIT_SLACK"}')  # no payload
    # The layout earlier versions saved: service, the variable's name, the label, the payload.
    saved = outbox / "20261201T000000Z-bbbbbbbb.chat.json"
    saved.write_text(json.dumps({"service": "slack", "webhook_env": "AUDIT_SLACK", "label": "default",
                                 "payload": {"text": "hello"}}))
    drained = Outbox(outbox).drain(ChatChannel(ChatConfig(slack_webhook_env="AUDIT_SLACK")))
    assert drained.sent == 1 and received == [("/slack", {"text": "hello"})]
    assert drained.errors == (f"{damaged.name}: not a saved chat post ('payload')",)
    assert not saved.exists() and damaged.exists()


def test_a_post_saved_now_reads_back_the_same_and_never_holds_the_url(hooks, monkeypatch, tmp_path: Path) -> None:
    url, received, failing = hooks
    monkeypatch.setenv("AUDIT_TEAMS", f"{url}/teams")
    failing.add("/teams")
    chat = ChatConfig(teams_webhook_env="AUDIT_TEAMS")
    item = ChatPost("teams", "AUDIT_TEAMS", "team-a", {"type": "message", "text": "ü <b>"})
    outbox = Outbox(tmp_path / "outbox")
    posted, problems = deliver_posts([item], chat, outbox)
    assert posted == []
    assert problems == [f"the teams webhook for team-a ($AUDIT_TEAMS) answered HTTP 500 Internal Server Error; "
                        f"saved in {outbox.directory} (retry: audit send-outbox)"]
    (path,) = outbox.waiting(ChatChannel(chat))
    assert path.name.endswith(".chat.json") and url not in path.read_text(encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8")) == {"service": "teams", "webhook_env": "AUDIT_TEAMS",
                                                           "label": "team-a", "payload": item.payload}
    assert ChatChannel(chat).load(path.read_bytes()) == item
    failing.clear()
    assert Outbox(outbox.directory).drain(ChatChannel(chat)).sent == 1 and received == [("/teams", item.payload)]


def test_mail_that_cannot_be_saved_says_why_and_the_rest_is_still_tried(smtp_server, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    email = EmailConfig(sender="a@example.com", recipients=("b@example.com", "c@example.com"),
                        smtp_host="127.0.0.1", smtp_port=_closed_port(), outbox_dir=str(blocker / "outbox"))
    with pytest.raises(DeliveryFailures) as failure:
        send_report(synthetic_report(3), email)
    (line,) = failure.value.lines
    assert line.startswith("cannot reach SMTP server 127.0.0.1:")
    assert line.endswith(f"; the unsent message to b@example.com, c@example.com could not be saved in "
                         f"{blocker / 'outbox'}: Not a directory")
    assert failure.value.sent == ()


def test_a_digest_that_cannot_be_sent_waits_in_the_outbox_in_its_own_words(smtp_server, tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite3"
    with History(history) as store:
        store.record_run(synthetic_report(5), fatal=False)
    outbox = tmp_path / "outbox"
    config = AuditConfig(history=HistoryConfig(path=str(history)),
                         email=EmailConfig(sender="a@example.com", recipients=("b@example.com",),
                                           smtp_host="127.0.0.1", smtp_port=_closed_port(), outbox_dir=str(outbox)))
    with pytest.raises(AuditorError) as failure:
        weekly_digest(config, email=True, now=NOW)
    assert str(failure.value).endswith(f"; the digest was saved in {outbox} (retry: audit send-outbox)")
    (saved,) = outbox.glob("*.eml")
    subject = message_from_bytes(saved.read_bytes(), policy=policy.default)["Subject"]
    assert "SageMaker audit weekly 2026-W49" in subject
    # Sent later, as the next digest would be, and removed.
    controller, inbox = smtp_server
    up = tmp_path / "auditor.toml"
    up.write_text(f'[email]\nsender = "a@example.com"\nrecipients = ["b@example.com"]\nsmtp_host = "127.0.0.1"\n'
                  f'smtp_port = {controller.port}\noutbox_dir = "{outbox}"\n')
    result = runner.invoke(app, ["send-outbox", "--config", str(up)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1] == f"sent 1 message from {outbox}"
    assert len(inbox.messages) == 1 and list(outbox.iterdir()) == []


def test_send_outbox_with_chat_only_and_nothing_waiting_does_nothing(tmp_path: Path) -> None:
    """A chat-only setup has no [email] to check: mail is drained only when .eml files wait."""
    config = tmp_path / "auditor.toml"
    config.write_text(f'[email]\noutbox_dir = "{tmp_path / "outbox"}"\n[chat]\nslack_webhook_env = "AUDIT_SLACK"\n')
    result = runner.invoke(app, ["send-outbox", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1] == f"sent 0 messages from {tmp_path / 'outbox'}"
    (tmp_path / "outbox").mkdir()
    (tmp_path / "outbox" / "20261130T000000Z-aaaaaaaa.eml").write_bytes(_eml("x"))
    waiting = runner.invoke(app, ["send-outbox", "--config", str(config)])
    assert waiting.exit_code == 1 and "email.sender is required" in waiting.stderr


def test_send_outbox_drains_chat_then_mail_and_says_what_each_sent(smtp_server, hooks, monkeypatch,
                                                                      tmp_path: Path) -> None:
    controller, inbox = smtp_server
    url, received, _ = hooks
    monkeypatch.setenv("AUDIT_SLACK", f"{url}/slack")
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    (outbox / "20261130T000000Z-aaaaaaaa.chat.json").write_text(json.dumps(
        {"service": "slack", "webhook_env": "AUDIT_SLACK", "label": "default", "payload": {"text": "x"}}))
    (outbox / "20261130T000000Z-bbbbbbbb.eml").write_bytes(_eml("mail"))
    (outbox / "20261130T000000Z-cccccccc.eml").mkdir()  # not a message: named, left, the rest still sent
    config = tmp_path / "auditor.toml"
    config.write_text(f'[email]\nsender = "a@example.com"\nrecipients = ["b@example.com"]\nsmtp_host = "127.0.0.1"\n'
                      f'smtp_port = {controller.port}\noutbox_dir = "{outbox}"\n'
                      '[chat]\nslack_webhook_env = "AUDIT_SLACK"\n')
    result = runner.invoke(app, ["send-outbox", "--config", str(config)])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[-3:-1] == [f"posted 1 chat message from {outbox}", f"sent 1 message from {outbox}"]
    assert lines[-1].startswith("error: 20261130T000000Z-cccccccc.eml: not a saved message (")
    assert lines[-1].endswith("; left in the outbox")
    assert received == [("/slack", {"text": "x"})] and [m["Subject"] for m in inbox.messages] == ["mail"]
    assert [p.name for p in outbox.iterdir()] == ["20261130T000000Z-cccccccc.eml"]
