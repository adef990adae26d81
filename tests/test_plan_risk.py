"""A plan's risk: the window replayed on the proposed shape (pure: findings, series and the catalog in)."""

from __future__ import annotations

from dataclasses import replace

import botocore.session
import numpy as np
import pandas as pd
import pytest
from botocore.validate import ParamValidator

from auditor.catalog import Catalog, load_catalog
from auditor.collect.plan import align_window
from auditor.config import AuditConfig, RecommendConfig
from auditor.kinds.endpoints.models import EndpointReport, Variant, VariantReport
from auditor.kinds.registry import plans_for
from auditor.models import Finding, Plan, Recommendation, Resource, ResourceRef, RiskLevel, Severity, Window
from auditor.recommend.risk import level_of, replay
from helpers import NOW, endpoint


def build_plans(findings: list[Finding], endpoints: tuple[EndpointReport, ...], catalog: Catalog,
                config: AuditConfig, window: Window | None = None) -> tuple[Plan, ...]:
    """The plans of endpoint findings, as the pipeline builds them from the endpoints' section."""
    return plans_for(findings, {"endpoints": endpoints}, catalog, config, window)


CATALOG = load_catalog()
WINDOW = align_window(NOW, 14, 3600)
HOURS = 14 * 24


def series(cpu: float | list[float], memory: float | list[float] = 40.0, **more: float) -> pd.DataFrame:
    index = pd.date_range(end=WINDOW.end, periods=HOURS, freq="h", tz="UTC")
    columns = {"cpu:Maximum": np.resize(np.array(cpu, float), HOURS),
               "memory:Maximum": np.resize(np.array(memory, float), HOURS)}
    columns.update({f"{k}:Maximum": np.full(HOURS, v) for k, v in more.items()})
    return pd.DataFrame(columns, index=index).astype("float32")


def fleet(instance_type: str, count: int, frame: pd.DataFrame, latency_ms: float | None = None,
          config_description: dict | None = None) -> tuple[EndpointReport, ...]:
    ep = replace(endpoint("ep", variants=(Variant("AllTraffic", instance_type, count),)),
                 config_description=config_description)
    return (EndpointReport(ep, (VariantReport(ep.variants[0], 1000.0, None, series=frame,
                                              model_latency_max_ms=latency_ms),)),)


def resize(to: str, count: int, saving: float, rule: str = "underutilized", current: float = 1000.0) -> Finding:
    return Finding(rule, Severity.MEDIUM, ResourceRef("endpoints", "endpoint", "ep", "123456789012", "us-east-1"),
                   "AllTraffic", "m", {},
                   recommendation=Recommendation("resize", to, count, current, current - saving))


def test_replay_scales_divisible_load_by_capacity_and_memory_per_instance() -> None:
    m5_4xl, m5_xl = CATALOG.shape("ml.m5.4xlarge"), CATALOG.shape("ml.m5.xlarge")
    frame = series([10.0] * 300 + [20.0] * 36, memory=12.0)
    replays = {r.resource: r for r in replay(frame, 3600, m5_4xl, 4, m5_xl, 4, target=70.0)}
    # 4 x 16 vCPUs at 20% = 12.8 vCPUs busy, on 4 x 4 vCPUs: 80%; memory 12% of 64 GiB on 16 GiB: 48%.
    assert replays[Resource.CPU].peak == pytest.approx(80.0)
    assert replays[Resource.CPU].p95 == pytest.approx(80.0)  # 36 of 336 hours at the peak: above the 95th
    assert replays[Resource.CPU].hours_over_target == 36
    assert replays[Resource.CPU].hours_over_100 == 0
    assert replays[Resource.CPU].headroom_at_peak == pytest.approx(20.0)
    assert replays[Resource.MEMORY].peak == pytest.approx(48.0)


def test_a_plan_whose_replay_exceeds_100_percent_is_not_proposed() -> None:
    # 4 x ml.m5.4xlarge (64 vCPUs) at 30%, one hour at 45%: 28.8 vCPUs at the peak.
    frame = series([30.0] * (HOURS - 1) + [45.0], memory=20.0)
    too_small = resize("ml.m5.xlarge", 4, saving=800.0)  # 16 vCPUs: 180% at the peak
    holds = resize("ml.m5.2xlarge", 6, saving=300.0, rule="overprovisioned-count")  # 48 vCPUs: 60%
    plans = build_plans([too_small, holds], fleet("ml.m5.4xlarge", 4, frame), CATALOG, AuditConfig(), WINDOW)
    assert len(plans) == 1
    plan = plans[0]
    assert (plan.proposed.instance_type, plan.proposed.instance_count) == ("ml.m5.2xlarge", 6)
    assert plan.alternatives == ()  # the one over 100% is not offered either
    assert plan.risk is not None and plan.risk.level is RiskLevel.LOW
    # Alone, the option over 100% makes no plan at all: its finding still says what it found.
    assert build_plans([too_small], fleet("ml.m5.4xlarge", 4, frame), CATALOG, AuditConfig(), WINDOW) == ()


