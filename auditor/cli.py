"""The `audit` command: a thin layer over the pipeline, the renderers and delivery."""

from __future__ import annotations

import contextlib
import enum
import json
import os
import sys
import threading
import time
from datetime import UTC, datetime
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from auditor.errors import AuditorError, AwsAccessError, ConfigError, ProblemLines
from auditor.text import one_line, one_line_words

try:  # the registry loads the plug-in kinds: one that cannot be registered is one `error:` line
    import auditor.kinds.registry  # noqa: F401
except AuditorError as exc:
    sys.exit(f"error: {one_line_words(str(exc))}")

from auditor.cli_frame import (
    EXIT_FINDINGS,
    ConfigOption,
    EndedBySignal,
    cli_command,
)
from auditor.config import AuditConfig
from auditor.files import write_atomic
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.limits import pause_point
from auditor.models import AuditReport, RiskLevel
from auditor.pipeline import Progress, RunLimits
from auditor.report.headline import report_headline
from auditor.report.render import TABLE_PLANS, OutputFormat, render, render_tables
from auditor.signals import on_stop_signals
from auditor.tasks.audit import RunHistory, check_writable, deliver_outcome, execute_audit, prepare_run_history

if TYPE_CHECKING:
    from rich.progress import TaskID

    from auditor.history.store import AppliedChange

app = typer.Typer(
    help="Find the money wasted on Amazon SageMaker endpoints, and say what to change.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help texts name config sections as [email]: plain text, not Rich markup (which would eat them).
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"sagemaker-auditor {version('sagemaker-auditor')}")
        raise typer.Exit()


@app.callback()
def _options(
    _version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                           help="Print the version and exit.")] = False,
) -> None:
    """Options before the command: only --version."""


class HistoryFormat(enum.StrEnum):
    TABLE = "table"
    JSON = "json"


