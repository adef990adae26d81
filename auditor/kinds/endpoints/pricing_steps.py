"""Pricing steps that rules over endpoints share: the variant a finding is about, and the same
instance type at another count, priced against what the variant costs now."""

from __future__ import annotations

from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.models import price_usage
from auditor.models import CountProposal, Finding, Recommendation
from auditor.recommend.pricing import priced


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
