"""training-underutilized: GPU (or, without GPUs, CPU) under its threshold on a training job's
hosts; the pricing step finds the cheapest shape and host count that holds its peak."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from auditor.analyse.rules.base import CollectionRule, RuleSettings
from auditor.analyse.usage import per_month
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.jobs.assessment import JobsAssessment
from auditor.kinds.jobs.models import TrainingCost
from auditor.models import Finding, Judged, Recommendation, Resource, Severity, ShapeProposal
from auditor.recommend.pricing import priced
from auditor.recommend.sizing import rightsize


def check(jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    for cost in jobs.training:
        finding = _check_job(cost, catalog, config)
        if finding is not None:
            yield finding


def _check_job(cost: TrainingCost, catalog: Catalog, config: AuditConfig) -> Finding | None:
    job, util = cost.job, cost.utilization
    shape = catalog.shape(job.instance_type)
    if util is None or shape is None or cost.cost_usd is None:
        return None
    resource = Resource.GPU if shape.has_accelerator else Resource.CPU
    threshold = config.thresholds.gpu if shape.has_accelerator else config.thresholds.cpu
    level = util.sizing.get(resource)
    if level is None or level >= threshold:
        return None
    label = "GPU" if resource is Resource.GPU else "CPU"
    return RULE.finding(
        job, None,
        f"{label} {config.thresholds.sizing_statistic} {level:.1f}% on {job.instance_count} x {job.instance_type} "
        f"(threshold {threshold:g}%)",
        {"resource": resource.value, "level": round(level, 2),
         "threshold": threshold, "per_run_usd": round(cost.cost_usd, 2),
         "utilization": {r.value: {"avg": u.avg, "p95": u.p95, "max": u.max} for r, u in util.by_resource.items()}},
        proposal=ShapeProposal(),
    )


def price(finding: Finding, jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    cost = jobs.by_name[finding.resource.name]
    assert isinstance(cost, TrainingCost) and jobs.window is not None
    job = cost.job
    shape = catalog.shape(job.instance_type)
    if shape is None or cost.utilization is None or cost.cost_usd is None:
        return finding
    # Training needs no standby instance: one host may do. Priced at training prices.
    result = rightsize(cost.utilization, shape, job.instance_count, job.region, catalog,
                       replace(config.recommend, min_instances=1), price_of=catalog.training_price)
    if result is None:
        return replace(finding,
                       message=f"{finding.message}; no cheaper shape with the same accelerator holds its peak.")
    advice = result.recommendation
    per_run = advice.recommended_monthly_usd / advice.current_monthly_usd * cost.cost_usd
    recommendation = Recommendation(
        "resize", advice.instance_type, advice.instance_count,
        current_monthly_usd=round(per_month(cost.cost_usd, jobs.window), 2),
        recommended_monthly_usd=round(per_month(per_run, jobs.window), 2),
        details={"per_run_usd": round(cost.cost_usd, 2), "per_run_advised_usd": round(per_run, 2),
                 "assumes": "the job runs as long on the advised shape"},
    )
    return priced(finding, recommendation,
                  f"{finding.message}; {advice.instance_count} x {advice.instance_type} holds its peak: about "
                  f"${per_run:,.2f} a run instead of ${cost.cost_usd:,.2f}, if it runs as long.")


RULE = CollectionRule(
    assessment=JobsAssessment,
    id="training-underutilized",
    title="Training hosts under-used",
    severity=Severity.LOW,
    remediation="Train on the advised shape or host count.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/training-metrics.html",
    judges=frozenset({Judged.TRAINING_JOB}),
    settings=RuleSettings,
    check=check,
    price=price,
)
