"""idle: an InService endpoint that nothing shows working: no requests (Invocations for real-time,
processed requests for async), no request waiting in an async queue, and instances whose CPU and
GPU stay under a small ceiling. An endpoint whose request metrics are silent while its instances
are busy is not idle (see data-gap)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from auditor.analyse.rules.base import Phase, RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.activity import endpoint_activity
from auditor.kinds.endpoints.assessment import EndpointAssessment
from auditor.kinds.endpoints.rule_types import INSTANCE_KINDS, EndpointRule
from auditor.kinds.endpoints.rules.insufficient_data import withheld_idle_verdict
from auditor.models import Finding, Recommendation, Resource, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting


@dataclass(frozen=True)
class IdleSettings(RuleSettings):
    max_invocations: float = setting(0.0, "at most this many invocations in the window is idle", minimum=0)
    idle_ceiling_percent: float = setting(5.0, "CPU and GPU (per vCPU / GPU, p95 of hourly maxima) at or under this",
                                          minimum=0, maximum=100)


def check(assessment: EndpointAssessment, config: AuditConfig) -> Finding | None:
    settings: IdleSettings = settings_of(RULE, config)
    limit = settings.max_invocations
    if any(va.utilization is None for va in assessment.variants):
        return None
    activity = endpoint_activity(assessment, settings.idle_ceiling_percent)
    if (activity.requests or 0.0) > limit or activity.queue_waiting or activity.busy:
        return None
    endpoint = assessment.endpoint
    shapes = ", ".join(f"{va.variant.instance_count} x {va.variant.instance_type}" for va in assessment.variants)
    cpu = [va.utilization.by_resource[Resource.CPU].avg for va in assessment.variants
           if va.utilization and Resource.CPU in va.utilization.by_resource]
    cpu_text = f" (CPU avg {max(cpu):.1f}%)" if cpu else ""
    days = min(va.utilization.instance_metric_days for va in assessment.variants if va.utilization)
    invocations = activity.requests or 0.0
    noun = "processed requests" if activity.requests_metric == "TotalProcessingTime" else "invocations"
    what = f"No {noun}" if not invocations else f"Only {invocations:,.0f} {noun}"
    # A delete on a short window (a quiet weekend, a short --lookback-days) is no verdict.
    withheld = withheld_idle_verdict(endpoint, None, RULE.id, f"{what}, CPU and GPU under "
                                     f"{settings.idle_ceiling_percent:g}%", days, config)
    if withheld is not None:
        return withheld
    queue = ", nothing waiting in its queue" if activity.queue else ""
    return RULE.finding(
        endpoint, None,
        f"{what} ({activity.requests_metric}){queue} in {days:.1f} days while {shapes} ran{cpu_text}, "
        f"CPU and GPU under {settings.idle_ceiling_percent:g}%.",
        {
            "invocations": invocations,
            "requests_metric": activity.requests_metric,
            "queue_max": activity.queue,
            "idle_ceiling_percent": settings.idle_ceiling_percent,
            "max_invocations": limit,
            "instance_metric_days": days,
            "lookback_days": config.aws.lookback_days,
        },
    )


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    costs = [va.monthly_cost_usd for va in assessment.variants]
    if any(c is None for c in costs):
        return replace(finding, message=f"{finding.message} Delete it (no list price for its region: saving unknown).")
    total = round(sum(c for c in costs if c is not None), 2)
    recommendation = Recommendation("delete", None, 0, current_monthly_usd=total, recommended_monthly_usd=0.0)
    return priced(finding, recommendation, f"{finding.message} Delete it to save ${total:,.2f}/month.",
                  severity=finding.severity)


RULE = EndpointRule(
    id="idle",
    title="Idle endpoint",
    severity=Severity.HIGH,
    remediation="Delete the endpoint (keep its model and config to re-create it), or move it to serverless.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-delete-resources.html",
    judges=INSTANCE_KINDS,
    settings=IdleSettings,
    threshold_field="max_invocations",
    phase=Phase.EXCLUSIVE,
    check=check,
    price=price,
)
