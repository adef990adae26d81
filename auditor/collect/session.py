"""boto3 sessions and clients, created on demand (never at import time).

Clients use botocore's adaptive retry mode, which backs off with jitter on throttling and
rate-limits the client itself. AWS_ENDPOINT_URL (the standard variable) points every client at
the local emulator in the demo and the tests, so production and tests share every code path.
"""

from __future__ import annotations

import html
import io
import os
import re
import threading
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import boto3
import botocore.config
import botocore.credentials
import botocore.exceptions
import botocore.loaders
import botocore.parsers
import botocore.session
import botocore.utils
import numpy as np
import orjson
from botocore.client import BaseClient

from auditor.errors import AwsAccessError

# Error codes AWS uses for throttling; botocore retries them (and 5xx) with backoff and jitter.
THROTTLING_CODES = frozenset({
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
    "TooManyRequestsException", "RequestLimitExceeded", "SlowDown", "RequestThrottled",
    "ProvisionedThroughputExceededException", "LimitExceededException",
})


def client_config(
    connect_timeout: float = 5.0, read_timeout: float = 30.0, max_attempts: int = 5
) -> botocore.config.Config:
    """Adaptive retries (backoff with jitter, client-side rate limiting) within a few attempts, and
    timeouts short enough that a hung endpoint costs a scheduled job seconds, not minutes."""
    return botocore.config.Config(
        # botocore reads `max_attempts` as retries (one attempt more); `total_max_attempts` counts the first.
        retries={"mode": "adaptive", "total_max_attempts": max_attempts},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        max_pool_connections=32,
    )


# Error codes that mean the caller may not make the call (or is not who it claims to be).
_DENIED_CODES = frozenset({
    "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnrecognizedClientException",
    "InvalidClientTokenId", "ExpiredToken", "ExpiredTokenException",
})


def parse_timestamp(value: object) -> datetime:
    """botocore's timestamp parser goes through dateutil's local time zone for every value: a
    GetMetricData answer of 100,800 points spent most of its CPU there. AWS sends UTC (epoch
    seconds or ISO 8601): parse that directly, and leave anything else to botocore."""
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return botocore.utils.parse_timestamp(value)
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return botocore.utils.parse_timestamp(value)


_LOADER: list[botocore.loaders.Loader] = []
_LOADER_LOCK = threading.Lock()


def _shared_loader() -> botocore.loaders.Loader:
    """One loader for every session: each botocore session would otherwise parse and keep its own
    copy of the service models (tens of MB for SageMaker), once per account entered."""
    with _LOADER_LOCK:
        if not _LOADER:
            _LOADER.append(botocore.loaders.create_loader())
        return _LOADER[0]


# GetMetricData's datapoint lists (shape names in CloudWatch's model), taken whole as arrays.
_WHOLE_ARRAY_SHAPES = frozenset({"Timestamps", "DatapointValues"})


class _WholeArrays:
    """Mixed into botocore's response parsers: GetMetricData's `Timestamps` and `Values` become
    float64 arrays (epoch seconds for the timestamps) in one step, not a datetime and a float
    object per datapoint parsed one by one (2.6 us each, tens of millions in a large region).
    Only GetMetricData's answer is touched; every other answer parses as botocore parses it."""

    _arrays = False

    def parse(self, response: dict[str, Any], shape: Any) -> Any:
        self._arrays = shape is not None and shape.name == "GetMetricDataOutput"
        return super().parse(response, shape)  # type: ignore[misc]

    def _handle_list(self, shape: Any, node: Any) -> Any:
        if self._arrays and shape.name in _WHOLE_ARRAY_SHAPES:
            return whole_array(node, shape.member.type_name == "timestamp", self._timestamp_parser)  # type: ignore[attr-defined]
        return super()._handle_list(shape, node)  # type: ignore[misc]


