"""Traffic figures the rules and the pricing share: requests per month, time per request."""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.models import Window

HOURS_PER_MONTH = 730


def per_month(total: float, window: Window) -> float:
    """Scale a total over the window to a 730-hour month."""
    hours = (window.end - window.start).total_seconds() / 3600
    return total * HOURS_PER_MONTH / hours if hours else 0.0


def format_duration(seconds: float | None, unknown: str = "n/a") -> str:
    """'2 h 05 min' or '36 min'."""
    if seconds is None:
        return unknown
    hours, rest = divmod(int(seconds), 3600)
    return f"{hours} h {rest // 60:02d} min" if hours else f"{rest // 60} min"


def mean_duration_seconds(raw: pd.DataFrame) -> float | None:
    """Invocation-weighted mean of ModelLatency + OverheadLatency (published in microseconds)."""
    if "ModelLatency:Average" not in raw.columns or "Invocations:Sum" not in raw.columns:
        return None
    frame = raw[["ModelLatency:Average", "Invocations:Sum"]].dropna()
    weights = frame["Invocations:Sum"].to_numpy(dtype="float64")
    if not weights.sum():
        return None
    latency = frame["ModelLatency:Average"].to_numpy(dtype="float64")
    if "OverheadLatency:Average" in raw.columns:
        overhead = raw["OverheadLatency:Average"].reindex(frame.index).fillna(0.0).to_numpy(dtype="float64")
        latency = latency + overhead
    return float(np.average(latency, weights=weights)) / 1e6


def compute_seconds_per_month(raw: pd.DataFrame, invocations: float | None, window: Window) -> float | None:
    """Billed serverless compute: invocations x mean duration, per month. None when unknown."""
    if not invocations:
        return 0.0  # no requests, no billed compute
    duration = mean_duration_seconds(raw)
    return None if duration is None else per_month(invocations, window) * duration
