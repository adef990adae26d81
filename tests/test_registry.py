"""The rule registry is the one place a rule is defined: the config, the tags, the rule table
(docs/rules.md) and the config reference (docs/configuration.md) all follow it."""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import fields, replace
from pathlib import Path

import pytest

from auditor.analyse.rules.base import Phase, settings_of
from auditor.config import AuditConfig
from auditor.config_file import parse_config
from auditor.errors import ConfigError
from auditor.kinds.endpoints.control import apply_skips, config_for_endpoint
from auditor.kinds.registry import BY_ID, CONFIG_SECTIONS, KINDS, REGISTRY, configurable_rules
from helpers import endpoint

DOCS = Path(__file__).parent.parent / "docs"
KINDS_DIR = Path(__file__).parent.parent / "auditor" / "kinds"


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_every_rule_module_defines_one_rule_with_its_metadata() -> None:
    modules = {p.stem for p in KINDS_DIR.glob("*/rules/*.py")} - {"__init__"}
    assert {r.id.replace("-", "_") for r in REGISTRY} == modules
    for rule in REGISTRY:
        assert rule.title and rule.remediation and (rule.judges or rule.resource_type), rule.id
        assert rule.docs.startswith("https://docs.aws.amazon.com/"), rule.id
    assert [r.id for r in REGISTRY if r.phase is Phase.GATE] == ["insufficient-data", "not-in-service"]


def test_each_kind_lists_the_rules_of_its_own_package_and_the_registry_joins_them() -> None:
    for kind in KINDS:
        package = KINDS_DIR / kind.key / "rules"
        modules = {p.stem for p in package.glob("*.py")} - {"__init__"}
        assert {r.id.replace("-", "_") for r in kind.rules} == modules, kind.key
    assert sorted(r.id for k in KINDS for r in k.rules) == [r.id for r in REGISTRY]


def test_the_kinds_own_config_sections_are_read_like_the_cores() -> None:
    from auditor.kinds.hyperpod.settings import HyperPodConfig
    from auditor.kinds.jobs.settings import JobsConfig

    assert {name for k in KINDS for name in k.settings} == {"jobs", "workspaces", "hyperpod"}
    assert all(CONFIG_SECTIONS[name] is cls for k in KINDS for name, cls in k.settings.items())
    assert JobsConfig.of(AuditConfig()) == JobsConfig()  # nothing configured: the defaults
    config = parse_config({"jobs": {"min_savings_usd": 5}, "hyperpod": {"enabled": True}})
    assert JobsConfig.of(config).min_savings_usd == 5 and HyperPodConfig.of(config) == HyperPodConfig()
    assert parse_config({"hyperpod": {"enabled": True}}) == AuditConfig(source="<config>")  # defaults restated
    with pytest.raises(ConfigError, match=r"^<config>: jobs.transform_min_runs must be .*, got 1$"):
        parse_config({"jobs": {"transform_min_runs": 1}})
    with pytest.raises(ConfigError, match=r"unknown key workspaces.notebook \(known: notebooks, studio\)"):
        parse_config({"workspaces": {"notebook": False}})


def test_the_rule_engine_and_the_config_import_no_kind() -> None:
    core = [*(KINDS_DIR.parent / "analyse").rglob("*.py"), KINDS_DIR.parent / "config.py"]
    for path in core:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if m.startswith("auditor.kinds")], path


def test_docs_rule_table_lists_the_registry() -> None:
    listed = set(re.findall(r"^\| `([a-z-]+)` \|", _page("rules.md"), flags=re.MULTILINE))
    assert listed == set(BY_ID)


def test_docs_config_reference_lists_every_rule_with_its_defaults() -> None:
    block = re.search(r"```toml\n(.*?)```", _page("configuration.md"), flags=re.DOTALL)
    assert block is not None
    rules = tomllib.loads(block.group(1))["rules"]
    assert set(rules) == {r.id for r in configurable_rules()}
    for rule_id, values in rules.items():
        defaults = BY_ID[rule_id].settings()
        known = {f.name for f in fields(defaults)}
        for key, value in values.items():
            assert key in known, f"docs [rules.{rule_id}] {key} is not a setting"
            expected = getattr(defaults, key)
            assert (list(expected) if isinstance(expected, tuple) else expected) == value, f"{rule_id}.{key}"
    # ...and the docs' config block is itself a valid config.
    parse_config(tomllib.loads(block.group(1).replace('profile = ""', "").replace('assume_prices_from = ""', "")))


@pytest.mark.parametrize("rule", configurable_rules(), ids=lambda r: r.id)
def test_every_configurable_rule_parses_its_table_and_honours_skip_endpoints(rule) -> None:
    config = parse_config({"rules": {rule.id: {"enabled": False, "skip_endpoints": ["dev-*"]}}})
    assert settings_of(rule, config).enabled is False
    skipped, errors = apply_skips(replace(endpoint("dev-model")), config, REGISTRY)
    assert errors == [] and rule.id in skipped.skipped_rules


@pytest.mark.parametrize("rule", [r for r in configurable_rules() if r.threshold_field], ids=lambda r: r.id)
def test_every_threshold_tag_sets_its_field(rule) -> None:
    tagged = replace(endpoint("ep"), tags={f"auditor:{rule.id}:threshold": "42"})
    config, errors = config_for_endpoint(tagged, AuditConfig(), REGISTRY)
    assert errors == []
    if rule.threshold_field == "thresholds":
        assert config.thresholds.cpu == config.thresholds.memory == 42
    else:
        assert getattr(settings_of(rule, config), rule.threshold_field) == 42


def test_an_unknown_rule_table_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown rule \[rules.idel\] \(known: .*idle"):
        parse_config({"rules": {"idel": {}}})
    with pytest.raises(ConfigError, match="unknown rule"):
        parse_config({"rules": {"not-in-service": {}}})  # a gate always runs: no table


def test_the_import_contract_holds_every_kind_package_apart() -> None:
    """pyproject's layers name every kind package as one independent layer: a kind left out would be
    free to import another kind or to be imported by the core without `make lint` saying so."""
    config = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    kinds_layer = next(layer for layer in contract["layers"] if "auditor.kinds.endpoints" in layer)
    listed = {name.strip() for name in kinds_layer.split("|")}
    packages = {f"auditor.kinds.{p.name}" for p in KINDS_DIR.iterdir() if (p / "__init__.py").exists()}
    assert listed == packages
