"""Price the advice of the job rules: Spot, a smaller training shape, a transform job's count or
size. Monthly figures are the window's spend on the job at the rate seen in the window (scaled to
730 hours), so job findings rank beside endpoint ones; the per-run figures are in `details`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from auditor.analyse.jobs import (
    TRAINING_SPOT_CANDIDATE,
    TRAINING_UNDERUTILIZED,
    TRANSFORM_LONG_RUNNING,
    TrainingCost,
    TransformCost,
)
from auditor.analyse.usage import per_month
from auditor.catalog import HOURS_PER_MONTH, Catalog, InstanceShape
from auditor.config import AuditConfig
from auditor.models import Finding, Recommendation, Window
from auditor.recommend.advice import severity_for_saving
from auditor.recommend.sizing import rightsize

DAILY_RUNS_PER_MONTH = HOURS_PER_MONTH / 24


def monthly_rate(total: float, window: Window) -> float:
    return round(per_month(total, window), 2)


def advise_jobs(findings: list[Finding], training: list[TrainingCost], transform: list[TransformCost],
                catalog: Catalog, window: Window, config: AuditConfig) -> list[Finding]:
    costs = {c.job.name: c for c in training}
    transforms = {c.job.name: c for c in transform}
    advised = []
    for finding in findings:
        if finding.rule == TRAINING_SPOT_CANDIDATE.id:
            advised.append(_advise_spot(finding, costs[finding.endpoint], window))
        elif finding.rule == TRAINING_UNDERUTILIZED.id:
            advised.append(_advise_training_shape(finding, costs[finding.endpoint], catalog, window, config))
        elif finding.rule == TRANSFORM_LONG_RUNNING.id:
            result = _advise_transform(finding, transforms[finding.endpoint], catalog)
            if result is not None:
                advised.append(result)
        else:
            advised.append(finding)
    return advised


def _with(finding: Finding, recommendation: Recommendation, message: str | None = None) -> Finding:
    saving = max(recommendation.monthly_savings_usd, 0.0)
    return replace(finding, recommendation=recommendation, message=message or finding.message,
                   severity=severity_for_saving(saving))


def _advise_spot(finding: Finding, cost: TrainingCost, window: Window) -> Finding:
    job = cost.job
    recommendation = Recommendation(
        "spot", job.instance_type, job.instance_count,
        current_monthly_usd=monthly_rate(cost.cost_usd or 0.0, window),
        recommended_monthly_usd=monthly_rate(cost.spot_cost_usd or 0.0, window),
        details={"per_run_usd": finding.evidence["per_run_usd"], "per_run_spot_usd": finding.evidence["per_run_spot_usd"],
                 "basis": "the window's spend on this job, scaled to 730 hours"},
    )
    return _with(finding, recommendation)


def _advise_training_shape(finding: Finding, cost: TrainingCost, catalog: Catalog, window: Window,
                           config: AuditConfig) -> Finding:
    job = cost.job
    shape = catalog.shape(job.instance_type)
    if shape is None or cost.utilization is None or cost.cost_usd is None:
        return finding
    # Training needs no standby instance: one host may do. Priced at training prices.
    result = rightsize(cost.utilization, shape, job.instance_count, job.region, catalog,
                       replace(config.recommend, min_instances=1), price_of=catalog.training_price)
    if result is None:
        return replace(finding, message=f"{finding.message}; no cheaper shape with the same accelerator holds its peak.")
    advice = result.recommendation
    per_run = advice.recommended_monthly_usd / advice.current_monthly_usd * cost.cost_usd
    recommendation = Recommendation(
        "resize", advice.instance_type, advice.instance_count,
        current_monthly_usd=monthly_rate(cost.cost_usd, window),
        recommended_monthly_usd=monthly_rate(per_run, window),
        details={"per_run_usd": round(cost.cost_usd, 2), "per_run_advised_usd": round(per_run, 2),
                 "assumes": "the job runs as long on the advised shape"},
    )
    return _with(finding, recommendation,
                 f"{finding.message}; {advice.instance_count} x {advice.instance_type} holds its peak: about "
                 f"${per_run:,.2f} a run instead of ${cost.cost_usd:,.2f}, if it runs as long.")


def _advise_transform(finding: Finding, latest: TransformCost, catalog: Catalog) -> Finding | None:
    evidence = finding.evidence
    hours, cost_per_run = float(evidence["median_hours"]), float(evidence["cost_per_run_usd"])
    count, instance_type = latest.job.instance_count, latest.job.instance_type
    current = round(cost_per_run * DAILY_RUNS_PER_MONTH, 2)
    if evidence["bound"]:
        recommendation = Recommendation(
            "scale-out", instance_type, count * 2, current_monthly_usd=current, recommended_monthly_usd=current,
            details={"estimated_hours": round(hours / 2, 2), "assumes": "the work divides evenly across instances"})
        return _with(finding, recommendation,
                     f"{finding.message}. {count * 2} x {instance_type} would take about {hours / 2:.1f} h at about "
                     f"the same cost (${cost_per_run:,.2f} a run).")
    shape = catalog.shape(instance_type)
    smaller = _smaller_shape(shape, catalog, latest.job.region) if shape else None
    price = catalog.hourly_price(smaller.instance_type, latest.job.region) if smaller else None
    if smaller is None or price is None:
        return None  # already the smallest of its family: nothing to advise
    new_cost = hours * price * count
    recommendation = Recommendation(
        "resize", smaller.instance_type, count, current_monthly_usd=current,
        recommended_monthly_usd=round(new_cost * DAILY_RUNS_PER_MONTH, 2),
        details={"estimated_hours": round(hours, 2), "assumes": "the job is not bound by CPU or GPU, so it runs as long"})
    return _with(finding, recommendation,
                 f"{finding.message}. {count} x {smaller.instance_type} would cost about ${new_cost:,.2f} a run in "
                 f"about the same {hours:.1f} h.")


def _smaller_shape(shape: InstanceShape, catalog: Catalog, region: str) -> Any:
    """The next size down in the same family (fewer vCPUs, no more GPUs), priced in the region."""
    candidates = [
        s for s in catalog.shapes.values()
        if s.family == shape.family and s.vcpu < shape.vcpu and s.gpu_count <= shape.gpu_count
        and (s.gpu_count > 0) == (shape.gpu_count > 0) and catalog.hourly_price(s.instance_type, region) is not None
    ]
    return max(candidates, key=lambda s: s.vcpu, default=None)
