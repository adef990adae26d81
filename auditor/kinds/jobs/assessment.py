"""What the jobs kind's rules read: one region's jobs of the window, with their costs (kept apart
from kind.py so the rules, which the kind lists, never import the kind)."""

from __future__ import annotations

from dataclasses import dataclass, field

from auditor.kinds.jobs.models import ProcessingCost, TrainingCost, TransformCost
from auditor.models import Window


@dataclass(frozen=True)
class JobsAssessment:
    """The training, transform and processing jobs of one region in the window, with their costs."""

    training: tuple[TrainingCost, ...] = ()
    transform: tuple[TransformCost, ...] = ()
    window: Window | None = None
    by_name: dict[str, TrainingCost | TransformCost | ProcessingCost] = field(default_factory=dict)
    processing: tuple[ProcessingCost, ...] = ()

    def __post_init__(self) -> None:
        costs: tuple[TrainingCost | TransformCost | ProcessingCost, ...] = (
            *self.training, *self.transform, *self.processing)
        self.by_name.update({c.job.name: c for c in costs})
