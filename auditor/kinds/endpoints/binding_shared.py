"""Every call of a consolidation plan (resource type "shared-endpoint") names what the plan creates
and nothing else (auditor.act.binding runs these checks): the endpoint config named after the shared
endpoint and the plan id, the shared endpoint on it, and one inference component per member endpoint
(named as the member, running the model the member runs as the plan's basis records it, on the
config's one variant). Every one carries the plan's tag `auditor:plan` (how a retry tells its own
shared endpoint from another's, and what IAM requires) and never the opt-in tag. No call deletes
or updates anything: those operations are not the type's.
"""

from __future__ import annotations

from typing import Any

from auditor.config import OPT_IN_TAG
from auditor.kinds.endpoints.target_shared import members_of
from auditor.recommend.change import PLAN_TAG, resource_name
from auditor.text import one_line
from auditor.write.binding import CallBinding, names
from auditor.write.plan import PlanToApply

OPERATIONS = frozenset({("sagemaker", "CreateEndpointConfig"), ("sagemaker", "CreateEndpoint"),
                        ("sagemaker", "CreateInferenceComponent")})
PARAMETER_KEYS: dict[str, frozenset[str]] = {
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


def shared_content(plan: PlanToApply, index: int, operation: str, params: dict[str, Any]) -> str | None:
    """Each create carries the plan's tag and not the opt-in; the config has one variant hosting
    components (no model of its own); a component sets only its model, what a copy reserves and how
    many copies; the endpoint is created before its components."""
    problem = _tag_problem(params, plan)
    if problem:
        return problem
    if operation == "CreateEndpointConfig":
        variants = params.get("ProductionVariants")
        if not isinstance(variants, list) or len(variants) != 1 or not isinstance(variants[0], dict):
            return "does not define exactly one variant"
        if "ModelName" in variants[0]:
            return "gives its variant a model: the shared endpoint's variant hosts inference components"
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


BINDING = CallBinding(OPERATIONS, shared_names, PARAMETER_KEYS, shared_content)
