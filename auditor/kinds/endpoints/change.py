"""An endpoint plan's change as AWS requests (docs/plans.md): what `audit apply` sends, in order.
Pure: no AWS.

- A new shape or count (or serverless, or a variant removed): a new endpoint config copied from the
  current one with only that variant changed (every other field kept: models, DataCaptureConfig,
  KmsKeyId, AsyncInferenceConfig, MetricsConfig, tags ...), named `<endpoint>-<plan id>`, then
  UpdateEndpoint with a blue/green deployment ([apply] traffic_shifting: a canary, then the rest;
  or linear steps) that rolls back by itself when a CloudWatch alarm fires: the variant's existing
  alarms on its errors or latency (alarms.py), else alarms the plan defines
  (Invocation5XXErrors, ModelLatency p99).
  Order: everything that can be made first (the config, the alarms), then what removes protection.
  An autoscaled variant whose instance type changes is deregistered just before the UpdateEndpoint
  (AWS's "Update endpoints that use auto scaling"), then registered again as read (capacities,
  SuspendedState) with each target-tracking policy put back as read; what cannot be put back
  faithfully (a step-scaling policy: its alarms name the deleted policy's ARN; settings not read)
  makes the plan at least medium, named in its risk basis (`scaling_risk`).
- What apply creates is tagged `auditor:plan` = the plan id (the config, the alarms); a copied
  config never carries the opt-in tag `auditor:apply` (only people set it).
- Managed instance scaling (`managed-scaling`, design C3): the same copy with only the variant's
  ManagedInstanceScaling replaced by the plan's (details["managed_instance_scaling"]; its
  InitialInstanceCount brought within the new MinInstanceCount-MaxInstanceCount where it is not),
  the same deployment, then the plan's own calls after it (details["then"], ApiCall dicts).
- An autoscaling policy: Application Auto Scaling's RegisterScalableTarget and PutScalingPolicy.
- A delete: DeleteEndpoint only; the endpoint config is kept, so the endpoint can be re-created.
"""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import zip_longest
from typing import Any

from auditor.config import TERMINATION_WAIT_SECONDS, ApplyConfig
from auditor.kinds.endpoints.models import AutoScaling, Endpoint, ReadScalingPolicy, RollbackAlarm
from auditor.models import ApiCall, Change, Plan, PlanOption, Risk, RiskLevel
from auditor.recommend.change import PLAN_TAG, resource_name, tagged

# The fields CreateEndpointConfig takes, in botocore's model (tests/test_plan_change.py holds this
# to it): a copy carries every one the current config has.
CREATE_CONFIG_FIELDS = ("ProductionVariants", "DataCaptureConfig", "KmsKeyId", "AsyncInferenceConfig",
                        "ExplainerConfig", "ShadowProductionVariants", "ExecutionRoleArn", "VpcConfig",
                        "EnableNetworkIsolation", "MetricsConfig", "CrossRegionTrafficConfig")
MANAGED_SCALING = "managed-scaling"  # only the variant's ManagedInstanceScaling replaced (design C3)
CONFIG_ACTIONS = ("resize", "scale-out", "resize+autoscale", "serverless", "resize-memory", "remove-variant",
                  "end-shadow-test", MANAGED_SCALING)
MAX_ROLLBACK_ALARMS = 10  # AutoRollbackConfiguration.Alarms takes at most 10
SCALE_IN_COOLDOWN_SECONDS = 300
SCALE_OUT_COOLDOWN_SECONDS = 60
SCALABLE_DIMENSION = "sagemaker:variant:DesiredInstanceCount"
# Target-tracking metrics that count requests per instance: their target depends on the instance type.
PER_INSTANCE_REQUEST_METRICS = ("SageMakerVariantInvocationsPerInstance",
                                "SageMakerVariantConcurrentRequestsPerModelHighResolution")
