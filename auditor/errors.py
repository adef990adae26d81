"""Errors that end a command with a one-line message and a non-zero exit (never a traceback)."""

from __future__ import annotations


class AuditorError(Exception):
    """Base: the message is what the user sees, on one line."""

    exit_code = 1


class ConfigError(AuditorError):
    """The config file or a command-line option is wrong; the message names the key."""


class AwsAccessError(AuditorError):
    """AWS refused or could not be reached: no credentials, access denied, unknown region."""


class EmulatorUnavailable(AuditorError):
    """The local AWS emulator (the `demo` extra) is not installed."""


class ProblemLines(AuditorError):
    """Several failures of one step (messages, posts): one line each, `error:` line by line on the
    command line; str() joins them for a log that keeps one entry."""

    def __init__(self, lines: list[str] | tuple[str, ...]) -> None:
        super().__init__("; ".join(lines))
        self.lines = tuple(lines)


def problem_lines(error: AuditorError) -> tuple[str, ...]:
    return error.lines if isinstance(error, ProblemLines) else (str(error),)
