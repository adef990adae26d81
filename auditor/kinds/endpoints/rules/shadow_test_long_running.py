"""shadow-test-long-running: a shadow variant (billed instances that receive a copy of live traffic
and answer nobody) still running after `max_days`. Its age is read from the endpoint's last update,
the latest moment it can have been deployed: a lower bound, so the days claimed are never more than
it really ran."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.pricing_steps import variant_of
from auditor.kinds.endpoints.rule_types import VariantRule
from auditor.models import Finding, Judged, Recommendation, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting


@dataclass(frozen=True)
class ShadowSettings(RuleSettings):
    max_days: int = setting(14, "a shadow test running at least this long is a finding", minimum=1, maximum=3650)


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    settings: ShadowSettings = settings_of(RULE, config)
    endpoint = assessment.endpoint
    since = endpoint.last_modified_at
    if not va.variant.shadow or since is None:
        return None
    now = endpoint.created_at + timedelta(days=assessment.age_days)
    days = (now - since).total_seconds() / 86400
    if days < settings.max_days:
        return None
    copies = va.utilization.invocations if va.utilization else None
    served = f"; it answered {copies:,.0f} copied requests in the window" if copies else ""
    return RULE.finding(
        endpoint, va.variant.name,
        f"Shadow variant {va.variant.name} ({va.variant.instance_count} x {va.variant.instance_type}) has run for "
        f"at least {days:.0f} days (the endpoint was last updated {since:%Y-%m-%d}), longer than the "
        f"{settings.max_days}-day limit for a shadow test{served}",
        {
            "running_days_at_least": round(days, 1),
            "since": since.isoformat(),
            "max_days": settings.max_days,
            "instance_count": va.variant.instance_count,
            "copied_invocations": copies,
        },
    )


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    va = variant_of(finding, assessment)
    if va is None or va.monthly_cost_usd is None:
        return replace(finding, message=f"{finding.message}: end it (no list price: saving unknown).")
    rec = Recommendation("end-shadow-test", va.variant.instance_type, 0, current_monthly_usd=va.monthly_cost_usd,
                         recommended_monthly_usd=0.0)
    return priced(finding, rec, f"{finding.message}: ending it saves ${rec.monthly_savings_usd:,.2f}/month.")


RULE = VariantRule(
    id="shadow-test-long-running",
    title="Shadow test still running",
    severity=Severity.MEDIUM,
    remediation="Conclude the shadow test: promote the shadow variant or drop it, by updating the endpoint to a "
                "config without ShadowProductionVariants (or stop the inference experiment that runs it).",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/shadow-tests.html",
    judges=frozenset({Judged.REAL_TIME}),
    settings=ShadowSettings,
    threshold_field="max_days",
    shadow_variants=True,
    check=check,
    price=price,
)
