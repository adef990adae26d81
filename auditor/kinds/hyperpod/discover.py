"""HyperPod clusters of a region: ListClusters (paged), DescribeCluster per cluster, ListClusterNodes
(paged) per cluster.

A refusal (AccessDenied) or an API the region does not offer stops the kind in that region with
one line naming the call; a cluster deleted between the list and its description is an error line
of its own, and the other clusters are still reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region, parse_timestamp
from auditor.kinds.hyperpod.models import Capacity, Cluster, ClusterNode, InstanceGroup, Orchestrator
from auditor.models import AuditError

PAGE_SIZE = 100  # ListClusters and ListClusterNodes: MaxResults 1-100
# The region has no HyperPod, or the endpoint does not know the call: as fatal as a refusal.
_UNSUPPORTED_CODES = frozenset({"UnknownOperationException", "InvalidAction", "UnrecognizedClientException"})


@dataclass(frozen=True)
class HyperPodDiscovery:
    clusters: tuple[Cluster, ...]
    errors: tuple[AuditError, ...]


def _fatal(exc: Exception) -> bool:
    if isinstance(exc, botocore.exceptions.ClientError) and exc.response.get("Error", {}).get("Code", "") in (
            _UNSUPPORTED_CODES):
        return True
    return is_fatal_for_region(exc)


def _time(value: object) -> datetime:
    if isinstance(value, datetime):  # boto3 has parsed it already
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return parse_timestamp(value)


def _optional_time(value: object) -> datetime | None:
    return None if value is None else _time(value)


def cluster_from(described: Mapping[str, Any], nodes: list[Mapping[str, Any]], region: str) -> Cluster:
    """A Cluster from DescribeCluster's answer and ListClusterNodes' summaries."""
    eks = ((described.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn")
    groups = []
    for g in described.get("InstanceGroups") or []:
        current = g.get("CurrentCount")
        name = str(g.get("InstanceGroupName", ""))
        if current is None:  # not stated: count the nodes listed in the group
            current = sum(1 for n in nodes if n.get("InstanceGroupName") == name)
        plan = g.get("TrainingPlanArn")
        spot = "Spot" in (g.get("CapacityRequirements") or {})
        capacity = Capacity.TRAINING_PLAN if plan else Capacity.SPOT if spot else Capacity.ON_DEMAND
        groups.append(InstanceGroup(name=name, instance_type=str(g.get("InstanceType") or ""),
                                    current_count=int(current), target_count=int(g.get("TargetCount", current)),
                                    status=g.get("Status"), capacity=capacity,
                                    training_plan_arn=str(plan) if plan else None,
                                    execution_role=str(g["ExecutionRole"]) if g.get("ExecutionRole") else None,
                                    life_cycle_config={str(k): str(v) for k, v in
                                                       (g.get("LifeCycleConfig") or {}).items()},
                                    threads_per_core=(int(g["ThreadsPerCore"]) if g.get("ThreadsPerCore")
                                                      else None)))
    return Cluster(
        arn=str(described["ClusterArn"]),
        name=str(described.get("ClusterName") or described["ClusterArn"].rsplit("/", 1)[-1]),
        region=region,
        status=str(described.get("ClusterStatus", "")),
        created=_optional_time(described.get("CreationTime")),
        # Only EKS is named in Orchestrator; a cluster without it is Slurm-orchestrated.
        orchestrator=Orchestrator.EKS if eks else Orchestrator.SLURM,
        eks_cluster_arn=str(eks) if eks else None,
        groups=tuple(groups),
        nodes=tuple(
            ClusterNode(instance_id=str(n["InstanceId"]), instance_group=str(n["InstanceGroupName"]),
                        instance_type=str(n["InstanceType"]),
                        status=str((n.get("InstanceStatus") or {}).get("Status", "")),
                        launch_time=_time(n["LaunchTime"]))
            for n in nodes
        ),
    )


def list_cluster_names(sagemaker: BaseClient, region: str, page_size: int = PAGE_SIZE) -> list[str]:
    try:
        return [c["ClusterName"]
                for page in sagemaker.get_paginator("list_clusters").paginate(PaginationConfig={"PageSize": page_size})
                for c in page.get("ClusterSummaries", [])]
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "sagemaker", "ListClusters", region)) from exc


def list_nodes(sagemaker: BaseClient, cluster_name: str, page_size: int = PAGE_SIZE) -> list[Mapping[str, Any]]:
    return [n
            for page in sagemaker.get_paginator("list_cluster_nodes").paginate(
                ClusterName=cluster_name, PaginationConfig={"PageSize": page_size})
            for n in page.get("ClusterNodeSummaries", [])]


def discover_clusters(sagemaker: BaseClient, region: str, page_size: int = PAGE_SIZE) -> HyperPodDiscovery:
    """Every HyperPod cluster of the region with its instance groups and nodes. RegionAccessError
    when the region refuses (or does not offer) the calls."""
    clusters: list[Cluster] = []
    errors: list[AuditError] = []
    for name in list_cluster_names(sagemaker, region, page_size):
        operation = "DescribeCluster"
        try:
            described = sagemaker.describe_cluster(ClusterName=name)
            operation = "ListClusterNodes"
            nodes = list_nodes(sagemaker, name, page_size)
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            message = describe_client_error(exc, "sagemaker", operation, region)
            if _fatal(exc):
                raise RegionAccessError(message) from exc
            errors.append(AuditError(region, name, "discover", message))
            continue
        clusters.append(cluster_from(described, nodes, region))
    return HyperPodDiscovery(tuple(clusters), tuple(errors))