def whole_array(node: Any, timestamps: bool, parse_one: Any = None) -> np.ndarray:
    """A list of numbers (epoch seconds, or values) as float64; timestamps sent some other way
    (ISO 8601 strings, datetimes) are converted one by one, as a fallback."""
    if isinstance(node, np.ndarray):
        return node.astype("float64", copy=False)
    try:
        return np.asarray(node, dtype="float64")
    except (TypeError, ValueError):
        if not timestamps:
            raise
    parse = parse_one or parse_timestamp
    return np.array([(v if isinstance(v, datetime) else parse(v)).timestamp() for v in node], dtype="float64")


class _JSONParser(_WholeArrays, botocore.parsers.JSONParser):
    """GetMetricData's JSON answer (up to 100,800 datapoints, megabytes of numbers) is decoded with
    orjson, about four times faster than the standard library; a body orjson refuses (json's NaN,
    integers beyond 64 bits) falls back to botocore's own decoding, as does every other answer."""

    def _parse_body_as_json(self, body_contents: bytes) -> Any:
        if self._arrays and body_contents:
            try:
                return orjson.loads(body_contents)
            except orjson.JSONDecodeError:
                pass
        return super()._parse_body_as_json(body_contents)


class _CBORParser(_WholeArrays, botocore.parsers.RpcV2CBORParser):
    """In GetMetricData's answer, also decodes a CBOR array of doubles, or of tagged epoch
    timestamps, in one numpy step (botocore's decoder reads each item in Python: several
    microseconds a datapoint). Other answers are decoded as botocore decodes them."""

    def get_peekable_stream_from_bytes(self, body: bytes) -> Any:
        # One buffer for the whole body, so that peek() sees a whole array.
        return io.BufferedReader(io.BytesIO(body), buffer_size=max(1, len(body)))

    def _parse_array(self, stream: Any, additional_info: int) -> Any:
        if additional_info != self.INDEFINITE_ITEM_ADDITIONAL_INFO:
            length = self._parse_unsigned_integer(stream, additional_info)
            fast = _numeric_cbor_array(stream, length) if self._arrays and length >= 8 else None
            if fast is not None:
                return fast
            return [self.parse_data_item(stream) for _ in range(length)]
        return super()._parse_array(stream, additional_info)


# Fixed-size CBOR items that a numeric array is made of: (head bytes, value dtype).
_CBOR_LAYOUTS = (
    (b"\xfb", ">f8"), (b"\xc1\xfb", ">f8"), (b"\xc1\x1a", ">u4"), (b"\xfa", ">f4"), (b"\xc1\xfa", ">f4"),
)


def _numeric_cbor_array(stream: Any, length: int) -> np.ndarray | None:
    """An array whose items all share one fixed-size numeric encoding, as float64 (tagged epoch
    timestamps as epoch seconds); None, with the stream untouched, for anything else."""
    start = stream.peek(2)[:2]
    for head, dtype in _CBOR_LAYOUTS:
        if not start.startswith(head):
            continue
        item = np.dtype([*((f"h{i}", "u1") for i in range(len(head))), ("value", dtype)])
        data = stream.peek(item.itemsize * length)  # the whole body is buffered: see _CBORParser
        if len(data) < item.itemsize * length:
            return None
        items = np.frombuffer(data, dtype=item, count=length)
        if not all((items[f"h{i}"] == byte).all() for i, byte in enumerate(head)):
            return None
        stream.seek(item.itemsize * length, os.SEEK_CUR)
        return items["value"].astype("float64")
    return None


class _ParserFactory(botocore.parsers.ResponseParserFactory):
    def create_parser(self, protocol_name: str) -> Any:
        parser_class = {"json": _JSONParser, "smithy-rpc-v2-cbor": _CBORParser}.get(protocol_name)
        if parser_class is None:
            return super().create_parser(protocol_name)
        return parser_class(**self._defaults)


def fast_botocore_session(profile: str | None = None) -> botocore.session.Session:
    """A botocore session whose clients parse timestamps with `parse_timestamp`, take
    GetMetricData's datapoints as whole arrays (`_WholeArrays`), and share one model loader with
    every other session of the run."""
    core = botocore.session.Session(profile=profile)
    # As boto3.Session does: an unknown profile (named here or in AWS_PROFILE) fails now, not later.
    named = core.profile
    if named and named not in core.available_profiles:
        raise botocore.exceptions.ProfileNotFound(profile=named)
    factory = _ParserFactory()
    factory.set_parser_defaults(timestamp_parser=parse_timestamp)
    core.register_component("response_parser_factory", factory)
    core.register_component("data_loader", _shared_loader())
    return core


