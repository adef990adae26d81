"""An autoscaled variant's protection, read right before apply deregisters it and put back on any
failure after (AWS's guide "Update endpoints that use auto scaling": deregister, update, register
again; DeregisterScalableTarget deletes the target's scaling policies and scheduled actions).

`read_scaling` reads the scalable target, its policies and its scheduled actions as they are
(DescribeScalableTargets, DescribeScalingPolicies, DescribeScheduledActions); the journal keeps them.
`restore_calls` are the calls that register the target again and put every policy and scheduled
action back as read: RegisterScalableTarget, PutScalingPolicy, PutScheduledAction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import botocore.exceptions

from auditor.collect.session import AwsClients, describe_client_error
from auditor.models import ApiCall
from auditor.text import one_line

_TARGET_KEYS = ("MinCapacity", "MaxCapacity", "SuspendedState")
_POLICY_KEYS = ("PolicyName", "PolicyType", "TargetTrackingScalingPolicyConfiguration",
                "StepScalingPolicyConfiguration", "PredictiveScalingPolicyConfiguration")
_ACTION_KEYS = ("ScheduledActionName", "Schedule", "Timezone", "StartTime", "EndTime", "ScalableTargetAction")
NAMESPACE = "sagemaker"
DIMENSION = "sagemaker:variant:DesiredInstanceCount"


def variant_resource(endpoint: str, variant: str | None) -> str:
    """The ResourceId of an endpoint variant's scalable target."""
    return f"endpoint/{endpoint}/variant/{variant}"


def _kept(item: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: item[k] for k in keys if k in item} if isinstance(item, dict) else {}


@dataclass(frozen=True)
class ScalingSnapshot:
    """A scalable target as read before it was deregistered (target None: none was registered)."""

    namespace: str
    resource_id: str
    dimension: str
    target: dict[str, Any] | None
    policies: tuple[dict[str, Any], ...]
    scheduled_actions: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "resource_id": self.resource_id, "dimension": self.dimension,
                "target": self.target, "policies": list(self.policies),
                "scheduled_actions": list(self.scheduled_actions)}

    @classmethod
    def from_dict(cls, data: dict[str, Any], endpoint: str, variant: str | None) -> ScalingSnapshot:
        """A snapshot as the journal keeps it, trusted only as far as it is the one this row's apply could
        have read: the variant's own target (namespace, dimension and ResourceId derived from the row's
        endpoint and variant) and only the fields read_scaling keeps. ValueError otherwise."""
        resource = variant_resource(endpoint, variant)
        if (variant is None or data.get("namespace") != NAMESPACE or data.get("dimension") != DIMENSION
                or data.get("resource_id") != resource):
            raise ValueError(f"the journal's scalable target {one_line(str(data.get('resource_id')))} is not "
                             f"{one_line(resource)}")
        target = data.get("target")
        return cls(NAMESPACE, resource, DIMENSION, _kept(target, _TARGET_KEYS) if target is not None else None,
                   tuple(_kept(p, _POLICY_KEYS) for p in data.get("policies") or ()),
                   tuple(_kept(a, _ACTION_KEYS) for a in data.get("scheduled_actions") or ()))

    def step_note(self) -> str:
        """Step-scaling policies put back get a new ARN; the alarms that invoked them name the deleted
        one (a step policy acts only through an alarm's actions): said, for the alarms to be fixed by hand."""
        steps = [one_line(str(p.get("PolicyName"))) for p in self.policies if p.get("PolicyType") == "StepScaling"]
        if not steps:
            return ""
        return (f"; step-scaling polic{'ies' if len(steps) > 1 else 'y'} {', '.join(steps)} put back with a new ARN: "
                f"the alarms that invoked {'them' if len(steps) > 1 else 'it'} name the deleted one and are not "
                "restored: point their actions at the new ARN by hand (aws application-autoscaling "
                "describe-scaling-policies)")

    def describe(self) -> str:
        if self.target is None:
            return f"{one_line(self.resource_id)} (not registered)"
        names = [one_line(str(p.get("PolicyName"))) for p in self.policies]
        return (f"{one_line(self.resource_id)} ({self.target.get('MinCapacity')}-{self.target.get('MaxCapacity')} "
                f"instances, policies {', '.join(names) or '(none)'}"
                f"{f', {len(self.scheduled_actions)} scheduled actions' if self.scheduled_actions else ''})")


def read_scaling(clients: AwsClients, region: str, params: dict[str, Any]) -> ScalingSnapshot:
    """The target a DeregisterScalableTarget call names, as it is now; raises botocore's errors."""
    api = clients.client("application-autoscaling", region)
    keys = {"ServiceNamespace": params["ServiceNamespace"], "ScalableDimension": params["ScalableDimension"]}
    resource = str(params["ResourceId"])
    targets = [t for page in api.get_paginator("describe_scalable_targets").paginate(**keys, ResourceIds=[resource])
               for t in page.get("ScalableTargets", []) if t.get("ResourceId") == resource]
    policies = [p for page in api.get_paginator("describe_scaling_policies").paginate(**keys, ResourceId=resource)
                for p in page.get("ScalingPolicies", []) if p.get("ResourceId") == resource]
    actions = [a for page in api.get_paginator("describe_scheduled_actions").paginate(**keys, ResourceId=resource)
               for a in page.get("ScheduledActions", []) if a.get("ResourceId") == resource]
    return ScalingSnapshot(
        namespace=str(params["ServiceNamespace"]), resource_id=resource, dimension=str(params["ScalableDimension"]),
        target={k: targets[0][k] for k in _TARGET_KEYS if k in targets[0]} if targets else None,
        policies=tuple({k: p[k] for k in _POLICY_KEYS if k in p} for p in policies),
        scheduled_actions=tuple({k: a[k] for k in _ACTION_KEYS if k in a} for a in actions))


