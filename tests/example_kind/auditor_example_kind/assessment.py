"""What the kind's rules read: one region's models, and when they were read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from auditor_example_kind.discover import Model

KEY = "models"  # the kind's key: its JSON section, its config section, what its findings' resource.kind says
RESOURCE_TYPE = "model"  # what its findings are about, and routing's resource type


@dataclass(frozen=True)
class ModelsRegion:
    models: tuple[Model, ...]
    now: datetime


def age_days(model: Model, now: datetime) -> float | None:
    return None if model.created is None else (now - model.created).total_seconds() / 86400
