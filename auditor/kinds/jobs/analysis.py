"""Training and batch transform jobs: cost per run, host utilisation and experiments. Pure:
models and frames in, figures out. The job rules (training-spot-candidate, training-underutilized,
transform-long-running) live in analyse/rules/ like the endpoint rules.

Costs per run use the catalog's training price for training jobs (billable seconds x instance
count) and the batch transform rate for transform jobs (duration x instance count): its own where
the prices have it, else the hosting rate of the type (`price_basis` says which).
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict

import pandas as pd

from auditor.analyse.normalise import normalise_utilisation, summarise_utilisation
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.jobs.models import (
    Experiment,
    ExperimentRun,
    ProcessingCost,
    ProcessingJob,
    TrainingCost,
    TrainingJob,
    TransformCost,
    TransformJob,
    Verdict,
)
from auditor.models import VariantUtilization


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



def job_series(frames: dict[str, pd.DataFrame], instance_type: str, catalog: Catalog) -> pd.DataFrame | None:
    """Per minute, the busiest host's normalised maxima ('<resource>:Maximum', 0-100%): what the
    replay of a resize reads, as it reads an endpoint variant's busiest instance."""
    shape = catalog.shape(instance_type)
    parts = [normalise_utilisation(frame, shape) for frame in frames.values()]
    parts = [p[[c for c in p.columns if c.endswith(":Maximum")]] for p in parts if not p.empty]
    parts = [p for p in parts if not p.columns.empty]
    if not parts:
        return None
    return pd.concat(parts).groupby(level=0).max().sort_index()

# ---------- Experiments ----------

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
        verdicts.append(Verdict(setting=dict(zip(others, setting, strict=True)), cheapest_instance_type=cheapest,
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

def transform_cost(job: TransformJob, catalog: Catalog) -> TransformCost:
    found = catalog.rate(job.instance_type, job.region, "batch")
    price, basis = (None, "batch") if found is None else found
    seconds = job.duration_seconds
    cost = None if price is None or seconds is None else round(seconds / 3600 * price * job.instance_count, 4)
    return TransformCost(job, price, cost, price_basis=basis)


# ---------- Processing ----------

def processing_cost(job: ProcessingJob, catalog: Catalog) -> ProcessingCost:
    """Duration x count x the processing rate (the hosting rate where the prices have none: `price_basis`)."""
    found = catalog.rate(job.instance_type, job.region, "processing")
    price, basis = (None, "processing") if found is None else found
    seconds = job.duration_seconds
    cost = None if price is None or seconds is None else round(seconds / 3600 * price * job.instance_count, 4)
    return ProcessingCost(job, price, cost, price_basis=basis)


def name_pattern(name: str) -> str:
    """Jobs of one schedule share their name once dates and counters are taken out."""
    return re.sub(r"\d+", "#", name)
