"""rising-queue-latency: an async endpoint whose queue age or backlog per instance keeps rising, or
whose requests waited with no instance at all (HasBacklogWithoutCapacity)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from auditor.analyse.assessment import EndpointAssessment
from auditor.analyse.rules.base import EndpointRule, settings_of
from auditor.analyse.rules.rising_latency import TrendSettings
from auditor.analyse.trend import TrendResult, judge_rising, recent_series, rise_text
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.models import CountProposal, Finding, ResourceKind, Severity
from auditor.recommend.pricing import priced, same_type_count

# A queue that starts empty has an infinite relative rise: it must also end above these levels.
QUEUE_FLOORS = {"ApproximateBacklogSizePerInstance": 1.0, "ApproximateAgeOfOldestRequest": 60.0}


@dataclass(frozen=True)
class QueueSettings(TrendSettings):
    target_backlog_per_instance: float = 0.0  # 0: the level at the start of the window


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
    if variant is not None and variant.variant.instance_count and backlog is not None:
        count = variant.variant.instance_count
        target = settings.target_backlog_per_instance or max(backlog.start_level, 1.0)
        needed = max(count + 1, math.ceil(count * backlog.end_level / target))
        proposal = CountProposal(needed)
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
    return RULE.finding(assessment.endpoint, variant.variant.name if variant else None, message + ".", evidence,
                        proposal=proposal)


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
    kinds=frozenset({ResourceKind.ASYNC}),
    settings=QueueSettings,
    threshold_field="min_rise_percent",
    check=check,
    price=price,
)
