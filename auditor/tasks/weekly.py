"""The weekly digest as a task: built from the history, sent at most once a week."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from auditor.config import AuditConfig
from auditor.errors import AuditorError, ConfigError, ProblemLines
from auditor.files import write_atomic
from auditor.history.store import History, history_path
from auditor.history.weekly import Digest, build_digest, iso_week


@dataclass(frozen=True)
class WeeklyResult:
    week: str
    status: str  # sent | written | printed | already-sent | no-runs
    message: str
    new: int = 0
    resolved: int = 0
    still_open: int = 0
    monthly_savings_usd: float = 0.0
    text: str | None = field(default=None, kw_only=True)  # the digest as text: asked neither as a file nor a mail


def weekly_digest(
    config: AuditConfig,
    week: str | None = None,
    email: bool = False,
    output: Path | None = None,
    force: bool = False,
    now: datetime | None = None,
    email_to_file: Path | None = None,
    chat: bool = False,
) -> WeeklyResult:
    """The digest (below), then, with `chat`, its summary posted to Slack and Teams: a failed
    post or a failed mail does not stop the other; the first problem is raised after both."""
    built: list[Digest] = []
    try:
        result = _weekly_digest(config, built, week, email, output, force, now, email_to_file)
    except AuditorError as exc:
        if chat and built:
            try:
                post_digest(config, built[0], emailed=False)
            except AuditorError as chat_exc:
                raise AuditorError(f"{exc} (and {chat_exc})") from None
        raise
    if chat and built:
        post_digest(config, built[0], emailed=result.status == "sent")
        result = replace(result, message=f"{result.message}; posted to chat")
    return result


def _weekly_digest(
    config: AuditConfig,
    built: list[Digest],
    week: str | None = None,
    email: bool = False,
    output: Path | None = None,
    force: bool = False,
    now: datetime | None = None,
    email_to_file: Path | None = None,
) -> WeeklyResult:
    """The digest of `week` (default: this one) as HTML in `output`, as an .eml in `email_to_file`,
    and sent by mail with `email` (once a week unless `force`)."""
    from auditor.deliver.mail import Delivery, MailChannel, check_email_config, for_file, outbox_of
    from auditor.report.weekly import build_weekly_message, render_weekly_file, render_weekly_text

    now = now or datetime.now(UTC)
    week = week or iso_week(now)
    if email:
        check_email_config(config.email)
    path = history_path(config)
    if not path.exists():
        raise ConfigError(f"no history database at {path} (history.path): run `audit run` first")
    with History(path, reading=not email) as history:  # only --email records the digest as sent
        if email and not force:
            sent_at = history.digest_sent(week)
            if sent_at is not None:
                return WeeklyResult(week, "already-sent",
                                    f"the digest for {week} was sent at {sent_at.isoformat()}: nothing sent "
                                    "(--force sends it again)")
        digest = build_digest(history, week)
        if digest is None:
            return WeeklyResult(week, "no-runs", f"no audit runs in {week}: no digest to send")
        found = digest

        def result(status: str, message: str, text: str | None = None) -> WeeklyResult:
            return WeeklyResult(week, status, message, len(found.new), len(found.resolved), len(found.still_open),
                                found.run.monthly_savings_usd, text=text)
        built.append(digest)
        written = []
        if output is not None:
            _write_file(output, render_weekly_file(digest), "the digest")
            written.append(str(output))
        if not email and email_to_file is None and output is None:
            # Asked for nothing else: the digest itself, as text (the command prints it).
            return result("printed", f"digest for {week} printed (--output FILE writes it as HTML)",
                          render_weekly_text(digest))
        if not email and email_to_file is None:
            return result("written", f"digest for {week} written to {output}")
        addressed = config.email if email else for_file(config.email)  # placeholders for a file
        assert addressed.sender is not None
        message = build_weekly_message(digest, addressed.sender, addressed.recipients,
                                       config.email.subject_prefix)
        if email_to_file is not None:
            _write_file(email_to_file, bytes(message), "the digest's email")
            written.append(str(email_to_file))
            return result("written", f"digest for {week} written to {', '.join(written)}")
        _, unsent = outbox_of(config.email).send_or_keep(
            MailChannel(config.email), [Delivery(tuple(config.email.recipients), message)])
        if unsent:  # the one message, in the digest's own words
            (failed,) = unsent
            if isinstance(failed.kept, OSError):
                raise AuditorError(f"{failed.error}; and the digest could not be saved in the outbox: "
                                   f"{failed.kept.strerror or failed.kept}")
            raise AuditorError(f"{failed.error}; the digest was saved in {failed.kept.parent} "
                               "(retry: audit send-outbox)")
        history.record_digest(week, now, list(config.email.recipients))
        return result("sent", f"digest for {week} sent to {', '.join(config.email.recipients)}")


def _write_file(path: Path, data: str | bytes, what: str) -> None:
    """Whole or not at all: on a full disk the previous file stays as it was."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    except OSError as exc:
        raise AuditorError(f"cannot write {what} to {path}: {exc.strerror or exc}") from None


def post_digest(config: AuditConfig, digest: Digest, emailed: bool) -> list[str]:
    """The digest's summary to Slack and Teams; a failed post waits in the outbox and raises."""
    from auditor.deliver.chat import deliver_posts, plan_digest_posts
    from auditor.deliver.mail import outbox_of

    pointer = (f"Full digest: emailed to {', '.join(config.email.recipients)}" if emailed and config.email.recipients
               else f"Full digest: audit weekly --week {digest.week} --output digest.html")
    posted, problems = deliver_posts(plan_digest_posts(digest, config.chat, pointer), config.chat,
                                     outbox_of(config.email))
    if problems:
        raise ProblemLines(problems)
    return posted
