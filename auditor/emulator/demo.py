"""`audit demo`: the whole audit against a local emulator seeded with the demo fleet."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

import typer

from auditor.config import AuditConfig, AwsConfig, EmailConfig
from auditor.deliver.mail import write_messages
from auditor.emulator.fleet import demo_fleet, demo_jobs, seed_fleet, seed_jobs
from auditor.emulator.hyperpod import demo_clusters, seed_hyperpod
from auditor.emulator.server import Emulator
from auditor.emulator.workspaces import demo_notebooks, demo_processing, seed_workspaces
from auditor.files import write_atomic
from auditor.report.change_text import plans_text
from auditor.report.document import plan_to_dict
from auditor.report.render import OutputFormat, render
from auditor.tasks.audit import execute_audit

DEMO_SENDER = "sagemaker-auditor@example.com"
DEMO_RECIPIENTS = ("ml-platform@example.com", "finops@example.com")


def run_demo(output_dir: Path, now: datetime) -> None:
    started = time.monotonic()
    config = AuditConfig(aws=AwsConfig(regions=("us-east-1",)), source="demo")
    with Emulator() as emulator:
        typer.echo(f"local AWS emulator on {emulator.url}", err=True)
        fleet = demo_fleet()
        seed_fleet(emulator, fleet, now=now, lookback_days=config.aws.lookback_days)
        training, transform = demo_jobs()
        seed_jobs(emulator, training, transform, now=now)
        notebooks, processing = demo_notebooks(), demo_processing()
        seed_workspaces(emulator, notebooks, processing, now=now)
        clusters = demo_clusters()
        seed_hyperpod(emulator, clusters, now=now, lookback_days=config.aws.lookback_days)
        typer.echo(f"seeded {len(fleet)} endpoints with {config.aws.lookback_days} days of metrics, "
                   f"{len(training)} training, {len(transform)} transform and {len(processing)} processing jobs, "
                   f"{len(notebooks)} notebook instances, {len(clusters)} HyperPod clusters", err=True)
        with emulator.environment():
            outcome = execute_audit(config, now=now)
    report = outcome.report

    output_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "html": output_dir / "report.html",
        "json": output_dir / "report.json",
        "eml": output_dir / "report.eml",
        "plans": output_dir / "plans.txt",
    }
    write_atomic(paths["html"], render(report, OutputFormat.HTML))
    write_atomic(paths["json"], render(report, OutputFormat.JSON))
    # What `audit run --email-to-file` writes: the email it would send.
    write_messages(report, EmailConfig(sender=DEMO_SENDER, recipients=DEMO_RECIPIENTS), paths["eml"])
    # Each plan's change as AWS CLI commands (`audit plans show ID` prints one after `audit run`).
    write_atomic(paths["plans"], plans_text([plan_to_dict(p) for p in report.plans]))

    typer.echo(render(report, OutputFormat.TABLE), nl=False)
    for kind, path in paths.items():
        typer.echo(f"{kind:>4}: {path}")
    typer.echo(f"demo finished in {time.monotonic() - started:.1f} s", err=True)
