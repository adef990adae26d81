"""The frame every command shares (auditor.cli.cli_command): the config read once; a bad setting is
one `error:` line naming the key, exit 1, with no secret in it; a failure no step put in words is one
line too, never a traceback; and each command line is as declared: every command's --help is the
one typer rendered before the frame existed (tests/data/cli-help.txt)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from auditor.cli import app

runner = CliRunner()
HELP = Path(__file__).parent / "data" / "cli-help.txt"
MARK = "S3CR3T"  # in every piece of the secret: a leak of any piece shows
PASTED_WEBHOOK = f"https://hooks.example.com/services/T{MARK}01/B{MARK}02/token{MARK}03"
# Every command that reads the config, with the arguments it needs to get as far as reading it.
CONFIG_COMMANDS = [
    ("run",), ("history",), ("apply",), ("weekly",), ("config",), ("schedule",), ("send-outbox",), ("plans",),
    ("plans", "show", "p1"), ("prices", "update"), ("prices", "import", "offer.json"), ("prices", "url"),
]


def _command_paths() -> dict[tuple[str, ...], set[str]]:
    """Every command and group, with its options."""
    paths: dict[tuple[str, ...], set[str]] = {}

    def walk(command: typer.core.TyperCommand | typer.core.TyperGroup, path: tuple[str, ...]) -> None:
        paths[path] = {opt for param in command.params for opt in param.opts if opt.startswith("--")}
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return paths


def all_help() -> str:
    """What --help prints for every command and group, at a fixed width."""
    parts = []
    for path in _command_paths():
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100"})
        parts.append(f"===== audit {' '.join(path)} (exit {result.exit_code})\n{result.output}\n")
    return "".join(parts)


def test_every_command_with_a_config_option_is_tested_here() -> None:
    with_config = {path for path, options in _command_paths().items() if "--config" in options}
    assert with_config == {tuple(w for w in command if w not in ("p1", "offer.json")) for command in CONFIG_COMMANDS}


@pytest.mark.parametrize("command", CONFIG_COMMANDS, ids=" ".join)
def test_a_bad_setting_is_one_line_naming_the_key_and_never_the_secret_in_it(command: tuple[str, ...],
                                                                             tmp_path: Path) -> None:
    config = tmp_path / "team.toml"
    config.write_text(f'[chat]\nslack_webhook_env = "{PASTED_WEBHOOK}"\n', encoding="utf-8")
    result = runner.invoke(app, [*command, "--config", str(config)], env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9"})
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.stderr == (f"error: {config}: chat.slack_webhook_env must be the NAME of an environment variable "
                             "(letters, digits, _), not its value\n")
    assert result.stdout == ""
    assert MARK not in result.output and "hooks.example.com" not in result.output


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_output_that_cannot_be_written_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """An OSError no step turned into words (stdout on a full disk): the system's words, exit 1."""
    config = tmp_path / "team.toml"
    config.write_text("[aws]\nlookback_days = 10\n", encoding="utf-8")
    with Path("/dev/full").open("w") as full:
        done = subprocess.run([sys.executable, "-m", "auditor.cli", "config", "--config", str(config)],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert done.stderr == "error: No space left on device\n"


def test_every_command_line_is_as_declared() -> None:
    """The frame gives typer the `--config` option where a command declares its config: nothing else
    changes. After changing a command's options or help on purpose, write the new text with
    `python tests/test_cli_commands.py > tests/data/cli-help.txt` and read the diff."""
    assert all_help() == HELP.read_text(encoding="utf-8")


if __name__ == "__main__":
    sys.stdout.write(all_help())
