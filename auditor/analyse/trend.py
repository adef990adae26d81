"""A robust test for a rising series: Theil-Sen slope with a Mann-Kendall significance test.

Both use only the order of pairs of points, so one spike moves neither much: a flat, noisy
queue with a single burst is not a trend. A trend must also be large: the fitted line must rise
by at least `min_relative_rise` of its starting level over the window (and end above an
absolute floor where the start is near zero), so a statistically significant creep of a few
percent is not reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class TrendResult:
    n: int
    slope_per_day: float  # Theil-Sen, in the series' unit per day
    start_level: float  # observed: the median of the first day's points (never below zero)
    end_level: float  # observed: the median of the last day's points
    p_value: float  # one-sided Mann-Kendall, for an increasing trend
    relative_rise: float  # of the fitted line: (end - start) / start; inf when the start is <= 0 and the end is not
    fitted_start: float = 0.0  # the fitted line at the first point (may be below zero: not a level)
    fitted_end: float = 0.0

    def as_evidence(self, scale: float = 1.0, digits: int = 3) -> dict[str, float | int | str | None]:
        return {
            "slope_per_day": round(self.slope_per_day * scale, digits),
            "start_level": round(self.start_level * scale, digits),
            "end_level": round(self.end_level * scale, digits),
            "levels": "observed: medians of the first and last day",
            "p_value": float(f"{self.p_value:.3g}"),
            "relative_rise": round(self.relative_rise, 3) if math.isfinite(self.relative_rise) else None,
            "points": self.n,
        }


@cache
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, k=1)


def mann_kendall_p_increasing(values: np.ndarray) -> float:
    """One-sided p-value of the Mann-Kendall test against 'no increasing trend', with the
    variance corrected for ties (zeros are common in queue metrics)."""
    n = values.size
    if n < 3:
        return 1.0
    i, j = _pairs(n)
    s = float(np.sign(values[j] - values[i]).sum())
    _, counts = np.unique(values, return_counts=True)
    ties = counts[counts > 1].astype(float)
    variance = (n * (n - 1) * (2 * n + 5) - float((ties * (ties - 1) * (2 * ties + 5)).sum())) / 18.0
    if variance <= 0:
        return 1.0
    if s > 0:
        z = (s - 1) / math.sqrt(variance)
    elif s < 0:
        z = (s + 1) / math.sqrt(variance)
    else:
        z = 0.0
    return 0.5 * math.erfc(z / math.sqrt(2))


def theil_sen(times: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """(slope, intercept): the median of pairwise slopes, and the median of the residual levels."""
    i, j = _pairs(times.size)
    dt = times[j] - times[i]
    keep = dt != 0
    slope = float(np.median((values[j] - values[i])[keep] / dt[keep]))
    intercept = float(np.median(values - slope * times))
    return slope, intercept


def trend(series: pd.Series) -> TrendResult | None:
    """The trend of a time-indexed series, or None with fewer than 3 points."""
    clean = series.dropna()
    if clean.size < 3:
        return None
    index = pd.DatetimeIndex(clean.index)
    days = (index - index[0]).total_seconds().to_numpy() / 86400.0
    values = clean.to_numpy(dtype="float64")
    slope, intercept = theil_sen(days, values)
    start, end = intercept, intercept + slope * days[-1]
    relative = (end - start) / start if start > 0 else (math.inf if end > 0 else 0.0)
    # Levels a reader can check on a graph: what the first and last day really showed.
    first_day, last_day = values[days <= days[0] + 1.0], values[days >= days[-1] - 1.0]
    return TrendResult(
        n=int(values.size),
        slope_per_day=slope,
        start_level=max(0.0, float(np.median(first_day))),
        end_level=max(0.0, float(np.median(last_day))),
        p_value=mann_kendall_p_increasing(values),
        relative_rise=relative,
        fitted_start=start,
        fitted_end=end,
    )


def judge_rising(
    series: pd.Series, p_value: float, min_relative_rise: float, min_end_level: float = 0.0
) -> tuple[TrendResult | None, dict[str, float | int | str | None]]:
    """(the trend if rising, else None; its evidence). The Mann-Kendall screen runs first: the
    slope of a series that is not significant is not worth its O(n^2) median."""
    values = series.dropna().to_numpy(dtype="float64")
    p = mann_kendall_p_increasing(values)
    if p >= p_value:
        return None, {"p_value": float(f"{p:.3g}"), "points": int(values.size)}
    result = trend(series)
    if result is None:
        return None, {"p_value": float(f"{p:.3g}"), "points": int(values.size)}
    rising = is_rising(result, p_value, min_relative_rise, min_end_level)
    return (result if rising else None), result.as_evidence()


def is_rising(result: TrendResult | None, p_value: float, min_relative_rise: float, min_end_level: float = 0.0) -> bool:
    return (
        result is not None
        and result.slope_per_day > 0
        and result.p_value < p_value
        and result.relative_rise >= min_relative_rise
        and result.end_level >= min_end_level
    )


def recent_series(frame: pd.DataFrame, column: str, days: int) -> pd.Series | None:
    """The column's points in the last `days` (0: all of them), without gaps; None under 3 points."""
    if column not in frame.columns:
        return None
    series = frame[column]
    if days:
        series = series[series.index >= series.index.max() - pd.Timedelta(days=days)]
    series = series.dropna()
    return series if series.size >= 3 else None


def rise_text(result: TrendResult) -> str:
    """The rise between the observed levels, as a reader would compute it from them."""
    if result.start_level <= 0:
        return "from zero"
    return f"{(result.end_level - result.start_level) / result.start_level * 100:+.0f}%"
