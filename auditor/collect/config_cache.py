"""Endpoint config descriptions kept between runs (a config never changes once created): in memory
for one run, or in the history (auditor.history.store.StoredConfigCache) across runs."""

from __future__ import annotations

import threading
from typing import Any, Protocol


class ConfigCache(Protocol):
    """Endpoint config descriptions kept between runs: a config never changes once created."""

    def get(self, account_id: str, region: str, name: str) -> dict[str, Any] | None: ...

    def put(self, account_id: str, region: str, name: str, description: dict[str, Any]) -> None: ...


class MemoryConfigCache:
    """For one run (or --no-history): endpoints that share a config describe it once."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, account_id: str, region: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._items.get((account_id, region, name))

    def put(self, account_id: str, region: str, name: str, description: dict[str, Any]) -> None:
        with self._lock:
            self._items[(account_id, region, name)] = description
