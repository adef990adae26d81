"""data-gap: the request metrics say nobody used the endpoint, but its instances were busy.

Either a metric is missing (not published for this kind, a broken integration, a model that is
called some other way) or the instances work on their own. Either way it is not idle, and it is
judged by the other rules; this note says what was seen so nobody acts on the silence.
"""

from __future__ import annotations

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.config import AuditConfig
from auditor.kinds.endpoints.activity import endpoint_activity
from auditor.kinds.endpoints.assessment import EndpointAssessment
from auditor.kinds.endpoints.rule_types import INSTANCE_KINDS, EndpointRule
from auditor.kinds.endpoints.rules.idle import RULE as IDLE
from auditor.kinds.endpoints.rules.idle import IdleSettings
from auditor.models import Finding, Severity


def check(assessment: EndpointAssessment, config: AuditConfig) -> Finding | None:
    idle: IdleSettings = settings_of(IDLE, config)  # "idle" and "busy" mean the same for both rules
    activity = endpoint_activity(assessment, idle.idle_ceiling_percent)
    if not activity.busy or activity.requests or activity.queue_waiting:
        return None
    busy = ", ".join(f"{label} p95 {value:.0f}%" for label, value in sorted(activity.busy.items()))
    silent = activity.requests_metric + ("" if activity.requests is None else " (all zero)")
    if activity.requests_metric == "TotalProcessingTime":
        silent += " and the queue metrics" if not activity.queue else ""
    return RULE.finding(
        assessment.endpoint, None,
        f"No requests recorded in {silent} while the instances were busy ({busy}): not judged idle. "
        "Check that the metric is published for this endpoint.",
        {"missing_metric": activity.requests_metric, "requests": activity.requests, "busy": activity.busy,
         "queue_max": activity.queue},
    )


RULE = EndpointRule(
    id="data-gap",
    title="Busy instances, silent request metrics",
    severity=Severity.INFO,
    remediation="Find out why the request metric is silent (not published for this endpoint kind, a client "
                "that bypasses the endpoint, or work the container does on its own) before acting on traffic.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html",
    judges=INSTANCE_KINDS,
    settings=RuleSettings,
    check=check,
)