# Changes that move a variant off its instances (or drop it): its scalable target goes with them.
LEAVES_INSTANCES = ("serverless", "resize-memory", "remove-variant", "end-shadow-test")


def build_change(plan: Plan, endpoint: Endpoint | None, latency_threshold_ms: float | None,
                 apply: ApplyConfig | None = None) -> Change | None:
    """The requests that apply the plan; None when it is not an endpoint's, or the current config
    (needed to copy it) was not described. `latency_threshold_ms`: the threshold of the ModelLatency
    p99 alarm the plan defines when the variant has no latency alarm of its own (None: none, the
    error alarms alone guard the deployment). `apply`: the deployment's traffic shifting."""
    apply = apply or ApplyConfig()
    if plan.resource.type != "endpoint" or endpoint is None:
        return None
    option = plan.proposed
    if option.action == "delete":
        return Change(
            calls=(ApiCall("sagemaker", "DeleteEndpoint", {"EndpointName": endpoint.name},
                           f"delete endpoint {endpoint.name} (its config {endpoint.config_name} is kept)"),),
            rollback=(f"re-create it: CreateEndpoint EndpointName={endpoint.name} "
                      f"EndpointConfigName={endpoint.config_name}"),
        )
    if option.action == "autoscale" and plan.variant and option.autoscaling:
        calls = _autoscaling_calls(endpoint.name, plan.variant, option.autoscaling, plan.id)
        return Change(calls=tuple(calls), rollback=(
            f"DeregisterScalableTarget for {_resource_id(endpoint.name, plan.variant)} "
            "(the variant keeps the count it has then)"))
    if option.action not in CONFIG_ACTIONS or not plan.variant or endpoint.config_description is None:
        return None
    new_config = resource_name(endpoint.name, plan.id)
    body = _copied_config(endpoint.config_description, plan.variant, option, new_config, plan.id)
    if body is None:
        return None
    # Made first: the config and the alarms; only then what removes protection (the scalable
    # target, where AWS requires it gone), just before the update, and put back right after it.
    scaled = deregistered_target(option, endpoint, plan.variant)
    resource = _resource_id(endpoint.name, plan.variant)
    untagged = ("" if endpoint.config_description.get("Tags") is not None
                else f" (its tags are copied from {endpoint.config_name} when `audit apply` makes it)")
    calls = [ApiCall("sagemaker", "CreateEndpointConfig", body,
                     f"new endpoint config {new_config}: a copy of {endpoint.config_name} with variant "
                     f"{plan.variant} {_described(option)}{untagged}; tagged {PLAN_TAG}={plan.id}")]
    serverless = option.action in ("serverless", "resize-memory") or _any_serverless(endpoint.config_description)
    update: dict[str, Any] = {"EndpointName": endpoint.name, "EndpointConfigName": new_config}
    if serverless:
        # A canary is a share of the new fleet's instance capacity, which a serverless variant has
        # not: SageMaker's default update (blue/green, all at once), rolled back by hand.
        update_call = ApiCall("sagemaker", "UpdateEndpoint", update,
                              f"switch {endpoint.name} to {new_config} (serverless: all at once, no canary)")
        rollback = f"by hand: UpdateEndpoint EndpointName={endpoint.name} EndpointConfigName={endpoint.config_name}"
    else:
        own, existing, used = _rollback_alarms(endpoint, plan.variant, plan.id, latency_threshold_ms)
        calls.extend(own)
        names = [a.name for a in existing] + [str(a.params["AlarmName"]) for a in own]
        update["DeploymentConfig"] = {
            "BlueGreenUpdatePolicy": {
                "TrafficRoutingConfiguration": traffic_routing(apply),
                "TerminationWaitInSeconds": TERMINATION_WAIT_SECONDS,
                "MaximumExecutionTimeoutInSeconds": apply.deployment_timeout_seconds,
            },
            "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": name} for name in names]},
        }
        update_call = ApiCall("sagemaker", "UpdateEndpoint", update,
                              f"blue/green update of {endpoint.name} to {new_config}: {shifting_text(apply)}; "
                              f"rolls back if {used} fires; at most "
                              f"{apply.deployment_timeout_seconds // 60} minutes")
        rollback = (f"automatic during the deployment (alarms {', '.join(names)}); "
                    f"afterwards by hand: UpdateEndpoint EndpointName={endpoint.name} "
                    f"EndpointConfigName={endpoint.config_name}")
    keeps_instances = option.action not in LEAVES_INSTANCES
    if scaled is not None:
        again = ("; registered again after the update" if keeps_instances and option.action != "resize+autoscale"
                 else "; the plan's own target and policy are put after the update"
                 if option.action == "resize+autoscale" else "")
        calls.append(ApiCall("application-autoscaling", "DeregisterScalableTarget",
                             {"ServiceNamespace": "sagemaker", "ResourceId": resource,
                              "ScalableDimension": SCALABLE_DIMENSION},
                             f"deregister {resource} from autoscaling (an update that changes its instance type "
                             f"fails otherwise); its policies {_names(scaled) or '(none)'} and scheduled actions "
                             f"are deleted with it{again}"))
        if keeps_instances:
            rollback += f"; autoscaling of {resource} as read: {_as_read(scaled)}"
    calls.append(update_call)
    if option.action == "resize+autoscale" and option.autoscaling:
        calls.extend(_autoscaling_calls(endpoint.name, plan.variant, option.autoscaling, plan.id))
    elif scaled is not None and keeps_instances:
        calls.extend(_carried_calls(resource, scaled))
    if option.action == MANAGED_SCALING:
        calls.extend(then_calls(option.details))
    # If a call after the deregister fails, the variant is still on its old shape: its target as read.
    restore = tuple(_carried_calls(resource, scaled)) if scaled is not None else ()
    return Change(calls=tuple(calls), rollback=rollback, waits_for=f"endpoint {endpoint.name} InService",
                  restore=restore)