def test_one_hour_over_100_percent_is_enough_to_drop_it() -> None:
    frame = series([10.0] * (HOURS - 1) + [30.0])  # 64 vCPUs: 19.2 busy in that hour
    plans = build_plans([resize("ml.m5.4xlarge", 1, saving=750.0)], fleet("ml.m5.4xlarge", 4, frame),
                        CATALOG, AuditConfig(), WINDOW)
    assert plans == ()  # 120% of 16 vCPUs in one hour of 336


def test_gpu_to_cpu_plan_is_load_test_first_with_a_valid_request() -> None:
    frame = series(20.0, memory=30.0, gpu=5.0, gpu_memory=10.0)
    config = AuditConfig(recommend=RecommendConfig(load_test_role_arn="arn:aws:iam::{account_id}:role/Recommender"))
    description = {"EndpointConfigName": "ep-config", "ProductionVariants": [
        {"VariantName": "AllTraffic", "ModelName": "tagger-v3", "InstanceType": "ml.g4dn.xlarge",
         "InitialInstanceCount": 1}]}
    plans = build_plans([resize("ml.m5.xlarge", 1, saving=200.0)],
                        fleet("ml.g4dn.xlarge", 1, frame, config_description=description), CATALOG, config, WINDOW)
    risk = plans[0].risk
    assert risk is not None and risk.level is RiskLevel.HIGH
    assert any("another accelerator: NVIDIA T4 to CPU" in r for r in risk.load_test_first)
    assert {r.resource for r in risk.replays} == {Resource.CPU, Resource.MEMORY}  # GPU load has no counterpart
    request = risk.load_test_request
    assert request is not None and request.operation == "CreateInferenceRecommendationsJob"
    assert request.params["JobType"] == "Default"
    assert request.params["RoleArn"] == "arn:aws:iam::123456789012:role/Recommender"
    assert request.params["InputConfig"] == {"ModelName": "tagger-v3",
                                             "EndpointConfigurations": [{"InstanceType": "ml.m5.xlarge"}]}
    shape = botocore.session.get_session().get_service_model("sagemaker").operation_model(
        request.operation).input_shape
    report = ParamValidator().validate(request.params, shape)
    assert not report.has_errors(), report.generate_report()


def test_without_a_role_the_plan_says_load_test_first_but_carries_no_request() -> None:
    frame = series(20.0, gpu=5.0, gpu_memory=10.0)
    plans = build_plans([resize("ml.m5.xlarge", 1, saving=200.0)], fleet("ml.g4dn.xlarge", 1, frame), CATALOG,
                        AuditConfig(), WINDOW)
    risk = plans[0].risk
    assert risk is not None and risk.load_test_first and risk.load_test_request is None


@pytest.mark.parametrize(("current", "proposed", "reason"), [
    ("ml.m5.xlarge", "ml.m6g.xlarge", "another architecture: x86_64 to arm64"),
    ("ml.g4dn.xlarge", "ml.g5.xlarge", "another accelerator: NVIDIA T4 to NVIDIA A10G"),
    ("ml.g4dn.xlarge", "ml.inf2.xlarge", "another accelerator: NVIDIA T4 to AWS Inferentia2"),
])
def test_what_a_replay_cannot_predict_is_load_test_first(current: str, proposed: str, reason: str) -> None:
    frame = series(10.0, gpu=5.0, gpu_memory=5.0)
    plans = build_plans([resize(proposed, 1, saving=100.0)], fleet(current, 1, frame), CATALOG, AuditConfig(),
                        WINDOW)
    assert plans[0].risk is not None and reason in plans[0].risk.load_test_first[0]


