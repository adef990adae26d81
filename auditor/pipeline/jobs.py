"""Training, batch transform and processing jobs of one region: discover, cost, host utilisation,
rules, prices."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar

import pandas as pd
from botocore.client import BaseClient

from auditor.analyse.jobs import build_experiments, job_utilisation, training_cost, transform_cost
from auditor.analyse.rules import JobsAssessment, evaluate_jobs
from auditor.analyse.workspaces import processing_cost
from auditor.catalog import Catalog
from auditor.collect.job_metrics import (
    PROCESSING_NAMESPACE,
    TRAINING_NAMESPACE,
    TRANSFORM_NAMESPACE,
    JobSpan,
    collect_job_metrics,
    list_job_hosts,
)
from auditor.collect.session import AwsClients, RegionAccessError
from auditor.config import AuditConfig
from auditor.discover.jobs import discover_jobs, read_tags
from auditor.discover.processing import discover_processing_jobs
from auditor.models import AuditError, Finding, JobsSection, TrainingCost, TransformCost, Window
from auditor.recommend.advice import attach_recommendations
from auditor.workspaces import ProcessingCost

# Job hosts' metrics are collected at 1-minute periods.
JOB_PERIOD_SECONDS = 60


@dataclass(frozen=True)
class JobsResult:
    section: JobsSection = field(default_factory=JobsSection)
    findings: tuple[Finding, ...] = ()
    errors: tuple[AuditError, ...] = ()
    fatal: tuple[AuditError, ...] = ()


def audit_jobs(
    region: str, config: AuditConfig, clients: AwsClients, catalog: Catalog, window: Window, now: datetime
) -> JobsResult:
    """Training and transform jobs created in the window: cost, Spot, utilisation, experiments."""
    sagemaker, cloudwatch = clients.client("sagemaker", region), clients.client("cloudwatch", region)
    errors: list[AuditError] = []
    try:
        discovery = discover_jobs(sagemaker, region, window.start, config.aws.max_workers)
        errors.extend(discovery.errors)
        discount = config.jobs.spot_discount_percent / 100.0
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
        return JobsResult(errors=(*errors, error), fatal=(error,))
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
    findings = attach_recommendations(evaluate_jobs(jobs, catalog, config), {}, catalog, config, jobs)
    if config.email.route_by_tag or config.chat.route_by_tag:
        training, transform, processing, tag_errors = with_tags(sagemaker, region, findings, training, transform,
                                                                processing)
        errors += tag_errors
    section = JobsSection(tuple(training), tuple(transform),
                          tuple(build_experiments(training, config.jobs.experiment_prefixes)),
                          processing=tuple(processing))
    return JobsResult(section, tuple(findings), tuple(errors), tuple(fatal))


Cost = TypeVar("Cost", TrainingCost, TransformCost, ProcessingCost)


def with_tags(sagemaker: BaseClient, region: str, findings: list[Finding], training: list[TrainingCost],
              transform: list[TransformCost], processing: list[ProcessingCost],
              ) -> tuple[list[TrainingCost], list[TransformCost], list[ProcessingCost], list[AuditError]]:
    """For owner routing: the tags of the jobs that have a finding (one ListTags each: a few calls,
    not one per job of the window). The other jobs keep none and go to the default audience."""
    named = {(f.resource_type, f.endpoint) for f in findings}
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
                                               config))
        if c.job.name in by_job else c
        for c in costs
    ], list(metrics.errors)