class BarProgress(Progress):
    """A progress bar on stderr while collecting, when stderr is a terminal."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                                 transient=True, console=Console(stderr=True))
        self._task: TaskID | None = None

    def region_started(self, region: str, queries: int) -> None:
        if self._task is None:
            self._bar.start()
            self._task = self._bar.add_task(f"collecting metrics in {region}", total=queries)
        else:
            self._bar.reset(self._task, total=queries, description=f"collecting metrics in {region}")

    def advanced(self, queries: int) -> None:
        if self._task is not None:
            self._bar.advance(self._task, queries)

    def stop(self) -> None:
        if self._task is not None:
            self._bar.stop()


def actionable_findings(report: AuditReport) -> int:
    return report.finding_count


def write_report(report: AuditReport, output_format: OutputFormat, output: Path | None,
                 show_all: bool = False) -> str | None:
    """The report on stdout or in `output`; the problem in one line if it cannot be written. On
    stdout the table fits the terminal and shows the first plans unless `show_all`; a file has all."""
    limit = None if show_all or output is not None else TABLE_PLANS
    text = render(report, output_format, color=output is None and sys.stdout.isatty(), limit=limit)
    # CSV is one table a file: the kinds' own tables (the experiments of training jobs) go beside the findings.
    tables = render_tables(report) if output_format is OutputFormat.CSV else {}
    try:
        if output is not None:
            output.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(output, text)
            typer.echo(f"report written to {output}", err=True)
            for name, table in tables.items():
                beside = output.with_name(f"{output.stem}-{name}{output.suffix or '.csv'}")
                write_atomic(beside, table)
                typer.echo(f"{name} written to {beside}", err=True)
        else:
            typer.echo(text, nl=False)
            for table in tables.values():
                typer.echo("")
                typer.echo(table, nl=False)
    except OSError as exc:
        problem = f"cannot write the report to {output}: {exc.strerror}"
        fallback = fallback_path(output, output_format)
        try:
            fallback.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(fallback, text)
        except OSError as again:
            return f"{problem}; nor to {fallback}: {again.strerror}"
        return f"{problem}; written to {fallback} instead"
    return None


def fallback_path(output: Path | None, output_format: OutputFormat) -> Path:
    """Where a report goes when its own path fails at the end of a run: the data directory."""
    import platformdirs

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    suffix = output.suffix if output is not None and output.suffix else f".{output_format.value}"
    return Path(platformdirs.user_data_dir("sagemaker-auditor")) / "reports" / f"report-{stamp}{suffix}"


def run_log_line(report: AuditReport, seconds: float) -> str:
    """One line for the log: what was audited, the API calls and the answers botocore retried."""
    problems = report.call_problems
    retried = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in problems.items() if n) or "none retried"
    # The report's headline (its counts, saving and what was not read), then the run's own figures.
    return (f"{report_headline(report, 'audit')}; {len(ENDPOINTS.section(report))} endpoints; "
            f"{sum(report.api_calls.values())} API calls ({retried}); {seconds:.1f} s")


def stop_on_signals(limits: RunLimits) -> contextlib.AbstractContextManager[None]:
    """SIGTERM and Ctrl-C ask the run to stop: what was collected is still reported (marked partial)."""
    return on_stop_signals(lambda name: limits.request_stop(f"interrupted by {name}"))


@app.command()
@cli_command()
def run(
    config: AuditConfig,
    region: Annotated[list[str] | None, typer.Option(
        "--region", metavar="REGION", help="Region to audit; repeat for several. Overrides aws.regions.")] = None,
    lookback_days: Annotated[int | None, typer.Option(
        "--lookback-days", help="Days of metrics to judge (default 14).")] = None,
    output_format: Annotated[OutputFormat, typer.Option(
        "--format", case_sensitive=False, help="Report format.")] = OutputFormat.TABLE,
    output: Annotated[Path | None, typer.Option(
        "--output", help="Write the report to this file instead of stdout (every plan and finding).")] = None,
    show_all: Annotated[bool, typer.Option(
        "--all", help=f"The table on stdout: every plan and finding, not the first {TABLE_PLANS} plans.")] = False,
    email: Annotated[bool, typer.Option(
        "--email/--no-email", help="Send the report as configured in [email].")] = False,
    email_to_file: Annotated[Path | None, typer.Option(
        "--email-to-file", help="Write the email (.eml) here instead of sending it.")] = None,
    fail_on_findings: Annotated[bool, typer.Option(
        "--fail-on-findings", help="Exit 3 when there are findings (info notes aside).")] = False,
    no_history: Annotated[bool, typer.Option(
        "--no-history", help="Do not record this run in the history database.")] = False,
    chat: Annotated[bool, typer.Option(
        "--chat/--no-chat", help="Post a summary to the Slack / Teams webhooks of [chat].")] = False,
    max_risk: Annotated[RiskLevel | None, typer.Option(
        "--max-risk", case_sensitive=False,
        help="Show only plans at this risk or lower (low, medium, high); the headline says what it leaves "
             "out. The history keeps every plan.")] = None,
) -> None:
    """Audit SageMaker in the configured accounts and regions: endpoints, training, processing and
    transform jobs, notebook instances, Studio domains and apps, and HyperPod clusters."""
    started = time.monotonic()
    config = config.with_overrides(region, lookback_days)
    if email or email_to_file:
        from auditor.deliver.mail import check_email_config

        check_email_config(config.email, to_file=not email)
    if chat:
        from auditor.deliver.chat import check_chat_config

        check_chat_config(config.chat)
    # What can be checked is checked before an hour of API calls, not after.
    for path, option in ((output, "--output"), (email_to_file, "--email-to-file")):
        if path is not None:
            check_writable(path, option)
    if (email and not email_to_file) or chat:
        from auditor.deliver.mail import outbox_path

        # Where an unsent message goes must work before the run relies on it.
        check_writable(outbox_path(config.email) / "outbox.check", "email.outbox_dir")
    # A damaged history file is moved aside (and said so); one that cannot be written is left
    # alone and said once, at the end: neither costs the audit, the report or the mail.
    history = RunHistory() if no_history else prepare_run_history(config)
    if history.notice:
        typer.echo(f"warning: {history.notice}", err=True)
    limits = RunLimits(config.aws.deadline_minutes * 60)
    progress = BarProgress() if sys.stderr.isatty() else None
    # From here to the history row a signal asks the run to stop: what was read is judged and
    # written, and recorded (a report whole or marked partial, and its history row to match).
    with stop_on_signals(limits):
        try:
            outcome = execute_audit(config, progress=progress, limits=limits, notices=history.notices,
                                    remember_configs=not no_history and history.usable)
        finally:
            if progress is not None:
                progress.stop()
        pause_point("audited", limits)
        report = outcome.report
        for warning in report.catalog.problems:
            typer.echo(f"warning: {warning}", err=True)
        typer.echo(run_log_line(report, time.monotonic() - started), err=True)
        pause_point("summary", limits)

        problems = [p for p in [write_report(report.within_risk(max_risk), output_format, output, show_all),
                                history.problem] if p]
        pause_point("report-written", limits)
        # The history and the mail do not depend on the report file: a full disk still sends the mail. Once
        # stopped, the run is recorded but not sent (as the nightly job: the next run sends a whole report).
        stopped = limits.stop.is_set()
        delivered = deliver_outcome(config, outcome, history=not no_history and history.usable,
                                    email=email and not stopped, email_to_file=email_to_file,
                                    chat=chat and not stopped, max_risk=max_risk)
        if delivered.cleanup:
            typer.echo(delivered.cleanup, err=True)
        if delivered.posted:
            typer.echo(f"summary posted to {', '.join(delivered.posted)}", err=True)
        for path in delivered.written:
            typer.echo(f"email written to {path}", err=True)
        if delivered.sent_to:
            typer.echo(f"report sent to {', '.join(delivered.sent_to)}", err=True)
        problems += delivered.problems
        if limits.stop.is_set():
            # Stopped by a signal: the report and its history row are written; exit as a stopped process does.
            if report.partial:
                problems.append(f"{limits.stop_reason}: partial report written")
            else:
                unsent = "; the mail and chat were not sent" if stopped and (email or chat) else ""
                problems.append(f"{limits.stop_reason} once the audit was done: the report is whole "
                                f"(and recorded){unsent}")
            raise EndedBySignal(problems, "SIGTERM" if "SIGTERM" in limits.stop_reason else "SIGINT")
    if outcome.fatal_errors:
        audited = sum(1 for a in report.accounts if a.audited)
        accounts = len(report.accounts)
        coverage = f"audited {audited} of {accounts} accounts; " if audited < accounts else ""
        # The failures of the audit itself are all in the report's errors: one line says the first.
        more = f" (and {len(outcome.fatal_errors) - 1} more)" if len(outcome.fatal_errors) > 1 else ""
        problems.append(f"{coverage}{outcome.fatal_errors[0].message}{more}")
    if problems:
        raise ProblemLines(problems)
    if fail_on_findings and actionable_findings(report):
        raise typer.Exit(EXIT_FINDINGS)


@app.command("history")
@cli_command()
def history_command(
    config: AuditConfig,
    limit: Annotated[int, typer.Option("--limit", min=1, help="How many runs, newest first.")] = 20,
    output_format: Annotated[HistoryFormat, typer.Option(
        "--format", case_sensitive=False, help="table or json.")] = HistoryFormat.TABLE,
    check: Annotated[bool, typer.Option(
        "--check", help="Run SQLite's integrity check on the history file: ok, or its problems (exit 1).")] = False,
    applied: Annotated[bool, typer.Option(
        "--applied", help="List the changes `audit apply` made (who, what, when, outcome) instead of runs.")] = False,
) -> None:
    """List recent audit runs with their totals (or, with --applied, the changes applied)."""
    from auditor.history.store import History, check_history, history_path

    path = history_path(config)
    if check:
        problems = check_history(path)
        for problem in problems:
            typer.echo(problem)
        if problems:
            raise AuditorError(f"the history database {path} is damaged: the next `audit run` moves it aside "
                               "and starts a new one")
        typer.echo("ok")
        return
    if not path.exists():
        raise ConfigError(f"no history database at {path} (history.path): run `audit run` first")
    with History(path, reading=True) as history:
        if applied:
            _print_applied(history.applied(limit=limit), output_format)
            return
        runs = history.runs(limit=limit)
    if output_format is HistoryFormat.JSON:
        typer.echo(json.dumps([
            {"id": r.id, "started_at": r.started_at.isoformat(), "window_start": r.window_start.isoformat(),
             "window_end": r.window_end.isoformat(), "regions": list(r.regions), "accounts": list(r.accounts),
             "endpoints": r.endpoints, "findings": r.findings, "monthly_cost_usd": r.monthly_cost_usd,
             "monthly_savings_usd": r.monthly_savings_usd, "errors": list(r.errors), "failed": r.fatal,
             "status": r.status}
            for r in runs
        ], indent=2))
        return
    if not runs:
        typer.echo("No runs recorded yet.")
        return
    typer.echo(f"{'id':>5}  {'started (UTC)':16}  {'regions':24}  {'endpoints':>9}  {'findings':>8}  "
               f"{'spend/month':>13}  {'to save/month':>13}  errors")
    for r in runs:
        typer.echo(f"{r.id:>5}  {r.started_at.strftime('%Y-%m-%d %H:%M'):16}  {','.join(r.regions)[:24]:24}  "
                   f"{r.endpoints:>9}  {r.findings:>8}  {r.monthly_cost_usd:>13,.2f}  {r.monthly_savings_usd:>13,.2f}  "
                   f"{len(r.errors)}{'' if r.status == 'ok' else f' ({r.status})'}")


def _applied_resource(change: AppliedChange) -> dict[str, Any]:
    """What an applied plan changed, as its stored plan names it (the JSON document's `resource`)."""
    stated = change.plan.get("resource")
    if isinstance(stated, dict):
        return stated
    return {"kind": "", "type": "", "name": change.endpoint, "account_id": change.account_id, "region": change.region}


def _print_applied(changes: list[AppliedChange], output_format: HistoryFormat) -> None:
    if output_format is HistoryFormat.JSON:
        typer.echo(json.dumps([
            {"id": c.id, "plan_id": c.plan_id, "resource": _applied_resource(c), "variant": c.variant,
             "caller": c.caller, "started_at": c.started_at.isoformat(),
             "finished_at": c.finished_at.isoformat(), "outcome": c.outcome, "message": c.message,
             "previous_config": c.previous_config, "new_config": c.new_config,
             "monthly_savings_usd": c.monthly_savings_usd, "calls": list(c.calls),
             "verified_run_id": c.verified_run_id,
             "verified_at": c.verified_at.isoformat() if c.verified_at else None, "steps": list(c.steps),
             "cleaned_at": c.cleaned_at.isoformat() if c.cleaned_at else None}
            for c in changes
        ], indent=2))
        return
    if not changes:
        typer.echo("No changes applied yet.")
        return
    typer.echo(f"{'started (UTC)':16}  {'plan':16}  {'resource / variant':36}  {'outcome':11}  {'verified':>8}  "
               f"{'saves/month':>11}  by")
    for c in changes:
        target = one_line(f"{c.endpoint} / {c.variant or '-'}")[:36]
        verified = f"run {c.verified_run_id}" if c.verified_run_id else "-"
        typer.echo(f"{c.started_at.strftime('%Y-%m-%d %H:%M'):16}  {one_line(c.plan_id)[:16]:16}  {target:36}  "
                   f"{c.outcome:11}  {verified:>8}  {c.monthly_savings_usd:>11,.2f}  {one_line(c.caller)}")


@app.command("apply")
@cli_command()
def apply_command(
    plan_id: Annotated[str | None, typer.Argument(help="The plan's id (audit plans lists them).")] = None,
    *,
    config: AuditConfig,
    yes: Annotated[bool, typer.Option(
        "--yes", help="Make the calls. Without it: a dry run that prints them and the guards' verdict.")] = False,
    option: Annotated[int, typer.Option(
        "--option", min=0, help="Apply the plan's Nth alternative (1 = the first in its `alternatives`) instead of "
                                "its proposed option (0).")] = 0,
    cleanup: Annotated[bool, typer.Option(
        "--cleanup", help="Instead of a plan: delete the rollback alarms of verified (or rolled back) changes and "
                          "register again the scalable targets an interrupted apply left deregistered; a dry run "
                          "unless --yes.")] = False,
    load_tested: Annotated[bool, typer.Option(
        "--load-tested", help="The load test the plan's risk asks for was run and passed: apply it (the journal "
                              "records that you said so; [apply] max_risk and every other guard still hold).")] = False,
) -> None:
    """Apply one stored plan to its resource, guarded ([apply]); a dry run unless --yes."""
    from auditor.act.apply import apply_plan, cleanup_lines, dry_run_lines
    from auditor.act.plan import ApplyInterrupted, load_plan

    if cleanup:
        if plan_id is not None:
            raise ConfigError("audit apply --cleanup takes no plan id")
        for line in cleanup_lines(config, yes=yes):
            typer.echo(line)
        return
    if plan_id is None:
        raise ConfigError("audit apply needs a plan id (audit plans lists them), or --cleanup")
    plan = load_plan(config, plan_id)
    for line in dry_run_lines(plan, option):
        typer.echo(line)
    try:
        result = apply_plan(config, plan, yes=yes, option=option, load_tested=load_tested)
    except ApplyInterrupted as exc:
        # Stopped by a signal: the journal says what was made; exit as a stopped process does.
        raise EndedBySignal([str(exc)], exc.signal_name) from None
    for note in result.notes:
        typer.echo(note, err=True)
    typer.echo(result.message)


@app.command("weekly")
@cli_command()
def weekly_command(
    config: AuditConfig,
    week: Annotated[str | None, typer.Option("--week", help="ISO week, e.g. 2026-W48 (default: this week).")] = None,
    email: Annotated[bool, typer.Option(
        "--email/--no-email", help="Send the digest as configured in [email].")] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", help="Write the digest (HTML) to this file. With no --output, --email or --email-to-file: "
                         "print it as text.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Send even if this week's digest was sent already.")] = False,
    email_to_file: Annotated[Path | None, typer.Option(
        "--email-to-file", help="Write the digest email (.eml) here instead of sending it.")] = None,
    chat: Annotated[bool, typer.Option(
        "--chat/--no-chat", help="Post the digest's summary to the Slack / Teams webhooks of [chat].")] = False,
) -> None:
    """Build the weekly digest from the audit history; send it at most once a week."""
    from auditor.tasks.weekly import weekly_digest

    if chat:
        from auditor.deliver.chat import check_chat_config

        check_chat_config(config.chat)
    result = weekly_digest(config, week=week, email=email, output=output, force=force,
                           email_to_file=email_to_file, chat=chat)
    if result.text is not None:  # the digest on stdout, what was done on stderr
        typer.echo(result.text, nl=False)
        typer.echo(result.message, err=True)
    else:
        typer.echo(result.message)


