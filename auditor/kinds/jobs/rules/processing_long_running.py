"""processing-long-running: processing jobs of one name pattern (digits taken out) that recur and
run for hours, bound by their instances (CPU or GPU at or above 80%): twice the instances finish in
about half the time at about the same cost. Under the threshold, `processing-underutilized` judges."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from dataclasses import dataclass

from auditor.analyse.rules.base import CollectionRule, RuleSettings, settings_of
from auditor.analyse.usage import per_month
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.jobs.assessment import JobsAssessment
from auditor.kinds.jobs.rules.transform_long_running import BOUND_PERCENT
from auditor.kinds.jobs.schedules import recurring_processing
from auditor.models import Finding, Judged, Recommendation, Resource, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting


@dataclass(frozen=True)
class ProcessingLongRunningSettings(RuleSettings):
    min_runs: int = setting(3, "runs of one name pattern in the window that make it recurring", minimum=2,
                            maximum=10000)
    min_hours: float = setting(1.0, "median run this long", minimum=0, maximum=24 * 365)


def check(jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    settings = settings_of(RULE, config)
    for pattern, members in recurring_processing(jobs.processing, settings.min_runs):
        hours = statistics.median((c.job.duration_seconds or 0) / 3600 for c in members)
        latest = members[-1]
        shape = catalog.shape(latest.job.instance_type)
        util = latest.utilization
        if hours < settings.min_hours or shape is None or util is None or jobs.window is None:
            continue
        resource = Resource.GPU if shape.has_accelerator and Resource.GPU in util.sizing else Resource.CPU
        level = util.sizing.get(resource)
        if level is None or level < BOUND_PERCENT:
            continue
        label = "GPU" if resource is Resource.GPU else "CPU"
        count, instance_type = latest.job.instance_count, latest.job.instance_type
        cost_per_run = statistics.mean(c.cost_usd or 0.0 for c in members)
        monthly = round(per_month(sum(c.cost_usd or 0.0 for c in members), jobs.window), 2)
        finding = RULE.finding(
            latest.job, None,
            f"{len(members)} runs of {pattern}, {hours:.1f} h each on {count} x {instance_type} "
            f"(${cost_per_run:,.2f} a run), {label} {config.thresholds.sizing_statistic} {level:.0f}%: bound by its "
            f"instances. {count * 2} x {instance_type} would take about {hours / 2:.1f} h at about the same cost",
            {"pattern": pattern, "runs": len(members), "median_hours": round(hours, 2), "resource": resource.value,
             "level": round(level, 2), "cost_per_run_usd": round(cost_per_run, 2)},
        )
        yield priced(finding, Recommendation(
            "scale-out", instance_type, count * 2, current_monthly_usd=monthly, recommended_monthly_usd=monthly,
            details={"estimated_hours": round(hours / 2, 2), "assumes": "the work divides evenly across instances",
                     "basis": "the window's spend on this pattern, scaled to 730 hours"}),
            severity=Severity.LOW)


RULE = CollectionRule(
    assessment=JobsAssessment,
    id="processing-long-running",
    title="Recurring processing job that runs for hours",
    severity=Severity.LOW,
    remediation="Run it on more instances (ProcessingResources.ClusterConfig.InstanceCount) with its input "
                "sharded (S3DataDistributionType ShardedByS3Key).",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/processing-job.html",
    judges=frozenset({Judged.PROCESSING_JOB}),
    settings=ProcessingLongRunningSettings,
    check=check,
)
