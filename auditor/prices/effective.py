"""The account's effective rates (pricing.basis = "effective"): Cost Explorer's amortized cost
over usage quantity per usage type, applied where the account used a type; list prices elsewhere."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from auditor.catalog import HOURS_PER_MONTH, Catalog, PriceOrigin
from auditor.prices.parse import instance_type_of, usage_of

# Usage-type prefixes (what AWS puts before the '-') -> region.
REGION_PREFIXES = {
    "USE1": "us-east-1", "USE2": "us-east-2", "USW1": "us-west-1", "USW2": "us-west-2",
    "CAN1": "ca-central-1", "SAE1": "sa-east-1", "EU": "eu-west-1", "EUW1": "eu-west-1",
    "EUW2": "eu-west-2", "EUW3": "eu-west-3", "EUC1": "eu-central-1", "EUC2": "eu-central-2",
    "EUN1": "eu-north-1", "EUS1": "eu-south-1", "EUS2": "eu-south-2", "APN1": "ap-northeast-1",
    "APN2": "ap-northeast-2", "APN3": "ap-northeast-3", "APS1": "ap-southeast-1",
    "APS2": "ap-southeast-2", "APS3": "ap-south-1", "APS4": "ap-southeast-3", "APS5": "ap-south-2",
    "APE1": "ap-east-1", "MES1": "me-south-1", "MEC1": "me-central-1", "AFS1": "af-south-1",
    "ILC1": "il-central-1", "UGW1": "us-gov-west-1", "UGE1": "us-gov-east-1",
}


@dataclass(frozen=True)
class UsageCost:
    usage_type: str  # e.g. EUC1-Host:ml.m5.xlarge
    cost_usd: float  # amortized
    quantity: float  # hours for instance usage


@dataclass(frozen=True)
class UsageRate:
    region: str
    instance_type: str
    usage: str  # hosting | training | ...
    cost_usd: float
    hours: float

    @property
    def rate(self) -> float:
        return self.cost_usd / self.hours


def region_of(usage_type: str) -> str | None:
    left = usage_type.split(":", 1)[0]
    prefix = left.split("-", 1)[0] if "-" in left else ""
    return REGION_PREFIXES.get(prefix) if prefix else "us-east-1"  # us-east-1's usage types may have none


def usage_rates(usages: Iterable[UsageCost]) -> list[UsageRate]:
    rates = []
    for u in usages:
        attrs = {"usagetype": u.usage_type}
        region, instance_type, usage = region_of(u.usage_type), instance_type_of(attrs), usage_of(attrs)
        if region and instance_type and usage and u.quantity > 0 and u.cost_usd >= 0:
            rates.append(UsageRate(region, instance_type, usage, u.cost_usd, u.quantity))
    return rates


def apply_effective_rates(catalog: Catalog, rates: Iterable[UsageRate], as_of: str) -> Catalog:
    """Hosting and training prices of the types the account used, at its own rate per hour."""
    origin = PriceOrigin("cost-explorer", as_of, "effective")
    shapes = dict(catalog.shapes)
    origins = dict(catalog.price_origins)
    for r in rates:
        shape = shapes.get(r.instance_type)
        if shape is None or r.usage not in ("hosting", "training"):
            continue
        rate = round(r.rate, 6)
        if r.usage == "hosting":
            shape = replace(shape, hosting_price_per_hour={**shape.hosting_price_per_hour, r.region: rate})
        else:
            shape = replace(shape, training_price_per_hour={**shape.training_price_per_hour, r.region: rate})
        shapes[r.instance_type] = shape
        origins[(r.usage, r.instance_type, r.region)] = origin
    return replace(catalog, shapes=shapes, price_origins=origins)


def billed_hosting_monthly(rates: Iterable[UsageRate], days: int) -> dict[str, float]:
    """Per region, real-time hosting billed over the `days` read, scaled to a 730-hour month."""
    billed: dict[str, float] = {}
    for r in rates:
        if r.usage == "hosting":
            billed[r.region] = billed.get(r.region, 0.0) + r.cost_usd * HOURS_PER_MONTH / (days * 24)
    return {region: round(value, 2) for region, value in billed.items()}
