"""Utilisation of an EKS-orchestrated HyperPod cluster's nodes: Container Insights' node metrics.

The CloudWatch Observability EKS add-on (Container Insights) publishes, per node, in namespace
`ContainerInsights` with the dimensions {ClusterName, InstanceId, NodeName} (ClusterName is the
EKS cluster's): node_cpu_utilization and node_memory_utilization (percent of the node), and with
accelerated compute metrics on NVIDIA nodes node_gpu_utilization and node_gpu_memory_utilization.
NodeName is Kubernetes' name for the node, which no SageMaker API returns: the series are found
with ListMetrics (ClusterName filter) and matched to the cluster's nodes by InstanceId, never by a
guessed name. Slurm clusters publish none of these.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error
from auditor.kinds.hyperpod.models import Cluster

NAMESPACE = "ContainerInsights"
NODE_DIMENSIONS = frozenset({"ClusterName", "InstanceId", "NodeName"})
CPU = "node_cpu_utilization"
MEMORY = "node_memory_utilization"
GPU = "node_gpu_utilization"
GPU_MEMORY = "node_gpu_memory_utilization"
NODE_METRICS = (CPU, MEMORY, GPU, GPU_MEMORY)
# Per period the busiest minute: a node is idle only if even that stayed low.
STAT = "Maximum"


@dataclass(frozen=True)
class NodeSeries:
    """One published series of one HyperPod node."""

    cluster_arn: str
    instance_group: str
    instance_id: str
    metric: str
    dimensions: tuple[tuple[str, str], ...]  # exactly as ListMetrics returned them

    @property
    def node_name(self) -> str:
        return dict(self.dimensions).get("NodeName", "")


def list_node_metrics(cloudwatch: BaseClient, region: str, eks_cluster_name: str) -> list[Mapping[str, Any]]:
    """ListMetrics of ContainerInsights for one EKS cluster (paged, 500 a page)."""
    try:
        return [m
                for page in cloudwatch.get_paginator("list_metrics").paginate(
                    Namespace=NAMESPACE, Dimensions=[{"Name": "ClusterName", "Value": eks_cluster_name}])
                for m in page.get("Metrics", [])
                if m.get("MetricName") in NODE_METRICS]
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "cloudwatch", "ListMetrics", region)) from exc


def match_node_series(cluster: Cluster, listed: Iterable[Mapping[str, Any]]) -> tuple[NodeSeries, ...]:
    """The listed node-level series that belong to the cluster's nodes: the EKS cluster's name, the
    node-level dimension set (not the per-GPU one with GpuDevice) and a known InstanceId."""
    eks_name = cluster.eks_cluster_name
    if eks_name is None:
        return ()
    group_of = {n.instance_id: n.instance_group for n in cluster.nodes}
    found: dict[tuple[str, str], NodeSeries] = {}
    for metric in listed:
        dims = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
        if set(dims) != NODE_DIMENSIONS or dims["ClusterName"] != eks_name:
            continue
        instance_id = dims["InstanceId"]
        if instance_id not in group_of or metric.get("MetricName") not in NODE_METRICS:
            continue
        key = (instance_id, metric["MetricName"])
        # Some stores list a metric once per datapoint: keep one.
        found.setdefault(key, NodeSeries(cluster.arn, group_of[instance_id], instance_id, metric["MetricName"],
                                         tuple(sorted(dims.items()))))
    return tuple(found[k] for k in sorted(found))


def metric_data_queries(series: Sequence[NodeSeries], period_seconds: int) -> list[dict[str, Any]]:
    """GetMetricData queries, one per series, Id `q<index>` in the order of `series`."""
    return [{
        "Id": f"q{i}",
        "MetricStat": {
            "Metric": {"Namespace": NAMESPACE, "MetricName": s.metric,
                       "Dimensions": [{"Name": k, "Value": v} for k, v in s.dimensions]},
            "Period": period_seconds,
            "Stat": STAT,
        },
        "ReturnData": True,
    } for i, s in enumerate(series)]


@dataclass(frozen=True)
class NodeUtilisation:
    """The highest per-period Maximum of each metric over the window; None: not published.
    `periods` counts the periods with a CPU datapoint (how much of the window was observed)."""

    instance_id: str
    cpu_max: float | None
    memory_max: float | None
    gpu_max: float | None
    gpu_memory_max: float | None
    periods: int


def summarise(series: Sequence[NodeSeries], values: Mapping[int, Sequence[float]]) -> dict[str, NodeUtilisation]:
    """Per instance id, from the values of each query (by its index in `series`)."""
    highest: dict[str, dict[str, float]] = {}
    periods: dict[str, int] = {}
    for i, s in enumerate(series):
        points = [v for v in values.get(i, ()) if not math.isnan(v)]
        if not points:
            continue
        highest.setdefault(s.instance_id, {})[s.metric] = max(points)
        if s.metric == CPU:
            periods[s.instance_id] = len(points)
    return {
        node: NodeUtilisation(node, m.get(CPU), m.get(MEMORY), m.get(GPU), m.get(GPU_MEMORY), periods.get(node, 0))
        for node, m in highest.items()
    }


def fetch_node_utilisation(cloudwatch: BaseClient, region: str, cluster: Cluster, start: datetime, end: datetime,
                           period_seconds: int) -> dict[str, NodeUtilisation]:
    """ListMetrics, then GetMetricData (500 queries a call, NextToken followed) for one EKS cluster.
    Until the shared collector takes these queries, this is the whole collection for the kind."""
    if cluster.eks_cluster_name is None:
        return {}
    series = match_node_series(cluster, list_node_metrics(cloudwatch, region, cluster.eks_cluster_name))
    queries = metric_data_queries(series, period_seconds)
    values: dict[int, list[float]] = {}
    try:
        for offset in range(0, len(queries), 500):
            batch = queries[offset : offset + 500]
            kwargs: dict[str, Any] = {"MetricDataQueries": batch, "StartTime": start, "EndTime": end}
            while True:
                answer = cloudwatch.get_metric_data(**kwargs)
                for result in answer.get("MetricDataResults", []):
                    index = int(result["Id"][1:])
                    values.setdefault(index, []).extend(float(v) for v in result.get("Values", []))
                token = answer.get("NextToken")
                if not token:
                    break
                kwargs["NextToken"] = token
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "cloudwatch", "GetMetricData", region)) from exc
    return summarise(series, values)
