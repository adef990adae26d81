"""Training, batch transform and processing jobs, as one resource kind: discovered per region
(created in the window), costed, their hosts' utilisation collected, judged by the rules over
`JobsAssessment`; the JSON section `jobs`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

import pandas as pd
from botocore.client import BaseClient

from auditor.analyse.usage import per_month
from auditor.catalog import Catalog
from auditor.collect.session import RegionAccessError
from auditor.config import AuditConfig
from auditor.kinds.base import Audience, AudienceOf, KindResult, Owned, RegionScope, ResourceKind, ResourcePrice
from auditor.kinds.jobs.analysis import (
    build_experiments,
    job_series,
    job_utilisation,
    processing_cost,
    training_cost,
    transform_cost,
)
from auditor.kinds.jobs.assessment import JobsAssessment
from auditor.kinds.jobs.change import OPERATIONS as RUN_REQUESTS
from auditor.kinds.jobs.discover import discover_jobs, read_tags
from auditor.kinds.jobs.discover_processing import discover_processing_jobs
from auditor.kinds.jobs.metrics import (
    PROCESSING_NAMESPACE,
    TRAINING_NAMESPACE,
    TRANSFORM_NAMESPACE,
    JobSpan,
    collect_job_metrics,
    list_job_hosts,
)
from auditor.kinds.jobs.models import (
    JobsSection,
    ProcessingCost,
    ProcessingJob,
    TrainingCost,
    TrainingJob,
    TransformCost,
    TransformJob,
)
from auditor.kinds.jobs.plans import plan_subjects
from auditor.kinds.jobs.report import csv_tables, shapes
from auditor.kinds.jobs.rules import RULES
from auditor.kinds.jobs.settings import JobsConfig
from auditor.models import AuditError, Finding, Window
from auditor.values import iso, money, utilization_summary

# Job hosts' metrics are collected at 1-minute periods.
JOB_PERIOD_SECONDS = 60


def audit(scope: RegionScope) -> KindResult[JobsSection]:
    """Training and transform jobs created in the window: cost, Spot, utilisation, experiments;
    then processing jobs (a failure there leaves training and transform standing)."""
    region, config, catalog, window, now = scope.region, scope.config, scope.catalog, scope.window, scope.now
    sagemaker, cloudwatch = scope.clients.client("sagemaker", region), scope.clients.client("cloudwatch", region)
    errors: list[AuditError] = []
    try:
        discovery = discover_jobs(sagemaker, region, window.start, config.aws.max_workers)
        errors.extend(discovery.errors)
        discount = JobsConfig.of(config).spot_discount_percent / 100.0
        training = [training_cost(job, catalog, discount) for job in discovery.training]
        transform = [transform_cost(job, catalog) for job in discovery.transform]
        training, training_errors = with_utilisation(training, cloudwatch, region, TRAINING_NAMESPACE, catalog,
                                                     config, now)
        transform, transform_errors = with_utilisation(transform, cloudwatch, region, TRANSFORM_NAMESPACE, catalog,
                                                       config, now)
        errors += training_errors + transform_errors
    except RegionAccessError as exc:
        error = AuditError(region, None, "collect", f"{exc.message} (training and transform jobs; "
                                                   "jobs.enabled = false skips them)")
        return KindResult(JobsSection(), errors=(*errors, error), fatal=(error,))
    fatal: list[AuditError] = []
    processing: list[ProcessingCost] = []
    try:
        processing_found = discover_processing_jobs(sagemaker, region, window.start, config.aws.max_workers)
        errors.extend(processing_found.errors)
        processing, processing_errors = with_utilisation(
            [processing_cost(job, catalog) for job in processing_found.jobs], cloudwatch, region,
            PROCESSING_NAMESPACE, catalog, config, now)
        errors += processing_errors
    except RegionAccessError as exc:
        # Training and transform stand; processing jobs are not audited in this region.
        error = AuditError(region, None, "collect", f"{exc.message} (processing jobs; jobs.enabled = false skips "
                                                   "them)")
        errors.append(error)
        fatal.append(error)
    jobs = JobsAssessment(tuple(training), tuple(transform), window, processing=tuple(processing))
    findings = scope.judge(jobs)
    judged = {f.resource.name for f in findings}
    training, transform, processing = (only_judged_series(training, judged), only_judged_series(transform, judged),
                                       only_judged_series(processing, judged))
    if config.email.route_by_tag or config.chat.route_by_tag:
        training, transform, processing, tag_errors = with_tags(sagemaker, region, findings, training, transform,
                                                                processing)
        errors += tag_errors
    section = JobsSection(tuple(training), tuple(transform),
                          tuple(build_experiments(training, JobsConfig.of(config).experiment_prefixes)),
                          processing=tuple(processing))
    return KindResult(section, tuple(findings), tuple(errors), tuple(fatal))


Cost = TypeVar("Cost", TrainingCost, TransformCost, ProcessingCost)


def only_judged_series(costs: list[Cost], judged: set[str]) -> list[Cost]:
    """Only a job with a finding has a plan whose risk replays its series: the others' are let go
    (a day's run is 1,440 minutes a resource)."""
    return [c if c.job.name in judged or c.series is None else replace(c, series=None) for c in costs]


def with_tags(sagemaker: BaseClient, region: str, findings: list[Finding], training: list[TrainingCost],
              transform: list[TransformCost], processing: list[ProcessingCost],
              ) -> tuple[list[TrainingCost], list[TransformCost], list[ProcessingCost], list[AuditError]]:
    """For owner routing: the tags of the jobs that have a finding (one ListTags each: a few calls,
    not one per job of the window). The other jobs keep none and go to the default audience."""
    named = {(f.resource.type, f.resource.name) for f in findings}
    names = {c.job.arn: c.job.name for kind, costs in (("training-job", training), ("transform-job", transform),
                                                       ("processing-job", processing))
             for c in costs if (kind, c.job.name) in named and c.job.arn}
    if not names:
        return training, transform, processing, []
    tags, errors = read_tags(sagemaker, region, names)

    def tagged(costs: list[Cost]) -> list[Cost]:
        return [replace(c, job=replace(c.job, tags=tags[c.job.arn])) if c.job.arn in tags else c for c in costs]

    return tagged(training), tagged(transform), tagged(processing), errors


def with_utilisation(costs: list[Cost], cloudwatch: BaseClient, region: str, namespace: str, catalog: Catalog,
                     config: AuditConfig, now: datetime) -> tuple[list[Cost], list[AuditError]]:
    """The costs with each finished job's host utilisation attached (where CloudWatch has it)."""
    finished = [c for c in costs if c.job.started_at and c.job.ended_at]
    if not finished:
        return costs, []
    hosts = list_job_hosts(cloudwatch, region, namespace)
    spans = []
    for cost in finished:
        shape = catalog.shape(cost.job.instance_type)
        if cost.job.name in hosts:
            assert cost.job.started_at is not None and cost.job.ended_at is not None
            spans.append(JobSpan(cost.job.name, cost.job.started_at, cost.job.ended_at, tuple(hosts[cost.job.name]),
                                 gpu=bool(shape and shape.has_accelerator)))
    metrics = collect_job_metrics(cloudwatch, region, spans, namespace, now)
    by_job: dict[str, dict[str, pd.DataFrame]] = {}
    for (job, host, _), frame in metrics.frames.items():
        by_job.setdefault(job, {})[host or ""] = frame
    return [
        replace(c, utilization=job_utilisation(by_job[c.job.name], c.job.instance_type, catalog, JOB_PERIOD_SECONDS,
                                               config),
                series=job_series(by_job[c.job.name], c.job.instance_type, catalog))
        if c.job.name in by_job else c
        for c in costs
    ], list(metrics.errors)


def merge(sections: Sequence[JobsSection]) -> JobsSection:
    return JobsSection(
        training=tuple(c for s in sections for c in s.training),
        transform=tuple(c for s in sections for c in s.transform),
        experiments=tuple(e for s in sections for e in s.experiments),
        processing=tuple(c for s in sections for c in s.processing),
    )


def owned(section: JobsSection) -> Iterable[Owned]:
    for kind, costs in (("training-job", section.training), ("transform-job", section.transform),
                        ("processing-job", section.processing)):
        for cost in costs:
            yield Owned(cost.job.account_id, cost.job.region, kind, cost.job.name, cost.job.tags)


def only(section: JobsSection, audience_of: AudienceOf, audience: Audience) -> JobsSection:
    def mine(kind: str, job: TrainingJob | TransformJob | ProcessingJob) -> bool:
        return audience_of(job.account_id, job.region, kind, job.name) == audience

    run_audience = {c.job.name: audience_of(c.job.account_id, c.job.region, "training-job", c.job.name)
                    for c in section.training}

    def experiment_audience(runs: Iterable[str]) -> Audience:
        """An experiment goes with its runs when they share one audience, else to the default one."""
        owners = {run_audience.get(run) for run in runs}
        return owners.pop() if len(owners) == 1 else None

    return JobsSection(
        training=tuple(c for c in section.training if mine("training-job", c.job)),
        transform=tuple(c for c in section.transform if mine("transform-job", c.job)),
        experiments=tuple(e for e in section.experiments if experiment_audience(r.job for r in e.runs) == audience),
        processing=tuple(c for c in section.processing if mine("processing-job", c.job)),
    )


def price_uses(section: JobsSection) -> Iterable[ResourcePrice]:
    for kind, usage, costs in (("training-job", "training", section.training),
                               ("transform-job", "batch", section.transform),
                               ("processing-job", "processing", section.processing)):
        for cost in costs:
            yield ResourcePrice(kind, cost.job.name, usage, cost.job.instance_type, cost.job.region)


def to_dict(jobs: JobsSection) -> dict[str, Any]:
    training = [
        {
            "account_id": c.job.account_id, "region": c.job.region, "name": c.job.name, "status": c.job.status,
            "instance_type": c.job.instance_type, "instance_count": c.job.instance_count, "spot": c.job.spot,
            "created_at": iso(c.job.created_at), "training_seconds": c.job.training_seconds,
            "billable_seconds": c.job.billable_seconds, "cost_usd": money(c.cost_usd),
            "on_demand_cost_usd": money(c.on_demand_cost_usd), "spot_cost_usd": money(c.spot_cost_usd),
            "spot_cost_estimated": c.spot_estimated, "spot_saving_usd": money(c.spot_saving_usd),
            "checkpoint_config": bool(c.job.checkpoint_s3_uri), "max_wait_seconds": c.job.max_wait_seconds,
            "image": c.job.image, "hyperparameters": c.job.hyperparameters, "final_metrics": c.job.final_metrics,
            "utilization": utilization_summary(c.utilization),
        }
        for c in jobs.training
    ]
    transform = [
        {
            "account_id": c.job.account_id, "region": c.job.region, "name": c.job.name, "status": c.job.status,
            "instance_type": c.job.instance_type, "instance_count": c.job.instance_count,
            "model_name": c.job.model_name, "created_at": iso(c.job.created_at),
            "duration_seconds": c.job.duration_seconds, "cost_usd": money(c.cost_usd),
            "price_basis": c.price_basis, "utilization": utilization_summary(c.utilization),
        }
        for c in jobs.transform
    ]
    experiments = [
        {
            "name": e.name, "image": e.image, "varied": list(e.varied),
            "runs": [
                {"job": r.job, "instance_type": r.instance_type, "instance_count": r.instance_count,
                 "setting": r.setting, "training_seconds": r.training_seconds,
                 "on_demand_cost_usd": money(r.on_demand_cost_usd), "spot_cost_usd": money(r.spot_cost_usd),
                 "spot_cost_estimated": r.spot_estimated, "final_metrics": r.final_metrics}
                for r in e.runs
            ],
            "verdicts": [
                {"setting": v.setting, "cheapest_instance_type": v.cheapest_instance_type,
                 "cost_per_run_usd": money(v.cost_per_run_usd),
                 "spot_cost_per_run_usd": money(v.spot_cost_per_run_usd),
                 "cost_per_run_by_instance_type": {t: money(c) for t, c in v.alternatives.items()}}
                for v in e.verdicts
            ],
        }
        for e in jobs.experiments
    ]
    processing = [
        {
            "account_id": c.job.account_id, "region": c.job.region, "name": c.job.name, "status": c.job.status,
            "instance_type": c.job.instance_type, "instance_count": c.job.instance_count, "image": c.job.image,
            "created_at": iso(c.job.created_at), "duration_seconds": c.job.duration_seconds,
            "cost_usd": money(c.cost_usd), "price_basis": c.price_basis,
            "utilization": utilization_summary(c.utilization),
        }
        for c in jobs.processing
    ]
    realised = [c.spot_saving_usd for c in jobs.training if c.job.spot]
    potential = [c.spot_saving_usd for c in jobs.training if not c.job.spot and c.job.status == "Completed"]
    return {
        "summary": {
            "training_jobs": len(training),
            "training_cost_usd": round(sum(c.cost_usd or 0.0 for c in jobs.training), 2),
            "spot_saving_realised_usd": round(sum(v or 0.0 for v in realised), 2),
            "spot_saving_potential_usd": round(sum(v or 0.0 for v in potential), 2),
            "transform_jobs": len(transform),
            "transform_cost_usd": round(sum(c.cost_usd or 0.0 for c in jobs.transform), 2),
            "processing_jobs": len(processing),
            "processing_cost_usd": round(sum(c.cost_usd or 0.0 for c in jobs.processing), 2),
        },
        "training": training,
        "transform": transform,
        "experiments": experiments,
        "processing": processing,
    }



def monthly_cost(section: JobsSection, window: Window) -> float:
    """What the window's jobs cost, scaled to a 730-hour month (as the jobs' plans count their saving)."""
    total = (sum(c.cost_usd or 0.0 for c in section.training) + sum(c.cost_usd or 0.0 for c in section.transform)
             + sum(c.cost_usd or 0.0 for c in section.processing))
    return round(per_month(total, window), 2)


KIND: ResourceKind[JobsSection] = ResourceKind(
    key="jobs",
    title="Training, batch transform and processing jobs",
    order=20,
    iam_actions=frozenset({
        "sagemaker:ListTrainingJobs", "sagemaker:DescribeTrainingJob", "sagemaker:ListTransformJobs",
        "sagemaker:DescribeTransformJob", "sagemaker:ListProcessingJobs", "sagemaker:DescribeProcessingJob",
        "cloudwatch:ListMetrics", "cloudwatch:GetMetricData",
    }),
    enabled=lambda config: JobsConfig.of(config).enabled,
    audit=audit,
    empty=JobsSection(),
    merge=merge,
    to_dict=to_dict,
    owned=owned,
    only=only,
    price_uses=price_uses,
    monthly_cost=monthly_cost,
    plan_subjects=plan_subjects,
    templates={"html": "kind_jobs.html.j2", "text": "kind_jobs.txt.j2", "markdown": "kind_jobs.md.j2"},
    csv_tables=csv_tables,
    shapes=shapes,
    rules=RULES,
    # A job's change is the next run's request (audit plans show ID --as cli): apply never starts a job.
    next_run_types=frozenset(RUN_REQUESTS),
    settings={"jobs": JobsConfig},
)
