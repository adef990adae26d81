"""`audit demo`: the whole audit against a local emulator seeded with the demo fleet, then one of
its plans applied there (auditor_emulator.demo_apply), with the demo's history kept beside its reports."""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import typer

from auditor.config import ApplyConfig, AuditConfig, AwsConfig, EmailConfig, HistoryConfig
from auditor.deliver.mail import write_messages
from auditor.errors import AuditorError
from auditor.files import write_atomic
from auditor.models import AuditReport
from auditor.records import plan_to_dict
from auditor.report.change_text import plans_text
from auditor.report.render import OutputFormat, render, terminal_width, wrap_paragraph
from auditor.tasks.audit import deliver_outcome, execute_audit
from auditor.text import printable
from auditor_emulator.demo_apply import DEMO_APPLY_ROLE, DEPLOYMENT_SECONDS, StoryOutcome, tell_the_action_story
from auditor_emulator.fleet import EndpointSpec, demo_fleet, demo_jobs, seed_fleet, seed_jobs
from auditor_emulator.hyperpod import demo_clusters, seed_hyperpod
from auditor_emulator.server import Emulator
from auditor_emulator.updates import BEHAVIOUR
from auditor_emulator.workspaces import demo_notebooks, demo_processing, seed_workspaces

DEMO_SENDER = "sagemaker-auditor@example.com"
DEMO_RECIPIENTS = ("ml-platform@example.com", "finops@example.com")
HISTORY_NAME = "history.sqlite3"
CONFIG_NAME = "auditor.toml"  # the name `audit` reads in the current directory
_SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")


def run_demo(output_dir: Path, now: datetime) -> None:
    started = time.monotonic()
    output_dir.mkdir(parents=True, exist_ok=True)
    # The history is built beside its place and renamed over it at the end: each demo starts a new
    # one (one applied change, one week), and no half-written one is ever left in its place.
    staging = Path(tempfile.mkdtemp(prefix=".demo-history-", dir=output_dir))
    try:
        story = _run_demo(output_dir, staging / HISTORY_NAME, now)
        move_history(staging / HISTORY_NAME, output_dir / HISTORY_NAME)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _write_demo_config(output_dir, story.plan_id)
    say(f"demo finished in {time.monotonic() - started:.1f} s", err=True)
    if story.problem:
        raise AuditorError(f"the demo's apply story: {story.problem}")


def seed_demo(emulator: Emulator, now: datetime, lookback_days: int) -> tuple[list[EndpointSpec], str]:
    """The demo fleet in `emulator` (endpoints with `lookback_days` of metrics, jobs, notebooks,
    HyperPod clusters), and one line saying what was seeded."""
    fleet = demo_fleet()
    seed_fleet(emulator, fleet, now=now, lookback_days=lookback_days)
    training, transform = demo_jobs()
    seed_jobs(emulator, training, transform, now=now)
    notebooks, processing = demo_notebooks(), demo_processing()
    seed_workspaces(emulator, notebooks, processing, now=now)
    clusters = demo_clusters()
    seed_hyperpod(emulator, clusters, now=now, lookback_days=lookback_days)
    jobs = len(training) + len(transform) + len(processing)
    return fleet, (f"seeded {len(fleet)} endpoints ({lookback_days} days of metrics), {jobs} jobs, "
                   f"{len(notebooks)} notebooks, {len(clusters)} HyperPod clusters")


