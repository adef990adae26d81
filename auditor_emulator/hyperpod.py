"""SageMaker HyperPod clusters seeded into the emulator, and the Container Insights node metrics an
EKS-orchestrated cluster's nodes publish.

moto 5.2.5 implements CreateCluster, DescribeCluster, ListClusters and ListClusterNodes, but
keeps no Orchestrator, names nodes `<group>-<n>` instead of EC2 instance ids, puts the cluster's
name where AWS puts a 12-character id in its ARN, stamps every time "now", and cannot page
ListClusterNodes (each page repeats the first). The clusters are created through the API; the
rest is set in the emulator's own state, and `install_hyperpod_fidelity` makes DescribeCluster
return Orchestrator.Eks.ClusterArn as AWS does. Every answer is checked against botocore's
output shapes in tests/test_hyperpod.py.

What AWS publishes (docs/kinds/hyperpod.md): for an EKS-orchestrated cluster with the
CloudWatch Observability add-on, per node in `ContainerInsights` with {ClusterName (the EKS
cluster's), InstanceId, NodeName}: node_cpu_utilization and node_memory_utilization, and on
NVIDIA nodes node_gpu_utilization and node_gpu_memory_utilization. A Slurm cluster publishes none.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import numpy as np

from auditor.catalog import Catalog, load_catalog
from auditor_emulator.fleet import Load
from auditor_emulator.published import UnpublishedMetricError
from auditor_emulator.server import ACCOUNT_ID, Emulator

NAMESPACE = "ContainerInsights"
ROLE = f"arn:aws:iam::{ACCOUNT_ID}:role/hyperpod-execution"
LIFECYCLE = {"SourceS3Uri": "s3://sagemaker-hyperpod-lifecycle-123456789012/base-config/", "OnCreate": "on_create.sh"}
PUBLISHED = frozenset({"node_cpu_utilization", "node_memory_utilization", "node_gpu_utilization",
                       "node_gpu_memory_utilization"})


@dataclass(frozen=True)
class GroupSpec:
    name: str
    instance_type: str
    count: int
    cpu: Load = field(default_factory=lambda: Load(45, 10, 3))
    memory: Load = field(default_factory=lambda: Load(55, 5, 2))
    gpu: Load = field(default_factory=lambda: Load(70, 15, 5))  # published only on GPU types
    unobserved: int = 0  # nodes (the group's last ones) that publish nothing, e.g. the agent is not scheduled


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    groups: tuple[GroupSpec, ...]
    eks_cluster: str | None = None  # the orchestrating EKS cluster's name; None: Slurm
    age_days: float = 60.0
    observed: bool = True  # False: no Container Insights on the EKS cluster at all


def demo_clusters() -> list[ClusterSpec]:
    idle = Load(1.5, 0.5, 0.3, burst=0.5)
    return [
        # EKS: the training group is busy; the evaluation group's two nodes sat idle all fortnight.
        # (Both ml.g5.8xlarge: the one HyperPod rate the bundled snapshot holds, so the demo is priced.)
        ClusterSpec("llm-platform", eks_cluster="ml-platform-eks", groups=(
            GroupSpec("train-g5-8xl", "ml.g5.8xlarge", 3),
            GroupSpec("eval-g5-8xl", "ml.g5.8xlarge", 2, cpu=idle, memory=Load(12, 1, 1), gpu=Load(0.0, 0, 0)),
        )),
        # Slurm: listed with its cost, not judged (no utilisation metric in CloudWatch).
        ClusterSpec("research-slurm", groups=(
            GroupSpec("controller", "ml.m5.xlarge", 1),
            GroupSpec("workers-p4d", "ml.p4d.24xlarge", 2),
        )),
    ]


def instance_id(cluster: str, group: str, index: int) -> str:
    return "i-0" + hashlib.sha256(f"{cluster}/{group}/{index}".encode()).hexdigest()[:16]


def cluster_id(cluster: str) -> str:
    return hashlib.sha256(cluster.encode()).hexdigest()[:12]


def node_name(instance: str) -> str:
    """HyperPod EKS nodes join Kubernetes as `hyperpod-<instance id>`."""
    return f"hyperpod-{instance}"


_PATCH_LOCK = threading.Lock()
_INSTALLED: list[bool] = []


def install_hyperpod_fidelity() -> None:
    """DescribeCluster returns the Orchestrator moto does not keep (set by `seed_hyperpod`)."""
    from moto.sagemaker.models import Cluster

    with _PATCH_LOCK:
        if _INSTALLED:
            return
        original = Cluster.describe

        def describe(self: Any) -> dict[str, Any]:
            answer = original(self)
            orchestrator = getattr(self, "orchestrator", None)
            if orchestrator:
                answer["Orchestrator"] = orchestrator
            if not answer.get("FailureMessage"):
                answer.pop("FailureMessage", None)  # AWS omits it for a healthy cluster
            return answer

        Cluster.describe = describe  # type: ignore[method-assign]
        _INSTALLED.append(True)


def _adjust_state(emulator: Emulator, spec: ClusterSpec, now: datetime, region: str) -> None:
    backend = emulator.backend("sagemaker", region)
    cluster = backend.clusters[spec.name]
    created = (now - timedelta(days=spec.age_days)).replace(tzinfo=None)
    cluster.creation_time = created
    cluster.arn = f"arn:aws:sagemaker:{region}:{ACCOUNT_ID}:cluster/{cluster_id(spec.name)}"
    if spec.eks_cluster:
        cluster.orchestrator = {"Eks": {"ClusterArn": f"arn:aws:eks:{region}:{ACCOUNT_ID}:cluster/{spec.eks_cluster}"}}
    nodes = {}
    for group in spec.groups:
        for index in range(group.count):
            node = cluster.nodes[f"{group.name}-{index}"]
            node.instance_id = instance_id(spec.name, group.name, index)
            node.launch_time = created + timedelta(minutes=20 + index)
            node.life_cycle_config = dict(LIFECYCLE)
            # moto pages ListClusterNodes by an `arn` its nodes lack: every page would be the first.
            node.arn = f"{cluster.arn}/node/{node.instance_id}"
            nodes[node.instance_id] = node
    cluster.nodes = nodes


def node_datums(spec: ClusterSpec, now: datetime, lookback_days: int, region: str, seed: int,
                catalog: Catalog) -> list[dict[str, Any]]:
    """Hourly statistic sets (60 one-minute samples each) for every observed node of an EKS cluster."""
    if spec.eks_cluster is None or not spec.observed:
        return []
    hours = lookback_days * 24
    start = (now - timedelta(hours=hours)).replace(minute=0, second=0, microsecond=0, tzinfo=UTC)
    stamps = [start + timedelta(hours=h, minutes=30) for h in range(hours)]
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for group in spec.groups:
        shape = catalog.shape(group.instance_type)
        gpu = shape is not None and shape.gpu_count > 0
        loads = [("node_cpu_utilization", group.cpu), ("node_memory_utilization", group.memory)]
        if gpu:  # accelerated compute metrics: NVIDIA nodes only
            loads += [("node_gpu_utilization", group.gpu), ("node_gpu_memory_utilization", group.gpu)]
        unpublished = {m for m, _ in loads} - PUBLISHED
        if unpublished:
            raise UnpublishedMetricError(f"HyperPod node metrics {sorted(unpublished)} are not published by AWS")
        for index in range(group.count - group.unobserved):
            instance = instance_id(spec.name, group.name, index)
            dims = [{"Name": "ClusterName", "Value": spec.eks_cluster}, {"Name": "InstanceId", "Value": instance},
                    {"Name": "NodeName", "Value": node_name(instance)}]
            for metric, load in loads:
                average, maximum = load.hourly(np.arange(hours), rng)
                out += [{"MetricName": metric, "Dimensions": dims, "Timestamp": ts, "Unit": "Percent",
                         "StatisticValues": {"SampleCount": 60, "Sum": float(a * 60), "Minimum": float(a * 0.8),
                                             "Maximum": float(m)}}
                        for ts, a, m in zip(stamps, average, maximum, strict=True)]
    return out


def seed_hyperpod(emulator: Emulator, clusters: Iterable[ClusterSpec], now: datetime, lookback_days: int = 14,
                  region: str = "us-east-1", seed: int = 7, catalog: Catalog | None = None) -> None:
    """Create the clusters through the SageMaker API, set what the API cannot, and publish the EKS
    nodes' Container Insights metrics."""
    install_hyperpod_fidelity()
    catalog = catalog or load_catalog()
    session = boto3.Session(region_name=region, aws_access_key_id="testing", aws_secret_access_key="testing")
    sagemaker = session.client("sagemaker", endpoint_url=emulator.url)
    for spec in clusters:
        sagemaker.create_cluster(ClusterName=spec.name, InstanceGroups=[
            {"InstanceGroupName": g.name, "InstanceType": g.instance_type, "InstanceCount": g.count,
             "LifeCycleConfig": dict(LIFECYCLE), "ExecutionRole": ROLE, "ThreadsPerCore": 1}
            for g in spec.groups])
        _adjust_state(emulator, spec, now, region)
        datums = node_datums(spec, now, lookback_days, region, seed, catalog)
        emulator.publish_metrics(NAMESPACE, datums, region)
