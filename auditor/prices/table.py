"""The price table fetched from AWS (or imported from an offer file), and its cache on disk.

The cache is one JSON file, `prices/sagemaker-prices.json` in the user's data directory, with a
`cache_version`; each region records when and from where its prices came, so refreshing one
region keeps the others. Writes go to a temporary file renamed over the old one: a failed import
or refresh never leaves a half-written cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import platformdirs

from auditor.errors import AuditorError
from auditor.files import write_atomic
from auditor.prices.parse import Hardware, PriceRecord

# 2: hardware states `gpu_model`, and a GPU count or memory the price list does not state is null.
# A version 1 cache is read without its hardware: it took the GPU count from `physicalGpu`, the model.
CACHE_VERSION = 2
_READABLE_VERSIONS = (1, CACHE_VERSION)


class PriceCacheError(AuditorError):
    """The cache or an offer file cannot be used; the message is one line naming the file."""


@dataclass(frozen=True)
class RegionPrices:
    fetched_at: str  # ISO date (UTC) the prices were read
    source: str  # "price-list-api" | "offer-file <name>"
    # usage -> instance type -> USD per hour
    prices: dict[str, dict[str, float]] = field(default_factory=dict)

    def price(self, usage: str, instance_type: str) -> float | None:
        return self.prices.get(usage, {}).get(instance_type)


@dataclass(frozen=True)
class PriceTable:
    regions: dict[str, RegionPrices] = field(default_factory=dict)
    hardware: dict[str, Hardware] = field(default_factory=dict)

    @property
    def instance_types(self) -> set[str]:
        return {t for r in self.regions.values() for by_type in r.prices.values() for t in by_type}

    def merged(self, newer: PriceTable) -> PriceTable:
        """This table with the regions `newer` has replaced by `newer`'s."""
        return PriceTable(regions={**self.regions, **newer.regions}, hardware={**self.hardware, **newer.hardware})


def build_table(records: Iterable[PriceRecord], fetched_at: str, source: str) -> PriceTable:
    prices: dict[str, dict[str, dict[str, float]]] = {}
    hardware: dict[str, Hardware] = {}
    for record in records:
        by_usage = prices.setdefault(record.region, {}).setdefault(record.usage, {})
        # Several products can price one type (e.g. per operating mode): keep the lowest on-demand rate.
        old = by_usage.get(record.instance_type)
        by_usage[record.instance_type] = record.price_per_hour if old is None else min(old, record.price_per_hour)
        if record.hardware is not None:
            hardware.setdefault(record.instance_type, record.hardware)
    return PriceTable(
        regions={region: RegionPrices(fetched_at, source, by_usage) for region, by_usage in prices.items()},
        hardware=hardware,
    )


def default_cache_path() -> Path:
    return Path(platformdirs.user_data_dir("sagemaker-auditor")) / "prices" / "sagemaker-prices.json"


def table_to_dict(table: PriceTable) -> dict[str, Any]:
    return {
        "cache_version": CACHE_VERSION,
        "currency": "USD",
        "regions": {
            region: {"fetched_at": r.fetched_at, "source": r.source, "prices": r.prices}
            for region, r in sorted(table.regions.items())
        },
        "hardware": {
            t: {"vcpu": h.vcpu, "memory_gib": h.memory_gib, "gpu_count": h.gpu_count,
                "gpu_memory_gib": h.gpu_memory_gib, "gpu_model": h.gpu_model}
            for t, h in sorted(table.hardware.items())
        },
    }


def table_from_dict(data: Any, where: str) -> PriceTable:
    if not isinstance(data, dict) or data.get("cache_version") not in _READABLE_VERSIONS:
        version = data.get("cache_version") if isinstance(data, dict) else None
        raise PriceCacheError(f"{where}: not a price cache of version {CACHE_VERSION} (found {version!r})")
    try:
        regions = {
            region: RegionPrices(
                fetched_at=str(r["fetched_at"]), source=str(r["source"]),
                prices={usage: {t: float(p) for t, p in by_type.items()} for usage, by_type in r["prices"].items()},
            )
            for region, r in data["regions"].items()
        }
        hardware = {
            t: Hardware(int(h["vcpu"]), float(h["memory_gib"]), _optional(h["gpu_count"], int),
                        _optional(h["gpu_memory_gib"], float), _optional(h.get("gpu_model"), str))
            for t, h in data.get("hardware", {}).items()
        } if data["cache_version"] == CACHE_VERSION else {}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise PriceCacheError(f"{where}: damaged price cache ({type(exc).__name__}: {exc})") from None
    return PriceTable(regions, hardware)


T = TypeVar("T")


def _optional(value: Any, kind: Callable[[Any], T]) -> T | None:
    return None if value is None else kind(value)


def read_cache(path: Path) -> PriceTable | None:
    """None when there is no cache; PriceCacheError when it cannot be read."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PriceCacheError(f"cannot read the price cache {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PriceCacheError(f"{path}: damaged price cache (not JSON: {exc.msg} at line {exc.lineno})") from None
    return table_from_dict(data, str(path))


def write_cache(path: Path, table: PriceTable) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(table_to_dict(table), indent=1, sort_keys=True))
    except OSError as exc:
        raise PriceCacheError(f"cannot write the price cache {path}: {exc.strerror or exc}") from None


def oldest_fetch(table: PriceTable, regions: Iterable[str] | None = None) -> str | None:
    """The oldest fetch date among `regions` (all when None); None if one of them is missing."""
    wanted = list(table.regions) if regions is None else list(regions)
    dates = []
    for region in wanted:
        if region not in table.regions:
            return None
        dates.append(table.regions[region].fetched_at)
    return min(dates) if dates else None
