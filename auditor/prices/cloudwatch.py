"""What CloudWatch bills for metrics, from the bundled `data/cloudwatch.json`: the metric-month
tiers (CW:MetricMonitorUsage) and GetMetricData's price per metric requested (CW:GMD-Metrics),
with their source and date. Pure: file in, figures out.

SageMaker's enhanced metrics are billed at these standard rates ("Standard CloudWatch pricing
applies per metric per unique dimension combination": the SageMaker guide's enhanced-metrics page).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources


@dataclass(frozen=True)
class MetricTier:
    first_metric: int
    last_metric: int | None  # None: no upper bound
    usd_per_metric_month: float


@dataclass(frozen=True)
class CloudWatchRates:
    region: str  # whose rates these are
    tiers: tuple[MetricTier, ...]
    usd_per_metric_requested: float | None
    metric_usage_type: str
    requests_usage_type: str
    source: str
    as_of: str

    @property
    def first_tier(self) -> MetricTier:
        return self.tiers[0]


@cache
def _table() -> dict[str, object]:
    data: dict[str, object] = json.loads(
        resources.files("auditor.data").joinpath("cloudwatch.json").read_text("utf-8"))
    return data


def cloudwatch_rates(region: str, fallback_region: str | None = None) -> CloudWatchRates | None:
    """The region's rates, else the fallback region's (pricing.assume_prices_from), else None."""
    data = _table()
    metric_month = data["metric_month"]
    requests = data["get_metric_data"]
    assert isinstance(metric_month, dict) and isinstance(requests, dict)
    tiers_by_region = metric_month["tiers"]
    for candidate in (region, fallback_region):
        if candidate and candidate in tiers_by_region:
            tiers = tuple(MetricTier(int(t["first_metric"]),
                                     None if t["last_metric"] is None else int(t["last_metric"]),
                                     float(t["usd_per_metric_month"])) for t in tiers_by_region[candidate])
            per_request = requests["usd_per_metric_requested"].get(candidate)
            return CloudWatchRates(candidate, tiers, None if per_request is None else float(per_request),
                                   str(metric_month["usage_type"]), str(requests["usage_type"]), str(data["source"]),
                                   str(data["as_of"]))
    return None
