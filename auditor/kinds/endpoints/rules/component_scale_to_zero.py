"""component-scale-to-zero: an endpoint that hosts inference components, with managed instance
scaling, whose components had no invocation for long stretches that follow no weekly pattern.

The hours come from the components' Invocations (AWS/SageMaker, InferenceComponentName; the variant
publishes none for them): an hour the variant's instances were seen in with no component invocation
is idle; runs of at least `min_idle_hours` are the stretches. Where off-hours finds a weekly pattern
on the same sum (its `weekly_off_periods`, with its settings) off-hours is the plan (scheduled copies
to zero and back): this rule does not fire, so exactly one of the two speaks.

The plan follows AWS's "Scale an endpoint to zero instances": a new endpoint config whose variant's
ManagedInstanceScaling has MinInstanceCount 0 (the `managed-scaling` action, kinds/endpoints/change.py),
then, for each component, RegisterScalableTarget with MinCapacity 0, a target-tracking policy on
invocations per copy where it has none (what takes the copies to zero), and the step-scaling policy
with its CloudWatch alarm on NoCapacityInvocationFailures that provisions again when a request
arrives (the alarm's action: the policy's ARN, an answer reference). Saving: the instance-hours of
the stretches, less `scale_in_hours` of each. While the endpoint is at zero a request fails: AWS says
provisioning takes several minutes, during which invocations produce an error.

Judged only where the region's scaling targets were read (a denied DescribeScalableTargets or
DescribeScalingPolicies is an error line) and every component was described.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment
from auditor.kinds.endpoints.autoscaling import COPY_DIMENSION, component_resource_id
from auditor.kinds.endpoints.idle_runs import (
    hourly_grid,
    idle_saving,
    instances_per_hour,
    on_grid,
    runs_evidence,
    runs_text,
    saved_runs,
)
from auditor.kinds.endpoints.models import Endpoint, EndpointKind, InferenceComponent
from auditor.kinds.endpoints.rule_types import EndpointRule
from auditor.kinds.endpoints.rules import off_hours
from auditor.models import Finding, Judged, Recommendation, Severity, answer_reference
from auditor.recommend.pricing import priced
from auditor.schema import setting

GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html"
NO_CAPACITY = "NoCapacityInvocationFailures"
INSTANCE_SEEN = "CPUUtilization:Maximum"
# AWS's step policy for a component at zero: one copy (and the instance it needs) once the alarm fires.
STEP_CONFIGURATION = {"AdjustmentType": "ChangeInCapacity", "MetricAggregationType": "Maximum", "Cooldown": 60,
                      "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}
COLD_START = ("while the endpoint is at zero a request fails: AWS says provisioning an instance again takes "
              "several minutes, during which any attempt to invoke the endpoint produces an error (callers must "
              "retry)")


@dataclass(frozen=True)
class ComponentZeroSettings(RuleSettings):
    min_idle_hours: int = setting(6, "a stretch without any component invocation at least this many hours long "
                                  "counts toward scaling to zero", minimum=1, maximum=24 * 30)
    scale_in_hours: float = setting(1.0, "hours of each idle stretch before the copies and then the instances reach "
                                    "zero (no saving in them)", minimum=0, maximum=24)


def check(assessment: EndpointAssessment, config: AuditConfig) -> Finding | None:
    settings: ComponentZeroSettings = settings_of(RULE, config)
    endpoint = assessment.endpoint
    grid = hourly_grid(assessment.window)
    production = [va for va in assessment.variants if not va.variant.shadow]
    if grid is None or endpoint.kind is not EndpointKind.REAL_TIME or not endpoint.inference_components \
            or not endpoint.inference_components_listed or not endpoint.autoscaling_known or len(production) != 1:
        return None
    (va,) = production
    managed = va.variant.managed_scaling
    if managed is None or managed.min_instances == 0 or assessment.component_calls.empty \
            or any(c.copy_count is None for c in endpoint.inference_components):
        return None  # no managed scaling (component-packing offers it), already to zero, or unknown
    seen = on_grid(va.raw, INSTANCE_SEEN, grid).notna()
    calls = assessment.component_calls.reindex(grid).fillna(0.0).sum(axis=1)[seen]
    if calls.empty:
        return None
    if off_hours.weekly_off_periods(assessment, config):
        return None  # a weekly pattern: off-hours' plan (scheduled copies to zero and back)
    idle = (calls.reindex(grid) == 0)  # hours not seen are NaN: not idle
    runs = saved_runs(idle, instances_per_hour(va, grid), settings.min_idle_hours, settings.scale_in_hours)
    saved = round(sum(r.saved_instance_hours for r in runs), 2)
    if not runs or saved <= 0:
        return None
    stretches = f"{len(runs)} stretch{'es' if len(runs) > 1 else ''}"
    message = (f"No component invocation for {sum(r.hours for r in runs)} h in {stretches} of "
               f"{settings.min_idle_hours} h or more ({runs_text(runs)}), on no weekly pattern, with "
               f"MinInstanceCount {managed.min_instances}. Let it scale to zero ({saved:g} instance-hours).")
    return RULE.finding(endpoint, va.variant.name, message, {
        "idle_stretches": runs_evidence(runs),
        "idle_hours": sum(r.hours for r in runs),
        "saved_instance_hours": saved,
        "min_instance_count": managed.min_instances,
        "peak_invocations_per_hour": {name: float(series.max()) for name, series in
                                      assessment.component_calls.reindex(grid).fillna(0.0).items()},
        "scale_in_hours": settings.scale_in_hours,
    })


def managed_instance_scaling(endpoint: Endpoint, variant: str, maximum: int | None) -> dict[str, Any]:
    """The variant's ManagedInstanceScaling as its config states it (ScaleInPolicy kept), with
    MinInstanceCount 0 and the running maximum."""
    stated: dict[str, Any] = {}
    for v in (endpoint.config_description or {}).get("ProductionVariants") or []:
        if v.get("VariantName") == variant and isinstance(v.get("ManagedInstanceScaling"), dict):
            stated = dict(v["ManagedInstanceScaling"])
    scaling = {**stated, "Status": "ENABLED", "MinInstanceCount": 0}
    if maximum is not None:
        scaling["MaxInstanceCount"] = maximum
    return scaling


POLICY_KINDS = ("invocations-per-copy", "scale-from-zero")  # the policies a component gets (binding.py)


def policy_name(component: str, kind: str) -> str:
    return f"{component}-{kind}"[:256]


def alarm_name(component: str) -> str:
    return f"{component}-{NO_CAPACITY}-scale-from-zero"[:255]


def component_calls(component: InferenceComponent, peak_per_hour: float) -> tuple[list[dict[str, Any]], list[str]]:
    """For one component: RegisterScalableTarget at MinCapacity 0 (its maximum kept), target tracking
    on invocations per copy where it has none, AWS's step policy and its alarm where it does not have
    them already; and how to undo them."""
    resource = component_resource_id(component.name)
    scaling = component.autoscaling
    copies = int(component.copy_count or 0)
    maximum = scaling.max_capacity if scaling else max(copies, 1)
    common = {"ServiceNamespace": "sagemaker", "ResourceId": resource, "ScalableDimension": COPY_DIMENSION}
    calls: list[dict[str, Any]] = [{
        "service": "application-autoscaling", "operation": "RegisterScalableTarget",
        "params": {**common, "MinCapacity": 0, "MaxCapacity": maximum},
        "purpose": f"let {component.name}'s copies scale between 0 and {maximum}"}]
    undo = [f"RegisterScalableTarget {resource} MinCapacity {scaling.min_capacity} MaxCapacity {maximum}"
            if scaling else f"DeregisterScalableTarget {resource}"]
    policies = scaling.read_policies if scaling else ()
    if not any(p.policy_type == "TargetTrackingScaling" for p in policies):
        # Today's copies at the window's busiest hour: fewer below it, none without requests.
        target = max(round(peak_per_hour / 60.0 / max(copies, 1), 2), 0.01)
        name = policy_name(component.name, "invocations-per-copy")
        calls.append({
            "service": "application-autoscaling", "operation": "PutScalingPolicy",
            "params": {**common, "PolicyName": name, "PolicyType": "TargetTrackingScaling",
                       "TargetTrackingScalingPolicyConfiguration": {
                           "TargetValue": target, "ScaleInCooldown": 300, "ScaleOutCooldown": 300,
                           "PredefinedMetricSpecification": {
                               "PredefinedMetricType": "SageMakerInferenceComponentInvocationsPerCopy"}}},
            "purpose": f"scale {component.name}'s copies on invocations per copy (target {target:g} a minute: "
                       f"{copies} at the window's busiest hour), to zero without requests"})
        undo.insert(0, f"DeleteScalingPolicy {name} on {resource}")
    step = policy_name(component.name, "scale-from-zero")
    # Only this rule's own step policy is known to wake the component at zero: the alarms of another
    # (on latency, on GPU use) are not read and see no datapoint while no copy runs.
    if not any(p.policy_type == "StepScaling" and p.name == step for p in policies):
        alarm = alarm_name(component.name)
        calls += [
            {"service": "application-autoscaling", "operation": "PutScalingPolicy",
             "params": {**common, "PolicyName": step, "PolicyType": "StepScaling",
                        "StepScalingPolicyConfiguration": STEP_CONFIGURATION},
             "purpose": f"add a copy of {component.name} (and the instance it needs) when {alarm} fires"},
            # AWS's example alarms above 1 refused request a minute; this one at 1, so the first wakes it.
            {"service": "cloudwatch", "operation": "PutMetricAlarm",
             "params": {"AlarmName": alarm, "Namespace": "AWS/SageMaker", "MetricName": NO_CAPACITY,
                        "Dimensions": [{"Name": "InferenceComponentName", "Value": component.name}],
                        "Statistic": "Sum", "Period": 60, "EvaluationPeriods": 1, "DatapointsToAlarm": 1,
                        "Threshold": 1.0, "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                        "AlarmDescription": f"sagemaker-auditor: provision {component.name} again when it is "
                                            "invoked with no instance"[:1024],
                        "AlarmActions": [answer_reference("PutScalingPolicy", step, "PolicyARN")]},
             "purpose": f"trigger {step} when {component.name} is invoked with no instance running"},
        ]
        undo[:0] = [f"DeleteAlarms {alarm} (cloudwatch)", f"DeleteScalingPolicy {step} on {resource}"]
    return calls, undo


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    settings: ComponentZeroSettings = settings_of(RULE, config)
    endpoint = assessment.endpoint
    (va,) = [va for va in assessment.variants if not va.variant.shadow]
    variant = va.variant
    priced_idle = idle_saving(finding.evidence, assessment, va, catalog)
    if priced_idle is None:
        return replace(finding, message=f"{finding.message} (no list price: saving unknown).")
    current, saving = priced_idle
    peaks = finding.evidence["peak_invocations_per_hour"]
    then: list[dict[str, Any]] = []
    undo: list[str] = []
    for component in endpoint.inference_components:
        calls, steps = component_calls(component, float(peaks.get(component.name, 0.0)))
        then += calls
        undo += steps
    maximum = variant.managed_scaling.max_instances if variant.managed_scaling else None
    basis = [COLD_START, f"the window had {finding.evidence['idle_hours']} hours without any component invocation "
             f"in stretches of {settings.min_idle_hours} h or more, on no weekly pattern",
             f"what AWS's guide sets up: MinInstanceCount 0 and, per component, MinCapacity 0 with a step policy "
             f"on {NO_CAPACITY} ({GUIDE})"]
    rec = Recommendation("managed-scaling", variant.instance_type, 0, current_monthly_usd=current,
                         recommended_monthly_usd=round(current - saving, 2), details={
                             "advice": "let it scale to zero when idle",
                             "managed_instance_scaling": managed_instance_scaling(endpoint, variant.name, maximum),
                             "then": then,
                             "rollback_then": "; then ".join(undo) + ".",
                             "start_up": COLD_START[0].upper() + COLD_START[1:] + ".",
                             "risk": {"level": "medium", "basis": basis}})
    text = f"{finding.message} ${saving:,.2f}/month; {COLD_START}."
    return priced(finding, rec, text)


RULE = EndpointRule(
    id="component-scale-to-zero",
    title="Components scale to zero",
    severity=Severity.MEDIUM,
    remediation="Let the endpoint scale to zero: MinInstanceCount 0, components at MinCapacity 0 with a step policy.",
    docs=GUIDE,
    judges=frozenset({Judged.REAL_TIME}),
    settings=ComponentZeroSettings,
    threshold_field="min_idle_hours",
    check=check,
    price=price,
)
