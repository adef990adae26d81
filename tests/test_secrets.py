"""Secrets never reach an output. The webhook URLs (one with a line break in it) and the SMTP
password (one the server refuses, one that is not ASCII) are planted in the environment; hostile
runs against the local AWS emulator, a local webhook server that answers 500 and an SMTP server that
refuses the login (`audit run --chat --email`, `audit send-outbox`, the scheduler's nightly and
weekly jobs) must fail with lines that name the variables, keep what they could not deliver in the
outbox, and leave no piece of a secret in stdout, stderr, the scheduler's log, or any file they
wrote (the report, the history database, the outbox, the data directory)."""

from __future__ import annotations

import json
import os
import socket
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config_file import load_config
from auditor.deliver.channel import Outbox
from auditor.deliver.chat import ChatChannel
from auditor.redact import scrub
from auditor.tasks.scheduler import Scheduler, nightly_job, weekly_job
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import Inbox, utc_now

runner = CliRunner()
MARK = "S3CR3T"  # in every piece of every secret: a leak of any piece shows
FLEET = [
    EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),)),
    EndpointSpec("idle", (VariantSpec("ml.m5.large", 1, cpu=Load(1, 0.2, 0.1), invocations_per_hour=0),)),
]


@pytest.fixture
def webhook_server() -> Iterator[tuple[str, list[str]]]:
    """Answers every post with 500; records the paths it was asked for."""
    paths: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            paths.append(self.path)
            self.send_response(500)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", paths
    server.shutdown()
    server.server_close()


@pytest.fixture
def refusing_smtp() -> Iterator[int]:
    """An SMTP server that offers AUTH and refuses every login."""
    def refuse(*_: Any) -> AuthResult:
        return AuthResult(success=False, handled=False)

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    controller = Controller(Inbox(), hostname="127.0.0.1", port=port, authenticator=refuse, auth_require_tls=False)
    controller.start()
    yield port
    controller.stop()


@pytest.fixture
def planted(aws, tmp_path: Path, webhook_server: tuple[str, list[str]], refusing_smtp: int,
            monkeypatch: pytest.MonkeyPatch) -> Path:
    seed_fleet(aws, FLEET, now=utc_now())
    url, _ = webhook_server
    monkeypatch.setenv("AUDIT_SLACK", f"{url}/services/T{MARK}01/B{MARK}02/token{MARK}03")
    monkeypatch.setenv("AUDIT_TEAMS", f"{url}/workflows/flow{MARK}04\nsig{MARK}05")
    monkeypatch.setenv("AUDIT_SMTP_PASSWORD", f"password{MARK}06")
    config = tmp_path / "auditor.toml"
    config.write_text(f"""
[jobs]
enabled = false
[history]
path = "{tmp_path / 'history' / 'history.sqlite3'}"
[email]
sender = "auditor@example.com"
recipients = ["finops@example.com"]
smtp_host = "127.0.0.1"
smtp_port = {refusing_smtp}
smtp_username = "auditor"
smtp_password_env = "AUDIT_SMTP_PASSWORD"
smtp_allow_plain_login = true
outbox_dir = "{tmp_path / 'outbox'}"
[chat]
slack_webhook_env = "AUDIT_SLACK"
teams_webhook_env = "AUDIT_TEAMS"
""")
    return config


def leaks(text: str | bytes) -> list[str]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    found = []
    for where in range(len(data)):
        where = data.find(MARK.encode(), where)
        if where < 0:
            break
        found.append(data[max(0, where - 40): where + 40].decode("utf-8", "replace"))
    return found[:3]


def files_with_leaks(*roots: Path) -> dict[str, list[str]]:
    return {str(p): leaks(p.read_bytes()) for root in roots for p in root.rglob("*")
            if p.is_file() and leaks(p.read_bytes())}


