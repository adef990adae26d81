"""`audit --version` prints the installed package's version and exits 0."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from typer.testing import CliRunner

from auditor.cli import app

ROOT = Path(__file__).parent.parent


def test_version_prints_the_package_version() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.output == f"sagemaker-auditor {version('sagemaker-auditor')}\n"
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version("sagemaker-auditor") == declared


def test_help_still_lists_the_commands() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    assert "--version" in result.output
    for command in ("run", "history", "weekly", "schedule", "send-outbox", "demo"):
        assert command in result.output
