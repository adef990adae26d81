"""Consolidating single-model endpoints onto one endpoint's inference components: what each
candidate's load was hour by hour (in absolute units, aligned on the window's periods), what each
of its copies must reserve, the cheapest shared fleet that holds every copy, and the time-aligned
replay of the members' summed load on it. Pure; read by the rule consolidate-onto-components.

Loads are read from the per-period maxima (the busiest minute of each period), normalised as every
rule reads them (analyse/normalise.py), then made absolute:
- CPU cores in use by the whole variant: CPU % of one instance x its vCPUs x its instances (the
  hottest instance's maximum times the count: never below what the variant used);
- memory in MB one copy holds: memory % x the instance's memory (each instance holds the model);
- accelerator devices in use by the whole variant, and one copy's accelerator memory in devices.
A period without a datum counts at the member's own peak, never as idle; a period no member was
measured in (the window's last hour, not yet published) is left out of the replay.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from auditor.catalog import HOURS_PER_MONTH, Catalog, InstanceShape
from auditor.kinds.endpoints.models import ModelNetwork
from auditor.kinds.endpoints.packing import Placement, Reservation, capacity, instances_to_hold
from auditor.models import Resource
from auditor.recommend.risk import percent_replay

RULE_ID = "consolidate-onto-components"
# Botocore's floors for a copy's reservation (InferenceComponentComputeResourceRequirements).
MIN_CPU_CORES = 0.25
MIN_MEMORY_MB = 128
CPU_STEP = 0.25  # cores are reserved in quarters (the smallest reservation botocore allows)
MEMORY_STEP_MB = 64
SHARED_VARIANT = "AllTraffic"
SHARED_TYPE = "shared-endpoint"  # its findings' and plans' resource type
SHARED_PREFIX = "consolidated-"  # the shared endpoints' names: consolidated-<hash of the members' names>
# Why a consolidation is load-tested first (the plan's risk says it once).
LOAD_TEST_FIRST = ("models sharing instances contend for memory bandwidth, network and threads, which the replay of "
                   "their CPU, memory and accelerator load does not show: load-test the shared endpoint with every "
                   "component before callers switch")


@dataclass(frozen=True, eq=False)
class CandidateLoad:
    """A single-model real-time endpoint as consolidation reads it (kept after its frames are released)."""

    account_id: str
    region: str
    endpoint: str
    endpoint_config: str
    status: str
    variant: str
    model: str
    instance_type: str
    instance_count: int
    monthly_cost_usd: float
    own_plan_monthly_usd: float  # its own best plan's cost (its current cost where no plan saves)
    network: ModelNetwork | None  # None: not read yet (only endpoints that may be grouped are asked)
    kms_key: str | None
    tags: dict[str, str]
    peak_percent: dict[str, float]  # each resource's highest per-period maximum, % of its own capacity
    scales_out: bool  # its own findings advise a scale-out
    excluded: str | None  # why it is not a candidate (busy, autoscaled, its own plan deletes it)
    period_seconds: int
    # Absolute per-period loads (see the module's docstring), one value per period of the window.
    cpu_cores: np.ndarray = field(repr=False)
    memory_mb: np.ndarray = field(repr=False)
    accelerators: np.ndarray = field(repr=False)
    accelerator_memory: np.ndarray = field(repr=False)

    @property
    def own_saving_usd(self) -> float:
        return round(self.monthly_cost_usd - self.own_plan_monthly_usd, 2)


# ---------- Copies and the shared fleet ----------

def _round_up(value: float, step: float) -> float:
    return math.ceil(value / step - 1e-9) * step


def peak_of(load: np.ndarray) -> float:
    """The highest value measured (0 when none was)."""
    present = load[~np.isnan(load)]
    return float(present.max()) if present.size else 0.0


def copy_reservation(member: CandidateLoad, target_percent: float) -> Reservation:
    """What each copy reserves: the model's measured peak at the target (so one copy alone still
    holds the model's whole peak: a copy lost with its instance leaves the others enough), within
    botocore's floors and steps."""
    target = target_percent / 100.0
    cores = max(MIN_CPU_CORES, _round_up(peak_of(member.cpu_cores) / target, CPU_STEP))
    memory = max(MIN_MEMORY_MB, _round_up(peak_of(member.memory_mb) / target, MEMORY_STEP_MB))
    devices = 0.0
    gpu, gpu_memory = peak_of(member.accelerators), peak_of(member.accelerator_memory)
    if gpu > 0 or gpu_memory > 0:
        devices = float(max(1, math.ceil(max(gpu, gpu_memory) / target - 1e-9)))
    return Reservation(cores, devices, memory)


