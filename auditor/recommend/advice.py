"""Price each finding's advice, and keep the candidates that hold up.

`underutilized` and `serverless-candidate` are candidates: they are kept only where the cheaper
option really is cheaper (a resource under its threshold is not waste when nothing cheaper can
carry the others). Advice that costs more (scale out a growing queue) is kept with a negative
saving: it is a risk to fix, not money to save.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from auditor.analyse.rules import EndpointAssessment, VariantAssessment
from auditor.analyse.rules.capacity import IDLE, OVERPROVISIONED_COUNT, UNDERUTILIZED
from auditor.analyse.rules.scaling import NO_AUTOSCALING
from auditor.analyse.rules.serverless import SERVERLESS_CANDIDATE, SERVERLESS_OVERSIZED
from auditor.analyse.rules.traffic import RISING_QUEUE_LATENCY
from auditor.analyse.usage import compute_seconds_per_month
from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.config import AuditConfig
from auditor.models import Finding, Recommendation, Severity
from auditor.recommend.sizing import rightsize


def severity_for_saving(monthly_savings: float) -> Severity:
    if monthly_savings >= 1000:
        return Severity.HIGH
    if monthly_savings >= 100:
        return Severity.MEDIUM
    return Severity.LOW


def attach_recommendations(
    findings: list[Finding],
    assessments: dict[str, EndpointAssessment],
    catalog: Catalog,
    config: AuditConfig,
) -> list[Finding]:
    advised: list[Finding] = []
    for finding in findings:
        assessment = assessments.get(finding.endpoint)
        handler = _HANDLERS.get(finding.rule)
        if assessment is None or handler is None:
            advised.append(finding)
            continue
        result = handler(finding, assessment, catalog, assessment.config or config)
        if result is not None:
            advised.append(result)
    return _drop_repeated_count_advice(advised, assessments)


def _drop_repeated_count_advice(findings: list[Finding], assessments: dict[str, EndpointAssessment]) -> list[Finding]:
    """Where the cheapest shape is the current type with fewer instances, `overprovisioned-count`
    already says so: the `underutilized` finding would repeat it."""
    counted = {(f.endpoint, f.variant) for f in findings if f.rule == OVERPROVISIONED_COUNT.id and f.recommendation}

    def repeats(f: Finding) -> bool:
        if f.rule != UNDERUTILIZED.id or f.recommendation is None or (f.endpoint, f.variant) not in counted:
            return False
        va = _variant(f, assessments[f.endpoint])
        return va is not None and f.recommendation.instance_type == va.variant.instance_type

    return [f for f in findings if not repeats(f)]


def _variant(finding: Finding, assessment: EndpointAssessment) -> VariantAssessment | None:
    return next((v for v in assessment.variants if v.variant.name == finding.variant), None)


def _with(finding: Finding, recommendation: Recommendation, message: str, severity: Severity | None = None,
          **evidence: object) -> Finding:
    return replace(
        finding,
        message=message,
        recommendation=recommendation,
        severity=severity or finding.severity,
        evidence={**finding.evidence, **evidence},
    )


def _advise_delete(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    costs = [va.monthly_cost_usd for va in assessment.variants]
    if any(c is None for c in costs):
        return replace(finding, message=f"{finding.message} Delete it (no list price for its region: saving unknown).")
    total = round(sum(c for c in costs if c is not None), 2)
    recommendation = Recommendation("delete", None, 0, current_monthly_usd=total, recommended_monthly_usd=0.0)
    return _with(finding, recommendation, f"{finding.message} Delete it to save ${total:,.2f}/month.")


def _advise_resize(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    va = _variant(finding, assessment)
    if va is None or va.shape is None or va.utilization is None:
        return None
    result = rightsize(va.utilization, va.shape, va.variant.instance_count, assessment.endpoint.region, catalog,
                       config.recommend)
    if result is None:
        return None
    rec = result.recommendation
    demand = result.demand
    held = [f"{demand.cpu_cores:.1f} of {result.shape.vcpu * rec.instance_count} vCPU"] if demand.cpu_cores is not None else []
    if demand.memory_gib is not None:
        held.append(f"{demand.memory_gib:.1f} of {result.shape.memory_gib:g} GiB per instance")
    if demand.accelerators is not None:
        held.append(f"{demand.accelerators:.2f} of {result.shape.gpu_count * rec.instance_count} GPUs")
    message = (
        f"{finding.message}. {rec.instance_count} x {rec.instance_type} holds the "
        f"{config.recommend.peak_statistic} peak ({'; '.join(held)}) at <= {config.recommend.target_utilization:g}%: "
        f"saves ${rec.monthly_savings_usd:,.2f}/month."
    )
    return _with(
        finding, rec, message, severity_for_saving(rec.monthly_savings_usd),
        peak_statistic=config.recommend.peak_statistic,
        peak_demand=demand.as_dict(),
        target_utilization=config.recommend.target_utilization,
        current={"instance_type": va.variant.instance_type, "instance_count": va.variant.instance_count},
        price_source={va.variant.instance_type: va.shape.price_source, rec.instance_type: result.shape.price_source},
    )


def _same_type_count(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, count: int,
                     action: str) -> Recommendation | None:
    va = _variant(finding, assessment)
    if va is None or va.variant.instance_type is None or va.monthly_cost_usd is None:
        return None
    price = catalog.hourly_price(va.variant.instance_type, assessment.endpoint.region)
    if price is None:
        return None
    return Recommendation(action, va.variant.instance_type, count, current_monthly_usd=va.monthly_cost_usd,
                          recommended_monthly_usd=round(price * count * HOURS_PER_MONTH, 2))


def _advise_count(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    rec = _same_type_count(finding, assessment, catalog, int(finding.evidence["needed_count"]), "resize")
    if rec is None:
        return finding
    if rec.monthly_savings_usd < rec.current_monthly_usd * config.recommend.min_savings_percent / 100.0:
        return None
    return _with(finding, rec, f"{finding.message}: saves ${rec.monthly_savings_usd:,.2f}/month.",
                 severity_for_saving(rec.monthly_savings_usd))


def _advise_autoscaling(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    policy = finding.evidence["policy"]
    va = _variant(finding, assessment)
    price = catalog.hourly_price(va.variant.instance_type, assessment.endpoint.region) if va and va.variant.instance_type else None
    if va is None or price is None or va.monthly_cost_usd is None:
        return replace(finding, message=f"{finding.message} (no list price: saving unknown).")
    average = float(finding.evidence["estimated_average_instances"])
    rec = Recommendation("autoscale", va.variant.instance_type, int(policy["MinCapacity"]),
                         current_monthly_usd=va.monthly_cost_usd,
                         recommended_monthly_usd=round(price * average * HOURS_PER_MONTH, 2),
                         details={"policy": policy})
    saving = rec.monthly_savings_usd
    tail = f": saves about ${saving:,.2f}/month." if saving > 0 else ": no saving, but capacity follows the load."
    return _with(finding, rec, finding.message + tail,
                 severity_for_saving(saving) if saving > 0 else Severity.LOW)


def _advise_scale_out(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    scale_out = finding.evidence.get("scale_out")
    if not scale_out:
        return finding
    rec = _same_type_count(finding, assessment, catalog, int(scale_out["needed_count"]), "scale-out")
    if rec is None:
        return finding
    return _with(finding, rec, f"{finding.message} Costs ${-rec.monthly_savings_usd:,.2f}/month more.")


def _advise_serverless_memory(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    va = _variant(finding, assessment)
    current_mb = int(finding.evidence["memory_size_mb"])
    advised_mb = int(finding.evidence["advised_memory_size_mb"])
    seconds = _serverless_seconds(va, assessment)
    region = assessment.endpoint.region
    current_price, advised_price = catalog.serverless_price(current_mb, region), catalog.serverless_price(advised_mb, region)
    if seconds is None or current_price is None or advised_price is None:
        return replace(finding, message=f"{finding.message} (saving unknown: no duration or price).")
    rec = Recommendation("resize-memory", None, 0,
                         current_monthly_usd=round(seconds * current_price, 2),
                         recommended_monthly_usd=round(seconds * advised_price, 2),
                         details={"memory_size_mb": advised_mb})
    return _with(finding, rec, f"{finding.message}: saves ${rec.monthly_savings_usd:,.2f}/month.",
                 severity_for_saving(rec.monthly_savings_usd))


def _advise_serverless(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    va = _variant(finding, assessment)
    memory_mb = int(finding.evidence["memory_size_mb"])
    price = catalog.serverless_price(memory_mb, assessment.endpoint.region)
    if va is None or va.monthly_cost_usd is None or price is None:
        return None
    serverless = round(float(finding.evidence["compute_seconds_per_month"]) * price, 2)
    rec = Recommendation("serverless", None, 0, current_monthly_usd=va.monthly_cost_usd,
                         recommended_monthly_usd=serverless,
                         details={"memory_size_mb": memory_mb, "max_concurrency":
                                  max(1, int(finding.evidence["estimated_peak_concurrency"] * 2 + 1))})
    if rec.monthly_savings_usd < va.monthly_cost_usd * config.rules.serverless_candidate.min_savings_percent / 100.0:
        return None
    return _with(finding, rec, f"{finding.message}: about ${serverless:,.2f}/month instead of "
                               f"${va.monthly_cost_usd:,.2f}.", severity_for_saving(rec.monthly_savings_usd))


def _serverless_seconds(va: VariantAssessment | None, assessment: EndpointAssessment) -> float | None:
    if va is None or va.utilization is None or assessment.window is None:
        return None
    return compute_seconds_per_month(va.raw, va.utilization.invocations, assessment.window)


Handler = Callable[[Finding, EndpointAssessment, Catalog, AuditConfig], Finding | None]
_HANDLERS: dict[str, Handler] = {
    IDLE.id: _advise_delete,
    UNDERUTILIZED.id: _advise_resize,
    OVERPROVISIONED_COUNT.id: _advise_count,
    NO_AUTOSCALING.id: _advise_autoscaling,
    RISING_QUEUE_LATENCY.id: _advise_scale_out,
    SERVERLESS_OVERSIZED.id: _advise_serverless_memory,
    SERVERLESS_CANDIDATE.id: _advise_serverless,
}
