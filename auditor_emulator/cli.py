"""The emulator's commands, `audit demo` and `audit emulator`, added to the auditor's CLI through the
entry-point group `sagemaker_auditor.commands` (pyproject.toml), so that the auditor never imports
the emulator. Nothing heavy is imported here: moto loads only when a command runs."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from auditor.cli_frame import cli_command
from auditor.errors import AuditorError
from auditor.signals import on_stop_signals
from auditor.tasks.audit import check_writable


def register(app: typer.Typer) -> None:
    app.command("demo")(cli_command()(demo))
    app.command("emulator")(cli_command()(emulator_command))


def demo(
    output_dir: Annotated[Path, typer.Option("--output-dir", help="Where the report files go.")] = Path("audit-demo"),
) -> None:
    """Run the whole audit against a local AWS emulator seeded with a synthetic fleet."""
    from auditor_emulator.demo import run_demo

    check_writable(output_dir / "report.html", "--output-dir")  # before seeding, not after
    try:
        run_demo(output_dir, now=datetime.now(UTC))
    except OSError as exc:
        raise AuditorError(f"cannot write the demo's reports to {output_dir}: {exc.strerror or exc}") from None


def emulator_command(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Loopback port (0: a free one).")] = 0,
) -> None:
    """Start the bundled AWS emulator with the demo fleet and print the environment that points the AWS SDK
    at it, to try audit run, audit plans and audit apply with your own config before AWS; Ctrl-C stops it."""
    from auditor_emulator.demo import serve_demo_fleet

    stop = threading.Event()
    with on_stop_signals(lambda _name: stop.set()):
        serve_demo_fleet(port, datetime.now(UTC), stop)
