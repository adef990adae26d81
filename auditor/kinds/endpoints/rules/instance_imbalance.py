"""instance-imbalance: with enhanced metrics, one instance of a variant runs far hotter than the
others day after day (sticky sessions, a client pinned to one instance, uneven model loading).

The variant's mean hides it; fewer instances would make the hot one worse. No saving: fix the
cause first. While it lasts no count reduction is advised (overprovisioned-count and underutilized
read `imbalance` and hold back).

Each instance's requests (Invocations with InstanceId, real-time endpoints) tell the two causes
apart: the hot instance served far more than its share (routing or stickiness: a client pinned to
one instance), or about the same requests as the others at a higher CPU cost each (a slower model
load, a different model version, a noisy neighbour). Without them (async endpoints publish no
Invocations) the finding says the cause is unknown."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from auditor.analyse.rules.base import RESOURCE_LABELS, RuleSettings, settings_of
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import INSTANCE_REQUESTS, EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.rule_types import INSTANCE_KINDS, VariantRule
from auditor.models import Finding, Resource, Severity
from auditor.schema import setting


@dataclass(frozen=True)
class ImbalanceSettings(RuleSettings):
    ratio: float = setting(2.0, "the hot instance's daily p95 at least this multiple of every other instance's",
                           minimum=1.1, maximum=100)
    min_busy_percent: float = setting(20.0, "the hot instance's daily p95 at least this (per vCPU / GPU)",
                                      minimum=0, maximum=100)
    min_share_of_days: float = setting(0.5, "on at least this share of the days measured", minimum=0.01,
                                       maximum=1)
    traffic_ratio: float = setting(1.5, "the hot instance served at least this multiple of the others' mean "
                                   "requests: a routing imbalance (under it: a per-request cost imbalance)",
                                   minimum=1.05, maximum=100)


ROUTING, PER_REQUEST_COST, UNKNOWN = "routing", "per-request cost", "unknown"


@dataclass(frozen=True)
class Imbalance:
    resource: Resource
    hot_instance: str
    days: int  # days with at least two instances measured
    imbalanced_days: int  # of them, days the hot instance ran at >= ratio x every other
    p95: dict[str, float]  # each instance's p95 over the window
    # Each instance's share of the variant's requests over the window (None: not published)
    request_share: dict[str, float] | None = None
    cause: str = UNKNOWN  # ROUTING | PER_REQUEST_COST | UNKNOWN

    @property
    def traffic_multiple(self) -> float | None:
        """The hot instance's requests over the others' mean (None: requests not published)."""
        if not self.request_share:
            return None
        others = [v for i, v in self.request_share.items() if i != self.hot_instance]
        mean = sum(others) / len(others) if others else 0.0
        hot = self.request_share.get(self.hot_instance, 0.0)
        return float("inf") if mean == 0 and hot > 0 else (hot / mean if mean else 1.0)

    def as_dict(self) -> dict[str, Any]:
        multiple = self.traffic_multiple
        return {"resource": self.resource.value, "hot_instance": self.hot_instance, "days": self.days,
                "imbalanced_days": self.imbalanced_days,
                "instance_p95": {k: round(v, 2) for k, v in sorted(self.p95.items())},
                "cause": self.cause,
                "instance_request_share": None if self.request_share is None else
                {k: round(v, 4) for k, v in sorted(self.request_share.items())},
                "hot_requests_multiple": None if multiple is None or multiple == float("inf") else round(multiple, 2)}


def _load(va: VariantAssessment) -> tuple[Resource, dict[str, pd.Series]] | None:
    """The divisible load to compare (GPU where each instance publishes it, else CPU): each
    instance's per-period maxima."""
    for resource in (Resource.GPU, Resource.CPU):
        series: dict[str, pd.Series] = {}
        for instance, frame in va.instance_series.items():
            for stat in ("Maximum", "Average"):
                column = f"{resource.value}:{stat}"
                if column in frame.columns and frame[column].notna().any():
                    series[instance] = frame[column].dropna()
                    break
        if len(series) >= 2:
            return resource, series
    return None


def imbalance(va: VariantAssessment, config: AuditConfig) -> Imbalance | None:
    """Whether one instance ran at `ratio` x every other's daily p95 (and above `min_busy_percent`)
    on at least `min_share_of_days` of the days with two or more instances measured. Worked out once
    per variant and config: three other rules ask it too."""
    known = va.derived.get(RULE.id)
    if known is not None and known[0] is config:
        return known[1]  # type: ignore[return-value]
    result = _imbalance(va, config)
    va.derived[RULE.id] = (config, result)
    return result


