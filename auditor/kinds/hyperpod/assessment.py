"""What the hyperpod kind's rules read: one region's assessed clusters (kept apart from kind.py so
the rules, which the kind lists, never import the kind)."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.kinds.hyperpod.idle import DEFAULT_IDLE_CEILING_PERCENT, HyperPodAssessment

RESOURCE_TYPE = "hyperpod-cluster"  # what its findings and plans are about


@dataclass(frozen=True)
class HyperPodRegion:
    """What the rules read: one region's assessed clusters, and the settings they were assessed with."""

    clusters: tuple[HyperPodAssessment, ...]
    idle_ceiling_percent: float
    window_days: float


@dataclass(frozen=True)
class HyperPodSection:
    """The clusters of the audited regions, each assessed (costs, idle groups, what was not judged)."""

    clusters: tuple[HyperPodAssessment, ...] = ()
    idle_ceiling_percent: float = DEFAULT_IDLE_CEILING_PERCENT
    window_days: float = 0.0
