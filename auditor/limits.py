"""When a run must stop: its deadline, or a signal (SIGTERM, Ctrl-C) the caller passes on.

The pipeline checks `RunLimits.check()` between API calls; the coordinator stops waiting for a
region when the limits are reached, so a hung AWS endpoint cannot hold the run past its deadline,
and what was collected before is still reported.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# The automatic deadline: a base, and more for every endpoint the regions report.
BASE_DEADLINE_SECONDS = 30 * 60
SECONDS_PER_ENDPOINT = 0.6


class RunStopped(Exception):
    """The run reached its deadline or was asked to stop; `reason` says which, in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class RunLimits:
    """`deadline_seconds` 0: automatic, 30 minutes plus 0.6 s for every endpoint discovered."""

    deadline_seconds: float = 0.0
    stop: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], float] = time.monotonic
    stop_reason: str = "interrupted"

    def __post_init__(self) -> None:
        self._started = self.clock()
        self._endpoints = 0
        self._lock = threading.Lock()

    @property
    def automatic(self) -> bool:
        return not self.deadline_seconds

    def add_endpoints(self, count: int) -> None:
        """An automatic deadline grows with the fleet the regions discover."""
        with self._lock:
            self._endpoints += count

    @property
    def allowed_seconds(self) -> float:
        if not self.automatic:
            return self.deadline_seconds
        with self._lock:
            return BASE_DEADLINE_SECONDS + SECONDS_PER_ENDPOINT * self._endpoints

    def remaining(self) -> float:
        return self.allowed_seconds - (self.clock() - self._started)

    def reason(self) -> str | None:
        """Why the run must stop now, or None."""
        if self.stop.is_set():
            return self.stop_reason
        if self.remaining() <= 0:
            return f"the run's deadline of {self.allowed_seconds / 60:g} minutes (aws.deadline_minutes) passed"
        return None

    def check(self) -> None:
        reason = self.reason()
        if reason is not None:
            raise RunStopped(reason)

    def request_stop(self, reason: str) -> None:
        self.stop_reason = reason
        self.stop.set()


# For the tests of interruptions (tests/test_interrupt.py): the run stops at the named point, says
# so on stderr and waits (at most PAUSE_SECONDS) for a stop request, so a signal lands exactly there.
PAUSE_VARIABLE = "AUDITOR_PAUSE_AT"
PAUSE_SECONDS = 60.0


def pause_point(name: str, limits: RunLimits) -> None:
    if os.environ.get(PAUSE_VARIABLE) != name:
        return
    sys.stderr.write(f"paused at {name}\n")
    sys.stderr.flush()
    limits.stop.wait(PAUSE_SECONDS)