def test_memory_peak_within_20_percent_of_the_new_instance_is_load_test_first() -> None:
    # 40% of ml.m5.2xlarge's 32 GiB is 12.8 GiB: 80% of ml.m5.xlarge's 16 GiB (in 10 hours of 336).
    peaky = series(10.0, [20.0] * (HOURS - 10) + [40.0] * 10)
    plans = build_plans([resize("ml.m5.xlarge", 2, saving=300.0)], fleet("ml.m5.2xlarge", 2, peaky),
                        CATALOG, AuditConfig(), WINDOW)
    risk = plans[0].risk
    assert risk is not None and risk.level is RiskLevel.MEDIUM
    assert risk.load_test_first == ("per-instance memory peak 80% of ml.m5.xlarge's 16 GiB: within 20%",)
    roomy = build_plans([resize("ml.m5.xlarge", 2, saving=300.0)], fleet("ml.m5.2xlarge", 2, series(10.0, 30.0)),
                        CATALOG, AuditConfig(), WINDOW)
    assert roomy[0].risk is not None and roomy[0].risk.level is RiskLevel.LOW and not roomy[0].risk.load_test_first


@pytest.mark.parametrize(("latency_ms", "near"), [(85.0, True), (120.0, True), (50.0, False), (None, True)])
def test_latency_near_the_objective_is_load_test_first(latency_ms: float | None, near: bool) -> None:
    config = AuditConfig(recommend=RecommendConfig(latency_objective_ms=100.0))
    plans = build_plans([resize("ml.m5.xlarge", 2, saving=300.0)],
                        fleet("ml.m5.2xlarge", 2, series(10.0, 20.0), latency_ms=latency_ms), CATALOG, config, WINDOW)
    reasons = plans[0].risk.load_test_first if plans[0].risk else ()
    assert bool(reasons) is near
    if latency_ms is None:
        assert "unknown" in reasons[0]


def test_plans_sort_by_saving_and_risk_is_a_column() -> None:
    def one(name: str, memory: float | list[float], saving: float) -> tuple[Finding, EndpointReport]:
        ep = endpoint(name, variants=(Variant("AllTraffic", "ml.m5.2xlarge", 2),))
        base = resize("ml.m5.xlarge", 2, saving=saving)
        finding = replace(base, resource=replace(base.resource, name=name))
        return finding, EndpointReport(ep, (VariantReport(ep.variants[0], 1000.0, None,
                                                          series=series(10.0, memory)),))

    peaky = [20.0] * (HOURS - 10) + [40.0] * 10  # 80% of the new memory in 10 hours: medium
    pairs = [one("risky-big", peaky, 500.0), one("safe-small", 20.0, 100.0), one("safe-big", 20.0, 300.0)]
    plans = build_plans([f for f, _ in pairs], tuple(r for _, r in pairs), CATALOG, AuditConfig(), WINDOW)
    # Biggest money first, whatever the risk; the risk is stated on each, and --max-risk filters by it.
    assert [p.resource.name for p in plans] == ["risky-big", "safe-big", "safe-small"]
    assert [p.risk.level for p in plans if p.risk] == [RiskLevel.MEDIUM, RiskLevel.LOW, RiskLevel.LOW]


def test_risk_levels_follow_the_documented_thresholds() -> None:
    m5 = CATALOG.shape("ml.m5.xlarge")

    def level(values: list[float]) -> RiskLevel:
        replays = replay(series(values), 3600, m5, 1, m5, 1, target=70.0)
        return level_of(replays, 70.0, (), HOURS, scales=False, accelerator_change=False)

    assert level([50.0]) is RiskLevel.LOW
    assert level([50.0] * (HOURS - 5) + [95.0] * 5) is RiskLevel.MEDIUM  # peak over 90%, 5 h over the target
    assert level([50.0] * (HOURS - 30) + [80.0] * 30) is RiskLevel.HIGH  # over the target 9% of the hours
    assert level([50.0] * (HOURS - 1) + [101.0]) is RiskLevel.HIGH


