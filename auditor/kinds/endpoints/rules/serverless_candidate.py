"""serverless-candidate: a real-time endpoint whose traffic fits Serverless Inference, which AWS
positions for traffic with idle periods between spurts that can tolerate cold starts.

A candidate has: idle periods (at least `min_idle_hours_percent` of its hours without a single
invocation) or very low traffic (at most `max_invocations_per_hour` on average); instances that
are not busy (CPU p95 under the [thresholds] cpu); a model that fits in 6 GB; no GPU. The pricing
step prices both sides and keeps it only where serverless is cheaper by `min_savings_percent`."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.analyse.usage import mean_duration_seconds, per_month
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.packing import on_variant
from auditor.kinds.endpoints.pricing_steps import variant_of
from auditor.kinds.endpoints.rule_types import VariantRule
from auditor.kinds.endpoints.rules.serverless_oversized import milliseconds, smallest_memory_size
from auditor.models import Finding, Judged, Recommendation, Resource, ServerlessProposal, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting

# Hourly sums hide bursts: assume the busiest second carries this many times the busiest hour's rate.
BURST_FACTOR = 10.0


@dataclass(frozen=True)
class CandidateSettings(RuleSettings):
    min_savings_percent: float = setting(50.0, "serverless must cost at most half: cold starts have a price too",
                                         minimum=0, below=100)
    # SageMaker's per-endpoint serverless limit (ProductionVariantServerlessConfig.MaxConcurrency: 1-200).
    max_concurrency: int = setting(200, "SageMaker's per-endpoint serverless limit", minimum=1, maximum=200)
    min_idle_hours_percent: float = setting(25.0, "share of hours with no invocation that makes traffic spiky",
                                            minimum=0, maximum=100)
    max_invocations_per_hour: float = setting(60.0, "or traffic this low on average", minimum=0)


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    shape, util = va.shape, va.utilization
    if shape is None or util is None or shape.has_accelerator or assessment.window is None:
        return None  # Serverless Inference has no GPUs
    if not util.invocations or Resource.MEMORY not in util.peak:
        return None
    if on_variant(assessment.components, va.variant.name):
        return None  # Serverless Inference hosts no inference components
    cpu = util.get(Resource.CPU)
    if cpu is None or cpu.p95 >= config.thresholds.cpu:
        return None  # busy instances: the work would not get cheaper, and cold starts would hurt
    duration = mean_duration_seconds(va.raw)
    if duration is None:
        return None
    settings: CandidateSettings = settings_of(RULE, config)
    hours = _hours(va)
    if hours is None:
        return None
    hours_total, hours_idle = hours
    idle_share = 100.0 * hours_idle / hours_total
    per_hour = util.invocations / hours_total
    if idle_share < settings.min_idle_hours_percent and per_hour > settings.max_invocations_per_hour:
        return None  # steady traffic: dedicated instances are what it needs
    target = config.recommend.target_utilization
    used_mb = util.peak[Resource.MEMORY] / 100.0 * shape.memory_gib * 1024
    memory_mb = smallest_memory_size(used_mb, target)
    if memory_mb is None:
        return None
    hourly = va.raw["Invocations:Sum"].dropna()
    peak_per_second = float(hourly.max()) / (assessment.window.period_seconds or 3600)
    concurrency = peak_per_second * duration * BURST_FACTOR
    if concurrency > settings.max_concurrency:
        return None
    invocations_month = per_month(util.invocations, assessment.window)
    compute_seconds = invocations_month * duration
    return RULE.finding(
        assessment.endpoint, va.variant.name,
        f"{va.variant.instance_count} x {va.variant.instance_type} serve {invocations_month:,.0f} invocations a month "
        f"at {duration * 1000:,.0f} ms each; serverless at {memory_mb} MB would bill "
        f"{compute_seconds:,.0f} compute-seconds a month (assumes the observed mean duration, "
        f"memory peak {used_mb:,.0f} MB, and bursts of {BURST_FACTOR:g}x the busiest hour: "
        f"~{max(concurrency, 0.01):.2f} concurrent requests). Traffic: {per_hour:,.0f} invocations an hour on "
        f"average, none at all in {hours_idle} of {hours_total} hours ({idle_share:.0f}%), CPU p95 {cpu.p95:.0f}%. "
        "Trade-off: after an idle spell the first request waits for a cold start (seconds, more for large "
        "models); provisioned concurrency avoids it at a price",
        {
            "idle_hours_percent": round(idle_share, 1),
            "invocations_per_hour": round(per_hour, 1),
            "cpu_p95": cpu.p95,
            "invocations_per_month": round(invocations_month),
            "mean_duration_ms": milliseconds(duration),
            "compute_seconds_per_month": round(compute_seconds, 1),
            "memory_size_mb": memory_mb,
            "peak_memory_used_mb": round(used_mb),
            "estimated_peak_concurrency": round(concurrency, 2),
            "max_concurrency": settings.max_concurrency,
            "assumptions": "serverless compute billed per second of observed mean duration; cold starts "
                           "and data processing ($0.016/GB) not included",
        },
        proposal=ServerlessProposal(memory_mb, round(compute_seconds, 1), round(concurrency, 2)),
    )


def _hours(va: VariantAssessment) -> tuple[int, int] | None:
    """(hours the instances ran, hours of those without one invocation), from the instance metrics:
    AWS publishes no Invocations datapoint for an hour without traffic."""
    if "CPUUtilization:Maximum" not in va.raw.columns:
        return None
    running = va.raw["CPUUtilization:Maximum"].dropna().index
    if not len(running):
        return None
    calls = va.raw["Invocations:Sum"].reindex(running) if "Invocations:Sum" in va.raw.columns else None
    idle = len(running) if calls is None else int((calls.fillna(0.0) <= 0).sum())
    return len(running), idle


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    assert isinstance(finding.proposal, ServerlessProposal)
    proposal = finding.proposal
    va = variant_of(finding, assessment)
    price = catalog.serverless_price(proposal.memory_size_mb, assessment.endpoint.region)
    if va is None or va.monthly_cost_usd is None or price is None:
        return None
    serverless = round(proposal.compute_seconds_per_month * price, 2)
    rec = Recommendation("serverless", None, 0, current_monthly_usd=va.monthly_cost_usd,
                         recommended_monthly_usd=serverless,
                         details={"memory_size_mb": proposal.memory_size_mb,
                                  "max_concurrency": max(1, int(proposal.peak_concurrency * 2 + 1))})
    settings: CandidateSettings = settings_of(RULE, config)
    if rec.monthly_savings_usd < va.monthly_cost_usd * settings.min_savings_percent / 100.0:
        return None
    return priced(finding, rec, f"{finding.message}: about ${serverless:,.2f}/month instead of "
                                f"${va.monthly_cost_usd:,.2f}.")


RULE = VariantRule(
    id="serverless-candidate",
    title="Sparse traffic on dedicated instances",
    severity=Severity.MEDIUM,
    remediation="Move the endpoint to Serverless Inference with the advised memory size (mind cold starts).",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/serverless-endpoints.html",
    judges=frozenset({Judged.REAL_TIME}),
    settings=CandidateSettings,
    threshold_field="min_savings_percent",
    check=check,
    price=price,
)
