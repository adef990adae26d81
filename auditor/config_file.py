"""Reading auditor.toml: every section against its dataclass (the core's in auditor/config.py, each
kind's own in its package) and every `[rules.<id>]` table against its rule's own settings class,
each key typed and bounded when read, then the checks that span keys. One error line, naming the
key; no traceback for a bad file. The sections and rules come from the registry
(auditor/kinds/registry.py), so this module sits above the kinds.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from auditor import schema
from auditor.config import SECTIONS, AuditConfig, KindsConfig, RulesConfig, check_config, default_min_days
from auditor.errors import ConfigError
from auditor.kinds.registry import CONFIG_SECTIONS, configurable_rules

DEFAULT_CONFIG_PATH = Path("auditor.toml")
# A name users give the file that the tool does not read: its presence alone is said (config_notices).
MISTAKEN_CONFIG_PATH = Path("audit.toml")
CONTEXT_PREFIX = "using "  # the stderr line naming the config file and history in use


def load_config(path: Path | None) -> AuditConfig:
    """Read `path`, else ./auditor.toml if present, else the defaults."""
    if path is None:
        if not DEFAULT_CONFIG_PATH.exists():
            return AuditConfig()
        path = DEFAULT_CONFIG_PATH
    try:
        raw = tomllib.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text (byte {exc.start + 1} is not)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    return parse_config(raw, source=str(path))


def config_notices(path: Path | None, config: AuditConfig) -> list[str]:
    """The lines `audit` says on stderr about its context: a config file the tool does not read,
    and which config file and history are in use when they are not the defaults."""
    notices = []
    if path is None and MISTAKEN_CONFIG_PATH.exists() and not DEFAULT_CONFIG_PATH.exists():
        notices.append(f"warning: ./{MISTAKEN_CONFIG_PATH} is not read (the config file is ./{DEFAULT_CONFIG_PATH}, "
                       f"or --config {MISTAKEN_CONFIG_PATH}): using the defaults")
    context = []
    if path is not None and path != DEFAULT_CONFIG_PATH:
        context.append(f"config {path}")
    if config.history.path:
        context.append(f"history {Path(config.history.path).expanduser()}")
    if context:
        notices.append(f"{CONTEXT_PREFIX}{', '.join(context)}")
    return notices


def parse_config(raw: dict[str, Any], source: str = "<config>") -> AuditConfig:
    sections: dict[str, Any] = {}
    kinds: dict[str, Any] = {}
    explicit: set[str] = set()
    for section_name, value in raw.items():
        if section_name == "rules":
            sections["rules"] = _parse_rules(value, source)
            continue
        if section_name not in CONFIG_SECTIONS:
            raise ConfigError(f"{source}: unknown section [{schema.quote(section_name)[1:-1]}] "
                              f"(known: {', '.join(CONFIG_SECTIONS)})")
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: [{section_name}] must be a table")
        table = schema.read_table(CONFIG_SECTIONS[section_name], value, section_name, source)
        # A kind's own section goes with the kinds'; the core's each have a field.
        (sections if section_name in SECTIONS else kinds)[section_name] = table
        explicit.update(f"{section_name}.{key}" for key in value)
    config = default_min_days(AuditConfig(**sections, kinds=KindsConfig(tuple(kinds.items())), source=source,
                                          explicit=frozenset(explicit)))
    check_config(config)
    return config


def _parse_rules(raw: Any, source: str) -> RulesConfig:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: [rules] must be a table of [rules.<rule-id>] tables")
    known = {r.id: r for r in configurable_rules()}
    rules: dict[str, Any] = {}
    for rule_id, values in raw.items():
        if rule_id not in known:
            raise ConfigError(f"{source}: unknown rule [rules.{schema.quote(rule_id)[1:-1]}] "
                              f"(known: {', '.join(sorted(known))})")
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: [rules.{rule_id}] must be a table")
        rules[rule_id] = schema.read_table(known[rule_id].settings, values, f"rules.{rule_id}", source)
    return RulesConfig(tuple(rules.items()))
