"""The metric window and the GetMetricData batching, without AWS."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from auditor.catalog import load_catalog
from auditor.collect.plan import align_window, batch_queries
from auditor.kinds.endpoints.metrics import plan_queries
from auditor.kinds.endpoints.models import EndpointKind, Variant
from helpers import endpoint

CATALOG = load_catalog()
NOW = datetime(2026, 11, 30, 6, 17, 42, tzinfo=UTC)


def test_window_ends_on_the_last_whole_period() -> None:
    window = align_window(NOW, 14, 3600)
    assert window.end == datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
    assert (window.end - window.start).days == 14
    assert window.points_per_series == 336


def test_period_follows_retention_steps() -> None:
    assert align_window(NOW, 14, 60).period_seconds == 60
    assert align_window(NOW, 30, 60).period_seconds == 300  # older than 15 days: 5-minute data
    assert align_window(NOW, 30, 420).period_seconds == 600
    assert align_window(NOW, 90, 300).period_seconds == 3600  # older than 63 days: hourly data


def test_batches_reach_the_lower_bound() -> None:
    endpoints = [endpoint(f"ep-{i}") for i in range(60)]
    queries = plan_queries(endpoints, CATALOG)
    window = align_window(NOW, 14, 3600)
    batches = batch_queries(queries, window)
    datapoints = len(queries) * window.points_per_series
    lower_bound = max(math.ceil(len(queries) / 500), math.ceil(datapoints / 100_800))
    assert len(batches) == lower_bound
    assert all(len(b) <= 500 and len(b) * window.points_per_series <= 100_800 for b in batches)
    assert sum(len(b) for b in batches) == len(queries)


def test_gpu_series_only_for_gpu_shapes_and_queue_series_for_async() -> None:
    cpu = endpoint("cpu", variants=(Variant("AllTraffic", "ml.m5.xlarge", 1),))
    gpu = endpoint("gpu", variants=(Variant("AllTraffic", "ml.g5.xlarge", 1),))
    queue = endpoint("queue", kind=EndpointKind.ASYNC)
    queries = plan_queries([cpu, gpu, queue], CATALOG)
    metrics = {(q.endpoint, q.spec.metric) for q in queries}
    assert ("cpu", "GPUUtilization") not in metrics
    assert ("gpu", "GPUUtilization") in metrics
    assert ("queue", "ApproximateBacklogSizePerInstance") in metrics
    queue_query = next(q for q in queries if q.spec.metric == "ApproximateBacklogSizePerInstance")
    assert queue_query.dimensions == [{"Name": "EndpointName", "Value": "queue"}]


def test_endpoints_not_judged_are_not_queried() -> None:
    gone = endpoint("gone", not_judged_reason="endpoint config was deleted")
    assert plan_queries([gone], CATALOG) == []
