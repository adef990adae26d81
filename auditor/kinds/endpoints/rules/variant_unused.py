"""variant-unused: a production variant routed no traffic (weight 0) that served nothing in the
window while another variant of the endpoint did: the leftover of an A/B test or a rollout, billed
in full for nothing. The advice is to remove the variant, not to make it smaller."""

from __future__ import annotations

from dataclasses import replace

from auditor.analyse.rules.base import Phase, RuleSettings
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.pricing_steps import variant_of
from auditor.kinds.endpoints.rule_types import VariantRule
from auditor.kinds.endpoints.rules.insufficient_data import withheld_idle_verdict
from auditor.models import Finding, Judged, Recommendation, Severity
from auditor.recommend.pricing import priced


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    variant = va.variant
    if variant.weight is None or variant.weight > 0 or va.utilization is None:
        return None  # weight unknown, or routed traffic: judged like any live variant
    # A weight-0 variant still serves requests that name it (TargetVariant): only silence counts.
    # Invocations are published only while requests are served: no datapoint is no request.
    if va.utilization.invocations:
        return None
    served = {other.variant.name: other.utilization.invocations for other in assessment.variants
              if other is not va and not other.variant.shadow and other.utilization is not None
              and other.utilization.invocations}
    if not served:
        return None  # nothing served at all: the endpoint is judged as a whole (idle)
    days = va.utilization.instance_metric_days
    withheld = withheld_idle_verdict(assessment.endpoint, variant.name, RULE.id,
                                     f"Variant {variant.name} (weight 0) served no invocation", days, config)
    if withheld is not None:
        return withheld  # no verdict: the variant is judged no further
    others = ", ".join(f"{name} served {count:,.0f}" for name, count in sorted(served.items()))
    return RULE.finding(
        assessment.endpoint, variant.name,
        f"Variant {variant.name} ({variant.instance_count} x {variant.instance_type}) has weight 0 and served no "
        f"invocation in {days:.1f} days while {others}",
        {
            "weight": variant.weight,
            "invocations": va.utilization.invocations or 0.0,
            "instance_metric_days": days,
            "served_by_other_variants": served,
            "instance_count": variant.instance_count,
        },
    )


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    va = variant_of(finding, assessment)
    if va is None or va.monthly_cost_usd is None:
        return replace(finding, message=f"{finding.message}: remove the variant (no list price: saving unknown).")
    remaining = [v.variant.name for v in assessment.variants
                 if v.variant.name != va.variant.name and not v.variant.shadow]
    rec = Recommendation("remove-variant", va.variant.instance_type, 0, current_monthly_usd=va.monthly_cost_usd,
                         recommended_monthly_usd=0.0, details={"remaining_variants": remaining})
    return priced(finding, rec, f"{finding.message}: remove the variant to save ${rec.monthly_savings_usd:,.2f}/month.")


RULE = VariantRule(
    id="variant-unused",
    title="Variant that serves nothing",
    severity=Severity.MEDIUM,
    remediation="Create an endpoint config without the variant (the others unchanged) and update the endpoint "
                "to it (UpdateEndpoint); the variant's instances stop being billed.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/model-ab-testing.html",
    judges=frozenset({Judged.REAL_TIME}),
    phase=Phase.EXCLUSIVE,
    settings=RuleSettings,
    check=check,
    price=price,
)
