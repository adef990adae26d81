"""Absolute demand of a variant, and how many instances of a shape hold it.

Demand is measured on the current shape and converted to absolute units:
- CPU and GPU compute are divisible load: the peak share x capacity per instance x instances.
  (The peak is read from the per-period maxima, the busiest instance, so this errs high.)
- Memory and accelerator memory are needed in full on every instance (each holds the model).
A shape and count holds the demand when every resource stays at or below the target utilisation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from auditor.catalog import InstanceShape
from auditor.config import RecommendConfig
from auditor.models import Resource, VariantUtilization


@dataclass(frozen=True)
class Demand:
    """Absolute peak demand of a variant; None where the resource was not measured."""

    cpu_cores: float | None
    memory_gib: float | None  # per instance
    accelerators: float | None  # in units of the current accelerator model, summed
    accelerator_memory_gib: float | None  # per instance

    def as_dict(self) -> dict[str, float | None]:
        return {k: (None if v is None else round(v, 2)) for k, v in self.__dict__.items()}


def peak_demand(utilization: VariantUtilization, shape: InstanceShape, count: int) -> Demand:
    peak = utilization.peak

    def share(resource: Resource) -> float | None:
        value = peak.get(resource)
        return None if value is None else value / 100.0

    cpu, memory, gpu, gpu_memory = (share(r) for r in (Resource.CPU, Resource.MEMORY, Resource.GPU,
                                                       Resource.GPU_MEMORY))
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


def instances_needed(candidate: InstanceShape, current: InstanceShape, demand: Demand, min_count: int,
                     target: float) -> int | None:
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
