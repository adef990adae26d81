"""What to ask CloudWatch for: the aligned window and one query per series (each kind names its
series: the endpoints kind's in auditor/kinds/endpoints/metrics.py). Pure: no AWS here.

The window follows CloudWatch's retention steps (as Cloud Custodian's metrics filter does): data
older than 15 days is kept at 5-minute resolution and older than 63 days at 1 hour, so the period
is rounded up to what the oldest point of the window still has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from auditor.models import Window

# GetMetricData's caps per call.
MAX_QUERIES_PER_CALL = 500
MAX_DATAPOINTS_PER_CALL = 100_800

# Statistic names as GetMetricData takes them.
AVERAGE, MAXIMUM, SUM, SAMPLE_COUNT = "Average", "Maximum", "Sum", "SampleCount"


@dataclass(frozen=True)
class MetricSpec:
    namespace: str
    metric: str
    stat: str

    @property
    def column(self) -> str:
        """The column name in a variant's frame, e.g. 'CPUUtilization:Maximum'."""
        return f"{self.metric}:{self.stat}"


@dataclass(frozen=True)
class SeriesQuery:
    """One GetMetricData query. variant None: an endpoint-level series (async queue metrics);
    component set: an inference component's series."""

    endpoint: str
    variant: str | None
    spec: MetricSpec
    component: str | None = None
    dimension: tuple[str, str] | None = None  # a single dimension of its own (a job's Host)
    given: tuple[tuple[str, str], ...] = ()  # other kinds' series: the dimensions as ListMetrics listed them

    @property
    def owner(self) -> tuple[str, str | None, str | None]:
        return (self.endpoint, self.variant, self.component)

    @property
    def dimensions(self) -> list[dict[str, str]]:
        if self.given:
            return [{"Name": name, "Value": value} for name, value in self.given]
        if self.dimension is not None:
            return [{"Name": self.dimension[0], "Value": self.dimension[1]}]
        if self.component is not None:
            return [{"Name": "InferenceComponentName", "Value": self.component}]
        # Order matters to some implementations: EndpointName first, as SageMaker publishes it.
        dims = [{"Name": "EndpointName", "Value": self.endpoint}]
        if self.variant is not None:
            dims.append({"Name": "VariantName", "Value": self.variant})
        return dims


def align_window(now: datetime, lookback_days: int, period_seconds: int) -> Window:
    """End at the last whole period before `now`; round the period up to what retention keeps."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    oldest_age = timedelta(days=lookback_days)
    if oldest_age > timedelta(days=63):
        step = 3600
    elif oldest_age > timedelta(days=15):
        step = 300
    else:
        step = 60
    period = math.ceil(period_seconds / step) * step
    epoch = int(now.timestamp())
    end = datetime.fromtimestamp(epoch - epoch % period, tz=UTC)
    periods = math.ceil(lookback_days * 86400 / period)
    return Window(start=end - timedelta(seconds=periods * period), end=end, period_seconds=period)


def batch_queries(queries: list[SeriesQuery], window: Window) -> list[list[SeriesQuery]]:
    """Split into GetMetricData calls: at most 500 queries and 100,800 datapoints each.

    Every query spans the same window, so equal chunks of the largest size that fits both caps
    reach the lower bound max(ceil(queries/500), ceil(datapoints/100800)).
    """
    per_call = max(1, min(MAX_QUERIES_PER_CALL, MAX_DATAPOINTS_PER_CALL // max(1, window.points_per_series)))
    return [queries[i : i + per_call] for i in range(0, len(queries), per_call)]

