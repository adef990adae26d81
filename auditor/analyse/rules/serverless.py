"""Serverless rules: a memory size larger than the model uses, and real-time endpoints whose
traffic is sparse enough that serverless would cost less."""

from __future__ import annotations

import math

from auditor.analyse.rules.base import EndpointAssessment, RuleMeta, VariantAssessment, make_finding, target_percent
from auditor.analyse.usage import mean_duration_seconds, per_month
from auditor.catalog import SERVERLESS_MEMORY_SIZES_MB
from auditor.config import AuditConfig
from auditor.models import Finding, Resource, Severity

SERVERLESS_OVERSIZED = RuleMeta(
    "serverless-oversized",
    "Serverless memory size too large",
    Severity.LOW,
    "Update the endpoint to a serverless config with the advised MemorySizeInMB.",
)
SERVERLESS_CANDIDATE = RuleMeta(
    "serverless-candidate",
    "Sparse traffic on dedicated instances",
    Severity.MEDIUM,
    "Move the endpoint to Serverless Inference with the advised memory size (mind cold starts).",
)
# Hourly sums hide bursts: assume the busiest second carries this many times the busiest hour's rate.
BURST_FACTOR = 10.0


def smallest_memory_size(used_mb: float, target: float) -> int | None:
    """The smallest serverless memory size that keeps `used_mb` at or below `target` percent."""
    return next((size for size in SERVERLESS_MEMORY_SIZES_MB if size * target / 100.0 >= used_mb), None)


def check_serverless_oversized(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    memory_mb = va.variant.serverless_memory_mb
    if not memory_mb or va.utilization is None or Resource.MEMORY not in va.utilization.peak:
        return None
    if not va.utilization.invocations:
        return None  # no requests, nothing billed: the size costs nothing
    target = target_percent(config.rules.serverless_oversized.target_utilization, config)
    peak = va.utilization.peak[Resource.MEMORY]
    used_mb = peak / 100.0 * memory_mb
    advised = smallest_memory_size(used_mb, target)
    if advised is None or advised >= memory_mb:
        return None
    return make_finding(
        SERVERLESS_OVERSIZED, assessment.endpoint, va.variant.name,
        f"Memory peaks at {peak:.1f}% of {memory_mb} MB ({used_mb:,.0f} MB); {advised} MB holds it at "
        f"<= {target:g}%",
        {
            "memory_size_mb": memory_mb,
            "advised_memory_size_mb": advised,
            "peak_memory_percent": round(peak, 2),
            "peak_memory_used_mb": round(used_mb),
            "target_utilization": target,
            "invocations": va.utilization.invocations,
            "mean_duration_ms": _ms(mean_duration_seconds(va.raw)),
        },
    )


def check_serverless_candidate(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    """A candidate: the recommend stage prices both sides and keeps it only if serverless is
    cheaper by rules.serverless-candidate.min_savings_percent."""
    shape, util = va.shape, va.utilization
    if shape is None or util is None or shape.has_accelerator or assessment.window is None:
        return None  # Serverless Inference has no GPUs
    if not util.invocations or Resource.MEMORY not in util.peak:
        return None
    duration = mean_duration_seconds(va.raw)
    if duration is None:
        return None
    rule = config.rules.serverless_candidate
    target = config.recommend.target_utilization
    used_mb = util.peak[Resource.MEMORY] / 100.0 * shape.memory_gib * 1024
    memory_mb = smallest_memory_size(used_mb, target)
    if memory_mb is None:
        return None
    hourly = va.raw["Invocations:Sum"].dropna()
    peak_per_second = float(hourly.max()) / (assessment.window.period_seconds or 3600)
    concurrency = peak_per_second * duration * BURST_FACTOR
    if concurrency > rule.max_concurrency:
        return None
    invocations_month = per_month(util.invocations, assessment.window)
    return make_finding(
        SERVERLESS_CANDIDATE, assessment.endpoint, va.variant.name,
        f"{va.variant.instance_count} x {va.variant.instance_type} serve {invocations_month:,.0f} invocations a month "
        f"at {duration * 1000:,.0f} ms each; serverless at {memory_mb} MB would bill "
        f"{invocations_month * duration:,.0f} compute-seconds a month (assumes the observed mean duration, "
        f"memory peak {used_mb:,.0f} MB, and bursts of {BURST_FACTOR:g}x the busiest hour: "
        f"~{max(concurrency, 0.01):.2f} concurrent requests)",
        {
            "invocations_per_month": round(invocations_month),
            "mean_duration_ms": _ms(duration),
            "compute_seconds_per_month": round(invocations_month * duration, 1),
            "memory_size_mb": memory_mb,
            "peak_memory_used_mb": round(used_mb),
            "estimated_peak_concurrency": round(concurrency, 2),
            "max_concurrency": rule.max_concurrency,
            "assumptions": "serverless compute billed per second of observed mean duration; cold starts "
                           "and data processing ($0.016/GB) not included",
        },
    )


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None or math.isnan(seconds) else round(seconds * 1000, 2)