class RegionAccessError(Exception):
    """A call failed in a way that will fail every further call in the region."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EndpointNotAnswering(botocore.exceptions.BotoCoreError):
    """Raised instead of making a call to an endpoint that did not answer an earlier call of the
    run on any attempt (see `UnansweredEndpoints`)."""

    fmt = "{endpoint} did not answer {first} on any attempt earlier in this run: not asked again"


# The services a region's audit calls.
REGION_SERVICES = frozenset({"sagemaker", "cloudwatch", "application-autoscaling"})
# A call that fails with one of these after its last attempt means the endpoint cannot be reached.
_UNREACHABLE = (botocore.exceptions.ReadTimeoutError, botocore.exceptions.EndpointConnectionError)


class UnansweredEndpoints:
    """Endpoints (by region and URL) where a call timed out or could not connect on every attempt.

    Each attempt at a hung endpoint costs the read timeout: asking it again would cost the run
    minutes per call for the same answer. Once one call has failed this way, every later call
    of the run to that endpoint fails at once with `EndpointNotAnswering`. Shared by the
    accounts of a run: their calls travel the same network path to the same regional endpoint.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (region, endpoint URL) -> (service, the call that failed)
        self._first: dict[tuple[str, str], tuple[str, str]] = {}

    def record(self, region: str, endpoint: str, service: str, call: str) -> None:
        with self._lock:
            self._first.setdefault((region, endpoint), (service, call))

    def first_failure(self, region: str, endpoint: str) -> str | None:
        with self._lock:
            found = self._first.get((region, endpoint))
            return None if found is None else found[1]

    def in_region(self, region: str, services: frozenset[str] = REGION_SERVICES) -> bool:
        """Whether an endpoint of `services` in `region` did not answer: the rest of the region's
        audit is not attempted (the global Price List and Cost Explorer endpoints do not count)."""
        with self._lock:
            return any(r == region and service in services for (r, _), (service, _) in self._first.items())

    def watch(self, client: BaseClient, service: str, region: str) -> None:
        """Fail `client`'s calls at once when its endpoint is known not to answer; note when it does not."""
        endpoint = client.meta.endpoint_url

        def before_call(model: Any = None, **_: Any) -> None:
            first = self.first_failure(region, endpoint)
            if first is not None:
                raise EndpointNotAnswering(endpoint=endpoint, first=first)

        def after_call_error(exception: Exception | None = None, **kwargs: Any) -> None:
            # Emitted once per call, after botocore's last attempt.
            if isinstance(exception, _UNREACHABLE):
                operation = kwargs.get("event_name", "").rsplit(".", 1)[-1]
                self.record(region, endpoint, service, f"{service}:{operation} in {region}")

        client.meta.events.register("before-call.*.*", before_call)
        client.meta.events.register("after-call-error.*.*", after_call_error)


class ApiCallCounter:
    """Counts API requests by service and operation (retries included), for the report and bench/,
    and the answers that were throttled or server errors (botocore retries them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.problems: Counter[str] = Counter()  # throttled | server_errors | connection_errors

    def on_retry_check(self, response: Any = None, caught_exception: Exception | None = None, **_: Any) -> None:
        """botocore's needs-retry event: one call per answer (or failure), before it decides to retry."""
        kind = None
        if caught_exception is not None:
            kind = "connection_errors"
        elif response is not None:
            http, parsed = response
            code = (parsed or {}).get("Error", {}).get("Code", "")
            if code in THROTTLING_CODES or getattr(http, "status_code", 200) == 429:
                kind = "throttled"
            elif getattr(http, "status_code", 200) >= 500:
                kind = "server_errors"
        if kind is not None:
            with self._lock:
                self.problems[kind] += 1

    def record_problem(self, kind: str) -> None:
        """An answer retried outside botocore (the PromQL API): throttled | server_errors | connection_errors."""
        with self._lock:
            self.problems[kind] += 1

    def problem_counts(self) -> dict[str, int]:
        with self._lock:
            return {k: self.problems.get(k, 0) for k in ("throttled", "server_errors", "connection_errors")}

    def on_request(self, event_name: str, **_: Any) -> None:
        # event_name: before-send.<service>.<Operation>
        _event, service, operation = event_name.split(".", 2)
        with self._lock:
            self.calls[f"{service}:{operation}"] += 1

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self.calls.items()))