def say(text: str = "", err: bool = False) -> None:
    """A line of the demo, wrapped between words to the terminal's width (its indent kept)."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    for line in wrap_paragraph(text.strip(" "), terminal_width(), indent) or [""]:
        typer.echo(line, err=err)


def _run_demo(output_dir: Path, history: Path, now: datetime) -> StoryOutcome:
    config = AuditConfig(aws=AwsConfig(regions=("us-east-1",)), history=HistoryConfig(path=str(history)),
                         apply=ApplyConfig(role_arn=DEMO_APPLY_ROLE, wait_minutes=1.0), source="demo")
    with Emulator() as emulator:
        say(f"local AWS emulator on {emulator.url}", err=True)
        fleet, seeded = seed_demo(emulator, now, config.aws.lookback_days)
        say(seeded, err=True)
        with emulator.environment():
            outcome = execute_audit(config, now=now)
            for problem in deliver_outcome(config, outcome).problems:  # the run and its plans, in the history
                typer.echo(f"error: {problem}", err=True)
            report = outcome.report
            _write_reports(output_dir, report)
            saved = BEHAVIOUR.seconds, BEHAVIOUR.fail_instance_types
            Emulator.deployments(seconds=DEPLOYMENT_SECONDS, fail_instance_types=())
            try:
                return tell_the_action_story(config, report, fleet, output_dir, say)
            finally:
                Emulator.deployments(seconds=saved[0], fail_instance_types=tuple(saved[1]))


# The plans the demo's table shows: it prints about 60 lines in all (the report files have every one).
DEMO_PLANS = 3
REPORT_FILES = ("report.html", "report.json", "report.eml", "plans.txt")


def _write_reports(output_dir: Path, report: AuditReport) -> None:
    html, json_path, eml, plans = (output_dir / name for name in REPORT_FILES)
    write_atomic(html, render(report, OutputFormat.HTML))
    write_atomic(json_path, render(report, OutputFormat.JSON))
    # What `audit run --email-to-file` writes: the email it would send.
    write_messages(report, EmailConfig(sender=DEMO_SENDER, recipients=DEMO_RECIPIENTS), eml)
    # Each plan's change as AWS CLI commands (`audit plans show ID` prints one after `audit run`).
    write_atomic(plans, plans_text([plan_to_dict(p) for p in report.plans]))
    typer.echo(render(report, OutputFormat.TABLE, limit=DEMO_PLANS), nl=False)


def move_history(built: Path, target: Path) -> None:
    """The new history over the old, with its SQLite companions: a stale -wal of the old file left
    beside the new one would be applied to it."""
    for suffix in _SQLITE_COMPANIONS:
        source = built.with_name(built.name + suffix)
        beside = target.with_name(target.name + suffix)
        if source.exists():
            os.replace(source, beside)
        else:
            beside.unlink(missing_ok=True)
    os.replace(built, target)


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def serve_demo_fleet(port: int, now: datetime, stop: threading.Event) -> None:
    """`audit emulator`: the emulator on `port` with the demo fleet until `stop` is set, and the
    environment a shell needs to audit it (and apply the plans) with the user's own config."""
    try:
        emulator = Emulator(port)
        emulator.start()
    except OSError as exc:  # the port is taken, or not ours to open
        raise AuditorError(f"cannot start the emulator on port {port}: {exc.strerror or exc}") from None
    try:
        _fleet, seeded = seed_demo(emulator, now, AwsConfig().lookback_days)
        Emulator.deployments(seconds=DEPLOYMENT_SECONDS, fail_instance_types=())
        exports = " ".join(f"{k}={v}" for k, v in emulator.env().items())
        say(f"local AWS emulator on {emulator.url}: {seeded}.")
        say("In another shell, point the AWS SDK at it (dummy credentials), then use your own config:")
        # Commands as they are copied: one line each, never wrapped.
        for line in (f"  export {exports}",
                     "  unset AWS_PROFILE",
                     "  audit run --config auditor.toml      # [aws] regions = [\"us-east-1\"], the fleet's region",
                     "  audit plans --config auditor.toml",
                     "  audit apply ID --config auditor.toml  # with [apply] role_arn = \"" + DEMO_APPLY_ROLE + "\""):
            typer.echo(line)
        say("Ctrl-C stops it (and forgets everything in it).")
        while not stop.wait(0.5):
            pass
    finally:
        emulator.stop()
    say("emulator stopped", err=True)


def _write_demo_config(output_dir: Path, plan_id: str | None) -> None:
    """DIR/auditor.toml: the demo's history, for `audit plans`, `audit history` and `audit weekly`;
    then where the report is and what to try next."""
    history = (output_dir / HISTORY_NAME).resolve()
    config_path = output_dir / CONFIG_NAME
    say()
    say(f"Open {output_dir / REPORT_FILES[0]} (beside it: {', '.join(REPORT_FILES[1:])}).")
    if not printable(str(history)) or _undecodable(str(history)):
        say(f"no {CONFIG_NAME} written: the path of {HISTORY_NAME} cannot be a config value", err=True)
        return
    write_atomic(config_path, (
        "# Written by `audit demo`: its history (two audit runs, their plans, the change it applied).\n"
        "# For audit plans, audit plans show ID, audit history [--applied] and audit weekly (--config this file).\n"
        "# The demo's AWS emulator stopped with the demo: `audit run` or `audit apply` with this file\n"
        "# would use your AWS credentials (or `audit emulator`'s, in the shell it names), and record in this history.\n"
        "[history]\n"
        f"path = {_toml_string(str(history))}\n"))
    shown = shlex.quote(str(config_path))
    say(f"Try next, on the demo's history ({config_path} names it):")
    say(f"  audit plans --config {shown}")
    say(f"  audit plans show {plan_id or 'ID'} --as cli --config {shown}")
    say(f"  audit history --applied --config {shown}")
    say("  audit emulator   # this fleet in a local emulator, for your own config")


def _undecodable(text: str) -> bool:
    """A file name that is not UTF-8 (surrogate escapes): no UTF-8 config file can name it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
