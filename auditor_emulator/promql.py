"""CloudWatch's Prometheus-compatible query API (QueryMetrics) for the emulator (moto has none).

Served on the emulator's own port, beside moto, at the paths AWS serves it (`/api/v1/query_range`,
`/api/v1/query`; GET or a form-encoded POST). As CloudWatch does, it refuses (HTTP 403) a request not
signed with Signature Version 4 for the service `monitoring`; with the emulator's static keys
(`testing`) the signature itself is checked. It answers with the Prometheus JSON envelope, at most
500 series (then truncated, with a warning) and no range over 7 days (HTTP 422).

It holds the OpenTelemetry series the fleet publishes (`publish`, checked against
`auditor_emulator.published.OTEL`) per account and region, and evaluates the PromQL it is sent when
it is of the forms the audit uses: a selector in `last_over_time(...[<n>h])`, `count by (...)` of
it, `0 * <that>`, and `<a> or <b>` of them. Anything else is a `bad_data` error, never a guess.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import botocore.auth
import botocore.awsrequest
import botocore.credentials

from auditor_emulator.published import check_otel_series

MAX_SERIES = 500
MAX_RANGE_SECONDS = 7 * 86400
STATIC_KEYS = {"testing": "testing"}  # access key -> secret the emulator hands out (Emulator.env)


@dataclass(frozen=True)
class OtelSeries:
    metric: str
    labels: tuple[tuple[str, str], ...]
    samples: tuple[tuple[float, float], ...]  # (epoch seconds, value), ascending


_SERIES: dict[tuple[str, str], list[OtelSeries]] = {}
_LOCK = threading.Lock()
_DENIED: set[str] = set()  # access keys refused (as an identity without the IAM actions would be)
_THROTTLED: list[int] = [0]  # the next this many queries are answered 429 (over the account's concurrency)


def publish(account_id: str, region: str, series: Iterable[OtelSeries]) -> None:
    items = list(series)
    for item in items:
        check_otel_series(item.metric, dict(item.labels))
    with _LOCK:
        _SERIES.setdefault((account_id, region), []).extend(items)


def reset() -> None:
    with _LOCK:
        _SERIES.clear()
        _DENIED.clear()
        _THROTTLED[0] = 0


def throttle(queries: int) -> None:
    """Answer the next `queries` queries with HTTP 429, as CloudWatch does over 30 concurrent queries."""
    with _LOCK:
        _THROTTLED[0] = queries


def deny(access_key: str) -> None:
    """Refuse this access key's queries (AccessDenied), as for a role without cloudwatch:GetMetricData."""
    with _LOCK:
        _DENIED.add(access_key)


