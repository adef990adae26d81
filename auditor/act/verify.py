"""After an apply, the next audit run checks the change happened: the endpoint runs the config the
change deployed, and the plan's variant has the proposed shape. Pure over the run's report and the
history (no AWS call): what the audit discovered is the evidence."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from auditor.history.store import AppliedChange, History
from auditor.models import AuditReport, Endpoint

# A timed-out apply may still have finished: the run after it says.
VERIFIABLE = ("applied", "timed-out")


def verify_applied(history: History, report: AuditReport, run_id: int, at: datetime) -> list[AppliedChange]:
    """Mark each unverified applied change whose endpoint now has the new shape; returns them."""
    endpoints = {(e.endpoint.account_id, e.endpoint.region, e.endpoint.name): e.endpoint for e in report.endpoints}
    verified = []
    for change in history.applied(unverified=True):
        if change.outcome not in VERIFIABLE:
            continue
        endpoint = endpoints.get((change.account_id, change.region, change.endpoint))
        if endpoint is not None and has_new_shape(change, endpoint):
            history.mark_verified(change.id, run_id, at)
            verified.append(change)
    return verified


def has_new_shape(change: AppliedChange, endpoint: Endpoint) -> bool:
    """The endpoint runs the change's config, and the variant the proposed type (and count, unless
    the plan put it under autoscaling, where the count moves)."""
    if not change.new_config or endpoint.config_name != change.new_config:
        return False
    variant = next((v for v in endpoint.variants if v.name == change.variant), None)
    if variant is None:
        return False
    proposed: dict[str, Any] = change.plan.get("proposed") or {}
    if proposed.get("instance_type") and variant.instance_type != proposed["instance_type"]:
        return False
    if not proposed.get("autoscaling") and proposed.get("instance_count"):
        return variant.instance_count == int(proposed["instance_count"])
    return True
