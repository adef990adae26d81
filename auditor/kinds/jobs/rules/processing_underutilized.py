"""processing-underutilized: GPU (or, without GPUs, normalised CPU) under its threshold on the
hosts of a processing job (the latest run of its name pattern); the pricing step finds the
cheapest shape and host count that holds the observed peak, at hosting prices."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from auditor.analyse.rules.base import CollectionRule, RuleSettings
from auditor.analyse.usage import per_month
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.jobs.assessment import JobsAssessment
from auditor.kinds.jobs.models import ProcessingCost
from auditor.kinds.jobs.schedules import recurring_processing
from auditor.models import Finding, Judged, Recommendation, Resource, Severity, ShapeProposal
from auditor.recommend.pricing import priced
from auditor.recommend.sizing import rightsize


def check(jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    for pattern, members in recurring_processing(jobs.processing, 1):
        latest = next((c for c in reversed(members) if c.utilization is not None), None)
        if latest is None or latest.utilization is None or latest.cost_usd is None:
            continue
        shape = catalog.shape(latest.job.instance_type)
        if shape is None:
            continue
        resource = Resource.GPU if shape.has_accelerator else Resource.CPU
        threshold = config.thresholds.gpu if shape.has_accelerator else config.thresholds.cpu
        level = latest.utilization.sizing.get(resource)
        if level is None or level >= threshold:
            continue
        label = "GPU" if resource is Resource.GPU else "CPU"
        job = latest.job
        yield RULE.finding(
            job, None,
            f"{label} {config.thresholds.sizing_statistic} {level:.1f}% on {job.instance_count} x {job.instance_type} "
            f"(threshold {threshold:g}%), {len(members)} run(s) of {pattern} in the window",
            {"pattern": pattern, "runs": len(members), "resource": resource.value, "level": round(level, 2),
             "threshold": threshold, "per_run_usd": round(latest.cost_usd, 2),
             "window_cost_usd": round(sum(c.cost_usd or 0.0 for c in members), 2),
             "utilization": {r.value: {"avg": u.avg, "p95": u.p95, "max": u.max}
                             for r, u in latest.utilization.by_resource.items()}},
            proposal=ShapeProposal(),
        )


def price(finding: Finding, jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    cost = jobs.by_name[finding.resource.name]
    assert isinstance(cost, ProcessingCost) and jobs.window is not None
    job = cost.job
    shape = catalog.shape(job.instance_type)
    if shape is None or cost.utilization is None or not cost.cost_usd:
        return None
    # A processing job needs no standby instance: one host may do.
    result = rightsize(cost.utilization, shape, job.instance_count, job.region, catalog,
                       replace(config.recommend, min_instances=1),
                       price_of=catalog.priced_like(job.instance_type, job.region, "processing"))
    if result is None:
        return None  # nothing cheaper holds its peak: under the threshold is not waste then
    advice = result.recommendation
    ratio = advice.recommended_monthly_usd / advice.current_monthly_usd
    spent = float(finding.evidence["window_cost_usd"])
    recommendation = Recommendation(
        "resize", advice.instance_type, advice.instance_count,
        current_monthly_usd=round(per_month(spent, jobs.window), 2),
        recommended_monthly_usd=round(per_month(spent * ratio, jobs.window), 2),
        details={"per_run_usd": round(cost.cost_usd, 2), "per_run_advised_usd": round(cost.cost_usd * ratio, 2),
                 "assumes": "the job runs as long on the advised shape",
                 "basis": "the window's spend on this pattern, scaled to 730 hours"},
    )
    return priced(finding, recommendation,
                  f"{finding.message}; {advice.instance_count} x {advice.instance_type} holds its peak: about "
                  f"${cost.cost_usd * ratio:,.2f} a run instead of ${cost.cost_usd:,.2f}, if it runs as long.")


RULE = CollectionRule(
    assessment=JobsAssessment,
    id="processing-underutilized",
    title="Processing hosts under-used",
    severity=Severity.LOW,
    remediation="Run the job on the advised instance type or count (ProcessingResources.ClusterConfig).",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/processing-job.html",
    judges=frozenset({Judged.PROCESSING_JOB}),
    settings=RuleSettings,
    check=check,
    price=price,
)
