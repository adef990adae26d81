"""async-scale-from-zero: an async endpoint that cannot start from zero instances, or never goes there.

- Stuck at zero: its variant is registered with Application Auto Scaling at MinCapacity 0 and no
  step-scaling policy is triggered by an alarm on HasBacklogWithoutCapacity. AWS's async autoscaling
  guide: without that policy the endpoint "only begins scaling up from zero after the number of
  backlog requests exceeds the target tracking value", so requests wait. Fires where the window shows
  it: hours with HasBacklogWithoutCapacity 1 and ApproximateBacklogSize above 0. The plan adds the
  guide's fix: PutScalingPolicy (StepScaling, ChangeInCapacity +1 from the alarm's threshold) and
  PutMetricAlarm on HasBacklogWithoutCapacity whose action is that policy (its PolicyARN, an answer
  reference: auditor/models.py). No saving; it says how long requests waited
  (ApproximateAgeOfOldestRequest in those hours).
- Never at zero: idle for long stretches (hours with no backlog and no request processed, at least
  `min_idle_hours` in a row) while its MinCapacity is above 0 (or it is not registered). The plan
  registers MinCapacity 0 (with a target-tracking policy on ApproximateBacklogSizePerInstance where it
  has none, which takes it there), the step policy and its alarm; the saving is the idle
  instance-hours at the async rate, less `scale_in_hours` of each stretch. The first request after
  an idle stretch waits while an instance starts.

Judged only where the region's scaling targets and alarms were read: a denied
DescribeScalableTargets, DescribeScalingPolicies or DescribeAlarms is an error line, never "no policy".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.alarms import BACKLOG_WITHOUT_CAPACITY
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.autoscaling import SCALABLE_DIMENSION, variant_resource_id
from auditor.kinds.endpoints.idle_runs import (
    hourly_grid,
    idle_saving,
    instances_per_hour,
    on_grid,
    runs_evidence,
    runs_text,
    saved_runs,
)
from auditor.kinds.endpoints.models import AutoScaling, Endpoint
from auditor.kinds.endpoints.rule_types import EndpointRule
from auditor.models import Finding, Judged, Recommendation, Severity, answer_reference
from auditor.recommend.pricing import priced
from auditor.schema import setting

GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html"
BACKLOG = "ApproximateBacklogSize:Maximum"
WITHOUT_CAPACITY = f"{BACKLOG_WITHOUT_CAPACITY}:Maximum"
AGE = "ApproximateAgeOfOldestRequest:Maximum"
PROCESSED = "TotalProcessingTime:SampleCount"  # requests processed (async endpoints publish no Invocations)
# The guide's step policy and alarm: one more instance as soon as the alarm fires (two one-minute
# periods with a backlog and no instance), a cooldown of five minutes.
STEP_POLICY_NAME = "HasBacklogWithoutCapacity-ScalingPolicy"
TRACKING_POLICY_NAME = "ApproximateBacklogSizePerInstance-TargetTracking"
STEP_CONFIGURATION = {"AdjustmentType": "ChangeInCapacity", "MetricAggregationType": "Average", "Cooldown": 300,
                      "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}
ALARM_PERIOD_SECONDS = 60
ALARM_EVALUATION_PERIODS = 2
BACKLOG_METRICS = ("ApproximateBacklogSizePerInstance", "ApproximateBacklogSize")
STARTS_AN_INSTANCE = ("a request that arrives at zero instances waits in the queue until an instance has started "
                      "and loaded the model (AWS: requests received at zero instances are queued until the "
                      "endpoint scales up; provisioning an instance takes several minutes; measure yours)")


@dataclass(frozen=True)
class ScaleFromZeroSettings(RuleSettings):
    min_stranded_hours: int = setting(1, "hours with requests waiting at zero instances before the step policy "
                                      "is proposed", minimum=1, maximum=24 * 90)
    min_idle_hours: int = setting(6, "an idle stretch (no backlog, nothing processed) at least this many hours "
                                  "long counts toward scaling to zero", minimum=1, maximum=24 * 30)
    scale_in_hours: float = setting(1.0, "hours of each idle stretch before autoscaling reaches zero (no saving "
                                    "in them)", minimum=0, maximum=24)
    backlog_target: float = setting(5.0, "ApproximateBacklogSizePerInstance target of the target-tracking policy "
                                    "added where the variant has none on its backlog (AWS's guide uses 5)",
                                    above=0, maximum=100000)


def has_step_from_zero(endpoint: Endpoint, scaling: AutoScaling | None) -> bool:
    """A step-scaling policy one of whose alarms watches the endpoint's HasBacklogWithoutCapacity."""
    watching = set(endpoint.backlog_alarms or ())
    return scaling is not None and any(p.policy_type == "StepScaling" and watching.intersection(p.alarms)
                                       for p in scaling.read_policies)


