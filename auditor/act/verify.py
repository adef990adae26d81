"""After an apply, the next audit run checks the change happened, per resource type and per what the
change does. Pure over the run's report and the history (no AWS call): what the audit discovered is
the evidence.

- endpoint, a deployment: it runs the config the change deployed, the variant in the proposed shape;
- endpoint, a delete: it is gone (in a region the run read without error);
- endpoint, off-hours schedules: it was deleted and created again by them (gone while the run read
  its region, or created after the apply);
- endpoint, scheduled actions on inference components: the run fell in the quiet hours and saw
  every component at 0 copies (a run in working hours cannot tell);
- endpoint, queue alarms: the alarms are among the endpoint's queue alarms;
- endpoint, a scaling policy: the variant is registered with Application Auto Scaling under it;
- notebook instance: Stopped; Studio app: gone or Deleted; HyperPod cluster: none of the nodes;
- Studio domain: idle shutdown on for every app type whose settings the UpdateDomain set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.history.store import AppliedChange, History
from auditor.kinds.endpoints.models import Endpoint
from auditor.models import AuditReport

# Whatever its record says, a change that landed is verified when a run sees it: a timed-out or
# interrupted apply's deployment goes on; a call that failed may have been done (a 500 after the
# change); an apply killed outright stays in-progress. A rolled-back one is back on the old shape.
VERIFIABLE = ("applied", "timed-out", "interrupted", "failed", "in-progress")
# Outcomes verified only when no later apply acted on the same resource (that one is verified instead).
_UNSURE = ("interrupted", "failed", "in-progress")

Key = tuple[str, str, str]  # account, region, name


@dataclass(frozen=True)
class Evidence:
    """What one run saw, by resource type; None where the run did not audit that type."""

    endpoints: dict[Key, Endpoint]
    notebooks: dict[Key, Any] | None
    apps: dict[Key, Any] | None
    clusters: dict[Key, Any] | None
    blind: frozenset[tuple[str, str]]  # (account, region) with an error: an absence there proves nothing
    complete: bool  # the run was not cut short
    domains: dict[Key, Any] | None = None  # Studio domains, by domain id

    def absent(self, change: AppliedChange, seen: dict[Key, Any] | None) -> bool:
        """Not in the run, where the run read that type in that region without an error."""
        if seen is None or not self.complete:
            return False
        if (change.account_id, change.region) in self.blind or ("", change.region) in self.blind:
            return False
        return (change.account_id, change.region, change.endpoint) not in seen


def evidence_of(report: AuditReport) -> Evidence:
    from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
    from auditor.kinds.hyperpod.kind import KIND as HYPERPOD
    from auditor.kinds.workspaces.kind import KIND as WORKSPACES

    workspaces = WORKSPACES.section(report)
    hyperpod = report.sections.get(HYPERPOD.key)
    return Evidence(
        endpoints={(e.endpoint.account_id, e.endpoint.region, e.endpoint.name): e.endpoint
                   for e in ENDPOINTS.section(report)},
        notebooks=None if workspaces is None else {
            (c.notebook.account_id, c.notebook.region, c.notebook.name): c.notebook for c in workspaces.notebooks},
        apps=None if workspaces is None else {(c.app.account_id, c.app.region, c.app.name): c.app
                                              for c in workspaces.apps},
        clusters=None if hyperpod is None else {(a.cluster.account_id, a.cluster.region, a.cluster.name): a.cluster
                                                for a in hyperpod.clusters},
        blind=frozenset((e.account_id, e.region) for e in report.errors),
        complete=report.partial is None,
        domains=None if workspaces is None else {(d.account_id, d.region, d.domain_id): d for d in workspaces.domains},
    )


def verify_applied(history: History, report: AuditReport, run_id: int, at: datetime) -> list[AppliedChange]:
    """Mark each unverified applied change the run sees done; returns them."""
    evidence = evidence_of(report)
    verified = []
    latest: dict[Key, datetime] = {}  # the last apply on each resource that made a call
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
        done = VERIFIERS.get(str((change.plan.get("resource") or {}).get("type")))
        if done is not None and done(change, evidence):
            history.mark_verified(change.id, run_id, at)
            verified.append(change)
    return verified


def _attempted(change: AppliedChange) -> list[dict[str, Any]]:
    """The calls made, and those the journal says failed (AWS may have done them all the same), as
    the plan has them."""
    failed = {(s.get("service"), s.get("operation")) for s in change.steps
              if s.get("step") == "call" and s.get("status") == "failed"}
    made = {(c.get("service"), c.get("operation")) for c in change.calls}
    planned = (change.plan.get("change") or {}).get("calls") or []
    return [*change.calls, *(c for c in planned if isinstance(c, dict)
                             and (c.get("service"), c.get("operation")) in failed - made)]


def _operations(change: AppliedChange) -> set[tuple[str, str]]:
    return {(str(c.get("service")), str(c.get("operation"))) for c in _attempted(change)}


def _params(change: AppliedChange, service: str, operation: str) -> list[dict[str, Any]]:
    return [dict(c.get("params") or {}) for c in _attempted(change) if (c.get("service"), c.get("operation")) ==
            (service, operation)]


def _endpoint_done(change: AppliedChange, evidence: Evidence) -> bool:
    key = (change.account_id, change.region, change.endpoint)
    endpoint = evidence.endpoints.get(key)
    operations = _operations(change)
    if ("sagemaker", "UpdateEndpoint") in operations:
        return endpoint is not None and has_new_shape(change, endpoint)
    if ("sagemaker", "DeleteEndpoint") in operations:
        return evidence.absent(change, evidence.endpoints)
    if ("scheduler", "CreateSchedule") in operations:
        if endpoint is None:
            return evidence.absent(change, evidence.endpoints)  # the evening's schedule deleted it
        return endpoint.created_at > change.finished_at  # deleted and created again since the apply
    if ("application-autoscaling", "PutScheduledAction") in operations:
        components = {p["ResourceId"].split("/", 1)[-1] for p in _params(change, "application-autoscaling",
                                                                         "PutScheduledAction")}
        copies = {c.name: c.copy_count for c in endpoint.inference_components} if endpoint else {}
        return bool(components) and all(copies.get(name) == 0 for name in components)
    if ("cloudwatch", "PutMetricAlarm") in operations and endpoint is not None and endpoint.queue_alarms is not None:
        names = {p["AlarmName"] for p in _params(change, "cloudwatch", "PutMetricAlarm")}
        if not names <= set(endpoint.queue_alarms):
            return False
        return ("application-autoscaling", "PutScalingPolicy") not in operations or _policies_done(change, endpoint)
    if ("application-autoscaling", "PutScalingPolicy") in operations and endpoint is not None:
        return _policies_done(change, endpoint)
    return False


def _policies_done(change: AppliedChange, endpoint: Endpoint) -> bool:
    """Each policy the change put is among its variant's policies (listed as "name (type)")."""
    for params in _params(change, "application-autoscaling", "PutScalingPolicy"):
        variant_name = str(params.get("ResourceId", "")).rsplit("/", 1)[-1]
        variant = next((v for v in endpoint.variants if v.name == variant_name), None)
        scaling = variant.autoscaling if variant else None
        listed = {p.rsplit(" (", 1)[0] for p in scaling.policies} if scaling else set()
        if params.get("PolicyName") not in listed:
            return False
    return True


