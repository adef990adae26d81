"""Fetch metric series with GetMetricData, packed into as few calls as the API allows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import botocore.exceptions
import numpy as np
import pandas as pd
from botocore.client import BaseClient

from auditor.collect.plan import SeriesQuery, batch_queries
from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region, whole_array
from auditor.models import AuditError, Window

# (endpoint, variant or None for endpoint-level series, inference component or None)
FrameKey = tuple[str, str | None, str | None]


@dataclass
class CollectedMetrics:
    """Per variant (and per endpoint, for endpoint-level series) a frame indexed by timestamp,
    one column per 'Metric:Stat'. A series with no datapoint is simply absent, and so is a period
    where no series has one: missing data is told apart from zero by the analysis, never filled in.

    What GetMetricData answers is kept compact until a frame is asked for: each series as float32
    on the window's grid of periods (one shared index), so a region of thousands of endpoints
    holds about 1.3 KB a series, not a pandas Series with an index of its own."""

    frames: dict[FrameKey, pd.DataFrame] = field(default_factory=dict)  # frames given as such
    errors: list[AuditError] = field(default_factory=list)
    calls: int = 0
    queries: int = 0
    datapoints: int = 0
    grid: pd.DatetimeIndex | None = None  # the window's periods
    series: dict[FrameKey, dict[str, np.ndarray]] = field(default_factory=dict)  # column -> float32 on grid

    def frame(self, endpoint: str, variant: str | None, component: str | None = None) -> pd.DataFrame:
        key = (endpoint, variant, component)
        if key in self.frames:
            return self.frames[key]
        columns = self.series.get(key)
        if not columns or self.grid is None:
            return _EMPTY
        data = np.column_stack(list(columns.values())).astype("float64")
        return pd.DataFrame(data, index=self.grid, columns=list(columns)).dropna(how="all")

    def all_frames(self) -> dict[FrameKey, pd.DataFrame]:
        return {**{key: self.frame(*key) for key in self.series}, **self.frames}

    def add(self, key: FrameKey, column: str, values: np.ndarray) -> None:
        self.series.setdefault(key, {})[column] = values
        self._owned.setdefault(key[0], set()).add(key)

    def keys_of(self, endpoint: str) -> set[FrameKey]:
        """The frames held for an endpoint (its variants', components', instances')."""
        return set(self._owned.get(endpoint, set())) | {k for k in self.frames if k[0] == endpoint}

    def release(self, endpoint: str) -> None:
        """Forget an endpoint's series once it has been judged."""
        for key in self._owned.pop(endpoint, set()):
            self.series.pop(key, None)
        for key in [k for k in self.frames if k[0] == endpoint]:  # frames given as such: a few, in tests
            del self.frames[key]

    _owned: dict[str, set[FrameKey]] = field(default_factory=dict, repr=False)  # series keys by endpoint


_EMPTY = pd.DataFrame(index=pd.DatetimeIndex([], tz="UTC"))


def collect_metrics(
    cloudwatch: BaseClient,
    region: str,
    queries: list[SeriesQuery],
    window: Window,
    on_batch: Callable[[int], None] | None = None,
) -> CollectedMetrics:
    """Run every query; `on_batch(n)` is told after each call how many queries it answered."""
    grid = pd.date_range(window.start, periods=window.points_per_series, freq=f"{window.period_seconds}s")
    if grid.tz is None:
        grid = grid.tz_localize("UTC")
    result = CollectedMetrics(queries=len(queries), grid=grid)
    start_s, period_s, slots = grid[0].timestamp() if len(grid) else 0.0, float(window.period_seconds), len(grid)
    for batch in batch_queries(queries, window):
        by_id = {f"q{i}": q for i, q in enumerate(batch)}
        # Each page's arrays, per query (whole arrays: see session._WholeArrays).
        values: dict[str, list[np.ndarray]] = {qid: [] for qid in by_id}
        stamps: dict[str, list[np.ndarray]] = {qid: [] for qid in by_id}
        request = {
            "MetricDataQueries": [
                {
                    "Id": qid,
                    "MetricStat": {
                        "Metric": {
                            "Namespace": q.spec.namespace,
                            "MetricName": q.spec.metric,
                            "Dimensions": q.dimensions,
                        },
                        "Period": window.period_seconds,
                        "Stat": q.spec.stat,
                    },
                    "ReturnData": True,
                }
                for qid, q in by_id.items()
            ],
            "StartTime": window.start,
            "EndTime": window.end,
            "ScanBy": "TimestampAscending",
        }
        try:
            while True:
                response = cloudwatch.get_metric_data(**request)
                result.calls += 1
                for item in response.get("MetricDataResults", []):
                    qid = item["Id"]
                    if item.get("Values") is not None and len(item["Values"]):
                        values[qid].append(whole_array(item["Values"], timestamps=False))
                        stamps[qid].append(whole_array(item.get("Timestamps", []), timestamps=True))
                    if item.get("StatusCode") in ("Forbidden", "InternalError"):
                        q = by_id[qid]
                        result.errors.append(AuditError(
                            region, q.endpoint, "collect",
                            f"GetMetricData {q.spec.column} returned {item['StatusCode']}",
                        ))
                token = response.get("NextToken")
                if not token:
                    break
                request["NextToken"] = token
        except botocore.exceptions.ClientError as exc:
            message = describe_client_error(exc, "cloudwatch", "GetMetricData", region)
            if is_fatal_for_region(exc):
                raise RegionAccessError(message) from exc
            endpoints = sorted({q.endpoint for q in batch})
            named = ", ".join(endpoints[:5]) + (f" and {len(endpoints) - 5} more" if len(endpoints) > 5 else "")
            result.errors.append(AuditError(region, endpoints[0] if len(endpoints) == 1 else None, "collect",
                                            f"{message} (metrics missing for {named})"))
            continue
        except botocore.exceptions.BotoCoreError as exc:
            raise RegionAccessError(describe_client_error(exc, "cloudwatch", "GetMetricData", region)) from exc

        for qid, q in by_id.items():
            if not values[qid]:
                continue
            answered = np.concatenate(values[qid])
            epochs = np.concatenate(stamps[qid])
            if len(epochs) != len(answered):
                result.errors.append(AuditError(
                    region, q.endpoint, "collect",
                    f"GetMetricData {q.spec.column}: {len(epochs)} timestamps for {len(answered)} values, not used"))
                continue
            result.datapoints += len(answered)
            # Each datapoint to its period on the grid (pages may repeat: the last answer wins).
            at = np.floor((epochs - start_s) / period_s).astype("int64")
            inside = (at >= 0) & (at < slots)
            column = np.full(slots, np.nan, dtype="float32")
            column[at[inside]] = answered[inside]
            result.add(q.owner, q.spec.column, column)
        del values, stamps
        if on_batch:
            on_batch(len(batch))

    return result
