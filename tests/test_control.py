"""Owners' control: skip endpoints and rules by tag or name pattern, override thresholds by tag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.analyse.rules.base import settings_of
from auditor.cli import app
from auditor.config import AuditConfig
from auditor.config_file import parse_config
from auditor.kinds.endpoints.control import apply_skips, config_for_endpoint
from auditor.kinds.registry import BY_ID, REGISTRY
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now
from helpers import endpoint

runner = CliRunner()


def tagged(**tags: str):
    from dataclasses import replace

    return replace(endpoint("svc"), tags=tags)


def test_ignore_tag_skips_the_endpoint() -> None:
    skipped, errors = apply_skips(tagged(**{"auditor:ignore": "true"}), AuditConfig(), REGISTRY)
    assert skipped.skipped_reason == "tag auditor:ignore='true'" and not skipped.skipped_rules and not errors


def test_ignore_tag_with_rule_ids_skips_those_rules() -> None:
    skipped, errors = apply_skips(tagged(**{"auditor:ignore": "idle, no-autoscaling, bogus"}), AuditConfig(), REGISTRY)
    assert skipped.skipped_rules == {"idle", "no-autoscaling"}
    assert [e.message for e in errors] == ["tag auditor:ignore names unknown rule 'bogus': not skipped"]


def test_name_patterns_skip_endpoints_and_rules() -> None:
    config = parse_config({"skip": {"endpoints": ["sv*"]}})
    assert "skip.endpoints" in (apply_skips(tagged(), config, REGISTRY)[0].skipped_reason or "")
    config = parse_config({"rules": {"idle": {"skip_endpoints": ["svc"]}}})
    skipped, _ = apply_skips(tagged(), config, REGISTRY)
    assert skipped.skipped_rules == {"idle"} and "rules.idle.skip_endpoints" in (skipped.skipped_reason or "")


def test_threshold_tags_override_per_rule() -> None:
    config, errors = config_for_endpoint(tagged(**{
        "auditor:underutilized:threshold": "20",
        "auditor:rising-latency:threshold": "25",
        "auditor:idle:threshold": "many",
    }), AuditConfig(), REGISTRY)
    assert config.thresholds.cpu == 20 and config.thresholds.gpu_memory == 20
    assert settings_of(BY_ID["rising-latency"], config).min_rise_percent == 25
    assert settings_of(BY_ID["idle"], config).max_invocations == 0  # unreadable tag: the configured value stays
    assert [e.message for e in errors] == [
        "tag auditor:idle:threshold='many' is not a number: the configured threshold applies"]


@pytest.fixture
def small_fleet(aws):
    seed_fleet(aws, [
        EndpointSpec("quiet-a", (VariantSpec("ml.m5.2xlarge", 1, cpu=Load(2, 0.5), invocations_per_hour=0),),
                     tags={"auditor:ignore": "true"}),
        EndpointSpec("quiet-b", (VariantSpec("ml.m5.2xlarge", 1, cpu=Load(2, 0.5), memory=Load(10, 1),
                                             invocations_per_hour=0),),
                     tags={"auditor:ignore": "idle"}),
        EndpointSpec("dev-sandbox", (VariantSpec("ml.m5.2xlarge", 1, cpu=Load(2, 0.5), invocations_per_hour=0),)),
        EndpointSpec("sparse", (VariantSpec("ml.m5.large", 1, cpu=Load(2, 0.5, 0.2), memory=Load(60, 1),
                                            invocations_per_hour=20),),
                     tags={"auditor:idle:threshold": "10000"}),
        EndpointSpec("sparse-default", (VariantSpec("ml.m5.large", 1, cpu=Load(2, 0.5, 0.2), memory=Load(60, 1),
                                                    invocations_per_hour=20),)),
    ], now=utc_now())
    return aws


def test_skips_and_overrides_through_the_cli(small_fleet, tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text('[skip]\nendpoints = ["dev-*"]\n')
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    rules = {(f["resource"]["name"], f["rule"]) for f in report["findings"]}
    skipped = {s["endpoint"]: s for s in report["skipped"]}
    assert set(skipped) == {"quiet-a", "quiet-b", "dev-sandbox"}
    assert skipped["quiet-a"]["rules"] is None and skipped["quiet-b"]["rules"] == ["idle"]
    assert not any(name in ("quiet-a", "dev-sandbox") for name, _ in rules)
    assert ("quiet-b", "idle") not in rules  # only the idle rule is skipped...
    assert ("quiet-b", "underutilized") in rules  # ...the others still judge it
    # ~6,700 invocations in 14 days: idle only under the endpoint's own threshold of 10,000.
    assert ("sparse", "idle") in rules
    assert not any(name == "sparse-default" for name, _ in rules)
    # Skipped endpoints cost no metric queries.
    assert report["endpoints"][0]["variants"][0]["utilization"]["cpu"] is None
    table = runner.invoke(app, ["run", "--config", str(config), "--all"]).output  # --all: the skipped, each said
    assert "skipped quiet-a" not in table and "skipped us-east-1 quiet-a: tag auditor:ignore='true'" in table
