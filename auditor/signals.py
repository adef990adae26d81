"""SIGINT and SIGTERM turned into a request to stop, for as long as a command needs it: `audit run`
(what was collected is still reported) and `audit apply --yes` (the call under way is finished and
journaled first). The handlers before are put back after."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

# The signals a stop is asked with, by the name the messages give them.
STOP_SIGNALS = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}


@contextlib.contextmanager
def on_stop_signals(stop: Callable[[str], None]) -> Iterator[None]:
    """While inside, SIGINT and SIGTERM call `stop` with the signal's name instead of ending the
    process (only the main thread can install handlers; elsewhere nothing is installed)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}

    def handle(signum: int, _frame: object) -> None:
        stop(STOP_SIGNALS.get(signal.Signals(signum), str(signum)))

    for sig in STOP_SIGNALS:
        signal.signal(sig, handle)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