def test_hostile_runs_name_the_variables_keep_the_posts_and_print_no_secret(
        planted: Path, tmp_path: Path, webhook_server: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    outbox = tmp_path / "outbox"
    audit = runner.invoke(app, ["run", "--config", str(planted), "--format", "json",
                                "--output", str(tmp_path / "out" / "report.json"), "--chat", "--email"])
    assert audit.exit_code == 1, audit.output
    assert isinstance(audit.exception, SystemExit), audit.exception  # an error line, not an exception
    errors = [line for line in audit.stderr.splitlines() if line.startswith("error: ")]
    # One line per failure: the mail, and each of the two chat posts.
    assert len(errors) == 3 and "refused the login" in errors[0], audit.stderr
    assert "$AUDIT_SLACK" in errors[1] and "$AUDIT_TEAMS" in errors[2], audit.stderr
    # Every message the run could not deliver waits in the outbox: the mail and both posts.
    assert len(list(outbox.glob("*.eml"))) == 1
    saved = sorted(json.loads(p.read_text())["webhook_env"] for p in outbox.glob("*.chat.json"))
    assert saved == ["AUDIT_SLACK", "AUDIT_TEAMS"]
    assert len(webhook_server[1]) == 1  # the URL with a line break was never asked for

    resend = runner.invoke(app, ["send-outbox", "--config", str(planted)])
    assert resend.exit_code == 1 and "left in the outbox" in resend.stderr
    drained = Outbox(outbox).drain(ChatChannel(load_config(planted).chat))
    posted, why = drained.sent, drained.errors
    assert posted == 0 and len(why) == 2 and len(list(outbox.glob("*.chat.json"))) == 2
    assert any("($AUDIT_TEAMS)" in line and "line break" in line for line in why), why  # named, not quoted

    # The scheduler's jobs, with a password the SMTP library cannot even send.
    monkeypatch.setenv("AUDIT_SMTP_PASSWORD", f"pässwörd{MARK}07")
    config = load_config(planted)
    log: list[str] = []
    scheduler = Scheduler(config, nightly_job(config), weekly_job(config), log=log.append)
    scheduler.run_job("nightly", scheduler.nightly)
    scheduler.run_job("weekly", scheduler.weekly)
    jobs = [json.loads(line) for line in log]
    assert [(j["job"], j["status"]) for j in jobs] == [("nightly", "failed"), ("weekly", "failed")], log
    assert "AUDIT_SMTP_PASSWORD" in jobs[0]["error"]

    for output in (audit.stdout, audit.stderr, resend.stdout, resend.stderr, *why, *log):
        assert not leaks(output), leaks(output)
    assert not files_with_leaks(tmp_path, Path(os.environ["XDG_DATA_HOME"]))


def test_the_scheduler_log_cuts_secrets_out_of_a_library_exception(planted: Path) -> None:
    """http.client quotes the URL's path in its message: the log line keeps the kind, not the path."""
    log: list[str] = []
    config = load_config(planted)
    scheduler = Scheduler(config, nightly_job(config), weekly_job(config), log=log.append)

    def post_by_hand() -> dict[str, Any]:
        urllib.request.urlopen(urllib.request.Request(os.environ["AUDIT_TEAMS"], data=b"{}"), timeout=5)
        return {}

    scheduler.run_job("nightly", post_by_hand)
    (line,) = log
    assert json.loads(line)["error"].startswith("InvalidURL: ")
    assert not leaks(line), line


def test_scrub_cuts_every_piece_of_a_secret_and_leaves_the_words_around_it() -> None:
    secrets = [f"https://hooks.example.com/services/T{MARK}01/token{MARK}02", f"flow{MARK}03\nsig{MARK}04", "abc"]
    text = (f"services at hooks.example.com refused T{MARK}01; repr() of a value: 'flow{MARK}03\\nsig{MARK}04'; "
            f"a line: sig{MARK}04; abc stays (too short to cut without cutting words)")
    cleaned = scrub(text, secrets)
    assert not leaks(cleaned), cleaned
    assert cleaned.startswith("services at [secret] refused [secret];") and "abc stays" in cleaned