def middleware(app: Callable[..., Any], account_of: Callable[[str], str]) -> Callable[..., Any]:
    """The WSGI app answering the PromQL paths, passing every other request to moto's."""

    def serve(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        if path not in ("/api/v1/query_range", "/api/v1/query"):
            return app(environ, start_response)
        status, body = _handle(environ, path, account_of)
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    return serve


_REASONS = {200: "200 OK", 400: "400 Bad Request", 403: "403 Forbidden", 405: "405 Method Not Allowed",
            422: "422 Unprocessable Entity", 429: "429 Too Many Requests"}


def _handle(environ: dict[str, Any], path: str, account_of: Callable[[str], str]) -> tuple[str, bytes]:
    method = environ.get("REQUEST_METHOD", "GET")
    length = int(environ.get("CONTENT_LENGTH") or 0)
    raw = environ["wsgi.input"].read(length) if length else b""
    query_string = environ.get("QUERY_STRING", "")
    if method not in ("GET", "POST"):
        return _error(405, "bad_data", f"{method} is not allowed")
    access_key, refusal = _check_signature(environ, method, path, query_string, raw)
    if refusal:
        return _reply(403, {"message": refusal})
    with _LOCK:
        denied = access_key in _DENIED
        throttled, _THROTTLED[0] = _THROTTLED[0] > 0, max(0, _THROTTLED[0] - 1)
    if throttled:
        return _reply(429, {"status": "error", "errorType": "too_many_requests",
                            "error": "ThrottlingException: too many concurrent queries"})
    if denied:
        return _reply(403, {"message": "User is not authorized to perform: cloudwatch:GetMetricData"})
    form = urllib.parse.parse_qs(raw.decode() if method == "POST" else query_string)
    region = _scope(environ)[1]
    try:
        query = form["query"][0]
        if path == "/api/v1/query_range":
            start, end = _time(form["start"][0]), _time(form["end"][0])
            step = _duration(form["step"][0])
        else:
            start = end = _time(form["time"][0]) if "time" in form else datetime.now().timestamp()
            step = 1.0
    except (KeyError, ValueError) as exc:
        return _error(400, "bad_data", f"invalid parameter: {exc}")
    if end < start or step <= 0:
        return _error(400, "bad_data", "end before start, or a step that is not positive")
    expression = _parse(query)
    if expression is None:
        return _error(400, "bad_data", "the emulator evaluates only selectors in last_over_time, count by, "
                                       "0 * and or (the forms the audit sends)")
    if end - start + expression.lookback > MAX_RANGE_SECONDS:
        return _error(422, "execution", "the query spans more than the maximum range of 7 days")
    with _LOCK:
        stored = list(_SERIES.get((account_of(access_key), region), []))
    steps = [start + i * step for i in range(int((end - start) // step) + 1)]
    result = expression.evaluate(stored, steps)
    rows = sorted(result.items())
    warnings = []
    if len(rows) > MAX_SERIES:
        rows = rows[:MAX_SERIES]
        warnings.append(f"result truncated to the maximum of {MAX_SERIES} series; refine the query or use the "
                        "limit parameter")
    if path == "/api/v1/query":
        data = {"resultType": "vector", "result": [
            {"metric": dict(labels), "value": [values[-1][0], _number(values[-1][1])]}
            for labels, values in rows if values]}
    else:
        data = {"resultType": "matrix", "result": [
            {"metric": dict(labels), "values": [[t, _number(v)] for t, v in values]} for labels, values in rows]}
    document: dict[str, Any] = {"status": "success", "data": data}
    if warnings:
        document["warnings"] = warnings
    return _reply(200, document)


def _number(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


def _reply(status: int, document: dict[str, Any]) -> tuple[str, bytes]:
    return _REASONS[status], json.dumps(document).encode()


def _error(status: int, kind: str, message: str) -> tuple[str, bytes]:
    return _reply(status, {"status": "error", "errorType": kind, "error": message})


def _time(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def _duration(value: str) -> float:
    found = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)?", value.strip())
    if not found:
        raise ValueError(f"step {value!r}")
    return float(found.group(1)) * _UNITS[found.group(2) or "s"]


# ---------- Signature Version 4 ----------

_AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                   r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$")


def _scope(environ: dict[str, Any]) -> tuple[str, str, str]:
    found = _AUTH.match(environ.get("HTTP_AUTHORIZATION", ""))
    return (found.group(1), found.group(3), found.group(4)) if found else ("", "", "")


def _check_signature(environ: dict[str, Any], method: str, path: str, query_string: str,
                     body: bytes) -> tuple[str, str | None]:
    """(access key, None) for a request signed for `monitoring`; else the refusal CloudWatch gives."""
    found = _AUTH.match(environ.get("HTTP_AUTHORIZATION", ""))
    if not found:
        return "", "Missing Authentication Token: requests must be signed with Signature Version 4"
    access_key, _, region, service, signed_headers, signature = found.groups()
    if service != "monitoring":
        return access_key, (f"Credential should be scoped to correct service: 'monitoring', not {service!r}")
    secret = STATIC_KEYS.get(access_key)
    if secret is None:
        return access_key, None  # an assumed role's key: the scope is checked, its secret is moto's
    headers = {}
    for name in signed_headers.split(";"):
        key = "CONTENT_TYPE" if name == "content-type" else "CONTENT_LENGTH" if name == "content-length" \
            else "HTTP_" + name.upper().replace("-", "_")
        if key in environ:
            headers[name] = environ[key]
    url = f"http://{environ.get('HTTP_HOST', '')}{path}" + (f"?{query_string}" if query_string else "")
    request = botocore.awsrequest.AWSRequest(method=method, url=url, data=body, headers=headers)
    stamp = headers.get("x-amz-date", "")
    request.context["timestamp"] = stamp
    token = headers.get("x-amz-security-token")
    auth = botocore.auth.SigV4Auth(botocore.credentials.Credentials(access_key, secret, token), service, region)
    # The request holds only the headers the client signed, so SigV4Auth signs exactly those.
    expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    if expected != signature:
        return access_key, ("The request signature we calculated does not match the signature you provided")
    return access_key, None


# ---------- The PromQL it evaluates ----------

_STRING = r'"(?:[^"\\]|\\.)*"'
_MATCHER = re.compile(rf"\s*({_STRING})\s*(=~|!~|!=|=)\s*({_STRING})\s*")
_SELECTOR = re.compile(rf"\s*last_over_time\(\s*\{{\s*({_STRING})((?:\s*,\s*{_STRING}\s*(?:=~|!~|!=|=)\s*{_STRING})*)"
                       rf"\s*\}}\[(\d+)h\]\s*\)\s*")
_COUNT = re.compile(rf"\s*count by \(((?:\s*{_STRING}\s*,?)+)\)\s*\((.*)\)\s*", re.S)
_ZERO = re.compile(r"\s*\(\s*0 \* (.*)\)\s*", re.S)

Labels = tuple[tuple[str, str], ...]
Result = dict[Labels, list[tuple[float, float]]]


@dataclass(frozen=True)
class _Selector:
    metric: str
    matchers: tuple[tuple[str, str, str], ...]
    window: float

    def matches(self, series: OtelSeries) -> bool:
        if series.metric != self.metric:
            return False
        labels = dict(series.labels)
        for name, op, value in self.matchers:
            have = labels.get(name, "")
            if (op == "=" and have != value) or (op == "!=" and have == value):
                return False
            if op in ("=~", "!~") and bool(re.fullmatch(value, have)) != (op == "=~"):
                return False
        return True


@dataclass(frozen=True)
class _Expression:
    selector: _Selector
    by: tuple[str, ...] | None  # count by these labels; None: the series themselves
    zero: bool  # 0 * ...
    other: _Expression | None = None  # ... or other

    @property
    def lookback(self) -> float:
        return max(self.selector.window, self.other.lookback if self.other else 0.0)

    def evaluate(self, stored: list[OtelSeries], steps: list[float]) -> Result:
        found: dict[Labels, dict[float, float]] = {}
        for series in stored:
            if not self.selector.matches(series):
                continue
            labels = dict(series.labels)
            key: Labels = (tuple((name, labels.get(name, "")) for name in self.by) if self.by is not None
                           else tuple(sorted({**labels, "__name__": series.metric}.items())))
            points = found.setdefault(key, {})
            for t in steps:
                inside = [v for s, v in series.samples if t - self.selector.window < s <= t]
                if inside:  # count by: one more series at t; else the series' last value
                    points[t] = points.get(t, 0.0) + 1.0 if self.by is not None else inside[-1]
        result: Result = {k: sorted((t, 0.0 if self.zero else v) for t, v in points.items())
                          for k, points in found.items() if points}
        if self.other is not None:
            for key, others in self.other.evaluate(stored, steps).items():
                mine = dict(result.get(key, []))
                for t, v in others:
                    mine.setdefault(t, v)  # `or`: the left side's sample where it has one
                result[key] = sorted(mine.items())
        return result


def _parse(query: str) -> _Expression | None:
    head, _, tail = _split_or(query)
    first = _parse_one(head)
    if first is None:
        return None
    if not tail:
        return first
    rest = _parse(tail)
    return None if rest is None else _Expression(first.selector, first.by, first.zero, rest)


def _split_or(query: str) -> tuple[str, str, str]:
    """`a or b` at the top level (outside parentheses and strings)."""
    depth, quoted, i = 0, False, 0
    while i < len(query):
        char = query[i]
        if quoted:
            if char == "\\":
                i += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif depth == 0 and query.startswith(" or ", i):
            return query[:i], " or ", query[i + 4:]
        i += 1
    return query, "", ""


def _parse_one(text: str) -> _Expression | None:
    zero = False
    found = _ZERO.fullmatch(text)
    if found:
        zero, text = True, found.group(1)
    by = None
    found = _COUNT.fullmatch(text)
    if found:
        by = tuple(json.loads(s) for s in re.findall(_STRING, found.group(1)))
        text = found.group(2)
    found = _SELECTOR.fullmatch(text)
    if not found:
        return None
    matchers = tuple((json.loads(m.group(1)), m.group(2), json.loads(m.group(3)))
                     for m in _MATCHER.finditer(found.group(2).lstrip(" ,")))
    return _Expression(_Selector(json.loads(found.group(1)), matchers, float(found.group(3)) * 3600), by, zero)


def instance_series(endpoint: str, variant: str, instance_type: str, host: str, gpus: Iterable[str | None],
                    stamps: Iterable[float], availability_zone: str = "us-east-1a") -> list[OtelSeries]:
    """What detailed observability publishes for one instance that the audit reads: its node
    exporter memory total, and each GPU's utilisation (`gpus`: the inference component using each
    GPU, None for a GPU no copy uses; GPUs with the same labels are one series)."""
    times = tuple(stamps)
    base = {"aws.sagemaker.endpoint.name": endpoint, "aws.sagemaker.variant.name": variant,
            "@resource.host.id": host, "@resource.host.type": instance_type,
            "@resource.cloud.availability_zone": availability_zone}
    series = [OtelSeries("node_memory_MemTotal_bytes", tuple(sorted(base.items())),
                         tuple((t, 192.0 * 2**30) for t in times))]
    seen = set()
    for component in gpus:
        labels = {**base, "aws.sagemaker.inference_component.name": component} if component else base
        key = tuple(sorted(labels.items()))
        if key in seen:
            continue
        seen.add(key)
        series.append(OtelSeries("DCGM_FI_DEV_GPU_UTIL", key, tuple((t, 40.0 if component else 0.0) for t in times)))
    return series
