"""rising-latency: model or overhead latency that keeps rising over the window."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.analyse.trend import TrendResult, judge_rising, recent_series, rise_text, trend
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.rule_types import VariantRule
from auditor.models import Finding, Judged, Severity
from auditor.schema import setting


@dataclass(frozen=True)
class TrendSettings(RuleSettings):
    min_rise_percent: float = setting(50.0, "the fitted line must rise this much over the window", minimum=0,
                                      maximum=1000)
    p_value: float = setting(0.01, "Mann-Kendall, one-sided", above=0, below=1)
    lookback_days: int = setting(0, "0: the whole audit window", minimum=0, maximum=455, within_lookback=True)


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    settings: TrendSettings = settings_of(RULE, config)
    days = settings.lookback_days
    rising: dict[str, TrendResult] = {}
    evidence: dict[str, Any] = {}
    for metric in ("ModelLatency", "OverheadLatency"):
        series = recent_series(va.raw, f"{metric}:Average", days)
        if series is None:
            continue
        result, _ = judge_rising(series, settings.p_value, settings.min_rise_percent / 100.0)
        if result is not None:
            rising[metric] = result
    if not rising:
        return None
    for metric in ("ModelLatency", "OverheadLatency"):
        series = recent_series(va.raw, f"{metric}:Average", days)
        result = rising.get(metric) or (trend(series) if series is not None else None)
        if result is not None:
            evidence[metric] = {**result.as_evidence(scale=1e-3), "unit": "ms"}  # microseconds -> milliseconds
    # Invocations and CPU alongside, so the reader can tell load growth from a regression.
    context: dict[str, float | None] = {}
    for name, frame, column in (("invocations", va.raw, "Invocations:Sum"), ("cpu", va.normalised, "cpu:Average")):
        series = recent_series(frame, column, days)
        result = trend(series) if series is not None else None
        rise = result.relative_rise if result is not None and math.isfinite(result.relative_rise) else None
        context[name] = None if rise is None else round(rise, 3)
        evidence[name] = {"relative_rise": context[name]}
    worst = max(rising.values(), key=lambda result: result.relative_rise)
    load_rise = context["invocations"]
    if load_rise is not None and load_rise >= 0.5 * worst.relative_rise:
        verdict = "it grew with the load"
    else:
        verdict = "the load did not grow with it: look for a regression"
    window_days = days or config.aws.lookback_days
    load_text = "n/a" if load_rise is None else f"{load_rise * 100:+.0f}%"
    cpu_text = "n/a" if context["cpu"] is None else f"{context['cpu'] * 100:+.0f}%"
    rises = "; ".join(
        f"{metric} rose from {result.start_level / 1000:,.1f} ms to {result.end_level / 1000:,.1f} ms "
        f"({rise_text(result)}, p={result.p_value:.2g})"
        for metric, result in sorted(rising.items())
    )
    message = f"{rises} in {window_days} days; invocations {load_text}, CPU {cpu_text}: {verdict}."
    evidence["rising"] = sorted(rising)
    evidence["verdict"] = "load growth" if verdict.startswith("it grew") else "regression"
    return RULE.finding(assessment.endpoint, va.variant.name, message, evidence)


RULE = VariantRule(
    id="rising-latency",
    title="Latency rising over the window",
    severity=Severity.MEDIUM,
    remediation="If invocations rose with it, add capacity or autoscaling; if not, look for a regression in the "
                "model or its container (a deploy, a dependency, a growing input).",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html",
    judges=frozenset({Judged.REAL_TIME}),
    settings=TrendSettings,
    threshold_field="min_rise_percent",
    check=check,
)