def deregistered_target(option: PlanOption, endpoint: Endpoint, variant: str | None) -> AutoScaling | None:
    """The scalable target a config change must deregister first: Application Auto Scaling fails
    an update that changes the instance type of (or removes) a variant it scales. None: none."""
    found = next((v for v in endpoint.variants if v.name == variant), None)
    if option.action not in CONFIG_ACTIONS or found is None or found.autoscaling is None:
        return None
    if option.action in LEAVES_INSTANCES or option.instance_type != found.instance_type:
        return found.autoscaling
    return None


def _names(scaled: AutoScaling) -> str:
    return ", ".join(scaled.policies)


def _carried(policy: ReadScalingPolicy) -> bool:
    """Put back faithfully by PutScalingPolicy: target tracking (its CloudWatch alarms are its
    own, made again with it) whose settings were read."""
    return policy.policy_type == "TargetTrackingScaling" and bool(policy.configuration)


def uncarried_policies(scaled: AutoScaling) -> tuple[str, ...]:
    """One line for each policy of the target that a change cannot put back as it was."""
    read = {p.name: p for p in scaled.read_policies}
    lines = []
    for listed in scaled.policies:
        name = listed.rsplit(" (", 1)[0]
        policy = read.get(name)
        if policy is not None and _carried(policy):
            continue
        if policy is not None and policy.policy_type == "StepScaling" and policy.configuration:
            alarms = f" (alarms {', '.join(policy.alarms)})" if policy.alarms else ""
            lines.append(f"step-scaling policy {name} is deleted with the scalable target and not put back: a "
                         f"policy put again gets a new ARN, and the alarms that trigger it{alarms} would still "
                         "name the deleted one; re-create it by hand after the change and point them at it")
        elif policy is not None and policy.configuration:
            lines.append(f"{policy.policy_type} policy {name} is deleted with the scalable target and not put back "
                         "(only target tracking is put back): re-create it by hand after the change")
        else:
            lines.append(f"scaling policy {listed} is deleted with the scalable target and not put back (its "
                         "settings were not read): re-create it by hand after the change")
    return tuple(lines)


