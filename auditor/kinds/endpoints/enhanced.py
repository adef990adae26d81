"""Per-instance and per-GPU series of endpoints whose config enables enhanced metrics.

With `MetricsConfig.EnableEnhancedMetrics`, SageMaker adds an `InstanceId` dimension to the
utilisation metrics of /aws/sagemaker/Endpoints, an `AcceleratorId` dimension to the GPU ones, and
an `InstanceId` dimension to the invocation metrics of AWS/SageMaker (the SageMaker guide's
"enhanced metrics" and "metric name mapping" pages: Invocations by EndpointName, VariantName,
InstanceId). Instance ids are not known in advance: one paginated ListMetrics per namespace and
region (filtered to series that carry an InstanceId; in AWS/SageMaker to Invocations only) finds
them all, and only the series of endpoints that enabled the feature become GetMetricData queries,
with their dimensions exactly as ListMetrics listed them (some stores match them in order). The
queries are owned by component "instance:<id>" or "accelerator:<id>/<accelerator>", so they never
mix with the variant's own frame; an instance's requests (Invocations:Sum) sit in its frame beside
its utilisation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.plan import AVERAGE, MAXIMUM, SUM, MetricSpec, SeriesQuery
from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region
from auditor.kinds.endpoints.metrics import INSTANCE_NAMESPACE, INVOCATION_NAMESPACE
from auditor.kinds.endpoints.models import Endpoint
from auditor.models import AuditError

INSTANCE_PREFIX = "instance:"
ACCELERATOR_PREFIX = "accelerator:"
# What is read per instance (disk is not judged) and per accelerator.
INSTANCE_METRICS = ("CPUUtilization", "MemoryUtilization", "GPUUtilization", "GPUMemoryUtilization")
ACCELERATOR_METRICS = ("GPUUtilization", "GPUMemoryUtilization")
# Requests each instance served: routing skew (one instance served most) or per-request cost (even
# requests, uneven CPU). Real-time endpoints only: async ones publish no Invocations at all.
INSTANCE_INVOCATION_METRICS = ("Invocations",)
# One ListMetrics listing per namespace: (namespace, its MetricName filter or None for all).
_LISTED = (
    (INSTANCE_NAMESPACE, None),
    (INVOCATION_NAMESPACE, "Invocations"),
)


@dataclass(frozen=True)
class EnhancedSeries:
    queries: tuple[SeriesQuery, ...] = ()
    errors: tuple[AuditError, ...] = ()
    calls: int = 0  # ListMetrics pages


def instance_owner(instance_id: str) -> str:
    return f"{INSTANCE_PREFIX}{instance_id}"


def accelerator_owner(instance_id: str, accelerator_id: str) -> str:
    return f"{ACCELERATOR_PREFIX}{instance_id}/{accelerator_id}"


def wants_enhanced(endpoint: Endpoint) -> bool:
    return endpoint.enhanced_metrics and not endpoint.not_judged_reason and not (
        endpoint.skipped_reason and not endpoint.skipped_rules)


def enhanced_queries(cloudwatch: BaseClient, region: str, endpoints: Iterable[Endpoint]) -> EnhancedSeries:
    """The per-instance and per-accelerator queries of the endpoints that enabled enhanced metrics
    (none, and no call, when no endpoint did)."""
    variants = {(e.name, v.name) for e in endpoints if wants_enhanced(e) for v in e.variants}
    if not variants:
        return EnhancedSeries()
    calls = 0
    listed: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
    try:
        for namespace, metric_name in _LISTED:
            filters: dict[str, object] = {"Namespace": namespace, "Dimensions": [{"Name": "InstanceId"}]}
            if metric_name:
                filters["MetricName"] = metric_name
            for page in cloudwatch.get_paginator("list_metrics").paginate(**filters):
                calls += 1
                for metric in page.get("Metrics", []):
                    dims = tuple((d["Name"], d["Value"]) for d in metric.get("Dimensions", []))
                    # some stores list a series once per datapoint
                    listed.add((metric.get("Namespace", namespace), metric.get("MetricName", ""), dims))
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        message = describe_client_error(exc, "cloudwatch", "ListMetrics", region)
        if isinstance(exc, botocore.exceptions.ClientError) and is_fatal_for_region(exc):
            raise RegionAccessError(message) from exc
        return EnhancedSeries(errors=(AuditError(region, None, "collect",
                                                 f"{message}: per-instance series not read, sized from the "
                                                 "variant mean"),), calls=calls)
    queries: list[SeriesQuery] = []
    for namespace, metric, dims in sorted(listed):
        named = dict(dims)
        key = (named.get("EndpointName", ""), named.get("VariantName", ""))
        instance = named.get("InstanceId")
        if key not in variants or not instance or set(named) - {"EndpointName", "VariantName", "InstanceId",
                                                                "AcceleratorId"}:
            continue
        if "/" in instance:
            continue  # not an instance id (EC2's never hold one); the owner names below are split on it
        accelerator = named.get("AcceleratorId")
        if namespace == INVOCATION_NAMESPACE:
            if metric in INSTANCE_INVOCATION_METRICS and accelerator is None:
                queries.append(SeriesQuery(key[0], key[1], MetricSpec(INVOCATION_NAMESPACE, metric, SUM),
                                           instance_owner(instance), given=dims))
            continue
        if namespace != INSTANCE_NAMESPACE:
            continue
        if accelerator is not None:
            if metric not in ACCELERATOR_METRICS:
                continue
            owner = accelerator_owner(instance, accelerator)
        elif metric in INSTANCE_METRICS:
            owner = instance_owner(instance)
        else:
            continue
        queries.extend(SeriesQuery(key[0], key[1], MetricSpec(INSTANCE_NAMESPACE, metric, stat), owner, given=dims)
                       for stat in (AVERAGE, MAXIMUM))
    return EnhancedSeries(tuple(queries), calls=calls)
