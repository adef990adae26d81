"""A history that cannot be written costs the history only: one line, and the report, the mail and
the nightly job's mail still happen. The directory is made read-only for real: a read-only bind
mount when the tests run as root (root writes through chmod 0555), chmod 0555 otherwise; and a
history path under a regular file fails for everyone."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config_file import load_config
from auditor.history.store import History
from auditor.tasks.scheduler import Scheduler, nightly_job, weekly_job
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now

runner = CliRunner()
FLEET = [
    EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),)),
    EndpointSpec("idle", (VariantSpec("ml.m5.large", 1, cpu=Load(1, 0.2, 0.1), invocations_per_hour=0),)),
]
CONFIG = ("[jobs]\nenabled = false\n"
          '[email]\nsender = "auditor@example.com"\nrecipients = ["finops@example.com"]\n')


@pytest.fixture
def make_read_only() -> Iterator[Callable[[Path], None]]:
    made: list[tuple[Path, bool]] = []

    def make(directory: Path) -> None:
        if os.geteuid() == 0:
            bound = subprocess.run(["mount", "--bind", str(directory), str(directory)], capture_output=True)
            if bound.returncode != 0:
                pytest.skip(f"root cannot be kept from writing without a read-only mount: {bound.stderr!r}")
            made.append((directory, True))
            subprocess.run(["mount", "-o", "remount,bind,ro", str(directory)], check=True, capture_output=True)
        else:
            directory.chmod(0o555)
            made.append((directory, False))
        with pytest.raises(OSError):  # really read-only, else the test proves nothing
            (directory / "probe").write_text("")

    yield make
    for directory, mounted in reversed(made):
        if mounted:
            subprocess.run(["umount", str(directory)], check=True)
        else:
            directory.chmod(0o755)


@pytest.fixture
def fleet(aws) -> None:
    seed_fleet(aws, FLEET, now=utc_now())


def config_with_history(tmp_path: Path, history: Path, extra: str = "") -> Path:
    config = tmp_path / "auditor.toml"
    config.write_text(CONFIG + f'[history]\npath = "{history}"\n' + extra)
    return config


def run_with_report_and_mail(config: Path, tmp_path: Path):
    return runner.invoke(app, ["run", "--config", str(config), "--format", "json",
                               "--output", str(tmp_path / "out" / "report.json"),
                               "--email-to-file", str(tmp_path / "out" / "report.eml")])


def assert_one_line_and_report_and_mail(result, tmp_path: Path, history: Path) -> dict:
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    lines = [line for line in result.stderr.splitlines() if line.startswith(("error: ", "warning: "))]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: cannot ") and f"the history database {history}" in lines[0] and \
        lines[0].endswith("this run is not recorded"), lines[0]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {e["name"] for e in report["endpoints"]} >= {"oversized", "idle"}
    assert [e["stage"] for e in report["errors"]] == ["history"]  # said in the report and mail too, once
    assert (tmp_path / "out" / "report.eml").stat().st_size > 0
    return report


def test_a_read_only_history_directory_with_a_history_costs_one_line(
        fleet, tmp_path: Path, make_read_only: Callable[[Path], None]) -> None:
    history = tmp_path / "history" / "history.sqlite3"
    config = config_with_history(tmp_path, history)
    assert runner.invoke(app, ["run", "--config", str(config), "--format", "json"]).exit_code == 0
    before = history.read_bytes()
    make_read_only(history.parent)

    result = run_with_report_and_mail(config, tmp_path)

    report = assert_one_line_and_report_and_mail(result, tmp_path, history)
    assert "its directory cannot be written" in report["errors"][0]["message"]
    assert history.read_bytes() == before
    assert sorted(p.name for p in history.parent.iterdir()) == ["history.sqlite3"]


def test_an_empty_read_only_history_directory_costs_one_line(
        fleet, tmp_path: Path, make_read_only: Callable[[Path], None]) -> None:
    history = tmp_path / "history" / "history.sqlite3"
    history.parent.mkdir()
    make_read_only(history.parent)
    result = run_with_report_and_mail(config_with_history(tmp_path, history), tmp_path)
    assert_one_line_and_report_and_mail(result, tmp_path, history)
    assert list(history.parent.iterdir()) == []


def test_a_history_path_under_a_file_costs_one_line(fleet, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    history = blocker / "history.sqlite3"
    result = run_with_report_and_mail(config_with_history(tmp_path, history), tmp_path)
    assert_one_line_and_report_and_mail(result, tmp_path, history)


def test_the_nightly_job_mails_the_report_when_the_history_is_read_only(
        fleet, tmp_path: Path, make_read_only: Callable[[Path], None], smtp_server) -> None:
    controller, inbox = smtp_server
    history = tmp_path / "history" / "history.sqlite3"
    config_path = config_with_history(tmp_path, history)
    History(history).close()
    make_read_only(history.parent)
    config_path.write_text(config_path.read_text().replace(
        "[email]\n", f'[email]\nsmtp_host = "127.0.0.1"\nsmtp_port = {controller.port}\n'))
    config = load_config(config_path)
    log: list[str] = []
    scheduler = Scheduler(config, nightly_job(config), weekly_job(config), log=log.append)

    scheduler.run_job("nightly", scheduler.nightly)

    (line,) = log
    job = json.loads(line)
    assert job["status"] == "failed" and job["error"].endswith("this run is not recorded"), job
    assert len(inbox.messages) == 1  # the mail went out all the same


def test_history_check_and_the_digest_read_a_read_only_history(
        fleet, tmp_path: Path, make_read_only: Callable[[Path], None]) -> None:
    """`audit history` and `audit weekly` (without --email) only read: a read-only directory is enough."""
    history = tmp_path / "history" / "history.sqlite3"
    config = config_with_history(tmp_path, history)
    assert runner.invoke(app, ["run", "--config", str(config), "--format", "json"]).exit_code == 0
    before = history.read_bytes()
    make_read_only(history.parent)

    listed = runner.invoke(app, ["history", "--config", str(config), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    (run,) = json.loads(listed.stdout)
    assert run["endpoints"] == 2 and run["status"] == "ok"
    checked = runner.invoke(app, ["history", "--config", str(config), "--check"])
    assert checked.exit_code == 0 and checked.stdout == "ok\n", checked.output
    digest = runner.invoke(app, ["weekly", "--config", str(config), "--output", str(tmp_path / "digest.html")])
    assert digest.exit_code == 0, digest.output
    assert "oversized" in (tmp_path / "digest.html").read_text()
    assert history.read_bytes() == before
    assert sorted(p.name for p in history.parent.iterdir()) == ["history.sqlite3"]
