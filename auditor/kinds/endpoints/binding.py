"""Every call of an endpoint plan names the plan's own endpoint (auditor.act.binding runs these
checks for every kind): the names it carries are the endpoint, its variants, or names derived from
the plan id (auditor.recommend.change.resource_name and the rules' own naming); what each scaling
call does is the plan's or the variant's as the audit saw it; and, from the endpoint as it is now
(`observed_refusal`, the target's `changed`), each variant a call names is one of the endpoint's,
each inference component one it hosts, and a new endpoint config a copy of the audited one but for
the plan's variant's shape. A consolidation's calls (type "shared-endpoint") name only the config,
the shared endpoint and the components it creates (at the end of the module).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from auditor.config import OPT_IN_TAG
from auditor.kinds.endpoints.autoscaling import COPY_DIMENSION
from auditor.kinds.endpoints.change import (
    CREATE_CONFIG_FIELDS,
    LEAVES_INSTANCES,
    MANAGED_SCALING,
    SCALABLE_DIMENSION,
    initial_count,
)
from auditor.kinds.endpoints.change import _autoscaling_calls as autoscaling_calls
from auditor.kinds.endpoints.rules import async_scale_from_zero as async_zero
from auditor.kinds.endpoints.rules import component_scale_to_zero as component_zero
from auditor.kinds.endpoints.rules.no_queue_alarm import AGE_METRIC, STRANDED_METRIC
from auditor.kinds.endpoints.rules.off_hours import UNIVERSAL_TARGET
from auditor.kinds.endpoints.rules.off_hours import _name as schedule_name
from auditor.models import ApiCall, answer_reference
from auditor.recommend.change import PLAN_TAG, resource_name
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
# The alarm that invokes a plan's step-scaling policy: `<endpoint>-<variant>-<plan id>-scale-out`.
STEP_ALARM_SUFFIX = "scale-out"


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
                                   "TargetTrackingScalingPolicyConfiguration", "StepScalingPolicyConfiguration"}),
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
        allowed = {shape_ for shape_ in (_proposed_shape(plan), _basis_shape(plan, variant), _to_zero(plan, variant))
                   if shape_}
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
        expected += _from_zero_policies(plan, variant, params)
        if params not in expected and params.get("PolicyType") == "StepScaling":
            if not _invoked_step_policy(plan, index, params):
                return (f"puts step-scaling policy {one_line(str(name))}, which no alarm of the plan invokes (its "
                        "AlarmActions take the policy's PolicyARN)")
        elif params not in expected:
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


def _to_zero(plan: PlanToApply, variant: str) -> tuple[Any, Any] | None:
    """async-scale-from-zero's MinCapacity 0, keeping the audited maximum (or count, unregistered)."""
    if plan.proposed.get("action") != "scale-to-zero":
        return None
    audited = _basis_shape(plan, variant)
    if audited is not None:
        return (0, audited[1])
    for seen in (plan.basis or {}).get("variants") or []:
        if isinstance(seen, dict) and seen.get("name") == variant and isinstance(seen.get("instance_count"), int):
            return (0, max(seen["instance_count"], 1))
    return None


