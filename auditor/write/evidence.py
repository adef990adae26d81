"""Fresh evidence before a destructive plan, as a kind says it for each resource type (its
`evidence`, in auditor/kinds/<kind>/evidence.py): which operations make a plan destructive, and
how the resource's activity since the audit's window ended is read (any activity refuses).
auditor.act.evidence runs the check; the pieces every check uses are here (GetMetricData, its
queries).

A series with no datapoint since the window ended is no activity (CloudWatch publishes nothing
for a period without traffic).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from auditor.collect.session import AwsClients, describe_client_error
from auditor.config import AuditConfig
from auditor.write.plan import ApplyRefused, PlanToApply
from auditor.write.target import ERRORS, Observed

MAX_QUERIES = 500  # GetMetricData's limit a request (an endpoint may host hundreds of components)
PERIOD_SECONDS = 300  # recent data (under 15 days): any multiple of 60; 26 hours are 312 points a query


@dataclass(frozen=True)
class Since:
    """What a resource type's evidence check needs: the plan, the resource now, the window the
    activity is read over and the settings (the rules' idle ceilings)."""

    clients: AwsClients
    plan: PlanToApply
    observed: Observed
    start: datetime  # the audit's window end
    end: datetime  # now
    config: AuditConfig
    who: str  # the resource as the messages name it (Target.named)

    @property
    def when(self) -> str:
        return f"since the audit's window ended at {self.start.strftime('%Y-%m-%d %H:%M UTC')}"


@dataclass(frozen=True)
class EvidenceCheck:
    """One resource type's fresh evidence: the operations that make its plan destructive (end what
    the resource serves or runs), and the read of its activity since (a refusal naming what was
    seen, or None)."""

    destructive: frozenset[str]
    since: Callable[[Since], str | None]
    # The calls `since` makes, as (botocore service, operation): in apply's IAM policy.
    reads: frozenset[tuple[str, str]] = frozenset()


def metric_data(since: Since, queries: list[dict[str, Any]]) -> dict[str, list[tuple[datetime, float]]]:
    """One GetMetricData call per MAX_QUERIES queries (its NextToken pages followed, which these
    short series rarely need): each query's (timestamp, value) pairs, by its Id."""
    api = since.clients.client("cloudwatch", since.plan.resource.region)
    found: dict[str, list[tuple[datetime, float]]] = {}
    try:
        for first in range(0, len(queries), MAX_QUERIES):
            kwargs: dict[str, Any] = {"MetricDataQueries": queries[first:first + MAX_QUERIES],
                                      "StartTime": since.start, "EndTime": since.end}
            while True:
                answer = api.get_metric_data(**kwargs)
                for result in answer.get("MetricDataResults", []):
                    pairs = zip(result.get("Timestamps", []), result.get("Values", []), strict=False)
                    found.setdefault(str(result["Id"]), []).extend(
                        (_moment(t), float(v)) for t, v in pairs if not math.isnan(float(v)))
                if not answer.get("NextToken"):
                    break
                kwargs["NextToken"] = answer["NextToken"]
        return found
    except ERRORS as exc:
        problem = describe_client_error(exc, "cloudwatch", "GetMetricData", since.plan.resource.region)
        raise ApplyRefused(f"{since.who}: {problem}") from None


def _moment(stamp: Any) -> datetime:
    """A GetMetricData timestamp as a datetime: the clients' parser gives epoch seconds (session.py)."""
    return stamp if isinstance(stamp, datetime) else datetime.fromtimestamp(float(stamp), UTC)


def query(query_id: str, namespace: str, metric: str, dimensions: dict[str, str], stat: str,
          period: int) -> dict[str, Any]:
    """One MetricDataQuery: a metric's statistic over `period` seconds."""
    return {"Id": query_id, "ReturnData": True, "MetricStat": {
        "Metric": {"Namespace": namespace, "MetricName": metric,
                   "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()]},
        "Period": period, "Stat": stat}}


def after(value: Any, start: datetime) -> datetime | None:
    """`value` when it is a moment after `start`; otherwise None."""
    return value if isinstance(value, datetime) and value > start else None
