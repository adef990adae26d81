"""The scheduler's start line says when the next job runs as an ISO-8601 time with its offset."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from auditor.errors import ProblemLines
from test_scheduler import START, make


def test_start_line_has_next_run_with_an_offset(tmp_path: Path) -> None:
    scheduler, lines, _, traveller = make(tmp_path, nightly=lambda: {}, weekly=lambda: {}, days=0.01)
    try:
        scheduler.run(install_signals=False)
    finally:
        traveller.stop()
    start = next(line for line in lines if line.get("event") == "start")
    next_run = datetime.fromisoformat(start["next_run"])
    assert next_run.utcoffset() is not None, start["next_run"]
    # 02:00 in Berlin the next night is 01:00 UTC, 13 hours after START (Friday 12:00 UTC).
    assert next_run == START + timedelta(hours=13)


def test_a_failed_job_is_logged_in_the_user_s_words(tmp_path: Path) -> None:
    """The tool's own failures (several at once here) say what failed, not the class that carried them."""
    def failing() -> dict:
        raise ProblemLines(["cannot send to ops@example.com: refused", "Slack post failed: HTTP 500"])

    scheduler, lines, _, traveller = make(tmp_path, nightly=failing, weekly=lambda: {}, days=1.1)
    try:
        scheduler.run(install_signals=False)
    finally:
        traveller.stop()
    failed = next(line for line in lines if line.get("status") == "failed")
    assert failed["error"] == "cannot send to ops@example.com: refused; Slack post failed: HTTP 500"
    assert "ProblemLines" not in json.dumps(lines)