def tracks_backlog(scaling: AutoScaling | None) -> bool:
    """A target-tracking policy on the endpoint's backlog (what takes an async endpoint to zero)."""
    for policy in scaling.read_policies if scaling else ():
        metric = ((policy.configuration or {}).get("CustomizedMetricSpecification") or {}).get("MetricName")
        if policy.policy_type == "TargetTrackingScaling" and metric in BACKLOG_METRICS:
            return True
    return False


def check(assessment: EndpointAssessment, config: AuditConfig) -> Finding | None:
    settings: ScaleFromZeroSettings = settings_of(RULE, config)
    endpoint = assessment.endpoint
    grid = hourly_grid(assessment.window)
    # Scaling targets and alarms both read (None / not known: never judged as "no policy").
    if grid is None or len(assessment.variants) != 1 or not endpoint.autoscaling_known \
            or endpoint.backlog_alarms is None:
        return None
    (va,) = assessment.variants
    scaling = va.variant.autoscaling
    if scaling is not None and scaling.min_capacity == 0:
        # At zero when idle: stuck there unless a step policy starts it (AWS's fix already in place: nothing).
        return None if has_step_from_zero(endpoint, scaling) else _stranded(assessment, va, grid, settings)
    return _idle(assessment, va, grid, settings)


def _stranded(assessment: EndpointAssessment, va: VariantAssessment, grid: pd.DatetimeIndex,
              settings: ScaleFromZeroSettings) -> Finding | None:
    queue = assessment.queue
    stranded = (on_grid(queue, WITHOUT_CAPACITY, grid) >= 1) & (on_grid(queue, BACKLOG, grid) > 0)
    hours = int(stranded.sum())
    if hours < settings.min_stranded_hours:
        return None
    ages = on_grid(queue, AGE, grid)[stranded].dropna()
    waited = None if ages.empty else round(float(ages.max()))
    backlog = float(on_grid(queue, BACKLOG, grid)[stranded].max())
    said = f"requests waited up to {waited:,} s" if waited is not None else "how long requests waited is not published"
    message = (f"MinCapacity 0 with no step-scaling policy on {BACKLOG_WITHOUT_CAPACITY}: in {hours} h up to "
               f"{backlog:g} requests waited with no instance running ({said}). Add AWS's step policy and alarm.")
    return RULE.finding(assessment.endpoint, va.variant.name, message, {
        "case": "stuck-at-zero",
        "hours_with_backlog_without_capacity": hours,
        "max_backlog": backlog,
        "max_wait_seconds": waited,
        "min_capacity": 0,
    })


def _idle(assessment: EndpointAssessment, va: VariantAssessment, grid: pd.DatetimeIndex,
          settings: ScaleFromZeroSettings) -> Finding | None:
    queue = assessment.queue
    backlog = on_grid(queue, BACKLOG, grid)
    processed = on_grid(va.raw, PROCESSED, grid).fillna(0.0)
    # A period without a queue datapoint was not seen (the queue is published every minute): not idle.
    idle = (backlog == 0) & (processed == 0)
    runs = saved_runs(idle, instances_per_hour(va, grid), settings.min_idle_hours, settings.scale_in_hours)
    saved = round(sum(r.saved_instance_hours for r in runs), 2)
    if not runs or saved <= 0:
        return None
    scaling = va.variant.autoscaling
    floor = f"MinCapacity {scaling.min_capacity}" if scaling else "no scaling target"
    stretches = f"{len(runs)} stretch{'es' if len(runs) > 1 else ''}"
    message = (f"Idle {sum(r.hours for r in runs)} h in {stretches} of {settings.min_idle_hours} h or more "
               f"({runs_text(runs)}) with {floor}: never at zero. Let it scale to 0 ({saved:g} instance-hours).")
    return RULE.finding(assessment.endpoint, va.variant.name, message, {
        "case": "never-at-zero",
        "idle_stretches": runs_evidence(runs),
        "idle_hours": sum(r.hours for r in runs),
        "saved_instance_hours": saved,
        "min_capacity": scaling.min_capacity if scaling else None,
        "scale_in_hours": settings.scale_in_hours,
    })


