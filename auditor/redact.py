"""Secrets never reach an output. The webhook URLs and the SMTP password live in environment
variables that the config names; messages are written to name the variable, never its value. This
is the net behind that rule, for text we did not write ourselves (an exception's message from a
library, in an error line or the scheduler's JSON log): every secret, and every long enough piece
of it (a URL's host, a path segment, a token, one line of a value with a newline), is cut out."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

from auditor.config import AuditConfig

REDACTED = "[secret]"
# Where a URL (or any secret) splits into pieces that a library may quote on their own.
_DELIMITERS = re.compile(r"[\s/?&=#:@;,'\"<>()\[\]{}\\]+")
MIN_PIECE_CHARS = 6  # shorter pieces ("https", "hooks") say nothing secret
MIN_SECRET_CHARS = 4  # a shorter secret cannot be cut out of text without cutting words


def secret_values(config: AuditConfig, environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the variables the config names for secrets; and a `*_env` value that is not a
    variable's name at all (a URL pasted into the config) counts as a secret itself."""
    environ = os.environ if environ is None else environ
    names = [config.email.smtp_password_env, config.chat.slack_webhook_env, config.chat.teams_webhook_env]
    names += [entry.rpartition("=")[2].strip() for entry in (*config.chat.slack_routes, *config.chat.teams_routes)]
    values = []
    for name in filter(None, names):
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            values.append(environ.get(name, ""))
        else:
            values.append(name)
    return [v for v in values if len(v.strip()) >= MIN_SECRET_CHARS]


def _pieces(secret: str) -> set[str]:
    pieces = set()
    # As it is, and as a repr() shows it ("\\n" for a newline), which is how exceptions quote values.
    for form in (secret, secret.encode("unicode_escape").decode("ascii")):
        pieces |= {form, form.strip(), *(line.strip() for line in form.splitlines())}
        pieces |= {p for p in _DELIMITERS.split(form) if len(p) >= MIN_PIECE_CHARS and not _plain_word(p)}
    return {p for p in pieces if len(p) >= MIN_SECRET_CHARS}


def _plain_word(piece: str) -> bool:
    """A lowercase word ("services", "workflows", "triggers") is the URL's grammar, not its secret,
    and cutting it would cut the same word out of every message."""
    return piece.isalpha() and piece.islower()


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret, and every piece of one, replaced by [secret]; longest first, so a
    whole URL goes as one."""
    pieces = sorted({p for s in secrets for p in _pieces(s)}, key=len, reverse=True)
    for piece in pieces:
        text = text.replace(piece, REDACTED)
    return text


def scrub_fields(fields: dict[str, Any], secrets: list[str]) -> dict[str, Any]:
    """`scrub` on every text in a log line's fields, lists and nested fields included."""
    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return scrub(value, secrets)
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return value
    return {k: clean(v) for k, v in fields.items()}
