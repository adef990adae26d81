"""How the JSON report writes values (times, money, utilisation), shared by every kind's section."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from auditor.models import Resource, VariantUtilization


def iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def iso_or_none(value: datetime | None) -> str | None:
    return None if value is None else iso(value)


def money(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def utilization_summary(utilization: VariantUtilization | None) -> dict[str, Any] | None:
    """The resources that were measured, each {avg, p95, max}; None when nothing was."""
    if utilization is None:
        return None
    return {r.value: {"avg": u.avg, "p95": u.p95, "max": u.max} for r, u in utilization.by_resource.items()}


def utilization_by_resource(util: VariantUtilization | None) -> dict[str, Any]:
    """Every resource, null where it was not measured."""
    out: dict[str, Any] = {}
    for resource in Resource:
        figures = util.get(resource) if util else None
        out[resource.value] = (
            None if figures is None else {"avg": figures.avg, "p95": figures.p95, "max": figures.max}
        )
    return out
