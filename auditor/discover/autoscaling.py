"""Application Auto Scaling targets and policies of SageMaker variants, one region at a time.

Two paginated region-wide calls serve every endpoint, instead of one call per variant.
"""

from __future__ import annotations

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error
from auditor.models import AutoScaling

SCALABLE_DIMENSION = "sagemaker:variant:DesiredInstanceCount"


def variant_resource_id(endpoint: str, variant: str) -> str:
    return f"endpoint/{endpoint}/variant/{variant}"


def discover_autoscaling(autoscaling: BaseClient, region: str) -> dict[str, AutoScaling]:
    """Scalable targets by ResourceId; raises RegionAccessError when they cannot be read."""
    targets: dict[str, dict] = {}
    policies: dict[str, list[str]] = {}
    operation = "DescribeScalableTargets"
    try:
        for page in autoscaling.get_paginator("describe_scalable_targets").paginate(ServiceNamespace="sagemaker"):
            for target in page.get("ScalableTargets", []):
                if target.get("ScalableDimension") == SCALABLE_DIMENSION:
                    targets[target["ResourceId"]] = target
        operation = "DescribeScalingPolicies"
        for page in autoscaling.get_paginator("describe_scaling_policies").paginate(ServiceNamespace="sagemaker"):
            for policy in page.get("ScalingPolicies", []):
                if policy.get("ScalableDimension") == SCALABLE_DIMENSION:
                    policies.setdefault(policy["ResourceId"], []).append(
                        f"{policy['PolicyName']} ({policy.get('PolicyType', 'unknown')})"
                    )
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "application-autoscaling", operation, region)) from exc
    return {
        resource_id: AutoScaling(
            min_capacity=int(target.get("MinCapacity", 0)),
            max_capacity=int(target.get("MaxCapacity", 0)),
            policies=tuple(policies.get(resource_id, ())),
        )
        for resource_id, target in targets.items()
    }
