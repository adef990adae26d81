"""The trend test on synthetic series, including the edge of significance."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from auditor.analyse.trend import is_rising, mann_kendall_p_increasing, theil_sen, trend

HOURS = 14 * 24


def hourly(values: np.ndarray) -> pd.Series:
    return pd.Series(values, index=pd.date_range("2026-11-16", periods=values.size, freq="h", tz="UTC"))


def test_theil_sen_recovers_a_line_despite_outliers() -> None:
    t = np.arange(100, dtype=float)
    y = 3.0 + 0.5 * t
    y[[10, 50, 90]] = 1000.0  # three wild outliers
    slope, intercept = theil_sen(t, y)
    assert slope == pytest.approx(0.5)
    assert intercept == pytest.approx(3.0)


def test_clear_rise_is_a_trend() -> None:
    rng = np.random.default_rng(1)
    values = np.linspace(10, 40, HOURS) + rng.normal(0, 2, HOURS)
    result = trend(hourly(values))
    assert result is not None
    assert result.slope_per_day == pytest.approx(30 / 14, rel=0.1)
    assert result.fitted_start == pytest.approx(10, abs=1.0) and result.fitted_end == pytest.approx(40, abs=1.0)
    # The levels reported are observed: the medians of the first and the last day.
    assert result.start_level == pytest.approx(10 + 30 / 28, abs=1.0)
    assert result.end_level == pytest.approx(40 - 30 / 28, abs=1.0)
    assert result.p_value < 1e-10
    assert is_rising(result, p_value=0.01, min_relative_rise=0.5)


def test_flat_noisy_series_with_one_spike_is_not_a_trend() -> None:
    rng = np.random.default_rng(2)
    values = 20 + rng.normal(0, 3, HOURS)
    values[-5] = 500.0  # one burst near the end
    result = trend(hourly(values))
    assert result is not None
    assert not is_rising(result, p_value=0.01, min_relative_rise=0.5)
    assert abs(result.end_level - result.start_level) < 3


def test_daily_cycle_without_growth_is_not_a_trend() -> None:
    hours = np.arange(HOURS)
    values = 50 + 30 * np.sin(2 * math.pi * hours / 24)
    assert not is_rising(trend(hourly(values)), p_value=0.01, min_relative_rise=0.5)


def test_significant_but_small_rise_is_not_reported() -> None:
    rng = np.random.default_rng(3)
    values = np.linspace(100, 110, HOURS) + rng.normal(0, 0.5, HOURS)  # +10%, very significant
    result = trend(hourly(values))
    assert result is not None and result.p_value < 1e-6
    assert not is_rising(result, p_value=0.01, min_relative_rise=0.5)
    assert is_rising(result, p_value=0.01, min_relative_rise=0.05)


def test_edge_of_significance() -> None:
    # Twelve points: S is known exactly, so the p-value can be checked by hand.
    increasing = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], dtype=float)
    n = 12
    s = n * (n - 1) / 2  # every pair rises
    z = (s - 1) / math.sqrt(n * (n - 1) * (2 * n + 5) / 18)
    assert mann_kendall_p_increasing(increasing) == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)))
    # A short, weak rise sits on either side of a threshold depending on where it is set.
    weak = np.array([5, 3, 6, 4, 7, 5, 4, 6, 8, 5, 7, 6], dtype=float)
    p = mann_kendall_p_increasing(weak)
    assert 0.01 < p < 0.2
    result = trend(hourly(weak))
    assert result is not None
    assert is_rising(result, p_value=p * 1.01, min_relative_rise=0.0)
    assert not is_rising(result, p_value=p * 0.99, min_relative_rise=0.0)


def test_ties_and_zeros_are_handled() -> None:
    values = np.zeros(HOURS)
    assert mann_kendall_p_increasing(values) == 1.0
    result = trend(hourly(values))
    assert result is not None and result.relative_rise == 0.0
    assert not is_rising(result, p_value=0.05, min_relative_rise=0.5)
    # A queue that starts empty and builds up: infinite relative rise, judged by the floor.
    growing = np.concatenate([np.zeros(100), np.linspace(0, 30, HOURS - 100)])
    result = trend(hourly(growing))
    assert result is not None
    assert is_rising(result, p_value=0.01, min_relative_rise=0.5, min_end_level=1.0)
    assert not is_rising(result, p_value=0.01, min_relative_rise=0.5, min_end_level=1000.0)


def test_too_few_points() -> None:
    assert trend(hourly(np.array([1.0, 2.0]))) is None
    assert not is_rising(None, 0.05, 0.0)
