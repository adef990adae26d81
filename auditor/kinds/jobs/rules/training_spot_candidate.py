"""training-spot-candidate: a completed on-demand training job that Managed Spot would have run
for about `jobs.spot_discount_percent` less."""

from __future__ import annotations

from collections.abc import Iterator

from auditor.analyse.rules.base import CollectionRule, RuleSettings
from auditor.analyse.usage import format_duration, per_month
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.jobs.assessment import JobsAssessment
from auditor.kinds.jobs.models import TrainingCost
from auditor.kinds.jobs.settings import JobsConfig
from auditor.models import Finding, Judged, Recommendation, Severity, SpotProposal
from auditor.recommend.pricing import priced


def check(jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    for cost in jobs.training:
        finding = _check_job(cost, config)
        if finding is not None:
            yield finding


def _check_job(cost: TrainingCost, config: AuditConfig) -> Finding | None:
    job = cost.job
    if job.spot or job.status != "Completed" or cost.cost_usd is None or cost.spot_saving_usd is None:
        return None
    if cost.spot_saving_usd < JobsConfig.of(config).min_savings_usd:
        return None
    discount = JobsConfig.of(config).spot_discount_percent
    notes = []
    if not job.checkpoint_s3_uri:
        notes.append("it has no CheckpointConfig, so a Spot interruption would restart it from scratch")
    if not job.max_wait_seconds:
        notes.append("MaxWaitTimeInSeconds is unset (Spot needs it, at least MaxRuntimeInSeconds)")
    duration = format_duration(job.training_seconds, "an unknown time")
    message = (
        f"{job.instance_count} x {job.instance_type} on demand for {duration}: "
        f"${cost.cost_usd:,.2f}; on Spot at {discount:g}% off about ${cost.spot_cost_usd:,.2f}"
        + (f". Note: {'; '.join(notes)}" if notes else "")
    )
    per_run, per_run_spot = round(cost.cost_usd, 2), round(cost.spot_cost_usd or 0.0, 2)
    return RULE.finding(job, None, message + ".", {
        "training_seconds": job.training_seconds,
        "billable_seconds": job.billable_seconds, "spot_discount_percent": discount,
        "per_run_usd": per_run, "per_run_spot_usd": per_run_spot,
        "checkpoint_config": bool(job.checkpoint_s3_uri), "max_wait_seconds": job.max_wait_seconds,
    }, proposal=SpotProposal(per_run, per_run_spot))


def price(finding: Finding, jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    cost = jobs.by_name[finding.resource.name]
    assert isinstance(cost, TrainingCost) and isinstance(finding.proposal, SpotProposal)
    assert jobs.window is not None
    job = cost.job
    recommendation = Recommendation(
        "spot", job.instance_type, job.instance_count,
        current_monthly_usd=round(per_month(cost.cost_usd or 0.0, jobs.window), 2),
        recommended_monthly_usd=round(per_month(cost.spot_cost_usd or 0.0, jobs.window), 2),
        details={"per_run_usd": finding.proposal.per_run_usd, "per_run_spot_usd": finding.proposal.per_run_spot_usd,
                 "basis": "the window's spend on this job, scaled to 730 hours"},
    )
    return priced(finding, recommendation)


RULE = CollectionRule(
    assessment=JobsAssessment,
    id="training-spot-candidate",
    title="On-demand training that could run on Spot",
    severity=Severity.LOW,
    remediation="Set EnableManagedSpotTraining, MaxWaitTimeInSeconds and a CheckpointConfig so interrupted jobs "
                "resume.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/model-managed-spot-training.html",
    judges=frozenset({Judged.TRAINING_JOB}),
    settings=RuleSettings,
    check=check,
    price=price,
)
