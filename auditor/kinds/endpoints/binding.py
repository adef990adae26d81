"""Every call of an endpoint plan names the plan's own endpoint (auditor.act.binding runs these
checks for every kind): the names it carries are the endpoint, its variants, or names derived from
the plan id (auditor.recommend.change.resource_name and the rules' own naming); what each scaling
call does is the plan's or the variant's as the audit saw it; and, from the endpoint as it is now
(`observed_refusal`, the target's `changed`), each variant a call names is one of the endpoint's,
each inference component one it hosts, and a new endpoint config a copy of the audited one but for
the plan's variant's shape.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from auditor.kinds.endpoints.change import (
    CREATE_CONFIG_FIELDS,
    LEAVES_INSTANCES,
    MANAGED_SCALING,
    SCALABLE_DIMENSION,
    initial_count,
)
from auditor.kinds.endpoints.change import _autoscaling_calls as autoscaling_calls
from auditor.kinds.endpoints.rules.no_queue_alarm import AGE_METRIC, STRANDED_METRIC
from auditor.kinds.endpoints.rules.off_hours import UNIVERSAL_TARGET
from auditor.kinds.endpoints.rules.off_hours import _name as schedule_name
from auditor.models import ApiCall
from auditor.recommend.change import resource_name
from auditor.text import one_line
from auditor.write.binding import CallBinding, names
from auditor.write.plan import PlanToApply

# The operations an endpoint plan makes.
OPERATIONS = frozenset({
    ("sagemaker", "CreateEndpointConfig"), ("sagemaker", "UpdateEndpoint"), ("sagemaker", "DeleteEndpoint"),
    ("application-autoscaling", "RegisterScalableTarget"), ("application-autoscaling", "DeregisterScalableTarget"),
    ("application-autoscaling", "PutScalingPolicy"), ("application-autoscaling", "PutScheduledAction"),
    ("cloudwatch", "PutMetricAlarm"), ("scheduler", "CreateSchedule")})
VARIANT_PREFIX = "endpoint/"
COMPONENT_PREFIX = "inference-component/"
# The scheduled actions an off-hours plan puts on an inference component's copies (kinds/endpoints/rules/off_hours.py).
SCHEDULED_ACTION_PREFIXES = ("auditor-zero", "auditor-back")
SCHEDULE_PREFIXES = {"deleteEndpoint": "auditor-stop", "createEndpoint": "auditor-start"}
MAX_NAMED_INDEX = 168  # a schedule per hour of the week at most


# The top-level keys of each call's parameters: exactly those the change builders emit
# (auditor.recommend.change, the rules' builders).
PARAMETER_KEYS: dict[str, frozenset[str]] = {
    "CreateEndpointConfig": frozenset({"EndpointConfigName", "Tags", *CREATE_CONFIG_FIELDS}),
    "UpdateEndpoint": frozenset({"EndpointName", "EndpointConfigName", "DeploymentConfig"}),
    "DeleteEndpoint": frozenset({"EndpointName"}),
    "RegisterScalableTarget": frozenset({"ServiceNamespace", "ResourceId", "ScalableDimension", "MinCapacity",
                                         "MaxCapacity", "SuspendedState"}),
    "DeregisterScalableTarget": frozenset({"ServiceNamespace", "ResourceId", "ScalableDimension"}),
    "PutScalingPolicy": frozenset({"PolicyName", "ServiceNamespace", "ResourceId", "ScalableDimension", "PolicyType",
                                   "TargetTrackingScalingPolicyConfiguration"}),
    "PutScheduledAction": frozenset({"ServiceNamespace", "ScheduledActionName", "ResourceId", "ScalableDimension",
                                     "Schedule", "Timezone", "ScalableTargetAction"}),
    "PutMetricAlarm": frozenset({"AlarmName", "AlarmDescription", "Namespace", "MetricName", "Dimensions",
                                 "Statistic", "ExtendedStatistic", "Period", "EvaluationPeriods", "DatapointsToAlarm",
                                 "Threshold", "ComparisonOperator", "TreatMissingData", "Tags", "ActionsEnabled",
                                 "AlarmActions", "OKActions"}),
    "CreateSchedule": frozenset({"Name", "ScheduleExpression", "ScheduleExpressionTimezone", "FlexibleTimeWindow",
                                 "State", "Description", "Target"}),
}


def content_problem(plan: PlanToApply, index: int, operation: str, params: dict[str, Any]) -> str | None:
    """A scaling call on the plan's variant: its capacities and policy are the plan's own or the
    variant's as the audit saw it; a deregister is followed by the update and the target
    registered again (unless the variant goes serverless or is removed); a managed-scaling plan's
    new config gives its variant the plan's ManagedInstanceScaling."""
    if operation == "CreateEndpointConfig" and plan.proposed.get("action") == MANAGED_SCALING:
        return _managed_scaling_problem(plan, params)
    resource = str(params.get("ResourceId") or "")
    if not resource.startswith(f"{VARIANT_PREFIX}{plan.resource.name}/variant/"):
        return None
    variant = resource.rsplit("/", 1)[-1]
    if operation == "RegisterScalableTarget":
        shape = (params.get("MinCapacity"), params.get("MaxCapacity"))
        allowed = {shape_ for shape_ in (_proposed_shape(plan), _basis_shape(plan, variant)) if shape_}
        if shape not in allowed:
            listed = " or ".join(f"{low}-{high}" for low, high in sorted(allowed, key=str)) or "none"
            return (f"sets MinCapacity-MaxCapacity {one_line(str(shape[0]))}-{one_line(str(shape[1]))} on "
                    f"{one_line(resource)}: the plan's or the audited ones are {listed}")
    if operation == "PutScalingPolicy":
        own = _own_calls(plan, variant)
        name = params.get("PolicyName")
        expected = [c.params for c in own if c.operation == "PutScalingPolicy" and c.params.get("PolicyName") == name]
        restore = plan.change.restore if plan.change else ()
        expected += [c.params for c in restore
                     if c.operation == "PutScalingPolicy" and c.params.get("PolicyName") == name
                     and c.params.get("ResourceId") == resource]
        if params not in expected:
            return (f"puts policy {one_line(str(name))} with settings that are neither the plan's proposed policy "
                    "nor the variant's as the audit read it (change.restore)")
    if operation == "DeregisterScalableTarget":
        calls = plan.change.calls if plan.change else ()
        later = list(calls[index + 1:])
        update = next((i for i, c in enumerate(later) if c.operation == "UpdateEndpoint"), None)
        if update is None:
            return f"deregisters {one_line(resource)} with no UpdateEndpoint after it"
        leaves = plan.proposed.get("action") in LEAVES_INSTANCES
        again = any(c.operation == "RegisterScalableTarget" and c.params.get("ResourceId") == resource
                    for c in later[update + 1:])
        if not leaves and not again:
            return (f"deregisters {one_line(resource)} and no RegisterScalableTarget after the UpdateEndpoint puts "
                    "it back")
    return None




