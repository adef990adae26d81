"""Find the cheapest instance shape and count that still holds the observed peak.

Demand is measured on the current shape and converted to absolute units:
- CPU and GPU compute are divisible load: the peak share x capacity per instance x instances.
  (The peak is read from the per-period maxima, the busiest instance, so this errs high.)
- Memory and accelerator memory are needed in full on every instance (each holds the model).
A candidate holds the demand when every resource stays at or below the target utilisation.

Moves that look cheaper on paper but would break a deployment are never proposed by default:
a model on an accelerator stays on the same accelerator model (throughput differs between GPU
generations and Inferentia needs a compiled model), x86 stays x86 (Graviton needs an arm64
image), and steady workloads are not moved onto burstable t2/t3 (CPU credits).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from auditor.catalog import HOURS_PER_MONTH, Catalog, InstanceShape
from auditor.config import RecommendConfig
from auditor.models import Recommendation, Resource, VariantUtilization
from auditor.recommend.demand import Demand, instances_needed, minimum_instances, peak_demand


class HeldCopies(Protocol):
    """What a resource hosts that every count proposed must still hold (the endpoints kind's
    inference component copies, `HostedCopies`)."""

    @property
    def known(self) -> bool:
        """Whether a count can be advised at all (nothing hosted, or every reservation known)."""
        ...

    def instances(self, shape: InstanceShape) -> int | None:
        """The fewest instances of `shape` that hold it all (None: unknown, or it does not fit)."""
        ...


@dataclass(frozen=True)
class SizingResult:
    recommendation: Recommendation
    demand: Demand
    shape: InstanceShape


def _compatible(candidate: InstanceShape, current: InstanceShape, config: RecommendConfig) -> bool:
    if not candidate.accelerators_known or candidate.accelerator != current.accelerator:
        return False
    if candidate.architecture != current.architecture and not config.allow_architecture_change:
        return False
    if candidate.burstable and not (current.burstable or config.allow_burstable):
        return False
    return True


def rightsize(
    utilization: VariantUtilization,
    current: InstanceShape,
    current_count: int,
    region: str,
    catalog: Catalog,
    config: RecommendConfig,
    price_of: Callable[[str, str], float | None] | None = None,
    copies: HeldCopies | None = None,
) -> SizingResult | None:
    """The cheapest compatible shape and count, if it saves at least min_savings_percent.
    `price_of(instance_type, region)`: hosting prices unless told otherwise (training).
    `copies`: the inference component copies the variant hosts; every count proposed holds them all."""
    if copies is not None and not copies.known:
        return None  # reservations unknown: no count can be shown to hold the copies

    def count_holding_copies(candidate: InstanceShape, count: int) -> int | None:
        if copies is None:
            return count
        held = copies.instances(candidate)
        return None if held is None else max(count, held)  # None: a copy does not fit on one

    return _cheapest_shape(utilization, current, current_count, region, catalog, config, price_of,
                           accept=lambda candidate: True, adjust=count_holding_copies)


def _cheapest_shape(
    utilization: VariantUtilization,
    current: InstanceShape,
    current_count: int,
    region: str,
    catalog: Catalog,
    config: RecommendConfig,
    price_of: Callable[[str, str], float | None] | None,
    accept: Callable[[InstanceShape], bool],
    adjust: Callable[[InstanceShape, int], int | None] = lambda _candidate, count: count,
) -> SizingResult | None:
    """The search both sizings share: of the compatible shapes `accept` lets through, the cheapest
    at the count that holds every resource's peak at the target (`adjust` may raise or refuse that
    count), if it saves at least recommend.min_savings_percent."""
    price_of = price_of or catalog.hourly_price
    current_price = price_of(current.instance_type, region)
    if current_price is None or demand_unmeasured(utilization):
        return None
    current_monthly = round(current_price * current_count * HOURS_PER_MONTH, 2)
    demand = peak_demand(utilization, current, current_count)
    target = config.target_utilization / 100.0
    min_count = minimum_instances(current_count, config)

    best: tuple[tuple, InstanceShape, int, float] | None = None
    for candidate in catalog.shapes.values():
        if not _compatible(candidate, current, config) or not accept(candidate):
            continue
        price = price_of(candidate.instance_type, region)
        needed = instances_needed(candidate, current, demand, min_count, target)
        count = None if needed is None else adjust(candidate, needed)
        if price is None or count is None:
            continue
        monthly = round(price * count * HOURS_PER_MONTH, 2)
        # Cheapest first; on a tie stay in the current family, then prefer fewer instances.
        key = (monthly, candidate.family != current.family, count, candidate.instance_type)
        if best is None or key < best[0]:
            best = (key, candidate, count, monthly)
    if best is None:
        return None
    _, shape, count, monthly = best
    if monthly > current_monthly * (1 - config.min_savings_percent / 100.0) or monthly >= current_monthly:
        return None
    recommendation = Recommendation(action="resize", instance_type=shape.instance_type, instance_count=count,
                                    current_monthly_usd=current_monthly, recommended_monthly_usd=monthly)
    return SizingResult(recommendation=recommendation, demand=demand, shape=shape)


def demand_unmeasured(utilization: VariantUtilization) -> bool:
    """Without CPU figures there is nothing to size against."""
    return Resource.CPU not in utilization.peak


def fewer_gpu_shape(
    utilization: VariantUtilization,
    current: InstanceShape,
    current_count: int,
    gpus_used: int,
    device_memory_gib: float,
    region: str,
    catalog: Catalog,
    config: RecommendConfig,
    price_of: Callable[[str, str], float | None] | None = None,
) -> SizingResult | None:
    """The cheapest compatible shape with at least `gpus_used` (and fewer than the current) GPUs,
    each holding `device_memory_gib` (the busiest device's use) at the target, at a count that
    holds every resource's peak; None when none is cheaper by recommend.min_savings_percent."""
    if not current.gpu_count:
        return None
    target = config.target_utilization / 100.0

    def fewer_gpus_enough_memory(candidate: InstanceShape) -> bool:
        return (max(gpus_used, 1) <= candidate.gpu_count < current.gpu_count
                and candidate.accelerator_memory_gib / candidate.gpu_count * target >= device_memory_gib)

    return _cheapest_shape(utilization, current, current_count, region, catalog, config, price_of,
                           accept=fewer_gpus_enough_memory)
