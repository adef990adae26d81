"""transform-long-running: daily batch transform jobs of one name pattern that run for hours, and
are either bound by their instances (more of them finish sooner at about the same cost) or under
the threshold (the next size down costs less in about the same time)."""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import datetime

from auditor.analyse.rules.base import CollectionRule, RuleSettings
from auditor.catalog import HOURS_PER_MONTH, Catalog, InstanceShape
from auditor.config import AuditConfig
from auditor.kinds.jobs.analysis import name_pattern
from auditor.kinds.jobs.assessment import JobsAssessment
from auditor.kinds.jobs.models import TransformCost
from auditor.kinds.jobs.settings import JobsConfig
from auditor.models import Finding, Judged, Recommendation, Resource, Severity, TransformProposal
from auditor.recommend.pricing import priced

# A transform job this busy is bound by its instances: more of them finish sooner at the same cost.
BOUND_PERCENT = 80.0
DAILY_RUNS_PER_MONTH = HOURS_PER_MONTH / 24


def check(jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    settings = JobsConfig.of(config)
    groups: dict[str, list[TransformCost]] = defaultdict(list)
    for cost in jobs.transform:
        if cost.job.status == "Completed" and cost.job.started_at and cost.cost_usd is not None:
            groups[name_pattern(cost.job.name)].append(cost)
    for pattern, members in sorted(groups.items()):
        if len(members) < settings.transform_min_runs:
            continue
        members.sort(key=lambda c: c.job.started_at or datetime.min)
        gaps = [(b.job.started_at - a.job.started_at).total_seconds() / 3600  # type: ignore[operator]
                for a, b in itertools.pairwise(members)]
        if not 20 <= statistics.median(gaps) <= 28:
            continue  # not daily
        hours = statistics.median((c.job.duration_seconds or 0) / 3600 for c in members)
        if hours < settings.transform_min_hours:
            continue
        latest = members[-1]
        shape = catalog.shape(latest.job.instance_type)
        util = latest.utilization
        if shape is None or util is None:
            continue
        resource = Resource.GPU if shape.has_accelerator and Resource.GPU in util.sizing else Resource.CPU
        level = util.sizing.get(resource)
        threshold = config.thresholds.gpu if resource is Resource.GPU else config.thresholds.cpu
        if level is None or threshold <= level < BOUND_PERCENT:
            continue  # neither bound nor under-used: fine as it is
        cost_per_run = statistics.mean(c.cost_usd or 0.0 for c in members)
        label = "GPU" if resource is Resource.GPU else "CPU"
        bound = level >= BOUND_PERCENT
        yield RULE.finding(
            latest.job, None,
            f"{len(members)} daily runs of {pattern}, {hours:.1f} h each on {latest.job.instance_count} x "
            f"{latest.job.instance_type} (${cost_per_run:,.2f} a run), {label} {config.thresholds.sizing_statistic} "
            f"{level:.0f}%: {'bound' if bound else 'not bound'} by its instances",
            {"pattern": pattern, "runs": len(members),
             "median_hours": round(hours, 2), "median_gap_hours": round(statistics.median(gaps), 2),
             "resource": resource.value, "level": round(level, 2), "bound": bound,
             "cost_per_run_usd": round(cost_per_run, 2)},
            proposal=TransformProposal(bound, round(hours, 2), round(cost_per_run, 2)),
        )


def price(finding: Finding, jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    latest = jobs.by_name[finding.resource.name]
    assert isinstance(latest, TransformCost) and isinstance(finding.proposal, TransformProposal)
    proposal = finding.proposal
    hours, cost_per_run = proposal.median_hours, proposal.cost_per_run_usd
    count, instance_type = latest.job.instance_count, latest.job.instance_type
    current = round(cost_per_run * DAILY_RUNS_PER_MONTH, 2)
    if proposal.bound:
        recommendation = Recommendation(
            "scale-out", instance_type, count * 2, current_monthly_usd=current, recommended_monthly_usd=current,
            details={"estimated_hours": round(hours / 2, 2), "assumes": "the work divides evenly across instances"})
        return priced(finding, recommendation,
                      f"{finding.message}. {count * 2} x {instance_type} would take about {hours / 2:.1f} h at about "
                      f"the same cost (${cost_per_run:,.2f} a run).")
    shape = catalog.shape(instance_type)
    price_of = catalog.priced_like(instance_type, latest.job.region, "batch")
    smaller = _smaller_shape(shape, catalog, latest.job.region, price_of) if shape else None
    price = price_of(smaller.instance_type, latest.job.region) if smaller else None
    if smaller is None or price is None:
        return None  # already the smallest of its family: nothing to advise
    new_cost = hours * price * count
    recommendation = Recommendation(
        "resize", smaller.instance_type, count, current_monthly_usd=current,
        recommended_monthly_usd=round(new_cost * DAILY_RUNS_PER_MONTH, 2),
        details={"estimated_hours": round(hours, 2),
                 "assumes": "the job is not bound by CPU or GPU, so it runs as long"})
    return priced(finding, recommendation,
                  f"{finding.message}. {count} x {smaller.instance_type} would cost about ${new_cost:,.2f} a run in "
                  f"about the same {hours:.1f} h.")


def _smaller_shape(shape: InstanceShape, catalog: Catalog, region: str,
                   price_of: Callable[[str, str], float | None]) -> InstanceShape | None:
    """The next size down in the same family (fewer vCPUs, no more GPUs), priced in the region."""
    candidates = [
        s for s in catalog.shapes.values()
        if s.family == shape.family and s.vcpu < shape.vcpu and s.gpu_count <= shape.gpu_count and s.accelerators_known
        and (s.gpu_count > 0) == (shape.gpu_count > 0)
        and price_of(s.instance_type, region) is not None
    ]
    return max(candidates, key=lambda s: s.vcpu, default=None)


RULE = CollectionRule(
    assessment=JobsAssessment,
    id="transform-long-running",
    title="Recurring batch transform that runs for hours",
    severity=Severity.LOW,
    remediation="Change the job's instance type or count as advised.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/batch-transform.html",
    judges=frozenset({Judged.TRANSFORM_JOB}),
    settings=RuleSettings,
    check=check,
    price=price,
)
