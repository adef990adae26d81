"""serverless-oversized: a serverless memory size larger than the model uses."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from auditor.analyse.rules.base import RuleSettings, settings_of, target_percent
from auditor.analyse.usage import compute_seconds_per_month, mean_duration_seconds
from auditor.catalog import SERVERLESS_MEMORY_SIZES_MB, Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.pricing_steps import variant_of
from auditor.kinds.endpoints.rule_types import VariantRule
from auditor.models import Finding, Judged, MemoryProposal, Recommendation, Resource, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting


@dataclass(frozen=True)
class OversizedSettings(RuleSettings):
    target_utilization: float = setting(0.0, "memory headroom; 0: recommend.target_utilization", minimum=0,
                                        maximum=100)


def smallest_memory_size(used_mb: float, target: float) -> int | None:
    """The smallest serverless memory size that keeps `used_mb` at or below `target` percent."""
    return next((size for size in SERVERLESS_MEMORY_SIZES_MB if size * target / 100.0 >= used_mb), None)


def milliseconds(seconds: float | None) -> float | None:
    return None if seconds is None or math.isnan(seconds) else round(seconds * 1000, 2)


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    memory_mb = va.variant.serverless_memory_mb
    if not memory_mb or va.utilization is None or Resource.MEMORY not in va.utilization.peak:
        return None
    if not va.utilization.invocations:
        return None  # no requests, nothing billed: the size costs nothing
    settings: OversizedSettings = settings_of(RULE, config)
    target = target_percent(settings.target_utilization, config)
    peak = va.utilization.peak[Resource.MEMORY]
    used_mb = peak / 100.0 * memory_mb
    advised = smallest_memory_size(used_mb, target)
    if advised is None or advised >= memory_mb:
        return None
    return RULE.finding(
        assessment.endpoint, va.variant.name,
        f"Memory peaks at {peak:.1f}% of {memory_mb} MB ({used_mb:,.0f} MB); {advised} MB holds it at "
        f"<= {target:g}%",
        {
            "memory_size_mb": memory_mb,
            "advised_memory_size_mb": advised,
            "peak_memory_percent": round(peak, 2),
            "peak_memory_used_mb": round(used_mb),
            "target_utilization": target,
            "invocations": va.utilization.invocations,
            "mean_duration_ms": milliseconds(mean_duration_seconds(va.raw)),
        },
        proposal=MemoryProposal(advised),
    )


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    assert isinstance(finding.proposal, MemoryProposal)
    va = variant_of(finding, assessment)
    current_mb = va.variant.serverless_memory_mb if va else None
    advised_mb = finding.proposal.memory_size_mb
    seconds = (compute_seconds_per_month(va.raw, va.utilization.invocations, assessment.window)
               if va and va.utilization and assessment.window else None)
    region = assessment.endpoint.region
    current_price = catalog.serverless_price(current_mb, region) if current_mb else None
    advised_price = catalog.serverless_price(advised_mb, region)
    if seconds is None or current_price is None or advised_price is None:
        return replace(finding, message=f"{finding.message} (saving unknown: no duration or price).")
    rec = Recommendation("resize-memory", None, 0,
                         current_monthly_usd=round(seconds * current_price, 2),
                         recommended_monthly_usd=round(seconds * advised_price, 2),
                         details={"memory_size_mb": advised_mb})
    return priced(finding, rec, f"{finding.message}: saves ${rec.monthly_savings_usd:,.2f}/month.")


RULE = VariantRule(
    id="serverless-oversized",
    title="Serverless memory size too large",
    severity=Severity.LOW,
    remediation="Update the endpoint to a serverless config with the advised MemorySizeInMB.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/serverless-endpoints.html",
    judges=frozenset({Judged.SERVERLESS}),
    settings=OversizedSettings,
    threshold_field="target_utilization",
    check=check,
    price=price,
)