def _imbalance(va: VariantAssessment, config: AuditConfig) -> Imbalance | None:
    settings: ImbalanceSettings = settings_of(RULE, config)
    found = _load(va)
    if found is None:
        return None
    resource, series = found
    # One groupby over every instance's series (aligned on their periods), not one per instance.
    aligned = pd.DataFrame(series)
    daily = aligned.groupby(pd.DatetimeIndex(aligned.index).floor("1D")).quantile(0.95)
    daily = daily[daily.notna().sum(axis=1) >= 2]
    if daily.empty:
        return None
    hot_by_day: list[str] = []
    for _, row in daily.iterrows():
        values = row.dropna().sort_values(ascending=False)
        top, rest = float(values.iloc[0]), float(values.iloc[1])
        if top >= settings.min_busy_percent and top >= settings.ratio * rest:
            hot_by_day.append(str(values.index[0]))
    if not hot_by_day:
        return None
    hot = max(set(hot_by_day), key=hot_by_day.count)
    count = hot_by_day.count(hot)
    if count < settings.min_share_of_days * len(daily):
        return None
    p95 = {i: float(np.percentile(s.to_numpy(dtype="float64"), 95)) for i, s in series.items()}
    shares = request_shares(va, {i: len(v) for i, v in series.items()})
    result = Imbalance(resource, hot, len(daily), count, p95, shares)
    multiple = result.traffic_multiple
    cause = UNKNOWN if multiple is None else ROUTING if multiple >= settings.traffic_ratio else PER_REQUEST_COST
    return replace(result, cause=cause)


def request_shares(va: VariantAssessment, measured_periods: dict[str, int]) -> dict[str, float] | None:
    """Each instance's share of the requests the variant's instances served, per period it was
    measured (an instance replaced mid-window is not read as one that got less traffic), from
    Invocations by InstanceId. CloudWatch has no datapoint for a period without requests, so an
    instance measured without any served none; None when no instance has any (not published:
    async endpoints, or enhanced metrics off)."""
    rates = {}
    for instance, periods in measured_periods.items():
        frame = va.instance_series.get(instance)
        column = frame[INSTANCE_REQUESTS] if frame is not None and INSTANCE_REQUESTS in frame.columns else None
        served = 0.0 if column is None else float(column.fillna(0.0).sum())
        rates[instance] = served / periods if periods else 0.0
    total = sum(rates.values())
    if total <= 0:
        return None
    return {i: v / total for i, v in rates.items()}


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    found = imbalance(va, config)
    if found is None:
        return None
    settings: ImbalanceSettings = settings_of(RULE, config)
    label = RESOURCE_LABELS[found.resource]
    others = max(v for i, v in found.p95.items() if i != found.hot_instance)
    even = 100 / len(found.p95)
    hot_share = (found.request_share or {}).get(found.hot_instance, 0.0) * 100
    if found.cause == ROUTING:
        why = (f"it served {hot_share:.0f}% of the variant's requests (an even share is {even:.0f}%): a routing "
               "or stickiness imbalance (a client pinned to one instance, sticky sessions); fix the routing "
               "before resizing")
    elif found.cause == PER_REQUEST_COST:
        why = (f"it served about its share of the requests ({hot_share:.0f}%, an even share is {even:.0f}%), so "
               "each request cost it more CPU: a per-request cost imbalance, not routing (a slower or different "
               "model load, a noisy neighbour); find what differs on that instance before resizing")
    else:
        why = ("per-instance requests are not published for it, so routing and per-request cost cannot be told "
               "apart; fix the cause before resizing")
    return RULE.finding(
        assessment.endpoint, va.variant.name,
        f"instance {found.hot_instance} ran at {label} p95 {found.p95[found.hot_instance]:.0f}% while the other "
        f"{len(found.p95) - 1} stayed at or under {others:.0f}% (at least {settings.ratio:g}x apart on "
        f"{found.imbalanced_days} of {found.days} days); {why}; no count reduction is advised while it lasts",
        {**found.as_dict(), "ratio": settings.ratio, "min_busy_percent": settings.min_busy_percent,
         "traffic_ratio": settings.traffic_ratio},
    )


RULE = VariantRule(
    id="instance-imbalance",
    title="One instance carries the load",
    severity=Severity.MEDIUM,
    remediation="Routing: find why one instance gets the traffic (sticky sessions, a client that reuses one "
                "connection) and spread it. Per-request cost: find what differs on the hot instance (model "
                "version, a slow load, a noisy neighbour). Fix either before changing the instance count.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch-enhanced-metrics.html",
    judges=INSTANCE_KINDS,
    settings=ImbalanceSettings,
    threshold_field="ratio",
    check=check,
)
