"""After a change is made, each schedule, scheduled action, alarm and scaling policy it created is
read back (GetSchedule, DescribeScheduledActions, DescribeAlarms, DescribeScalingPolicies): apply
reports "applied" only when AWS shows every one. One small reader per call that creates something."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import botocore.exceptions

from auditor.collect.session import AwsClients, describe_client_error
from auditor.models import ApiCall
from auditor.text import one_line

Reader = Callable[[Any, dict[str, Any]], bool]  # (the service's client, the call's params) -> it exists


def _schedule(api: Any, params: dict[str, Any]) -> bool:
    keys = {"Name": params["Name"], **({"GroupName": params["GroupName"]} if params.get("GroupName") else {})}
    try:
        return api.get_schedule(**keys).get("Name") == params["Name"]
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return False
        raise


def _scheduled_action(api: Any, params: dict[str, Any]) -> bool:
    found = api.describe_scheduled_actions(
        ServiceNamespace=params["ServiceNamespace"], ResourceId=params["ResourceId"],
        ScalableDimension=params["ScalableDimension"], ScheduledActionNames=[params["ScheduledActionName"]])
    return any(a.get("ScheduledActionName") == params["ScheduledActionName"] for a in found.get("ScheduledActions", []))


def _alarm(api: Any, params: dict[str, Any]) -> bool:
    found = api.describe_alarms(AlarmNames=[params["AlarmName"]])
    return any(a.get("AlarmName") == params["AlarmName"] for a in found.get("MetricAlarms", []))


def _scaling_policy(api: Any, params: dict[str, Any]) -> bool:
    found = api.describe_scaling_policies(
        ServiceNamespace=params["ServiceNamespace"], ResourceId=params["ResourceId"],
        ScalableDimension=params["ScalableDimension"], PolicyNames=[params["PolicyName"]])
    return any(p.get("PolicyName") == params["PolicyName"] for p in found.get("ScalingPolicies", []))


# (service, the operation that creates it) -> (the read, how it is named in a message, the name's key)
READERS: dict[tuple[str, str], tuple[str, Reader, str, str]] = {
    ("scheduler", "CreateSchedule"): ("GetSchedule", _schedule, "schedule", "Name"),
    ("application-autoscaling", "PutScheduledAction"): ("DescribeScheduledActions", _scheduled_action,
                                                        "scheduled action", "ScheduledActionName"),
    ("cloudwatch", "PutMetricAlarm"): ("DescribeAlarms", _alarm, "alarm", "AlarmName"),
    ("application-autoscaling", "PutScalingPolicy"): ("DescribeScalingPolicies", _scaling_policy, "scaling policy",
                                                      "PolicyName"),
}


def missing_after(clients: AwsClients, region: str, calls: list[ApiCall]) -> str | None:
    """What the made calls created that AWS does not show (one line), or None when it shows all."""
    missing = []
    for call in calls:
        reader = READERS.get((call.service, call.operation))
        if reader is None:
            continue
        operation, exists, noun, key = reader
        try:
            found = exists(clients.client(call.service, region), call.params)
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            return f"the calls were made, but {describe_client_error(exc, call.service, operation, region)}"
        if not found:
            missing.append(f"{noun} {one_line(str(call.params.get(key)))}")
    if missing:
        return f"the calls were made, but {operation_list(missing)} not found when read back"
    return None


def operation_list(items: list[str]) -> str:
    return f"{', '.join(items)} {'is' if len(items) == 1 else 'are'}"
