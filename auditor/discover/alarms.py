"""CloudWatch alarms on async endpoints' queues, one region at a time.

One paginated DescribeAlarms call serves every endpoint of the region (rather than two
DescribeAlarmsForMetric calls per endpoint); an alarm counts for an endpoint when it watches
ApproximateAgeOfOldestRequest or HasBacklogWithoutCapacity in AWS/SageMaker with the endpoint's
EndpointName, directly or as one of its metric-math metrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error

QUEUE_METRICS = frozenset({"ApproximateAgeOfOldestRequest", "HasBacklogWithoutCapacity"})
NAMESPACE = "AWS/SageMaker"


def _watched(alarm: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    """The metrics an alarm reads: its own, or each MetricStat of its metric math."""
    if alarm.get("MetricName"):
        yield alarm
    for query in alarm.get("Metrics") or ():
        metric = (query.get("MetricStat") or {}).get("Metric")
        if metric:
            yield metric


def queue_alarm_endpoints(alarms: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Endpoint name -> the names of the alarms that watch its queue."""
    found: dict[str, list[str]] = {}
    for alarm in alarms:
        for metric in _watched(alarm):
            if metric.get("Namespace") != NAMESPACE or metric.get("MetricName") not in QUEUE_METRICS:
                continue
            for dimension in metric.get("Dimensions") or ():
                if dimension.get("Name") == "EndpointName" and isinstance(dimension.get("Value"), str):
                    names = found.setdefault(dimension["Value"], [])
                    if alarm.get("AlarmName") not in names:
                        names.append(str(alarm.get("AlarmName")))
    return found


def discover_queue_alarms(cloudwatch: BaseClient, region: str) -> dict[str, tuple[str, ...]]:
    """The queue alarms of the region's endpoints, by endpoint name; raises RegionAccessError when
    the alarms cannot be read."""
    alarms: list[Mapping[str, Any]] = []
    try:
        for page in cloudwatch.get_paginator("describe_alarms").paginate(AlarmTypes=["MetricAlarm"]):
            alarms.extend(page.get("MetricAlarms", []))
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "cloudwatch", "DescribeAlarms", region)) from exc
    return {name: tuple(sorted(found)) for name, found in queue_alarm_endpoints(alarms).items()}
