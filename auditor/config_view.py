"""`audit config`: the effective settings, each with where its value came from (the default, the
config file, a command-line flag, the environment), secrets masked. A value that may be a secret
(the check of its key says so: an environment variable's name, where a webhook URL may be pasted
by mistake) is shown only when it is a plain variable name; the variables the config names for
secrets are said set or not set, never shown; and every line goes through redact.scrub."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from auditor import schema
from auditor.config import AuditConfig
from auditor.redact import REDACTED, scrub, secret_values
from auditor.text import one_line

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What boto3 reads from the environment that decides which AWS the audit talks to. Their values
# are shown; the credentials themselves only as set or not set.
AWS_SHOWN = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL",
             "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")
AWS_HIDDEN = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


@dataclass(frozen=True)
class Setting:
    key: str  # "aws.regions"
    value: str  # as TOML would write it, or a note in parentheses
    source: str  # default | file <path> | flag --region | env


def _toml(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return schema.quote(value)
    return str(value)


def _shown(key: schema.Key, value: Any) -> str:
    """A value whose key may hold a secret is shown only when it is a variable's name."""
    if key.spec.check is not None and not key.spec.check.echo and value not in (None, (), ""):
        items = value if isinstance(value, tuple) else (value,)
        names = [str(item).rpartition("=")[2].strip() for item in items]
        if not all(ENV_NAME.fullmatch(name) for name in names):
            return REDACTED
    return _toml(value)


def effective_settings(config: AuditConfig, environ: Mapping[str, str] | None = None) -> Iterator[Setting]:
    """Every key of every section and rule, then the environment the audit reads."""
    from auditor.history.store import history_path
    from auditor.kinds.registry import CONFIG_SECTIONS, configurable_rules
    from auditor.pipeline.prices import cache_path

    environ = os.environ if environ is None else environ
    flags = dict(config.flags)
    file = f"file {config.source}"
    for section, cls in CONFIG_SECTIONS.items():
        values: Any = config.section(section, cls)
        for key in schema.keys(cls):
            name = f"{section}.{key.name}"
            value = getattr(values, key.name)
            source = f"flag {flags[name]}" if name in flags else file if name in config.explicit else "default"
            shown = _shown(key, value)
            # The two paths left unset are the user's data directory's: say which.
            if name == "history.path" and value is None:
                shown = f"(unset: {_toml(str(history_path(config)))})"
            elif name == "pricing.cache_path" and not value:
                shown = f"(unset: {_toml(str(cache_path(config)))})"
            yield Setting(name, shown, source)
    for rule in configurable_rules():
        configured = config.rules.get(rule.id)
        defaults = rule.settings()
        for key in schema.keys(rule.settings):
            value = getattr(configured or defaults, key.name)
            changed = configured is not None and value != getattr(defaults, key.name)
            yield Setting(f"rules.{rule.id}.{key.name}", _shown(key, value), file if changed else "default")
    for name in AWS_SHOWN:
        if environ.get(name):
            yield Setting(name, schema.quote(environ[name]), "env")
    for name in AWS_HIDDEN:
        if name in environ:
            yield Setting(name, "(set, not shown)", "env")
    named = [config.email.smtp_password_env, config.chat.slack_webhook_env, config.chat.teams_webhook_env]
    named += [entry.rpartition("=")[2].strip() for entry in (*config.chat.slack_routes, *config.chat.teams_routes)]
    for name in dict.fromkeys(n for n in named if n and ENV_NAME.fullmatch(n)):
        yield Setting(name, "(set, not shown)" if environ.get(name) else "(not set)", "env")


def config_lines(config: AuditConfig, environ: Mapping[str, str] | None = None) -> list[str]:
    """`audit config`'s output: which file, then one line a setting, aligned, secrets cut out."""
    secrets = secret_values(config, environ)
    settings = list(effective_settings(config, environ))
    where = (f"config file: {config.source}" if config.source != "defaults"
             else "config file: none (no ./auditor.toml, no --config): the defaults")
    width = max(len(s.key) for s in settings)
    lines = [where, *(f"{s.key:<{width}}  {s.value}  ({s.source})" for s in settings)]
    return [one_line(scrub(line, secrets)) for line in lines]
