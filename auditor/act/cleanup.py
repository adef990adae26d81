"""What apply leaves behind, named or removed.

- A failed apply names what it made and what removes it: the new endpoint config
  (`aws sagemaker delete-endpoint-config`) and the plan's alarms (`aws cloudwatch delete-alarms`);
  a retry of the same plan reuses both.
- The rollback alarms an apply made (PutMetricAlarm calls the journal says were made, named in the
  plan's UpdateEndpoint AutoRollbackConfiguration, their names carrying the plan id) are deleted
  after a rollback (by the apply itself) and once an audit run has verified the change (by
  `audit apply --cleanup --yes`, and at the start of every `audit apply --yes` in its region: the
  audit run itself only reads). No other alarm is ever deleted.
- A scalable target left deregistered by an apply that was interrupted or timed out while its
  deployment went on (or whose restore failed) is registered again once the endpoint is InService
  (same two places): as the journal read it on the audited config, as the plan's calls say on the
  plan's config, not at all on any other.
- The history file is not trusted: only the row's own variant's target is registered, with the
  fields apply reads; only alarms named after the row's endpoint, variant and plan id are deleted;
  and nothing is written for an endpoint not opted in now (its tag read again).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import botocore.exceptions

from auditor.act.restore import ScalingSnapshot, planned_scaling, restore
from auditor.collect.session import AwsClients, describe_client_error
from auditor.config import OPT_IN_TAG
from auditor.history.store import AppliedChange, History
from auditor.models import ApiCall
from auditor.text import one_line

_ERRORS = (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError)
# An apply's scalable target may still be waiting to be registered again after these outcomes.
_UNFINISHED = ("interrupted", "timed-out", "in-progress")
RUNNING_APPLY = timedelta(minutes=10)


def rollback_alarm_names(plan: dict[str, Any]) -> set[str]:
    """The alarms the plan's UpdateEndpoint rolls back on."""
    calls = (plan.get("change") or {}).get("calls") or []
    names: set[str] = set()
    for call in calls:
        if isinstance(call, dict) and call.get("operation") == "UpdateEndpoint":
            rollback = ((call.get("params") or {}).get("DeploymentConfig") or {}).get("AutoRollbackConfiguration") or {}
            names |= {str(a.get("AlarmName")) for a in rollback.get("Alarms") or [] if isinstance(a, dict)}
    return names


def alarm_prefix(endpoint: str, variant: str | None, plan_id: str) -> str:
    """How the change builders begin a rollback alarm's name (auditor.kinds.endpoints.change._alarm_calls)."""
    return f"{endpoint}-{variant}-{plan_id}"[:200]


def rollback_alarms_made(plan: dict[str, Any], puts: list[dict[str, Any]], plan_id: str, endpoint: str,
                         variant: str | None) -> list[str]:
    """Of the alarms the apply put (PutMetricAlarm params), the rollback alarms it made: named by the
    plan's UpdateEndpoint and named as the change builders name them, after the endpoint, the variant
    and the plan id (a journal row is history, not trusted: no other name is ever deleted)."""
    rollback = rollback_alarm_names(plan)
    prefix = alarm_prefix(endpoint, variant, plan_id)
    return sorted({str(p.get("AlarmName")) for p in puts
                   if str(p.get("AlarmName")) in rollback and variant is not None
                   and str(p.get("AlarmName")).startswith(f"{prefix}-")})


def delete_alarms(clients: AwsClients, region: str, names: list[str]) -> str | None:
    """DeleteAlarms (at most 100 names a call); the problem, or None."""
    api = clients.client("cloudwatch", region)
    try:
        for start in range(0, len(names), 100):
            api.delete_alarms(AlarmNames=names[start:start + 100])
    except _ERRORS as exc:
        return describe_client_error(exc, "cloudwatch", "DeleteAlarms", region)
    return None