def _from_zero_policies(plan: PlanToApply, variant: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """async-scale-from-zero's policies as its builder makes them: AWS's step policy, and (scaling to
    zero) the guide's target tracking on the backlog at the target the call states, within its bounds."""
    if plan.proposed.get("action") not in ("scale-from-zero", "scale-to-zero"):
        return []
    made = [async_zero.step_calls(plan.resource.name, variant)[0]["params"]]
    configuration = params.get("TargetTrackingScalingPolicyConfiguration")
    target = configuration.get("TargetValue") if isinstance(configuration, dict) else None
    if plan.proposed.get("action") == "scale-to-zero" and isinstance(target, int | float) \
            and not isinstance(target, bool) and async_zero.ScaleFromZeroSettings.problem("backlog_target", target) \
            is None:
        made.append(async_zero.tracking_params(plan.resource.name, variant, target))
    return made


def _invoked_step_policy(plan: PlanToApply, index: int, params: dict[str, Any]) -> bool:
    """A step-scaling policy (a rule's, e.g. scaling an async endpoint out from zero) that an alarm
    later in the change invokes (its AlarmActions take this call's PolicyARN). What it can do is
    bounded by the variant's scalable target, whose capacities are the plan's or the audited ones
    (RegisterScalableTarget above, the basis)."""
    if params.get("PolicyType") != "StepScaling" or "TargetTrackingScalingPolicyConfiguration" in params \
            or not isinstance(params.get("StepScalingPolicyConfiguration"), dict):
        return False
    arn = answer_reference("PutScalingPolicy", str(params.get("PolicyName")), "PolicyARN")
    calls = plan.change.calls if plan.change else ()
    return any(c.operation == "PutMetricAlarm" and arn in (c.params.get("AlarmActions") or [])
               for c in calls[index + 1:])


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
    """The inference components the plan's calls name (ResourceId inference-component/<name>, an
    alarm's InferenceComponentName)."""
    calls = plan.change.calls if plan.change else ()
    return ({str(c.params.get("ResourceId"))[len(COMPONENT_PREFIX):] for c in calls
             if str(c.params.get("ResourceId") or "").startswith(COMPONENT_PREFIX)}
            | {value for c in calls if c.operation == "PutMetricAlarm" for value in _component_dimensions(c.params)})


def _component_dimensions(params: dict[str, Any]) -> list[str]:
    """The InferenceComponentName values of an alarm's dimensions."""
    dimensions = params.get("Dimensions")
    if not isinstance(dimensions, list):
        return []
    return [str(d.get("Value")) for d in dimensions
            if isinstance(d, dict) and d.get("Name") == "InferenceComponentName"]


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
            # deregisters the variant's target carries its policies across under their own names), or
            # async-scale-from-zero's (their settings are held by content_problem).
            expected = f"{resource_name(plan.resource.name, plan.names_id, limit=200)}-{variant}"[:256]
            name = params.get("PolicyName")
            known = _basis_policies(plan, variant) | {async_zero.STEP_POLICY_NAME, async_zero.TRACKING_POLICY_NAME}
            return None if name in known else names(name, expected, "scaling policy")
        if operation == "PutScheduledAction":
            return "puts a scheduled action on a variant (an off-hours plan schedules inference components)"
        return None
    if resource.startswith(COMPONENT_PREFIX) and resource[len(COMPONENT_PREFIX):] \
            and operation in ("RegisterScalableTarget", "PutScheduledAction", "PutScalingPolicy"):
        component = resource[len(COMPONENT_PREFIX):]
        if params.get("ScalableDimension") != COPY_DIMENSION:
            return f"names scalable dimension {one_line(str(params.get('ScalableDimension')))}"
        if operation == "PutScalingPolicy":
            # component-scale-to-zero's: target tracking on invocations per copy, AWS's step policy.
            name = params.get("PolicyName")
            allowed = {component_zero.policy_name(component, kind) for kind in component_zero.POLICY_KINDS}
            return None if name in allowed else f"names scaling policy {one_line(str(name))}"
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
    components = _component_dimensions(params)
    if components:  # component-scale-to-zero's alarm (each component held to the endpoint by observed_refusal)
        name = str(params.get("AlarmName") or "")
        if len(components) != 1 or name != component_zero.alarm_name(components[0]):
            return f"names alarm {one_line(name)}"
        return None
    dimensions = params.get("Dimensions")
    named = [d.get("Value") for d in dimensions if isinstance(d, dict) and d.get("Name") == "EndpointName"] \
        if isinstance(dimensions, list) else []
    if not named or any(value != plan.resource.name for value in named):
        shown = ", ".join(one_line(str(v)) for v in named) or "no endpoint"
        return f"watches {shown}"
    name = str(params.get("AlarmName") or "")
    base = f"{plan.resource.name}-{plan.variant or ''}-{plan.names_id}"[:200]
    own = {f"{base}-5xx", f"{base}-latency-p99", f"{base}-{STEP_ALARM_SUFFIX}"} if plan.variant else set()
    queue = {f"{plan.resource.name}-{metric}"[:255] for metric in (AGE_METRIC, STRANDED_METRIC)}
    queue.add(async_zero.alarm_name(plan.resource.name))
    if name not in own | queue:
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


# --- the shared endpoint a consolidation creates (resource type "shared-endpoint") -----------------
#
# Every call of a consolidation plan (rule consolidate-onto-components) names what the plan creates
# and nothing else: the endpoint config named after the shared endpoint, the shared endpoint on it,
# and one inference component per member endpoint (named as the member, running the model the member
# runs as the plan's basis records it, on the config's one variant). Every one carries the plan's tag
# `auditor:plan` (how a retry tells its own shared endpoint from another's, and what IAM requires) and
# never the opt-in tag. No call deletes or updates anything: those operations are not the type's.

def members_of(plan: PlanToApply) -> list[dict[str, Any]]:
    """The member endpoints as the plan's basis records them (endpoint, endpoint_config, status,
    variant, model)."""
    members = (plan.basis or {}).get("members")
    return [m for m in members if isinstance(m, dict)] if isinstance(members, list) else []


def component_calls(plan: PlanToApply) -> list[dict[str, Any]]:
    return [c.params for c in plan.calls_of("sagemaker", "CreateInferenceComponent")]


SHARED_OPERATIONS = frozenset({("sagemaker", "CreateEndpointConfig"), ("sagemaker", "CreateEndpoint"),
                        ("sagemaker", "CreateInferenceComponent")})
SHARED_PARAMETER_KEYS: dict[str, frozenset[str]] = {
    # A component-style config: its one variant, the group's encryption and network settings, the
    # role the components' models run as.
    "CreateEndpointConfig": frozenset({"EndpointConfigName", "ProductionVariants", "KmsKeyId", "VpcConfig",
                                       "EnableNetworkIsolation", "ExecutionRoleArn", "Tags"}),
    "CreateEndpoint": frozenset({"EndpointName", "EndpointConfigName", "Tags"}),
    "CreateInferenceComponent": frozenset({"InferenceComponentName", "EndpointName", "VariantName", "Specification",
                                           "RuntimeConfig", "Tags"}),
}
# What a component's Specification and RuntimeConfig may set: the member's model and what each copy
# reserves; how many copies.
SPECIFICATION_KEYS = frozenset({"ModelName", "ComputeResourceRequirements"})
RUNTIME_KEYS = frozenset({"CopyCount"})


def config_names(plan: PlanToApply) -> tuple[str, str]:
    """The names the shared endpoint's config may have: `<shared endpoint>-<plan id>`, as apply names
    a config it makes, or `<shared endpoint>-config`, as the rule names it (both held to the members
    by the shared endpoint's name; IAM allows both shapes)."""
    return resource_name(plan.resource.name, plan.names_id), f"{plan.resource.name}-config"


def _variant(plan: PlanToApply) -> str | None:
    """The one variant the plan's endpoint config defines (the components' VariantName)."""
    for call in plan.calls_of("sagemaker", "CreateEndpointConfig"):
        variants = call.params.get("ProductionVariants")
        if isinstance(variants, list) and len(variants) == 1 and isinstance(variants[0], dict):
            return str(variants[0].get("VariantName"))
    return None


def shared_names(plan: PlanToApply, operation: str, params: dict[str, Any]) -> str | None:
    endpoint = plan.resource.name
    made = [c.params.get("EndpointConfigName") for c in plan.calls_of("sagemaker", "CreateEndpointConfig")]
    if operation == "CreateEndpointConfig":
        name = params.get("EndpointConfigName")
        return None if name in config_names(plan) else f"names endpoint config {one_line(str(name))}"
    if operation == "CreateEndpoint":
        name = params.get("EndpointConfigName")
        return (names(params.get("EndpointName"), endpoint, "endpoint")
                or (None if name in config_names(plan) and name in made
                    else f"names endpoint config {one_line(str(name))} (not the one the plan creates)"))
    if operation == "CreateInferenceComponent":
        component = params.get("InferenceComponentName")
        member = next((m for m in members_of(plan) if m.get("endpoint") == component), None)
        if member is None:
            return f"names inference component {one_line(str(component))}, which is no member endpoint's name"
        given = params.get("Specification")
        specification: dict[str, Any] = given if isinstance(given, dict) else {}
        model = specification.get("ModelName")
        if model != member.get("model"):
            return (f"names model {one_line(str(model))} (member {one_line(str(component))} runs "
                    f"{one_line(str(member.get('model')))} in the plan's basis)")
        return (names(params.get("EndpointName"), endpoint, "endpoint")
                or names(params.get("VariantName"), _variant(plan) or "?", "variant"))
    return "is not checked"


def _tag_problem(params: dict[str, Any], plan: PlanToApply) -> str | None:
    given = params.get("Tags")
    tags: list[Any] = given if isinstance(given, list) else []
    keys = {str(t.get("Key")): t.get("Value") for t in tags if isinstance(t, dict)}
    if keys.get(PLAN_TAG) != plan.id:
        return f"does not carry the tag {PLAN_TAG}={plan.id}"
    if any(key.lower() == OPT_IN_TAG[0] for key in keys):
        return f"sets the opt-in tag {OPT_IN_TAG[0]}: only people set it"
    return None


def passed_role(plan: PlanToApply) -> str | None:
    """The role the plan's endpoint config passes to SageMaker (its ExecutionRoleArn), if any."""
    for call in plan.calls_of("sagemaker", "CreateEndpointConfig"):
        role = call.params.get("ExecutionRoleArn")
        if role is not None:
            return str(role)
    return None


def _role_problem(plan: PlanToApply, params: dict[str, Any]) -> str | None:
    """The config passes (iam:PassRole) only the role every member's model runs with as the plan's
    basis records it; never another, nor one where the basis records none (the target checks the
    models still run with it)."""
    passed = params.get("ExecutionRoleArn")
    if passed is None:
        return None
    recorded = {m.get("execution_role") for m in members_of(plan)}
    if recorded != {passed}:
        shown = ", ".join(sorted(one_line(str(r)) if r else "none" for r in recorded)) or "none"
        return (f"passes ExecutionRoleArn {one_line(str(passed))}, not the role the members' models run with in the "
                f"plan's basis ({shown})")
    return None


def shared_content(plan: PlanToApply, index: int, operation: str, params: dict[str, Any]) -> str | None:
    """Each create carries the plan's tag and not the opt-in; the config has one variant hosting
    components (no model of its own) and passes only the members' role; a component sets only its
    model, what a copy reserves and how many copies; the endpoint is created before its components."""
    problem = _tag_problem(params, plan)
    if problem:
        return problem
    if operation == "CreateEndpointConfig":
        variants = params.get("ProductionVariants")
        if not isinstance(variants, list) or len(variants) != 1 or not isinstance(variants[0], dict):
            return "does not define exactly one variant"
        if "ModelName" in variants[0]:
            return "gives its variant a model: the shared endpoint's variant hosts inference components"
        problem = _role_problem(plan, params)
        if problem:
            return problem
    if operation == "CreateInferenceComponent":
        specification = params.get("Specification")
        runtime = params.get("RuntimeConfig")
        if not isinstance(specification, dict) or set(specification) - SPECIFICATION_KEYS:
            return f"sets Specification beyond {', '.join(sorted(SPECIFICATION_KEYS))}"
        if not isinstance(runtime, dict) or set(runtime) - RUNTIME_KEYS:
            return f"sets RuntimeConfig beyond {', '.join(sorted(RUNTIME_KEYS))}"
        calls = plan.change.calls if plan.change else ()
        if not any(c.operation == "CreateEndpoint" for c in calls[:index]):
            return "comes before the CreateEndpoint of its endpoint"
    return None


SHARED_BINDING = CallBinding(SHARED_OPERATIONS, shared_names, SHARED_PARAMETER_KEYS, shared_content)