def compute_requirements(per_copy: Reservation) -> dict[str, float | int]:
    """A copy's ComputeResourceRequirements, exactly as botocore takes it."""
    compute: dict[str, float | int] = {"NumberOfCpuCoresRequired": per_copy.cpu_cores,
                                       "MinMemoryRequiredInMb": int(per_copy.memory_mb)}
    if per_copy.accelerators:
        compute["NumberOfAcceleratorDevicesRequired"] = per_copy.accelerators
    return compute


@dataclass(frozen=True)
class Replay:
    """One resource's time-aligned replay on the shared fleet (percent of its capacity)."""

    resource: Resource
    peak: float
    p95: float
    sum_of_peaks: float  # what the members' own peaks would take, were they at the same hour
    hours_over_target: float
    hours_over_100: float

    @property
    def headroom_at_peak(self) -> float:
        return round(100.0 - self.peak, 1)

    def as_dict(self) -> dict[str, float]:
        return {"peak_percent": self.peak, "p95_percent": self.p95, "headroom_at_peak_percent": self.headroom_at_peak,
                "sum_of_peaks_percent": self.sum_of_peaks, "hours_over_target": self.hours_over_target,
                "hours_over_100": self.hours_over_100}


def member_loads(member: CandidateLoad, copies: int) -> dict[Resource, np.ndarray]:
    """The member's per-period load on a shared fleet: its CPU and accelerators (the load, wherever
    its copies run), and the memory each of its copies holds."""
    loads = {Resource.CPU: member.cpu_cores.astype("float64"),
             Resource.MEMORY: member.memory_mb.astype("float64") * copies}
    if peak_of(member.accelerators) > 0:
        loads[Resource.GPU] = member.accelerators.astype("float64")
    return loads


def fleet_capacity(shape: InstanceShape, count: int) -> dict[Resource, float]:
    room = capacity(shape)
    return {Resource.CPU: room.cpu_cores * count, Resource.MEMORY: room.memory_mb * count,
            Resource.GPU: room.accelerators * count}


def measured_periods(members: Sequence[CandidateLoad]) -> np.ndarray:
    """The periods some member has a datum for: a period none has (the window's last hour, not yet
    published) says nothing about their load together, and is left out of the replay."""
    if not members:
        return np.zeros(0, dtype=bool)
    return np.logical_or.reduce([~np.isnan(m.cpu_cores) for m in members])


def aligned_sum(members: Sequence[CandidateLoad], copies: int) -> dict[Resource, np.ndarray]:
    """Period by period (those some member was measured in), the members' summed load per resource
    (their series share the window's periods). A member without a datum in such a period counts at
    its own peak then, never as idle."""
    keep = measured_periods(members)
    total: dict[Resource, np.ndarray] = {}
    for member in members:
        for resource, load in member_loads(member, copies).items():
            filled = np.where(np.isnan(load), peak_of(load), load)[keep]
            total[resource] = total[resource] + filled if resource in total else filled
    return total


def replay(members: Sequence[CandidateLoad], copies: int, shape: InstanceShape, count: int,
           target_percent: float) -> tuple[Replay, ...]:
    """The time-aligned replay: each period's summed load over the shared fleet's capacity."""
    rooms = fleet_capacity(shape, count)
    period = members[0].period_seconds if members else 3600
    loads = [member_loads(m, copies) for m in members]
    result = []
    for resource, load in aligned_sum(members, copies).items():
        room = rooms[resource]
        if room <= 0 or not load.size:
            continue
        figures = percent_replay(resource, 100.0 * load / room, period, target_percent)
        peaks = sum(peak_of(own[resource]) for own in loads if resource in own)
        result.append(Replay(resource, figures.peak, figures.p95, round(100.0 * peaks / room, 1),
                             figures.hours_over_target, figures.hours_over_100))
    return tuple(result)


def replay_count(peaks: dict[Resource, float], shape: InstanceShape, target_percent: float) -> int:
    """The fewest instances of `shape` whose capacity keeps the aligned sum's peaks (per resource)
    under the target; 0: a load this shape has no room for at all."""
    per_instance = fleet_capacity(shape, 1)
    needed = 1
    for resource, peak in peaks.items():
        room = per_instance[resource]
        if room <= 0:
            if peak > 0:
                return 0
            continue
        needed = max(needed, math.floor(peak / (room * target_percent / 100.0)) + 1)
    return needed


def room_count(reservations: Sequence[Reservation], copies: int, shape: InstanceShape) -> int:
    """A lower bound of the instances the copies need: their reservations summed over one instance's room."""
    room = capacity(shape)
    needed = 1
    for need, have in ((sum(r.cpu_cores for r in reservations), room.cpu_cores),
                       (sum(r.accelerators for r in reservations), room.accelerators),
                       (sum(r.memory_mb for r in reservations), room.memory_mb)):
        if need > 0:
            needed = max(needed, math.ceil(copies * need / have - 1e-9) if have > 0 else 10**6)
    return needed