def _managed_scaling_problem(plan: PlanToApply, params: dict[str, Any]) -> str | None:
    """The plan's variant's ManagedInstanceScaling in the new config is the plan's own
    (proposed.details.managed_instance_scaling)."""
    details = plan.proposed.get("details")
    wanted = details.get("managed_instance_scaling") if isinstance(details, dict) else None
    variants = params.get("ProductionVariants") or []
    found = [v for v in variants if isinstance(v, dict) and v.get("VariantName") == plan.variant]
    if not isinstance(wanted, dict) or len(found) != 1 or found[0].get("ManagedInstanceScaling") != wanted:
        return (f"sets the ManagedInstanceScaling of variant {one_line(str(plan.variant))} otherwise than the plan's "
                "(proposed.details.managed_instance_scaling)")
    return None


def _own_calls(plan: PlanToApply, variant: str) -> list[ApiCall]:
    """The autoscaling calls the plan's proposed policy makes (as change.py builds them), if any."""
    policy = plan.proposed.get("autoscaling")
    if not isinstance(policy, dict):
        return []
    try:
        return autoscaling_calls(plan.resource.name, variant, policy, plan.names_id)
    except (KeyError, TypeError, ValueError):
        return []


def _proposed_shape(plan: PlanToApply) -> tuple[Any, Any] | None:
    policy = plan.proposed.get("autoscaling")
    if not isinstance(policy, dict):
        return None
    return (policy.get("MinCapacity"), policy.get("MaxCapacity"))


def _basis_shape(plan: PlanToApply, variant: str) -> tuple[Any, Any] | None:
    for seen in (plan.basis or {}).get("variants") or []:
        scaling = seen.get("autoscaling") if isinstance(seen, dict) and seen.get("name") == variant else None
        if isinstance(scaling, dict):
            return (scaling.get("min_capacity"), scaling.get("max_capacity"))
    return None


def named_variants(plan: PlanToApply) -> set[str]:
    """The variants the plan's calls name (ResourceId endpoint/<endpoint>/variant/<name>)."""
    prefix = f"{VARIANT_PREFIX}{plan.resource.name}/variant/"
    calls = plan.change.calls if plan.change else ()
    return {str(c.params.get("ResourceId"))[len(prefix):] for c in calls
            if str(c.params.get("ResourceId") or "").startswith(prefix)}


def named_components(plan: PlanToApply) -> set[str]:
    """The inference components the plan's calls name (ResourceId inference-component/<name>)."""
    calls = plan.change.calls if plan.change else ()
    return {str(c.params.get("ResourceId"))[len(COMPONENT_PREFIX):] for c in calls
            if str(c.params.get("ResourceId") or "").startswith(COMPONENT_PREFIX)}