def _as_read(scaled: AutoScaling) -> str:
    parts = [f"{scaled.min_capacity}-{scaled.max_capacity} instances"]
    suspended = [key for key, value in (scaled.suspended_state or {}).items() if value]
    if suspended:
        parts.append(f"suspended: {', '.join(suspended)}")
    parts.append(f"policies {_names(scaled)}" if scaled.policies else "no policy")
    return ", ".join(parts)


def _carried_calls(resource: str, scaled: AutoScaling) -> list[ApiCall]:
    """RegisterScalableTarget as the target was read, and each policy that can be carried put back
    with its settings as read (AWS's procedure: register again, put the policies back)."""
    target: dict[str, Any] = {"ServiceNamespace": "sagemaker", "ResourceId": resource,
                              "ScalableDimension": SCALABLE_DIMENSION, "MinCapacity": scaled.min_capacity,
                              "MaxCapacity": scaled.max_capacity}
    if scaled.suspended_state:
        target["SuspendedState"] = dict(scaled.suspended_state)
    by_hand = [line.split(" is deleted", 1)[0] for line in uncarried_policies(scaled)]
    calls = [ApiCall("application-autoscaling", "RegisterScalableTarget", target,
                     f"register {resource} again as it was read ({_as_read(scaled)})"
                     + (f"; not put back, re-create by hand: {'; '.join(by_hand)}" if by_hand else ""))]
    for policy in scaled.read_policies:
        if not _carried(policy):
            continue
        settings = json.loads(json.dumps(policy.configuration))  # a deep copy
        metric = ((settings.get("PredefinedMetricSpecification") or {}).get("PredefinedMetricType")
                  or "a customised metric")
        calls.append(ApiCall("application-autoscaling", "PutScalingPolicy",
                             {"PolicyName": policy.name, "ServiceNamespace": "sagemaker", "ResourceId": resource,
                              "ScalableDimension": SCALABLE_DIMENSION, "PolicyType": policy.policy_type,
                              "TargetTrackingScalingPolicyConfiguration": settings},
                             f"put policy {policy.name} back as it was read (target tracking: {metric} at "
                             f"{settings.get('TargetValue')})"))
    return calls


def scaling_risk(option: PlanOption, endpoint: Endpoint | None, variant: str | None, risk: Risk | None,
                 ) -> Risk | None:
    """`risk` with what a change that deregisters the variant's scalable target cannot carry across:
    a policy it cannot put back as it was makes the plan at least medium, each named in the basis;
    the target's scheduled actions (the audit does not read them) are named in the basis."""
    scaled = deregistered_target(option, endpoint, variant) if endpoint is not None else None
    if scaled is None or option.action in LEAVES_INSTANCES:
        return risk
    resource = _resource_id(endpoint.name if endpoint else "", variant or "")
    lost: tuple[str, ...]
    if option.action == "resize+autoscale":
        lost = ((f"the policies of {resource} ({_names(scaled)}) are replaced by the plan's own",)
                if scaled.policies else ())
        medium: tuple[str, ...] = ()
    else:
        current = next((v.instance_type for v in endpoint.variants if v.name == variant), None) if endpoint else None
        medium = lost = (*uncarried_policies(scaled),
                         *_per_instance_targets(scaled, current, option.instance_type))
    basis = (*lost, f"scheduled actions on {resource}, if any, are deleted with its scalable target (the audit "
                    "does not read them): re-create them by hand after the change")
    if risk is None:
        return Risk(RiskLevel.MEDIUM, basis=basis)
    level = RiskLevel.MEDIUM if medium and risk.level is RiskLevel.LOW else risk.level
    return replace(risk, level=level, basis=(*risk.basis, *basis))


