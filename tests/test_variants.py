"""Endpoint configs read whole, end to end against the emulator: a shadow variant (the emulator
takes no ShadowProductionVariants, so the fleet seeder sets them in its state) is discovered,
priced, counted in the totals and judged by its age; a variant left at weight 0 that served
nothing is to be removed, not resized; a config description kept by an older version is
described again rather than read without its shadow variants."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

import pytest

from auditor.catalog import load_catalog
from auditor.collect.config_cache import ConfigCache, MemoryConfigCache
from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.config_file import parse_config
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.pipeline import run_audit
from auditor.report.document import report_to_dict
from auditor_emulator.fleet import ab_leftover_and_shadow_test, seed_fleet
from auditor_emulator.server import ACCOUNT_ID
from conftest import seeded_emulator, utc_now

CATALOG = load_catalog()
C5_XLARGE = round(CATALOG.hourly_price("ml.c5.xlarge", "us-east-1") * 730, 2)
C5_2XLARGE = round(CATALOG.hourly_price("ml.c5.2xlarge", "us-east-1") * 730, 2)


@pytest.fixture(scope="module")
def seeded(emulator, tmp_path_factory) -> Iterator[datetime]:
    now = utc_now()
    with seeded_emulator(emulator, tmp_path_factory.mktemp("home"),
                         lambda emu: seed_fleet(emu, [ab_leftover_and_shadow_test()], now=now)):
        yield now


def audit(now: datetime, config: AuditConfig | None = None, configs: ConfigCache | None = None) -> dict:
    outcome = run_audit(config or AuditConfig(), AwsClients(), now=now, configs=configs)
    return report_to_dict(outcome.report)


def findings(doc: dict) -> dict[tuple[str, str | None], dict]:
    return {(f["rule"], f["variant"]): f for f in doc["findings"]}


def test_a_shadow_variant_is_priced_counted_and_judged_by_its_age(seeded: datetime) -> None:
    doc = audit(seeded)
    (endpoint,) = doc["endpoints"]
    variants = {v["name"]: v for v in endpoint["variants"]}
    shadow = variants["xgb-v5-shadow"]
    assert shadow["shadow"] is True and not variants["xgb-v4"]["shadow"]
    assert shadow["instance_type"] == "ml.c5.xlarge" and shadow["instance_count"] == 1
    assert shadow["monthly_cost_usd"] == C5_XLARGE
    # Its own metrics, under its own VariantName: the copies of live traffic it answered.
    assert shadow["invocations"] > 0 and shadow["utilization"]["cpu"] is not None
    assert doc["summary"]["monthly_cost_usd"] == pytest.approx(2 * C5_XLARGE + C5_2XLARGE, abs=0.02)
    found = findings(doc)
    finding = found[("shadow-test-long-running", "xgb-v5-shadow")]
    assert finding["evidence"]["max_days"] == 14 and 41.9 <= finding["evidence"]["running_days_at_least"] <= 42.1
    rec = finding["recommendation"]
    assert rec["action"] == "end-shadow-test" and rec["monthly_savings_usd"] == C5_XLARGE
    assert rec["advice"] == "end the shadow test (ml.c5.xlarge)"
    # Only the shadow rule judges a shadow variant (it is busy with copies: nothing else to say).
    assert [key for key in found if key[1] == "xgb-v5-shadow"] == [("shadow-test-long-running", "xgb-v5-shadow")]


def test_a_shadow_test_younger_than_max_days_is_no_finding(seeded: datetime) -> None:
    config = parse_config({"rules": {"shadow-test-long-running": {"max_days": 60}}})
    doc = audit(seeded, config)
    assert "shadow-test-long-running" not in {f["rule"] for f in doc["findings"]}
    # Still priced and counted.
    assert doc["summary"]["monthly_cost_usd"] == pytest.approx(2 * C5_XLARGE + C5_2XLARGE, abs=0.02)


def test_a_weight_zero_variant_that_served_nothing_is_to_be_removed(seeded: datetime) -> None:
    doc = audit(seeded)
    found = findings(doc)
    # Removed, not made smaller: no other verdict on the leftover variant.
    assert [key for key in found if key[1] == "xgb-v3"] == [("variant-unused", "xgb-v3")]
    rec = found[("variant-unused", "xgb-v3")]["recommendation"]
    assert rec["action"] == "remove-variant" and rec["advice"] == "remove the variant (ml.c5.2xlarge)"
    assert rec["monthly_savings_usd"] == rec["current_monthly_usd"] == C5_2XLARGE
    assert rec["details"] == {"remaining_variants": ["xgb-v4"]}
    variants = {v["name"]: v for v in doc["endpoints"][0]["variants"]}
    assert variants["xgb-v3"]["weight"] == 0.0 and variants["xgb-v4"]["weight"] == 1.0
    plan = next(p for p in doc["plans"] if p["variant"] == "xgb-v3")
    assert plan["proposed"]["action"] == "remove-variant" and plan["measured"]
    assert plan["monthly_savings_usd"] == C5_2XLARGE


def test_a_config_kept_by_an_older_version_is_described_again(seeded: datetime) -> None:
    configs = MemoryConfigCache()
    # What the previous version kept: the production variants only, and no format.
    configs.put(ACCOUNT_ID, "us-east-1", "credit-risk-config", {
        "ProductionVariants": [{"VariantName": "xgb-v4", "InstanceType": "ml.c5.xlarge", "InitialInstanceCount": 1,
                                "ModelName": "credit-risk-model"}],
        "AsyncInferenceConfig": False,
    })
    doc = audit(seeded, configs=configs)
    assert {v["name"] for v in doc["endpoints"][0]["variants"]} == {"xgb-v4", "xgb-v3", "xgb-v5-shadow"}
    kept = configs.get(ACCOUNT_ID, "us-east-1", "credit-risk-config")
    assert kept is not None and [v["VariantName"] for v in kept["ShadowProductionVariants"]] == ["xgb-v5-shadow"]
    assert kept["ProductionVariants"][1]["InitialVariantWeight"] == 0.0


def test_descriptions_kept_in_the_history_keep_shadows_weights_and_their_format(seeded: datetime, tmp_path) -> None:
    from auditor.history.store import StoredConfigCache

    path = tmp_path / "history.sqlite3"
    first = StoredConfigCache(path)
    described = run_audit(AuditConfig(), AwsClients(), now=seeded, configs=first)
    assert described.report.api_calls["sagemaker:DescribeEndpointConfig"] == 1
    assert first.save() == 1
    again = StoredConfigCache(path)
    outcome = run_audit(AuditConfig(), AwsClients(), now=seeded, configs=again)
    assert "sagemaker:DescribeEndpointConfig" not in outcome.report.api_calls  # read from the history
    variants = {v.name: v for e in ENDPOINTS.section(outcome.report) for v in e.endpoint.variants}
    assert variants["xgb-v5-shadow"].shadow and variants["xgb-v3"].weight == 0.0


def test_reports_say_which_variant_is_the_shadow(seeded: datetime) -> None:
    from auditor.report.render import OutputFormat, render

    report = run_audit(AuditConfig(), AwsClients(), now=seeded).report
    text = render(report, OutputFormat.TEXT)
    assert "1 x ml.c5.xlarge (shadow)" in text
    html = render(report, OutputFormat.HTML)
    assert "1 x ml.c5.xlarge (shadow)" in html


# ---------- variant-unused on hand-made assessments: when a weight-0 variant is not a leftover ----------

def _unused_verdicts(weight: float | None, own: float | None, other: float | None) -> set[str]:
    from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
    from auditor.kinds.endpoints.judge import evaluate_endpoint
    from auditor.kinds.endpoints.models import Variant
    from auditor.models import Resource
    from helpers import endpoint, utilization

    busy = {Resource.CPU: 60.0, Resource.MEMORY: 60.0}
    quiet = {Resource.CPU: 2.0, Resource.MEMORY: 30.0}
    live = Variant("live", "ml.c5.xlarge", 1, weight=1.0)
    left = Variant("left", "ml.c5.xlarge", 1, weight=weight)
    ep = endpoint(variants=(live, left))
    assessment = EndpointAssessment(ep, (
        VariantAssessment(live, CATALOG.shape("ml.c5.xlarge"), utilization(busy if other else quiet, invocations=other),
                          CATALOG.monthly_cost("ml.c5.xlarge", 1, "us-east-1")),
        VariantAssessment(left, CATALOG.shape("ml.c5.xlarge"), utilization(quiet, invocations=own),
                          CATALOG.monthly_cost("ml.c5.xlarge", 1, "us-east-1")),
    ), 60)
    return {f.rule for f in evaluate_endpoint(assessment, AuditConfig()) if f.variant in ("left", None)}


def test_a_weight_zero_variant_is_a_leftover_only_when_silent_beside_a_busy_one() -> None:
    assert _unused_verdicts(0.0, None, 5000.0) == {"variant-unused"}
    assert _unused_verdicts(0.0, 0.0, 5000.0) == {"variant-unused"}
    # Requests that name it (TargetVariant) reach a weight-0 variant: it is live.
    assert "variant-unused" not in _unused_verdicts(0.0, 40.0, 5000.0)
    # Routed traffic, or a weight nobody said: judged like any live variant.
    assert "variant-unused" not in _unused_verdicts(1.0, None, 5000.0)
    assert "variant-unused" not in _unused_verdicts(None, None, 5000.0)
    # Nothing served on the whole endpoint: the endpoint is idle, not one variant.
    assert _unused_verdicts(0.0, None, None) == {"idle"}