@app.command("config")
@cli_command(context_line=False)  # the settings it prints name the file and the history themselves
def config_command(
    config: AuditConfig,
    region: Annotated[list[str] | None, typer.Option(
        "--region", metavar="REGION", help="As `audit run --region`: shown as the flag's.")] = None,
    lookback_days: Annotated[int | None, typer.Option(
        "--lookback-days", help="As `audit run --lookback-days`.")] = None,
) -> None:
    """Print the effective settings, each with its source (default, file, flag, env); secrets masked."""
    from auditor.config_view import config_lines

    for line in config_lines(config.with_overrides(region, lookback_days)):
        typer.echo(line)


@app.command("schedule")
@cli_command()
def schedule_command(
    config: AuditConfig,
) -> None:
    """Run the nightly audit and the weekly digest on the [schedule], in the foreground."""
    from auditor.tasks.scheduler import run_scheduler

    run_scheduler(config)


@app.command("send-outbox")
@cli_command()
def send_outbox_command(
    config: AuditConfig,
) -> None:
    """Send the reports and chat posts that could not be sent earlier (saved in the outbox)."""
    from auditor.deliver.channel import Channel
    from auditor.deliver.chat import ChatChannel
    from auditor.deliver.mail import MailChannel, outbox_of

    outbox = outbox_of(config.email)
    # Mail last: its line is always printed, even when nothing was sent.
    channels: tuple[Channel[Any], ...] = (ChatChannel(config.chat), MailChannel(config.email))
    sent: list[int] = []
    errors: list[str] = []
    for channel in channels:
        # A channel without settings (a chat-only setup's mail) is drained only when some of its messages wait.
        if not channel.configured and not outbox.waiting(channel):
            sent.append(0)
            continue
        channel.check()
        drained = outbox.drain(channel)
        sent.append(drained.sent)
        errors += drained.errors
    for done, count in zip(channels, sent, strict=True):
        if count or done is channels[-1]:
            typer.echo(f"{done.drained_line(count)} from {outbox.directory}", err=True)
    if errors:
        raise ProblemLines([f"{error}; left in the outbox" for error in errors])


