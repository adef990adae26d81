"""The bundled catalog with the price table over it: every price the table has replaces the
snapshot's (a `derived` one too), and instance types the snapshot does not know are added from
the table's hardware attributes."""

from __future__ import annotations

import re
from dataclasses import replace

from auditor.catalog import Catalog, InstanceShape, PriceOrigin
from auditor.prices.parse import Hardware
from auditor.prices.table import PriceTable

_GRAVITON_FAMILY = re.compile(r"^[a-z]+[0-9]+[a-z]*g[a-z]*$")


def _origin_source(source: str) -> str:
    return "offer-file" if source.startswith("offer-file") else source


def shape_from_hardware(instance_type: str, hardware: Hardware) -> InstanceShape:
    """A catalog shape for a type the snapshot lacks. The accelerator is the price list's
    `physicalGpu` model; where it names none, the family's, so advice never moves such a type to
    another family. A GPU count or memory the list does not state leaves the shape's
    accelerators unknown: priced, never judged on GPUs."""
    family = instance_type.split(".")[1]
    known = hardware.gpu_count is not None and hardware.gpu_memory_gib is not None
    gpu = bool(hardware.gpu_count)
    inferentia = family.startswith(("inf", "trn"))
    arm = not gpu and not inferentia and bool(_GRAVITON_FAMILY.match(family)) and not family.startswith("g")
    accelerated = gpu or inferentia or hardware.gpu_model is not None or not known
    return InstanceShape(
        instance_type=instance_type,
        family=family,
        vcpu=hardware.vcpu,
        memory_gib=hardware.memory_gib,
        gpu_count=hardware.gpu_count or 0,
        accelerator=(hardware.gpu_model or f"{family} accelerator") if accelerated else None,
        accelerator_memory_gib=hardware.gpu_memory_gib or 0.0,
        accelerators_known=known,
        architecture="arm64" if arm else "x86_64",
        burstable=family.startswith("t"),
        hosting_price_per_hour={},
        price_source="list",
    )


def apply_price_table(catalog: Catalog, table: PriceTable) -> Catalog:
    shapes = dict(catalog.shapes)
    origins = dict(catalog.price_origins)
    hosting: dict[str, dict[str, float]] = {t: dict(s.hosting_price_per_hour) for t, s in shapes.items()}
    training: dict[str, dict[str, float]] = {t: dict(s.training_price_per_hour) for t, s in shapes.items()}
    for region, prices in table.regions.items():
        origin = PriceOrigin(_origin_source(prices.source), prices.fetched_at, "list")
        for usage, target in (("hosting", hosting), ("training", training)):
            for instance_type, price in prices.prices.get(usage, {}).items():
                if instance_type not in shapes:
                    hardware = table.hardware.get(instance_type)
                    if hardware is None:
                        continue  # no shape to size it with
                    shapes[instance_type] = shape_from_hardware(instance_type, hardware)
                    hosting[instance_type], training[instance_type] = {}, {}
                target[instance_type][region] = price
                origins[(usage, instance_type, region)] = origin
    # The other usages' own rates (async, batch transform, processing, notebooks, Studio apps).
    usage_prices: dict[str, dict[str, dict[str, float]]] = {
        u: {t: dict(by_region) for t, by_region in by_type.items()} for u, by_type in catalog.usage_prices.items()}
    for region, prices in table.regions.items():
        origin = PriceOrigin(_origin_source(prices.source), prices.fetched_at, "list")
        for usage, by_type in prices.prices.items():
            if usage in ("hosting", "training"):
                continue
            for instance_type, price in by_type.items():
                if instance_type not in shapes:
                    hardware = table.hardware.get(instance_type)
                    if hardware is None:
                        continue
                    shapes[instance_type] = shape_from_hardware(instance_type, hardware)
                    hosting[instance_type], training[instance_type] = {}, {}
                usage_prices.setdefault(usage, {}).setdefault(instance_type, {})[region] = price
                origins[(usage, instance_type, region)] = origin
    shapes = {
        t: replace(s, hosting_price_per_hour=hosting[t], training_price_per_hour=training[t],
                   price_source=_price_source(s, origins))
        for t, s in shapes.items()
    }
    return replace(catalog, shapes=shapes, price_origins=origins, usage_prices=usage_prices)


def _price_source(shape: InstanceShape, origins: dict[tuple[str, str, str], PriceOrigin]) -> str:
    """A `derived` snapshot price is `list` once the table has replaced it in every region it had."""
    if shape.price_source == "derived" and shape.hosting_price_per_hour and all(
            ("hosting", shape.instance_type, r) in origins for r in shape.hosting_price_per_hour):
        return "list"
    return shape.price_source
