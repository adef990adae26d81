"""Training and batch transform jobs: cost per run, Spot, under-used hosts, experiments, and
recurring transform jobs that run for hours. Pure: models and frames in, figures and findings out.

Costs per run use the catalog's training price for training jobs (billable seconds x instance
count) and the hosting price for transform jobs (duration x instance count). The rules here find
the candidates; recommend/jobs.py prices the change.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from auditor.analyse.normalise import normalise_utilisation, summarise_utilisation
from auditor.analyse.rules.base import RuleMeta, make_finding
from auditor.analyse.usage import format_duration
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.models import Finding, Resource, Severity, TrainingJob, TransformJob, VariantUtilization

TRAINING_SPOT_CANDIDATE = RuleMeta(
    "training-spot-candidate",
    "On-demand training that could run on Spot",
    Severity.LOW,
    "Set EnableManagedSpotTraining, MaxWaitTimeInSeconds and a CheckpointConfig so interrupted jobs resume.",
)
TRAINING_UNDERUTILIZED = RuleMeta(
    "training-underutilized",
    "Training hosts under-used",
    Severity.LOW,
    "Train on the advised shape or host count.",
)
TRANSFORM_LONG_RUNNING = RuleMeta(
    "transform-long-running",
    "Recurring batch transform that runs for hours",
    Severity.LOW,
    "Change the job's instance type or count as advised.",
)
JOB_RULES = (TRAINING_SPOT_CANDIDATE, TRAINING_UNDERUTILIZED, TRANSFORM_LONG_RUNNING)
# A transform job this busy is bound by its instances: more of them finish sooner at the same cost.
BOUND_PERCENT = 80.0


@dataclass(frozen=True)
class TrainingCost:
    job: TrainingJob
    price_per_hour: float | None
    cost_usd: float | None  # billed: billable seconds x count x price
    on_demand_cost_usd: float | None  # training seconds x count x price: what on-demand costs
    spot_cost_usd: float | None  # billed, for Spot jobs; estimated at the discount otherwise
    spot_saving_usd: float | None  # realised for Spot jobs; potential otherwise
    utilization: VariantUtilization | None = None

    @property
    def spot_estimated(self) -> bool:
        return not self.job.spot


def training_cost(job: TrainingJob, catalog: Catalog, spot_discount: float) -> TrainingCost:
    price = catalog.training_price(job.instance_type, job.region)
    if price is None or job.billable_seconds is None or job.training_seconds is None:
        return TrainingCost(job, price, None, None, None, None)
    per_second = price / 3600 * job.instance_count
    billed = round(job.billable_seconds * per_second, 4)
    on_demand = round(job.training_seconds * per_second, 4)
    if job.spot:
        return TrainingCost(job, price, billed, on_demand, billed, round(on_demand - billed, 4))
    return TrainingCost(job, price, billed, on_demand, round(billed * (1 - spot_discount), 4),
                        round(billed * spot_discount, 4))


def job_utilisation(frames: dict[str, pd.DataFrame], instance_type: str, catalog: Catalog,
                    period_seconds: int, config: AuditConfig) -> VariantUtilization | None:
    """All hosts' normalised minutes together: p95 and max over host-minutes."""
    shape = catalog.shape(instance_type)
    parts = [normalise_utilisation(frame, shape) for frame in frames.values()]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return None
    stacked = pd.concat(parts)
    raw = pd.concat(frames.values())
    return summarise_utilisation(stacked, raw, period_seconds, config.thresholds.sizing_statistic,
                                 config.recommend.peak_statistic)


# ---------- Spot ----------

