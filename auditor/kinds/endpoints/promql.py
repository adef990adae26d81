"""CloudWatch's Prometheus-compatible query API (QueryMetrics), for what SageMaker publishes only as
OpenTelemetry metrics: which instances of an endpoint host an inference-component copy.

The API is plain HTTP, not a botocore operation: `POST https://monitoring.<region>.amazonaws.com
/api/v1/query_range` with a form-encoded body, signed with Signature Version 4 for the service
`monitoring`, answered with the Prometheus JSON envelope. It needs `cloudwatch:GetMetricData` and
`cloudwatch:ListMetrics` (the CloudWatch user guide's "IAM permissions for PromQL").

It goes out the way boto3's CloudWatch calls go: to the CloudWatch client's endpoint URL (so
AWS_ENDPOINT_URL reaches the emulator exactly as it does for GetMetricData), over that client's HTTP
session (its timeouts, proxies, TLS), signed with the run's credentials (an assumed role's refresh
themselves), counted with the run's calls, retried like them (throttled, 5xx, dropped connection;
at most `max_attempts` attempts with backoff and jitter), and an endpoint that never answers is not
asked again in the run (`UnansweredEndpoints`).

Placement query (one per region, or one per group of endpoints when their instances could exceed the
500 series an answer holds): a range query over the last `PLACEMENT_HOURS` hours at one sample an
hour. Per endpoint and instance (`@resource.host.id`) it gives, at each hour, how many GPU series
(DCGM_FI_DEV_GPU_UTIL) of that instance were attributed to an inference component, or 0 where the
instance ran (its node_memory_MemTotal_bytes series) with none attributed. A range, not an instant
query: one instant cannot tell an instance that stays empty from one caught between a scale-out and
the copy placed on it; hourly samples over a day can, and 25 hours (the range plus one hour's
lookback) stay well inside the API's 7-day range and 24-hour scan limits.
"""

from __future__ import annotations

import json
import random
import re
import time
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import botocore.auth
import botocore.awsrequest
import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import AwsClients
from auditor.kinds.endpoints.models import ComponentPlacement
from auditor.models import AuditError
from auditor.text import one_line_words

QUERY_RANGE_PATH = "/api/v1/query_range"
SIGNING_SERVICE = "monitoring"
OPERATION = "QueryMetrics"
MAX_SERIES = 500  # series one answer holds (more: truncated, with a warning)
# Instances budgeted per query: half the cap, as instances replaced during the window are series too.
HOSTS_PER_QUERY = MAX_SERIES // 2
PLACEMENT_HOURS = 24
STEP_SECONDS = 3600

ENDPOINT_LABEL = "aws.sagemaker.endpoint.name"
HOST_LABEL = "@resource.host.id"
COMPONENT_LABEL = "aws.sagemaker.inference_component.name"
GPU_METRIC = "DCGM_FI_DEV_GPU_UTIL"  # per GPU; attributed to the inference component using it
HOST_METRIC = "node_memory_MemTotal_bytes"  # one series per running instance (node exporter)

_RETRIED_STATUS = frozenset({429, 500, 502, 503, 504})
# Failures of the connection (retried); after the last attempt, the first three mean the endpoint
# does not answer (as UnansweredEndpoints counts them for botocore's calls).
_NOT_ANSWERING = (botocore.exceptions.ReadTimeoutError, botocore.exceptions.EndpointConnectionError,
                  botocore.exceptions.ConnectTimeoutError)
_CONNECTION = (botocore.exceptions.HTTPClientError, botocore.exceptions.ConnectionError)


