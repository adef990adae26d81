"""After an apply, the next audit run checks the change happened: each resource type's verifier,
as its kind says it (auditor/kinds/<kind>/verify.py, found through auditor.kinds.registry), reads
what the run discovered (no AWS call): the run is the evidence.
"""

from __future__ import annotations

from datetime import datetime

from auditor.history.store import AppliedChange, History
from auditor.kinds.registry import seen_by_type, verifier_for
from auditor.models import AuditReport
from auditor.write.verify import Evidence, ResourceKey

# Whatever its record says, a change that landed is verified when a run sees it: a timed-out or
# interrupted apply's deployment goes on; a call that failed may have been done (a 500 after the
# change); an apply killed outright stays in-progress. A rolled-back one is back on the old shape.
VERIFIABLE = ("applied", "timed-out", "interrupted", "failed", "in-progress")
# Outcomes verified only when no later apply acted on the same resource (that one is verified instead).
_UNSURE = ("interrupted", "failed", "in-progress")


def evidence_of(report: AuditReport) -> Evidence:
    """What the run saw of each resource type (the kinds' `seen`), where it could not read, and
    whether it ran to its end."""
    return Evidence(seen=seen_by_type(report), blind=frozenset((e.account_id, e.region) for e in report.errors),
                    complete=report.partial is None)


def verify_applied(history: History, report: AuditReport, run_id: int, at: datetime) -> list[AppliedChange]:
    """Mark each unverified applied change the run sees done; returns them."""
    evidence = evidence_of(report)
    verified = []
    latest: dict[ResourceKey, datetime] = {}  # the last apply on each resource that made a call
    for change in history.applied():
        if not change.calls:
            continue
        key = (change.account_id, change.region, change.endpoint)
        latest[key] = max(latest.get(key, change.started_at), change.started_at)
    for change in history.applied(unverified=True):
        if change.outcome not in VERIFIABLE:
            continue
        superseded = latest.get((change.account_id, change.region, change.endpoint), change.started_at) > \
            change.started_at
        if change.outcome in _UNSURE and superseded:
            continue
        done = verifier_for(str((change.plan.get("resource") or {}).get("type")))
        if done is not None and done(change, evidence):
            history.mark_verified(change.id, run_id, at)
            verified.append(change)
    return verified
