"""What apply reads live around a change besides the resource itself: the tags of a resource (the
opt-in, the tags a copied config carries) and the rollback alarms a deployment rolls back on (each
must exist and not be in ALARM, before the dry run says yes and right before UpdateEndpoint)."""

from __future__ import annotations

from typing import Any

import botocore.exceptions

from auditor.act.plan import ApplyFailed, ApplyRefused, PlanToApply
from auditor.collect.session import AwsClients, describe_client_error
from auditor.models import ApiCall
from auditor.text import one_line


def read_tags(endpoint_api: Any, arn: str, region: str) -> dict[str, str]:
    try:
        pages = endpoint_api.get_paginator("list_tags").paginate(ResourceArn=arn)
        return {t["Key"]: t["Value"] for page in pages for t in page.get("Tags", [])}
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise ApplyRefused(describe_client_error(exc, "sagemaker", "ListTags", region)) from None


def _rollback_alarm_names(call: ApiCall) -> list[str]:
    rollback = (call.params.get("DeploymentConfig") or {}).get("AutoRollbackConfiguration") or {}
    return [str(a["AlarmName"]) for a in rollback.get("Alarms") or [] if isinstance(a, dict) and a.get("AlarmName")]


def _alarm_states(clients: AwsClients, region: str, names: list[str]) -> dict[str, str]:
    """The state (OK | ALARM | INSUFFICIENT_DATA) of each named alarm that exists."""
    alarm_api = clients.client("cloudwatch", region)
    return {str(a["AlarmName"]): str(a.get("StateValue") or "")
            for page in alarm_api.get_paginator("describe_alarms").paginate(AlarmNames=names)
            for a in page.get("MetricAlarms", [])}


def _firing_and_missing(names: list[str], states: dict[str, str],
                        created: set[str] | frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
    """Of the alarms a deployment rolls back on: those in ALARM, and those that neither exist nor are
    made by the plan before it."""
    return ([n for n in names if states.get(n) == "ALARM"],
            [n for n in names if n not in states and n not in created])


def _alarms_text(names: list[str]) -> str:
    return f"the rollback alarm{'s' if len(names) > 1 else ''} {', '.join(one_line(n) for n in names)}"


def rollback_alarm_refusal(clients: AwsClients, plan: PlanToApply) -> str | None:
    """Before any call (so that a refusal leaves nothing made, not even the new endpoint config):
    each alarm the deployment rolls back on must exist or be one the plan itself creates, and none
    may be in ALARM, where SageMaker would roll the deployment back at once (or the endpoint has a
    problem now). An alarm the plan creates starts INSUFFICIENT_DATA; one it puts again keeps its
    state (PutMetricAlarm on an existing alarm leaves the state as it is), so it is checked too."""
    created = {str(c.params.get("AlarmName")) for c in plan.calls_of("cloudwatch", "PutMetricAlarm")}
    for call in plan.calls_of("sagemaker", "UpdateEndpoint"):
        names = _rollback_alarm_names(call)
        if not names:
            continue
        try:
            states = _alarm_states(clients, plan.resource.region, names)
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            return f"plan {plan.id}: {describe_client_error(exc, 'cloudwatch', 'DescribeAlarms', plan.resource.region)}"
        firing, missing = _firing_and_missing(names, states, created)
        if firing:
            return (f"plan {plan.id}: {_alarms_text(firing)} {'is' if len(firing) == 1 else 'are'} in state ALARM: "
                    "the deployment would roll back at once (or the endpoint has a problem now); nothing was changed")
        if missing:
            return (f"plan {plan.id}: {_alarms_text(missing)} do{'es' if len(missing) == 1 else ''} not exist: "
                    "nothing was changed")
    return None


def check_rollback_alarms(clients: AwsClients, region: str, call: ApiCall) -> None:
    """Right before UpdateEndpoint (the plan's own alarms made by now): each alarm the deployment
    rolls back on exists and is not in ALARM."""
    names = _rollback_alarm_names(call)
    if not names:
        return
    firing, missing = _firing_and_missing(names, _alarm_states(clients, region, names))
    if missing:
        raise ApplyFailed(f"{_alarms_text(missing)} do{'es' if len(missing) == 1 else ''} not exist: "
                          "UpdateEndpoint not called")
    if firing:
        raise ApplyFailed(f"{_alarms_text(firing)} {'is' if len(firing) == 1 else 'are'} in state ALARM: "
                          "UpdateEndpoint not called")
