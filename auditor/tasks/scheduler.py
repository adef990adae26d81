"""`audit schedule`: the nightly audit and the weekly digest in the foreground, on `schedule`.

- One job at a time: `schedule` runs due jobs one after another in this thread.
- A job that fails is logged and runs again at its next slot; it never ends the loop.
- SIGTERM (and Ctrl-C) stop the loop between jobs, never in the middle of one.
- On start, if the last successful nightly run is older than 24 hours, one runs at once; a history
  that cannot be read counts as no run (the nightly job moves a damaged file aside and says so).
- One JSON line per job on stderr: job, start, end, duration, status, findings, saving, errors.
The clock, the sleep and the log are injected, so tests move time instead of waiting for it.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import platformdirs
import schedule

from auditor.config import AuditConfig
from auditor.errors import AuditorError
from auditor.history.store import History, HistoryError, history_path
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.redact import scrub_fields, secret_values
from auditor.tasks.audit import nightly_audit
from auditor.tasks.weekly import weekly_digest

CATCH_UP_AFTER = timedelta(hours=24)
MAX_SLEEP_SECONDS = 60.0

JobFunction = Callable[[], dict[str, Any]]


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass
class Scheduler:
    config: AuditConfig
    nightly: JobFunction
    weekly: JobFunction
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    log: Callable[[str], None] = _stderr_line
    stop_event: threading.Event = field(default_factory=threading.Event)
    sleep: Callable[[float], None] | None = None  # default: wait on stop_event (SIGTERM wakes it)
    jobs: schedule.Scheduler = field(default_factory=schedule.Scheduler)

    def __post_init__(self) -> None:
        cfg = self.config.schedule
        self.jobs.every().day.at(cfg.nightly_at, cfg.timezone).do(self.run_job, "nightly", self.nightly)
        weekly_day = getattr(self.jobs.every(), cfg.weekly_day.lower())
        weekly_day.at(cfg.weekly_at, cfg.timezone).do(self.run_job, "weekly", self.weekly)

    def run_job(self, name: str, function: JobFunction) -> None:
        start = self.clock()
        try:
            fields = function()
            status = fields.pop("status", "ok")
        except AuditorError as exc:  # the tool's own failure: its message is already the user's words
            fields = {"error": str(exc)}
            status = "failed"
        except Exception as exc:  # a library's or a bug's: its kind says what it is
            fields = {"error": f"{type(exc).__name__}: {exc}"}
            status = "failed"
        end = self.clock()
        self.emit({
            "job": name,
            "start": start.isoformat(),
            "end": end.isoformat(),
            "duration_s": round((end - start).total_seconds(), 3),
            "status": status,
            **fields,
        })

    def emit(self, fields: dict[str, Any]) -> None:
        """One JSON line, with every secret cut out of its texts (an exception's message may quote
        one: the log is kept and shipped, the secret must not be)."""
        self.log(json.dumps(scrub_fields(fields, secret_values(self.config))))

    def catch_up(self) -> None:
        """Run the nightly audit now if the last successful one is older than 24 hours."""
        path = history_path(self.config)
        last = None
        unreadable: dict[str, str] = {}
        if path.exists():
            try:
                with History(path, reading=True) as history:
                    run = history.last_successful_run()
                    last = run.started_at if run else None
            except HistoryError as exc:  # the nightly job prepares the history and logs what it did
                unreadable = {"history_error": str(exc)}
        if last is None or self.clock() - last > CATCH_UP_AFTER:
            self.emit({"event": "catch-up", "last_successful_run": last.isoformat() if last else None,
                       **unreadable})
            self.run_job("nightly", self.nightly)

    def stop(self, *_: object) -> None:
        self.stop_event.set()

    def run(self, install_signals: bool = True) -> None:
        if install_signals and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.stop)
            signal.signal(signal.SIGINT, self.stop)
        cfg = self.config.schedule
        self.emit({"event": "start", "nightly_at": cfg.nightly_at,
                   "weekly": f"{cfg.weekly_day} {cfg.weekly_at}",
                   "timezone": cfg.timezone,  # next_run: naive local time from `schedule`, with its offset
                   "next_run": self.jobs.next_run and self.jobs.next_run.astimezone().isoformat()})
        self.catch_up()
        while not self.stop_event.is_set():
            self.jobs.run_pending()  # jobs run here, one after another
            if self.stop_event.is_set():
                break
            idle = self.jobs.idle_seconds
            pause = MAX_SLEEP_SECONDS if idle is None else min(max(idle, 0.0), MAX_SLEEP_SECONDS)
            (self.sleep or self.stop_event.wait)(pause)
        self.emit({"event": "stop"})


def nightly_job(config: AuditConfig, stop: threading.Event | None = None) -> JobFunction:
    def run() -> dict[str, Any]:
        result = nightly_audit(config, stop=stop)
        report = result.outcome.report
        return {"status": "interrupted" if result.interrupted else "ok",
                "run_id": result.run_id, "endpoints": len(ENDPOINTS.section(report)), "findings": len(report.findings),
                "saving_usd": report.monthly_savings_usd, "errors": len(report.errors),
                "emailed_to": list(result.sent_to),
                **({"history": result.history_notice} if result.history_notice else {})}
    return run


def weekly_job(config: AuditConfig) -> JobFunction:
    def run() -> dict[str, Any]:
        email = bool(config.email.sender and config.email.recipients)
        output = None
        if not email:  # no mail configured: keep the digest as a file
            output = Path(platformdirs.user_data_dir("sagemaker-auditor")) / "digests" / "latest.html"
        from auditor.deliver.chat import chat_configured

        chat = config.chat.weekly and chat_configured(config.chat)
        result = weekly_digest(config, email=email, output=output, chat=chat)
        return {"status": "ok" if result.status in ("sent", "written") else result.status, "week": result.week,
                "new": result.new, "resolved": result.resolved, "still_open": result.still_open,
                "saving_usd": result.monthly_savings_usd, "message": result.message}
    return run


def run_scheduler(config: AuditConfig) -> None:
    # One stop event for the loop and the nightly audit: SIGTERM ends a running audit within
    # seconds (a partial report, recorded as interrupted), not after it.
    stop = threading.Event()
    Scheduler(config, nightly_job(config, stop), weekly_job(config), stop_event=stop).run()
