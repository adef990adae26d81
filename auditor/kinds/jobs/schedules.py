"""Processing jobs grouped by schedule: the name with digits taken out, and the same image."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from auditor.kinds.jobs.analysis import name_pattern
from auditor.kinds.jobs.models import ProcessingCost


def recurring_processing(costs: tuple[ProcessingCost, ...], min_runs: int) -> list[tuple[str, list[ProcessingCost]]]:
    """Completed, priced runs by (name pattern, image), oldest first; groups of at least `min_runs`."""
    groups: dict[tuple[str, str], list[ProcessingCost]] = defaultdict(list)
    for cost in costs:
        if cost.job.status == "Completed" and cost.job.started_at and cost.cost_usd is not None:
            groups[(name_pattern(cost.job.name), cost.job.image)].append(cost)
    out = []
    for (pattern, _image), members in sorted(groups.items()):
        if len(members) >= min_runs:
            out.append((pattern, sorted(members, key=lambda c: c.job.started_at or datetime.min)))
    return out