def alarm_name(endpoint: str) -> str:
    return f"{endpoint}-{BACKLOG_WITHOUT_CAPACITY}-scale-from-zero"[:255]


def step_calls(endpoint: str, variant: str) -> list[dict[str, Any]]:
    """The guide's step policy and the alarm that triggers it (its AlarmActions: the policy's ARN,
    from PutScalingPolicy's answer when the change runs)."""
    resource = variant_resource_id(endpoint, variant)
    alarm = alarm_name(endpoint)
    return [
        {"service": "application-autoscaling", "operation": "PutScalingPolicy",
         "params": {"PolicyName": STEP_POLICY_NAME, "ServiceNamespace": "sagemaker", "ResourceId": resource,
                    "ScalableDimension": SCALABLE_DIMENSION, "PolicyType": "StepScaling",
                    "StepScalingPolicyConfiguration": STEP_CONFIGURATION},
         "purpose": f"add one instance to {endpoint} when its alarm {alarm} fires"},
        {"service": "cloudwatch", "operation": "PutMetricAlarm",
         "params": {"AlarmName": alarm, "Namespace": "AWS/SageMaker", "MetricName": BACKLOG_WITHOUT_CAPACITY,
                    "Dimensions": [{"Name": "EndpointName", "Value": endpoint}], "Statistic": "Average",
                    "Period": ALARM_PERIOD_SECONDS, "EvaluationPeriods": ALARM_EVALUATION_PERIODS,
                    "DatapointsToAlarm": ALARM_EVALUATION_PERIODS, "Threshold": 1.0,
                    "ComparisonOperator": "GreaterThanOrEqualToThreshold", "TreatMissingData": "missing",
                    "AlarmDescription": f"sagemaker-auditor: start an instance of {endpoint} when requests wait "
                                        "with none running"[:1024],
                    "AlarmActions": [answer_reference("PutScalingPolicy", STEP_POLICY_NAME, "PolicyARN")]},
         "purpose": f"trigger {STEP_POLICY_NAME} when requests wait for {endpoint} with no instance running"},
    ]


def tracking_params(endpoint: str, variant: str, backlog_target: float) -> dict[str, Any]:
    """The guide's target tracking on ApproximateBacklogSizePerInstance (what takes it to zero)."""
    return {"PolicyName": TRACKING_POLICY_NAME, "ServiceNamespace": "sagemaker",
            "ResourceId": variant_resource_id(endpoint, variant), "ScalableDimension": SCALABLE_DIMENSION,
            "PolicyType": "TargetTrackingScaling",
            "TargetTrackingScalingPolicyConfiguration": {
                "TargetValue": backlog_target,
                "CustomizedMetricSpecification": {
                    "MetricName": "ApproximateBacklogSizePerInstance", "Namespace": "AWS/SageMaker",
                    "Dimensions": [{"Name": "EndpointName", "Value": endpoint}], "Statistic": "Average"}}}


