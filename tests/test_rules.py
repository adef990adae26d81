"""The endpoint rules on small hand-made assessments."""

from __future__ import annotations

from dataclasses import replace

from auditor.catalog import load_catalog
from auditor.config import AuditConfig, ThresholdsConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.judge import judge_endpoint
from auditor.kinds.endpoints.models import EndpointKind, Variant
from auditor.models import Resource
from helpers import endpoint, utilization

CATALOG = load_catalog()
CONFIG = AuditConfig()


def assess(ep, utils, age_days: float = 60) -> EndpointAssessment:
    return EndpointAssessment(
        ep,
        tuple(
            VariantAssessment(v, CATALOG.shape(v.instance_type) if v.instance_type else None, u,
                              CATALOG.monthly_cost(v.instance_type, v.instance_count, "us-east-1")
                              if v.instance_type else None)
            for v, u in zip(ep.variants, utils, strict=True)
        ),
        age_days,
    )


def run_rules(assessment: EndpointAssessment, config: AuditConfig = CONFIG):
    return judge_endpoint(assessment, CATALOG, config)


def test_young_endpoint_gets_insufficient_data_and_no_verdict() -> None:
    ep = endpoint(age_days=3)
    findings = run_rules(assess(ep, [utilization({Resource.CPU: 2.0, Resource.MEMORY: 3.0}, invocations=None)],
                                age_days=3))
    assert [f.rule for f in findings] == ["insufficient-data"]
    assert findings[0].recommendation is None
    assert "3.0 days" in findings[0].message


def test_short_metrics_get_insufficient_data() -> None:
    ep = endpoint()
    findings = run_rules(assess(ep, [utilization({Resource.CPU: 2.0, Resource.MEMORY: 3.0}, days=4.0)]))
    assert [f.rule for f in findings] == ["insufficient-data"]
    assert findings[0].variant == "AllTraffic"


def test_idle_endpoint_is_advised_for_deletion_with_full_cost() -> None:
    ep = endpoint(variants=(Variant("AllTraffic", "ml.m5.2xlarge", 2),))
    findings = run_rules(assess(ep, [utilization({Resource.CPU: 2.0, Resource.MEMORY: 3.0}, invocations=None)]))
    assert [f.rule for f in findings] == ["idle"]
    rec = findings[0].recommendation
    assert rec is not None and rec.action == "delete"
    assert rec.monthly_savings_usd == round(0.461 * 2 * 730, 2)


def test_zero_invocations_is_idle_too() -> None:
    findings = run_rules(assess(endpoint(), [utilization({Resource.CPU: 2.0, Resource.MEMORY: 3.0}, invocations=0.0)]))
    assert [f.rule for f in findings] == ["idle"]


def test_underutilized_names_the_resources_and_quotes_numbers() -> None:
    ep = endpoint(variants=(Variant("AllTraffic", "ml.r5.2xlarge", 1),))
    findings = run_rules(assess(ep, [utilization({Resource.CPU: 60.0, Resource.MEMORY: 4.0},
                                                 sizing={Resource.CPU: 55.0, Resource.MEMORY: 4.0})]))
    assert [f.rule for f in findings] == ["underutilized"]
    finding = findings[0]
    assert finding.message.startswith("memory under threshold")
    assert "4.0%" in finding.message
    assert finding.evidence["under_threshold"] == {"memory": 4.0}
    assert finding.recommendation is not None
    assert "$" in finding.message


def test_low_memory_but_no_cheaper_shape_is_not_flagged() -> None:
    # CPU is busy on the cheapest compute shape: nothing cheaper holds it, so no finding.
    ep = endpoint(variants=(Variant("AllTraffic", "ml.c5.xlarge", 1),))
    findings = run_rules(assess(ep, [utilization({Resource.CPU: 80.0, Resource.MEMORY: 20.0})]))
    assert findings == []


def test_busy_endpoint_is_not_flagged() -> None:
    findings = run_rules(assess(endpoint(), [utilization({Resource.CPU: 75.0, Resource.MEMORY: 65.0})]))
    assert findings == []


def test_multi_variant_is_judged_per_variant() -> None:
    ep = endpoint(variants=(Variant("champion", "ml.m5.2xlarge", 2), Variant("challenger", "ml.m5.2xlarge", 2)))
    findings = run_rules(assess(ep, [utilization({Resource.CPU: 70.0, Resource.MEMORY: 60.0}),
                                     utilization({Resource.CPU: 5.0, Resource.MEMORY: 20.0})]))
    assert [(f.rule, f.variant) for f in findings] == [("underutilized", "challenger")]


def test_serverless_gets_no_instance_advice() -> None:
    ep = endpoint(kind=EndpointKind.SERVERLESS, variants=(Variant("AllTraffic", None, 0, serverless_memory_mb=2048),))
    # No traffic: nothing billed, so no verdict on its memory size either.
    assert run_rules(assess(ep, [utilization({Resource.MEMORY: 5.0}, invocations=None)])) == []
    findings = run_rules(assess(ep, [utilization({Resource.MEMORY: 5.0}, invocations=1000.0)]))
    assert [f.rule for f in findings] == ["serverless-oversized"]
    assert findings[0].evidence["advised_memory_size_mb"] == 1024


def test_not_in_service_is_reported_not_judged() -> None:
    ep = endpoint(status="Failed", not_judged_reason="endpoint status is Failed: only InService endpoints are judged")
    findings = run_rules(assess(ep, [None]))
    assert [(f.rule, f.severity.value) for f in findings] == [("not-in-service", "info")]


def test_thresholds_are_configurable() -> None:
    strict = replace(CONFIG, thresholds=ThresholdsConfig(cpu=10.0, memory=10.0))
    util = utilization({Resource.CPU: 30.0, Resource.MEMORY: 30.0})
    ep = endpoint(variants=(Variant("AllTraffic", "ml.m5.4xlarge", 1),))
    assert run_rules(assess(ep, [util]), strict) == []
    assert [f.rule for f in run_rules(assess(ep, [util]))] == ["underutilized"]
