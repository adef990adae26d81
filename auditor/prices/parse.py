"""One price-list product (attributes + on-demand terms) -> the hourly prices it states.

The Price List API (pricing:GetProducts) and the bulk offer files (JSON and CSV) describe a
product with the same attributes; their names are normalised here (lower case, no spaces or
underscores) so that `instanceName`, "Instance Name" and `instance_name` read the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# What an instance-hour pays for, as the cache and the catalog name it; and "studio-<app type>".
USAGES = ("hosting", "async", "batch", "training", "spot-training", "processing", "notebook", "hyperpod")

# platoinstancetype values (normalised) -> usage.
_PLATO = {
    "hosting": "hosting", "realtimeinference": "hosting", "asyncinf": "async", "asyncinference": "async",
    "batchtransform": "batch", "training": "training", "spottraining": "spot-training",
    "managedspottraining": "spot-training", "processing": "processing", "notebook": "notebook",
    "notebookinstance": "notebook",
}
# The usage-type component between the region prefix and ':ml.<type>' (normalised) -> usage.
_USAGE_COMPONENT = {
    "host": "hosting", "asyncinf": "async", "tsform": "batch", "transform": "batch",
    "batchtransform": "batch", "train": "training", "trainspot": "spot-training",
    "spottrain": "spot-training", "spottraining": "spot-training", "processing": "processing",
    "notebk": "notebook", "notebook": "notebook",
}
_HOURLY_UNITS = {"hrs", "hours", "hour", "hr"}
_INSTANCE = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9-]+$")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")


@dataclass(frozen=True)
class Hardware:
    """An instance type's hardware as the price list states it; None: not stated (`N/A`, absent)."""

    vcpu: int
    memory_gib: float
    gpu_count: int | None  # the `gpu` attribute
    gpu_memory_gib: float | None  # `gpuMemory`: the total over all GPUs
    gpu_model: str | None = None  # `physicalGpu`: "NVIDIA T4 GPU", "AWS Inferentia"; None for none or not stated


@dataclass(frozen=True)
class Product:
    """The part of a product the auditor uses: an ml.* instance-hour in one region."""

    instance_type: str
    region: str
    usage: str
    hardware: Hardware | None


@dataclass(frozen=True)
class PriceRecord:
    instance_type: str
    region: str
    usage: str
    price_per_hour: float
    hardware: Hardware | None


def normalise_key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).lower()


def normalise_attributes(attributes: Mapping[str, Any]) -> dict[str, str]:
    return {normalise_key(k): str(v) for k, v in attributes.items() if v is not None}


# HyperPod cluster nodes: `USE1-Cluster:ml.p5.48xlarge` (instanceType `ml.p5.48xlarge-Cluster`). Read
# from the usage type before platoinstancetype, so that a HyperPod node is never priced as training;
# `ReservedCluster` (reserved capacity) is not an on-demand rate and stays unmapped.
_HYPERPOD_COMPONENT = "cluster"


def usage_of(attributes: Mapping[str, str]) -> str | None:
    """The usage from platoinstancetype, else from the usage type (USE1-Host:ml.m5.xlarge)."""
    usage_type = attributes.get("usagetype", "")
    left = usage_type.split(":", 1)[0]
    component = normalise_key(left.split("-", 1)[1] if "-" in left else left)
    if component == _HYPERPOD_COMPONENT:
        return "hyperpod"
    plato = normalise_key(attributes.get("platoinstancetype", ""))
    if plato in _PLATO:
        return _PLATO[plato]
    if plato.startswith("studio") and len(plato) > len("studio"):
        return studio_usage(plato[len("studio"):])  # Studio-JupyterLab, Studio-CodeEditor, ...
    return _USAGE_COMPONENT.get(component)


def studio_usage(app_type: str) -> str:
    """The usage a Studio app of `app_type` (JupyterLab, CodeEditor, ...) is priced under."""
    return f"studio-{normalise_key(app_type)}"


