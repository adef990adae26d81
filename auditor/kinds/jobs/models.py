"""The jobs kind's types: training, batch transform and processing jobs as discovered, their costs,
and the experiments their runs form. Frozen; nothing here talks to AWS."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from auditor.models import VariantUtilization


@dataclass(frozen=True)
class JobRun:
    """What a training, batch transform or processing job shares: where it ran, on what, when, and
    what its next run's request is built from. Each kind of job adds its own fields after these."""

    account_id: str
    region: str
    name: str
    status: str
    instance_type: str
    instance_count: int
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    arn: str = field(default="", kw_only=True)
    # Read only for owner routing (see kinds.jobs).
    tags: dict[str, str] = field(default_factory=dict, kw_only=True)
    # The fields of its Describe answer that its Create* call takes, but Environment: the next run's
    # request is built from them (kinds/jobs/change.py) without another call. Not in the JSON.
    create_fields: dict[str, Any] = field(default_factory=dict, compare=False, repr=False, kw_only=True)
    # How many variables its Environment sets: their values are never kept (teams put tokens there).
    environment_variables: int = field(default=0, kw_only=True)

    @property
    def duration_seconds(self) -> float | None:
        return duration_seconds(self.started_at, self.ended_at)


@dataclass(frozen=True)
class TrainingJob(JobRun):
    training_seconds: int | None  # None: still running, or not reported
    billable_seconds: int | None
    spot: bool
    checkpoint_s3_uri: str | None
    max_wait_seconds: int | None
    max_runtime_seconds: int | None
    image: str  # the training image, or the algorithm name
    hyperparameters: dict[str, str]
    final_metrics: dict[str, float]


@dataclass(frozen=True)
class TransformJob(JobRun):
    model_name: str


def duration_seconds(started_at: datetime | None, ended_at: datetime | None) -> float | None:
    """How long a job ran; None while it has not both started and ended."""
    if started_at is None or ended_at is None:
        return None
    return max(0.0, (ended_at - started_at).total_seconds())


@dataclass(frozen=True)
class TrainingCost:
    job: TrainingJob
    price_per_hour: float | None
    cost_usd: float | None  # billed: billable seconds x count x price
    on_demand_cost_usd: float | None  # training seconds x count x price: what on-demand costs
    spot_cost_usd: float | None  # billed, for Spot jobs; estimated at the discount otherwise
    spot_saving_usd: float | None  # realised for Spot jobs; potential otherwise
    utilization: VariantUtilization | None = None
    # The busiest host's normalised maxima per minute ('<resource>:Maximum', 0-100%), for the
    # replay of a resize (kinds/jobs/risk.py); not in the JSON.
    series: pd.DataFrame | None = field(default=None, compare=False, repr=False)

    @property
    def spot_estimated(self) -> bool:
        return not self.job.spot


@dataclass(frozen=True)
class TransformCost:
    job: TransformJob
    price_per_hour: float | None
    cost_usd: float | None
    utilization: VariantUtilization | None = None
    price_basis: str = "batch"  # whose rate: "batch" (its own) or "hosting" (the prices have no batch rate)
    # The busiest host's normalised maxima per minute ('<resource>:Maximum', 0-100%), for the
    # replay of a resize (kinds/jobs/risk.py); not in the JSON.
    series: pd.DataFrame | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ProcessingJob(JobRun):
    volume_size_gb: int
    image: str


@dataclass(frozen=True)
class ProcessingCost:
    job: ProcessingJob
    price_per_hour: float | None
    cost_usd: float | None  # duration x count x price
    utilization: VariantUtilization | None = None
    price_basis: str = "processing"  # whose rate: "processing" (its own) or "hosting" (the prices have none)
    # The busiest host's normalised maxima per minute ('<resource>:Maximum', 0-100%), for the
    # replay of a resize (kinds/jobs/risk.py); not in the JSON.
    series: pd.DataFrame | None = field(default=None, compare=False, repr=False)


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


@dataclass(frozen=True)
class JobsSection:
    """Training, batch transform and processing jobs of the window (the analysis' cost models)."""

    training: tuple[TrainingCost, ...] = ()
    transform: tuple[TransformCost, ...] = ()
    experiments: tuple[Experiment, ...] = ()
    processing: tuple[ProcessingCost, ...] = ()
