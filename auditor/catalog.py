"""The instance catalog: hardware shape and hosting list price of every ml.* hosting type.

The data file records its source and date; reports quote both, since list prices change.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

HOURS_PER_MONTH = 730
SERVERLESS_MEMORY_SIZES_MB = (1024, 2048, 3072, 4096, 5120, 6144)


@dataclass(frozen=True)
class InstanceShape:
    instance_type: str
    family: str
    vcpu: int
    memory_gib: float
    gpu_count: int
    accelerator: str | None  # GPU or Inferentia model; None for CPU-only shapes
    accelerator_memory_gib: float  # total over all accelerators
    architecture: str  # x86_64 | arm64
    burstable: bool
    hosting_price_per_hour: dict[str, float]
    price_source: str  # "list" | "derived"
    training_price_per_hour: dict[str, float] = field(default_factory=dict)  # empty: not offered for training
    # False: the price list does not state the GPU count or GPU memory (`N/A`) of a type the
    # bundled snapshot lacks; such a type is priced but never judged on GPUs nor advised.
    accelerators_known: bool = True

    @property
    def has_accelerator(self) -> bool:
        return self.gpu_count > 0


@dataclass(frozen=True)
class PriceOrigin:
    """Where one price came from: `source` "bundled" (this package's snapshot), "price-list-api",
    "offer-file" or "cost-explorer"; `as_of` the date; `kind` "list", "derived" (scaled from an
    EC2 ratio) or "effective" (what the account paid, from Cost Explorer)."""

    source: str
    as_of: str
    kind: str


@dataclass(frozen=True)
class Catalog:
    source: str
    as_of: str
    shapes: dict[str, InstanceShape]
    # Use this region's prices where a region has none of its own (config pricing.assume_prices_from).
    fallback_price_region: str | None = None
    # Serverless Inference compute price per second, by region and memory size (MB).
    serverless_price_per_second: dict[str, dict[int, float]] = field(default_factory=dict)
    # (usage "hosting" | "training", instance type, region) -> where that price came from;
    # a price without an entry is the bundled snapshot's (see InstanceShape.price_source).
    price_origins: dict[tuple[str, str, str], PriceOrigin] = field(default_factory=dict)
    # The rates of the other usages, from the price cache: usage ("async", "batch", "processing",
    # "notebook", "studio-jupyterlab", ...) -> instance type -> region -> USD per hour. The bundled
    # snapshot has none: those usages are priced at the hosting rate of the type, and say so.
    usage_prices: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def rate(self, instance_type: str, region: str, usage: str = "hosting") -> tuple[float, str] | None:
        """The hourly rate of `usage` and the usage whose rate it is (the price basis): its own rate
        where the prices have one, else the hosting rate of the type ("hosting"); None: neither."""
        if usage == "training":
            training = self.training_price(instance_type, region)
            return None if training is None else (training, "training")
        own = self.own_rate(instance_type, region, usage)
        if own is not None:
            return own, usage
        hosting = self.hourly_price(instance_type, region)
        return None if hosting is None else (hosting, "hosting")

    def own_rate(self, instance_type: str, region: str, usage: str) -> float | None:
        """`usage`'s own rate for the type, never another usage's (None: the prices have none)."""
        if usage in ("hosting", "training") or instance_type not in self.shapes:
            return None
        by_region = self.usage_prices.get(usage, {}).get(instance_type)
        return None if by_region is None else self._in_region(by_region, region)

    def price_origin(self, instance_type: str, region: str, usage: str = "hosting") -> PriceOrigin | None:
        """The origin of the price `rate` returns for `usage`; None: no price."""
        shape = self.shapes.get(instance_type)
        if shape is None:
            return None
        if usage not in ("hosting", "training"):
            if self.own_rate(instance_type, region, usage) is None:
                return self.price_origin(instance_type, region, "hosting")
            own_region = region if region in self.usage_prices[usage][instance_type] else self.fallback_price_region
            return self.price_origins.get((usage, instance_type, own_region or region))
        table = shape.hosting_price_per_hour if usage == "hosting" else shape.training_price_per_hour
        if region not in table:
            if not self.fallback_price_region or self.fallback_price_region not in table:
                return None
            region = self.fallback_price_region
        return self.price_origins.get((usage, instance_type, region)) or PriceOrigin(
            "bundled", self.as_of, shape.price_source)

    def serverless_price(self, memory_mb: int, region: str) -> float | None:
        prices = self._in_region(self.serverless_price_per_second, region)
        return None if prices is None else prices.get(memory_mb)

    def shape(self, instance_type: str) -> InstanceShape | None:
        return self.shapes.get(instance_type)

    @property
    def priced_regions(self) -> tuple[str, ...]:
        return tuple(sorted({r for s in self.shapes.values() for r in s.hosting_price_per_hour}))

    def _in_region(self, prices: dict[str, Any], region: str) -> Any:
        """The region's entry, or the fallback region's (pricing.assume_prices_from)."""
        if region in prices:
            return prices[region]
        return prices.get(self.fallback_price_region) if self.fallback_price_region else None

    def hourly_price(self, instance_type: str, region: str) -> float | None:
        """The on-demand hosting (real-time inference, batch transform) price per hour."""
        shape = self.shapes.get(instance_type)
        return None if shape is None else self._in_region(shape.hosting_price_per_hour, region)

    def training_price(self, instance_type: str, region: str) -> float | None:
        shape = self.shapes.get(instance_type)
        return None if shape is None else self._in_region(shape.training_price_per_hour, region)

    def priced_like(self, instance_type: str, region: str, usage: str) -> Callable[[str, str], float | None]:
        """Prices of other types on the same basis as `instance_type`'s `usage` rate: its own
        usage's rates if it has one, else hosting rates. Advice never compares a processing rate
        with a hosting one; a type without a rate on that basis has no price."""
        found = self.rate(instance_type, region, usage)
        basis = usage if found is None else found[1]
        if basis == "hosting":
            return self.hourly_price
        if basis == "training":
            return self.training_price
        return lambda other, where: self.own_rate(other, where, basis)

    def usage_price(self, instance_type: str, region: str, usage: str) -> float | None:
        """`rate`'s price alone: what an hour of `usage` costs (its own rate, else hosting's)."""
        found = self.rate(instance_type, region, usage)
        return None if found is None else found[0]

    def monthly_cost(self, instance_type: str, count: float, region: str, usage: str = "hosting") -> float | None:
        price = self.usage_price(instance_type, region, usage)
        return None if price is None else round(price * count * HOURS_PER_MONTH, 2)


@cache
def _load_bundled_data() -> dict:
    text = resources.files("auditor.data").joinpath("instances.json").read_text("utf-8")
    return json.loads(text)


def load_catalog(fallback_price_region: str | None = None) -> Catalog:
    data = _load_bundled_data()
    shapes = {
        row["instance_type"]: InstanceShape(
            instance_type=row["instance_type"],
            family=row["family"],
            vcpu=int(row["vcpu"]),
            memory_gib=float(row["memory_gib"]),
            gpu_count=int(row["gpu_count"]),
            accelerator=row["accelerator"],
            accelerator_memory_gib=float(row["accelerator_memory_gib"]),
            architecture=row["architecture"],
            burstable=bool(row["burstable"]),
            hosting_price_per_hour={k: float(v) for k, v in row["hosting_price_per_hour"].items()},
            price_source=row["price_source"],
            training_price_per_hour={k: float(v) for k, v in row.get("training_price_per_hour", {}).items()},
        )
        for row in data["instances"]
    }
    # The few rates of other usages the snapshot holds (HyperPod nodes), with their own date.
    usage_prices = {usage: {t: {r: float(v) for r, v in by_region.items()} for t, by_region in types.items()}
                    for usage, types in data.get("usage_prices", {}).items()}
    origin = PriceOrigin("bundled", data.get("usage_prices_as_of", data["as_of"]), "list")
    return Catalog(
        source=data["source"],
        as_of=data["as_of"],
        shapes=shapes,
        fallback_price_region=fallback_price_region,
        serverless_price_per_second={
            region: {int(mb): float(price) for mb, price in prices.items()}
            for region, prices in data["serverless"]["price_per_second"].items()
        },
        usage_prices=usage_prices,
        price_origins={(usage, t, r): origin for usage, types in usage_prices.items()
                       for t, by_region in types.items() for r in by_region},
    )
