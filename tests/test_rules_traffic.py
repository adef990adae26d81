"""Trend, scaling and serverless rules on small hand-made frames."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from auditor.analyse.normalise import normalise_utilisation, summarise_utilisation
from auditor.catalog import load_catalog
from auditor.collect.plan import align_window
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.judge import evaluate_endpoint
from auditor.kinds.endpoints.models import EndpointKind, Variant
from auditor.kinds.endpoints.rules.serverless_oversized import smallest_memory_size
from helpers import NOW, endpoint, hourly_frame

CATALOG = load_catalog()
CONFIG = AuditConfig()
WINDOW = align_window(NOW, 14, 3600)
HOURS = 14 * 24


def assessment(ep, raw: pd.DataFrame, queue: pd.DataFrame | None = None) -> EndpointAssessment:
    variants = []
    for variant in ep.variants:
        shape = CATALOG.shape(variant.instance_type) if variant.instance_type else None
        normalised = normalise_utilisation(raw, shape)
        util = summarise_utilisation(normalised, raw, 3600, "p95", "max")
        cost = CATALOG.monthly_cost(variant.instance_type, variant.instance_count, "us-east-1") if shape else None
        variants.append(VariantAssessment(variant, shape, util, cost, raw=raw, normalised=normalised))
    return EndpointAssessment(ep, tuple(variants), 60, window=WINDOW,
                              queue=queue if queue is not None else pd.DataFrame(), config=CONFIG)


def busy_raw(**extra) -> pd.DataFrame:
    return hourly_frame(CPUUtilization__Average=240.0, CPUUtilization__Maximum=280.0,  # 60-70% of 4 vCPU
                        MemoryUtilization__Average=60.0, MemoryUtilization__Maximum=65.0,
                        Invocations__Sum=6000.0, **extra)


def test_latency_growing_with_load_is_called_load_growth() -> None:
    ramp = np.linspace(1.0, 2.5, HOURS)
    raw = busy_raw(ModelLatency__Average=list(20_000 * ramp))
    raw["Invocations:Sum"] = 6000.0 * ramp
    findings = evaluate_endpoint(assessment(endpoint("api", variants=(Variant("AllTraffic", "ml.c5.xlarge", 1),)), raw),
                                 CONFIG)
    (finding,) = [f for f in findings if f.rule == "rising-latency"]
    assert finding.evidence["verdict"] == "load growth"
    assert "grew with the load" in finding.message


def test_steady_latency_is_not_flagged() -> None:
    raw = busy_raw(ModelLatency__Average=20_000.0, OverheadLatency__Average=900.0)
    findings = evaluate_endpoint(assessment(endpoint("api", variants=(Variant("AllTraffic", "ml.c5.xlarge", 1),)), raw),
                                 CONFIG)
    assert [f.rule for f in findings] == []


def test_backlog_without_capacity_is_flagged_even_without_a_trend() -> None:
    queue = hourly_frame(ApproximateBacklogSizePerInstance__Average=2.0, ApproximateAgeOfOldestRequest__Average=90.0,
                         HasBacklogWithoutCapacity__Maximum=[0.0] * (HOURS - 3) + [1.0] * 3)
    ep = endpoint("jobs", kind=EndpointKind.ASYNC, variants=(Variant("AllTraffic", "ml.m5.xlarge", 1),))
    findings = evaluate_endpoint(assessment(ep, busy_raw(), queue), CONFIG)
    (finding,) = findings
    assert finding.rule == "rising-queue-latency"
    assert finding.evidence["hours_with_backlog_without_capacity"] == 3
    assert "MinCapacity 1" in finding.message


def test_no_autoscaling_policy_from_invocations_per_instance() -> None:
    # Two c5.xlarge, CPU 35% when each takes 50 invocations a minute: at 70% one takes ~100.
    daily = 1 + 0.5 * np.sin(2 * np.pi * np.arange(HOURS) / 24)
    raw = hourly_frame(CPUUtilization__Average=list(140.0 * daily), CPUUtilization__Maximum=list(150.0 * daily),
                       MemoryUtilization__Average=60.0, MemoryUtilization__Maximum=62.0,
                       Invocations__Sum=list(2 * 50 * 60 * daily))
    ep = endpoint("api", variants=(Variant("AllTraffic", "ml.c5.xlarge", 2),))
    findings = evaluate_endpoint(assessment(replace(ep, autoscaling_known=True), raw), CONFIG)
    (finding,) = [f for f in findings if f.rule == "no-autoscaling"]
    policy = finding.evidence["policy"]
    assert policy["TargetValue"] == 100.0
    assert policy["MinCapacity"] == 2 and policy["MaxCapacity"] >= 3
    # With autoscaling unknown (not readable), the rule does not judge.
    assert not [f for f in evaluate_endpoint(assessment(ep, raw), CONFIG) if f.rule == "no-autoscaling"]


def test_smallest_serverless_memory_size() -> None:
    assert smallest_memory_size(500, 70) == 1024
    assert smallest_memory_size(800, 70) == 2048
    assert smallest_memory_size(4400, 70) is None