def leftovers_text(plan: Any, made: list[ApiCall], deleted_alarms: bool = False) -> str | None:
    """What a failed apply made that stays, with the commands that remove it (one clause)."""
    region = plan.resource.region
    parts = []
    # A new endpoint and its inference components (a consolidation), named in the order they delete in.
    for operation, noun, key, command in (
            ("CreateInferenceComponent", "inference component", "InferenceComponentName",
             "delete-inference-component --inference-component-name"),
            ("CreateEndpoint", "endpoint", "EndpointName", "delete-endpoint --endpoint-name")):
        for name in [str(c.params.get(key)) for c in made if (c.service, c.operation) == ("sagemaker", operation)]:
            parts.append(f"{noun} {one_line(name)} (aws sagemaker {command} {one_line(name)} --region {region})")
    configs = [str(c.params.get("EndpointConfigName")) for c in made
               if (c.service, c.operation) == ("sagemaker", "CreateEndpointConfig")]
    for name in configs:
        parts.append(f"endpoint config {one_line(name)} (aws sagemaker delete-endpoint-config "
                     f"--endpoint-config-name {one_line(name)} --region {region})")
    alarms = [] if deleted_alarms else sorted({str(c.params.get("AlarmName")) for c in made
                                               if (c.service, c.operation) == ("cloudwatch", "PutMetricAlarm")
                                               and plan.id in str(c.params.get("AlarmName"))})
    if alarms:
        parts.append(f"alarm{'s' if len(alarms) > 1 else ''} {', '.join(one_line(a) for a in alarms)} "
                     f"(aws cloudwatch delete-alarms --alarm-names {' '.join(one_line(a) for a in alarms)} "
                     f"--region {region})")
    if not parts:
        return None
    return f"left behind: {'; '.join(parts)}; a retry of plan {plan.id} reuses {'them' if len(parts) > 1 else 'it'}"


def made_params(change: AppliedChange, service: str, operation: str) -> list[dict[str, Any]]:
    return [dict(c.get("params") or {}) for c in change.calls
            if (c.get("service"), c.get("operation")) == (service, operation)]


@dataclass(frozen=True)
class Cleanable:
    change: AppliedChange
    alarms: tuple[str, ...]  # rollback alarms to delete
    scaling: ScalingSnapshot | None  # a scalable target to register again
    refused: str | None = None  # why the journal's target is not registered again


def pending_scaling(change: AppliedChange) -> ScalingSnapshot | None:
    """The target an apply deregistered and has not registered again, as it read it: an unfinished
    apply's (the deployment went on without it), or any whose own restore failed. ValueError when
    the journal's target is not the row's own variant's (ScalingSnapshot.from_dict)."""
    if not made_params(change, "application-autoscaling", "DeregisterScalableTarget"):
        return None
    restores = [s for s in change.steps if s.get("step") == "restore"]
    if restores:
        if not restores[-1].get("error"):
            return None
    elif change.outcome not in _UNFINISHED or made_params(change, "application-autoscaling", "RegisterScalableTarget"):
        return None
    read = [s for s in change.steps if s.get("step") == "read" and isinstance(s.get("scaling"), dict)]
    return ScalingSnapshot.from_dict(read[-1]["scaling"], change.endpoint, change.variant) if read else None


def to_clean(history: History, now: datetime, account_id: str | None = None,
             region: str | None = None) -> list[Cleanable]:
    """The applies with rollback alarms to delete (verified, or rolled back) or a target to register.
    An apply journaled in-progress in the last minutes may be running now: it is left alone."""
    found = []
    for change in history.applied():
        if (account_id and change.account_id != account_id) or (region and change.region != region):
            continue
        if change.outcome == "in-progress" and now - change.finished_at < RUNNING_APPLY:
            continue
        alarms: tuple[str, ...] = ()
        if change.cleaned_at is None and (change.verified_run_id is not None or change.outcome == "rolled-back"):
            alarms = tuple(rollback_alarms_made(change.plan, made_params(change, "cloudwatch", "PutMetricAlarm"),
                                                change.plan_id, change.endpoint, change.variant))
        refused = None
        try:
            scaling = pending_scaling(change)
        except ValueError as exc:
            scaling, refused = None, str(exc)
        if alarms or scaling or refused:
            found.append(Cleanable(change, alarms, scaling, refused))
    return found


def opt_in_refusal(clients: AwsClients, change: AppliedChange, patterns: tuple[str, ...]) -> str | None:
    """Why nothing may be written for this row's endpoint now, read again before any cleanup write:
    it must still be opted in (the auditor:apply=allowed tag, or a name pattern of [apply])."""
    api = clients.client("sagemaker", change.region)
    name = one_line(change.endpoint)
    if any(fnmatch.fnmatchcase(change.endpoint, p) for p in patterns):
        return None
    try:
        arn = str(api.describe_endpoint(EndpointName=change.endpoint).get("EndpointArn") or "")
    except _ERRORS as exc:
        return f"endpoint {name}: {describe_client_error(exc, 'sagemaker', 'DescribeEndpoint', change.region)}"
    try:
        tags = {t["Key"]: t["Value"] for page in api.get_paginator("list_tags").paginate(ResourceArn=arn)
                for t in page.get("Tags", [])}
    except _ERRORS as exc:
        return f"endpoint {name}: {describe_client_error(exc, 'sagemaker', 'ListTags', change.region)}"
    key, value = OPT_IN_TAG
    if tags.get(key) != value:
        return f"endpoint {name} is not opted in now (tag {key}={value})"
    return None


