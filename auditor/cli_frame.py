"""The frame every command of the CLI runs in (auditor/cli.py, and commands other packages add
through the entry-point group `sagemaker_auditor.commands`): the config read once, and every error
one `error:` line with its exit code, secrets cut."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from auditor.config import AuditConfig
from auditor.config_file import CONTEXT_PREFIX, config_notices, load_config
from auditor.errors import AuditorError, ProblemLines, problem_lines
from auditor.redact import scrub, secret_values
from auditor.report.render import one_line

EXIT_ERROR = 1
EXIT_FINDINGS = 3
EXIT_SIGINT = 130  # 128 + the signal's number, as a shell reports a process the signal stopped
EXIT_SIGTERM = 143


# Every command reads the same config file.
ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="TOML config (default: ./auditor.toml if present).")
]


def read_config(path: Path | None, *, context_line: bool = True) -> AuditConfig:
    """The config file (or the defaults), with what it is said on stderr when it is not the default:
    a file named audit.toml that is not read, and (unless not `context_line`) the file and the history
    in use."""
    config = load_config(path)
    for notice in config_notices(path, config):
        if context_line or not notice.startswith(CONTEXT_PREFIX):
            typer.echo(one_line(notice), err=True)
    return config


def fail(message: str, *more: str, secrets: list[str] | None = None, exit_code: int = EXIT_ERROR) -> typer.Exit:
    """Each problem on its own `error:` line on stderr; the exit for the caller to raise. `secrets`
    (redact.secret_values) are cut out of texts that quote a library."""
    for line in (message, *more):
        # One line each whatever it quotes (a server's message may hold newlines or control characters).
        typer.echo(f"error: {one_line(scrub(line, secrets or []))}", err=True)
    return typer.Exit(exit_code)


class EndedBySignal(ProblemLines):
    """SIGINT or SIGTERM ended the command: its lines, and the exit of a process that signal stopped."""

    def __init__(self, lines: Sequence[str], signal_name: str) -> None:
        super().__init__(tuple(lines))
        self.exit_code = EXIT_SIGTERM if signal_name == "SIGTERM" else EXIT_SIGINT


def os_error_line(exc: OSError) -> str:
    """An OSError that no step turned into a message of its own: the file, and what the system said."""
    what = exc.strerror or str(exc)
    return f"{exc.filename}: {what}" if exc.filename else what


def cli_command(*, context_line: bool = True) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The frame of every command. One that declares `config: AuditConfig` is given the config file
    read once, its notices said on stderr (`read_config`); typer sees the `--config` option where
    `config` is declared, so the command line and --help are as written. Any AuditorError, or an
    OSError no step turned into one, ends the command: one `error:` line per problem and the error's
    exit code, with the config's secrets (redact.secret_values) cut out of every line."""

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        declared = inspect.signature(func, eval_str=True)
        takes_config = "config" in declared.parameters

        @functools.wraps(func)
        def command(**options: Any) -> None:
            secrets: list[str] = []
            try:
                if takes_config:
                    config = read_config(options.pop("config_path"), context_line=context_line)
                    secrets = secret_values(config)
                    options["config"] = config
                func(**options)
            except AuditorError as exc:
                raise fail(*problem_lines(exc), secrets=secrets, exit_code=exc.exit_code) from None
            except OSError as exc:
                raise fail(os_error_line(exc), secrets=secrets) from None

        if takes_config:
            # typer builds the command from the signature and the type hints.
            parameters = [p.replace(name="config_path", annotation=ConfigOption, default=None) if p.name == "config"
                          else p for p in declared.parameters.values()]
            command.__signature__ = declared.replace(parameters=parameters)  # type: ignore[attr-defined]
            command.__annotations__ = {p.name: p.annotation for p in parameters}
        return command

    return decorate
