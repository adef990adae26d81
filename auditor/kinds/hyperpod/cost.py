"""What a HyperPod cluster costs: each instance group at its own HyperPod rate.

HyperPod nodes are priced per instance-hour under their own usage type (`<region prefix>-Cluster:
ml.<type>`, e.g. `USE1-Cluster:ml.p5.48xlarge`), which the price-list parser files as usage
"hyperpod"; that rate, not the training or hosting rate of the same type, is what a node costs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from auditor.catalog import HOURS_PER_MONTH
from auditor.kinds.hyperpod.models import Cluster
from auditor.prices.table import PriceTable

HYPERPOD_USAGE = "hyperpod"

# (instance type, region) -> on-demand USD per hour of a HyperPod node; None: no price known.
PriceLookup = Callable[[str, str], float | None]


@dataclass(frozen=True)
class GroupCost:
    group: str
    instance_type: str
    count: int
    hourly_price: float | None  # one node; None: no HyperPod price for the type in the region

    @property
    def monthly_cost(self) -> float | None:
        return None if self.hourly_price is None else round(self.hourly_price * self.count * HOURS_PER_MONTH, 2)


def group_costs(cluster: Cluster, price: PriceLookup) -> tuple[GroupCost, ...]:
    """Each group at its running count (CurrentCount): what the cluster bills per month now."""
    return tuple(GroupCost(g.name, g.instance_type, g.current_count, price(g.instance_type, cluster.region))
                 for g in cluster.groups)


def cluster_monthly_cost(costs: tuple[GroupCost, ...]) -> float | None:
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