plans_app = typer.Typer(help="The latest run's plans (from the history database): list them, or show one's "
                        "change as AWS CLI commands, CloudFormation, Terraform or JSON requests.",
                        no_args_is_help=False, invoke_without_command=True, rich_markup_mode=None)
app.add_typer(plans_app, name="plans")


class ChangeFormat(enum.StrEnum):
    CLI = "cli"
    CLOUDFORMATION = "cloudformation"
    TERRAFORM = "terraform"
    JSON = "json"


def _history_for_plans(config: AuditConfig) -> Path:
    from auditor.history.store import history_path

    path = history_path(config)
    if not path.exists():
        raise ConfigError(f"no history database at {path} (history.path): run `audit run` first")
    return path


@plans_app.callback()
def plans_command(
    ctx: typer.Context,
    config_path: ConfigOption = None,
    output_format: Annotated[HistoryFormat, typer.Option(
        "--format", case_sensitive=False, help="table or json.")] = HistoryFormat.TABLE,
    max_risk: Annotated[RiskLevel | None, typer.Option(
        "--max-risk", case_sensitive=False,
        help="List only plans at this risk or lower (low, medium, high; not assessed counts as medium).")] = None,
) -> None:
    """List the latest run's plans, the largest saving first: id, risk, saving and what to change."""
    # The config is read by the command that runs: this list, or a subcommand (which has its --config).
    if ctx.invoked_subcommand is None:
        list_plans(config_path=config_path, output_format=output_format, max_risk=max_risk)