class AwsClients:
    """Makes one client per (service, region) and shares it; boto3 clients are thread-safe."""

    def __init__(self, profile: str | None = None, counter: ApiCallCounter | None = None,
                 config: botocore.config.Config | None = None,
                 session: boto3.session.Session | None = None,
                 unanswered: UnansweredEndpoints | None = None) -> None:
        self._config = config or client_config()
        self.counter = counter or ApiCallCounter()
        self.unanswered = unanswered or UnansweredEndpoints()
        self._clients: dict[tuple[str, str], BaseClient] = {}
        self._lock = threading.Lock()
        if session is not None:  # an assumed role's session (see `assume`)
            self._session = session
            return
        try:
            self._session = boto3.session.Session(botocore_session=fast_botocore_session(profile or None))
        except botocore.exceptions.ProfileNotFound as exc:
            if profile:
                raise AwsAccessError(f"AWS profile {profile!r} not found (aws.profile)") from None
            # No aws.profile: boto3 took the profile from the environment.
            named = exc.kwargs.get("profile") or os.environ.get("AWS_PROFILE") or os.environ.get("AWS_DEFAULT_PROFILE")
            variable = "AWS_PROFILE" if os.environ.get("AWS_PROFILE") else "AWS_DEFAULT_PROFILE"
            raise AwsAccessError(
                f"AWS profile {named!r} not found (set by the environment variable {variable})"
            ) from None

    @property
    def max_attempts(self) -> int:
        """Attempts a call gets (the first included), as the botocore clients are configured."""
        retries = self._config.retries or {}
        return int(retries.get("total_max_attempts") or retries.get("max_attempts", 4) + 1)

    def credentials(self) -> botocore.credentials.Credentials | None:
        """The run's credentials (an assumed role's refresh themselves), for a request botocore has no
        operation for (the PromQL API)."""
        return self._session.get_credentials()

    def caller_account(self, region: str) -> str:
        """The account the credentials act in (sts:GetCallerIdentity needs no permission)."""
        sts = self.client("sts", region)
        try:
            return str(sts.get_caller_identity()["Account"])
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            raise AwsAccessError(describe_client_error(exc, "sts", "GetCallerIdentity", region)) from None

    def assume(self, role_arn: str, external_id: str | None, region: str,
               session_name: str = "sagemaker-auditor") -> AwsClients:
        """Clients acting in another account through `role_arn`. The credentials refresh themselves
        before they expire (a large run outlives the one-hour default). Raises AwsAccessError with
        the refusal in one line when the role cannot be assumed."""
        sts = self.client("sts", region)
        request: dict[str, Any] = {"RoleArn": role_arn, "RoleSessionName": session_name}
        if external_id:
            request["ExternalId"] = external_id

        def fetch() -> dict[str, str]:
            credentials = sts.assume_role(**request)["Credentials"]
            return {"access_key": credentials["AccessKeyId"], "secret_key": credentials["SecretAccessKey"],
                    "token": credentials["SessionToken"], "expiry_time": credentials["Expiration"].isoformat()}

        try:
            first = fetch()
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            raise AwsAccessError(f"{describe_client_error(exc, 'sts', 'AssumeRole', region)} ({role_arn})") from None
        refreshable = botocore.credentials.RefreshableCredentials.create_from_metadata(
            first, refresh_using=fetch, method="sts-assume-role")
        core = fast_botocore_session()
        core._credentials = refreshable  # botocore's documented-by-use way to hand a session credentials
        return AwsClients(counter=self.counter, config=self._config,
                          session=boto3.session.Session(botocore_session=core), unanswered=self.unanswered)

    def check_credentials(self) -> None:
        try:
            credentials = self._session.get_credentials()
        except botocore.exceptions.BotoCoreError as exc:
            raise AwsAccessError(f"cannot load AWS credentials: {exc}") from None
        if credentials is None:
            raise AwsAccessError(
                "no AWS credentials found: set aws.profile, AWS_PROFILE or AWS_ACCESS_KEY_ID"
            )

    def sagemaker_regions(self) -> set[str]:
        """The regions where SageMaker is offered (in the commercial partition)."""
        return set(self._session.get_available_regions("sagemaker"))

    def check_region(self, region: str) -> None:
        known = set(self._session.get_available_regions("sagemaker"))
        known |= set(self._session.get_available_regions("sagemaker", "aws-us-gov"))
        known |= set(self._session.get_available_regions("sagemaker", "aws-cn"))
        if region not in known:
            raise AwsAccessError(f"unknown region {region!r} (aws.regions): SageMaker has no such region")

    def client(self, service: str, region: str) -> BaseClient:
        key = (service, region)
        with self._lock:
            if key not in self._clients:
                client = self._session.client(service, region_name=region, config=self._config)
                client.meta.events.register("before-send.*.*", self.counter.on_request)
                # First in line, so it sees every answer before botocore's retry handler decides.
                client.meta.events.register_first("needs-retry.*.*", self.counter.on_retry_check)
                self.unanswered.watch(client, service, region)
                self._clients[key] = client
            return self._clients[key]