class PromQLError(Exception):
    """A query that failed on every attempt, in one line naming the API and the region."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class RangeSeries:
    labels: dict[str, str]
    samples: tuple[tuple[float, float], ...]  # (epoch seconds, value)


@dataclass(frozen=True)
class RangeAnswer:
    series: tuple[RangeSeries, ...]
    warnings: tuple[str, ...]

    @property
    def truncated(self) -> bool:
        return bool(self.warnings) and len(self.series) >= MAX_SERIES


class PromQLClient:
    """QueryMetrics in one region, through the run's clients (see the module's docstring)."""

    def __init__(self, clients: AwsClients, region: str, between_calls: Callable[[], None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._clients = clients
        self._region = region
        self._cloudwatch: BaseClient = clients.client("cloudwatch", region)
        self._between_calls = between_calls
        self._sleep = sleep

    @property
    def url(self) -> str:
        return self._cloudwatch.meta.endpoint_url.rstrip("/") + QUERY_RANGE_PATH

    def query_range(self, query: str, start: datetime, end: datetime, step_seconds: int) -> RangeAnswer:
        body = urllib.parse.urlencode({"query": query, "start": f"{start.timestamp():.0f}",
                                       "end": f"{end.timestamp():.0f}", "step": f"{step_seconds}s"})
        status, payload = self._send(body)
        return _parse(payload, status, self._region)

    def _send(self, body: str) -> tuple[int, bytes]:
        endpoint = self._cloudwatch.meta.endpoint_url
        unanswered = self._clients.unanswered
        call = f"cloudwatch:{OPERATION} in {self._region}"
        first = unanswered.first_failure(self._region, endpoint)
        if first is not None:
            raise PromQLError(f"cannot reach cloudwatch in {self._region}: {endpoint} did not answer {first} "
                              "on any attempt earlier in this run: not asked again")
        attempts = self._clients.max_attempts
        failure = ""
        for attempt in range(1, attempts + 1):
            if self._between_calls is not None:
                self._between_calls()
            self._clients.counter.on_request(f"before-send.cloudwatch.{OPERATION}")
            try:
                status, payload = self._attempt(body)
            except _CONNECTION as exc:
                self._clients.counter.record_problem("connection_errors")
                failure = str(exc)
                if attempt == attempts:
                    if isinstance(exc, _NOT_ANSWERING):
                        unanswered.record(self._region, endpoint, "cloudwatch", call)
                    raise PromQLError(f"cannot reach cloudwatch in {self._region}: {call} failed on every "
                                      f"attempt ({attempts}): {failure}") from None
            else:
                if status == 429 or _throttled(payload):
                    self._clients.counter.record_problem("throttled")
                elif status >= 500:
                    self._clients.counter.record_problem("server_errors")
                if status not in _RETRIED_STATUS or attempt == attempts:
                    return status, payload
            # Full jitter, as botocore's retries: up to 0.5 s, 1 s, 2 s ... (at most 20 s).
            self._sleep(random.uniform(0, min(20.0, 0.5 * 2 ** (attempt - 1))))
        raise AssertionError("unreachable")  # the loop returns or raises on its last attempt

    def _attempt(self, body: str) -> tuple[int, bytes]:
        credentials = self._clients.credentials()
        if credentials is None:
            raise PromQLError("no AWS credentials found: set aws.profile, AWS_PROFILE or AWS_ACCESS_KEY_ID")
        request = botocore.awsrequest.AWSRequest(
            method="POST", url=self.url, data=body.encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"})
        botocore.auth.SigV4Auth(credentials.get_frozen_credentials(), SIGNING_SERVICE, self._region).add_auth(request)
        # The CloudWatch client's own HTTP session: its connect and read timeouts, proxies and TLS settings.
        response = self._cloudwatch._endpoint.http_session.send(request.prepare())
        return int(response.status_code), bytes(response.content or b"")


def _throttled(payload: bytes) -> bool:
    return b"Throttl" in payload[:2000] or b"TooManyRequests" in payload[:2000]


def _parse(payload: bytes, status: int, region: str) -> RangeAnswer:
    call = f"cloudwatch:{OPERATION} in {region}"
    document: Any = None
    try:
        document = json.loads(payload) if payload else None
    except ValueError:
        document = None
    if status == 403:
        detail = _error_text(document, payload)
        raise PromQLError(f"access denied: {call} (HTTP 403{': ' + detail if detail else ''}; the query needs "
                          "cloudwatch:GetMetricData and cloudwatch:ListMetrics)")
    if status != 200 or not isinstance(document, dict) or document.get("status") != "success":
        detail = _error_text(document, payload)
        raise PromQLError(f"{call} failed: HTTP {status}{': ' + detail if detail else ''}")
    data = document.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise PromQLError(f"{call} failed: the answer is not a range (matrix) result")
    series = []
    for item in data["result"]:
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
            raise PromQLError(f"{call} failed: a result series without labels")
        samples = []
        for pair in item.get("values") or []:
            try:
                samples.append((float(pair[0]), float(pair[1])))
            except (TypeError, ValueError, IndexError):
                raise PromQLError(f"{call} failed: a sample that is not [time, value]") from None
        series.append(RangeSeries({str(k): str(v) for k, v in item["metric"].items()}, tuple(samples)))
    warnings = document.get("warnings") or []
    return RangeAnswer(tuple(series), tuple(str(w) for w in warnings if isinstance(w, str)))


def _error_text(document: Any, payload: bytes) -> str:
    """The answer's own reason, short and on one line (it is shown in the report)."""
    text = ""
    if isinstance(document, dict):
        text = str(document.get("error") or document.get("message") or document.get("Message") or "")
        kind = document.get("errorType")
        text = f"{kind}: {text}" if kind and text else text or str(kind or "")
    elif payload:
        text = payload[:300].decode("utf-8", "replace")
    return one_line_words(text)[:200]


# ---------- The placement query ----------