def observed_refusal(plan: PlanToApply, variants: set[str], components: set[str] | None,
                     config: dict[str, Any] | None = None) -> str | None:
    """Each variant the calls name is one of the endpoint's now, each inference component one it
    hosts (`components`: ListInferenceComponents' answer for the endpoint; None when not read); a
    CreateEndpointConfig is a copy of the audited config (`config`: DescribeEndpointConfig of it)."""
    for number, call in enumerate(plan.change.calls if plan.change else (), start=1):
        if call.operation == "CreateEndpointConfig":
            problem = _copy_problem(plan, call.params, config)
            if problem:
                return (f"call {number} (sagemaker:CreateEndpointConfig) {problem}, not as in "
                        f"{one_line(plan.audited_config or '?')}; run the audit again")
    for variant in sorted(named_variants(plan) - variants):
        return (f"a call names variant {one_line(variant)}, which endpoint {one_line(plan.resource.name)} does "
                "not have; run the audit again")
    for component in sorted(named_components(plan) - (components or set())):
        return (f"a call names inference component {one_line(component)}, which endpoint "
                f"{one_line(plan.resource.name)} does not host; run the audit again")
    return None


# What a copy of the config may change on the plan's variant: its shape (an instance fleet or serverless).
SHAPE_KEYS = frozenset({"InstanceType", "InitialInstanceCount", "ServerlessConfig", "ManagedInstanceScaling",
                        "InstancePools", "VolumeSizeInGB", "CapacityReservationConfig"})
# A managed-scaling plan's copy changes its variant's ManagedInstanceScaling only (and its
# InitialInstanceCount where it falls outside the new bounds: change.initial_count).
MANAGED_SCALING_KEYS = frozenset({"ManagedInstanceScaling", "InitialInstanceCount"})


def _copy_problem(plan: PlanToApply, body: dict[str, Any], config: dict[str, Any] | None) -> str | None:
    """The copy differs from the audited config other than in the plan's variant's shape (or its
    removal), its name and its tags: the key that differs; None when it is a copy."""
    if config is None:
        return "was not compared (the audited config was not read)"
    for key in CREATE_CONFIG_FIELDS:
        made, read = body.get(key), config.get(key)
        made, read = (None if made in (None, [], {}) else made), (None if read in (None, [], {}) else read)
        if key not in ("ProductionVariants", "ShadowProductionVariants"):
            if made != read:
                return f"sets {key} otherwise"
            continue
        made_list = made if isinstance(made, list) else []
        read_list = read if isinstance(read, list) else []
        others_made = [v for v in made_list if not (isinstance(v, dict) and v.get("VariantName") == plan.variant)]
        others_read = [v for v in read_list if not (isinstance(v, dict) and v.get("VariantName") == plan.variant)]
        if others_made != others_read:
            return f"sets {key} of another variant otherwise"
        mine_made = [v for v in made_list if v not in others_made]
        mine_read = [v for v in read_list if v not in others_read]
        if len(mine_made) > len(mine_read):
            return f"adds variant {one_line(str(plan.variant))} to {key}"
        changeable = MANAGED_SCALING_KEYS if plan.proposed.get("action") == MANAGED_SCALING else SHAPE_KEYS
        if mine_made and {k: v for k, v in mine_made[0].items() if k not in changeable} != \
                {k: v for k, v in mine_read[0].items() if k not in changeable}:
            return f"sets {key} {one_line(str(plan.variant))} otherwise than its shape"
        if mine_made and changeable is MANAGED_SCALING_KEYS:
            bounds = mine_made[0].get("ManagedInstanceScaling") or {}
            if mine_made[0].get("InitialInstanceCount") != initial_count(mine_read[0].get("InitialInstanceCount"),
                                                                          bounds):
                return f"sets the InitialInstanceCount of {key} {one_line(str(plan.variant))} otherwise"
    return None


def _endpoint_call(plan: PlanToApply, operation: str, params: dict[str, Any]) -> str | None:
    endpoint, config = plan.resource.name, resource_name(plan.resource.name, plan.names_id)
    if operation == "DeleteEndpoint":
        return names(params.get("EndpointName"), endpoint, "endpoint")
    if operation == "UpdateEndpoint":
        return (names(params.get("EndpointName"), endpoint, "endpoint")
                or names(params.get("EndpointConfigName"), config, "endpoint config"))
    if operation == "CreateEndpointConfig":
        return names(params.get("EndpointConfigName"), config, "endpoint config")
    if operation in ("RegisterScalableTarget", "DeregisterScalableTarget", "PutScalingPolicy", "PutScheduledAction"):
        return _scaling_call(plan, operation, params)
    if operation == "PutMetricAlarm":
        return _alarm_call(plan, params)
    if operation == "CreateSchedule":
        return _schedule_call(plan, params)
    return "is not checked"