_TAGS = re.compile(r"<[^>]*>")
_HTML = re.compile(r"<\s*(?:!doctype|html|head|body|title)\b", re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)


def describe_client_error(exc: Exception, service: str, operation: str, region: str) -> str:
    """One line that names the problem: which permission, which region."""
    if isinstance(exc, botocore.exceptions.ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        message = exc.response.get("Error", {}).get("Message", "")
        if _is_denied(exc):
            return f"access denied: {service}:{operation} in {region} ({code or 'HTTP 403'})"
        if _HTML.search(message):
            # A proxy's or a server's error page, not AWS's answer (botocore keeps its whole body as
            # the message): its status and its title say it.
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or code
            title = _TITLE.search(message)
            named = " ".join(html.unescape(_TAGS.sub(" ", title.group(1))).split())[:120] if title else ""
            return (f"{service}:{operation} in {region} failed: HTTP {status}{f' {named}' if named else ''} "
                    "(an HTML page, not an AWS answer: a proxy or the endpoint's address?)")
        return f"{service}:{operation} in {region} failed: {code}: {' '.join(message.split())}".rstrip(": ")
    if isinstance(exc, EndpointNotAnswering):
        return f"cannot reach {service} in {region}: {exc}"
    if isinstance(exc, botocore.exceptions.NoCredentialsError):
        return "no AWS credentials found: set aws.profile, AWS_PROFILE or AWS_ACCESS_KEY_ID"
    if isinstance(exc, botocore.exceptions.EndpointConnectionError):
        return f"cannot reach {service} in {region}: {exc}"
    if isinstance(exc, botocore.exceptions.ReadTimeoutError | botocore.exceptions.ConnectTimeoutError):
        return (f"{service}:{operation} in {region} timed out "
                f"(aws.connect_timeout_seconds, aws.read_timeout_seconds): {exc}")
    return f"{service}:{operation} in {region} failed: {exc}"


def _is_denied(exc: botocore.exceptions.ClientError) -> bool:
    # A 403 whose body botocore could not parse (a proxy, or an XML answer to a JSON API) is a refusal too.
    code = exc.response.get("Error", {}).get("Code", "")
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code in _DENIED_CODES or status == 403


def is_fatal_for_region(exc: Exception) -> bool:
    """Errors that will fail every further call in the region: stop the region, report why."""
    if isinstance(exc, botocore.exceptions.ClientError):
        return _is_denied(exc)
    return isinstance(exc, botocore.exceptions.NoCredentialsError | botocore.exceptions.EndpointConnectionError
                      | botocore.exceptions.ReadTimeoutError | botocore.exceptions.ConnectTimeoutError
                      | EndpointNotAnswering)