def _per_instance_targets(scaled: AutoScaling, current: str | None, new: str | None) -> tuple[str, ...]:
    """A carried policy that tracks requests per instance keeps a target set for the current
    instance type: on another, the same requests per instance are another load (the replay, at a
    fixed count, does not model the policy). One line each."""
    lines = []
    for policy in scaled.read_policies:
        settings = policy.configuration or {}
        metric = (settings.get("PredefinedMetricSpecification") or {}).get("PredefinedMetricType")
        if _carried(policy) and metric in PER_INSTANCE_REQUEST_METRICS:
            lines.append(f"policy {policy.name} is put back with its target of {settings.get('TargetValue')} "
                         f"{metric}, set for {current or 'the current type'}: on {new or 'the new type'} the same "
                         "requests per instance are another load; review its target after the change")
    return tuple(lines)


def then_calls(details: dict[str, Any]) -> list[ApiCall]:
    """The calls a `managed-scaling` plan makes once the endpoint runs its new config (details["then"])."""
    return [ApiCall(str(c["service"]), str(c["operation"]), json.loads(json.dumps(c["params"])), str(c["purpose"]))
            for c in details.get("then") or ()]


def _described(option: PlanOption) -> str:
    if option.action in ("remove-variant", "end-shadow-test"):
        return "removed"
    if option.action == MANAGED_SCALING:
        scaling = option.details.get("managed_instance_scaling") or {}
        policy = (scaling.get("ScaleInPolicy") or {}).get("Strategy")
        return (f"under managed instance scaling {scaling.get('Status')}, {scaling.get('MinInstanceCount')}-"
                f"{scaling.get('MaxInstanceCount')} instances" + (f", scale-in {policy}" if policy else ""))
    if option.action in ("serverless", "resize-memory"):
        return f"serverless at {option.details.get('memory_size_mb')} MB"
    policy = option.autoscaling
    count = policy["MaxCapacity"] if policy else option.instance_count
    return f"on {count} x {option.instance_type}"


def _any_serverless(description: dict[str, Any]) -> bool:
    return any(v.get("ServerlessConfig") for v in description.get("ProductionVariants") or [])


def _copied_config(description: dict[str, Any], variant: str, option: PlanOption,
                   name: str, plan: str) -> dict[str, Any] | None:
    """CreateEndpointConfig's body: the current config's fields, only `variant` changed; its tags
    as read without the opt-in tag (apply adds them when the audit did not read them), and
    `auditor:plan`."""
    body: dict[str, Any] = {"EndpointConfigName": name}
    for key in CREATE_CONFIG_FIELDS:
        if description.get(key) not in (None, [], {}):
            body[key] = json.loads(json.dumps(description[key]))  # a deep copy
    body["Tags"] = tagged(description.get("Tags") or [], plan)
    for key in ("ProductionVariants", "ShadowProductionVariants"):
        variants = body.get(key) or []
        found = next((v for v in variants if v.get("VariantName") == variant), None)
        if found is None:
            continue
        if option.action in ("remove-variant", "end-shadow-test"):
            variants.remove(found)
            if variants:
                body[key] = variants
            else:
                body.pop(key)
        elif option.action == MANAGED_SCALING:
            scaling = option.details.get("managed_instance_scaling")
            if not isinstance(scaling, dict) or found.get("ServerlessConfig"):
                return None
            found["ManagedInstanceScaling"] = json.loads(json.dumps(scaling))  # a deep copy
            found["InitialInstanceCount"] = initial_count(found.get("InitialInstanceCount"), scaling)
        elif option.action in ("serverless", "resize-memory"):
            memory = option.details.get("memory_size_mb")
            if memory is None:
                return None
            serverless = dict(found.get("ServerlessConfig") or {})
            serverless["MemorySizeInMB"] = int(memory)
            if "max_concurrency" in option.details or "MaxConcurrency" not in serverless:
                serverless["MaxConcurrency"] = int(option.details.get("max_concurrency", 1))
            for instance_key in ("InstanceType", "InitialInstanceCount", "ManagedInstanceScaling",
                                 "InstancePools", "VolumeSizeInGB", "CapacityReservationConfig"):
                found.pop(instance_key, None)
            found["ServerlessConfig"] = serverless
        else:
            if not option.instance_type:
                return None
            policy = option.autoscaling
            found.pop("ServerlessConfig", None)
            found["InstanceType"] = option.instance_type
            # Under a new policy the new fleet starts at its MaxCapacity (what held the peak) and
            # the policy scales it in: the blue/green switch never lands on too few instances.
            found["InitialInstanceCount"] = int(policy["MaxCapacity"]) if policy else option.instance_count
        return body
    return None  # the variant is not in the config: nothing to copy it from


