"""A damaged history database never costs the audit or the mail, and never shows a traceback.

Three kinds of damage, as they happen: a file of random bytes (not SQLite at all), a truncated file
(the first half of a real history: a disk that filled up, a copy cut short), and a real history with
one page zeroed (a bad sector). What the user gets is checked: the exit code, the one line on
stderr, which files exist afterwards, and that the mail still goes out.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config_file import CONTEXT_PREFIX, parse_config
from auditor.history.store import SCHEMA_VERSION, History, HistoryError, check_history, prepare_history
from auditor.tasks.scheduler import Scheduler, nightly_job
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now
from fleet_report import synthetic_report

runner = CliRunner()
MONDAY = datetime(2026, 11, 23, 3, 0, tzinfo=UTC)  # 2026-W48
SENDER = 'sender = "auditor@example.com"\nrecipients = ["finops@example.com"]\n'


def real_history(path: Path, runs: int = 3) -> None:
    """A history with a few runs, closed (the WAL checkpointed into the file)."""
    report = synthetic_report(12)
    with History(path) as history:
        for day in range(runs):
            history.record_run(replace(report, generated_at=MONDAY + timedelta(days=day)))
    assert not path.with_name(path.name + "-wal").exists()


def random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(16384))


def truncated(path: Path) -> None:
    real_history(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def page_zeroed(path: Path) -> None:
    real_history(path)
    with sqlite3.connect(path) as db:
        page_size = int(db.execute("PRAGMA page_size").fetchone()[0])
    db.close()
    data = bytearray(path.read_bytes())
    assert len(data) >= 3 * page_size
    data[page_size:2 * page_size] = bytes(page_size)  # page 2
    path.write_bytes(bytes(data))


DAMAGE: dict[str, Callable[[Path], None]] = {"random-bytes": random_bytes, "truncated": truncated,
                                             "page-zeroed": page_zeroed}


def config_file(tmp_path: Path, email: str = "") -> Path:
    path = tmp_path / "auditor.toml"
    path.write_text(f'[history]\npath = "{tmp_path / "history.sqlite3"}"\n'
                    + (f"[email]\n{SENDER}{email}" if email else ""))
    return path


def moved_aside(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("history.sqlite3.damaged-*"))


def one_fleet(aws) -> None:
    seed_fleet(aws, [EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),))],
               now=utc_now())


def lines_starting(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


@pytest.mark.parametrize("damage", DAMAGE)
def test_run_moves_a_damaged_history_aside_and_still_mails(damage: str, aws, smtp_server, tmp_path: Path) -> None:
    one_fleet(aws)
    history = tmp_path / "history.sqlite3"
    DAMAGE[damage](history)
    original = history.read_bytes()
    controller, inbox = smtp_server
    config = config_file(tmp_path, f'smtp_host = "127.0.0.1"\nsmtp_port = {controller.port}\n')

    result = runner.invoke(app, ["run", "--config", str(config), "--email", "--format", "json",
                                 "--output", str(tmp_path / "report.json")])

    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and lines_starting(result.stderr, "error:") == []
    (warning,) = lines_starting(result.stderr, "warning:")
    (aside,) = moved_aside(tmp_path)
    assert str(history) in warning and str(aside) in warning and "a new one was started" in warning
    assert aside.read_bytes() == original  # kept as it was, for whoever wants to look
    assert len(inbox.messages) == 1 and "report sent to finops@example.com" in result.stderr
    with History(history) as fresh:  # a new history, with this run in it
        assert [r.endpoints for r in fresh.runs()] == [1]
        assert any(e.startswith("history - ") for e in fresh.runs()[0].errors)
    assert check_history(history) == []


def test_email_to_file_with_a_garbage_history(aws, tmp_path: Path) -> None:
    one_fleet(aws)
    history = tmp_path / "history.sqlite3"
    random_bytes(history)
    eml = tmp_path / "out" / "report.eml"
    report = tmp_path / "report.json"
    result = runner.invoke(app, ["run", "--config", str(config_file(tmp_path, 'smtp_host = "127.0.0.1"\n')),
                                 "--email-to-file", str(eml), "--format", "json", "--output", str(report)])
    assert result.exit_code == 0, result.output
    message = message_from_bytes(eml.read_bytes(), policy=policy.default)
    assert message["Subject"].startswith("SageMaker audit")
    (aside,) = moved_aside(tmp_path)
    assert f"moved aside to {aside}" in message.get_body(("plain",)).get_content()  # the readers are told too
    (error,) = [e for e in json.loads(report.read_text())["errors"] if e["stage"] == "history"]
    assert error["region"] == "-" and error["endpoint"] is None
    assert "file is not a database" in error["message"] and str(aside) in error["message"]
    assert history.exists() and check_history(history) == []


def test_no_history_touches_nothing(aws, tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite3"
    random_bytes(history)
    original = history.read_bytes()
    result = runner.invoke(app, ["run", "--config", str(config_file(tmp_path)), "--no-history"])
    assert result.exit_code == 0, result.output
    assert "warning:" not in result.stderr
    assert history.read_bytes() == original and moved_aside(tmp_path) == []


@pytest.mark.parametrize("damage", DAMAGE)
def test_history_and_weekly_say_so_in_one_line(damage: str, tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite3"
    DAMAGE[damage](history)
    original = history.read_bytes()
    config = str(config_file(tmp_path))
    for args in (["history", "--config", config], ["weekly", "--config", config, "--week", "2026-W48"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 1, result.output
        assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output
        (error,) = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith(CONTEXT_PREFIX)]
        assert error.startswith(f"error: the history database {history} is damaged (")
        assert "audit history --check" in error and "the next `audit run` moves it aside" in error
    # Reading never moves or changes the file: only `audit run` (and the nightly job) does.
    assert history.read_bytes() == original and moved_aside(tmp_path) == []


def test_check_a_sound_history(tmp_path: Path) -> None:
    real_history(tmp_path / "history.sqlite3")
    result = runner.invoke(app, ["history", "--check", "--config", str(config_file(tmp_path))])
    assert result.exit_code == 0, result.output
    assert result.stdout == "ok\n"


@pytest.mark.parametrize("damage", DAMAGE)
def test_check_a_damaged_history(damage: str, tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite3"
    DAMAGE[damage](history)
    original = history.read_bytes()
    result = runner.invoke(app, ["history", "--check", "--config", str(config_file(tmp_path))])
    assert result.exit_code == 1, result.output
    problems = result.stdout.splitlines()
    assert problems and "ok" not in problems
    assert any(word in result.stdout for word in ("not a database", "malformed", "never used", "Page"))
    (error,) = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith(CONTEXT_PREFIX)]
    assert error == f"error: the history database {history} is damaged: the next `audit run` moves it aside " \
                    "and starts a new one"
    assert history.read_bytes() == original and moved_aside(tmp_path) == []


def test_check_without_a_history(tmp_path: Path) -> None:
    result = runner.invoke(app, ["history", "--check", "--config", str(config_file(tmp_path))])
    assert result.exit_code == 1
    (error,) = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith(CONTEXT_PREFIX)]
    assert error.startswith(f"error: no history database at {tmp_path / 'history.sqlite3'}")
    assert not (tmp_path / "history.sqlite3").exists()


def test_no_sqlite_exception_leaves_the_history_api(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    page_zeroed(path)
    calls: list[Callable[[History], object]] = [
        lambda h: h.runs(), lambda h: h.last_successful_run(), lambda h: h.findings(1),
        lambda h: h.endpoint_costs(1), lambda h: h.digest_sent("2026-W48"),
        lambda h: h.record_digest("2026-W48", MONDAY, ["a@example.com"]),
        lambda h: h.record_run(synthetic_report(2)),
    ]
    failed = 0
    for call in calls:  # a call that reads no damaged page may succeed; none raises anything but HistoryError
        try:
            with History(path) as history:
                call(history)
        except HistoryError as exc:
            assert str(path) in str(exc) and "\n" not in str(exc)
            failed += 1
    assert failed >= 2
    with History(path) as history, pytest.raises(HistoryError, match="is damaged"):
        history.runs()
    random_bytes(path)
    with pytest.raises(HistoryError, match="is damaged \\(file is not a database\\)"):
        History(path)


def test_moving_aside_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    now = datetime(2026, 11, 30, 2, 0, tzinfo=UTC)
    random_bytes(path)
    path.with_name(path.name + "-wal").write_bytes(b"stale journal")
    first = prepare_history(path, now)
    assert first is not None and "history.sqlite3.damaged-20261130T020000Z;" in first
    assert (tmp_path / "history.sqlite3.damaged-20261130T020000Z-wal").read_bytes() == b"stale journal"
    random_bytes(path)  # damaged again within the same second
    second = prepare_history(path, now)
    assert second is not None and "history.sqlite3.damaged-20261130T020000Z-2;" in second
    assert [p.name for p in moved_aside(tmp_path)] == [
        "history.sqlite3.damaged-20261130T020000Z", "history.sqlite3.damaged-20261130T020000Z-2",
        "history.sqlite3.damaged-20261130T020000Z-wal"]
    assert prepare_history(path, now) is None  # the new one is sound: left alone


def test_a_newer_schema_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    notice = prepare_history(path)
    assert notice is not None and "newer than this auditor's" in notice and "upgrade sagemaker-auditor" in notice
    assert len(moved_aside(tmp_path)) == 1
    with History(path) as history:
        assert history.schema_version == SCHEMA_VERSION


def test_schedule_starts_on_a_damaged_history(aws, tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite3"
    page_zeroed(history)
    config = parse_config({"history": {"path": str(history)}})
    lines: list[dict] = []
    scheduler = Scheduler(config, nightly_job(config), lambda: {}, log=lambda line: lines.append(json.loads(line)))
    scheduler.catch_up()
    catch_up, nightly = lines
    assert catch_up["event"] == "catch-up" and catch_up["last_successful_run"] is None
    assert "is damaged" in catch_up["history_error"]
    assert nightly["job"] == "nightly" and nightly["status"] == "ok", nightly
    (aside,) = moved_aside(tmp_path)
    assert str(aside) in nightly["history"] and nightly["errors"] == 1
    with History(history) as fresh:
        assert len(fresh.runs()) == 1