def clean(history: History, clients_for: Callable[[str], AwsClients], items: list[Cleanable], yes: bool,
          now: Callable[[], datetime], patterns: tuple[str, ...] = ()) -> list[str]:
    """Delete the alarms and register the targets (with `yes`), one line each; without it, what would be.
    Nothing is written for an endpoint that is not opted in now (`patterns`: [apply]'s name patterns)."""
    lines = []
    for item in items:
        change = item.change
        clients = clients_for(change.region)
        if item.refused:
            lines.append(f"plan {change.plan_id}: not registered again: {item.refused}")
        if not (item.alarms or item.scaling):
            continue
        refusal = opt_in_refusal(clients, change, patterns)
        if refusal:
            lines.append(f"plan {change.plan_id}: nothing cleaned: {refusal}")
            continue
        if item.alarms:
            names = list(item.alarms)
            why = f"verified by run {change.verified_run_id}" if change.verified_run_id else change.outcome
            if not yes:
                lines.append(f"plan {change.plan_id} ({why}): would delete rollback alarms {', '.join(names)}")
            else:
                problem = delete_alarms(clients, change.region, names)
                _journal(history, change, {"step": "cleanup", "alarms": names, "error": problem}, now)
                if problem is None:
                    history.mark_cleaned(change.id, now())
                lines.append(f"plan {change.plan_id} ({why}): rollback alarms {', '.join(names)} deleted"
                             if problem is None else f"plan {change.plan_id}: {problem}")
        if item.scaling is not None:
            lines.append(_register_again(history, clients, change, item.scaling, yes, now))
    return lines


def _register_again(history: History, clients: AwsClients, change: AppliedChange, snapshot: ScalingSnapshot,
                    yes: bool, now: Callable[[], datetime]) -> str:
    """The scaling that fits the config the endpoint is on now: as read before the change on the
    audited config, as the plan's calls say on the plan's config (the old scaling would not fit the
    new shape); on any other config nothing is registered."""
    who = f"plan {change.plan_id} ({change.outcome})"
    try:
        described = clients.client("sagemaker", change.region).describe_endpoint(EndpointName=change.endpoint)
    except _ERRORS as exc:
        return f"{who}: {describe_client_error(exc, 'sagemaker', 'DescribeEndpoint', change.region)}"
    status, config = str(described.get("EndpointStatus") or ""), str(described.get("EndpointConfigName") or "")
    if status != "InService":
        return (f"{who}: endpoint {one_line(change.endpoint)} is {one_line(status)}: its scalable target "
                f"{snapshot.describe()} is registered again once it is InService")
    how = "as read before the change"
    if config != change.previous_config:
        intent = next((s.get("calls") for s in change.steps if s.get("step") == "intent"), None) or []
        planned = planned_scaling(intent, change.endpoint, change.variant, snapshot)
        if config != change.new_config or planned is None:
            return (f"{who}: endpoint {one_line(change.endpoint)} is on config {one_line(config)}, neither the "
                    f"audited nor the plan's with its scaling: nothing registered; register its scalable target by "
                    f"hand (before the change: {snapshot.describe()})")
        snapshot, how = planned, "as the plan's calls after UpdateEndpoint say"
    if not yes:
        return f"{who}: would register the scalable target {snapshot.describe()} again {how}"
    made, problem = restore(clients, change.region, snapshot)
    _journal(history, change, {"step": "restore", "scaling": snapshot.resource_id,
                               "made": [c.operation for c in made], "error": problem}, now)
    if problem is not None:
        return f"{who}: the scalable target {snapshot.describe()} could not be registered again: {problem}"
    return f"{who}: the scalable target {snapshot.describe()} was registered again {how}{snapshot.step_note()}"


def _journal(history: History, change: AppliedChange, step: dict[str, Any], now: Callable[[], datetime]) -> None:
    stored = next((c for c in history.applied() if c.id == change.id), change)
    history.update_applied(change.id, calls=stored.calls, steps=(*stored.steps, {**step, "at": now().isoformat()}),
                           at=stored.finished_at)
