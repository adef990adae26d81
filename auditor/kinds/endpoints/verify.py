"""What the next audit run checks after an endpoint plan is applied (auditor.act.verify runs it),
per what the change does:

- a deployment: it runs the config the change deployed, the variant in the proposed shape (for
  managed instance scaling: the variant under the plan's ManagedInstanceScaling, its count moving);
- a delete: it is gone (in a region the run read without error);
- off-hours schedules: it was deleted and created again by them (gone while the run read its
  region, or created after the apply);
- scheduled actions on inference components: the run fell in the quiet hours and saw every
  component at 0 copies (a run in working hours cannot tell);
- queue alarms: the alarms are among the endpoint's queue alarms (with a scaling policy, as below);
- a scaling policy: the variant is registered with Application Auto Scaling under it, with the
  capacities the change registered (a step policy from zero: MinCapacity 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.history.store import AppliedChange
from auditor.kinds.endpoints.change import MANAGED_SCALING
from auditor.kinds.endpoints.consolidation import SHARED_TYPE
from auditor.kinds.endpoints.models import Endpoint, EndpointReport
from auditor.write.verify import Evidence, ResourceKey, Verifier, operations, params_of


def endpoint_done(change: AppliedChange, evidence: Evidence) -> bool:
    endpoint: Endpoint | None = evidence.found(change, "endpoint")
    made = operations(change)
    if ("sagemaker", "UpdateEndpoint") in made:
        return endpoint is not None and has_new_shape(change, endpoint)
    if ("sagemaker", "DeleteEndpoint") in made:
        return evidence.absent(change, "endpoint")
    if ("scheduler", "CreateSchedule") in made:
        if endpoint is None:
            return evidence.absent(change, "endpoint")  # the evening's schedule deleted it
        return endpoint.created_at > change.finished_at  # deleted and created again since the apply
    if ("application-autoscaling", "PutScheduledAction") in made:
        components = {p["ResourceId"].split("/", 1)[-1] for p in params_of(change, "application-autoscaling",
                                                                           "PutScheduledAction")}
        copies = {c.name: c.copy_count for c in endpoint.inference_components} if endpoint else {}
        return bool(components) and all(copies.get(name) == 0 for name in components)
    if ("cloudwatch", "PutMetricAlarm") in made and endpoint is not None and endpoint.queue_alarms is not None:
        names = {p["AlarmName"] for p in params_of(change, "cloudwatch", "PutMetricAlarm")}
        if not names <= set(endpoint.queue_alarms):
            return False
        return ("application-autoscaling", "PutScalingPolicy") not in made or (
            _policies_done(change, endpoint) and _targets_done(change, endpoint))
    if ("application-autoscaling", "PutScalingPolicy") in made and endpoint is not None:
        return _policies_done(change, endpoint) and _targets_done(change, endpoint)
    return False


def _targets_done(change: AppliedChange, endpoint: Endpoint) -> bool:
    """Each variant target the change registered has the capacities it set (async-scale-from-zero's
    MinCapacity 0)."""
    for params in params_of(change, "application-autoscaling", "RegisterScalableTarget"):
        resource = str(params.get("ResourceId", ""))
        if not resource.startswith(f"endpoint/{endpoint.name}/variant/"):
            continue
        variant = next((v for v in endpoint.variants if v.name == resource.rsplit("/", 1)[-1]), None)
        scaling = variant.autoscaling if variant else None
        if scaling is None or (scaling.min_capacity, scaling.max_capacity) != (params.get("MinCapacity"),
                                                                               params.get("MaxCapacity")):
            return False
    return True


def _policies_done(change: AppliedChange, endpoint: Endpoint) -> bool:
    """Each policy the change put is among its variant's policies (listed as "name (type)")."""
    for params in params_of(change, "application-autoscaling", "PutScalingPolicy"):
        variant_name = str(params.get("ResourceId", "")).rsplit("/", 1)[-1]
        variant = next((v for v in endpoint.variants if v.name == variant_name), None)
        scaling = variant.autoscaling if variant else None
        listed = {p.rsplit(" (", 1)[0] for p in scaling.policies} if scaling else set()
        if params.get("PolicyName") not in listed:
            return False
    return True


def has_new_shape(change: AppliedChange, endpoint: Endpoint) -> bool:
    """The endpoint runs the change's config, and the variant the proposed type (and count, unless
    the plan put it under autoscaling, where the count moves)."""
    if not change.new_config or endpoint.config_name != change.new_config:
        return False
    variant = next((v for v in endpoint.variants if v.name == change.variant), None)
    if variant is None:
        return False
    proposed: dict[str, Any] = change.plan.get("proposed") or {}
    if proposed.get("instance_type") and variant.instance_type != proposed["instance_type"]:
        return False
    if proposed.get("action") == MANAGED_SCALING:
        return runs_scaling(endpoint, change.variant, (proposed.get("details") or {}).get("managed_instance_scaling"))
    if not proposed.get("autoscaling") and proposed.get("instance_count"):
        return variant.instance_count == int(proposed["instance_count"])
    return True


def runs_scaling(endpoint: Endpoint, variant: str | None, wanted: Any) -> bool:
    """The variant's ManagedInstanceScaling in the config the endpoint runs is `wanted` (as the
    config was described; where it was not, its min and max as the endpoint reports them)."""
    if not isinstance(wanted, dict):
        return False
    for described in (endpoint.config_description or {}).get("ProductionVariants") or []:
        if isinstance(described, dict) and described.get("VariantName") == variant:
            return described.get("ManagedInstanceScaling") == wanted
    found = next((v for v in endpoint.variants if v.name == variant), None)
    scaling = found.managed_scaling if found else None
    return (endpoint.config_description is None and scaling is not None and wanted.get("Status") == "ENABLED"
            and (scaling.min_instances, scaling.max_instances)
            == (wanted.get("MinInstanceCount"), wanted.get("MaxInstanceCount")))


def seen(section: tuple[EndpointReport, ...] | None) -> Mapping[str, Mapping[ResourceKey, Any] | None]:
    """The endpoints the run saw (every run audits endpoints: none is an empty section); a shared
    endpoint a consolidation created is one of them."""
    endpoints = {(e.endpoint.account_id, e.endpoint.region, e.endpoint.name): e.endpoint for e in section or ()}
    return {"endpoint": endpoints, SHARED_TYPE: endpoints}


def shared_done(change: AppliedChange, evidence: Evidence) -> bool:
    """The shared endpoint InService hosting every component the change created, each InService."""
    endpoint: Endpoint | None = evidence.found(change, SHARED_TYPE)
    if endpoint is None or endpoint.status != "InService":
        return False
    hosted = {c.name: c.status for c in endpoint.inference_components}
    names = {str(p.get("InferenceComponentName")) for p in params_of(change, "sagemaker", "CreateInferenceComponent")}
    return bool(names) and all(hosted.get(name) == "InService" for name in names)


VERIFIERS: dict[str, Verifier] = {"endpoint": endpoint_done, SHARED_TYPE: shared_done}
