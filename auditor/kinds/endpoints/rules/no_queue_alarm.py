"""no-queue-alarm: an async endpoint with no CloudWatch alarm on its queue (ApproximateAgeOfOldestRequest
or HasBacklogWithoutCapacity), so nobody is told when it falls behind. AWS's guide for async
endpoints advises watching the queue and alerting on it.

Judged only where the region's alarms were read (`Endpoint.queue_alarms` is not None): a denied
DescribeAlarms is an error line, never "no alarm".

The change is data (`details["change"]` of the recommendation: PutMetricAlarm calls as ApiCall dicts,
with `details["rollback"]`), notifying the SNS topic `[apply] alarm_topic_arn`; without a topic no
calls are carried (an alarm that tells no one does not do what this rule asks), and the plan says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment
from auditor.kinds.endpoints.models import Endpoint
from auditor.kinds.endpoints.rule_types import EndpointRule
from auditor.models import Finding, Judged, Recommendation, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting

AGE_METRIC = "ApproximateAgeOfOldestRequest"
STRANDED_METRIC = "HasBacklogWithoutCapacity"
# Five-minute periods, three in a row: a queue that stays behind for a quarter of an hour, not one burst.
ALARM_PERIOD_SECONDS = 300
ALARM_EVALUATION_PERIODS = 3


@dataclass(frozen=True)
class QueueAlarmSettings(RuleSettings):
    latency_goal_seconds: float = setting(600.0, "the oldest request may wait this long before the alarm",
                                          above=0, maximum=7 * 86400)
    peak_multiple: float = setting(2.0, "the age threshold is at least this times the window's p99 hourly maximum "
                                   "(so ordinary peaks do not alarm)", minimum=1, maximum=100)


def alarm_topic(config: AuditConfig) -> str | None:
    """`[apply] alarm_topic_arn`, where the config has that section and key."""
    topic = getattr(getattr(config, "apply", None), "alarm_topic_arn", None)
    return topic if isinstance(topic, str) and topic else None


def age_threshold(assessment: EndpointAssessment, settings: QueueAlarmSettings) -> tuple[float, float | None]:
    """The age threshold in seconds, and the window's p99 of the hourly maxima it rests on (None: no data)."""
    column = f"{AGE_METRIC}:Maximum"
    queue = assessment.queue
    observed = queue[column].dropna().to_numpy(dtype="float64") if column in queue.columns else np.array([])
    p99 = float(np.percentile(observed, 99)) if observed.size else None
    threshold = max(settings.latency_goal_seconds, (p99 or 0.0) * settings.peak_multiple)
    return float(round(threshold)), p99


def check(assessment: EndpointAssessment, config: AuditConfig) -> Finding | None:
    settings: QueueAlarmSettings = settings_of(RULE, config)
    endpoint = assessment.endpoint
    if endpoint.queue_alarms is None or endpoint.queue_alarms:
        return None  # not read (never judged as "no alarm"), or it has one
    threshold, p99 = age_threshold(assessment, settings)
    seen = f"p99 {p99:,.0f} s" if p99 is not None else "the p99 (none published)"
    message = (f"No alarm on {AGE_METRIC} or {STRANDED_METRIC}: nobody is told. "
               f"Alarm on age > {threshold:,.0f} s (goal {settings.latency_goal_seconds:g} s or "
               f"{settings.peak_multiple:g}x {seen}) and on the other.")
    return RULE.finding(endpoint, None, message, {
        "age_threshold_seconds": threshold,
        "observed_age_p99_seconds": None if p99 is None else round(p99, 1),
        "latency_goal_seconds": settings.latency_goal_seconds,
        "peak_multiple": settings.peak_multiple,
    })


def _name(endpoint: str, metric: str) -> str:
    return f"{endpoint}-{metric}"[:255]


def queue_alarm_change(endpoint: Endpoint, threshold: float, topic_arn: str | None) -> dict[str, Any]:
    """The plan's change as data: `change` (PutMetricAlarm ApiCall dicts), `rollback`, `waits_for`;
    without a topic, `change_missing` instead of calls."""
    if topic_arn is None:
        return {"change_missing": "Alarms need [apply] alarm_topic_arn."}
    dimensions = [{"Name": "EndpointName", "Value": endpoint.name}]
    common: dict[str, Any] = {"Namespace": "AWS/SageMaker", "Dimensions": dimensions, "Statistic": "Maximum",
                              "Period": ALARM_PERIOD_SECONDS, "EvaluationPeriods": ALARM_EVALUATION_PERIODS,
                              "DatapointsToAlarm": ALARM_EVALUATION_PERIODS, "TreatMissingData": "notBreaching",
                              "ActionsEnabled": True, "AlarmActions": [topic_arn], "OKActions": [topic_arn]}
    age = _name(endpoint.name, AGE_METRIC)
    stranded = _name(endpoint.name, STRANDED_METRIC)
    calls = [
        {"service": "cloudwatch", "operation": "PutMetricAlarm",
         "params": {**common, "AlarmName": age, "MetricName": AGE_METRIC, "Threshold": threshold,
                    "ComparisonOperator": "GreaterThanThreshold",
                    "AlarmDescription": f"sagemaker-auditor: the oldest request of {endpoint.name} waited over "
                                        f"{threshold:g} s"[:1024]},
         "purpose": f"alarm when {endpoint.name}'s oldest queued request is older than {threshold:g} s"},
        {"service": "cloudwatch", "operation": "PutMetricAlarm",
         "params": {**common, "AlarmName": stranded, "MetricName": STRANDED_METRIC, "Threshold": 1.0,
                    "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                    "AlarmDescription": f"sagemaker-auditor: requests wait for {endpoint.name} with no "
                                        "instance running"[:1024]},
         "purpose": f"alarm when requests wait for {endpoint.name} with no instance running"},
    ]
    return {"change": calls, "rollback": f"DeleteAlarms {age}, {stranded} (cloudwatch).", "waits_for": None}


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    """No money: the recommendation carries the alarms (the running cost stays as it is). Without a
    topic there is no change to carry, so no recommendation (and no plan): the message says why."""
    change = queue_alarm_change(assessment.endpoint, float(finding.evidence["age_threshold_seconds"]),
                                alarm_topic(config))
    if "change_missing" in change:
        return replace(finding, message=f"{finding.message} {change['change_missing']}")
    current = round(sum(va.monthly_cost_usd or 0.0 for va in assessment.variants), 2)
    variant = assessment.variants[0].variant if assessment.variants else None
    rec = Recommendation("queue-alarm", variant.instance_type if variant else None,
                         variant.instance_count if variant else 0, current_monthly_usd=current,
                         recommended_monthly_usd=current,
                         details={"advice": "add queue alarms",
                                  **change})
    return priced(finding, rec, severity=finding.severity)


RULE = EndpointRule(
    id="no-queue-alarm",
    title="No queue alarm",
    severity=Severity.LOW,
    remediation="Add queue alarms that notify the team.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-monitor.html",
    judges=frozenset({Judged.ASYNC}),
    settings=QueueAlarmSettings,
    threshold_field="latency_goal_seconds",
    check=check,
    price=price,
)