def scale_from_zero_change(endpoint: Endpoint, variant: str, scaling: AutoScaling | None, instance_count: int,
                           backlog_target: float, to_zero: bool) -> dict[str, Any]:
    """The plan's change as data. `to_zero`: register MinCapacity 0 first (keeping the maximum; with
    the guide's target tracking on the backlog where the variant tracks none)."""
    resource = variant_resource_id(endpoint.name, variant)
    calls: list[dict[str, Any]] = []
    undo = []
    if to_zero:
        maximum = scaling.max_capacity if scaling else max(instance_count, 1)
        calls.append({"service": "application-autoscaling", "operation": "RegisterScalableTarget",
                      "params": {"ServiceNamespace": "sagemaker", "ResourceId": resource,
                                 "ScalableDimension": SCALABLE_DIMENSION, "MinCapacity": 0, "MaxCapacity": maximum},
                      "purpose": f"let {endpoint.name} scale between 0 and {maximum} instances"})
        undo.append(f"RegisterScalableTarget {resource} MinCapacity {scaling.min_capacity} MaxCapacity {maximum}"
                    if scaling else f"DeregisterScalableTarget {resource} (it keeps the count it has then)")
        if not tracks_backlog(scaling):
            calls.append({
                "service": "application-autoscaling", "operation": "PutScalingPolicy",
                "params": tracking_params(endpoint.name, variant, backlog_target),
                "purpose": f"scale {endpoint.name} on its backlog per instance (target {backlog_target:g}), to "
                           "zero when nothing waits"})
            undo.insert(0, f"DeleteScalingPolicy {TRACKING_POLICY_NAME} on {resource}")
    if not has_step_from_zero(endpoint, scaling):
        calls += step_calls(endpoint.name, variant)
        undo[:0] = [f"DeleteAlarms {alarm_name(endpoint.name)} (cloudwatch)",
                    f"DeleteScalingPolicy {STEP_POLICY_NAME} on {resource} (application-autoscaling)"]
    return {"change": calls, "rollback": "; then ".join(undo) + ".", "waits_for": None}


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    settings: ScaleFromZeroSettings = settings_of(RULE, config)
    endpoint = assessment.endpoint
    (va,) = assessment.variants
    variant = va.variant
    current = round(va.monthly_cost_usd or 0.0, 2)
    if finding.evidence["case"] == "stuck-at-zero":
        change = scale_from_zero_change(endpoint, variant.name, variant.autoscaling, variant.instance_count,
                                        settings.backlog_target, to_zero=False)
        waited = finding.evidence["max_wait_seconds"]
        basis = [f"adds a policy and an alarm: the instances, model and config stay ({GUIDE})",
                 f"in {finding.evidence['hours_with_backlog_without_capacity']} h of the window requests waited "
                 "with no instance running" + (f", the oldest {waited:,} s" if waited is not None else ""),
                 "once the alarm fires (two one-minute periods), the policy adds one instance; target tracking "
                 "scales on from there and back to zero"]
        rec = Recommendation("scale-from-zero", variant.instance_type, variant.instance_count,
                             current_monthly_usd=current, recommended_monthly_usd=current,
                             details={"advice": "add a step policy that starts an instance from zero", **change,
                                      "risk": {"level": "low", "basis": basis}})
        return priced(finding, rec, severity=finding.severity)
    priced_idle = idle_saving(finding.evidence, assessment, va, catalog)
    if priced_idle is None:
        return replace(finding, message=f"{finding.message} (no list price: saving unknown).")
    current, saving = priced_idle
    change = scale_from_zero_change(endpoint, variant.name, variant.autoscaling, variant.instance_count,
                                    settings.backlog_target, to_zero=True)
    basis = [f"the first request after an idle stretch waits: {STARTS_AN_INSTANCE}",
             "async callers get their results later, not errors: the queue keeps the requests",
             f"the window had {finding.evidence['idle_hours']} idle hours in stretches of "
             f"{settings.min_idle_hours} h or more"]
    rec = Recommendation("scale-to-zero", variant.instance_type, 0, current_monthly_usd=current,
                         recommended_monthly_usd=round(current - saving, 2),
                         details={"advice": "let it scale to zero when idle", **change,
                                  "start_up": STARTS_AN_INSTANCE[0].upper() + STARTS_AN_INSTANCE[1:] + ".",
                                  "risk": {"level": "medium", "basis": basis}})
    text = f"{finding.message} ${saving:,.2f}/month; the first request after idle waits for an instance to start."
    return priced(finding, rec, text)


RULE = EndpointRule(
    id="async-scale-from-zero",
    title="Async scale from zero",
    severity=Severity.MEDIUM,
    remediation="Add a step-scaling policy on HasBacklogWithoutCapacity; let an idle endpoint scale to zero.",
    docs=GUIDE,
    judges=frozenset({Judged.ASYNC}),
    settings=ScaleFromZeroSettings,
    threshold_field="min_idle_hours",
    check=check,
    price=price,
)
