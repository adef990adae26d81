"""A delete or idle verdict needs recommend.min_idle_days (7) of data whatever the lookback (issue 24):
through the CLI against the emulator, an endpoint busy on most days and quiet over the last two is
not judged idle on `--lookback-days 2`; an endpoint idle all along is, once the window holds 7 days."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import AuditConfig
from auditor.config_file import parse_config
from auditor.errors import ConfigError
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import seeded_emulator, utc_now

runner = CliRunner()


def quiet_lately(now: datetime) -> EndpointSpec:
    """Busy every day but the (up to three) calendar days the last 48 hours touch."""
    quiet = {(now - timedelta(hours=h)).weekday() for h in range(0, 49)}
    busy_days = tuple(d for d in range(7) if d not in quiet)
    return EndpointSpec("quiet-lately", (VariantSpec("ml.m5.xlarge", 1, cpu=Load(40, 5), memory=Load(30, 1),
                                                     invocations_per_hour=3000.0, traffic_days=busy_days,
                                                     quiet_cpu=1.0),))


def idle_always() -> EndpointSpec:
    return EndpointSpec("idle-always", (VariantSpec("ml.m5.xlarge", 1, cpu=Load(1, 0.2), memory=Load(30, 1),
                                                    invocations_per_hour=0.0),))


@pytest.fixture(scope="module")
def home(emulator, tmp_path_factory) -> Iterator[Path]:
    now = utc_now()
    with seeded_emulator(emulator, tmp_path_factory.mktemp("home"),
                         lambda emu: seed_fleet(emu, [quiet_lately(now), idle_always()], now=now)) as path:
        yield path


def audit(home: Path, *flags: str) -> dict:
    out = home / f"report{'-'.join(flags)}.json"
    result = runner.invoke(app, ["run", "--no-history", "--format", "json", "--output", str(out), *flags])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def delete_plans(report: dict) -> set[str]:
    return {p["resource"]["name"] for p in report["plans"] if p["proposed"]["action"] == "delete"}


def test_two_days_of_quiet_is_no_delete(home: Path) -> None:
    report = audit(home, "--lookback-days", "2")
    assert delete_plans(report) == set()
    assert not [f for f in report["findings"] if f["rule"] == "idle"]
    for name in ("quiet-lately", "idle-always"):
        notes = [f for f in report["findings"] if f["resource"]["name"] == name]
        assert [f["rule"] for f in notes] == ["insufficient-data"], notes  # no other verdict either
        assert notes[0]["severity"] == "info" and notes[0]["recommendation"] is None
        assert "needs 7 (recommend.min_idle_days): no verdict yet." in notes[0]["message"]
        assert notes[0]["evidence"]["withheld_rule"] == "idle"


def test_seven_days_of_data_judge_idle_and_the_busy_days_count(home: Path) -> None:
    report = audit(home, "--lookback-days", "7")
    assert delete_plans(report) == {"idle-always"}
    # Busy before: the quiet days are no idle verdict once the window sees the busy ones.
    assert not [f for f in report["findings"] if f["resource"]["name"] == "quiet-lately" and f["rule"] == "idle"]


def test_the_configs_owner_may_lower_it(home: Path) -> None:
    config = home / "lowered.toml"
    config.write_text("[recommend]\nmin_idle_days = 2\n")
    report = audit(home, "--config", str(config), "--lookback-days", "2")
    # What the issue saw: the endpoint busy before is judged idle on its two quiet days.
    assert delete_plans(report) == {"idle-always", "quiet-lately"}


@pytest.mark.parametrize("value", [0, 91, "7"])
def test_min_idle_days_is_typed_and_bounded(value: object) -> None:
    with pytest.raises(ConfigError, match=r"recommend\.min_idle_days"):
        parse_config({"recommend": {"min_idle_days": value}}, source="auditor.toml")
    assert AuditConfig().recommend.min_idle_days == 7
    # Not capped at the lookback (unlike min_days): a short audit withholds the verdict instead.
    assert AuditConfig().with_overrides(lookback_days=2).recommend.min_idle_days == 7


def test_a_weight_zero_variant_needs_min_idle_days_too() -> None:
    from auditor.catalog import load_catalog
    from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
    from auditor.kinds.endpoints.judge import evaluate_endpoint
    from auditor.kinds.endpoints.models import Variant
    from auditor.models import Resource
    from helpers import endpoint, utilization

    catalog = load_catalog()
    live, left = Variant("live", "ml.c5.xlarge", 1, weight=1.0), Variant("left", "ml.c5.xlarge", 1, weight=0.0)

    def verdicts(days: float) -> list:
        assessment = EndpointAssessment(endpoint(variants=(live, left)), tuple(
            VariantAssessment(v, catalog.shape("ml.c5.xlarge"),
                              utilization({Resource.CPU: 60.0 if v is live else 2.0}, days=days,
                                          invocations=5000.0 if v is live else None),
                              catalog.monthly_cost("ml.c5.xlarge", 1, "us-east-1")) for v in (live, left)), 60)
        config = parse_config({"recommend": {"min_days": 3}})  # enough for the other verdicts
        return [(f.rule, f.evidence.get("withheld_rule")) for f in evaluate_endpoint(assessment, config)
                if f.variant == "left"]

    assert verdicts(7.0) == [("variant-unused", None)]
    assert verdicts(6.9) == [("insufficient-data", "variant-unused")]  # and judged no further
    assert verdicts(3.0) == [("insufficient-data", "variant-unused")]


def test_hyperpod_idle_nodes_need_min_idle_days_of_observation() -> None:
    from auditor.catalog import load_catalog
    from auditor.kinds.hyperpod.idle import GroupShrink, HyperPodAssessment
    from auditor.kinds.hyperpod.kind import HyperPodRegion
    from auditor.kinds.hyperpod.models import Cluster, Orchestrator
    from auditor.kinds.hyperpod.rules.hyperpod_idle_nodes import check

    cluster = Cluster("arn:aws:sagemaker:us-east-1:123456789012:cluster/abc", "llm", "us-east-1", "InService", None,
                      Orchestrator.EKS, "arn:aws:eks:us-east-1:123456789012:cluster/e", (), ())

    def findings(window_days: float, observed: int, window: int) -> list:
        shrink = GroupShrink("llm", cluster.arn, "us-east-1", "eval", "ml.g5.8xlarge", 2, ("i-0a", "i-0b"), 1.0,
                             1.0, None, "unpriced here", observed, window)
        region = HyperPodRegion((HyperPodAssessment(cluster, (), None, (shrink,), ()),), 5.0, window_days)
        return list(check(region, load_catalog(), AuditConfig()))

    judged = findings(14.0, 336, 336)
    assert [f.severity.value for f in judged] == ["low"]
    for withheld in (findings(2.0, 48, 48), findings(14.0, 160, 336)):  # a short window; 6.7 days observed
        assert [(f.severity.value, f.recommendation) for f in withheld] == [("info", None)]
        assert "no verdict yet" in withheld[0].message and withheld[0].evidence["min_idle_days"] == 7
