"""Application Auto Scaling targets and policies of SageMaker variants, one region at a time.

Two paginated region-wide calls serve every endpoint, instead of one call per variant. Each
policy's settings and the target's SuspendedState are kept as read: a resize that must deregister
the target puts them back (kinds/endpoints/change.py), with no call of its own.
"""

from __future__ import annotations

import json
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error
from auditor.kinds.endpoints.models import AutoScaling, ReadScalingPolicy

SCALABLE_DIMENSION = "sagemaker:variant:DesiredInstanceCount"
COPY_DIMENSION = "sagemaker:inference-component:DesiredCopyCount"
# A variant's instances, and an inference component's copies: the targets the audit reads.
READ_DIMENSIONS = frozenset({SCALABLE_DIMENSION, COPY_DIMENSION})
# Where each policy type's settings are in DescribeScalingPolicies' answer (and PutScalingPolicy's request).
CONFIGURATION_FIELDS = {"TargetTrackingScaling": "TargetTrackingScalingPolicyConfiguration",
                        "StepScaling": "StepScalingPolicyConfiguration",
                        "PredictiveScaling": "PredictiveScalingPolicyConfiguration"}
SUSPENDED_FIELDS = ("DynamicScalingInSuspended", "DynamicScalingOutSuspended", "ScheduledScalingSuspended")


def variant_resource_id(endpoint: str, variant: str) -> str:
    return f"endpoint/{endpoint}/variant/{variant}"


def component_resource_id(component: str) -> str:
    return f"inference-component/{component}"


def discover_autoscaling(autoscaling: BaseClient, region: str) -> dict[str, AutoScaling]:
    """Scalable targets (variants' and inference components') by ResourceId; raises
    RegionAccessError when they cannot be read."""
    targets: dict[str, dict] = {}
    policies: dict[str, list[str]] = {}
    read: dict[str, list[ReadScalingPolicy]] = {}
    operation = "DescribeScalableTargets"
    try:
        for page in autoscaling.get_paginator("describe_scalable_targets").paginate(ServiceNamespace="sagemaker"):
            for target in page.get("ScalableTargets", []):
                if target.get("ScalableDimension") in READ_DIMENSIONS:
                    targets[target["ResourceId"]] = target
        operation = "DescribeScalingPolicies"
        for page in autoscaling.get_paginator("describe_scaling_policies").paginate(ServiceNamespace="sagemaker"):
            for policy in page.get("ScalingPolicies", []):
                if policy.get("ScalableDimension") in READ_DIMENSIONS:
                    policies.setdefault(policy["ResourceId"], []).append(
                        f"{policy['PolicyName']} ({policy.get('PolicyType', 'unknown')})"
                    )
                    read.setdefault(policy["ResourceId"], []).append(_read_policy(policy))
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "application-autoscaling", operation, region)) from exc
    return {
        resource_id: AutoScaling(
            min_capacity=int(target.get("MinCapacity", 0)),
            max_capacity=int(target.get("MaxCapacity", 0)),
            policies=tuple(policies.get(resource_id, ())),
            read_policies=tuple(read.get(resource_id, ())),
            suspended_state=_suspended_state(target.get("SuspendedState")),
        )
        for resource_id, target in targets.items()
    }


def _read_policy(policy: dict[str, Any]) -> ReadScalingPolicy:
    """A policy's settings as stated (a deep, JSON-safe copy); None where its type's are missing."""
    policy_type = str(policy.get("PolicyType") or "unknown")
    field = CONFIGURATION_FIELDS.get(policy_type)
    stated = policy.get(field) if field else None
    configuration = _json_copy(stated) if isinstance(stated, dict) and stated else None
    alarms = tuple(str(a["AlarmName"]) for a in policy.get("Alarms") or []
                   if isinstance(a, dict) and a.get("AlarmName"))
    return ReadScalingPolicy(str(policy["PolicyName"]), policy_type, configuration, alarms)


def _suspended_state(stated: Any) -> dict[str, bool] | None:
    if not isinstance(stated, dict):
        return None
    return {key: stated[key] for key in SUSPENDED_FIELDS if isinstance(stated.get(key), bool)} or None


def _json_copy(stated: dict[str, Any]) -> dict[str, Any] | None:
    """A deep copy that a plan can store and a request can carry; None when it holds anything else."""
    try:
        copied = json.loads(json.dumps(stated))
    except (TypeError, ValueError):
        return None
    return copied if isinstance(copied, dict) else None