def compatible(shape: InstanceShape, members: Sequence[tuple[CandidateLoad, InstanceShape]],
               allow_burstable: bool) -> bool:
    """The members' kind of shape: CPU shapes for CPU models; for GPU models, the same accelerator on
    a shape of several devices. The same architecture (an image is built for one); burstable only
    where the members already are, or the config allows it."""
    first = members[0][1]
    if not shape.accelerators_known or (shape.accelerator, shape.architecture) != (first.accelerator,
                                                                                      first.architecture):
        return False
    if shape.has_accelerator and shape.gpu_count < 2:
        return False
    return not shape.burstable or allow_burstable or all(s.burstable for _, s in members)


@dataclass(frozen=True)
class SharedFleet:
    """The cheapest shared fleet for a group, and how it compares with the members' own plans."""

    members: tuple[CandidateLoad, ...]
    reservations: tuple[Reservation, ...]
    copies: int
    shape: InstanceShape
    count: int
    packed: int  # instances first-fit decreasing needs for the copies (one copy of a model per instance)
    monthly_usd: float
    replays: tuple[Replay, ...]

    @property
    def current_usd(self) -> float:
        return round(sum(m.monthly_cost_usd for m in self.members), 2)

    @property
    def saving_usd(self) -> float:
        return round(self.current_usd - self.monthly_usd, 2)

    @property
    def own_savings_usd(self) -> float:
        return round(sum(m.own_saving_usd for m in self.members), 2)

    @property
    def margin_usd(self) -> float:
        """What consolidating saves beyond the members' own plans together."""
        return round(self.saving_usd - self.own_savings_usd, 2)


def cheapest_fleet(members: Sequence[CandidateLoad], catalog: Catalog, copies: int, min_instances: int,
                   target_percent: float, allow_burstable: bool) -> SharedFleet | None:
    """Of the compatible shapes, the cheapest count that holds every copy (copies of one model on
    different instances), the availability floor and the aligned sum's peak under the target. Shapes
    are tried cheapest first, and one whose lower bound already costs more than the best is not packed."""
    shaped = [(m, s) for m in members if (s := catalog.shape(m.instance_type)) is not None]
    if len(shaped) != len(members) or not members:
        return None
    region = members[0].region
    reservations = tuple(copy_reservation(m, target_percent) for m in members)
    placed = [Placement(m.endpoint, copies, r) for m, r in zip(members, reservations, strict=True)]
    families = [s.family for _, s in shaped]
    peaks = {resource: peak_of(load) for resource, load in aligned_sum(members, copies).items()}
    priced = sorted((price, shape.instance_type, shape) for shape in catalog.shapes.values()
                    if compatible(shape, shaped, allow_burstable)
                    and (price := catalog.hourly_price(shape.instance_type, region)) is not None)
    best: tuple[tuple[float, int, bool, str], SharedFleet] | None = None
    for price, _, shape in priced:
        by_load = replay_count(peaks, shape, target_percent)
        if by_load == 0:
            continue
        floor = max(min_instances, copies, by_load, room_count(reservations, copies, shape))
        if best is not None and round(price * floor * HOURS_PER_MONTH, 2) > best[0][0]:
            continue  # even its lower bound costs more than the best found
        packed = instances_to_hold(placed, shape, spread=True)
        if packed is None:
            continue
        count = max(min_instances, packed, by_load)
        monthly = round(price * count * HOURS_PER_MONTH, 2)
        key = (monthly, count, shape.family not in families, shape.instance_type)
        if best is None or key < best[0]:
            best = (key, SharedFleet(tuple(members), reservations, copies, shape, count, packed, monthly, ()))
    if best is None:
        return None
    fleet = best[1]
    return SharedFleet(fleet.members, fleet.reservations, copies, fleet.shape, fleet.count, fleet.packed,
                       fleet.monthly_usd, replay(members, copies, fleet.shape, fleet.count, target_percent))


def shape_key(member: CandidateLoad, catalog: Catalog) -> tuple[Any, ...] | None:
    """What of `group_key` is known before the model is read: the KMS key and the kind of shape.
    None: a GPU model on a single-device shape (no whole device is free on it, and a shape of several
    devices costs about as much as that many single ones), or a shape the catalog does not know."""
    shape = catalog.shape(member.instance_type)
    if shape is None or (shape.has_accelerator and shape.gpu_count < 2):
        return None
    return member.kms_key, shape.accelerator, shape.architecture


def shared_name(members: Iterable[str]) -> str:
    """The shared endpoint's name: `consolidated-` and the first 10 hex of the sha256 of the sorted
    member endpoint names, one a line, so apply holds the members to the plan's resource (and id)."""
    digest = hashlib.sha256("\n".join(sorted(members)).encode()).hexdigest()
    return f"{SHARED_PREFIX}{digest[:10]}"