@cli_command()
def list_plans(*, config: AuditConfig, output_format: HistoryFormat, max_risk: RiskLevel | None) -> None:
    """`audit plans` with no subcommand."""
    from auditor.history.store import History

    with History(_history_for_plans(config), reading=True) as history:
        plans = history.latest_plans()
    # Biggest money first, whatever order an older run stored them in.
    plans.sort(key=lambda p: -float(p.get("monthly_savings_usd") or 0.0))
    if max_risk is not None:
        plans = [p for p in plans if _stored_risk_rank(p) <= max_risk.rank]
    if output_format is HistoryFormat.JSON:
        typer.echo(json.dumps(plans, indent=2))
        return
    if not plans:
        typer.echo("No plans in the latest run.")
        return
    from auditor.report.change_text import plan_line
    from auditor.report.views import included_plans

    included = included_plans(plans)
    typer.echo(f"{'id':10}  {'risk':6}  {'to save/month':>13}  {'change':6}  what")
    for plan in plans:
        typer.echo(plan_line(plan, included.get(str(plan.get("id") or ""))))


def _stored_risk_rank(plan: dict[str, Any]) -> int:
    """A stored plan's risk rank (low 0, medium 1, high 2); not assessed counts as medium."""
    level = (plan.get("risk") or {}).get("level")
    return RiskLevel(level).rank if level in set(RiskLevel) else RiskLevel.MEDIUM.rank


