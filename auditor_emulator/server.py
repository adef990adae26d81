"""A local AWS (moto server on a loopback port) for the demo, the tests and the benchmark.

boto3 reaches it through the standard AWS_ENDPOINT_URL, exactly as it reaches AWS. Three things are
changed inside the emulator process, not in the auditor:

- moto's GetMetricData rescans every stored datapoint for every query and period, which takes
  minutes on a 14-day fleet; it is replaced by one that indexes the data per series.
- moto's ListMetrics lists a multi-dimension series once per datapoint, deduplicating in quadratic
  time; it is replaced by one that lists each indexed series once, as CloudWatch does.
- moto enforces none of CloudWatch's GetMetricData limits; the replacement enforces the 500-query
  cap and returns at most 100,800 datapoints per call with a NextToken, as CloudWatch does, so the
  collector's batching and pagination are exercised for real.
- moto has no PromQL API (CloudWatch's QueryMetrics): auditor_emulator.promql answers it on the
  same port, for the OpenTelemetry series the fleet publishes (detailed observability).
- moto has no inference components: auditor_emulator.components adds them (Create, Describe, List,
  UpdateInferenceComponentRuntimeConfig, Delete, with SageMaker's checks; `Emulator.inference_components`
  says how long they take and which fail), and auditor_emulator.hosting the component-style endpoint
  configs they need (no model; managed instance scaling, routing) and the network settings of models
  and configs (VpcConfig, EnableNetworkIsolation, ExecutionRoleArn) moto dropped.
- moto has no UpdateEndpoint: auditor_emulator.updates adds it (Updating, then InService on the new
  config, or rolled back), so that `audit apply` runs against the emulator; it also makes
  UpdateEndpointWeightsAndCapacities a deployment (Updating, then InService with the new counts).
- auditor_emulator.writes makes the writes apply's guards and undo depend on behave as AWS's:
  CreateEndpointConfig refuses an existing name, DeregisterScalableTarget deletes the target's
  policies and scheduled actions, scaling policies need a registered target, keep their ARN when
  put again and list the alarms whose actions name them.
- auditor_emulator.faults lets a test arm a fault on any call (throttle, a 500 before or after the
  change, a hang, AccessDenied) and lists the calls made: `Emulator.faults`.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import json
import logging
import os
import socket
import threading
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from auditor.errors import EmulatorUnavailable
from auditor_emulator.faults import FAULTS

ACCOUNT_ID = "123456789012"
MAX_QUERIES = 500
MAX_DATAPOINTS = 100_800

try:  # moto is the `demo` extra
    from moto.backends import get_backend
    from moto.cloudwatch.exceptions import ValidationError
    from moto.cloudwatch.models import CloudWatchBackend, Statistics
    from moto.cloudwatch.responses import CloudWatchResponse
    from moto.core.responses import ActionResult
    from moto.server import ThreadedMotoServer
except ImportError:  # pragma: no cover - exercised only without the extra
    ThreadedMotoServer = None  # type: ignore[assignment,misc]


class _SeriesIndex:
    """Datapoints per (namespace, metric, dimensions), sorted by time; built incrementally
    because moto's store is append-only."""

    def __init__(self) -> None:
        self.source: list[Any] | None = None
        self.seen = 0
        self.series: dict[tuple, tuple[list[datetime], list[Any]]] = {}
        self.lock = threading.Lock()

    def refresh(self, data: list[Any]) -> None:
        with self.lock:
            if data is not self.source or len(data) < self.seen:  # a new or reset store
                self.source, self.seen, self.series = data, 0, {}
            touched = set()
            for datum in data[self.seen :]:
                key = (datum.namespace, datum.name, frozenset((d.name, d.value) for d in datum.dimensions))
                stamps, items = self.series.setdefault(key, ([], []))
                stamps.append(datum.timestamp)
                items.append(datum)
                touched.add(key)
            self.seen = len(data)
            for key in touched:
                stamps, items = self.series[key]
                order = sorted(range(len(stamps)), key=stamps.__getitem__)
                self.series[key] = ([stamps[i] for i in order], [items[i] for i in order])


_INDEXES: dict[int, _SeriesIndex] = {}
_INDEXES_LOCK = threading.Lock()


def _index_for(backend: Any) -> _SeriesIndex:
    with _INDEXES_LOCK:
        index = _INDEXES.setdefault(id(backend), _SeriesIndex())
    index.refresh(backend.metric_data)
    return index


