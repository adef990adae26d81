"""instance-imbalance: with enhanced metrics, one instance of a variant runs far hotter than the
others day after day (sticky sessions, a client pinned to one instance, uneven model loading).

The variant's mean hides it; fewer instances would make the hot one worse. No saving: fix the
routing first. While it lasts no count reduction is advised (overprovisioned-count and underutilized
read `imbalance` and hold back)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from auditor.analyse.assessment import EndpointAssessment, VariantAssessment
from auditor.analyse.rules.base import INSTANCE_KINDS, RESOURCE_LABELS, RuleSettings, VariantRule, settings_of
from auditor.config import AuditConfig
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


@dataclass(frozen=True)
class Imbalance:
    resource: Resource
    hot_instance: str
    days: int  # days with at least two instances measured
    imbalanced_days: int  # of them, days the hot instance ran at >= ratio x every other
    p95: dict[str, float]  # each instance's p95 over the window

    def as_dict(self) -> dict[str, Any]:
        return {"resource": self.resource.value, "hot_instance": self.hot_instance, "days": self.days,
                "imbalanced_days": self.imbalanced_days,
                "instance_p95": {k: round(v, 2) for k, v in sorted(self.p95.items())}}


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
    on at least `min_share_of_days` of the days with two or more instances measured."""
    settings: ImbalanceSettings = settings_of(RULE, config)
    found = _load(va)
    if found is None:
        return None
    resource, series = found
    daily = pd.DataFrame({i: s.groupby(pd.DatetimeIndex(s.index).floor("1D")).quantile(0.95)
                          for i, s in series.items()})
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
    return Imbalance(resource, hot, len(daily), count, p95)


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    found = imbalance(va, config)
    if found is None:
        return None
    settings: ImbalanceSettings = settings_of(RULE, config)
    label = RESOURCE_LABELS[found.resource]
    others = max(v for i, v in found.p95.items() if i != found.hot_instance)
    return RULE.finding(
        assessment.endpoint, va.variant.name,
        f"instance {found.hot_instance} ran at {label} p95 {found.p95[found.hot_instance]:.0f}% while the other "
        f"{len(found.p95) - 1} stayed at or under {others:.0f}% (at least {settings.ratio:g}x apart on "
        f"{found.imbalanced_days} of {found.days} days): fix the routing before resizing; no count reduction "
        "is advised while it lasts",
        {**found.as_dict(), "ratio": settings.ratio, "min_busy_percent": settings.min_busy_percent},
    )


RULE = VariantRule(
    id="instance-imbalance",
    title="One instance carries the load",
    severity=Severity.MEDIUM,
    remediation="Find why one instance gets the traffic (sticky sessions, a client that reuses one connection, "
                "a slow model load on the others) and fix the routing before changing the instance count.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch-enhanced-metrics.html",
    kinds=INSTANCE_KINDS,
    settings=ImbalanceSettings,
    threshold_field="ratio",
    check=check,
)