@plans_app.command("show")
@cli_command()
def plans_show_command(
    plan_id: Annotated[str, typer.Argument(help="The plan's id (from `audit plans`).")],
    as_: Annotated[ChangeFormat, typer.Option(
        "--as", case_sensitive=False, help="cli, cloudformation, terraform or json.")] = ChangeFormat.CLI,
    *,
    config: AuditConfig,
) -> None:
    """Print one plan's change: AWS CLI commands, a CloudFormation or Terraform snippet, or JSON requests.
    A new endpoint config gets the tags of the config it copies, read now (ListTags)."""
    from auditor.history.store import History
    from auditor.report.change_text import copied_config, render_change

    with History(_history_for_plans(config), reading=True) as history:
        plan = history.plan(plan_id)
    if plan is None:
        raise AuditorError(f"no plan {one_line(plan_id)!r} in the history database; "
                           "`audit plans` lists the latest run's plans")
    copied_tags = None
    source = copied_config(plan)
    if source is not None and as_ is not ChangeFormat.JSON:
        from auditor.kinds.endpoints.config_tags import read_copied_tags

        resource = plan.get("resource") or {}
        copied_tags = read_copied_tags(config, str(resource.get("account_id") or ""),
                                       str(resource.get("region") or ""), source)
    typer.echo(render_change(plan, as_.value, copied_tags), nl=False)