def daily(peak: float, hours_a_day: int, rest: float = 50.0) -> list[float]:
    """`hours_a_day` hours at `peak` every day of the window, `rest` otherwise."""
    return ([rest] * (24 - hours_a_day) + [peak] * hours_a_day) * (HOURS // 24)


@pytest.mark.parametrize(("values", "expected"), [
    # The issue's case: an hour a day over the target (peak 90%, 14 hours over 70% in 14 days).
    (daily(90.0, 1), RiskLevel.MEDIUM),
    # Boundaries of low: at the target in every hour is low; one hour just over it is not.
    ([70.0] * HOURS, RiskLevel.LOW),
    ([70.0] * (HOURS - 1) + [70.5], RiskLevel.MEDIUM),
    # A peak over 90% is medium whatever the target (here a target of 95%: see below).
    # Boundaries of high: over the target for 5% of the hours (16.8 of 336) is medium, for 17 hours high.
    ([50.0] * (HOURS - 16) + [80.0] * 16, RiskLevel.MEDIUM),
    ([50.0] * (HOURS - 17) + [80.0] * 17, RiskLevel.HIGH),
    # 100% is the last medium peak; over it is high (and never proposed).
    ([50.0] * (HOURS - 1) + [100.0], RiskLevel.MEDIUM),
    ([50.0] * (HOURS - 1) + [100.5], RiskLevel.HIGH),
])
def test_risk_levels_do_not_overlap(values: list[float], expected: RiskLevel) -> None:
    """One case, one level (docs/plans.md, "Risk levels"): over the target in any hour is at least medium."""
    m5 = CATALOG.shape("ml.m5.xlarge")
    replays = replay(series(values), 3600, m5, 1, m5, 1, target=70.0)
    assert level_of(replays, 70.0, (), HOURS, scales=False, accelerator_change=False) is expected


def test_a_peak_over_90_percent_is_medium_under_a_higher_target() -> None:
    m5 = CATALOG.shape("ml.m5.xlarge")

    def level(values: list[float]) -> RiskLevel:
        return level_of(replay(series(values), 3600, m5, 1, m5, 1, target=95.0), 95.0, (), HOURS,
                        scales=False, accelerator_change=False)

    assert level([50.0] * (HOURS - 1) + [90.0]) is RiskLevel.LOW
    assert level([50.0] * (HOURS - 1) + [90.5]) is RiskLevel.MEDIUM


def test_the_issues_daily_hour_over_the_target_is_a_medium_plan() -> None:
    """Through build_plans: 2 x ml.m5.2xlarge to 1, replayed at 90% an hour a day (14 h over 70%)."""
    frame = series(daily(45.0, 1, rest=25.0))  # on half the instances: 90% an hour a day, 50% otherwise
    plans = build_plans([resize("ml.m5.2xlarge", 1, saving=300.0)], fleet("ml.m5.2xlarge", 2, frame), CATALOG,
                        AuditConfig(), WINDOW)
    assert plans and plans[0].risk is not None
    cpu = next(r for r in plans[0].risk.replays if r.resource is Resource.CPU)
    assert (cpu.peak, cpu.hours_over_target) == (90.0, 14.0)
    assert plans[0].risk.level is RiskLevel.MEDIUM


def test_a_resize_that_drops_a_step_scaling_policy_is_at_least_medium() -> None:
    from auditor.kinds.endpoints.models import AutoScaling, ReadScalingPolicy

    step = ReadScalingPolicy("backlog", "StepScaling", {"AdjustmentType": "ChangeInCapacity",
                                                        "StepAdjustments": [{"ScalingAdjustment": 1}]})
    scaled = Variant("AllTraffic", "ml.m5.2xlarge", 2, autoscaling=AutoScaling(2, 4, ("backlog (StepScaling)",),
                                                                                (step,)))
    described = {"ProductionVariants": [{"VariantName": "AllTraffic", "ModelName": "m",
                                         "InstanceType": "ml.m5.2xlarge", "InitialInstanceCount": 2}]}
    ep = replace(endpoint("ep", variants=(scaled,)), config_description=described)
    reports = (EndpointReport(ep, (VariantReport(scaled, 1000.0, None, series=series(10.0, 20.0)),)),)
    plan = build_plans([resize("ml.m5.xlarge", 2, saving=300.0)], reports, CATALOG, AuditConfig(), WINDOW)[0]
    assert plan.risk is not None and plan.risk.level is RiskLevel.MEDIUM  # the replay alone is low
    assert any(line.startswith("step-scaling policy backlog") for line in plan.risk.basis)
    assert plan.change is not None and "PutScalingPolicy" not in [c.operation for c in plan.change.calls]


def test_plans_have_stable_ids_that_follow_the_proposal() -> None:
    frame = series(10.0, 20.0)
    first = build_plans([resize("ml.m5.xlarge", 2, saving=300.0)], fleet("ml.m5.2xlarge", 2, frame), CATALOG,
                        AuditConfig(), WINDOW)
    again = build_plans([resize("ml.m5.xlarge", 2, saving=300.0)], fleet("ml.m5.2xlarge", 2, frame), CATALOG,
                        AuditConfig(), WINDOW)
    other = build_plans([resize("ml.m5.xlarge", 3, saving=200.0)], fleet("ml.m5.2xlarge", 2, frame), CATALOG,
                        AuditConfig(), WINDOW)
    assert first[0].id == again[0].id
    assert first[0].id != other[0].id
    assert len(first[0].id) == 10
