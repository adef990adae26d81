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
from auditor.report.render import one_line

_TARGET_KEYS = ("MinCapacity", "MaxCapacity", "SuspendedState")
_POLICY_KEYS = ("PolicyName", "PolicyType", "TargetTrackingScalingPolicyConfiguration",
                "StepScalingPolicyConfiguration", "PredictiveScalingPolicyConfiguration")
_ACTION_KEYS = ("ScheduledActionName", "Schedule", "Timezone", "StartTime", "EndTime", "ScalableTargetAction")


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
    def from_dict(cls, data: dict[str, Any]) -> ScalingSnapshot:
        return cls(str(data["namespace"]), str(data["resource_id"]), str(data["dimension"]), data.get("target"),
                   tuple(data.get("policies") or ()), tuple(data.get("scheduled_actions") or ()))

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


def restore_calls(snapshot: ScalingSnapshot) -> list[ApiCall]:
    """RegisterScalableTarget as read, then each policy and scheduled action as read."""
    if snapshot.target is None:
        return []
    keys = {"ServiceNamespace": snapshot.namespace, "ResourceId": snapshot.resource_id,
            "ScalableDimension": snapshot.dimension}
    calls = [ApiCall("application-autoscaling", "RegisterScalableTarget", {**keys, **snapshot.target},
                     f"register {snapshot.resource_id} again as it was")]
    calls += [ApiCall("application-autoscaling", "PutScalingPolicy", {**keys, **policy},
                      f"put policy {policy.get('PolicyName')} back as it was") for policy in snapshot.policies]
    calls += [ApiCall("application-autoscaling", "PutScheduledAction", {**keys, **action},
                      f"put scheduled action {action.get('ScheduledActionName')} back as it was")
              for action in snapshot.scheduled_actions]
    return calls


def restore(clients: AwsClients, region: str, snapshot: ScalingSnapshot) -> tuple[list[ApiCall], str | None]:
    """Make the restore calls in order: (those made, the problem that stopped them or None)."""
    made: list[ApiCall] = []
    api = clients.client("application-autoscaling", region)
    for call in restore_calls(snapshot):
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