def check_spot_candidate(cost: TrainingCost, config: AuditConfig) -> Finding | None:
    """A completed on-demand job whose Spot saving per run is worth saying; priced by recommend."""
    job = cost.job
    if job.spot or job.status != "Completed" or cost.cost_usd is None or cost.spot_saving_usd is None:
        return None
    if cost.spot_saving_usd < config.jobs.min_savings_usd:
        return None
    discount = config.jobs.spot_discount_percent
    notes = []
    if not job.checkpoint_s3_uri:
        notes.append("it has no CheckpointConfig, so a Spot interruption would restart it from scratch")
    if not job.max_wait_seconds:
        notes.append("MaxWaitTimeInSeconds is unset (Spot needs it, at least MaxRuntimeInSeconds)")
    message = (
        f"{job.instance_count} x {job.instance_type} on demand for {format_duration(job.training_seconds, 'an unknown time')}: "
        f"${cost.cost_usd:,.2f}; on Spot at {discount:g}% off about ${cost.spot_cost_usd:,.2f}"
        + (f". Note: {'; '.join(notes)}" if notes else "")
    )
    return make_finding(TRAINING_SPOT_CANDIDATE, job, None, message + ".", {
        "resource_type": "training-job", "training_seconds": job.training_seconds,
        "billable_seconds": job.billable_seconds, "spot_discount_percent": discount,
        "per_run_usd": round(cost.cost_usd, 2), "per_run_spot_usd": round(cost.spot_cost_usd or 0.0, 2),
        "checkpoint_config": bool(job.checkpoint_s3_uri), "max_wait_seconds": job.max_wait_seconds,
    })


# ---------- Under-used training hosts ----------

def check_training_underutilized(cost: TrainingCost, catalog: Catalog, config: AuditConfig) -> Finding | None:
    """GPU (or, without GPUs, CPU) under its threshold on the job's hosts; recommend sizes it."""
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
    return make_finding(
        TRAINING_UNDERUTILIZED, job, None,
        f"{label} {config.thresholds.sizing_statistic} {level:.1f}% on {job.instance_count} x {job.instance_type} "
        f"(threshold {threshold:g}%)",
        {"resource_type": "training-job", "resource": resource.value, "level": round(level, 2),
         "threshold": threshold, "per_run_usd": round(cost.cost_usd, 2),
         "utilization": {r.value: {"avg": u.avg, "p95": u.p95, "max": u.max} for r, u in util.by_resource.items()}},
    )




# ---------- Experiments ----------

@dataclass(frozen=True)
class ExperimentRun:
    job: str
    instance_type: str
    instance_count: int
    setting: dict[str, str]  # the hyperparameters that differ between the experiment's runs
    training_seconds: int | None
    on_demand_cost_usd: float | None
    spot_cost_usd: float | None
    spot_estimated: bool
    final_metrics: dict[str, float]


@dataclass(frozen=True)
class Verdict:
    setting: dict[str, str]
    cheapest_instance_type: str
    cost_per_run_usd: float
    alternatives: dict[str, float]  # instance type -> mean on-demand cost per run
    spot_cost_per_run_usd: float | None = None


@dataclass(frozen=True)
class Experiment:
    name: str
    image: str
    varied: tuple[str, ...]  # hyperparameter names that differ
    runs: tuple[ExperimentRun, ...]
    verdicts: tuple[Verdict, ...] = field(default_factory=tuple)


def _experiment_key(job: TrainingJob, prefixes: tuple[str, ...]) -> tuple[str, str]:
    prefix = next((p for p in prefixes if job.name.startswith(p)), None)
    if prefix is not None:
        return ("prefix", prefix)
    return (job.image, ",".join(sorted(job.hyperparameters)))


def build_experiments(costs: list[TrainingCost], prefixes: tuple[str, ...]) -> list[Experiment]:
    """Jobs with the same image and hyperparameter names (or a configured name prefix), two or more."""
    groups: dict[tuple[str, str], list[TrainingCost]] = defaultdict(list)
    for cost in costs:
        if cost.job.status == "Completed":
            groups[_experiment_key(cost.job, prefixes)].append(cost)
    experiments = []
    for key, members in groups.items():
        if len(members) < 2:
            continue
        members.sort(key=lambda c: c.job.created_at)
        keys = sorted({k for c in members for k in c.job.hyperparameters})
        varied = tuple(k for k in keys if len({c.job.hyperparameters.get(k) for c in members}) > 1)
        runs = tuple(
            ExperimentRun(
                job=c.job.name, instance_type=c.job.instance_type, instance_count=c.job.instance_count,
                setting={k: c.job.hyperparameters.get(k, "") for k in varied},
                training_seconds=c.job.training_seconds, on_demand_cost_usd=c.on_demand_cost_usd,
                spot_cost_usd=c.spot_cost_usd, spot_estimated=c.spot_estimated, final_metrics=c.job.final_metrics,
            )
            for c in members
        )
        name = key[1] if key[0] == "prefix" else _common_prefix([c.job.name for c in members]) or members[0].job.image
        experiments.append(Experiment(name=name, image=members[0].job.image, varied=varied, runs=runs,
                                      verdicts=tuple(_verdicts(runs, varied))))
    return sorted(experiments, key=lambda e: e.name)


