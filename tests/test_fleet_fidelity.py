"""The emulator's fleets publish only what AWS publishes for each kind of endpoint."""

from __future__ import annotations

from datetime import UTC, datetime

import boto3
import pytest

from auditor_emulator.fleet import (
    EndpointSpec,
    Load,
    VariantSpec,
    async_variant,
    demo_fleet,
    fleet_datums,
    scenario_fleet,
    seed_fleet,
    synthetic_fleet,
)
from auditor_emulator.published import (
    ASYNC,
    ENDPOINT_DIMS,
    INSTANCE_NS,
    INVOCATION_NS,
    PUBLISHED,
    REAL_TIME,
    SERVERLESS,
    UnpublishedMetricError,
    check_datum,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_table_says_what_each_kind_does_not_publish() -> None:
    for metric in ("Invocations", "InvocationsPerInstance", "OverheadLatency"):
        assert metric not in PUBLISHED[ASYNC]
    for metric in ("CPUUtilization", "DiskUtilization", "GPUUtilization", "GPUMemoryUtilization"):
        assert metric not in PUBLISHED[SERVERLESS]
    for metric in ("ApproximateBacklogSize", "ApproximateBacklogSizePerInstance", "ApproximateAgeOfOldestRequest",
                   "HasBacklogWithoutCapacity"):
        assert PUBLISHED[ASYNC][metric] == (INVOCATION_NS, ENDPOINT_DIMS)
        assert metric not in PUBLISHED[REAL_TIME]
    assert PUBLISHED[REAL_TIME]["CPUUtilization"][0] == INSTANCE_NS


def test_an_async_spec_given_invocations_is_refused_before_anything_is_created(aws) -> None:
    spec = EndpointSpec("queue-with-invocations", (VariantSpec("ml.m5.xlarge", 1, invocations_per_hour=100),),
                        kind=ASYNC)
    with pytest.raises(UnpublishedMetricError, match=r"'queue-with-invocations' \(async\).*Invocations"):
        seed_fleet(aws, [spec], now=NOW)
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    assert sagemaker.list_endpoints()["Endpoints"] == []


def test_a_serverless_spec_with_cpu_is_refused() -> None:
    spec = EndpointSpec("tiny", (VariantSpec(None, 0, disk=None, serverless_memory_mb=1024),), kind=SERVERLESS)
    with pytest.raises(UnpublishedMetricError, match=r"'tiny' \(serverless\).*CPUUtilization"):
        fleet_datums([spec], NOW)


def test_queue_metrics_with_variant_dimensions_and_zero_traffic_datapoints_are_refused() -> None:
    variant_dims = [{"Name": "EndpointName", "Value": "q"}, {"Name": "VariantName", "Value": "AllTraffic"}]
    stats = {"SampleCount": 60.0, "Sum": 60.0, "Minimum": 1.0, "Maximum": 1.0}
    with pytest.raises(UnpublishedMetricError, match="ApproximateBacklogSize"):
        check_datum("q", ASYNC, INVOCATION_NS, {"MetricName": "ApproximateBacklogSize", "Dimensions": variant_dims,
                                                "StatisticValues": stats})
    zero = {"SampleCount": 1.0, "Sum": 0.0, "Minimum": 0.0, "Maximum": 0.0}
    with pytest.raises(UnpublishedMetricError, match="zero Invocations"):
        check_datum("rt", REAL_TIME, INVOCATION_NS, {"MetricName": "Invocations", "Dimensions": variant_dims,
                                                     "StatisticValues": zero})


@pytest.mark.parametrize("fleet", [demo_fleet, scenario_fleet, lambda: synthetic_fleet(60)],
                         ids=["demo", "scenario", "synthetic"])
def test_every_fleet_publishes_only_what_aws_publishes(fleet) -> None:
    specs = fleet()
    datums = fleet_datums(specs, NOW)  # raises on anything AWS does not publish
    kinds = {s.name: s.kind for s in specs}
    published = {(d["Dimensions"][0]["Value"], d["MetricName"]) for items in datums.values() for d in items}
    for name, kind in kinds.items():
        metrics = {m for n, m in published if n == name}
        if kind == ASYNC:
            assert not metrics & {"Invocations", "InvocationsPerInstance", "OverheadLatency"}
        if kind == SERVERLESS:
            assert "CPUUtilization" not in metrics


def test_synthetic_fleet_mixes_kinds_and_has_quiet_hours() -> None:
    specs = synthetic_fleet(60)
    kinds = [s.kind for s in specs]
    assert kinds.count(REAL_TIME) > kinds.count(ASYNC) > 0 and kinds.count(SERVERLESS) > 0
    assert any(v.traffic_hours for s in specs for v in s.variants)


def test_realtime_traffic_is_random_and_silent_hours_have_no_datapoint() -> None:
    spec = EndpointSpec("office-hours", (VariantSpec("ml.m5.large", 1, cpu=Load(5, 1), invocations_per_hour=400,
                                                     traffic_hours=tuple(range(9, 17))),))
    datums = fleet_datums([spec], NOW, lookback_days=3)
    invocations = [d for d in datums[INVOCATION_NS] if d["MetricName"] == "Invocations"]
    assert {d["Timestamp"].hour for d in invocations} <= set(range(9, 17))
    assert len(invocations) == 3 * 8
    sums = {d["StatisticValues"]["Sum"] for d in invocations}
    assert len(sums) > 1 and all(s > 0 for s in sums)
    cpu = [d for d in datums[INSTANCE_NS] if d["MetricName"] == "CPUUtilization"]
    assert len(cpu) == 3 * 24  # the instance runs, and publishes, all day


def test_async_queue_carries_its_backlog_over() -> None:
    spec = EndpointSpec("q", (async_variant("ml.m5.xlarge", 1, arrivals_per_hour=70, processing_seconds=60,
                                            steady_arrivals=True, traffic_swing=0.0),), kind=ASYNC)
    datums = fleet_datums([spec], NOW, lookback_days=1)
    by_metric: dict[str, list] = {}
    for d in datums[INVOCATION_NS]:
        by_metric.setdefault(d["MetricName"], []).append(d["StatisticValues"])
    # 60 processed an hour (one instance, 60 s each); 10 more arrive, and wait.
    assert [s["SampleCount"] for s in by_metric["TotalProcessingTime"]] == [60.0] * 24
    backlog = [s["Sum"] / s["SampleCount"] for s in by_metric["ApproximateBacklogSize"]]
    assert backlog[0] == pytest.approx(5) and backlog[-1] == pytest.approx(235)
    age = [s["Sum"] / s["SampleCount"] for s in by_metric["ApproximateAgeOfOldestRequest"]]
    assert age[-1] == pytest.approx(235 * 60)
    assert all(s["Maximum"] == 0 for s in by_metric["HasBacklogWithoutCapacity"])


def test_stranded_queue_reports_backlog_without_capacity_and_no_instance_metrics() -> None:
    spec = EndpointSpec("q", (async_variant("ml.m5.xlarge", 1, arrivals_per_hour=20, processing_seconds=60),),
                        kind=ASYNC, stranded_hours=5)
    datums = fleet_datums([spec], NOW, lookback_days=1)
    flags = [d["StatisticValues"]["Maximum"] for d in datums[INVOCATION_NS]
             if d["MetricName"] == "HasBacklogWithoutCapacity"]
    assert flags[-5:] == [1.0] * 5 and set(flags[:-5]) == {0.0}
    assert len([d for d in datums[INSTANCE_NS] if d["MetricName"] == "CPUUtilization"]) == 24 - 5