def _notebook_done(change: AppliedChange, evidence: Evidence) -> bool:
    notebook = (evidence.notebooks or {}).get((change.account_id, change.region, change.endpoint))
    return notebook is not None and notebook.status == "Stopped"


def _app_done(change: AppliedChange, evidence: Evidence) -> bool:
    app = (evidence.apps or {}).get((change.account_id, change.region, change.endpoint))
    return app.status == "Deleted" if app is not None else evidence.absent(change, evidence.apps)


def _nodes_done(change: AppliedChange, evidence: Evidence) -> bool:
    cluster = (evidence.clusters or {}).get((change.account_id, change.region, change.endpoint))
    if cluster is None:
        return False
    deleted = {str(n) for p in _params(change, "sagemaker", "BatchDeleteClusterNodes") for n in p.get("NodeIds") or ()}
    return bool(deleted) and not deleted & {n.instance_id for n in cluster.nodes}


def _idle_shutdown_done(change: AppliedChange, evidence: Evidence) -> bool:
    """The domain the run described has idle shutdown on for each app type the change set."""
    from auditor.kinds.workspaces.discover_studio import IDLE_SETTING_APPS

    domain = (evidence.domains or {}).get((change.account_id, change.region, change.endpoint))
    if domain is None:
        return False
    keys = {k for p in _params(change, "sagemaker", "UpdateDomain") for k in p.get("DefaultUserSettings") or {}}
    apps = [app for app, key in IDLE_SETTING_APPS.items() if key in keys]
    return bool(apps) and all(domain.idle_timeout_minutes.get(app) is not None for app in apps)


# What the next run checks, by the plan's resource_type (auditor.act.targets has the same types).
VERIFIERS: dict[str, Callable[[AppliedChange, Evidence], bool]] = {
    "endpoint": _endpoint_done,
    "notebook-instance": _notebook_done,
    "studio-app": _app_done,
    "hyperpod-cluster": _nodes_done,
    "studio-domain": _idle_shutdown_done,
}


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
