"""The unattended jobs: the nightly audit and the weekly digest. The CLI commands and the
scheduler run the same functions; the CLI prints, the scheduler logs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.errors import AuditorError, ConfigError
from auditor.history.store import History, default_history_path
from auditor.history.weekly import build_digest, iso_week
from auditor.pipeline import AuditOutcome, Progress, run_audit


def execute_audit(config: AuditConfig, now: datetime | None = None, progress: Progress | None = None) -> AuditOutcome:
    """The one code path of `audit run`, `audit demo` and the nightly job."""
    return run_audit(config, AwsClients(profile=config.aws.profile), now=now, progress=progress)


def history_path(config: AuditConfig) -> Path:
    return Path(config.history.path).expanduser() if config.history.path else default_history_path()


def record_history(config: AuditConfig, outcome: AuditOutcome) -> int:
    with History(history_path(config)) as history:
        return history.record_run(outcome.report, fatal=bool(outcome.fatal_errors))


@dataclass(frozen=True)
class NightlyResult:
    outcome: AuditOutcome
    run_id: int
    sent_to: tuple[str, ...]


def nightly_audit(config: AuditConfig, now: datetime | None = None) -> NightlyResult:
    """Audit, record the run, and mail the report when [email] names recipients. Raises the
    first problem as an AuditorError after whatever could be done was done."""
    from auditor.deliver.mail import send_report

    outcome = execute_audit(config, now=now)
    run_id = record_history(config, outcome)
    sent: tuple[str, ...] = ()
    if config.email.sender and config.email.recipients:
        deliveries = send_report(outcome.report, config.email)
        sent = tuple(r for d in deliveries for r in d.recipients)
    if outcome.fatal_errors:
        raise AuditorError(outcome.fatal_errors[0].message)
    return NightlyResult(outcome, run_id, sent)


@dataclass(frozen=True)
class WeeklyResult:
    week: str
    status: str  # sent | written | already-sent | no-runs
    message: str
    new: int = 0
    resolved: int = 0
    still_open: int = 0
    monthly_savings_usd: float = 0.0


def weekly_digest(
    config: AuditConfig,
    week: str | None = None,
    email: bool = False,
    output: Path | None = None,
    force: bool = False,
    now: datetime | None = None,
) -> WeeklyResult:
    from auditor.deliver.mail import check_email_config, transmit
    from auditor.report.weekly import build_weekly_message, render_weekly_file

    now = now or datetime.now(UTC)
    week = week or iso_week(now)
    if email:
        check_email_config(config.email)
    path = history_path(config)
    if not path.exists():
        raise ConfigError(f"no history database at {path} (history.path): run `audit run` first")
    with History(path) as history:
        if email and not force:
            sent_at = history.digest_sent(week)
            if sent_at is not None:
                return WeeklyResult(week, "already-sent",
                                    f"the digest for {week} was sent at {sent_at.isoformat()}: nothing sent "
                                    "(--force sends it again)")
        digest = build_digest(history, week)
        if digest is None:
            return WeeklyResult(week, "no-runs", f"no audit runs in {week}: no digest to send")
        counts = dict(new=len(digest.new), resolved=len(digest.resolved), still_open=len(digest.still_open))
        saving = digest.run.monthly_savings_usd
        if output is not None:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(render_weekly_file(digest), encoding="utf-8")
        if not email:
            where = f" to {output}" if output else ""
            return WeeklyResult(week, "written", f"digest for {week} written{where}", **counts,
                                monthly_savings_usd=saving)
        assert config.email.sender is not None
        message = build_weekly_message(digest, config.email.sender, config.email.recipients,
                                       config.email.subject_prefix)
        try:
            transmit(message, config.email)
        except AuditorError as exc:
            from auditor.deliver.mail import save_to_outbox

            saved = save_to_outbox(message, config.email)
            raise AuditorError(f"{exc}; the digest was saved in {saved.parent} (retry: audit send-outbox)") from None
        history.record_digest(week, now, list(config.email.recipients))
        return WeeklyResult(week, "sent", f"digest for {week} sent to {', '.join(config.email.recipients)}", **counts,
                            monthly_savings_usd=saving)
