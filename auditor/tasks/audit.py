"""The audit as a task: run it, record it in the history, and deliver the report by mail or file.

`audit run`, `audit demo` and the nightly job share this code path.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from auditor.collect.session import AwsClients, client_config
from auditor.config import AuditConfig
from auditor.errors import AuditorError, ConfigError, ProblemLines
from auditor.history.store import (
    History,
    HistoryError,
    StoredConfigCache,
    history_path,
    prepare_history,
)
from auditor.models import AuditError, RiskLevel
from auditor.pipeline import AuditOutcome, Progress, RunLimits, run_audit


def execute_audit(config: AuditConfig, now: datetime | None = None, progress: Progress | None = None,
                  limits: RunLimits | None = None, notices: tuple[str, ...] = (),
                  remember_configs: bool = False) -> AuditOutcome:
    """The one code path of `audit run`, `audit demo` and the nightly job. `notices` (from
    `prepare_run_history`) go into the report's errors, stage "history". With `remember_configs`,
    endpoint config descriptions are kept in the history database, so a nightly run describes
    only the configs it has not seen before."""
    aws = config.aws
    clients = AwsClients(profile=aws.profile, config=client_config(
        aws.connect_timeout_seconds, aws.read_timeout_seconds, aws.max_attempts))
    problems = [AuditError(region="-", endpoint=None, stage="history", message=n) for n in notices]
    cache = None
    if remember_configs:
        try:
            cache = StoredConfigCache(history_path(config))
        except HistoryError as exc:
            problems.append(AuditError("-", None, "history", f"{exc}: endpoint configs described afresh"))
    outcome = run_audit(config, clients, now=now, progress=progress,
                        limits=limits or RunLimits(aws.deadline_minutes * 60), notices=tuple(problems),
                        configs=cache)
    if cache is not None:
        # If this fails the next run describes them again: a cost, not a loss (recording the run
        # reports a bad history file).
        with contextlib.suppress(HistoryError):
            cache.save()
    return outcome


def check_writable(path: Path, option: str) -> None:
    """Fail now, with the option named, if `path` cannot be written (its directory is created)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=".audit-write-check-"):
            pass
    except OSError as exc:
        raise ConfigError(f"cannot write {option} {path}: {exc.strerror or exc}") from None
    if path.is_dir():
        raise ConfigError(f"cannot write {option} {path}: it is a directory")


@dataclass(frozen=True)
class RunHistory:
    """What `prepare_run_history` found: each is one line, said once."""

    notice: str | None = None  # a damaged file was moved aside and a new one started: the run is recorded
    problem: str | None = None  # the history cannot be used (a read-only directory): the run is not recorded

    @property
    def usable(self) -> bool:
        return self.problem is None

    @property
    def notices(self) -> tuple[str, ...]:
        """For the report's errors (stage "history"), so that the mail says it too."""
        return tuple(n for n in (self.notice, self.problem) if n)


def prepare_run_history(config: AuditConfig, now: datetime | None = None) -> RunHistory:
    """Before the audit, so that a bad history never costs the audit, the report or the mail: a
    damaged file is moved aside and a new one started; a history that cannot be opened or written
    (a read-only directory, a locked file) is left alone, and the run goes on without it."""
    try:
        return RunHistory(notice=prepare_history(history_path(config), now))
    except HistoryError as exc:
        return RunHistory(problem=f"{exc}; this run is not recorded")


def record_history(config: AuditConfig, outcome: AuditOutcome) -> int:
    """Record the run, then mark the applied changes (`audit apply`) it sees done."""
    from auditor.act.verify import verify_applied

    with History(history_path(config)) as history:
        run_id = history.record_run(outcome.report, fatal=bool(outcome.fatal_errors))
        verify_applied(history, outcome.report, run_id, outcome.report.generated_at)
        return run_id


def cleanup_hint(config: AuditConfig, now: datetime) -> str | None:
    """What `audit apply --cleanup` would do now (the run only reads: the deleting is apply's)."""
    from auditor.act.cleanup import to_clean

    with History(history_path(config), reading=True) as history:
        items = to_clean(history, now)
    alarms = sum(len(item.alarms) for item in items)
    targets = sum(1 for item in items if item.scaling is not None)
    said = [f"{alarms} rollback alarm{'s' if alarms != 1 else ''} of verified or rolled-back changes can be deleted"
            ] if alarms else []
    said += [f"{targets} scalable target{'s' if targets != 1 else ''} an apply deregistered can be registered "
             "again"] if targets else []
    return f"{' and '.join(said)}: audit apply --cleanup --yes" if said else None


