"""A synthetic AWS for the scale benchmark: it computes its answers instead of storing them.

The moto emulator keeps every datapoint it is given, and seeding 10,000 endpoints' fortnight of
metrics takes longer than a CI run. This server holds nothing but a formula: an endpoint is a
function of its index, and a metric series a deterministic function of its query (namespace,
metric, dimensions, statistic, period) and of time, so any query for any window is answered at
once, the same every time. It answers, over HTTP on 127.0.0.1 (boto3 reaches it through
AWS_ENDPOINT_URL, as it reaches AWS):

- SageMaker (JSON 1.1): Search for endpoints (at most 100 a page, NextToken), DescribeEndpointConfig
  (one config per endpoint; one endpoint in ten real-time ones runs 2-8 instances with enhanced
  metrics, `MetricsConfig` {EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 60}),
  DescribeModel (each endpoint's own model, outside a VPC), and empty lists for the other listings;
- Application Auto Scaling (JSON 1.1): no scalable targets, no policies;
- STS (query): GetCallerIdentity, and AssumeRole into another account (whose credentials name it);
- CloudWatch ListMetrics for the enhanced endpoints' per-instance series (utilisation by InstanceId
  and, on a GPU type, by AcceleratorId in /aws/sagemaker/Endpoints; Invocations by InstanceId in
  AWS/SageMaker), 500 a page with a NextToken, empty for any other namespace;
- CloudWatch GetMetricData, in JSON 1.0 (what botocore sends today) and in Smithy RPC v2 CBOR
  (first in CloudWatch's model), with CloudWatch's caps: 500 queries a call, then 100,800
  datapoints a call and a NextToken. Any MetricStat query is answered, an `InstanceId` dimension
  included; a latency series has no datapoint in an hour without requests, as CloudWatch does.

Accounts and regions come from each request's SigV4 credential scope. Endpoint i of N lives in the
unit (account, region) i % units, as the moto bench spreads its fleet.
"""

from __future__ import annotations

import base64
import json
import math
import struct
import threading
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import botocore.parsers
import numpy as np

HOME_ACCOUNT = "123456789012"
MAX_QUERIES = 500
MAX_DATAPOINTS = 100_800
SEARCH_PAGE = 100

SHAPES = ("ml.m5.xlarge", "ml.m5.2xlarge", "ml.c5.xlarge", "ml.c5.2xlarge", "ml.r5.xlarge", "ml.g4dn.xlarge")
VCPUS = {"ml.m5.xlarge": 4, "ml.m5.2xlarge": 8, "ml.c5.xlarge": 4, "ml.c5.2xlarge": 8, "ml.r5.xlarge": 4,
         "ml.g4dn.xlarge": 4}
# Noise shared by every series, each reading it from its own offset: no generator per series.
_NOISE = np.random.default_rng(20).standard_normal(1 << 16)


def _unit_fraction(*key: object) -> float:
    """A number in [0, 1) fixed by `key`."""
    return (zlib.crc32(repr(key).encode()) & 0xFFFFFF) / float(1 << 24)


