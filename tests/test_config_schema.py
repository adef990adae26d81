"""The schema is the one description of the config: the docs' reference block (docs/configuration.md) and the schema
agree both ways, and every numeric key refuses an out-of-range value with one line naming it."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from auditor import schema
from auditor.analyse.rules.base import RuleSettings
from auditor.cli import app
from auditor.config_file import load_config, parse_config
from auditor.errors import ConfigError
from auditor.kinds.registry import CONFIG_SECTIONS, REGISTRY, configurable_rules

CONFIGURATION = (Path(__file__).parent.parent / "docs" / "configuration.md").read_text(encoding="utf-8")
BASE_KEYS = {k.name for k in schema.keys(RuleSettings)}


def _block() -> str:
    match = re.search(r"```toml\n(.*?)```", CONFIGURATION, flags=re.DOTALL)
    assert match is not None
    return match.group(1)


def _commented_keys(block: str) -> set[str]:
    """Keys shown only in a comment ("# sender = ..."): documented, with no default to show."""
    found: set[str] = set()
    table = ""
    for line in block.splitlines():
        if header := re.match(r"\[([a-z.-]+)\]", line):
            table = header.group(1)
        elif key := re.match(r"# ([a-z_]+) = ", line):
            found.add(f"{table}.{key.group(1)}")
    return found


def _schema() -> dict[str, tuple[type, schema.Key]]:
    """Every key of the config, "aws.regions", "rules.idle.max_invocations", with its class."""
    keys: dict[str, tuple[type, schema.Key]] = {}
    for name, cls in CONFIG_SECTIONS.items():
        keys.update({f"{name}.{k.name}": (cls, k) for k in schema.keys(cls)})
    for rule in configurable_rules():
        keys.update({f"rules.{rule.id}.{k.name}": (rule.settings, k) for k in schema.keys(rule.settings)})
    return keys


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_every_key_in_the_readme_block_is_in_the_schema_with_its_default() -> None:
    block = _block()
    shown = _flatten(tomllib.loads(block))
    keys = _schema()
    for name, value in shown.items():
        assert name in keys, f"docs show {name}, which the schema does not have"
        key = keys[name][1]
        expected = [*key.default] if key.kind is tuple else key.default
        assert (None if key.optional and value == "" else value) == expected, f"docs default of {name}"
    for name in _commented_keys(block):
        assert name in keys and keys[name][1].default in (None, ()), f"docs comment out {name}, which has a default"
    # ...and the block is a config that means the defaults.
    source = "docs/configuration.md"
    assert parse_config(tomllib.loads(block), source=source) == parse_config({}, source=source)


def test_every_schema_key_is_in_the_readme_block() -> None:
    block = _block()
    documented = set(_flatten(tomllib.loads(block))) | _commented_keys(block)
    # enabled and skip_endpoints are shown once, under [rules.underutilized], for every rule.
    common = {f"rules.underutilized.{k}" for k in BASE_KEYS}
    assert common <= documented
    missing = [name for name in _schema()
               if name not in documented and not (name.startswith("rules.") and name.rsplit(".", 1)[1] in BASE_KEYS)]
    assert missing == [], f"keys the docs config block does not show: {missing}"


def test_every_key_has_a_doc_line() -> None:
    for name, (_, key) in _schema().items():
        assert key.spec.doc and "\n" not in key.spec.doc, name


def _out_of_range(key: schema.Key) -> list[float]:
    spec = key.spec
    step = 1 if key.kind is int else 0.5
    values: list[float] = []
    if spec.minimum is not None:
        values.append(spec.minimum - step)
    if spec.above is not None:
        values.append(spec.above)
    if spec.maximum is not None:
        values.append(spec.maximum + step)
    if spec.below is not None:
        values.append(spec.below)
    if spec.multiple_of:
        values.append((spec.minimum or 0) + spec.multiple_of + 1)
    if key.kind is float:
        values += [math.inf, -math.inf, math.nan]
    return [*values, 10**400]  # a TOML integer has no size limit


NUMERIC = [(name, value) for name, (_, key) in _schema().items() if key.kind in (int, float)
           for value in _out_of_range(key)]


def _toml_number(value: float, kind: type) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return str(int(value)) if kind is int else repr(float(value))


def test_every_numeric_key_has_bounds() -> None:
    unbounded = [name for name, (_, key) in _schema().items()
                 if key.kind in (int, float) and not key.spec.numeric_bounds]
    assert unbounded == []


def _write(path: Path, name: str, value: float) -> Path:
    table, key_name = name.rsplit(".", 1)
    kind = _schema()[name][1].kind
    path.write_text(f"[{table}]\n{key_name} = {_toml_number(value, kind)}\n", encoding="utf-8")
    return path


def test_every_out_of_range_value_of_every_numeric_key_is_one_error_naming_it(tmp_path: Path) -> None:
    assert len(NUMERIC) > 100
    for name, value in NUMERIC:
        path = _write(tmp_path / "auditor.toml", name, value)
        with pytest.raises(ConfigError) as refused:
            load_config(path)
        message = str(refused.value)
        assert message.startswith(f"{path}: {name} must ") and "\n" not in message, (name, value, message)


def test_through_the_cli_every_numeric_key_fails_in_one_line(tmp_path: Path) -> None:
    """`audit run --config`: exit 1, one line naming the key, no traceback (one value per key)."""
    runner = CliRunner()
    for name in dict(NUMERIC):
        path = _write(tmp_path / "auditor.toml", name, dict(NUMERIC)[name])
        result = runner.invoke(app, ["run", "--config", str(path)])
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (name, result.output)
        assert len(lines) == 1 and lines[0].startswith(f"error: {path}: {name} "), (name, lines)


@pytest.mark.parametrize("name", sorted(n for n, (_, k) in _schema().items() if k.kind in (int, float)))
def test_the_default_of_every_numeric_key_is_within_its_bounds(name: str) -> None:
    _, key = _schema()[name]
    if key.default is not None:
        assert schema.problem(key, key.default) is None


def test_config_imports_neither_the_rules_nor_delivery() -> None:
    """The import circle (config -> rules -> config, config -> chat -> config) stays gone."""
    import subprocess
    import sys

    code = ("import sys, auditor.config; print(sorted(m for m in sys.modules "
            "if m.startswith(('auditor.analyse', 'auditor.deliver', 'auditor.config_file'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


HOSTILE_TAG_VALUES = ["nan", "-nan", "inf", "-inf", "Infinity", "1e400", "-1e400", "-0", "5e-324", " 42 ", "0x10",
                      "1_000", "", "42\n", "٤٢", "1e308", "-1", "100.0000001", "99.999"]


@pytest.mark.parametrize("rule", [r for r in configurable_rules() if r.threshold_field], ids=lambda r: r.id)
def test_a_threshold_tag_is_obeyed_only_within_the_bounds_of_its_key(rule) -> None:
    from dataclasses import replace

    from auditor.analyse.rules.base import settings_of
    from auditor.config import AuditConfig, ThresholdsConfig
    from auditor.kinds.endpoints.control import config_for_endpoint
    from helpers import endpoint

    for value in HOSTILE_TAG_VALUES:
        tagged = replace(endpoint("svc"), tags={f"auditor:{rule.id}:threshold": value})
        config, errors = config_for_endpoint(tagged, AuditConfig(), REGISTRY)
        if errors:
            assert config == AuditConfig() and len(errors) == 1, (rule.id, value)
            continue
        if rule.threshold_field == "thresholds":
            key, obeyed = schema.key_of(ThresholdsConfig, "cpu"), config.thresholds.cpu
        else:
            key = schema.key_of(rule.settings, rule.threshold_field)
            obeyed = getattr(settings_of(rule, config), rule.threshold_field)
        assert math.isfinite(obeyed) and schema.problem(key, obeyed) is None, (rule.id, value, obeyed)
