"""rising-queue-latency: an async endpoint whose queue age or backlog per instance keeps rising, or
whose requests waited with no instance at all (HasBacklogWithoutCapacity).

The advice is sized from throughput, never from the backlog's level: what the instances process an
hour (TotalProcessingTime's sample count while requests wait, or the backlog drained per second of
the oldest request's age) plus the backlog's growth an hour is what arrives; the count that keeps
up with that plus a margin is the advice, bounded by `max_scale_out_factor`. Where throughput
cannot be estimated, the advice is an autoscaling policy on ApproximateBacklogSizePerInstance, not
a count."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from auditor.analyse.rules.base import settings_of
from auditor.analyse.trend import TrendResult, judge_rising, recent_series, rise_text, trend
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment
from auditor.kinds.endpoints.pricing_steps import same_type_count
from auditor.kinds.endpoints.rule_types import EndpointRule
from auditor.kinds.endpoints.rules.async_scale_from_zero import has_step_from_zero
from auditor.kinds.endpoints.rules.rising_latency import TrendSettings
from auditor.models import CountProposal, Finding, Judged, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting

# Throughput is read off the last days of the window: what the instances do now.
RECENT_DAYS = 2
# A queue that starts empty has an infinite relative rise: it must also end above these levels.
QUEUE_FLOORS = {"ApproximateBacklogSizePerInstance": 1.0, "ApproximateAgeOfOldestRequest": 60.0}


@dataclass(frozen=True)
class QueueSettings(TrendSettings):
    # The policy's target backlog per instance; 0: what holds the oldest request under latency_goal_seconds.
    target_backlog_per_instance: float = setting(0.0, "the policy's target; 0: from latency_goal_seconds",
                                                 minimum=0)
    latency_goal_seconds: float = setting(600.0, "how long a request may wait in the queue", above=0,
                                          maximum=7 * 86400)
    margin_percent: float = setting(10.0, "capacity above the estimated arrivals", minimum=0, maximum=1000)
    max_scale_out_factor: float = setting(2.0, "never advise more than this many times the current count",
                                          minimum=1, maximum=100)


@dataclass(frozen=True)
class Throughput:
    """Requests an hour: what the instances processed, and the backlog's net growth."""

    processed_per_hour: float
    growth_per_hour: float
    source: str  # what the processed figure rests on

    @property
    def arrivals_per_hour(self) -> float:
        return self.processed_per_hour + max(self.growth_per_hour, 0.0)


def estimate_throughput(assessment: EndpointAssessment, count: int, days: int) -> Throughput | None:
    """From the last days of the window; None when neither processing counts nor the queue's age
    tell how fast the instances work."""
    queue, variant = assessment.queue, assessment.variants[0]
    backlog = recent_series(queue, "ApproximateBacklogSize:Average", days)
    if backlog is None:
        per_instance = recent_series(queue, "ApproximateBacklogSizePerInstance:Average", days)
        backlog = None if per_instance is None else per_instance * count
    if backlog is None:
        return None
    fitted = trend(backlog)
    growth = fitted.slope_per_day / 24 if fitted is not None else 0.0
    recent = backlog[backlog.index >= backlog.index.max() - pd.Timedelta(days=RECENT_DAYS)]
    processed = recent_series(variant.raw, "TotalProcessingTime:SampleCount", days)
    if processed is not None:
        # While requests wait, the instances work flat out: those hours show their capacity.
        waiting = processed.reindex(recent[recent > 0].index).dropna()
        sample = waiting if waiting.size >= 3 else processed[processed.index >= recent.index.min()]
        if sample.size:
            return Throughput(float(np.median(sample)), growth, "TotalProcessingTime's sample count (requests "
                              "processed an hour" + (" while requests waited)" if sample is waiting else ")"))
    age = recent_series(queue, "ApproximateAgeOfOldestRequest:Average", days)
    if age is not None:
        level, wait = float(np.median(recent)), float(np.median(age[age.index >= recent.index.min()]))
        if level > 0 and wait > 0:
            # Little's law: the oldest request waited as long as the backlog takes to drain.
            return Throughput(level / wait * 3600, growth, "the backlog drained per second of the oldest "
                              "request's age (Little's law)")
    return None