@dataclass(frozen=True)
class SyntheticEndpoint:
    index: int
    account: str
    region: str

    @property
    def name(self) -> str:
        return f"bench-{self.index:05d}"

    @property
    def kind(self) -> str:
        return {7: "async", 9: "serverless"}.get(self.index % 10, "real-time")

    @property
    def instance_type(self) -> str:
        return SHAPES[self.index % len(SHAPES)]

    @property
    def enhanced_metrics(self) -> bool:
        """One in ten real-time endpoints publishes per-instance metrics every minute."""
        return self.index % 10 == 3

    @property
    def instances(self) -> int:
        if self.enhanced_metrics:
            return 2 + (self.index // 10) % 7  # 2-8
        return 1 + int(_unit_fraction(self.index, "count") * 3)

    @property
    def invocations_per_hour(self) -> float:
        return 0.0 if self.index % 17 == 0 else 200 + 1800 * _unit_fraction(self.index, "rate")

    @property
    def business_hours_only(self) -> bool:
        return self.index % 3 == 1

    def level(self, what: str, low: float, high: float) -> float:
        return low + (high - low) * _unit_fraction(self.index, what)

    def search_record(self, created: float) -> dict[str, Any]:
        variant: dict[str, Any] = {"VariantName": "AllTraffic", "CurrentWeight": 1.0, "DesiredWeight": 1.0}
        if self.kind == "serverless":
            variant["CurrentServerlessConfig"] = {"MemorySizeInMB": 1024 * (1 + self.index % 3), "MaxConcurrency": 5}
        else:
            variant.update(CurrentInstanceCount=self.instances, DesiredInstanceCount=self.instances)
        return {"Endpoint": {
            "EndpointName": self.name,
            "EndpointArn": f"arn:aws:sagemaker:{self.region}:{self.account}:endpoint/{self.name}",
            "EndpointConfigName": f"{self.name}-config",
            "EndpointStatus": "InService",
            "CreationTime": created, "LastModifiedTime": created,
            "ProductionVariants": [variant],
            "Tags": [{"Key": "owner", "Value": f"team-{self.index % 9}@example.com"}],
        }}

    def config(self, created: float) -> dict[str, Any]:
        variant: dict[str, Any] = {"VariantName": "AllTraffic", "ModelName": f"{self.name}-model",
                                   "InitialVariantWeight": 1.0}
        if self.kind == "serverless":
            variant["ServerlessConfig"] = {"MemorySizeInMB": 1024 * (1 + self.index % 3), "MaxConcurrency": 5}
        else:
            variant.update(InstanceType=self.instance_type, InitialInstanceCount=self.instances)
        config: dict[str, Any] = {
            "EndpointConfigName": f"{self.name}-config",
            "EndpointConfigArn": f"arn:aws:sagemaker:{self.region}:{self.account}:endpoint-config/{self.name}-config",
            "ProductionVariants": [variant], "CreationTime": created,
        }
        if self.kind == "async":
            config["AsyncInferenceConfig"] = {"OutputConfig": {"S3OutputPath": f"s3://bench/{self.name}/"}}
        if self.enhanced_metrics:
            config["MetricsConfig"] = {"EnableEnhancedMetrics": True, "MetricPublishFrequencyInSeconds": 60}
        return config


class Fleet:
    """`count` endpoints spread over accounts x regions; nothing is stored per endpoint."""

    def __init__(self, count: int, accounts: list[str], regions: list[str]) -> None:
        self.count = count
        self.units = [(a, r) for a in accounts for r in regions]
        self.created = (datetime.now(UTC) - timedelta(days=90)).timestamp()

    def endpoints_in(self, account: str, region: str) -> list[SyntheticEndpoint]:
        if (account, region) not in self.units:
            return []
        unit = self.units.index((account, region))
        return [SyntheticEndpoint(i, account, region) for i in range(unit, self.count, len(self.units))]

    def endpoint(self, name: str) -> SyntheticEndpoint | None:
        if not name.startswith("bench-") or not name[6:].isdigit() or int(name[6:]) >= self.count:
            return None
        index = int(name[6:])
        account, region = self.units[index % len(self.units)]
        return SyntheticEndpoint(index, account, region)


# --- metric series -------------------------------------------------------------------------------

_LATENCIES = {"ModelLatency": 20_000.0, "OverheadLatency": 2_000.0}  # microseconds


def series(fleet: Fleet, query: dict[str, Any], start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
    """(epoch seconds, values) of one MetricStat query over [start, end), ascending."""
    stat_spec = query["MetricStat"]
    metric = stat_spec["Metric"]
    name, stat, period = metric["MetricName"], stat_spec["Stat"], int(stat_spec["Period"])
    dims = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
    first = math.ceil(start / period)
    slots = np.arange(first, max(first, math.ceil(end / period)), dtype=np.int64)
    stamps = slots * period
    hours = (stamps // 3600) % 24
    endpoint = fleet.endpoint(dims.get("EndpointName", ""))
    offset = zlib.crc32(repr((metric.get("Namespace"), name, sorted(dims.items()))).encode())
    noise = _NOISE[(offset + slots) % len(_NOISE)]
    daily = np.sin(2 * np.pi * (hours - 9) / 24)

    def shaped(mean: float, swing: float = 0.2, ceiling: float | None = None) -> np.ndarray:
        average = np.maximum(mean * (1 + swing * daily + 0.05 * noise), 0.0)
        value = average if stat in ("Average", "Minimum") else average * 1.3 + abs(noise) * 0.05 * mean
        return np.minimum(value, ceiling) if ceiling is not None else value

    requests = _requests(endpoint, hours, period)
    if endpoint is None:
        values = shaped(10.0)
    elif name == "CPUUtilization" and stat == "SampleCount":
        values = np.full(len(slots), endpoint.instances * period / 60.0)
    elif name == "CPUUtilization":
        cores = 1 if "InstanceId" in dims else VCPUS.get(endpoint.instance_type, 4)
        values = shaped(endpoint.level("cpu", 3, 85) * cores, 0.2, 100.0 * cores)
    elif name in ("MemoryUtilization", "DiskUtilization", "GPUUtilization", "GPUMemoryUtilization"):
        values = shaped(endpoint.level(name, 3, 80), 0.05, 100.0)
    elif name == "Invocations":
        # Per instance (InstanceId) an even share of the variant's requests.
        values = requests if stat == "Sum" and "InstanceId" not in dims else requests / max(1, endpoint.instances)
    elif name in _LATENCIES:
        values = shaped(_LATENCIES[name])
        stamps, values = stamps[requests > 0], values[requests > 0]  # no request, no latency
    elif name == "TotalProcessingTime":
        values = requests if stat == "SampleCount" else shaped(endpoint.level("processing", 5_000, 60_000))
        if stat != "SampleCount":
            stamps, values = stamps[requests > 0], values[requests > 0]
    elif name == "HasBacklogWithoutCapacity":
        values = np.zeros(len(stamps))
    elif name.startswith("Approximate"):
        values = shaped(endpoint.level(name, 0, 20), 0.5)
    else:
        values = shaped(10.0)
    return stamps.astype("float64"), np.round(values, 3)


def _requests(endpoint: SyntheticEndpoint | None, hours: np.ndarray, period: int) -> np.ndarray:
    if endpoint is None:
        return np.zeros(len(hours))
    rate = endpoint.invocations_per_hour * (1 + 0.4 * np.sin(2 * np.pi * (hours - 9) / 24))
    if endpoint.business_hours_only:
        rate = np.where((hours >= 8) & (hours < 18), rate, 0.0)
    return np.round(rate * period / 3600)


LIST_PAGE = 500
_PER_INSTANCE = ("CPUUtilization", "MemoryUtilization", "DiskUtilization")
_PER_GPU = ("GPUUtilization", "GPUMemoryUtilization")


def list_metrics(fleet: Fleet, account: str, region: str, params: dict[str, Any]) -> dict[str, Any]:
    """The per-instance series of the caller's enhanced endpoints, filtered as CloudWatch filters
    (namespace, metric name, dimension names and values), a page at a time."""
    namespace, name = params.get("Namespace"), params.get("MetricName")
    wanted = [(d["Name"], d.get("Value")) for d in params.get("Dimensions") or []]
    found: list[dict[str, Any]] = []
    for endpoint in fleet.endpoints_in(account, region):
        if not endpoint.enhanced_metrics:
            continue
        gpu = "g4dn" in endpoint.instance_type
        for i in range(endpoint.instances):
            base = [("EndpointName", endpoint.name), ("VariantName", "AllTraffic"),
                    ("InstanceId", f"i-{zlib.crc32(f'{endpoint.name}/{i}'.encode()):08x}{i:09d}")]
            series = [("/aws/sagemaker/Endpoints", m, base) for m in _PER_INSTANCE]
            if gpu:
                series += [("/aws/sagemaker/Endpoints", m, [*base, ("AcceleratorId", "GPU-0")]) for m in _PER_GPU]
            series.append(("AWS/SageMaker", "Invocations", base))
            for ns, metric, dims in series:
                named = dict(dims)
                if (namespace and ns != namespace) or (name and metric != name):
                    continue
                if all(n in named and (v is None or named[n] == v) for n, v in wanted):
                    found.append({"Namespace": ns, "MetricName": metric,
                                  "Dimensions": [{"Name": k, "Value": v} for k, v in dims]})
    skip = int(params["NextToken"]) if params.get("NextToken") else 0
    answer: dict[str, Any] = {"Metrics": found[skip:skip + LIST_PAGE]}
    if skip + LIST_PAGE < len(found):
        answer["NextToken"] = str(skip + LIST_PAGE)
    return answer


def get_metric_data(fleet: Fleet, params: dict[str, Any]) -> dict[str, Any]:
    """CloudWatch's answer, a page of at most MAX_DATAPOINTS; raises ValueError for a bad request."""
    queries = params.get("MetricDataQueries") or []
    if len(queries) > MAX_QUERIES:
        raise ValueError(f"The collection MetricDataQueries must not have a size greater than {MAX_QUERIES}.")
    if any("MetricStat" not in q for q in queries):
        raise ValueError("this synthetic CloudWatch answers MetricStat queries only")
    start, end = _epoch(params["StartTime"]), _epoch(params["EndTime"])
    if start >= end:
        raise ValueError("The parameter EndTime must be greater than StartTime.")
    descending = params.get("ScanBy", "TimestampDescending") == "TimestampDescending"
    skip = int(json.loads(base64.b64decode(params["NextToken"]))["offset"]) if params.get("NextToken") else 0
    budget, position, page = MAX_DATAPOINTS, 0, []
    for query in queries:
        if not query.get("ReturnData", True):
            continue
        stamps, values = series(fleet, query, start, end)
        if descending:
            stamps, values = stamps[::-1], values[::-1]
        count = len(values)
        begin, position = position, position + count
        if count == 0:
            if skip == 0:
                page.append(_result(query, stamps, values, "Complete"))
            continue
        if position <= skip or budget == 0:
            continue
        first = max(0, skip - begin)
        take = min(count - first, budget)
        budget -= take
        page.append(_result(query, stamps[first:first + take], values[first:first + take],
                            "Complete" if first + take == count else "PartialData"))
    consumed = skip + MAX_DATAPOINTS - budget
    answer: dict[str, Any] = {"MetricDataResults": page, "Messages": []}
    if consumed < position:
        answer["NextToken"] = base64.b64encode(json.dumps({"offset": consumed}).encode()).decode()
    return answer


def _result(query: dict[str, Any], stamps: np.ndarray, values: np.ndarray, status: str) -> dict[str, Any]:
    stat = query["MetricStat"]
    label = query.get("Label") or f"{stat['Metric']['MetricName']} {stat['Stat']}"
    return {"Id": query["Id"], "Label": label, "Timestamps": _Stamps(stamps), "Values": values,
            "StatusCode": status}


class _Stamps(np.ndarray):
    """Epoch seconds that the CBOR encoder tags as timestamps."""

    def __new__(cls, values: np.ndarray) -> _Stamps:
        return np.asarray(values, dtype="float64").view(cls)


def _epoch(value: Any) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return float(value)


# --- wire formats ----------------------------------------------------------------------------------

def to_json(value: Any) -> bytes:
    def default(item: Any) -> Any:
        if isinstance(item, _Stamps):
            return item.astype("int64").tolist()
        if isinstance(item, np.ndarray):
            return item.tolist()
        raise TypeError(type(item).__name__)
    return json.dumps(value, default=default, separators=(",", ":")).encode()


def _cbor_head(major: int, length: int) -> bytes:
    if length < 24:
        return bytes([major << 5 | length])
    for info, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if length < 1 << (8 * size):
            return bytes([major << 5 | info]) + length.to_bytes(size, "big")
    raise ValueError("too long for CBOR")


def to_cbor(value: Any) -> bytes:
    """The few CBOR types these answers need; numeric arrays in one numpy step."""
    out = bytearray()

    def put(item: Any) -> None:
        if isinstance(item, dict):
            out.extend(_cbor_head(5, len(item)))
            for key, member in item.items():
                put(key)
                put(member)
        elif isinstance(item, np.ndarray):
            tagged = isinstance(item, _Stamps)
            layout = np.dtype([("head", "V2" if tagged else "V1"), ("value", ">f8")])
            packed = np.zeros(len(item), dtype=layout)
            packed["head"] = np.void(b"\xc1\xfb" if tagged else b"\xfb")
            packed["value"] = item
            out.extend(_cbor_head(4, len(item)) + packed.tobytes())
        elif isinstance(item, list | tuple):
            out.extend(_cbor_head(4, len(item)))
            for member in item:
                put(member)
        elif isinstance(item, str):
            data = item.encode()
            out.extend(_cbor_head(3, len(data)) + data)
        elif isinstance(item, bool):
            out.append(0xF5 if item else 0xF4)
        elif isinstance(item, int):
            out.extend(_cbor_head(0, item) if item >= 0 else _cbor_head(1, -1 - item))
        elif isinstance(item, float):
            out.extend(b"\xfb" + struct.pack(">d", item))
        elif item is None:
            out.append(0xF6)
        else:
            raise TypeError(type(item).__name__)

    put(value)
    return bytes(out)


def from_cbor(body: bytes) -> Any:
    """botocore's own CBOR decoder, timestamps left as epoch numbers."""
    parser = botocore.parsers.RpcV2CBORParser(timestamp_parser=lambda value: value)
    return parser.parse_data_item(parser.get_peekable_stream_from_bytes(body)) if body else {}


# --- the server --------------------------------------------------------------------------------------

_EMPTY_LISTS = {
    "ListTrainingJobs": "TrainingJobSummaries", "ListTransformJobs": "TransformJobSummaries",
    "ListProcessingJobs": "ProcessingJobSummaries", "ListNotebookInstances": "NotebookInstances",
    "ListDomains": "Domains", "ListSpaces": "Spaces", "ListApps": "Apps", "ListClusters": "ClusterSummaries",
    "ListInferenceComponents": "InferenceComponents", "ListEndpoints": "Endpoints",
    "DescribeScalableTargets": "ScalableTargets", "DescribeScalingPolicies": "ScalingPolicies",
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body in one segment: with Nagle's algorithm and delayed ACKs, a header write
    # followed by a body write stalls each keep-alive request about 40 ms.
    disable_nagle_algorithm = True
    wbufsize = 1 << 16
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the bench prints its own figures
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        account, region = self._caller()
        stats = self.server.owner.requests
        try:
            if self.headers.get("smithy-protocol") == "rpc-v2-cbor":
                operation = self.path.rstrip("/").rsplit("/", 1)[-1]
                stats[f"cbor:{operation}"] = stats.get(f"cbor:{operation}", 0) + 1
                answer = self._cloudwatch(operation, from_cbor(body), account, region)
                self._send(200, to_cbor(answer), "application/cbor", {"smithy-protocol": "rpc-v2-cbor"})
            elif target := self.headers.get("X-Amz-Target"):
                prefix, operation = target.split(".", 1)
                stats[f"json:{operation}"] = stats.get(f"json:{operation}", 0) + 1
                params = json.loads(body or b"{}")
                if prefix == "SageMaker":
                    answer = self._sagemaker(operation, params, account, region)
                elif prefix == "GraniteServiceVersion20100801":
                    answer = self._cloudwatch(operation, params, account, region)
                elif operation in _EMPTY_LISTS:
                    answer = {_EMPTY_LISTS[operation]: []}
                else:
                    raise LookupError(operation)
                self._send(200, to_json(answer), "application/x-amz-json-1.1")
            else:
                form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
                stats[f"query:{form.get('Action')}"] = stats.get(f"query:{form.get('Action')}", 0) + 1
                self._send(200, self._sts(form, account).encode(), "text/xml")
        except LookupError as exc:
            self._error(400, "UnknownOperationException", f"not answered by the synthetic AWS: {exc}")
        except ValueError as exc:
            self._error(400, "ValidationException", str(exc))

    def _caller(self) -> tuple[str, str]:
        """(account, region) from the SigV4 scope: Credential=KEY/date/region/service/aws4_request."""
        auth = self.headers.get("Authorization", "")
        scope = auth.split("Credential=", 1)[-1].split(",", 1)[0].split("/")
        key = scope[0]
        account = key[4:16] if key.startswith("ASIA") and key[4:16].isdigit() else HOME_ACCOUNT
        return account, scope[2] if len(scope) > 2 else "us-east-1"

    def _sagemaker(self, operation: str, params: dict[str, Any], account: str, region: str) -> dict[str, Any]:
        fleet = self.server.owner.fleet
        if operation == "Search":
            if params.get("Resource") != "Endpoint":
                return {"Results": []}
            found = fleet.endpoints_in(account, region)
            offset = int(params.get("NextToken") or 0)
            size = min(int(params.get("MaxResults") or 10), SEARCH_PAGE)
            page = [e.search_record(fleet.created) for e in found[offset:offset + size]]
            answer: dict[str, Any] = {"Results": page}
            if offset + size < len(found):
                answer["NextToken"] = str(offset + size)
            return answer
        if operation == "DescribeEndpointConfig":
            name = str(params.get("EndpointConfigName", ""))
            endpoint = fleet.endpoint(name.removesuffix("-config"))
            if endpoint is None or (endpoint.account, endpoint.region) != (account, region):
                raise ValueError(f"Could not find endpoint configuration \"{name}\".")
            return endpoint.config(fleet.created)
        if operation == "DescribeModel":  # each endpoint's own model, outside a VPC (consolidate-onto-components)
            name = str(params.get("ModelName", ""))
            endpoint = fleet.endpoint(name.removesuffix("-model"))
            if endpoint is None or (endpoint.account, endpoint.region) != (account, region):
                raise ValueError(f"Could not find model \"{name}\".")
            return {"ModelName": name, "ModelArn": f"arn:aws:sagemaker:{region}:{account}:model/{name}",
                    "CreationTime": fleet.created, "EnableNetworkIsolation": False,
                    "ExecutionRoleArn": f"arn:aws:iam::{account}:role/sagemaker-execution",
                    "PrimaryContainer": {"Image": f"{account}.dkr.ecr.{region}.amazonaws.com/model:latest"}}
        if operation in _EMPTY_LISTS:
            return {_EMPTY_LISTS[operation]: []}
        raise LookupError(operation)

    def _cloudwatch(self, operation: str, params: dict[str, Any], account: str, region: str) -> dict[str, Any]:
        if operation == "ListMetrics":
            return list_metrics(self.server.owner.fleet, account, region, params)
        if operation == "DescribeAlarms":  # no alarm anywhere (one page): no-queue-alarm judges the async endpoints
            return {"MetricAlarms": [], "CompositeAlarms": []}
        if operation != "GetMetricData":
            raise LookupError(operation)
        return get_metric_data(self.server.owner.fleet, params)

    def _sts(self, form: dict[str, str], account: str) -> str:
        ns = 'xmlns="https://sts.amazonaws.com/doc/2011-06-15/"'
        meta = "<ResponseMetadata><RequestId>synthetic</RequestId></ResponseMetadata>"
        if form.get("Action") == "GetCallerIdentity":
            return (f"<GetCallerIdentityResponse {ns}><GetCallerIdentityResult><Arn>arn:aws:iam::{account}:user/bench"
                    f"</Arn><UserId>AIDABENCH</UserId><Account>{account}</Account></GetCallerIdentityResult>{meta}"
                    "</GetCallerIdentityResponse>")
        if form.get("Action") == "AssumeRole":
            role = form.get("RoleArn", "")
            target = role.split(":")[4] if role.count(":") >= 5 else ""
            if not target.isdigit() or len(target) != 12:
                raise ValueError(f"bad RoleArn {role!r}")
            expires = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
            return (f"<AssumeRoleResponse {ns}><AssumeRoleResult><Credentials><AccessKeyId>ASIA{target}XXXX"
                    f"</AccessKeyId><SecretAccessKey>synthetic</SecretAccessKey><SessionToken>synthetic</SessionToken>"
                    f"<Expiration>{expires}</Expiration></Credentials><AssumedRoleUser><AssumedRoleId>AROA:bench"
                    f"</AssumedRoleId><Arn>{role}/bench</Arn></AssumedRoleUser></AssumeRoleResult>{meta}"
                    "</AssumeRoleResponse>")
        raise LookupError(form.get("Action"))

    def _error(self, status: int, code: str, message: str) -> None:
        if self.headers.get("smithy-protocol") == "rpc-v2-cbor":
            self._send(status, to_cbor({"__type": code, "message": message}), "application/cbor",
                       {"smithy-protocol": "rpc-v2-cbor"})
        else:
            self._send(status, to_json({"__type": code, "message": message}), "application/x-amz-json-1.1")

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-amzn-RequestId", "synthetic")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: SyntheticAws


class SyntheticAws:
    """`with SyntheticAws(10_000, accounts, regions) as aws:` then aws.env() for the audit's environment."""

    def __init__(self, endpoints: int, accounts: list[str] | None = None, regions: list[str] | None = None) -> None:
        self.fleet = Fleet(endpoints, accounts or [HOME_ACCOUNT], regions or ["us-east-1"])
        self.requests: dict[str, int] = {}  # "protocol:Operation" -> count, as the server saw them
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="synthetic-aws", daemon=True)

    def __enter__(self) -> SyntheticAws:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def env(self) -> dict[str, str]:
        return {"AWS_ENDPOINT_URL": self.url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": "us-east-1"}

