"""Idle stretches of an endpoint, hour by hour, and the instance-hours they ran: what the rules that
let an endpoint scale to zero (async-scale-from-zero, component-scale-to-zero) save. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.models import price_usage
from auditor.models import Window

INSTANCE_SAMPLES = "CPUUtilization:SampleCount"  # instances x minutes in a period (one sample a minute each)


@dataclass(frozen=True)
class IdleRun:
    """Consecutive idle periods: from `start`, `hours` long, and the instance-hours that ran in them
    after the first `lag_hours` (the time autoscaling takes to reach zero once the work stops)."""

    start: datetime
    hours: int
    saved_instance_hours: float


def hourly_grid(window: Window | None) -> pd.DatetimeIndex | None:
    """The window's hours (UTC), as the collector's frames are indexed; None unless it is hourly."""
    if window is None or window.period_seconds != 3600 or window.points_per_series <= 0:
        return None
    grid = pd.date_range(window.start, periods=window.points_per_series, freq="3600s")
    return grid if grid.tz is not None else grid.tz_localize("UTC")


def on_grid(frame: pd.DataFrame, column: str, grid: pd.DatetimeIndex) -> pd.Series:
    """A frame's column on the grid (NaN where nothing was published, or no such column)."""
    return (frame[column] if column in frame.columns else pd.Series(dtype="float64")).reindex(grid)


def idle_runs(idle: pd.Series, min_hours: int) -> list[tuple[int, int]]:
    """(first position, length) of each run of True at least `min_hours` long in an hourly mask."""
    values = idle.to_numpy(dtype=bool)
    runs, first = [], None
    for position, quiet in enumerate([*values, False]):
        if quiet and first is None:
            first = position
        elif not quiet and first is not None:
            if position - first >= min_hours:
                runs.append((first, position - first))
            first = None
    return runs


def instances_per_hour(variant: VariantAssessment, index: pd.Index) -> pd.Series:
    """The instances that ran in each period of `index`: CPUUtilization's sample count / 60 where the
    variant's count moves (0 in a period without a sample: nothing ran), else its count."""
    if variant.variant.scales and INSTANCE_SAMPLES in variant.raw.columns:
        return (variant.raw[INSTANCE_SAMPLES].reindex(index) / 60.0).fillna(0.0)
    return pd.Series(float(variant.variant.instance_count), index=index)


def saved_runs(idle: pd.Series, instances: pd.Series, min_hours: int, lag_hours: float) -> tuple[IdleRun, ...]:
    """The idle runs of an hourly mask, each with the instance-hours scaling to zero would have saved:
    those after the first `lag_hours` of the run."""
    found = []
    counts = instances.reindex(idle.index).fillna(0.0).to_numpy(dtype="float64")
    for first, length in idle_runs(idle, min_hours):
        weights = np.clip(np.arange(length) + 1 - lag_hours, 0.0, 1.0)  # the lag's hours save nothing
        saved = float(np.dot(counts[first:first + length], weights))
        found.append(IdleRun(pd.Timestamp(idle.index[first]).to_pydatetime(), length, round(saved, 2)))
    return tuple(found)


def runs_evidence(runs: tuple[IdleRun, ...]) -> list[dict[str, object]]:
    """The runs as a finding's evidence carries them (JSON-safe)."""
    return [{"from": r.start.isoformat(), "hours": r.hours, "saved_instance_hours": r.saved_instance_hours}
            for r in runs]


def runs_of(evidence: list[dict[str, object]]) -> tuple[IdleRun, ...]:
    """The runs a finding's evidence carries (`runs_evidence`)."""
    return tuple(IdleRun(pd.Timestamp(str(r["from"])).to_pydatetime(), int(str(r["hours"])),
                         float(str(r["saved_instance_hours"]))) for r in evidence)


def monthly_saving(runs: tuple[IdleRun, ...], hourly_rate: float, window: Window) -> float:
    """The runs' saved instance-hours at `hourly_rate`, per month (the window scaled to a month)."""
    window_hours = max((window.end - window.start).total_seconds() / 3600, 1.0)
    return round(hourly_rate * sum(r.saved_instance_hours for r in runs) * HOURS_PER_MONTH / window_hours, 2)


def idle_saving(evidence: Mapping[str, Any], assessment: EndpointAssessment, va: VariantAssessment,
                catalog: Catalog) -> tuple[float, float] | None:
    """The variant's monthly cost and what the idle stretches of `evidence["idle_stretches"]` save
    of it a month at its list price (never more than it costs); None: no list price, or no window."""
    variant, window = va.variant, assessment.window
    rate = (catalog.usage_price(variant.instance_type, assessment.endpoint.region, price_usage(assessment.endpoint))
            if variant.instance_type else None)
    if rate is None or va.monthly_cost_usd is None or window is None:
        return None
    current = round(va.monthly_cost_usd, 2)
    return current, min(current, monthly_saving(runs_of(evidence["idle_stretches"]), rate, window))

def runs_text(runs: tuple[IdleRun, ...], limit: int = 3) -> str:
    """'12 h from Tue 03 Mar 01:00 UTC, ...' for the longest runs, and how many more."""
    longest = sorted(runs, key=lambda r: (-r.hours, r.start))[:limit]
    text = ", ".join(f"{r.hours} h from {r.start:%a %d %b %H:%M} UTC" for r in sorted(longest, key=lambda r: r.start))
    return text + (f" and {len(runs) - limit} more" if len(runs) > limit else "")
