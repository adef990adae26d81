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

import math
from dataclasses import dataclass

from auditor.config import RecommendConfig
from auditor.models import Recommendation, Resource, VariantUtilization
from auditor.recommend.catalog import HOURS_PER_MONTH, Catalog, InstanceShape


@dataclass(frozen=True)
class Demand:
    """Absolute peak demand of a variant; None where the resource was not measured."""

    cpu_cores: float | None
    memory_gib: float | None  # per instance
    accelerators: float | None  # in units of the current accelerator model, summed
    accelerator_memory_gib: float | None  # per instance

    def as_dict(self) -> dict[str, float | None]:
        return {k: (None if v is None else round(v, 2)) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class SizingResult:
    recommendation: Recommendation
    demand: Demand
    shape: InstanceShape


def peak_demand(utilization: VariantUtilization, shape: InstanceShape, count: int) -> Demand:
    peak = utilization.peak

    def share(resource: Resource) -> float | None:
        value = peak.get(resource)
        return None if value is None else value / 100.0

    cpu, memory, gpu, gpu_memory = (share(r) for r in (Resource.CPU, Resource.MEMORY, Resource.GPU, Resource.GPU_MEMORY))
    return Demand(
        cpu_cores=None if cpu is None else cpu * shape.vcpu * count,
        memory_gib=None if memory is None else memory * shape.memory_gib,
        accelerators=None if gpu is None or not shape.gpu_count else gpu * shape.gpu_count * count,
        accelerator_memory_gib=(
            None if gpu_memory is None or not shape.gpu_count else gpu_memory * shape.accelerator_memory_gib
        ),
    )


def minimum_instances(current_count: int, config: RecommendConfig) -> int:
    return config.min_instances if config.min_instances is not None else min(current_count, 2)


def _compatible(candidate: InstanceShape, current: InstanceShape, config: RecommendConfig) -> bool:
    if candidate.accelerator != current.accelerator:
        return False
    if candidate.architecture != current.architecture and not config.allow_architecture_change:
        return False
    if candidate.burstable and not (current.burstable or config.allow_burstable):
        return False
    return True


def instances_needed(candidate: InstanceShape, current: InstanceShape, demand: Demand, min_count: int, target: float) -> int | None:
    """How many `candidate` instances hold the demand at `target` (0-1), or None if none can."""
    # Unmeasured per-instance resources must keep at least the current capacity.
    memory_need = demand.memory_gib if demand.memory_gib is not None else current.memory_gib * target
    if candidate.memory_gib * target < memory_need:
        return None
    if current.gpu_count:
        accel_memory_need = (
            demand.accelerator_memory_gib
            if demand.accelerator_memory_gib is not None
            else current.accelerator_memory_gib * target
        )
        if candidate.accelerator_memory_gib * target < accel_memory_need:
            return None
    count = min_count
    if demand.cpu_cores is not None:
        count = max(count, math.ceil(demand.cpu_cores / (candidate.vcpu * target) - 1e-9))
    if current.gpu_count:
        accelerators = demand.accelerators
        if accelerators is None:
            return None  # GPU compute unmeasured: no basis to move off the current GPUs
        count = max(count, math.ceil(accelerators / (candidate.gpu_count * target) - 1e-9))
    return max(count, 1)


def rightsize(
    utilization: VariantUtilization,
    current: InstanceShape,
    current_count: int,
    region: str,
    catalog: Catalog,
    config: RecommendConfig,
) -> SizingResult | None:
    """The cheapest compatible shape and count, if it saves at least min_savings_percent."""
    current_price = catalog.hourly_price(current.instance_type, region)
    if current_price is None or demand_unmeasured(utilization):
        return None
    current_monthly = round(current_price * current_count * HOURS_PER_MONTH, 2)
    demand = peak_demand(utilization, current, current_count)
    target = config.target_utilization / 100.0
    min_count = minimum_instances(current_count, config)

    best: tuple[tuple, InstanceShape, int, float] | None = None
    for candidate in catalog.shapes.values():
        if not _compatible(candidate, current, config):
            continue
        price = catalog.hourly_price(candidate.instance_type, region)
        if price is None:
            continue
        count = instances_needed(candidate, current, demand, min_count, target)
        if count is None:
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
    recommendation = Recommendation(
        action="resize",
        instance_type=shape.instance_type,
        instance_count=count,
        current_monthly_usd=current_monthly,
        recommended_monthly_usd=monthly,
    )
    return SizingResult(recommendation=recommendation, demand=demand, shape=shape)


def demand_unmeasured(utilization: VariantUtilization) -> bool:
    """Without CPU figures there is nothing to size against."""
    return Resource.CPU not in utilization.peak
