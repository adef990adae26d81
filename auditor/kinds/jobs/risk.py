"""The risk of a job plan (docs/plans.md, "Jobs"). Pure: no AWS.

- resize: the job's own per-minute series (its busiest host) replayed on the proposed shape and
  count with the endpoints' replay and levels (recommend/risk.py), over the hours of the run;
- spot: the load is the same, so no replay applies; the risk is an interruption. Low when the job
  keeps checkpoints (CheckpointConfig) or its run fits twice within both MaxRuntimeInSeconds and
  the request's MaxWaitTimeInSeconds (one interruption and a restart from the beginning still
  finish); medium otherwise, or when the run's length is unknown;
- scale-out: more instances of the same shape overload nothing; the risk is paying for instances
  that get no share of the work. A transform job hands each instance whole S3 objects (medium: the
  audit does not list S3); a processing job's S3 inputs say how its data is split: all
  ShardedByS3Key is low, one FullyReplicated is high (each instance gets all of it), none
  (the script reads its data itself) is medium.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd

from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.jobs.change import spot_limits
from auditor.kinds.jobs.models import ProcessingCost, ProcessingJob, TrainingCost, TrainingJob, TransformCost
from auditor.models import PlanOption, Risk, RiskLevel
from auditor.recommend.risk import assess

JobCost = TrainingCost | TransformCost | ProcessingCost
DEFAULT_PERIOD_SECONDS = 60  # job hosts' metrics are collected per minute


def job_risk(option: PlanOption, cost: JobCost | None, catalog: Catalog, config: AuditConfig) -> Risk | None:
    """The risk of one option of a job's plan; None for an action no job rule proposes."""
    if cost is None:
        return None
    if option.action == "spot" and isinstance(cost.job, TrainingJob):
        return spot_risk(cost.job)
    if option.action == "scale-out":
        return scale_out_risk(cost)
    if option.action == "resize":
        return resize_risk(option, cost, catalog, config)
    return None


def spot_risk(job: TrainingJob) -> Risk:
    if job.checkpoint_s3_uri:
        return Risk(RiskLevel.LOW, basis=("it keeps checkpoints (CheckpointConfig): an interrupted run resumes "
                                          "from the last one its script saved",))
    runtime, wait = spot_limits(job)
    run = job.training_seconds
    if not run:
        return Risk(RiskLevel.MEDIUM, basis=("no CheckpointConfig and the run's length is unknown: whether a "
                                             "restart from the beginning finishes within MaxWaitTimeInSeconds "
                                             f"{wait} is unknown",))
    if 2 * run <= runtime:
        return Risk(RiskLevel.LOW, basis=(f"no CheckpointConfig, but the {run} s run fits twice within "
                                          f"MaxRuntimeInSeconds {runtime} and MaxWaitTimeInSeconds {wait}: after "
                                          "an interruption a restart from the beginning still finishes",))
    return Risk(RiskLevel.MEDIUM, basis=(f"no CheckpointConfig and the {run} s run does not fit twice within "
                                         f"MaxRuntimeInSeconds {runtime}: an interruption restarts it from the "
                                         "beginning and it may be stopped at the limit",))


def scale_out_risk(cost: JobCost) -> Risk:
    job = cost.job
    if isinstance(cost, TransformCost):
        return Risk(RiskLevel.MEDIUM, basis=("batch transform gives each instance whole S3 objects: the added "
                                             "instances share the work only when the input holds at least as many "
                                             "objects as instances (the audit does not list S3)",))
    if isinstance(job, ProcessingJob):
        modes = _distribution(job.create_fields.get("ProcessingInputs") or [])
        replicated = [name for name, mode in modes if mode != "ShardedByS3Key"]
        if replicated:
            return Risk(RiskLevel.HIGH, basis=(f"input {', '.join(replicated)} is FullyReplicated: every instance "
                                               "gets all of it, so unless the script splits the work by host the "
                                               "run costs more in the same time (ShardedByS3Key splits it by object)",))
        if modes:
            return Risk(RiskLevel.LOW, basis=("its S3 inputs are ShardedByS3Key: each instance gets its share of "
                                              "the objects",))
        return Risk(RiskLevel.MEDIUM, basis=("no S3 input: how the work splits between instances is the "
                                             "script's (it reads its data itself)",))
    return Risk(RiskLevel.MEDIUM, basis=("the work must divide between the instances",))


def _distribution(inputs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(input name, S3DataDistributionType) of each S3 input; AWS's default is FullyReplicated."""
    return [(str(i.get("InputName") or "?"), str(i["S3Input"].get("S3DataDistributionType") or "FullyReplicated"))
            for i in inputs if isinstance(i.get("S3Input"), dict)]


def resize_risk(option: PlanOption, cost: JobCost, catalog: Catalog, config: AuditConfig) -> Risk | None:
    """The endpoints' replay on the job's own series (None: a shape is not in the catalog)."""
    job = cost.job
    series = cost.series
    period = _period_seconds(series)
    hours = len(series) * period / 3600.0 if series is not None else 0.0
    # A job serves no requests: no latency objective applies to it.
    recommend = replace(config.recommend, latency_objective_ms=0.0)
    risk = assess(option, series, period, hours, catalog.shape(job.instance_type), float(job.instance_count),
                  catalog.shape(option.instance_type or ""), None, recommend)
    if risk is not None and not risk.replays:
        return replace(risk, basis=("no per-minute utilisation of its hosts to replay",))
    return risk


def _period_seconds(series: pd.DataFrame | None) -> int:
    """The series' own spacing (the smallest step between minutes with data)."""
    if series is None or len(series) < 2 or not isinstance(series.index, pd.DatetimeIndex):
        return DEFAULT_PERIOD_SECONDS
    step = pd.Series(series.index).diff().dropna().min().total_seconds()
    return int(step) if step > 0 else DEFAULT_PERIOD_SECONDS
