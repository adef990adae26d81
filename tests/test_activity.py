"""idle and data-gap on small frames: what each endpoint kind shows of being in use."""

from __future__ import annotations

import pandas as pd

from auditor.config import AuditConfig
from auditor.kinds.endpoints.judge import evaluate_endpoint
from auditor.kinds.endpoints.models import EndpointKind, Variant
from helpers import endpoint, hourly_frame
from test_rules_traffic import HOURS, assessment

CONFIG = AuditConfig()
ASYNC = endpoint("queue", variants=(Variant("AllTraffic", "ml.g4dn.xlarge", 1),), kind=EndpointKind.ASYNC)


def busy_gpu_frame(**extra: float) -> pd.DataFrame:
    # 4 vCPUs, 1 GPU: CPU published summed over vCPUs.
    return hourly_frame(CPUUtilization__Average=60.0, CPUUtilization__Maximum=80.0, MemoryUtilization__Average=40.0,
                        MemoryUtilization__Maximum=42.0, GPUUtilization__Average=75.0, GPUUtilization__Maximum=85.0,
                        **extra)


def rules_of(findings) -> list[str]:
    return sorted(f.rule for f in findings)


def test_async_endpoint_processing_requests_is_not_idle() -> None:
    raw = busy_gpu_frame(TotalProcessingTime__SampleCount=900.0)
    assert "idle" not in rules_of(evaluate_endpoint(assessment(ASYNC, raw), CONFIG))


def test_async_endpoint_with_requests_waiting_is_not_idle_even_with_idle_instances() -> None:
    raw = hourly_frame(CPUUtilization__Average=2.0, CPUUtilization__Maximum=3.0, MemoryUtilization__Average=10.0,
                       MemoryUtilization__Maximum=10.0)
    queue = hourly_frame(ApproximateBacklogSize__Maximum=[0.0, 0.0, 4.0])
    assert "idle" not in rules_of(evaluate_endpoint(assessment(ASYNC, raw, queue), CONFIG))


def test_async_endpoint_with_nothing_processed_or_waiting_and_idle_instances_is_idle() -> None:
    raw = hourly_frame(CPUUtilization__Average=2.0, CPUUtilization__Maximum=3.0, MemoryUtilization__Average=10.0,
                       MemoryUtilization__Maximum=10.0, GPUUtilization__Average=0.5, GPUUtilization__Maximum=1.0)
    queue = hourly_frame(ApproximateBacklogSize__Maximum=0.0, ApproximateAgeOfOldestRequest__Maximum=0.0)
    assert rules_of(evaluate_endpoint(assessment(ASYNC, raw, queue), CONFIG)) == ["idle"]


def test_busy_instances_with_silent_request_metrics_are_a_data_gap_not_idle() -> None:
    findings = evaluate_endpoint(assessment(ASYNC, busy_gpu_frame()), CONFIG)
    assert "idle" not in rules_of(findings)
    (gap,) = [f for f in findings if f.rule == "data-gap"]
    assert gap.severity.value == "info" and gap.recommendation is None
    assert "TotalProcessingTime" in gap.message and gap.evidence["busy"]["GPU"] > 5


def test_real_time_endpoint_busy_without_invocations_is_a_data_gap() -> None:
    ep = endpoint("api", variants=(Variant("AllTraffic", "ml.c5.xlarge", 1),))
    raw = hourly_frame(CPUUtilization__Average=200.0, CPUUtilization__Maximum=260.0, MemoryUtilization__Average=50.0,
                       MemoryUtilization__Maximum=52.0)
    findings = evaluate_endpoint(assessment(ep, raw), CONFIG)
    assert "idle" not in rules_of(findings) and "data-gap" in rules_of(findings)
    assert len(raw) == HOURS


def test_a_component_endpoint_serving_through_its_components_is_not_idle() -> None:
    """Its variant publishes no Invocations for the components; each component does (InferenceComponentName)."""
    from dataclasses import replace

    from auditor.kinds.endpoints.models import InferenceComponent

    ep = replace(endpoint("llm", variants=(Variant("AllTraffic", "ml.c5.xlarge", 1),)),
                 inference_components=(InferenceComponent("llm-chat", "AllTraffic", "InService", copy_count=1),))
    raw = hourly_frame(CPUUtilization__Average=2.0, CPUUtilization__Maximum=3.0, MemoryUtilization__Average=10.0,
                       MemoryUtilization__Maximum=10.0)
    quiet = assessment(ep, raw)
    assert rules_of(evaluate_endpoint(quiet, CONFIG)) == ["idle"]  # no component called either
    called = replace(quiet, component_calls=pd.DataFrame({"llm-chat": hourly_frame(Invocations__Sum=[40.0, None])[
        "Invocations:Sum"]}))
    assert "idle" not in rules_of(evaluate_endpoint(called, CONFIG))
