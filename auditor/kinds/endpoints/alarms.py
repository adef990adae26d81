"""CloudWatch alarms on the region's endpoints, one region at a time.

One paginated DescribeAlarms call serves every endpoint of the region (rather than
DescribeAlarmsForMetric calls per endpoint and metric), and two questions:

- queue alarms (the no-queue-alarm rule): an alarm counts for an async endpoint when it watches
  ApproximateAgeOfOldestRequest or HasBacklogWithoutCapacity in AWS/SageMaker with the endpoint's
  EndpointName, directly or as one of its metric-math metrics;
- rollback alarms (a plan's blue/green UpdateEndpoint names them in AutoRollbackConfiguration, in
  place of alarms of its own): an alarm counts for a variant when it watches one of
  ROLLBACK_METRICS in AWS/SageMaker with exactly the dimensions EndpointName and VariantName of
  that variant (the only ones AWS publishes these metrics under, so the only alarm that sees the
  new fleet), directly or as one of its metric-math metrics;
- backlog alarms (async-scale-from-zero): the queue alarms on HasBacklogWithoutCapacity alone, the
  trigger AWS's async autoscaling guide gives the step-scaling policy that starts an instance from zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error
from auditor.kinds.endpoints.models import ROLLBACK_METRICS, RollbackAlarm

BACKLOG_WITHOUT_CAPACITY = "HasBacklogWithoutCapacity"
QUEUE_METRICS = frozenset({"ApproximateAgeOfOldestRequest", BACKLOG_WITHOUT_CAPACITY})
NAMESPACE = "AWS/SageMaker"


@dataclass(frozen=True)
class RegionAlarms:
    """What the region's alarms say about its endpoints, by endpoint name."""

    queue: dict[str, tuple[str, ...]] = field(default_factory=dict)
    backlog: dict[str, tuple[str, ...]] = field(default_factory=dict)  # on HasBacklogWithoutCapacity
    rollback: dict[str, tuple[RollbackAlarm, ...]] = field(default_factory=dict)


def _watched(alarm: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    """The metrics an alarm reads: its own, or each MetricStat of its metric math."""
    if alarm.get("MetricName"):
        yield alarm
    for query in alarm.get("Metrics") or ():
        metric = (query.get("MetricStat") or {}).get("Metric")
        if metric:
            yield metric


def queue_alarm_endpoints(alarms: Iterable[Mapping[str, Any]],
                          metrics: frozenset[str] = QUEUE_METRICS) -> dict[str, list[str]]:
    """Endpoint name -> the names of the alarms that watch its queue (`metrics` of it)."""
    found: dict[str, list[str]] = {}
    for alarm in alarms:
        for metric in _watched(alarm):
            if metric.get("Namespace") != NAMESPACE or metric.get("MetricName") not in metrics:
                continue
            for dimension in metric.get("Dimensions") or ():
                if dimension.get("Name") == "EndpointName" and isinstance(dimension.get("Value"), str):
                    names = found.setdefault(dimension["Value"], [])
                    if alarm.get("AlarmName") not in names:
                        names.append(str(alarm.get("AlarmName")))
    return found


def rollback_alarm_endpoints(alarms: Iterable[Mapping[str, Any]]) -> dict[str, list[RollbackAlarm]]:
    """Endpoint name -> the alarms on a variant's errors or latency a deployment can roll back on."""
    found: dict[str, list[RollbackAlarm]] = {}
    for alarm in alarms:
        name = alarm.get("AlarmName")
        if not isinstance(name, str) or not name:
            continue
        for metric in _watched(alarm):
            if metric.get("Namespace") != NAMESPACE or metric.get("MetricName") not in ROLLBACK_METRICS:
                continue
            dimensions = {d.get("Name"): d.get("Value") for d in metric.get("Dimensions") or ()}
            endpoint, variant = dimensions.get("EndpointName"), dimensions.get("VariantName")
            if set(dimensions) != {"EndpointName", "VariantName"} or not isinstance(endpoint, str) \
                    or not isinstance(variant, str):
                continue  # another dimension set (an instance, a container) does not see the new fleet whole
            entry = RollbackAlarm(name, variant, str(metric["MetricName"]))
            listed = found.setdefault(endpoint, [])
            if entry not in listed:
                listed.append(entry)
    return found


def discover_alarms(cloudwatch: BaseClient, region: str) -> RegionAlarms:
    """The region's queue and rollback alarms, by endpoint name; raises RegionAccessError when the
    alarms cannot be read."""
    alarms: list[Mapping[str, Any]] = []
    try:
        for page in cloudwatch.get_paginator("describe_alarms").paginate(AlarmTypes=["MetricAlarm"]):
            alarms.extend(page.get("MetricAlarms", []))
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "cloudwatch", "DescribeAlarms", region)) from exc
    return RegionAlarms(
        queue={name: tuple(sorted(found)) for name, found in queue_alarm_endpoints(alarms).items()},
        backlog={name: tuple(sorted(found)) for name, found in
                 queue_alarm_endpoints(alarms, frozenset({BACKLOG_WITHOUT_CAPACITY})).items()},
        rollback={name: tuple(sorted(found, key=lambda a: (a.variant, a.name, a.metric)))
                  for name, found in rollback_alarm_endpoints(alarms).items()},
    )
