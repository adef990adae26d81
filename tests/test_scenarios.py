"""The scenario fleet in the emulator: the data-level facts it guarantees, as CloudWatch returns them.

No rule verdicts here (each scenario's docstring in auditor_emulator/fleet.py says what a correct
audit concludes); only that the audit runs over it and that the data looks like a real account's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import boto3
import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor_emulator import fleet as scenarios
from auditor_emulator.fleet import scenario_fleet, seed_fleet
from auditor_emulator.published import INSTANCE_NS, INVOCATION_NS
from conftest import seeded_emulator, utc_now

runner = CliRunner()
DAYS = 14


@pytest.fixture(scope="module")
def seeded(emulator, tmp_path_factory) -> Iterator[datetime]:
    now = utc_now()
    with seeded_emulator(emulator, tmp_path_factory.mktemp("home"),
                         lambda emu: seed_fleet(emu, scenario_fleet(), now=now, lookback_days=DAYS)):
        yield now


@pytest.fixture(scope="module")
def cloudwatch(seeded: datetime):
    return boto3.client("cloudwatch", region_name="us-east-1")


def hourly(cloudwatch, seeded: datetime, namespace: str, metric: str, stat: str, endpoint: str,
           variant: str | None = "AllTraffic") -> list[tuple[datetime, float]]:
    """One value per hour of the window, oldest first; hours without a datapoint are absent."""
    end = seeded.replace(minute=0, second=0, microsecond=0)
    dims = [{"Name": "EndpointName", "Value": endpoint}]
    if variant:
        dims.append({"Name": "VariantName", "Value": variant})
    result = cloudwatch.get_metric_data(
        MetricDataQueries=[{"Id": "q", "MetricStat": {"Metric": {"Namespace": namespace, "MetricName": metric,
                                                                  "Dimensions": dims},
                                                       "Period": 3600, "Stat": stat}}],
        StartTime=end - timedelta(days=DAYS), EndTime=end, ScanBy="TimestampAscending")
    (series,) = result["MetricDataResults"]
    return list(zip(series["Timestamps"], series["Values"], strict=True))


def test_the_audit_runs_over_every_scenario(seeded: datetime, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["run", "--format", "json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert {e["name"] for e in report["endpoints"]} == {s.name for s in scenario_fleet()}


@pytest.mark.parametrize("endpoint", ["async-busy-gpu-draining", "async-idle-empty-queue",
                                      "async-queue-growing-slowly"])
def test_async_endpoints_publish_no_invocations(cloudwatch, seeded: datetime, endpoint: str) -> None:
    for metric in ("Invocations", "InvocationsPerInstance", "OverheadLatency"):
        assert hourly(cloudwatch, seeded, INVOCATION_NS, metric, "Sum", endpoint) == []
        listed = cloudwatch.list_metrics(Namespace=INVOCATION_NS, MetricName=metric,
                                         Dimensions=[{"Name": "EndpointName", "Value": endpoint}])
        assert listed["Metrics"] == []
    # ...but their instances report all the time, and the queue per endpoint.
    assert len(hourly(cloudwatch, seeded, INSTANCE_NS, "CPUUtilization", "Average", endpoint)) == DAYS * 24
    assert len(hourly(cloudwatch, seeded, INVOCATION_NS, "ApproximateBacklogSize", "Average", endpoint,
                      None)) == DAYS * 24


def test_busy_async_endpoint_processes_requests_with_a_queue_that_drains(cloudwatch, seeded: datetime) -> None:
    name = "async-busy-gpu-draining"
    processed = [v for _, v in hourly(cloudwatch, seeded, INVOCATION_NS, "TotalProcessingTime", "SampleCount", name)]
    assert len(processed) == DAYS * 24 and sum(processed) / len(processed) > 800
    gpu = [v for _, v in hourly(cloudwatch, seeded, INSTANCE_NS, "GPUUtilization", "Average", name)]
    assert 70 < sum(gpu) / len(gpu) < 90  # one GPU per g4dn.xlarge
    backlog = [v for _, v in hourly(cloudwatch, seeded, INVOCATION_NS, "ApproximateBacklogSize", "Maximum", name,
                                    None)]
    assert max(backlog) > 50  # requests wait at the daily peak
    assert sum(1 for v in backlog[-24:] if v < 3) > 0  # and it drains every day


def test_idle_async_endpoint_has_an_empty_queue_and_idle_instances(cloudwatch, seeded: datetime) -> None:
    name = "async-idle-empty-queue"
    assert hourly(cloudwatch, seeded, INVOCATION_NS, "TotalProcessingTime", "SampleCount", name) == []
    backlog = hourly(cloudwatch, seeded, INVOCATION_NS, "ApproximateBacklogSize", "Maximum", name, None)
    assert {v for _, v in backlog} == {0.0}
    cpu = [v / 4 for _, v in hourly(cloudwatch, seeded, INSTANCE_NS, "CPUUtilization", "Average", name)]
    assert sum(cpu) / len(cpu) < 2  # 4 vCPUs, summed


def test_slowly_growing_queue_rises_from_5_to_200_while_processing_1500_an_hour(cloudwatch, seeded: datetime) -> None:
    name = "async-queue-growing-slowly"
    backlog = [v for _, v in hourly(cloudwatch, seeded, INVOCATION_NS, "ApproximateBacklogSize", "Average", name,
                                    None)]
    last_week = backlog[-7 * 24:]
    assert last_week[0] == pytest.approx(5, abs=3) and last_week[-1] == pytest.approx(200, abs=15)
    assert all(b <= a + 3 for a, b in zip(last_week[1:], last_week[:-1], strict=True))  # never drains
    processed = [v for _, v in hourly(cloudwatch, seeded, INVOCATION_NS, "TotalProcessingTime", "SampleCount", name)]
    assert min(processed) > 1000
    per_instance = hourly(cloudwatch, seeded, INVOCATION_NS, "ApproximateBacklogSizePerInstance", "Average", name,
                          None)
    assert per_instance[-1][1] == pytest.approx(backlog[-1] / 2)
    age = hourly(cloudwatch, seeded, INVOCATION_NS, "ApproximateAgeOfOldestRequest", "Average", name, None)
    assert age[-1][1] == pytest.approx(backlog[-1] * 4.8 / 2)  # backlog / throughput


def test_autoscaled_variant_sample_count_is_its_instance_minutes(cloudwatch, seeded: datetime) -> None:
    variant = scenarios.realtime_autoscaled_day_night().variants[0]
    samples = hourly(cloudwatch, seeded, INSTANCE_NS, "CPUUtilization", "SampleCount",
                     "realtime-autoscaled-day-night")
    assert len(samples) == DAYS * 24
    expected = sum(60 * variant.count_at(ts.hour) for ts, _ in samples)
    assert sum(v for _, v in samples) == expected
    assert {v for _, v in samples} == {120.0, 360.0}  # 2 instances at night, 6 by day
    assert expected != 60 * variant.count * DAYS * 24
    # InvocationsPerInstance splits the hour's requests over the instances running in it.
    invocations = dict(hourly(cloudwatch, seeded, INVOCATION_NS, "Invocations", "Sum",
                              "realtime-autoscaled-day-night"))
    per_instance = hourly(cloudwatch, seeded, INVOCATION_NS, "InvocationsPerInstance", "Sum",
                          "realtime-autoscaled-day-night")
    for ts, value in per_instance:
        assert value == pytest.approx(invocations[ts] / variant.count_at(ts.hour))


def test_bursty_endpoint_has_hours_without_any_datapoint(cloudwatch, seeded: datetime) -> None:
    name = "realtime-bursty-low-traffic"
    invocations = hourly(cloudwatch, seeded, INVOCATION_NS, "Invocations", "Sum", name)
    latency = hourly(cloudwatch, seeded, INVOCATION_NS, "ModelLatency", "Average", name)
    assert 0 < len(invocations) <= 3 * DAYS and len(latency) == len(invocations)
    assert {ts.hour for ts, _ in invocations} <= {6, 12, 18}
    assert all(v > 0 for _, v in invocations)  # no zero datapoints
    assert len(hourly(cloudwatch, seeded, INSTANCE_NS, "CPUUtilization", "Average", name)) == DAYS * 24


def test_steady_busy_endpoint_has_traffic_every_hour_at_65_to_95_percent_cpu(cloudwatch, seeded: datetime) -> None:
    name = "realtime-steady-busy"
    invocations = hourly(cloudwatch, seeded, INVOCATION_NS, "Invocations", "Sum", name)
    assert len(invocations) == DAYS * 24 and len({v for _, v in invocations}) > 100  # random counts
    cpu = [v / 4 for _, v in hourly(cloudwatch, seeded, INSTANCE_NS, "CPUUtilization", "Average", name)]
    assert min(cpu) >= 65 and max(cpu) <= 95
