"""Discovery and collection against the local AWS emulator, over HTTP."""

from __future__ import annotations

from datetime import timedelta

import boto3
import numpy as np
import pytest

import auditor_emulator.server as emulator_server
from auditor.catalog import load_catalog
from auditor.collect.cloudwatch import collect_metrics
from auditor.collect.plan import align_window
from auditor.collect.session import AwsClients
from auditor.kinds.endpoints.discover import discover_endpoints
from auditor.kinds.endpoints.metrics import plan_queries
from auditor.kinds.endpoints.models import EndpointKind
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, async_variant, seed_fleet, serverless_variant
from conftest import utc_now

CATALOG = load_catalog()


def test_discovery_joins_configs_counts_kinds_and_tags(aws) -> None:
    now = utc_now()
    seed_fleet(aws, [
        EndpointSpec("two-variants",
                     (VariantSpec("ml.m5.xlarge", 3, name="a"), VariantSpec("ml.c5.large", 1, name="b")),
                     tags={"owner": "x@example.com"}),
        EndpointSpec("queue", (async_variant("ml.m5.xlarge", 1, arrivals_per_hour=30, processing_seconds=60),),
                     kind="async"),
        EndpointSpec("tiny", (serverless_variant(3072, 100, Load(30, 2)),), kind="serverless"),
        EndpointSpec("gone", delete_config=True),
        EndpointSpec("failed", status="Failed"),
    ], now=now)
    clients = AwsClients()
    found = discover_endpoints(clients.client("sagemaker", "us-east-1"), "us-east-1")
    by_name = {e.name: e for e in found.endpoints}
    assert set(by_name) == {"two-variants", "queue", "tiny", "gone", "failed"}

    two = by_name["two-variants"]
    assert [(v.name, v.instance_type, v.instance_count) for v in two.variants] == [
        ("a", "ml.m5.xlarge", 3), ("b", "ml.c5.large", 1)]
    assert two.tags == {"owner": "x@example.com"}
    assert two.account_id == "123456789012" and two.kind is EndpointKind.REAL_TIME
    assert abs((now - two.created_at) - timedelta(days=90)) < timedelta(minutes=1)
    assert by_name["queue"].kind is EndpointKind.ASYNC
    assert by_name["tiny"].kind is EndpointKind.SERVERLESS
    assert by_name["tiny"].variants[0].serverless_memory_mb == 3072

    gone = by_name["gone"]
    assert gone.not_judged_reason and "deleted" in gone.not_judged_reason
    assert gone.variants[0].instance_type is None and gone.variants[0].instance_count == 1
    assert [e.endpoint for e in found.errors] == ["gone"]
    assert "Failed" in (by_name["failed"].not_judged_reason or "")
    # One Search page for all five (with their tags), then one DescribeEndpointConfig per config;
    # a config's own tags are read later, and only for a config a plan copies.
    calls = clients.counter.as_dict()
    assert calls == {"sagemaker:Search": 1, "sagemaker:DescribeEndpointConfig": 5}
    assert two.config_description is not None
    assert [v["InstanceType"] for v in two.config_description["ProductionVariants"]] == ["ml.m5.xlarge", "ml.c5.large"]
    assert gone.config_description is None


def test_collector_follows_next_token_and_keeps_every_point(aws, monkeypatch: pytest.MonkeyPatch) -> None:
    now = utc_now()
    seed_fleet(aws, [EndpointSpec(f"ep-{i}", (VariantSpec("ml.m5.xlarge", 1, cpu=Load(40, 5)),)) for i in range(3)],
               now=now)
    # Make the emulator page after 1,000 datapoints, as CloudWatch does after 100,800.
    monkeypatch.setattr(emulator_server, "MAX_DATAPOINTS", 1000)
    clients = AwsClients()
    found = discover_endpoints(clients.client("sagemaker", "us-east-1"), "us-east-1")
    window = align_window(now, 14, 3600)
    queries = plan_queries(list(found.endpoints), CATALOG)
    metrics = collect_metrics(clients.client("cloudwatch", "us-east-1"), "us-east-1", queries, window)
    assert metrics.calls > 1  # one batch, several pages
    frame = metrics.frame("ep-1", "AllTraffic")
    assert len(frame["CPUUtilization:Maximum"].dropna()) == 14 * 24
    assert len(frame["Invocations:Sum"].dropna()) == 14 * 24
    # The raw CPU is summed over the 4 vCPUs of an m5.xlarge.
    assert frame["CPUUtilization:Average"].mean() == pytest.approx(160, rel=0.1)
    assert metrics.datapoints == sum(frame.notna().sum().sum() for frame in metrics.all_frames().values())
    # The datapoints arrive as whole arrays (epoch seconds), not an object per datapoint.
    answer = clients.client("cloudwatch", "us-east-1").get_metric_data(
        MetricDataQueries=[{"Id": "q", "MetricStat": {"Metric": {
            "Namespace": queries[0].spec.namespace, "MetricName": queries[0].spec.metric,
            "Dimensions": queries[0].dimensions}, "Period": 3600, "Stat": queries[0].spec.stat}}],
        StartTime=window.start, EndTime=window.end, ScanBy="TimestampAscending")
    stamps = answer["MetricDataResults"][0]["Timestamps"]
    assert isinstance(stamps, np.ndarray) and len(stamps) == 14 * 24
    assert stamps[0] >= window.start.timestamp() and (np.diff(stamps) == 3600).all()


def test_emulator_rejects_more_than_500_queries(aws) -> None:
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    now = utc_now()
    queries = [{"Id": f"q{i}", "MetricStat": {"Metric": {"Namespace": "x", "MetricName": "m"}, "Period": 3600,
                                               "Stat": "Average"}} for i in range(501)]
    with pytest.raises(cloudwatch.exceptions.ClientError, match="500"):
        cloudwatch.get_metric_data(MetricDataQueries=queries, StartTime=now - timedelta(days=1), EndTime=now)
