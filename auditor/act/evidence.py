"""Destructive plans need fresh evidence: before a delete, a stop, an app deleted, HyperPod nodes
deleted or an off-hours schedule, apply reads the resource's activity since the audit's window
ended (the run the plan is applied from: load_plan's `audited_in`), and any activity refuses.

Each resource type's check is its kind's (auditor/kinds/<kind>/evidence.py, its `evidence`,
found through auditor.kinds.registry): which operations make its plan destructive, and what it
reads (the endpoint's requests, queue and CPU; the HyperPod nodes' CPU and GPU; a notebook's last
start, stop or update; a Studio app's last user activity).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from auditor.act.plan import PlanToApply, plan_noun
from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.kinds.registry import evidence_for
from auditor.write.evidence import Since
from auditor.write.target import Observed


def evidence_refusal(clients: AwsClients, plan: PlanToApply, observed: Observed, config: AuditConfig,
                     now: datetime) -> str | None:
    """Why the resource is not as idle now as the audit found it (one line naming what was seen),
    or None; for a plan that is not destructive, None without a read."""
    check = evidence_for(plan.resource.type)
    operations = {c.operation for c in plan.change.calls} if plan.change else set()
    if check is None or not operations & check.destructive:
        return None
    if plan.window_end is None:
        return (f"{plan_noun(plan)}: the plan does not say when its audit's window ended, so its activity since "
                "cannot be read; apply it from the history (`audit apply ID`)")
    start = plan.window_end
    if now - start < timedelta(seconds=60):
        return None  # nothing has been published since
    return check.since(Since(clients, plan, observed, start, now, config, plan_noun(plan)))
