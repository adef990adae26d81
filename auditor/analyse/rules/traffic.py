"""Traffic rules: latency or queue age that keeps rising over the window."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from auditor.analyse.rules.base import EndpointAssessment, RuleMeta, VariantAssessment, make_finding
from auditor.analyse.trend import TrendResult, judge_rising, trend
from auditor.config import AuditConfig
from auditor.models import Finding, Severity

RISING_LATENCY = RuleMeta(
    "rising-latency",
    "Latency rising over the window",
    Severity.MEDIUM,
    "If invocations rose with it, add capacity or autoscaling; if not, look for a regression in the model "
    "or its container (a deploy, a dependency, a growing input).",
)
RISING_QUEUE_LATENCY = RuleMeta(
    "rising-queue-latency",
    "Async queue growing",
    Severity.HIGH,
    "Scale out, or add a target-tracking policy on ApproximateBacklogSizePerInstance.",
)

# A queue that starts empty has an infinite relative rise: it must also end above these levels.
QUEUE_FLOORS = {"ApproximateBacklogSizePerInstance": 1.0, "ApproximateAgeOfOldestRequest": 60.0}


def _series(frame: pd.DataFrame, column: str, days: int) -> pd.Series | None:
    if column not in frame.columns:
        return None
    series = frame[column]
    if days:
        series = series[series.index >= series.index.max() - pd.Timedelta(days=days)]
    series = series.dropna()
    return series if series.size >= 3 else None


def _rise_text(result: TrendResult) -> str:
    if not math.isfinite(result.relative_rise):
        return "from zero"
    return f"{result.relative_rise * 100:+.0f}%"


def check_rising_latency(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    rule = config.rules.rising_latency
    days = rule.lookback_days
    rising: dict[str, TrendResult] = {}
    evidence: dict[str, Any] = {}
    for metric in ("ModelLatency", "OverheadLatency"):
        series = _series(va.raw, f"{metric}:Average", days)
        if series is None:
            continue
        result, _ = judge_rising(series, rule.p_value, rule.min_rise_percent / 100.0)
        if result is not None:
            rising[metric] = result
    if not rising:
        return None
    for metric in ("ModelLatency", "OverheadLatency"):
        series = _series(va.raw, f"{metric}:Average", days)
        result = rising.get(metric) or (trend(series) if series is not None else None)
        if result is not None:
            evidence[metric] = {**result.as_evidence(scale=1e-3), "unit": "ms"}  # microseconds -> milliseconds
    # Invocations and CPU alongside, so the reader can tell load growth from a regression.
    context: dict[str, float | None] = {}
    for name, frame, column in (("invocations", va.raw, "Invocations:Sum"), ("cpu", va.normalised, "cpu:Average")):
        series = _series(frame, column, days)
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
        f"({_rise_text(result)}, p={result.p_value:.2g})"
        for metric, result in sorted(rising.items())
    )
    message = f"{rises} in {window_days} days; invocations {load_text}, CPU {cpu_text}: {verdict}."
    evidence["rising"] = sorted(rising)
    evidence["verdict"] = "load growth" if verdict.startswith("it grew") else "regression"
    return make_finding(RISING_LATENCY, assessment.endpoint, va.variant.name, message, evidence)


def check_rising_queue(assessment: EndpointAssessment, config: AuditConfig) -> Finding | None:
    """Async endpoints: queue age or backlog per instance trending up, or requests waiting with
    no instance at all (HasBacklogWithoutCapacity)."""
    rule = config.rules.rising_queue_latency
    queue = assessment.queue
    evidence: dict[str, Any] = {}
    rising: dict[str, TrendResult] = {}
    for metric, floor in QUEUE_FLOORS.items():
        series = _series(queue, f"{metric}:Average", rule.lookback_days)
        if series is None:
            continue
        result, evidence[metric] = judge_rising(series, rule.p_value, rule.min_rise_percent / 100.0, floor)
        if result is not None:
            rising[metric] = result
    without_capacity = _series(queue, "HasBacklogWithoutCapacity:Maximum", rule.lookback_days)
    stranded_hours = int((without_capacity >= 1).sum()) if without_capacity is not None else 0
    evidence["hours_with_backlog_without_capacity"] = stranded_hours
    if not rising and not stranded_hours:
        return None

    variant = assessment.variants[0] if len(assessment.variants) == 1 else None
    parts = []
    age = rising.get("ApproximateAgeOfOldestRequest")
    if age is not None:
        parts.append(f"oldest request age rose from {age.start_level:,.0f} s to {age.end_level:,.0f} s "
                     f"({_rise_text(age)}, {age.slope_per_day:+,.0f} s/day, p={age.p_value:.2g})")
    backlog = rising.get("ApproximateBacklogSizePerInstance")
    if backlog is not None:
        parts.append(f"backlog per instance rose from {backlog.start_level:.1f} to {backlog.end_level:.1f} "
                     f"({_rise_text(backlog)}, p={backlog.p_value:.2g})")
    if stranded_hours:
        parts.append(f"requests waited with no instance running in {stranded_hours} hours")
    message = "Async queue growing: " + "; ".join(parts)

    if variant is not None and variant.variant.instance_count and backlog is not None:
        count = variant.variant.instance_count
        target = rule.target_backlog_per_instance or max(backlog.start_level, 1.0)
        needed = max(count + 1, math.ceil(count * backlog.end_level / target))
        evidence["scale_out"] = {"current_count": count, "needed_count": needed,
                                 "target_backlog_per_instance": round(target, 2)}
        message += (f". At {backlog.end_level:.1f} requests per instance, {needed} instances bring the backlog "
                    f"back to {target:.1f} per instance; or add target tracking on "
                    f"ApproximateBacklogSizePerInstance with target {target:.1f}")
    elif stranded_hours:
        evidence["scale_out"] = None
        message += (". Keep at least one instance (MinCapacity 1), or add a step-scaling policy on "
                    "HasBacklogWithoutCapacity to scale out from zero")
    evidence["rising"] = sorted(rising)
    return make_finding(RISING_QUEUE_LATENCY, assessment.endpoint, variant.variant.name if variant else None,
                        message + ".", evidence)
