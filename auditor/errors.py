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
