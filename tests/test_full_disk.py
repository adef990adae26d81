"""A full disk never destroys the last good file. The disk fills for real: the CLI runs in its own
process under a file-size limit (RLIMIT_FSIZE), so the kernel fails its writes past a few KB with
EFBIG just as a full file system fails them with ENOSPC. Afterwards the previous report, digest or
mail is byte for byte what it was, and no empty, cut-off or temporary file is left beside it."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.files import write_atomic
from auditor.history.store import History
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now

runner = CliRunner()
FLEET = [
    EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),)),
    EndpointSpec("idle", (VariantSpec("ml.m5.large", 1, cpu=Load(1, 0.2, 0.1), invocations_per_hour=0),)),
]
CONFIG = ("[jobs]\nenabled = false\n"
          '[email]\nsender = "auditor@example.com"\nrecipients = ["finops@example.com"]\n')
LIMIT = 4096  # bytes a file may grow to: less than any report, digest or mail of this fleet


def disk_full_at(limit: int) -> Callable[[], None]:
    """For the child process: writes past `limit` bytes fail (EFBIG) instead of killing it (SIGXFSZ)."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return apply


def audit_on_a_full_disk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "auditor.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, preexec_fn=disk_full_at(LIMIT),
                          timeout=120)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.fixture
def fleet(aws, tmp_path: Path) -> Path:
    seed_fleet(aws, FLEET, now=utc_now())
    config = tmp_path / "auditor.toml"
    config.write_text(CONFIG)
    return config


def test_a_full_disk_keeps_the_last_good_report_and_mail_whole(fleet: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = runner.invoke(app, ["run", "--config", str(fleet), "--format", "json", "--output", str(out / "report.json"),
                                "--email-to-file", str(out / "report.eml"), "--no-history"])
    assert first.exit_code == 0, first.output
    before = snapshot(out)
    assert set(before) == {"report.json", "report.eml"}
    assert len(before["report.json"]) > LIMIT and len(before["report.eml"]) > LIMIT  # so the rerun must fail

    again = audit_on_a_full_disk("run", "--config", str(fleet), "--format", "json", "--output",
                                 str(out / "report.json"), "--email-to-file", str(out / "report.eml"),
                                 "--no-history", cwd=tmp_path)

    assert again.returncode == 1, again.stderr
    errors = [line for line in again.stderr.splitlines() if line.startswith("error: ")]
    # One line per failure: the report (and its fallback), and the email.
    assert len(errors) == 2 and all("File too large" in e for e in errors), again.stderr
    assert "cannot write the report" in errors[0] and "cannot write the email" in errors[1], again.stderr
    assert "Traceback" not in again.stderr
    assert snapshot(out) == before  # the last good report and mail, untouched; nothing beside them
    json.loads(before["report.json"])
    fallback = Path(os.environ["XDG_DATA_HOME"]) / "sagemaker-auditor" / "reports"
    assert not fallback.exists() or not list(fallback.iterdir())  # no cut-off copy there either


def test_a_full_disk_leaves_no_empty_mail_where_there_was_none(fleet: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = audit_on_a_full_disk("run", "--config", str(fleet), "--email-to-file", str(out / "report.eml"),
                                  "--no-history", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "cannot write the email" in result.stderr and "Traceback" not in result.stderr
    assert list(out.iterdir()) == []


def test_a_full_disk_keeps_the_last_digest_whole(fleet: Path, tmp_path: Path) -> None:
    history = tmp_path / "history" / "history.sqlite3"
    fleet.write_text(CONFIG + f'[history]\npath = "{history}"\n')
    assert runner.invoke(app, ["run", "--config", str(fleet), "--format", "json"]).exit_code == 0
    out = tmp_path / "out"
    written = runner.invoke(app, ["weekly", "--config", str(fleet), "--output", str(out / "digest.html"),
                                  "--email-to-file", str(out / "digest.eml")])
    assert written.exit_code == 0, written.output
    before = snapshot(out)
    assert len(before["digest.html"]) > LIMIT and len(before["digest.eml"]) > LIMIT

    # A reader holds the history open (as `audit history` might): SQLite's 32 KB shared-memory file
    # exists already, so the limit falls on the digest's files alone.
    with History(history) as reader:
        assert reader.runs()
        again = audit_on_a_full_disk("weekly", "--config", str(fleet), "--output", str(out / "digest.html"),
                                     "--email-to-file", str(out / "digest.eml"), cwd=tmp_path)

    assert again.returncode == 1, again.stderr
    assert "File too large" in again.stderr and "Traceback" not in again.stderr
    assert snapshot(out) == before


def test_write_atomic_on_a_full_disk_leaves_the_old_file_and_nothing_else(tmp_path: Path) -> None:
    """The one writer of reports, mails, digests, the price cache and the outboxes."""
    target = tmp_path / "prices.json"
    target.write_text('{"old": true}')
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from pathlib import Path; from auditor.files import write_atomic; "
         "write_atomic(Path(sys.argv[1]), 'x' * 100_000)", str(target)],
        capture_output=True, text=True, preexec_fn=disk_full_at(LIMIT), timeout=60)
    assert result.returncode == 1 and "OSError: [Errno 27] File too large" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["prices.json"] and target.read_text() == '{"old": true}'


def test_write_atomic_keeps_the_mode_follows_a_symlink_and_writes_a_device_in_place(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "latest.html"
    link.symlink_to(target)
    write_atomic(link, "new")
    assert link.is_symlink() and target.read_text() == "new" and target.stat().st_mode & 0o777 == 0o640
    fresh = tmp_path / "fresh.json"
    write_atomic(fresh, b"{}")
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask
    write_atomic(Path(os.devnull), "to a device, not over it")
    assert Path(os.devnull).is_char_device()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.json", "latest.html", "report.html"]
