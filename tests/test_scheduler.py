"""The scheduler, with an injected clock: time moves when the loop sleeps; no test waits for it."""

from __future__ import annotations

import json
import os
import signal
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import time_machine

from auditor.config_file import parse_config
from auditor.history.store import History
from auditor.tasks.scheduler import Scheduler
from fleet_report import synthetic_report

START = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)  # a Friday, 12:00 UTC


class Clock:
    """Travels with time-machine: `sleep` moves the clock that `schedule` and the loop read."""

    def __init__(self, traveller, until: datetime, stop) -> None:
        self.traveller, self.until, self.stop = traveller, until, stop
        self.slept = 0.0

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        self.slept += seconds
        self.traveller.shift(timedelta(seconds=seconds))
        if self.now() >= self.until:
            self.stop()


def make(tmp_path: Path, nightly, weekly, days: float, extra: str = "") -> tuple[Scheduler, list[dict], Clock, object]:
    config = parse_config({
        "history": {"path": str(tmp_path / "history.sqlite3")},
        "schedule": {"nightly_at": "02:00", "weekly_day": "monday", "weekly_at": "07:00", "timezone": "Europe/Berlin"},
    })
    lines: list[dict] = []
    traveller = time_machine.travel(START, tick=False)
    traveller_handle = traveller.start()
    scheduler = Scheduler(config, nightly, weekly, log=lambda line: lines.append(json.loads(line)))
    clock = Clock(traveller_handle, START + timedelta(days=days), scheduler.stop)
    scheduler.clock = clock.now
    scheduler.sleep = clock.sleep
    return scheduler, lines, clock, traveller


def test_nightly_and_weekly_run_at_their_slots_in_the_time_zone(tmp_path: Path) -> None:
    calls: list[tuple[str, datetime]] = []
    scheduler, lines, clock, traveller = make(
        tmp_path,
        nightly=lambda: calls.append(("nightly", datetime.now(UTC))) or {"findings": 3, "saving_usd": 12.5},
        weekly=lambda: calls.append(("weekly", datetime.now(UTC))) or {"new": 1},
        days=7,
    )
    try:
        scheduler.run(install_signals=False)
    finally:
        traveller.stop()
    # No history yet: a catch-up run at start, then 02:00 Berlin (01:00 UTC) every night.
    nightly = [t for name, t in calls if name == "nightly"]
    assert nightly[0] == START
    assert [t.strftime("%a %H:%M") for t in nightly[1:]] == [
        "Sat 01:00", "Sun 01:00", "Mon 01:00", "Tue 01:00", "Wed 01:00", "Thu 01:00", "Fri 01:00"]
    weekly = [t for name, t in calls if name == "weekly"]
    assert [t.strftime("%a %H:%M") for t in weekly] == ["Mon 06:00"]  # 07:00 Berlin
    jobs = [line for line in lines if "job" in line]
    assert len(jobs) == len(calls)
    assert {"job", "start", "end", "duration_s", "status", "findings", "saving_usd"} <= set(jobs[0])
    assert clock.slept >= 7 * 86400 - 60  # time moved; the test did not wait


def test_a_failing_job_is_logged_and_the_loop_goes_on(tmp_path: Path) -> None:
    runs = []

    def flaky() -> dict:
        runs.append(1)
        if len(runs) == 2:
            raise RuntimeError("CloudWatch throttled us")
        return {}

    scheduler, lines, _, traveller = make(tmp_path, nightly=flaky, weekly=lambda: {}, days=3)
    try:
        scheduler.run(install_signals=False)
    finally:
        traveller.stop()
    statuses = [line["status"] for line in lines if line.get("job") == "nightly"]
    assert statuses[:3] == ["ok", "failed", "ok"]
    failed = next(line for line in lines if line.get("status") == "failed")
    assert failed["error"] == "RuntimeError: CloudWatch throttled us"


def test_no_catch_up_when_the_last_run_is_recent(tmp_path: Path) -> None:
    with History(tmp_path / "history.sqlite3") as history:
        history.record_run(replace(synthetic_report(2), generated_at=START - timedelta(hours=5)))
    calls = []
    scheduler, lines, _, traveller = make(tmp_path, nightly=lambda: calls.append(1) or {}, weekly=lambda: {}, days=0.6)
    try:
        scheduler.run(install_signals=False)
    finally:
        traveller.stop()
    assert calls == [1]  # only tonight's slot, no catch-up at start
    assert not any(line.get("event") == "catch-up" for line in lines)


def test_sigterm_stops_between_jobs(tmp_path: Path) -> None:
    finished = []

    def long_job() -> dict:
        os.kill(os.getpid(), signal.SIGTERM)  # arrives while the job runs...
        finished.append(True)  # ...which still finishes
        return {}

    scheduler, lines, _, traveller = make(tmp_path, nightly=long_job, weekly=lambda: {}, days=30)
    previous = signal.getsignal(signal.SIGTERM)
    try:
        scheduler.run(install_signals=True)
    finally:
        traveller.stop()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    assert finished == [True]
    assert [line.get("event") or line.get("job") for line in lines] == ["start", "catch-up", "nightly", "stop"]
