"""Rule `hyperpod-idle-nodes`: instance groups whose nodes stayed under an idle ceiling all window.

Pure: the cluster, each node's utilisation summary and a price in; verdicts out. Idleness is
judged only where it is observed: an EKS-orchestrated cluster's nodes with Container Insights
metrics covering the window. A Slurm cluster, an EKS cluster without those metrics, a node
without them, or an accelerated node without GPU metrics is listed as not judged, with why and
how to make it observable; nothing is inferred for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from auditor.catalog import HOURS_PER_MONTH
from auditor.kinds.hyperpod.cost import (
    GroupCost,
    PriceLookup,
    cluster_monthly_cost,
    group_costs,
    nodes_hourly,
    unpriced_reason,
)
from auditor.kinds.hyperpod.metrics import NodeUtilisation
from auditor.kinds.hyperpod.models import Cluster, ClusterNode, Orchestrator

RULE_ID = "hyperpod-idle-nodes"
TITLE = "HyperPod instance group with idle nodes"
DEFAULT_IDLE_CEILING_PERCENT = 5.0
DEFAULT_MIN_COVERAGE = 0.9  # share of the window's periods a node must have CPU datapoints for
DOCS = ("https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-operate-cli-command.html; "
        "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-metrics-enhanced-EKS.html")

NO_METRIC = "not judged: no utilisation metric"
ENABLE_EKS = ("install the Amazon CloudWatch Observability EKS add-on (amazon-cloudwatch-observability) on the "
              "orchestrating EKS cluster: Container Insights then publishes node_cpu_utilization per node in "
              "the ContainerInsights namespace, and node_gpu_utilization on NVIDIA nodes")
ENABLE_GPU = ("keep accelerated compute metrics on in the Amazon CloudWatch Observability EKS add-on "
              "(its default), so that node_gpu_utilization is published for NVIDIA nodes")
ENABLE_SLURM = ("a Slurm cluster publishes no utilisation to CloudWatch: the observability AWS documents for HyperPod "
                "Slurm (enable_observability=True in the lifecycle scripts' config.py: node, EFA and NVIDIA DCGM "
                "exporters) feeds Amazon Managed Service for Prometheus, which this audit does not read, and "
                "metrics of a CloudWatch agent installed on the nodes are not read by this audit yet")


@dataclass(frozen=True)
class GroupShrink:
    """A finding: `shrink_by` of the group's nodes stayed idle all window."""

    cluster: str
    cluster_arn: str
    region: str
    group: str
    instance_type: str
    current_count: int
    idle_nodes: tuple[str, ...]  # instance ids
    busiest_idle_cpu: float  # the highest CPU Maximum among the idle nodes, percent
    busiest_idle_gpu: float | None
    hourly_saving: float | None  # the idle nodes' on-demand HyperPod rate; None: see `unpriced`
    unpriced: str | None = None
    # The fewest periods any idle node had a CPU datapoint for, and the window's periods: a node
    # observed in every period is idle all window, one with gaps only where it was observed.
    observed_periods: int = 0
    window_periods: int = 0

    @property
    def shrink_by(self) -> int:
        return len(self.idle_nodes)

    @property
    def target_count(self) -> int:
        return self.current_count - self.shrink_by

    @property
    def monthly_saving(self) -> float | None:
        return None if self.hourly_saving is None else round(self.hourly_saving * HOURS_PER_MONTH, 2)


@dataclass(frozen=True)
class NotJudged:
    """A cluster, group or node the rule could not judge, and how to make it judgeable."""

    cluster: str
    group: str | None
    instance_id: str | None
    reason: str
    how_to_enable: str | None


@dataclass(frozen=True)
class HyperPodAssessment:
    cluster: Cluster
    costs: tuple[GroupCost, ...]
    monthly_cost: float | None
    shrinks: tuple[GroupShrink, ...]
    not_judged: tuple[NotJudged, ...]


BUSY = ("busy", None)