def initial_count(initial: Any, scaling: dict[str, Any]) -> int:
    """The copied InitialInstanceCount within the new scaling's bounds (at least 1: a variant starts
    on an instance); as read where it is within them."""
    count = int(initial) if isinstance(initial, int) and not isinstance(initial, bool) else 1
    low, high = scaling.get("MinInstanceCount"), scaling.get("MaxInstanceCount")
    if isinstance(low, int):
        count = max(count, low)
    if isinstance(high, int):
        count = min(count, high)
    return max(count, 1)


def _resource_id(endpoint: str, variant: str) -> str:
    return f"endpoint/{endpoint}/variant/{variant}"


def _autoscaling_calls(endpoint: str, variant: str, policy: dict[str, Any], plan: str) -> list[ApiCall]:
    resource = _resource_id(endpoint, variant)
    dimension = SCALABLE_DIMENSION
    return [
        ApiCall("application-autoscaling", "RegisterScalableTarget",
                {"ServiceNamespace": "sagemaker", "ResourceId": resource, "ScalableDimension": dimension,
                 "MinCapacity": int(policy["MinCapacity"]), "MaxCapacity": int(policy["MaxCapacity"])},
                f"scale {resource} between {policy['MinCapacity']} and {policy['MaxCapacity']} instances"),
        ApiCall("application-autoscaling", "PutScalingPolicy",
                {"PolicyName": f"{resource_name(endpoint, plan, limit=200)}-{variant}"[:256],
                 "ServiceNamespace": "sagemaker", "ResourceId": resource, "ScalableDimension": dimension,
                 "PolicyType": "TargetTrackingScaling",
                 "TargetTrackingScalingPolicyConfiguration": {
                     "TargetValue": float(policy["TargetValue"]),
                     "PredefinedMetricSpecification": {"PredefinedMetricType": policy["PredefinedMetricType"]},
                     "ScaleInCooldown": SCALE_IN_COOLDOWN_SECONDS, "ScaleOutCooldown": SCALE_OUT_COOLDOWN_SECONDS}},
                f"target tracking: {policy['PredefinedMetricType']} at {policy['TargetValue']}"),
    ]


def traffic_routing(apply: ApplyConfig) -> dict[str, Any]:
    """TrafficRoutingConfiguration: the capacity shares are of the new (green) fleet."""
    wait = apply.wait_interval_minutes * 60
    if apply.traffic_shifting == "linear":
        return {"Type": "LINEAR", "WaitIntervalInSeconds": wait,
                "LinearStepSize": {"Type": "CAPACITY_PERCENT", "Value": apply.linear_step_percent}}
    return {"Type": "CANARY", "WaitIntervalInSeconds": wait,
            "CanarySize": {"Type": "CAPACITY_PERCENT", "Value": apply.canary_percent}}


