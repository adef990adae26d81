"""What the auditor knows of a HyperPod cluster, as DescribeCluster and ListClusterNodes state it."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime


class Orchestrator(enum.StrEnum):
    EKS = "eks"
    SLURM = "slurm"


class Capacity(enum.StrEnum):
    """How a group's nodes are paid for: only on-demand nodes cost the price list's HyperPod rate."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"  # CapacityRequirements.Spot
    TRAINING_PLAN = "training-plan"  # TrainingPlanArn: reserved and paid up front


@dataclass(frozen=True)
class InstanceGroup:
    name: str
    instance_type: str  # "" for a flexible group (InstanceRequirements): its nodes' types differ
    current_count: int  # instances running now (DescribeCluster InstanceGroups[].CurrentCount)
    target_count: int  # instances asked for (TargetCount)
    status: str | None = None
    capacity: Capacity = Capacity.ON_DEMAND
    training_plan_arn: str | None = None
    # What UpdateCluster needs to raise the group's count again (a shrink's rollback), as
    # DescribeCluster states them; None / {}: not stated.
    execution_role: str | None = None
    life_cycle_config: dict[str, str] = field(default_factory=dict)  # SourceS3Uri, OnCreate
    threads_per_core: int | None = None


@dataclass(frozen=True)
class ClusterNode:
    instance_id: str  # the EC2 instance id, i-...; Container Insights' InstanceId dimension
    instance_group: str
    instance_type: str
    status: str  # InstanceStatus.Status: Running, Pending, Failure, ShuttingDown, ...
    launch_time: datetime


@dataclass(frozen=True)
class Cluster:
    arn: str
    name: str
    region: str
    status: str
    created: datetime | None
    orchestrator: Orchestrator
    eks_cluster_arn: str | None  # Orchestrator.Eks.ClusterArn; None for Slurm
    groups: tuple[InstanceGroup, ...]
    nodes: tuple[ClusterNode, ...]

    @property
    def account_id(self) -> str:
        parts = self.arn.split(":")
        return parts[4] if len(parts) > 5 else ""

    @property
    def eks_cluster_name(self) -> str | None:
        """The EKS cluster's name (Container Insights' ClusterName dimension), from its ARN
        arn:aws:eks:<region>:<account>:cluster/<name>."""
        if not self.eks_cluster_arn or ":cluster/" not in self.eks_cluster_arn:
            return None
        return self.eks_cluster_arn.split(":cluster/", 1)[1] or None

    def nodes_of(self, group: str) -> tuple[ClusterNode, ...]:
        return tuple(n for n in self.nodes if n.instance_group == group)
