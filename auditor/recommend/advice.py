"""Attach a priced recommendation to each finding that has one.

An `underutilized` candidate is kept only where a cheaper shape holds the observed peak: a
resource under its threshold is not waste when nothing cheaper can carry the others.
"""

from __future__ import annotations

from dataclasses import replace

from auditor.analyse.rules import IDLE, UNDERUTILIZED, EndpointAssessment
from auditor.config import AuditConfig
from auditor.models import Finding, Recommendation, Severity
from auditor.recommend.catalog import Catalog
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
        if finding.rule == IDLE.id and assessment is not None:
            advised.append(_advise_delete(finding, assessment))
        elif finding.rule == UNDERUTILIZED.id and assessment is not None:
            resized = _advise_resize(finding, assessment, catalog, config)
            if resized is not None:
                advised.append(resized)
        else:
            advised.append(finding)
    return advised


def _advise_delete(finding: Finding, assessment: EndpointAssessment) -> Finding:
    costs = [va.monthly_cost_usd for va in assessment.variants]
    if any(c is None for c in costs):
        return replace(finding, message=f"{finding.message} Delete it (no list price for its region: saving unknown).")
    total = round(sum(c for c in costs if c is not None), 2)
    recommendation = Recommendation(
        action="delete", instance_type=None, instance_count=0,
        current_monthly_usd=total, recommended_monthly_usd=0.0,
    )
    return replace(
        finding,
        message=f"{finding.message} Delete it to save ${total:,.2f}/month.",
        recommendation=recommendation,
    )


def _advise_resize(
    finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig
) -> Finding | None:
    va = next(v for v in assessment.variants if v.variant.name == finding.variant)
    if va.shape is None or va.utilization is None:
        return None
    result = rightsize(
        va.utilization, va.shape, va.variant.instance_count, assessment.endpoint.region, catalog, config.recommend
    )
    if result is None:
        return None
    rec = result.recommendation
    target = config.recommend.target_utilization
    demand = result.demand
    held = [f"{demand.cpu_cores:.1f} of {result.shape.vcpu * rec.instance_count} vCPU"] if demand.cpu_cores is not None else []
    if demand.memory_gib is not None:
        held.append(f"{demand.memory_gib:.1f} of {result.shape.memory_gib:g} GiB per instance")
    if demand.accelerators is not None:
        held.append(f"{demand.accelerators:.2f} of {result.shape.gpu_count * rec.instance_count} GPUs")
    message = (
        f"{finding.message}. {rec.instance_count} x {rec.instance_type} holds the "
        f"{config.recommend.peak_statistic} peak ({'; '.join(held)}) at <= {target:g}%: "
        f"saves ${rec.monthly_savings_usd:,.2f}/month."
    )
    evidence = {
        **finding.evidence,
        "peak_statistic": config.recommend.peak_statistic,
        "peak_demand": demand.as_dict(),
        "target_utilization": target,
        "current": {"instance_type": va.variant.instance_type, "instance_count": va.variant.instance_count},
        "price_source": {
            va.variant.instance_type: va.shape.price_source,
            rec.instance_type: result.shape.price_source,
        },
    }
    return replace(
        finding,
        severity=severity_for_saving(rec.monthly_savings_usd),
        message=message,
        evidence=evidence,
        recommendation=rec,
    )