def check(assessment: EndpointAssessment, config: AuditConfig) -> Finding | None:
    settings: QueueSettings = settings_of(RULE, config)
    queue = assessment.queue
    evidence: dict[str, Any] = {}
    rising: dict[str, TrendResult] = {}
    for metric, floor in QUEUE_FLOORS.items():
        series = recent_series(queue, f"{metric}:Average", settings.lookback_days)
        if series is None:
            continue
        result, evidence[metric] = judge_rising(series, settings.p_value, settings.min_rise_percent / 100.0, floor)
        if result is not None:
            rising[metric] = result
    without_capacity = recent_series(queue, "HasBacklogWithoutCapacity:Maximum", settings.lookback_days)
    stranded_hours = int((without_capacity >= 1).sum()) if without_capacity is not None else 0
    evidence["hours_with_backlog_without_capacity"] = stranded_hours
    if not rising and not stranded_hours:
        return None

    variant = assessment.variants[0] if len(assessment.variants) == 1 else None
    parts = []
    age = rising.get("ApproximateAgeOfOldestRequest")
    if age is not None:
        parts.append(f"oldest request age rose from {age.start_level:,.0f} s to {age.end_level:,.0f} s "
                     f"({rise_text(age)}, {age.slope_per_day:+,.0f} s/day, p={age.p_value:.2g})")
    backlog = rising.get("ApproximateBacklogSizePerInstance")
    if backlog is not None:
        parts.append(f"backlog per instance rose from {backlog.start_level:.1f} to {backlog.end_level:.1f} "
                     f"({rise_text(backlog)}, p={backlog.p_value:.2g})")
    if stranded_hours:
        parts.append(f"requests waited with no instance running in {stranded_hours} hours")
    message = "Async queue growing: " + "; ".join(parts)

    proposal = None
    if variant is not None and variant.variant.instance_count and rising:
        count = variant.variant.instance_count
        throughput = estimate_throughput(assessment, count, settings.lookback_days)
        advice, proposal, evidence["scale_out"] = _size_from_throughput(throughput, count, settings)
        message += ". " + advice
    elif stranded_hours and variant is not None \
            and has_step_from_zero(assessment.endpoint, variant.variant.autoscaling):
        evidence["scale_out"] = None
        message += (". Its step-scaling policy on HasBacklogWithoutCapacity did not keep them from waiting: check "
                    "its alarm, or keep at least one instance (MinCapacity 1)")
    elif stranded_hours:
        evidence["scale_out"] = None
        message += (". Keep at least one instance (MinCapacity 1), or add a step-scaling policy on "
                    "HasBacklogWithoutCapacity to scale out from zero")
    evidence["rising"] = sorted(rising)
    return RULE.finding(assessment.endpoint, variant.variant.name if variant else None, message + ".", evidence,
                        proposal=proposal)


def _size_from_throughput(
    throughput: Throughput | None, count: int, settings: QueueSettings
) -> tuple[str, CountProposal | None, dict[str, Any]]:
    """The advice in words, the count to price (None: a policy, not a count) and the evidence."""
    goal = settings.latency_goal_seconds
    if throughput is None or throughput.processed_per_hour <= 0:
        target = settings.target_backlog_per_instance
        policy = (f"target {target:g}" if target else
                  "a target backlog per instance that the instances clear within "
                  f"{goal:g} s (measure what one instance processes an hour first)")
        return (f"How fast the instances work cannot be estimated (no TotalProcessingTime and no queue age): add "
                f"target tracking on ApproximateBacklogSizePerInstance with {policy}, MinCapacity {count}, "
                "rather than a fixed count",
                None, {"current_count": count, "estimate": None, "latency_goal_seconds": goal})
    per_instance = throughput.processed_per_hour / count
    target = settings.target_backlog_per_instance or max(1.0, round(per_instance * goal / 3600, 1))
    margin = 1 + settings.margin_percent / 100.0
    wanted = math.ceil(count * throughput.arrivals_per_hour * margin / throughput.processed_per_hour - 1e-9)
    bound = math.floor(count * settings.max_scale_out_factor)
    needed = max(count + 1, min(wanted, bound))
    capped = wanted > bound
    evidence = {
        "current_count": count, "needed_count": needed, "processed_per_hour": round(throughput.processed_per_hour, 1),
        "backlog_growth_per_hour": round(throughput.growth_per_hour, 2),
        "arrivals_per_hour": round(throughput.arrivals_per_hour, 1), "margin_percent": settings.margin_percent,
        "estimate_rests_on": throughput.source, "capped_at": bound if capped else None,
        "target_backlog_per_instance": target, "latency_goal_seconds": goal,
    }
    text = (f"{count} instances process about {throughput.processed_per_hour:,.0f} requests an hour (from "
            f"{throughput.source}) and the backlog grows by about {throughput.growth_per_hour:,.1f} an hour, so "
            f"about {throughput.arrivals_per_hour:,.0f} arrive; {needed} x keep up with {settings.margin_percent:g}% "
            f"to spare")
    if capped:
        text += f" (capped at {settings.max_scale_out_factor:g}x the current count: the estimate asked for {wanted})"
    text += (f"; or add target tracking on ApproximateBacklogSizePerInstance at {target:g} (about "
             f"{goal:g} s of work per instance)")
    return text, CountProposal(needed), evidence


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    if not isinstance(finding.proposal, CountProposal):
        return finding
    rec = same_type_count(finding, assessment, catalog, finding.proposal.instance_count, "scale-out")
    if rec is None:
        return finding
    # Advice that costs more is a risk to fix, not money to save: the rule's severity stands.
    return priced(finding, rec, f"{finding.message} Costs ${-rec.monthly_savings_usd:,.2f}/month more.",
                  severity=finding.severity)


RULE = EndpointRule(
    id="rising-queue-latency",
    title="Async queue growing",
    severity=Severity.HIGH,
    remediation="Scale out, or add a target-tracking policy on ApproximateBacklogSizePerInstance.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html",
    judges=frozenset({Judged.ASYNC}),
    settings=QueueSettings,
    threshold_field="min_rise_percent",
    check=check,
    price=price,
)
