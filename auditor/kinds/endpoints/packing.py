"""Inference components on their instances: what each copy reserves, how many copies fit on one
instance, and how many instances hold them all. Pure; read by the `component-*` rules."""

from __future__ import annotations

import math
from dataclasses import dataclass

from auditor.catalog import InstanceShape
from auditor.kinds.endpoints.models import ComponentReport, InferenceComponent

# SageMaker's agents and the OS keep part of each instance's memory: plan copies into 90% of it.
USABLE_MEMORY_SHARE = 0.9


@dataclass(frozen=True)
class Reservation:
    """What one copy reserves: CPU cores, accelerator devices, memory in MB."""

    cpu_cores: float
    accelerators: float
    memory_mb: float

    def as_dict(self) -> dict[str, float]:
        return {"cpu_cores": self.cpu_cores, "accelerators": self.accelerators, "memory_mb": self.memory_mb}


@dataclass(frozen=True)
class Placement:
    """Copies of one component to place (the name labels the evidence)."""

    name: str
    copies: int
    per_copy: Reservation


def capacity(shape: InstanceShape) -> Reservation:
    return Reservation(float(shape.vcpu), float(shape.gpu_count), shape.memory_gib * 1024 * USABLE_MEMORY_SHARE)


def reservation(component: InferenceComponent) -> Reservation | None:
    """None when DescribeInferenceComponent did not say (then the component is not judged)."""
    if component.copy_count is None or (component.cpu_cores is None and component.accelerators is None
                                        and component.memory_mb is None):
        return None
    return Reservation(component.cpu_cores or 0.0, component.accelerators or 0.0, component.memory_mb or 0.0)


def copies_per_instance(per_copy: Reservation, shape: InstanceShape) -> int:
    """How many copies of one component fit on an empty instance (0: not even one)."""
    room = capacity(shape)
    fits = [math.floor(have / need + 1e-9) for have, need in
            ((room.cpu_cores, per_copy.cpu_cores), (room.accelerators, per_copy.accelerators),
             (room.memory_mb, per_copy.memory_mb)) if need > 0]
    return min(fits) if fits else 0


def instances_to_hold(placements: list[Placement], shape: InstanceShape, spread: bool = False) -> int | None:
    """Instances of `shape` that hold every copy: first-fit decreasing over the three resources,
    a count that is always achievable (never a lower bound that fragments cannot meet). `spread`:
    no instance holds two copies of one component (so a component survives an instance's loss).
    None: a copy does not fit on one instance."""
    room = capacity(shape)
    limits = (room.cpu_cores, room.accelerators, room.memory_mb)
    copies = [(index, (p.per_copy.cpu_cores, p.per_copy.accelerators, p.per_copy.memory_mb))
              for index, p in enumerate(placements) for _ in range(p.copies)]
    if any(need > have + 1e-9 for _, copy in copies for need, have in zip(copy, limits, strict=True)):
        return None
    copies.sort(key=lambda c: max(n / h if h else 0.0 for n, h in zip(c[1], limits, strict=True)), reverse=True)
    bins: list[tuple[list[float], set[int]]] = []
    for index, copy in copies:
        for used, held in bins:
            if (not spread or index not in held) and all(
                    u + n <= h + 1e-9 for u, n, h in zip(used, copy, limits, strict=True)):
                for i, n in enumerate(copy):
                    used[i] += n
                held.add(index)
                break
        else:
            bins.append((list(copy), {index}))
    return len(bins)


def reserved_share(placements: list[Placement], shape: InstanceShape, instances: int) -> dict[str, float]:
    """Percent of the instances' CPU, accelerators and (usable) memory the copies reserve."""
    room = capacity(shape)
    shares = {}
    for key, have in (("cpu", room.cpu_cores), ("gpu", room.accelerators), ("memory", room.memory_mb)):
        if have > 0:
            used = sum(p.copies * getattr(p.per_copy, {"cpu": "cpu_cores", "gpu": "accelerators",
                                                         "memory": "memory_mb"}[key]) for p in placements)
            shares[key] = round(100.0 * used / (have * instances), 1)
    return shares


def on_variant(components: tuple[ComponentReport, ...], variant: str) -> list[ComponentReport]:
    return [c for c in components if c.component.variant == variant]


def placements(components: list[ComponentReport]) -> list[Placement] | None:
    """Every component's copies and reservation; None if any is unknown (then no packing verdict)."""
    result = []
    for report in components:
        per_copy = reservation(report.component)
        if per_copy is None or report.component.copy_count is None:
            return None
        result.append(Placement(report.component.name, report.component.copy_count, per_copy))
    return result


@dataclass(frozen=True)
class HostedCopies:
    """The inference component copies a variant hosts, for any rule that advises its count: every
    copy's reserved cores, accelerators and memory must still fit on what it advises."""

    placed: list[Placement] | None  # None: some component's copies or reservation are unknown
    hosts: bool  # False: the variant hosts no inference component (any count holds)

    @property
    def known(self) -> bool:
        """Whether a count can be advised at all: nothing hosted, or every reservation known."""
        return not self.hosts or self.placed is not None

    def instances(self, shape: InstanceShape) -> int | None:
        """The fewest instances of `shape` that hold every copy: 0 when nothing is hosted, None when
        unknown or when a copy does not fit on one instance of the shape."""
        if not self.hosts:
            return 0
        if self.placed is None:
            return None
        return instances_to_hold(self.placed, shape)


def hosted_copies(components: tuple[ComponentReport, ...], variant: str, listed: bool = True) -> HostedCopies:
    """`listed` False: the endpoint hosts components that could not be listed (all unknown)."""
    if not listed:
        return HostedCopies(None, True)
    hosted = on_variant(components, variant)
    return HostedCopies(placements(hosted) if hosted else [], bool(hosted))
