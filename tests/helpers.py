"""Small builders for the unit tests of the pure stages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd

from auditor.kinds.endpoints.models import Endpoint, EndpointKind, Variant
from auditor.models import Resource, ResourceUtilization, VariantUtilization

NOW = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)


def hourly_frame(days: float = 14, **columns: float | list[float]) -> pd.DataFrame:
    """A raw frame like the collector's: columns 'Metric:Stat', one row per hour."""
    hours = int(days * 24)
    index = pd.date_range(end=NOW - timedelta(hours=1), periods=hours, freq="h", tz="UTC")
    data = {}
    for name, value in columns.items():
        metric, stat = name.split("__")
        values = np.full(hours, value, dtype=float) if np.isscalar(value) else np.resize(np.array(value, float), hours)
        data[f"{metric}:{stat}"] = values
    return pd.DataFrame(data, index=index)


def endpoint(name: str = "ep", variants: tuple[Variant, ...] | None = None, kind: EndpointKind = EndpointKind.REAL_TIME,
             age_days: float = 60, status: str = "InService", not_judged_reason: str | None = None) -> Endpoint:
    return Endpoint(
        account_id="123456789012", region="us-east-1", name=name,
        arn=f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{name}",
        status=status, kind=kind, created_at=NOW - timedelta(days=age_days), config_name=f"{name}-config",
        tags={}, variants=variants or (Variant("AllTraffic", "ml.m5.xlarge", 1),),
        not_judged_reason=not_judged_reason,
    )


def utilization(peak: dict[Resource, float], sizing: dict[Resource, float] | None = None, days: float = 14,
                invocations: float | None = 1000.0) -> VariantUtilization:
    sizing = sizing if sizing is not None else peak
    return VariantUtilization(
        by_resource={r: ResourceUtilization(avg=v / 2, p95=sizing.get(r, v), max=v) for r, v in peak.items()},
        instance_metric_days=days, invocations=invocations, sizing=dict(sizing), peak=dict(peak),
    )


def live_basis(endpoint_name: str, region: str = "us-east-1") -> dict[str, Any]:
    """The `basis` an audit run now would record for an endpoint in the emulator (its config, its
    variants and their scalable targets as they are), for a plan a test makes rather than the audit."""
    import boto3

    sagemaker = boto3.client("sagemaker", region_name=region)
    autoscaling = boto3.client("application-autoscaling", region_name=region)
    described = sagemaker.describe_endpoint(EndpointName=endpoint_name)
    config = sagemaker.describe_endpoint_config(EndpointConfigName=described["EndpointConfigName"])
    variants = []
    for variant in config["ProductionVariants"]:
        running = next(v for v in described["ProductionVariants"] if v["VariantName"] == variant["VariantName"])
        resource = f"endpoint/{endpoint_name}/variant/{variant['VariantName']}"
        targets = autoscaling.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=[resource])
        policies = autoscaling.describe_scaling_policies(ServiceNamespace="sagemaker", ResourceId=resource)
        scaled = [{"min_capacity": t["MinCapacity"], "max_capacity": t["MaxCapacity"],
                   "policies": [f"{p['PolicyName']} ({p['PolicyType']})" for p in policies["ScalingPolicies"]]}
                  for t in targets["ScalableTargets"]]
        variants.append({"name": variant["VariantName"], "instance_type": variant.get("InstanceType"),
                         "instance_count": running.get("CurrentInstanceCount"), "weight": running.get("CurrentWeight"),
                         "shadow": False, "serverless": None, "managed_instance_scaling": None,
                         "autoscaling": scaled[0] if scaled else None})
    return {"endpoint_config_name": described["EndpointConfigName"], "status": described["EndpointStatus"],
            "autoscaling_read": True, "variants": variants}


_KIND_OF_TYPE = {"endpoint": "endpoints", "endpoint-fleet": "endpoints", "training-job": "jobs",
                 "transform-job": "jobs",
                 "processing-job": "jobs", "notebook-instance": "workspaces", "studio-app": "workspaces",
                 "studio-domain": "workspaces", "hyperpod-cluster": "hyperpod"}


def resource_json(name: str, resource_type: str = "endpoint", account_id: str = "123456789012",
                  region: str = "us-east-1") -> dict[str, str]:
    """A finding's or a stored plan's `resource` as the JSON document (schema 9) writes it."""
    return {"kind": _KIND_OF_TYPE[resource_type], "type": resource_type, "name": name, "account_id": account_id,
            "region": region}