def instance_type_of(attributes: Mapping[str, str]) -> str | None:
    """instanceName or instanceType; when 'NA' or absent, the type named in the usage type."""
    for key in ("instancename", "instancetype"):
        value = attributes.get(key, "").strip()
        if _INSTANCE.match(value):
            return value
    usage_type = attributes.get("usagetype", "")
    if ":" in usage_type:
        value = usage_type.split(":", 1)[1].strip()
        if _INSTANCE.match(value):
            return value
    return None


def _number(text: str | None) -> float | None:
    if not text:
        return None
    match = _NUMBER.search(text.replace(",", ""))
    return float(match.group()) if match else None


# What the price list writes where it states nothing (`physicalGpu` "None" on CPU types: no model).
_NOT_STATED = {"", "n/a", "na", "none", "null", "-"}
_COUNT = re.compile(r"^[0-9]+$")
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(?:\s*(?:gib|gb))?$", re.IGNORECASE)


def _stated(text: str | None) -> str | None:
    value = (text or "").strip()
    return None if value.lower() in _NOT_STATED else value


def _quantity(text: str | None) -> float | None:
    """A number, alone or with its unit ("16", "16 GiB"); None for anything else: never a number
    read out of a name."""
    match = _QUANTITY.match((_stated(text) or "").replace(",", ""))
    return float(match.group(1)) if match else None


def hardware_of(attributes: Mapping[str, str]) -> Hardware | None:
    """`gpu` is the GPU count and `physicalGpu` the GPU model (AWS's values: `NVIDIA T4 GPU`,
    `NVIDIA Tesla V100 GPU`, `AWS Inferentia`, `N/A`); a count or memory the list does not state
    stays unknown (None), never 0 and never taken from the model's name."""
    vcpu = _quantity(attributes.get("vcpu"))
    memory = _quantity(attributes.get("memory"))
    if vcpu is None or memory is None:
        return None
    count = _stated(attributes.get("gpu"))
    gpu_count = int(count) if count is not None and _COUNT.match(count) else None
    gpu_memory = 0.0 if gpu_count == 0 else _quantity(attributes.get("gpumemory"))
    return Hardware(vcpu=int(vcpu), memory_gib=memory, gpu_count=gpu_count, gpu_memory_gib=gpu_memory,
                    gpu_model=_stated(attributes.get("physicalgpu")) if gpu_count != 0 else None)


def product_of(attributes: Mapping[str, Any]) -> Product | None:
    """None for anything that is not an ml.* instance-hour with a region (storage, data, serverless...)."""
    attrs = normalise_attributes(attributes)
    instance_type = instance_type_of(attrs)
    usage = usage_of(attrs)
    region = attrs.get("regioncode", "").strip()
    if instance_type is None or usage is None or not region:
        return None
    return Product(instance_type, region, usage, hardware_of(attrs))


def hourly_usd(dimensions: Iterable[Mapping[str, Any]]) -> float | None:
    """The first positive USD price per hour among a term's price dimensions."""
    for dimension in dimensions:
        if str(dimension.get("unit", "")).strip().lower() not in _HOURLY_UNITS:
            continue
        price = _number(str((dimension.get("pricePerUnit") or {}).get("USD", "")))
        if price:
            return price
    return None


def on_demand_price(terms: Mapping[str, Any]) -> float | None:
    """The hourly price of a product's OnDemand terms ({offerTermCode: {priceDimensions: {...}}})."""
    for term in (terms or {}).values():
        price = hourly_usd((term.get("priceDimensions") or {}).values())
        if price is not None:
            return price
    return None


def parse_price_item(item: Mapping[str, Any]) -> PriceRecord | None:
    """One PriceList entry of pricing:GetProducts: {"product": {"attributes": ...}, "terms": {"OnDemand": ...}}."""
    product = product_of((item.get("product") or {}).get("attributes") or {})
    if product is None:
        return None
    price = on_demand_price((item.get("terms") or {}).get("OnDemand") or {})
    if price is None:
        return None
    return PriceRecord(product.instance_type, product.region, product.usage, price, product.hardware)
