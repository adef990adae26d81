"""What a HyperPod cluster costs: each instance group at its own HyperPod rate.

HyperPod nodes are priced per instance-hour under their own usage type (`<region prefix>-Cluster:
ml.<type>`, e.g. `USE1-Cluster:ml.p5.48xlarge`), which the price-list parser files as usage
"hyperpod"; that rate, not the training or hosting rate of the same type, is what an on-demand
node costs, from allocation on (AWS bills HyperPod capacity for the time it is allocated). Spot
nodes and nodes of a training plan (reserved, paid up front) are not priced at that rate: their
cost is left unknown, with the reason, rather than overstated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from auditor.catalog import HOURS_PER_MONTH
from auditor.kinds.hyperpod.models import Capacity, Cluster, ClusterNode, InstanceGroup
from auditor.prices.table import PriceTable

HYPERPOD_USAGE = "hyperpod"

# (instance type, region) -> on-demand USD per hour of a HyperPod node; None: no price known.
PriceLookup = Callable[[str, str], float | None]


@dataclass(frozen=True)
class GroupCost:
    group: str
    instance_type: str  # "" for a flexible group of several types
    count: int
    hourly_cost: float | None  # all of the group's running nodes; None: not priced (see `unpriced`)
    unpriced: str | None = None  # why there is no price

    @property
    def monthly_cost(self) -> float | None:
        return None if self.hourly_cost is None else round(self.hourly_cost * HOURS_PER_MONTH, 2)


def unpriced_reason(group: InstanceGroup) -> str | None:
    """Why a group's nodes do not cost the on-demand HyperPod rate; None: they do."""
    if group.capacity is Capacity.TRAINING_PLAN:
        return f"capacity of training plan {group.training_plan_arn}: reserved and paid up front"
    if group.capacity is Capacity.SPOT:
        return "Spot capacity: the price list's HyperPod rate is on-demand"
    return None


def nodes_hourly(nodes: Iterable[ClusterNode], region: str, price: PriceLookup) -> tuple[float | None, str | None]:
    """The on-demand hourly price of these nodes together; (None, the first type without a price)."""
    total = 0.0
    for node in nodes:
        rate = price(node.instance_type, region)
        if rate is None:
            return None, node.instance_type
        total += rate
    return round(total, 6), None


def group_cost(cluster: Cluster, group: InstanceGroup, price: PriceLookup) -> GroupCost:
    """The group at its running count (CurrentCount); a flexible group by its nodes' own types."""
    reason = unpriced_reason(group)
    if reason is not None:
        return GroupCost(group.name, group.instance_type, group.current_count, None, reason)
    if group.instance_type:
        rate = price(group.instance_type, cluster.region)
        if rate is None:
            return GroupCost(group.name, group.instance_type, group.current_count, None,
                             f"no HyperPod price for {group.instance_type} in {cluster.region}")
        return GroupCost(group.name, group.instance_type, group.current_count, round(rate * group.current_count, 6))
    nodes = cluster.nodes_of(group.name)
    hourly, missing = nodes_hourly(nodes, cluster.region, price)
    return GroupCost(group.name, "", len(nodes), hourly,
                     None if missing is None else f"no HyperPod price for {missing} in {cluster.region}")


def group_costs(cluster: Cluster, price: PriceLookup) -> tuple[GroupCost, ...]:
    return tuple(group_cost(cluster, g, price) for g in cluster.groups)


def cluster_monthly_cost(costs: Iterable[GroupCost]) -> float | None:
    """The sum; None if any group with nodes has no price (a partial sum would understate it)."""
    total = 0.0
    for c in costs:
        if c.count == 0:
            continue
        if c.monthly_cost is None:
            return None
        total += c.monthly_cost
    return round(total, 2)


def price_lookup_from_table(table: PriceTable) -> PriceLookup:
    """HyperPod rates from the price table (Price List API or offer file) the auditor caches."""

    def lookup(instance_type: str, region: str) -> float | None:
        prices = table.regions.get(region)
        return None if prices is None else prices.price(HYPERPOD_USAGE, instance_type)

    return lookup
