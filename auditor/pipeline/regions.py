"""Regions in parallel, each in a thread of its own, within the run's limits.

A region's thread may be stuck in a call to an endpoint that never answers; the coordinator does
not wait for it past the deadline or a stop request. Threads are daemons, so a stuck one never
holds the process either. What a region discovered before it was stopped is kept (each kind
records it), so the report can list those resources as not audited instead of forgetting them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from auditor.limits import RunLimits, RunStopped

# CloudWatch and SageMaker rate limits are per account and region: units never share a budget,
# but the machine's connections and CPU do.
MAX_PARALLEL_REGIONS = 4
POLL_SECONDS = 0.2
# Once the run must stop, a region still working gets this long to reach its next check (and keep
# the resource kinds it finished) or to finish judging what it collected; one stuck in a call to an
# endpoint that never answers is left behind after it.
GRACE_SECONDS = 3.0

Result = TypeVar("Result")


@dataclass
class RegionWork(Generic[Result]):
    region: str
    account: str = ""  # "" : the caller's own account
    result: Result | None = None
    so_far: Result | None = None  # what the work finished before it was stopped (the work fills it)
    stopped: str | None = None  # why the region stopped before it finished
    failure: BaseException | None = None  # a bug in the region's work: the region's error, the others go on
    # Per resource kind: what the report says of its resources if the region is stopped now.
    partial: dict[str, Callable[[str], object]] = field(default_factory=dict)
    finished: threading.Event = field(default_factory=threading.Event)

    def record_partial(self, key: str, section: Callable[[str], object]) -> None:
        self.partial[key] = section


def run_regions(
    units: Sequence[tuple[str, str]],
    work: Callable[[RegionWork[Result]], Result],
    limits: RunLimits,
    parallel: int = MAX_PARALLEL_REGIONS,
) -> list[RegionWork[Result]]:
    """Run `work` for every (account, region), at most `parallel` at once; return when all finished
    or the limits are reached (then unfinished ones carry `stopped`). A region whose work raised
    carries the exception in `failure`, whether or not the limits were reached: never lost."""
    slots = threading.BoundedSemaphore(max(1, min(parallel, len(units))))
    boards = [RegionWork[Result](region, account) for account, region in units]

    def run(board: RegionWork[Result]) -> None:
        with slots:
            try:
                if (reason := limits.reason()) is not None:
                    board.stopped = reason
                else:
                    board.result = work(board)
            except RunStopped as stop:
                board.stopped = stop.reason
            except BaseException as exc:  # a bug: carried to the caller, who reports it as the region's error
                board.failure = exc
            finally:
                board.finished.set()

    for board in boards:
        threading.Thread(target=run, args=(board,), name=f"region-{board.account}-{board.region}",
                         daemon=True).start()
    for board in boards:
        while not board.finished.wait(POLL_SECONDS):
            reason = limits.reason()
            if reason is not None:
                grace_ends = time.monotonic() + GRACE_SECONDS
                for other in boards:
                    other.finished.wait(max(0.0, grace_ends - time.monotonic()))
                for other in boards:
                    if not other.finished.is_set():
                        other.stopped = other.stopped or reason
                return boards
    return boards