def _scaling_call(plan: PlanToApply, operation: str, params: dict[str, Any]) -> str | None:
    resource = str(params.get("ResourceId") or "")
    if params.get("ServiceNamespace") != "sagemaker":
        return f"names service namespace {one_line(str(params.get('ServiceNamespace')))}"
    variant_prefix = f"{VARIANT_PREFIX}{plan.resource.name}/variant/"
    if resource.startswith(variant_prefix) and "/" not in resource[len(variant_prefix):] \
            and resource[len(variant_prefix):]:
        variant = resource[len(variant_prefix):]
        if params.get("ScalableDimension") != SCALABLE_DIMENSION:
            return f"names scalable dimension {one_line(str(params.get('ScalableDimension')))}"
        if operation == "PutScalingPolicy":
            # The plan's own policy, or one of the variant's policies as the audit saw them (a plan that
            # deregisters the variant's target carries its policies across under their own names).
            expected = f"{resource_name(plan.resource.name, plan.names_id, limit=200)}-{variant}"[:256]
            name = params.get("PolicyName")
            return None if name in _basis_policies(plan, variant) else names(name, expected, "scaling policy")
        if operation == "PutScheduledAction":
            return "puts a scheduled action on a variant (an off-hours plan schedules inference components)"
        return None
    if resource.startswith(COMPONENT_PREFIX) and resource[len(COMPONENT_PREFIX):] \
            and operation in ("RegisterScalableTarget", "PutScheduledAction"):
        component = resource[len(COMPONENT_PREFIX):]
        if operation == "PutScheduledAction":
            name = str(params.get("ScheduledActionName") or "")
            if not _derived(name, lambda prefix, index: schedule_name(prefix, component, index),
                            SCHEDULED_ACTION_PREFIXES):
                return f"names scheduled action {one_line(name)}"
        return None  # the component is held to the endpoint by observed_refusal
    return f"names resource {one_line(resource)}"


def _basis_policies(plan: PlanToApply, variant: str) -> set[str]:
    """The names of the variant's scaling policies in the plan's basis ("name (type)" there)."""
    for seen in (plan.basis or {}).get("variants") or []:
        scaling = seen.get("autoscaling") if isinstance(seen, dict) and seen.get("name") == variant else None
        if isinstance(scaling, dict):
            return {str(p).rsplit(" (", 1)[0] for p in scaling.get("policies") or []}
    return set()


def _derived(name: str, make: Callable[[str, int], str], prefixes: tuple[str, ...]) -> bool:
    return any(name == make(prefix, index) for prefix in prefixes for index in range(MAX_NAMED_INDEX))


def _alarm_call(plan: PlanToApply, params: dict[str, Any]) -> str | None:
    dimensions = params.get("Dimensions")
    named = [d.get("Value") for d in dimensions if isinstance(d, dict) and d.get("Name") == "EndpointName"] \
        if isinstance(dimensions, list) else []
    if not named or any(value != plan.resource.name for value in named):
        shown = ", ".join(one_line(str(v)) for v in named) or "no endpoint"
        return f"watches {shown}"
    name = str(params.get("AlarmName") or "")
    base = f"{plan.resource.name}-{plan.variant or ''}-{plan.names_id}"[:200]
    rollback = {f"{base}-5xx", f"{base}-latency-p99"} if plan.variant else set()
    queue = {f"{plan.resource.name}-{metric}"[:255] for metric in (AGE_METRIC, STRANDED_METRIC)}
    if name not in rollback | queue:
        return f"names alarm {one_line(name)}"
    return None


def _schedule_call(plan: PlanToApply, params: dict[str, Any]) -> str | None:
    target: dict[str, Any] = params["Target"] if isinstance(params.get("Target"), dict) else {}
    action = next((a for a in SCHEDULE_PREFIXES if target.get("Arn") == UNIVERSAL_TARGET.format(action=a)), None)
    if action is None:
        return f"targets {one_line(str(target.get('Arn')))}"
    name = str(params.get("Name") or "")
    if not _derived(name, lambda prefix, index: schedule_name(prefix, plan.resource.name, index),
                    (SCHEDULE_PREFIXES[action],)):
        return f"names schedule {one_line(name)}"
    try:
        body = json.loads(str(target.get("Input") or ""))
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return "has a target input that is not a JSON object"
    if body.get("EndpointName") != plan.resource.name:
        return f"targets endpoint {one_line(str(body.get('EndpointName')))}"
    if action == "createEndpoint" and body.get("EndpointConfigName") != plan.audited_config:
        return f"creates the endpoint on config {one_line(str(body.get('EndpointConfigName')))}"
    return None


BINDING = CallBinding(OPERATIONS, _endpoint_call, PARAMETER_KEYS, content_problem)
