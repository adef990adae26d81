"""Fresh evidence before a notebook instance is stopped or a Studio app deleted: no metric exists
for either, so what changed since the audit's window ended refuses: a notebook's LastModifiedTime
(a start, stop or update), an app's LastUserActivityTimestamp (unless it is only the last health
check).
"""

from __future__ import annotations

from auditor.text import one_line
from auditor.write.evidence import EvidenceCheck, Since, after


def notebook_since(since: Since) -> str | None:
    changed = after(since.observed.described.get("LastModifiedTime"), since.start)
    if changed is None:
        return None
    return (f"notebook instance {one_line(since.plan.resource.name)} was started, stopped or updated at "
            f"{changed.strftime('%Y-%m-%d %H:%M UTC')}, {since.when}; run the audit again")


def app_since(since: Since) -> str | None:
    described = since.observed.described
    active = described.get("LastUserActivityTimestamp")
    if active is not None and active == described.get("LastHealthCheckTimestamp"):
        return None  # only a health check: no user activity
    used = after(active, since.start)
    if used is None:
        return None
    return (f"Studio app {one_line(since.plan.resource.name)} had user activity at "
            f"{used.strftime('%Y-%m-%d %H:%M UTC')}, {since.when}; run the audit again")


EVIDENCE: dict[str, EvidenceCheck] = {
    "notebook-instance": EvidenceCheck(frozenset({"StopNotebookInstance"}), notebook_since),
    "studio-app": EvidenceCheck(frozenset({"DeleteApp"}), app_since),
}
