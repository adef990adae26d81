"""A fault-injecting HTTP proxy in front of the local AWS emulator, on a loopback port.

Each request is forwarded to the emulator unless a fault takes it first: hang (accept, never
answer), delay, connection reset, a 5xx answer, a ThrottlingException for SageMaker's JSON
API, or AccessDeniedException for named JSON-API operations. Counts are per fault, so a test can
say "the first 4 calls are throttled".
"""

from __future__ import annotations

import http.client
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HANG_LIMIT_SECONDS = 120  # a hung request is released after this, so a test never leaks forever


@dataclass
class Faults:
    hang: bool = False
    delay_seconds: float = 0.0
    resets: int = 0  # the next N connections are reset without an answer
    server_errors: int = 0  # the next N requests get 503
    throttles: int = 0  # the next N SageMaker requests get ThrottlingException
    denied: tuple[str, ...] = ()  # these JSON-API operations (X-Amz-Target, e.g. "SageMaker.ListTags") AccessDenied
    seen: dict[str, int] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)  # each request's operation (X-Amz-Target or Action), in order
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, name: str) -> bool:
        with self.lock:
            left = getattr(self, name)
            if left <= 0:
                return False
            setattr(self, name, left - 1)
            self.seen[name] = self.seen.get(name, 0) + 1
            return True


class FaultProxy:
    def __init__(self, upstream: str, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        target = urlsplit(upstream)
        host, port = target.hostname or "127.0.0.1", target.port or 80
        faults_ref = self.faults

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with faults_ref.lock:
                    faults_ref.seen["requests"] = faults_ref.seen.get("requests", 0) + 1
                    faults_ref.calls.append(self.headers.get("X-Amz-Target") or _action(body) or self.path)
                if faults_ref.hang:
                    faults_ref.released.wait(HANG_LIMIT_SECONDS)
                    self.close_connection = True
                    return
                if faults_ref.take("resets"):
                    # SO_LINGER 0: the close sends a RST, as a dropped connection does.
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                if faults_ref.delay_seconds and faults_ref.released.wait(faults_ref.delay_seconds):
                    self.close_connection = True
                    return
                if faults_ref.take("server_errors"):
                    self._answer(503, b"Service Unavailable", {"Content-Type": "text/plain"})
                    return
                target_header = self.headers.get("X-Amz-Target", "")
                if target_header and target_header in faults_ref.denied:
                    self._answer(400, b'{"__type":"AccessDeniedException","message":"User is not authorized"}',
                                 {"Content-Type": "application/x-amz-json-1.1",
                                  "x-amzn-ErrorType": "AccessDeniedException"})
                    return
                if "SageMaker" in target_header and faults_ref.take("throttles"):
                    self._answer(400, b'{"__type":"ThrottlingException","message":"Rate exceeded"}',
                                 {"Content-Type": "application/x-amz-json-1.1",
                                  "x-amzn-ErrorType": "ThrottlingException"})
                    return
                upstream_conn = http.client.HTTPConnection(host, port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                upstream_conn.request(self.command, self.path, body=body, headers=headers)
                answer = upstream_conn.getresponse()
                data = answer.read()
                relayed = {k: v for k, v in answer.getheaders()
                           if k.lower() not in ("content-length", "transfer-encoding", "connection")}
                upstream_conn.close()
                self._answer(answer.status, data, relayed)

            def _answer(self, status: int, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.faults.released.set()
        self.server.shutdown()
        self.server.server_close()


def _action(body: bytes) -> str | None:
    """The Action of a query-protocol request (CloudWatch, STS, EC2)."""
    for pair in body.split(b"&"):
        if pair.startswith(b"Action="):
            return pair[len(b"Action="):].decode("ascii", "replace")
    return None


def closed_port() -> str:
    """An address where nothing listens: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    time.sleep(0.05)
    return f"http://127.0.0.1:{port}"