def shifting_text(apply: ApplyConfig) -> str:
    """"10% canary for 10 minutes, then the rest", or the linear steps, in words."""
    minutes = apply.wait_interval_minutes
    if apply.traffic_shifting == "linear":
        return (f"{apply.traffic_shifts} linear steps of {apply.linear_step_percent}% of the capacity, "
                f"{minutes} minute{'s' if minutes != 1 else ''} apart")
    return f"{apply.canary_percent}% canary for {minutes} minute{'s' if minutes != 1 else ''}, then the rest"


def _rollback_alarms(endpoint: Endpoint, variant: str, plan: str, latency_threshold_ms: float | None,
                     ) -> tuple[list[ApiCall], list[RollbackAlarm], str]:
    """The alarms the deployment rolls back on: for errors and for latency each, the variant's
    existing alarms when it has any, else the one the plan defines (PutMetricAlarm); and the words
    saying which (for the UpdateEndpoint's purpose)."""
    found = [a for a in endpoint.rollback_alarms or () if a.variant == variant]
    errors = [a for a in found if a.watches == "errors"]
    latency = [a for a in found if a.watches == "latency"]
    own = _alarm_calls(endpoint.name, variant, plan, latency_threshold_ms, errors=not errors, latency=not latency)
    # SageMaker takes 10: alternate errors and latency so that both are watched.
    existing = [a for pair in zip_longest(errors, latency) for a in pair if a is not None]
    existing = existing[:MAX_ROLLBACK_ALARMS - len(own)]
    parts = []
    if existing:
        parts.append(f"one of the variant's own alarms {', '.join(a.name for a in existing)}")
    if own:
        whose = "" if endpoint.rollback_alarms is not None else " (the endpoint's alarms were not read)"
        parts.append(f"an alarm the plan defines ({', '.join(str(c.params['MetricName']) for c in own)}){whose}")
    return own, existing, " or ".join(parts) or "an alarm"


def _alarm_calls(endpoint: str, variant: str, plan: str, latency_threshold_ms: float | None,
                 errors: bool = True, latency: bool = True) -> list[ApiCall]:
    """The alarms the blue/green deployment rolls back on (SageMaker watches them while it shifts traffic)."""
    dimensions = [{"Name": "EndpointName", "Value": endpoint}, {"Name": "VariantName", "Value": variant}]
    base = f"{endpoint}-{variant}-{plan}"[:200]
    calls = []
    if errors:
        calls.append(ApiCall("cloudwatch", "PutMetricAlarm", {
            "AlarmName": f"{base}-5xx",
            "AlarmDescription": f"Rolls back plan {plan}: the model answers with 5XX errors",
            "Namespace": "AWS/SageMaker", "MetricName": "Invocation5XXErrors", "Dimensions": dimensions,
            "Statistic": "Sum", "Period": 60, "EvaluationPeriods": 2, "DatapointsToAlarm": 2, "Threshold": 0.0,
            "ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching",
            "Tags": [{"Key": PLAN_TAG, "Value": plan}]},
            f"alarm {base}-5xx: Invocation5XXErrors in 2 minutes running"))
    if latency and latency_threshold_ms is not None and latency_threshold_ms > 0:
        calls.append(ApiCall("cloudwatch", "PutMetricAlarm", {
            "AlarmName": f"{base}-latency-p99",
            "AlarmDescription": f"Rolls back plan {plan}: ModelLatency p99 over {latency_threshold_ms:g} ms",
            "Namespace": "AWS/SageMaker", "MetricName": "ModelLatency", "Dimensions": dimensions,
            "ExtendedStatistic": "p99", "Period": 60, "EvaluationPeriods": 3, "DatapointsToAlarm": 3,
            "Threshold": round(latency_threshold_ms * 1000.0, 1),  # ModelLatency is in microseconds
            "ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching",
            "Tags": [{"Key": PLAN_TAG, "Value": plan}]},
            f"alarm {base}-latency-p99: ModelLatency p99 over {latency_threshold_ms:g} ms for 3 minutes"))
    return calls
