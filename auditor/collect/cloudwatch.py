"""Fetch metric series with GetMetricData, packed into as few calls as the API allows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import botocore.exceptions
import pandas as pd
from botocore.client import BaseClient

from auditor.collect.plan import SeriesQuery, batch_queries
from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region
from auditor.models import AuditError, Window

# (endpoint, variant or None for endpoint-level series, inference component or None)
FrameKey = tuple[str, str | None, str | None]


@dataclass
class CollectedMetrics:
    """Per variant (and per endpoint, for endpoint-level series) a frame indexed by timestamp,
    one column per 'Metric:Stat'. A series with no datapoint is simply absent: missing data is
    told apart from zero by the analysis, never filled in."""

    frames: dict[FrameKey, pd.DataFrame] = field(default_factory=dict)
    errors: list[AuditError] = field(default_factory=list)
    calls: int = 0
    queries: int = 0
    datapoints: int = 0
    _keys: dict[str, list[FrameKey]] | None = field(default=None, repr=False)  # frames by endpoint

    def frame(self, endpoint: str, variant: str | None, component: str | None = None) -> pd.DataFrame:
        return self.frames.get((endpoint, variant, component), _EMPTY)

    def release(self, endpoint: str) -> None:
        """Forget an endpoint's frames once it has been judged."""
        if self._keys is None:
            self._keys = {}
            for key in self.frames:
                self._keys.setdefault(key[0], []).append(key)
        for key in self._keys.pop(endpoint, []):
            self.frames.pop(key, None)


_EMPTY = pd.DataFrame(index=pd.DatetimeIndex([], tz="UTC"))


def collect_metrics(
    cloudwatch: BaseClient,
    region: str,
    queries: list[SeriesQuery],
    window: Window,
    on_batch: Callable[[int], None] | None = None,
) -> CollectedMetrics:
    """Run every query; `on_batch(n)` is told after each call how many queries it answered."""
    result = CollectedMetrics(queries=len(queries))
    raw: dict[FrameKey, dict[str, pd.Series]] = {}
    for batch in batch_queries(queries, window):
        by_id = {f"q{i}": q for i, q in enumerate(batch)}
        values: dict[str, list[float]] = {qid: [] for qid in by_id}
        stamps: dict[str, list] = {qid: [] for qid in by_id}
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
                    values[qid].extend(item.get("Values", []))
                    stamps[qid].extend(item.get("Timestamps", []))
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
            result.datapoints += len(values[qid])
            series = pd.Series(values[qid], index=pd.DatetimeIndex(stamps[qid]).tz_convert("UTC"), dtype="float64")
            # Pages may repeat or interleave: one value per timestamp, in order.
            series = series[~series.index.duplicated(keep="last")].sort_index()
            raw.setdefault(q.owner, {})[q.spec.column] = series
        if on_batch:
            on_batch(len(batch))

    # Frame by frame, dropping each endpoint's series as its frame is built: never both at once.
    for key in list(raw):
        result.frames[key] = pd.DataFrame(raw.pop(key))
    return result
