"""Helpers the rules' pricing steps share: attach a recommendation, price a count, grade a saving."""

from __future__ import annotations

from dataclasses import replace

from auditor.analyse.assessment import EndpointAssessment, VariantAssessment, price_usage
from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.config import AuditConfig
from auditor.models import CountProposal, Finding, Recommendation, Severity


def severity_for_saving(monthly_savings: float) -> Severity:
    if monthly_savings >= 1000:
        return Severity.HIGH
    if monthly_savings >= 100:
        return Severity.MEDIUM
    return Severity.LOW


def priced(finding: Finding, recommendation: Recommendation, message: str | None = None,
           severity: Severity | None = None, **evidence: object) -> Finding:
    """The finding with its recommendation; severity from the saving unless given."""
    return replace(
        finding,
        message=finding.message if message is None else message,
        recommendation=recommendation,
        severity=severity or severity_for_saving(max(recommendation.monthly_savings_usd, 0.0)),
        evidence={**finding.evidence, **evidence},
    )


def variant_of(finding: Finding, assessment: EndpointAssessment) -> VariantAssessment | None:
    return next((v for v in assessment.variants if v.variant.name == finding.variant), None)


def price_fewer_instances(finding: Finding, assessment: EndpointAssessment, catalog: Catalog,
                          config: AuditConfig) -> Finding | None:
    """The pricing step of a rule that proposes fewer instances of the same type (a CountProposal):
    dropped when it saves less than recommend.min_savings_percent."""
    assert isinstance(finding.proposal, CountProposal)
    rec = same_type_count(finding, assessment, catalog, finding.proposal.instance_count, "resize")
    if rec is None:
        return finding
    if rec.monthly_savings_usd < rec.current_monthly_usd * config.recommend.min_savings_percent / 100.0:
        return None
    return priced(finding, rec, f"{finding.message}: saves ${rec.monthly_savings_usd:,.2f}/month.")


def same_type_count(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, count: int,
                    action: str) -> Recommendation | None:
    """The variant's instance type at another count, priced against what it costs now."""
    va = variant_of(finding, assessment)
    if va is None or va.variant.instance_type is None or va.monthly_cost_usd is None:
        return None
    price = catalog.usage_price(va.variant.instance_type, assessment.endpoint.region, price_usage(assessment.endpoint))
    if price is None:
        return None
    return Recommendation(action, va.variant.instance_type, count, current_monthly_usd=va.monthly_cost_usd,
                          recommended_monthly_usd=round(price * count * HOURS_PER_MONTH, 2))