prices_app = typer.Typer(help="The price cache: refresh it from AWS's Price List, or import an offer file.",
                         no_args_is_help=True, rich_markup_mode=None)
app.add_typer(prices_app, name="prices")


@prices_app.command("update")
@cli_command()
def prices_update_command(
    config: AuditConfig,
    region: Annotated[list[str] | None, typer.Option(
        "--region", metavar="REGION", help="Region to price; repeat for several (default: aws.regions).")] = None,
) -> None:
    """Read SageMaker prices from the Price List API (pricing:GetProducts) into the price cache."""
    from auditor.tasks.prices import update_prices

    regions = tuple(region) if region else config.aws.regions
    stored = update_prices(config, regions, datetime.now(UTC).date())
    for line in stored.lines("the AWS Price List API"):
        typer.echo(line)


@prices_app.command("import")
@cli_command()
def prices_import_command(
    file: Annotated[Path, typer.Argument(help="AWS's offer file for AmazonSageMaker (JSON or CSV).")],
    config: AuditConfig,
) -> None:
    """Import AWS's bulk offer file for SageMaker (no API access needed) into the price cache."""
    from auditor.tasks.prices import import_prices

    stored = import_prices(config, file, datetime.now(UTC).date())
    for line in stored.lines(f"the offer file {file.name}"):
        typer.echo(line)


@prices_app.command("url")
@cli_command()
def prices_url_command(
    config: AuditConfig,
    region: Annotated[list[str] | None, typer.Option(
        "--region", metavar="REGION",
        help="Region whose offer file to locate; repeat for several (default: aws.regions).")] = None,
    file_format: Annotated[str, typer.Option("--file-format", help="json or csv.")] = "json",
) -> None:
    """Print where AWS's offer file for SageMaker can be downloaded, per region (for `prices import`
    on a machine without access to the pricing API)."""
    import botocore.exceptions

    from auditor.collect.pricing import offer_file_urls
    from auditor.collect.session import describe_client_error
    from auditor.tasks.prices import pricing_client

    file_format = file_format.lower()
    if file_format not in ("json", "csv"):
        raise ConfigError(f"--file-format must be json or csv, got {file_format!r}")
    regions = tuple(region) if region else config.aws.regions
    client = pricing_client(config)
    try:
        urls = offer_file_urls(client, regions, datetime.now(UTC), file_format)
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        problem = describe_client_error(exc, "pricing", "ListPriceLists", config.pricing.api_region)
        raise AwsAccessError(problem) from None
    for name in regions:
        typer.echo(f"{name}: {urls[name]}" if name in urls else f"{name}: no SageMaker offer file listed")


COMMANDS_GROUP = "sagemaker_auditor.commands"


def add_plugin_commands(target: typer.Typer) -> None:
    """Commands other packages add through the entry-point group `sagemaker_auditor.commands`: each
    entry point is a function given the app (the emulator's `audit demo` and `audit emulator`, from
    the same distribution). The auditor never imports those packages by name."""
    for entry in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        try:
            register = entry.load()
        except ImportError as exc:
            # Said on every run, and the auditor's own commands still work: a broken plug-in never
            # takes `audit run` down with it.
            typer.echo(one_line(f"error: the commands of {entry.value} ({COMMANDS_GROUP}) cannot be loaded: {exc}"),
                       err=True)
            continue
        register(target)


add_plugin_commands(app)


def main() -> None:
    """The console script. A region stopped by the deadline or a signal may leave threads blocked
    in calls to an endpoint that never answers (and start more while they unwind); once
    everything is written and flushed, the process ends without waiting for them."""
    try:
        app()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if any(t.is_alive() for t in threading.enumerate() if t is not threading.main_thread()):
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        raise


if __name__ == "__main__":  # pragma: no cover
    main()
