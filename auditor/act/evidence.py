"""Destructive plans need fresh evidence: before a delete, a stop, an app deleted, HyperPod nodes
deleted or an off-hours schedule, apply reads the resource's activity since the audit's window
ended (the run the plan is applied from: load_plan's `audited_in`), and any activity refuses.

One part per resource type, each beside the others here (TARGETS' types):

- endpoint (a delete, or off-hours): ONE GetMetricData call: per variant Invocations (Sum) and
  CPUUtilization (Maximum), and for async endpoints, which publish no Invocations, the requests
  they processed (TotalProcessingTime SampleCount, per variant) and their queue
  (ApproximateBacklogSize Maximum, EndpointName only). Any request, any queued request, or CPU over
  the idle rule's ceiling (per vCPU, the variant's type as the plan saw it) refuses. For off-hours
  only the hours of the week the schedules would have it off are read.
- hyperpod-cluster: the nodes to delete, as the hyperpod kind reads them (Container Insights'
  node_cpu_utilization and node_gpu_utilization, Maximum, found with ListMetrics by InstanceId):
  ONE GetMetricData call; a node over the hyperpod-idle-nodes ceiling refuses.
- notebook-instance: no metric exists; its LastModifiedTime (a start, stop or update) after the
  window ended refuses.
- studio-app: no metric exists; its LastUserActivityTimestamp (unless it is only the last health
  check) after the window ended refuses.

A series with no datapoint since the window ended is no activity (CloudWatch publishes nothing
for a period without traffic).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import botocore.exceptions

from auditor.act.plan import ApplyRefused, PlanToApply
from auditor.act.targets import Observed, plan_noun
from auditor.analyse.rules.base import settings_of
from auditor.catalog import load_catalog
from auditor.collect.session import AwsClients, describe_client_error
from auditor.config import AuditConfig
from auditor.text import one_line

_ERRORS = (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError)
PERIOD_SECONDS = 300  # recent data (under 15 days): any multiple of 60; 26 hours are 312 points a query
OFF_HOURS_PERIOD_SECONDS = 3600  # the off-hours are whole hours of the week
HOURS_PER_WEEK = 168
DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")


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

    @property
    def when(self) -> str:
        return f"since the audit's window ended at {self.start.strftime('%Y-%m-%d %H:%M UTC')}"


def destructive(plan: PlanToApply) -> bool:
    """A plan whose change ends what a resource serves or runs: a delete, a stop, an app or nodes
    deleted, an off-hours schedule (of an endpoint, or of its inference components' copies)."""
    operations = {c.operation for c in plan.change.calls} if plan.change else set()
    return bool(operations & {"DeleteEndpoint", "StopNotebookInstance", "DeleteApp", "BatchDeleteClusterNodes",
                              "CreateSchedule", "PutScheduledAction"})


def evidence_refusal(clients: AwsClients, plan: PlanToApply, observed: Observed, config: AuditConfig,
                     now: datetime) -> str | None:
    """Why the resource is not as idle now as the audit found it (one line naming what was seen),
    or None; for a plan that is not destructive, None without a read."""
    if not destructive(plan):
        return None
    if plan.window_end is None:
        return (f"{plan_noun(plan)}: the plan does not say when its audit's window ended, so its activity since "
                "cannot be read; apply it from the history (`audit apply ID`)")
    start = plan.window_end
    if now - start < timedelta(seconds=60):
        return None  # nothing has been published since
    check = EVIDENCE.get(plan.resource.type)
    return check(Since(clients, plan, observed, start, now, config)) if check else None


def _metric_data(since: Since, queries: list[dict[str, Any]]) -> dict[str, list[tuple[datetime, float]]]:
    """One GetMetricData call (its NextToken pages followed, which these few short series never
    need): each query's (timestamp, value) pairs, by its Id."""
    api = since.clients.client("cloudwatch", since.plan.resource.region)
    kwargs: dict[str, Any] = {"MetricDataQueries": queries, "StartTime": since.start, "EndTime": since.end}
    found: dict[str, list[tuple[datetime, float]]] = {}
    try:
        while True:
            answer = api.get_metric_data(**kwargs)
            for result in answer.get("MetricDataResults", []):
                pairs = zip(result.get("Timestamps", []), result.get("Values", []), strict=False)
                found.setdefault(str(result["Id"]), []).extend(
                    (t, float(v)) for t, v in pairs if not math.isnan(float(v)))
            if not answer.get("NextToken"):
                return found
            kwargs["NextToken"] = answer["NextToken"]
    except _ERRORS as exc:
        problem = describe_client_error(exc, "cloudwatch", "GetMetricData", since.plan.resource.region)
        raise ApplyRefused(f"{plan_noun(since.plan)}: {problem}") from None


def _query(query_id: str, namespace: str, metric: str, dimensions: dict[str, str], stat: str,
           period: int) -> dict[str, Any]:
    return {"Id": query_id, "ReturnData": True, "MetricStat": {
        "Metric": {"Namespace": namespace, "MetricName": metric,
                   "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()]},
        "Period": period, "Stat": stat}}


# --- endpoint ----------------------------------------------------------------------------------


def off_hours_of_week(plan: PlanToApply) -> set[int] | None:
    """The hours of the week (0 = Monday 00:00 UTC) the plan's schedules have the endpoint off
    (proposed.details.off_periods_utc); None when the plan is not an off-hours plan."""
    details = plan.proposed.get("details") if isinstance(plan.proposed.get("details"), dict) else {}
    periods = details.get("off_periods_utc") if isinstance(details, dict) else None
    if plan.proposed.get("action") != "off-hours" or not isinstance(periods, list):
        return None
    hours: set[int] = set()
    for period in periods:
        try:
            day, clock = str(period["from"]).split()
            first = DAYS.index(day.upper()) * 24 + int(clock.split(":")[0])
            hours |= {(first + i) % HOURS_PER_WEEK for i in range(int(period["hours"]))}
        except (KeyError, TypeError, ValueError):
            raise ApplyRefused(f"{plan_noun(plan)}: its off periods cannot be read "
                               "(proposed.details.off_periods_utc); run the audit again") from None
    return hours


def _hour_of_week(moment: datetime) -> int:
    return moment.weekday() * 24 + moment.hour


def endpoint_since(since: Since) -> str | None:
    from auditor.kinds.endpoints.rules.idle import RULE as IDLE

    plan = since.plan
    off = off_hours_of_week(plan)
    period = OFF_HOURS_PERIOD_SECONDS if off is not None else PERIOD_SECONDS
    variants = [str(v.get("VariantName")) for v in since.observed.described.get("ProductionVariants") or []]
    queries = [_query("backlog", "AWS/SageMaker", "ApproximateBacklogSize", {"EndpointName": plan.resource.name},
                      "Maximum", period)]
    for index, variant in enumerate(variants):
        named = {"EndpointName": plan.resource.name, "VariantName": variant}
        queries += [_query(f"inv{index}", "AWS/SageMaker", "Invocations", named, "Sum", period),
                    _query(f"done{index}", "AWS/SageMaker", "TotalProcessingTime", named, "SampleCount", period),
                    _query(f"cpu{index}", "/aws/sagemaker/Endpoints", "CPUUtilization", named, "Maximum", period)]
    found = _metric_data(since, queries)

    def values(query_id: str) -> list[float]:
        return [v for t, v in found.get(query_id, []) if off is None or _hour_of_week(t) in off]

    name = one_line(plan.resource.name)
    during = " in the hours the schedules would have it off" if off is not None else ""
    requests = sum(sum(values(f"inv{i}")) + sum(values(f"done{i}")) for i in range(len(variants)))
    if requests > 0:
        return f"endpoint {name} served {requests:,.0f} requests{during} {since.when}; run the audit again"
    queued = max(values("backlog"), default=0.0)
    if queued > 0:
        return f"endpoint {name} had {queued:,.0f} requests queued{during} {since.when}; run the audit again"
    ceiling = settings_of(IDLE, since.config).idle_ceiling_percent
    for index, variant in enumerate(variants):
        busiest = max(values(f"cpu{index}"), default=None)
        vcpus = _vcpus(plan, variant)
        if busiest is not None and busiest / vcpus > ceiling:
            return (f"endpoint {name}'s variant {one_line(variant)} ran up to {busiest / vcpus:.1f}% CPU per vCPU"
                    f"{during} {since.when} (idle: at most {ceiling:g}%); run the audit again")
    return None


def _vcpus(plan: PlanToApply, variant: str) -> float:
    """The variant's vCPUs as the plan saw its type (CPUUtilization is summed over them); 1 unknown."""
    basis = plan.basis or {}
    kind = next((v.get("instance_type") for v in basis.get("variants") or []
                 if isinstance(v, dict) and v.get("name") == variant), None)
    shape = load_catalog().shape(kind) if isinstance(kind, str) else None
    return float(shape.vcpu) if shape is not None and shape.vcpu else 1.0


# --- HyperPod ----------------------------------------------------------------------------------


def cluster_since(since: Since) -> str | None:
    from auditor.kinds.hyperpod.metrics import CPU, GPU, NAMESPACE
    from auditor.kinds.hyperpod.rules.hyperpod_idle_nodes import RULE as HYPERPOD_IDLE

    plan = since.plan
    calls = plan.calls_of("sagemaker", "BatchDeleteClusterNodes")
    nodes = {str(n) for c in calls for n in c.params.get("NodeIds") or []}
    eks = ((since.observed.described.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn")
    if not eks or not nodes:
        return None  # a Slurm cluster gets no delete plan; its nodes publish nothing to read
    api = since.clients.client("cloudwatch", plan.resource.region)
    try:
        listed = [m for page in api.get_paginator("list_metrics").paginate(
            Namespace=NAMESPACE, Dimensions=[{"Name": "ClusterName", "Value": str(eks).rsplit("/", 1)[-1]}])
            for m in page.get("Metrics", []) if m.get("MetricName") in (CPU, GPU)]
    except _ERRORS as exc:
        raise ApplyRefused(f"{plan_noun(plan)}: "
                           f"{describe_client_error(exc, 'cloudwatch', 'ListMetrics', plan.resource.region)}") from None
    series = [(m, {d["Name"]: d["Value"] for d in m.get("Dimensions", [])}.get("InstanceId")) for m in listed]
    series = [(m, node) for m, node in series if node in nodes]
    if not series:
        return None
    queries = [{"Id": f"n{i}", "ReturnData": True, "MetricStat": {
        "Metric": {"Namespace": NAMESPACE, "MetricName": m["MetricName"], "Dimensions": m["Dimensions"]},
        "Period": PERIOD_SECONDS, "Stat": "Maximum"}} for i, (m, _) in enumerate(series)]
    found = _metric_data(since, queries)
    ceiling = settings_of(HYPERPOD_IDLE, since.config).idle_ceiling_percent
    for index, (metric, node) in enumerate(series):
        busiest = max((v for _, v in found.get(f"n{index}", [])), default=None)
        if busiest is not None and busiest > ceiling:
            what = "GPU" if metric["MetricName"] == GPU else "CPU"
            return (f"HyperPod cluster {one_line(plan.resource.name)}'s node {one_line(str(node))} ran up to "
                    f"{busiest:.1f}% {what} {since.when} (idle: at most {ceiling:g}%); run the audit again")
    return None


# --- workspaces: no metric, what changed since -------------------------------------------------


def _after(value: Any, start: datetime) -> datetime | None:
    return value if isinstance(value, datetime) and value > start else None


def notebook_since(since: Since) -> str | None:
    changed = _after(since.observed.described.get("LastModifiedTime"), since.start)
    if changed is None:
        return None
    return (f"notebook instance {one_line(since.plan.resource.name)} was started, stopped or updated at "
            f"{changed.strftime('%Y-%m-%d %H:%M UTC')}, {since.when}; run the audit again")


def app_since(since: Since) -> str | None:
    described = since.observed.described
    active = described.get("LastUserActivityTimestamp")
    if active is not None and active == described.get("LastHealthCheckTimestamp"):
        return None  # only a health check: no user activity
    used = _after(active, since.start)
    if used is None:
        return None
    return (f"Studio app {one_line(since.plan.resource.name)} had user activity at "
            f"{used.strftime('%Y-%m-%d %H:%M UTC')}, "
            f"{since.when}; run the audit again")


EVIDENCE: dict[str, Callable[[Since], str | None]] = {
    "endpoint": endpoint_since,
    "hyperpod-cluster": cluster_since,
    "notebook-instance": notebook_since,
    "studio-app": app_since,
}