def _string(value: str) -> str:
    """A PromQL string literal (label names and values are quoted: they carry dots and @)."""
    return json.dumps(value)


def _names_regex(names: Iterable[str]) -> str:
    # RE2 alternation of literal names; SageMaker's names are [A-Za-z0-9-], escaped anyway.
    return "|".join(re.escape(n) for n in sorted(names))


def placement_query(endpoints: Iterable[str]) -> str:
    """Per endpoint and instance, each hour: the instance's GPU series attributed to a component
    (at least 1), or 0 where it ran with none attributed (an instance with no copy)."""
    names = _string(_names_regex(endpoints))
    by = f"count by ({_string(ENDPOINT_LABEL)}, {_string(HOST_LABEL)})"
    gpus = (f"{{{_string(GPU_METRIC)}, {_string(ENDPOINT_LABEL)}=~{names}, "
            f"{_string(COMPONENT_LABEL)}!=\"\"}}")
    hosts = f"{{{_string(HOST_METRIC)}, {_string(ENDPOINT_LABEL)}=~{names}}}"
    return (f"{by} (last_over_time({gpus}[1h])) "
            f"or (0 * {by} (last_over_time({hosts}[1h])))")


@dataclass(frozen=True)
class PlacementResult:
    placements: dict[str, ComponentPlacement]  # endpoint -> its instances, hour by hour
    errors: tuple[AuditError, ...] = ()
    calls: int = 0


def placement_groups(hosts_by_endpoint: dict[str, int], budget: int = HOSTS_PER_QUERY) -> list[list[str]]:
    """Endpoints packed into as few queries as the 500-series answer allows (their instances, at
    most `budget` a query; an endpoint larger than that is a query of its own)."""
    groups: list[list[str]] = []
    used = budget + 1
    for name in sorted(hosts_by_endpoint):
        hosts = max(1, hosts_by_endpoint[name])
        if used + hosts > budget:
            groups.append([])
            used = 0
        groups[-1].append(name)
        used += hosts
    return groups


def collect_placement(client: PromQLClient, region: str, hosts_by_endpoint: dict[str, int],
                      end: datetime) -> PlacementResult:
    """Placement over the `PLACEMENT_HOURS` hours up to `end` (an hour boundary) for these endpoints
    (their expected instance counts), in as few queries as the answer size allows. A failed query is
    one error line; its endpoints get no placement (and are not judged by component-empty-instances)."""
    if not hosts_by_endpoint:
        return PlacementResult({})
    start = end - timedelta(hours=PLACEMENT_HOURS - 1)
    hours = tuple(start + timedelta(hours=i) for i in range(PLACEMENT_HOURS))
    placements: dict[str, ComponentPlacement] = {}
    errors: list[AuditError] = []
    calls = 0
    pending = placement_groups(hosts_by_endpoint)
    while pending:
        group = pending.pop(0)
        calls += 1
        try:
            answer = client.query_range(placement_query(group), start, end, STEP_SECONDS)
        except PromQLError as exc:
            errors.append(AuditError(region, group[0] if len(group) == 1 else None, "collect",
                                     f"{exc.message}: placement of {_named(group)} not read, "
                                     "component-empty-instances not judged there"))
            continue
        if answer.truncated:
            if len(group) > 1:  # more instances than budgeted: ask again in halves
                half = len(group) // 2
                pending[:0] = [group[:half], group[half:]]
                continue
            errors.append(AuditError(region, group[0], "collect",
                                     f"cloudwatch:{OPERATION} in {region}: more than {MAX_SERIES} instance series "
                                     f"for {group[0]} (answer truncated): placement not used"))
            continue
        placements.update(_placements(answer.series, group, hours))
    return PlacementResult(placements, tuple(errors), calls)


def _named(group: Sequence[str]) -> str:
    return ", ".join(group[:5]) + (f" and {len(group) - 5} more" if len(group) > 5 else "")


def _placements(series: Iterable[RangeSeries], group: Sequence[str],
                hours: tuple[datetime, ...]) -> dict[str, ComponentPlacement]:
    at = {int(h.timestamp()): i for i, h in enumerate(hours)}
    hosts: dict[str, dict[str, list[float | None]]] = {}
    for item in series:
        endpoint, host = item.labels.get(ENDPOINT_LABEL), item.labels.get(HOST_LABEL)
        if endpoint is None or endpoint not in group or not host:
            continue
        row = hosts.setdefault(endpoint, {}).setdefault(host, [None] * len(hours))
        for stamp, value in item.samples:
            slot = at.get(round(stamp))
            if slot is not None and value == value:  # NaN: no sample
                row[slot] = value
    return {endpoint: ComponentPlacement(hours, {h: tuple(v) for h, v in sorted(by_host.items())})
            for endpoint, by_host in hosts.items()}
