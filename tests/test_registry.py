"""The rule registry is the one place a rule is defined: the config, the tags, the rule table
(docs/rules.md) and the config reference (docs/configuration.md) all follow it."""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields, replace
from pathlib import Path

import pytest

from auditor.analyse.control import apply_skips, config_for_endpoint
from auditor.analyse.rules import BY_ID, REGISTRY, configurable_rules
from auditor.analyse.rules.base import Phase, settings_of
from auditor.config import AuditConfig
from auditor.config_file import parse_config
from auditor.errors import ConfigError
from helpers import endpoint

DOCS = Path(__file__).parent.parent / "docs"
RULES_DIR = Path(__file__).parent.parent / "auditor" / "analyse" / "rules"


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_every_rule_module_defines_one_rule_with_its_metadata() -> None:
    modules = {p.stem for p in RULES_DIR.glob("*.py")} - {"__init__", "base"}
    assert {r.id.replace("-", "_") for r in REGISTRY} == modules
    for rule in REGISTRY:
        assert rule.title and rule.remediation and (rule.judges or rule.resource_type), rule.id
        assert rule.docs.startswith("https://docs.aws.amazon.com/"), rule.id
    assert [r.id for r in REGISTRY if r.phase is Phase.GATE] == ["insufficient-data", "not-in-service"]


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
    skipped, errors = apply_skips(replace(endpoint("dev-model")), config)
    assert errors == [] and rule.id in skipped.skipped_rules


@pytest.mark.parametrize("rule", [r for r in configurable_rules() if r.threshold_field], ids=lambda r: r.id)
def test_every_threshold_tag_sets_its_field(rule) -> None:
    tagged = replace(endpoint("ep"), tags={f"auditor:{rule.id}:threshold": "42"})
    config, errors = config_for_endpoint(tagged, AuditConfig())
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
