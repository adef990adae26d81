"""What the workspaces kind's rules read: one region's notebook instances and Studio, as of a time
(kept apart from kind.py so the rules, which the kind lists, never import the kind)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from auditor.kinds.workspaces.models import NotebookCost, StudioAppCost, StudioDomain, StudioSpace


@dataclass(frozen=True)
class WorkspacesAssessment:
    """The notebook instances and Studio domains, spaces and apps of one region, as of `now`."""

    now: datetime
    notebooks: tuple[NotebookCost, ...] = ()
    domains: tuple[StudioDomain, ...] = ()
    spaces: tuple[StudioSpace, ...] = ()
    apps: tuple[StudioAppCost, ...] = ()
