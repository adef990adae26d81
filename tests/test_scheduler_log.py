"""The scheduler's start line says when the next job runs as an ISO-8601 time with its offset."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

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