def planned_scaling(planned: list[Any], endpoint: str, variant: str | None,
                    read: ScalingSnapshot | None) -> ScalingSnapshot | None:
    """The scaling a plan gives the variant on its new config: its RegisterScalableTarget,
    PutScalingPolicy and PutScheduledAction calls after UpdateEndpoint (`planned`: the journal's
    intent, call dicts), and the scheduled actions `read` before the change that it does not put
    itself. Kept to the variant's own target and the fields read_scaling keeps; None when the plan
    registers no target."""
    if variant is None:
        return None
    ops = [c for c in planned if isinstance(c, dict) and c.get("service") == "application-autoscaling"]
    after = [c for c in planned if isinstance(c, dict)]
    update = next((i for i, c in enumerate(after) if c.get("operation") == "UpdateEndpoint"), None)
    if update is None:
        return None
    ops = [c for c in after[update + 1:] if c in ops]

    def params(operation: str) -> list[Any]:
        return [c.get("params") for c in ops if c.get("operation") == operation]

    targets = params("RegisterScalableTarget")
    if not targets:
        return None
    actions = [_kept(a, _ACTION_KEYS) for a in params("PutScheduledAction")]
    named = {a.get("ScheduledActionName") for a in actions}
    actions += [a for a in (read.scheduled_actions if read else ()) if a.get("ScheduledActionName") not in named]
    return ScalingSnapshot(NAMESPACE, variant_resource(endpoint, variant), DIMENSION, _kept(targets[-1], _TARGET_KEYS),
                           tuple(_kept(p, _POLICY_KEYS) for p in params("PutScalingPolicy")), tuple(actions))


def restore_calls(snapshot: ScalingSnapshot, register: bool = True) -> list[ApiCall]:
    """RegisterScalableTarget as read (unless `register` is False), then each policy and scheduled
    action as read; the target's keys are the snapshot's, whatever a policy or action says."""
    if snapshot.target is None:
        return []
    keys = {"ServiceNamespace": snapshot.namespace, "ResourceId": snapshot.resource_id,
            "ScalableDimension": snapshot.dimension}
    calls = [ApiCall("application-autoscaling", "RegisterScalableTarget", {**snapshot.target, **keys},
                     f"register {snapshot.resource_id} again as it was")] if register else []
    calls += [ApiCall("application-autoscaling", "PutScalingPolicy", {**policy, **keys},
                      f"put policy {policy.get('PolicyName')} back as it was") for policy in snapshot.policies]
    calls += [ApiCall("application-autoscaling", "PutScheduledAction", {**action, **keys},
                      f"put scheduled action {action.get('ScheduledActionName')} back as it was")
              for action in snapshot.scheduled_actions]
    return calls


def restore(clients: AwsClients, region: str, snapshot: ScalingSnapshot,
            register: bool = True) -> tuple[list[ApiCall], str | None]:
    """Make the restore calls in order: (those made, the problem that stopped them or None)."""
    made: list[ApiCall] = []
    api = clients.client("application-autoscaling", region)
    for call in restore_calls(snapshot, register):
        method = {"RegisterScalableTarget": api.register_scalable_target, "PutScalingPolicy": api.put_scaling_policy,
                  "PutScheduledAction": api.put_scheduled_action}[call.operation]
        try:
            method(**call.params)
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            return made, describe_client_error(exc, call.service, call.operation, region)
        made.append(call)
    return made, None


def registered(clients: AwsClients, region: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The scalable target a call names as DescribeScalableTargets shows it now (None: not registered)."""
    api = clients.client("application-autoscaling", region)
    found = api.describe_scalable_targets(ServiceNamespace=params["ServiceNamespace"],
                                          ScalableDimension=params["ScalableDimension"],
                                          ResourceIds=[params["ResourceId"]])
    return next((dict(t) for t in found.get("ScalableTargets", []) if t.get("ResourceId") == params["ResourceId"]),
                None)


def by_hand(snapshot: ScalingSnapshot, region: str) -> str:
    """The AWS CLI command that registers the target again (the policies are in the journal)."""
    if snapshot.target is None:
        return ""
    return (f"aws application-autoscaling register-scalable-target --service-namespace {snapshot.namespace} "
            f"--resource-id {one_line(snapshot.resource_id)} --scalable-dimension {snapshot.dimension} "
            f"--min-capacity {snapshot.target.get('MinCapacity')} --max-capacity {snapshot.target.get('MaxCapacity')} "
            f"--region {region}")