@dataclass(frozen=True)
class Delivered:
    """What happened after the audit: each step on its own, so one failing does not stop the others."""

    run_id: int | None = None
    sent_to: tuple[str, ...] = ()
    written: tuple[Path, ...] = ()
    problems: tuple[str, ...] = field(default=())  # one line each
    posted: tuple[str, ...] = ()  # chat posts, "<service>:<channel label>"
    cleanup: str | None = None  # what `audit apply --cleanup` would do now (auditor.act.cleanup)


def deliver_outcome(config: AuditConfig, outcome: AuditOutcome, *, history: bool = True, email: bool = False,
                    email_to_file: Path | None = None, chat: bool = False,
                    max_risk: RiskLevel | None = None) -> Delivered:
    """Record the run in the history, send (or write) the email and post the chat summary; a step
    that fails is a problem in the result and the next step still runs. `max_risk` (`--max-risk`):
    the mail and the chat show only the plans at that risk or lower; the history keeps every plan."""
    from auditor.deliver.mail import DeliveryFailures, send_report, write_messages

    problems: list[str] = []
    run_id = None
    hint: str | None = None
    if history:
        try:
            run_id = record_history(config, outcome)
            hint = cleanup_hint(config, outcome.report.generated_at)
        except AuditorError as exc:
            problems.append(str(exc))
    outcome = replace(outcome, report=outcome.report.within_risk(max_risk))
    sent: tuple[str, ...] = ()
    written: tuple[Path, ...] = ()
    if email_to_file is not None:
        try:
            written = tuple(write_messages(outcome.report, config.email, email_to_file))
        except OSError as exc:
            problems.append(f"cannot write the email to {email_to_file}: {exc.strerror}")
        except AuditorError as exc:
            problems.append(str(exc))
    elif email:
        try:
            sent = tuple(r for d in send_report(outcome.report, config.email) for r in d.recipients)
        except DeliveryFailures as exc:
            sent = exc.sent  # the messages that went still count
            problems += exc.lines  # one line per unsent message
        except AuditorError as exc:
            problems.append(str(exc))
    posted: tuple[str, ...] = ()
    if chat:
        posted, chat_problems = post_chat(config, outcome, run_id, sent)
        problems += chat_problems
    return Delivered(run_id, sent, written, tuple(problems), posted, hint)


def post_chat(config: AuditConfig, outcome: AuditOutcome, run_id: int | None,
              sent_to: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """The run's summary to Slack and Teams; failed posts wait in the outbox."""
    from auditor.deliver.chat import deliver_posts, plan_report_posts
    from auditor.deliver.mail import outbox_of

    where = []
    if sent_to:
        where.append(f"emailed to {len(sent_to)} recipient{'s' if len(sent_to) != 1 else ''}")
    if run_id is not None:
        where.append(f"run {run_id} in the audit history (audit history)")
    pointer = "Full report: " + ("; ".join(where) if where else "the report file of the audit run")
    posts = plan_report_posts(outcome.report, config.chat, pointer)
    posted, problems = deliver_posts(posts, config.chat, outbox_of(config.email))
    return tuple(posted), problems


@dataclass(frozen=True)
class NightlyResult:
    outcome: AuditOutcome
    run_id: int | None
    sent_to: tuple[str, ...]
    history_notice: str | None = None
    interrupted: bool = False


def nightly_audit(config: AuditConfig, now: datetime | None = None,
                  stop: threading.Event | None = None) -> NightlyResult:
    """Prepare the history, audit, record the run, and mail the report when [email] names
    recipients. Raises the first problem as an AuditorError after whatever could be done was done.
    `stop` (the scheduler's, set by SIGTERM) ends the audit early: the partial run is recorded as
    interrupted and no mail is sent (the next run mails a whole report)."""
    history = prepare_run_history(config, now)
    limits = RunLimits(config.aws.deadline_minutes * 60, stop=stop or threading.Event(),
                       stop_reason="interrupted by SIGTERM")
    outcome = execute_audit(config, now=now, limits=limits, notices=history.notices,
                            remember_configs=history.usable)
    mail = bool(config.email.sender and config.email.recipients) and not limits.stop.is_set()
    from auditor.deliver.chat import chat_configured

    chat = config.chat.nightly and chat_configured(config.chat) and not limits.stop.is_set()
    delivered = deliver_outcome(config, outcome, history=history.usable, email=mail, chat=chat)
    problems = [p for p in (history.problem, *delivered.problems) if p]
    if problems:
        raise ProblemLines(problems)
    if limits.stop.is_set():
        return NightlyResult(outcome, delivered.run_id, delivered.sent_to, history.notice, interrupted=True)
    if outcome.fatal_errors:
        raise AuditorError(outcome.fatal_errors[0].message)
    return NightlyResult(outcome, delivered.run_id, delivered.sent_to, history.notice)


__all__ = ["Delivered", "NightlyResult", "RunHistory", "deliver_outcome", "execute_audit", "history_path",
           "nightly_audit", "prepare_run_history", "record_history"]
