"""Faults a test arms on any call the emulator answers, and the record of every call it answered.

The emulator runs in the test's own process, so a test arms faults directly (no proxy, no port):

    from auditor_emulator.server import Emulator

    Emulator.faults.arm("sagemaker", "UpdateEndpoint", "server_error_after")      # once, by default
    Emulator.faults.arm("cloudwatch", "GetMetricData", "throttle", times=3)
    Emulator.faults.arm("sagemaker", "DescribeEndpoint", "server_error", times=None, for_seconds=6)
    Emulator.faults.arm("sagemaker", "DescribeEndpoint", "hang", seconds=2)       # then answers
    Emulator.faults.arm("sagemaker", "DescribeEndpoint", "hang", seconds=2, then="drop")
    arm = Emulator.faults.arm("application-autoscaling", "DeregisterScalableTarget", "access_denied")
    ...
    assert arm.fired == 1
    assert Emulator.faults.calls() == [("application-autoscaling", "DescribeScalableTargets"), ...]
    assert Emulator.faults.faulted() == [("application-autoscaling", "DeregisterScalableTarget", "access_denied")]

`service` is boto3's client name ("sagemaker", "cloudwatch", "application-autoscaling", "sts",
"scheduler", "sesv2", ...), `operation` the API's name ("UpdateEndpoint"); either may be "*" for any.
Each request takes the first armed fault that matches it and has turns left (in the order armed),
so `throttle` x2 then `server_error` x1 on one operation fail its first three requests in that order.
`times=None` arms a fault for every matching request (bound it with `for_seconds`, an outage).

Kinds, each answered in the service's own protocol (JSON, CBOR, query XML, REST), as AWS answers:

- `throttle`: the service's throttling error without doing the call (SageMaker and Application
  Auto Scaling ThrottlingException 400, CloudWatch/STS/IAM/SES Throttling 400, EC2
  RequestLimitExceeded 503, Scheduler ThrottlingException 429, SESv2 TooManyRequestsException 429).
- `server_error`: HTTP 500 InternalFailure (or `status=503`, ServiceUnavailable) without doing it.
- `server_error_after`: the call is made, then answered 500: the change landed, the caller sees an
  error (and botocore retries it: a retried UpdateEndpoint gets "Cannot update in-progress endpoint").
- `hang`: the request is held `seconds` (at most HANG_LIMIT_SECONDS; `reset()` releases it), then
  made and answered (`then="answer"`) or its connection closed without an answer (`then="drop"`,
  the call not made). A client whose read timeout is shorter gives up first, as it would on AWS.
- `access_denied`: AccessDeniedException (JSON and REST services) or AccessDenied 403 (query), EC2
  UnauthorizedOperation, with AWS's message naming the caller, the IAM action and, where the
  request names one, the resource: "User: arn:aws:iam::123456789012:user/testing is not authorized
  to perform: sagemaker:UpdateEndpoint on resource: arn:aws:sagemaker:...:endpoint/ep because no
  identity-based policy allows the sagemaker:UpdateEndpoint action".

`calls()` lists every request the emulator answered since the last `reset()` as (service,
operation), faulted ones included, in the order they arrived (botocore's retries are separate
requests); `faulted()` lists those a fault took, with its kind. `reset()` (also done by
`Emulator.reset()`, so by the `aws` fixture) disarms everything and forgets the calls.

tests/faultproxy.py stays for what happens below HTTP: refused and reset connections, and a
client that reaches AWS through a proxy.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Literal

HANG_LIMIT_SECONDS = 120.0  # a hung request is released after this, so a test never leaks a thread for long
KINDS = ("throttle", "server_error", "server_error_after", "hang", "access_denied")
Kind = Literal["throttle", "server_error", "server_error_after", "hang", "access_denied"]

# The error each kind answers, per service where AWS's differs from its protocol's usual one.
_THROTTLE = {
    "ec2": ("RequestLimitExceeded", 503, "Request limit exceeded."),
    "scheduler": ("ThrottlingException", 429, "Rate exceeded"),
    "sesv2": ("TooManyRequestsException", 429, "Too Many Requests"),
}
_THROTTLE_BY_PROTOCOL = {
    "query": ("Throttling", 400, "Rate exceeded"),
    "rest-json": ("TooManyRequestsException", 429, "Too Many Requests"),
    "rest-xml": ("SlowDown", 503, "Please reduce your request rate."),
}
_THROTTLE_DEFAULT = ("ThrottlingException", 400, "Rate exceeded")  # JSON services: SageMaker, Auto Scaling
_QUERY_COMPATIBLE = {"cloudwatch"}  # JSON/CBOR on the wire, but AWS's query error codes (awsQueryCompatible)
_IAM_PREFIX = {"sesv2": "ses"}  # IAM's service prefix where it is not boto3's client name


@dataclass  # not frozen: `fired` counts its turns as requests take them
class Arm:
    """One armed fault; `fired` counts the requests it took."""

    service: str
    operation: str
    kind: Kind
    times: int | None = 1
    seconds: float = 0.0  # hang: how long
    then: Literal["answer", "drop"] = "answer"  # hang: what after
    status: int = 500  # server_error, server_error_after: 500 InternalFailure or 503 ServiceUnavailable
    until: float | None = None  # time.monotonic() after which it no longer fires
    fired: int = 0

    def matches(self, service: str, operation: str, now: float) -> bool:
        return (self.service in ("*", service) and self.operation in ("*", operation)
                and (self.times is None or self.fired < self.times)
                and (self.until is None or now < self.until))


class Faults:
    """The registry (one per process: `FAULTS`, also `Emulator.faults`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arms: list[Arm] = []
        self._calls: list[tuple[str, str]] = []
        self._faulted: list[tuple[str, str, str]] = []
        self._released = threading.Event()

    def arm(self, service: str, operation: str, kind: Kind, times: int | None = 1, *, seconds: float = 5.0,
            then: Literal["answer", "drop"] = "answer", status: int = 500,
            for_seconds: float | None = None) -> Arm:
        """Fail the next `times` requests for (service, operation) with `kind` (see the module's text)."""
        if kind not in KINDS:
            raise ValueError(f"unknown fault {kind!r}: one of {', '.join(KINDS)}")
        if times is not None and times < 1:
            raise ValueError("times must be at least 1 (or None: every matching request)")
        if times is None and for_seconds is None:
            raise ValueError("a fault for every request needs for_seconds (or disarm it with reset())")
        if then not in ("answer", "drop"):
            raise ValueError("then must be 'answer' or 'drop'")
        if status not in (500, 503):
            raise ValueError("status must be 500 or 503")
        if not 0 <= seconds <= HANG_LIMIT_SECONDS:
            raise ValueError(f"seconds must be within 0-{HANG_LIMIT_SECONDS:g}")
        armed = Arm(service, operation, kind, times, seconds, then, status,
                    None if for_seconds is None else time.monotonic() + for_seconds)
        with self._lock:
            self._arms.append(armed)
        return armed

    def calls(self, service: str | None = None) -> list[tuple[str, str]]:
        with self._lock:
            return [c for c in self._calls if service in (None, c[0])]

    def faulted(self) -> list[tuple[str, str, str]]:
        with self._lock:
            return list(self._faulted)

    def reset(self) -> None:
        with self._lock:
            self._arms.clear()
            self._calls.clear()
            self._faulted.clear()
            self._released.set()  # hung requests go on now
            self._released = threading.Event()

    def _take(self, service: str, operation: str) -> tuple[Arm | None, threading.Event]:
        """Record the request; the fault that takes it, if any."""
        with self._lock:
            self._calls.append((service, operation))
            now = time.monotonic()
            for armed in self._arms:
                if armed.matches(service, operation, now):
                    armed.fired += 1
                    self._faulted.append((service, operation, armed.kind))
                    return armed, self._released
            return None, self._released


FAULTS = Faults()
_INSTALL_LOCK = threading.Lock()
_INSTALLED: list[bool] = []


def _protocol(response: Any) -> str:
    from moto.core.responses import get_service_model

    return str(get_service_model(response.boto3_service_name).protocol)


def _error_answer(response: Any, code: str, status: int, message: str) -> Any:
    """The error as the service would send it, serialised by moto for its protocol."""
    from moto.core.exceptions import ServiceException
    from moto.core.responses import ActionResult

    class InjectedFault(ServiceException):  # defined here: moto looks a moto exception's model up by its module
        pass

    with warnings.catch_warnings():  # moto warns of codes its models lack (ThrottlingException, ...)
        warnings.simplefilter("ignore")
        _, headers, body = response.serialized(ActionResult(InjectedFault(code, message)))
    headers = {k: v for k, v in headers.items() if k.lower() != "status"}
    headers["status"] = str(status)
    fault = "Sender" if status < 500 else "Receiver"  # moto marks every code its models lack as the sender's
    if "x-amzn-query-error" in headers:
        headers["x-amzn-query-error"] = f"{code};{fault}"
    if isinstance(body, str):
        body = body.replace("<Type>Sender</Type>", f"<Type>{fault}</Type>")
    headers, body = response._enrich_response(headers, body)
    return status, headers, body


def _throttle(response: Any) -> tuple[str, int, str]:
    service = response.boto3_service_name
    if service in _THROTTLE:
        return _THROTTLE[service]
    if service in _QUERY_COMPATIBLE:
        return _THROTTLE_BY_PROTOCOL["query"]
    return _THROTTLE_BY_PROTOCOL.get(_protocol(response), _THROTTLE_DEFAULT)


def _resource_arn(response: Any) -> str | None:
    """The resource a SageMaker request names, as IAM's message names it."""
    if response.boto3_service_name != "sagemaker":
        return None
    try:
        params = json.loads(response.body or "{}")
    except ValueError:  # a body that is not JSON names no resource; the denial stands without one
        return None
    if not isinstance(params, dict):
        return None
    base = f"arn:aws:sagemaker:{response.region}:{response.current_account}"
    for key, kind in (("InferenceComponentName", "inference-component"), ("EndpointName", "endpoint"),
                      ("EndpointConfigName", "endpoint-config"),
                      ("ModelName", "model"), ("NotebookInstanceName", "notebook-instance")):
        if isinstance(params.get(key), str):
            return f"{base}:{kind}/{params[key].lower()}"
    return None


def _access_denied(response: Any, operation: str) -> Any:
    service = response.boto3_service_name
    action = f"{_IAM_PREFIX.get(service, service)}:{operation}"
    principal = f"arn:aws:iam::{response.current_account}:user/testing"
    resource = _resource_arn(response)
    on_resource = f" on resource: {resource}" if resource else ""
    message = (f"User: {principal} is not authorized to perform: {action}{on_resource} because no "
               f"identity-based policy allows the {action} action")
    protocol = _protocol(response)
    if service == "ec2":
        return _error_answer(response, "UnauthorizedOperation", 403,
                             f"You are not authorized to perform this operation. {message}")
    if protocol == "query" or service in _QUERY_COMPATIBLE:
        return _error_answer(response, "AccessDenied", 403, message)
    return _error_answer(response, "AccessDeniedException", 400 if protocol == "json" else 403, message)


def _server_error(response: Any, status: int) -> Any:
    if status == 503:
        return _error_answer(response, "ServiceUnavailable", 503, "Service is unavailable. Please try again later.")
    return _error_answer(response, "InternalFailure", 500,
                         "The request processing has failed because of an unknown error, exception or failure.")


def _drop(response: Any) -> None:
    """Close the request's connection without an answer (a RST, as a dropped connection)."""
    connection = response.normalized_request.environ.get("werkzeug.socket")
    if connection is not None:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.shutdown(socket.SHUT_RDWR)
    raise ConnectionResetError("the emulator dropped this request (an armed hang fault)")


def _faulting(original: Any) -> Any:
    def call_action(self: Any) -> Any:
        service, operation = self.boto3_service_name, self._get_action() or ""
        armed, released = FAULTS._take(service, operation)
        if armed is None:
            return original(self)
        if armed.kind == "throttle":
            return _error_answer(self, *_throttle(self))
        if armed.kind == "access_denied":
            return _access_denied(self, operation)
        if armed.kind == "server_error":
            return _server_error(self, armed.status)
        if armed.kind == "server_error_after":
            original(self)
            return _server_error(self, armed.status)
        released.wait(armed.seconds)  # hang
        if armed.then == "drop":
            _drop(self)
        return original(self)
    return call_action


def install_faults() -> None:
    """Route every request moto answers through FAULTS (once per process)."""
    from moto.core.responses import BaseResponse

    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        BaseResponse.call_action = _faulting(BaseResponse.call_action)  # type: ignore[method-assign]
        _INSTALLED.append(True)
