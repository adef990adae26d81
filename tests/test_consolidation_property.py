"""The consolidation arithmetic (kinds/endpoints/consolidation.py) over any loads: the time-aligned
peak is never above the sum of the members' peaks, every copy covers its model's peak, and the
packing holds every copy with no two copies of a model on one instance."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.catalog import load_catalog
from auditor.kinds.endpoints.consolidation import (
    MIN_CPU_CORES,
    MIN_MEMORY_MB,
    CandidateLoad,
    cheapest_fleet,
    compute_requirements,
    copy_reservation,
    member_loads,
    replay,
)
from auditor.kinds.endpoints.models import ModelNetwork
from auditor.kinds.endpoints.packing import Placement, capacity
from auditor.models import Resource

CATALOG = load_catalog()
HOURS = 48
TARGET = 70.0


def member(name: str, cpu: list[float], memory: list[float]) -> CandidateLoad:
    """An ml.m5.large x 2 endpoint whose hourly CPU (cores) and memory (MB) are as given."""
    zeros = np.zeros(HOURS, dtype="float32")
    return CandidateLoad(
        account_id="123456789012", region="us-east-1", endpoint=name, endpoint_config=f"{name}-config",
        status="InService", variant="AllTraffic", model=f"{name}-model", instance_type="ml.m5.large",
        instance_count=2, monthly_cost_usd=167.9, own_plan_monthly_usd=167.9, network=ModelNetwork(), kms_key=None,
        tags={}, peak_percent={}, scales_out=False, excluded=None, period_seconds=3600,
        cpu_cores=np.array(cpu, dtype="float32"), memory_mb=np.array(memory, dtype="float32"),
        accelerators=zeros, accelerator_memory=zeros)


hourly_cpu = st.lists(st.floats(0.0, 0.8, allow_nan=False), min_size=HOURS, max_size=HOURS)
hourly_memory = st.lists(st.floats(50.0, 1500.0, allow_nan=False), min_size=HOURS, max_size=HOURS)
members = st.lists(st.tuples(hourly_cpu, hourly_memory), min_size=2, max_size=6)


@settings(max_examples=40, deadline=None)
@given(loads=members, copies=st.integers(1, 3))
def test_the_aligned_peak_never_exceeds_the_sum_of_peaks_and_copies_cover_peaks(loads, copies) -> None:
    group = [member(f"m{i}", cpu, memory) for i, (cpu, memory) in enumerate(loads)]
    fleet = cheapest_fleet(group, CATALOG, copies, 2, TARGET, allow_burstable=False)
    assert fleet is not None
    for r in replay(group, copies, fleet.shape, fleet.count, TARGET):
        assert r.peak <= r.sum_of_peaks + 0.1
        assert r.p95 <= r.peak
        assert r.peak < TARGET  # the count is chosen so the aligned sum stays under the target
    # The aligned sum, hour by hour, is at most the sum of each member's own peak.
    for resource in (Resource.CPU, Resource.MEMORY):
        summed = sum(member_loads(m, copies)[resource] for m in group)
        assert float(np.max(summed)) <= sum(float(member_loads(m, copies)[resource].max()) for m in group) + 1e-3
    room = capacity(fleet.shape)
    for m, reserved in zip(group, fleet.reservations, strict=True):
        # Each copy alone holds its model's peak at the target, within botocore's floors.
        assert reserved.cpu_cores >= max(MIN_CPU_CORES, float(m.cpu_cores.max()) / (TARGET / 100) - 1e-6)
        assert reserved.memory_mb >= max(MIN_MEMORY_MB, float(m.memory_mb.max()) / (TARGET / 100) - 1e-3)
        assert reserved.cpu_cores <= room.cpu_cores and reserved.memory_mb <= room.memory_mb
        compute = compute_requirements(reserved)
        assert isinstance(compute["MinMemoryRequiredInMb"], int)
        assert (compute["NumberOfCpuCoresRequired"] * 4) % 1 == 0  # in quarters of a core
    # One copy of a model per instance: never fewer instances than copies, nor than the floor.
    assert fleet.count >= max(2, copies, fleet.packed)


@settings(max_examples=30, deadline=None)
@given(cpu=hourly_cpu, memory=hourly_memory)
def test_a_copy_covers_the_peak_wherever_it_lies(cpu, memory) -> None:
    m = member("solo", cpu, memory)
    reserved = copy_reservation(m, TARGET)
    assert reserved.cpu_cores * TARGET / 100 >= max(cpu) - 1e-6
    assert reserved.memory_mb * TARGET / 100 >= max(memory) - 1e-3
    assert Placement("solo", 2, reserved).per_copy == reserved


def test_a_period_no_member_was_measured_in_is_left_out_and_a_gap_counts_at_the_peak() -> None:
    first = member("a", [0.4] + [0.1] * (HOURS - 2) + [float("nan")], [500.0] * HOURS)
    second = member("b", [0.1] * (HOURS - 2) + [0.6, float("nan")], [500.0] * HOURS)
    shape = CATALOG.shape("ml.m5.large")
    assert shape is not None
    cpu = next(r for r in replay([first, second], 2, shape, 2, TARGET) if r.resource is Resource.CPU)
    # The last hour (no datum from either) is not replayed at both peaks; second's peak hour is real.
    assert cpu.peak == round(100 * (0.1 + 0.6) / (2 * shape.vcpu), 1)
    assert cpu.sum_of_peaks == round(100 * (0.4 + 0.6) / (2 * shape.vcpu), 1)
    gap = member("c", [0.1, float("nan")] + [0.1] * (HOURS - 2), [500.0] * HOURS)
    lone = member("d", [0.3] + [0.1] * (HOURS - 1), [500.0] * HOURS)
    cpu = next(r for r in replay([gap, lone], 2, shape, 2, TARGET) if r.resource is Resource.CPU)
    assert cpu.peak == round(100 * (0.1 + 0.3) / (2 * shape.vcpu), 1)  # c's gap at its own peak (0.1)


@settings(max_examples=40, deadline=None)
@given(copies=st.lists(st.tuples(st.integers(1, 4), st.floats(0.25, 2.0), st.floats(128.0, 6000.0)),
                       min_size=1, max_size=6))
def test_spread_packing_never_puts_two_copies_of_a_model_on_one_instance(copies) -> None:
    from auditor.kinds.endpoints.packing import Reservation, instances_to_hold

    shape = CATALOG.shape("ml.m5.2xlarge")
    assert shape is not None
    placed = [Placement(f"m{i}", n, Reservation(cores, 0.0, memory)) for i, (n, cores, memory) in enumerate(copies)]
    spread = instances_to_hold(placed, shape, spread=True)
    assert spread is not None
    # At least as many instances as the most copies of one model.
    assert spread >= max(n for n, _, _ in copies)
    # One model alone: its copies each on an instance of their own.
    assert instances_to_hold(placed[:1], shape, spread=True) == copies[0][0]


def test_a_shared_endpoint_goes_to_the_audience_its_members_tags_name() -> None:
    from dataclasses import replace as copy

    from auditor.kinds.endpoints.kind import owned
    from auditor.kinds.endpoints.models import EndpointReport
    from helpers import endpoint

    def member(name: str, owner: str, shared: str) -> EndpointReport:
        return EndpointReport(copy(endpoint(name), tags={"owner": owner, "env": "prod", "team": name}), (),
                              consolidated_into=shared)

    section = (member("a", "reco@example.com", "consolidated-1"), member("b", "reco@example.com", "consolidated-1"),
               member("c", "reco@example.com", "consolidated-2"), member("d", "ads@example.com", "consolidated-2"))
    shared = {o.name: dict(o.tags) for o in owned(section) if o.resource_type == "shared-endpoint"}
    # One owner's endpoints: the tags they share (that owner's); several owners': no owner tag.
    assert shared == {"consolidated-1": {"owner": "reco@example.com", "env": "prod"},
                      "consolidated-2": {"env": "prod"}}