def _indexed_get_metric_data(
    self: Any, queries: list[dict[str, Any]], start_time: datetime, end_time: datetime,
    scan_by: str = "TimestampAscending",
) -> list[dict[str, Any]]:
    start_time = start_time.replace(microsecond=0)
    end_time = end_time.replace(microsecond=0)
    if start_time >= end_time:
        raise ValidationError("The parameter EndTime must be greater than StartTime.")
    if any("MetricStat" not in q for q in queries):
        return _ORIGINAL_GET_METRIC_DATA(self, queries, start_time, end_time, scan_by)  # type: ignore[misc]
    index = _index_for(self)
    results = []
    for query in queries:
        stat_spec = query["MetricStat"]
        metric = stat_spec["Metric"]
        key = (
            metric["Namespace"],
            metric["MetricName"],
            frozenset((d["Name"], d["Value"]) for d in metric.get("Dimensions", [])),
        )
        period = timedelta(seconds=int(stat_spec["Period"]))
        stat = stat_spec["Stat"]
        stamps, items = index.series.get(key, ([], []))
        lo, hi = bisect.bisect_left(stamps, start_time), bisect.bisect_left(stamps, end_time)
        buckets: dict[datetime, list[Any]] = {}
        for datum in items[lo:hi]:
            bucket = start_time + ((datum.timestamp - start_time) // period) * period
            buckets.setdefault(bucket, []).append(datum)
        timestamps = sorted(buckets, reverse=scan_by == "TimestampDescending")
        values = []
        for ts in timestamps:
            statistics = Statistics([stat], ts)
            statistics.metric_data = buckets[ts]
            values.append(statistics.get_statistics_for_type(stat))
        if query.get("ReturnData", True):
            results.append({
                "id": query["Id"], "label": query.get("Label") or f"{metric['MetricName']} {stat}",
                "values": values, "timestamps": timestamps, "status_code": "Complete",
            })
    return results


def _indexed_list_metrics(
    self: Any, next_token: str | None, namespace: str, metric_name: str, dimensions: list[dict[str, str]],
) -> tuple[str | None, list[Any]]:
    """moto lists a multi-dimension series once per datapoint and deduplicates in quadratic time
    (minutes for a few enhanced-metrics endpoints): list each indexed series once, as CloudWatch does."""
    if next_token:
        return _ORIGINAL_LIST_METRICS(self, next_token, namespace, metric_name, dimensions)  # type: ignore[misc]
    index = _index_for(self)
    wanted = [(d["Name"], d.get("Value")) for d in dimensions or []]
    found = []
    for (ns, name, dims), (_, items) in index.series.items():
        if (namespace and ns != namespace) or (metric_name and name != metric_name) or not items:
            continue
        named = dict(dims)
        if all(n in named and (v is None or named[n] == v) for n, v in wanted):
            found.append(items[0])
    found += [m for m in self.aws_metric_data if m.filter(namespace=namespace, name=metric_name, dimensions=dimensions)]
    return self._get_paginated(found)


def _paginated_get_metric_data_response(self: Any) -> Any:
    """CloudWatch's per-call limits: 500 queries, 100,800 datapoints, then NextToken."""
    params = self._get_params()
    queries = params.get("MetricDataQueries", [])
    if len(queries) > MAX_QUERIES:
        raise ValidationError(
            f"The collection MetricDataQueries must not have a size greater than {MAX_QUERIES}."
        )
    for query in queries:
        if "MetricStat" not in query and "Expression" not in query:
            raise ValidationError("The parameter MetricDataQueries.member.1.MetricStat is required.\n")
    results = self.cloudwatch_backend.get_metric_data(
        start_time=params["StartTime"], end_time=params["EndTime"], queries=queries,
        scan_by=params.get("ScanBy") or "TimestampDescending",
    )
    token = params.get("NextToken")
    skip = json.loads(base64.b64decode(token))["offset"] if token else 0
    budget = MAX_DATAPOINTS
    page: list[dict[str, Any]] = []
    position = 0  # datapoints before the current result, over all results
    for result in results:
        count = len(result["values"])
        begin, position = position, position + count
        if count == 0:
            if skip == 0:
                page.append(result)
            continue
        if position <= skip or budget == 0:
            continue  # sent on an earlier page, or left for the next one
        first = max(0, skip - begin)
        take = min(count - first, budget)
        budget -= take
        page.append({
            **result,
            "values": result["values"][first : first + take],
            "timestamps": result["timestamps"][first : first + take],
            "status_code": "Complete" if first + take == count else "PartialData",
        })
    consumed = skip + MAX_DATAPOINTS - budget
    response: dict[str, Any] = {"MetricDataResults": page}
    if consumed < position:
        response["NextToken"] = base64.b64encode(json.dumps({"offset": consumed}).encode()).decode()
    return ActionResult(response)


_ORIGINAL_GET_METRIC_DATA = None
_ORIGINAL_LIST_METRICS = None
_PATCH_LOCK = threading.Lock()


def install_cloudwatch_limits() -> None:
    global _ORIGINAL_GET_METRIC_DATA, _ORIGINAL_LIST_METRICS
    with _PATCH_LOCK:
        if _ORIGINAL_LIST_METRICS is None:
            _ORIGINAL_LIST_METRICS = CloudWatchBackend.list_metrics
            CloudWatchBackend.list_metrics = _indexed_list_metrics  # type: ignore[method-assign]
        if _ORIGINAL_GET_METRIC_DATA is None:
            _ORIGINAL_GET_METRIC_DATA = CloudWatchBackend.get_metric_data
            CloudWatchBackend.get_metric_data = _indexed_get_metric_data  # type: ignore[method-assign]
            CloudWatchResponse.get_metric_data = _paginated_get_metric_data_response  # type: ignore[method-assign]


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Emulator:
    """A running moto server on 127.0.0.1; `environment()` points boto3 at it. `Emulator.faults` arms
    faults on its calls and lists the calls made (auditor_emulator.faults)."""

    faults = FAULTS

    def __init__(self, port: int = 0) -> None:
        """On `port` of 127.0.0.1 (0: a free one)."""
        if ThreadedMotoServer is None:
            raise EmulatorUnavailable(
                # sagemaker-auditor is not on PyPI: the extra comes from the checkout (or the built wheel)
                "the local AWS emulator is not installed: install the demo extra from the checkout "
                "(pip install '.[demo]')"
            )
        install_cloudwatch_limits()
        from auditor_emulator.apply_calls import install_apply_calls
        from auditor_emulator.updates import install_update_endpoint

        install_update_endpoint()
        from auditor_emulator.components import install_inference_components
        from auditor_emulator.faults import install_faults
        from auditor_emulator.hosting import install_hosting
        from auditor_emulator.writes import install_writes

        install_hosting()
        install_inference_components()
        install_apply_calls()
        install_writes()
        install_faults()
        self.port = port or _free_loopback_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self) -> Emulator:
        # The emulator's HTTP server logs every request; the demo and the tests need none of it.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server.start()
        # CloudWatch's PromQL API (moto has none) on the same port, beside moto's own answers.
        from moto.iam.models import get_account_id_from

        from auditor_emulator import promql

        wsgi = self._server._server
        wsgi.app = promql.middleware(wsgi.app, get_account_id_from)  # type: ignore[union-attr]
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def env(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_SESSION_TOKEN": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    @contextlib.contextmanager
    def environment(self) -> Iterator[None]:
        saved = {k: os.environ.get(k) for k in (*self.env(), "AWS_PROFILE")}
        os.environ.pop("AWS_PROFILE", None)
        os.environ.update(self.env())
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def reset(self) -> None:
        """Forget every resource and datapoint (between tests)."""
        import urllib.request

        urllib.request.urlopen(urllib.request.Request(f"{self.url}/moto-api/reset", method="POST")).read()
        from auditor_emulator import components, promql

        promql.reset()
        components.reset()
        self.deployments(create_seconds=0.0)
        FAULTS.reset()

    @staticmethod
    @contextlib.contextmanager
    def iam_enforced() -> Iterator[None]:
        """Check every request against the emulator's IAM users and policies, as AWS does."""
        from moto.core.authorization import enable_iam_authentication

        with enable_iam_authentication():
            yield

    @staticmethod
    def deployments(seconds: float | None = None, fail_instance_types: tuple[str, ...] | None = None,
                    create_seconds: float | None = None) -> None:
        """How UpdateEndpoint deployments go here: how long they take, which instance types fail
        (the deployment rolls back; see auditor_emulator.updates); how long CreateEndpoint leaves a
        new endpoint Creating (0, the default: InService at once; a failing type then ends Failed)."""
        from auditor_emulator.updates import set_update_behaviour

        set_update_behaviour(seconds, fail_instance_types, create_seconds)

    @staticmethod
    def inference_components(seconds: float | None = None, hold: Iterable[str] | None = None,
                             fail: Mapping[str, str] | None = None) -> None:
        """How inference components go here: how long they are Creating / Updating / Deleting, which
        stay Creating (`hold`; an empty set releases them), which turn Failed and with what
        FailureReason (`fail`, by name). `reset()` restores the defaults (InService at once, none
        held, none failing); see auditor_emulator.components."""
        from auditor_emulator.components import set_component_behaviour

        set_component_behaviour(seconds, hold, fail)

    @staticmethod
    def backend(service: str, region: str, account_id: str = ACCOUNT_ID) -> Any:
        """The emulator's in-process state, for what its API cannot set (creation times, status)."""
        return get_backend(service)[account_id][region]  # type: ignore[call-overload]

    @staticmethod
    def publish_metrics(namespace: str, datums: list[dict[str, Any]], region: str,
                        account_id: str = ACCOUNT_ID) -> None:
        """PutMetricData's datums (boto3's request shape) stored as the API stores them, without the
        HTTP round trip: seeding a fleet's 14 days through the API took most of a demo's time. The
        timestamps are kept naive UTC, as moto keeps what the API receives."""
        Emulator.backend("cloudwatch", region, account_id).put_metric_data(
            namespace, [{**d, "Timestamp": _naive_utc(d["Timestamp"])} for d in datums])


def _naive_utc(stamp: datetime) -> datetime:
    return stamp if stamp.tzinfo is None else stamp.astimezone(UTC).replace(tzinfo=None)