def _verdicts(runs: tuple[ExperimentRun, ...], varied: tuple[str, ...]) -> list[Verdict]:
    """Per setting of the other hyperparameters: the instance type cheapest per run (on demand,
    so Spot and on-demand runs compare fairly)."""
    others = tuple(k for k in varied if not k.startswith("instance"))
    by_setting: dict[tuple[str, ...], dict[str, list[ExperimentRun]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.on_demand_cost_usd is not None:
            by_setting[tuple(run.setting[k] for k in others)][run.instance_type].append(run)
    verdicts = []
    for setting, per_type in sorted(by_setting.items()):
        if len(per_type) < 2:
            continue  # one instance type: nothing to compare
        means = {t: round(statistics.mean(r.on_demand_cost_usd or 0.0 for r in rs), 4) for t, rs in per_type.items()}
        cheapest = min(means, key=lambda t: (means[t], t))
        spot = [r.spot_cost_usd for r in per_type[cheapest] if r.spot_cost_usd is not None]
        verdicts.append(Verdict(setting=dict(zip(others, setting)), cheapest_instance_type=cheapest,
                                cost_per_run_usd=means[cheapest], alternatives=means,
                                spot_cost_per_run_usd=round(statistics.mean(spot), 4) if spot else None))
    return verdicts


def _common_prefix(names: list[str]) -> str:
    prefix = names[0]
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return prefix.rstrip("-_") or ""


# ---------- Batch transform ----------

@dataclass(frozen=True)
class TransformCost:
    job: TransformJob
    price_per_hour: float | None
    cost_usd: float | None
    utilization: VariantUtilization | None = None


def transform_cost(job: TransformJob, catalog: Catalog) -> TransformCost:
    price = catalog.hourly_price(job.instance_type, job.region)
    seconds = job.duration_seconds
    cost = None if price is None or seconds is None else round(seconds / 3600 * price * job.instance_count, 4)
    return TransformCost(job, price, cost)


def name_pattern(name: str) -> str:
    """Jobs of one schedule share their name once dates and counters are taken out."""
    return re.sub(r"\d+", "#", name)


def check_transform_long_running(costs: list[TransformCost], catalog: Catalog, config: AuditConfig) -> list[Finding]:
    """Daily jobs of one name pattern that run for hours, and are either bound by their instances
    (at or above BOUND_PERCENT) or under the threshold; recommend prices the change."""
    settings = config.jobs
    groups: dict[str, list[TransformCost]] = defaultdict(list)
    for cost in costs:
        if cost.job.status == "Completed" and cost.job.started_at and cost.cost_usd is not None:
            groups[name_pattern(cost.job.name)].append(cost)
    findings = []
    for pattern, members in sorted(groups.items()):
        if len(members) < settings.transform_min_runs:
            continue
        members.sort(key=lambda c: c.job.started_at or datetime.min)
        gaps = [(b.job.started_at - a.job.started_at).total_seconds() / 3600  # type: ignore[operator]
                for a, b in zip(members, members[1:])]
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
        findings.append(make_finding(
            TRANSFORM_LONG_RUNNING, latest.job, None,
            f"{len(members)} daily runs of {pattern}, {hours:.1f} h each on {latest.job.instance_count} x "
            f"{latest.job.instance_type} (${cost_per_run:,.2f} a run), {label} {config.thresholds.sizing_statistic} "
            f"{level:.0f}%: {'bound' if bound else 'not bound'} by its instances",
            {"resource_type": "transform-job", "pattern": pattern, "runs": len(members),
             "median_hours": round(hours, 2), "median_gap_hours": round(statistics.median(gaps), 2),
             "resource": resource.value, "level": round(level, 2), "bound": bound,
             "cost_per_run_usd": round(cost_per_run, 2)},
        ))
    return findings