def _node_verdict(node: ClusterNode, use: NodeUtilisation | None, accelerated: bool, ceiling: float,
                  needed_periods: int) -> tuple[str, str | None] | None:
    """None: idle; BUSY: observed and busy; else (why it is not judged, how to make it judgeable)."""
    if use is None or use.cpu_max is None:
        return f"{NO_METRIC}: no Container Insights node metrics for {node.instance_id}", ENABLE_EKS
    if use.periods < needed_periods:
        return f"metrics cover {use.periods} of the {needed_periods} periods needed for {node.instance_id}", None
    if use.cpu_max >= ceiling:
        return BUSY
    if accelerated:
        if use.gpu_max is None:
            return f"{NO_METRIC}: no node_gpu_utilization for accelerated node {node.instance_id}", ENABLE_GPU
        if use.gpu_max >= ceiling:
            return BUSY
    return None


def assess_cluster(cluster: Cluster, utilisation: Mapping[str, NodeUtilisation], price: PriceLookup, *,
                   window_periods: int, accelerated: Callable[[str], bool],
                   idle_ceiling_percent: float = DEFAULT_IDLE_CEILING_PERCENT,
                   min_coverage: float = DEFAULT_MIN_COVERAGE) -> HyperPodAssessment:
    """`utilisation` by instance id over the window of `window_periods` periods; `accelerated(type)`
    says whether a node type has GPUs (their idleness needs GPU metrics too)."""
    costs = group_costs(cluster, price)
    total = cluster_monthly_cost(costs)
    if cluster.orchestrator is Orchestrator.SLURM:
        return HyperPodAssessment(cluster, costs, total, (), (
            NotJudged(cluster.name, None, None, f"{NO_METRIC} (Slurm-orchestrated)", ENABLE_SLURM),))
    if not any(u.cpu_max is not None for u in utilisation.values()):
        return HyperPodAssessment(cluster, costs, total, (), (NotJudged(
            cluster.name, None, None,
            f"{NO_METRIC}: no Container Insights node metrics for EKS cluster {cluster.eks_cluster_name}",
            ENABLE_EKS),))
    needed = max(1, int(window_periods * min_coverage))
    shrinks: list[GroupShrink] = []
    not_judged: list[NotJudged] = []
    for group in cluster.groups:
        idle: list[ClusterNode] = []
        for node in cluster.nodes_of(group.name):
            if node.status != "Running":  # pending, failing, leaving or being patched
                not_judged.append(NotJudged(cluster.name, group.name, node.instance_id,
                                            f"not judged: node status {node.status}", None))
                continue
            verdict = _node_verdict(node, utilisation.get(node.instance_id), accelerated(node.instance_type),
                                    idle_ceiling_percent, needed)
            if verdict is None:
                idle.append(node)
            elif verdict is not BUSY:
                not_judged.append(NotJudged(cluster.name, group.name, node.instance_id, *verdict))
        if idle:
            uses = [utilisation[n.instance_id] for n in idle]
            gpus = [u.gpu_max for u in uses if u.gpu_max is not None]
            unpriced = unpriced_reason(group)
            hourly: float | None = None
            if unpriced is None:
                hourly, missing = nodes_hourly(idle, cluster.region, price)
                if missing is not None:
                    unpriced = f"no HyperPod price for {missing} in {cluster.region}"
            shrinks.append(GroupShrink(
                cluster=cluster.name, cluster_arn=cluster.arn, region=cluster.region, group=group.name,
                instance_type=group.instance_type, current_count=group.current_count,
                idle_nodes=tuple(n.instance_id for n in idle),
                busiest_idle_cpu=max(u.cpu_max or 0.0 for u in uses), busiest_idle_gpu=max(gpus) if gpus else None,
                hourly_saving=hourly, unpriced=unpriced,
                observed_periods=min(u.periods for u in uses), window_periods=window_periods))
    return HyperPodAssessment(cluster, costs, total, tuple(shrinks), tuple(not_judged))


def describe_shrink(s: GroupShrink, ceiling: float, days: float) -> str:
    """The finding's one-line evidence and advice."""
    gpu = "" if s.busiest_idle_gpu is None else f", GPU at most {s.busiest_idle_gpu:.1f}%"
    saving = f"saving not priced: {s.unpriced}" if s.monthly_saving is None else f"saves ${s.monthly_saving:,.2f}/month"
    kind = f" {s.instance_type}" if s.instance_type else ""
    return (f"{s.shrink_by} of {s.current_count}{kind} nodes in group {s.group} of {s.cluster} "
            f"stayed under {ceiling:g}% for {days:g} days (CPU at most {s.busiest_idle_cpu:.1f}%{gpu}): "
            f"shrink the group to {s.target_count} (BatchDeleteClusterNodes of those nodes); {saving}")
