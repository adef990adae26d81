"""Utilisation of training, transform and processing job hosts: /aws/sagemaker/TrainingJobs,
/aws/sagemaker/TransformJobs and /aws/sagemaker/ProcessingJobs, dimension Host (`<job>/algo-<n>`,
`<job>/<instance-id>`).

The hosts are found with ListMetrics, once per namespace for the whole region (it lists what had
data in the last two weeks). Jobs are short and scattered in time: each GetMetricData call covers
a group of jobs that started close together, at 1-minute periods, within the datapoint cap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.cloudwatch import CollectedMetrics, collect_metrics
from auditor.collect.plan import (
    AVERAGE,
    MAX_DATAPOINTS_PER_CALL,
    MAX_QUERIES_PER_CALL,
    MAXIMUM,
    MetricSpec,
    SeriesQuery,
)
from auditor.collect.session import RegionAccessError, describe_client_error
from auditor.models import Window

TRAINING_NAMESPACE = "/aws/sagemaker/TrainingJobs"
TRANSFORM_NAMESPACE = "/aws/sagemaker/TransformJobs"
PROCESSING_NAMESPACE = "/aws/sagemaker/ProcessingJobs"
JOB_METRICS = ("CPUUtilization", "MemoryUtilization", "GPUUtilization", "GPUMemoryUtilization")


@dataclass(frozen=True)
class JobSpan:
    name: str
    start: datetime
    end: datetime
    hosts: tuple[str, ...]
    gpu: bool


def list_job_hosts(cloudwatch: BaseClient, region: str, namespace: str) -> dict[str, list[str]]:
    """Job name -> its hosts, from one paginated ListMetrics (deduplicated: some stores list a
    metric once per datapoint)."""
    hosts: dict[str, set[str]] = {}
    try:
        for page in cloudwatch.get_paginator("list_metrics").paginate(Namespace=namespace, MetricName="CPUUtilization"):
            for metric in page.get("Metrics", []):
                for dimension in metric.get("Dimensions", []):
                    if dimension["Name"] == "Host":
                        host = dimension["Value"]
                        hosts.setdefault(host.split("/", 1)[0], set()).add(host)
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "cloudwatch", "ListMetrics", region)) from exc
    return {job: sorted(found) for job, found in hosts.items()}


def _period_for(start: datetime, now: datetime) -> int:
    age = now - start
    return 3600 if age > timedelta(days=63) else 300 if age > timedelta(days=15) else 60


def _window(start: datetime, end: datetime, period: int) -> Window:
    first = int(start.timestamp()) // period * period
    last = math.ceil(end.timestamp() / period) * period
    return Window(datetime.fromtimestamp(first, UTC), datetime.fromtimestamp(max(last, first + period), UTC),
                  period)


def _queries(job: JobSpan, namespace: str) -> list[SeriesQuery]:
    metrics = JOB_METRICS if job.gpu else JOB_METRICS[:2]
    return [
        SeriesQuery(job.name, host, MetricSpec(namespace, metric, stat), dimension=("Host", host))
        for host in job.hosts for metric in metrics for stat in (AVERAGE, MAXIMUM)
    ]


def group_jobs(jobs: list[JobSpan], namespace: str, now: datetime) -> list[tuple[Window, list[SeriesQuery]]]:
    """Greedy: jobs in start order share a call while the union window x queries fits the caps."""
    groups: list[tuple[Window, list[SeriesQuery]]] = []
    current: list[JobSpan] = []
    for job in sorted(jobs, key=lambda j: j.start):
        candidate = [*current, job]
        period = _period_for(min(j.start for j in candidate), now)
        window = _window(min(j.start for j in candidate), max(j.end for j in candidate), period)
        queries = [q for j in candidate for q in _queries(j, namespace)]
        fits = (len(queries) <= MAX_QUERIES_PER_CALL
                and len(queries) * window.points_per_series <= MAX_DATAPOINTS_PER_CALL)
        if current and not fits:
            groups.append(_group(current, namespace, now))
            current = [job]
        else:
            current = candidate
    if current:
        groups.append(_group(current, namespace, now))
    return groups


def _group(jobs: list[JobSpan], namespace: str, now: datetime) -> tuple[Window, list[SeriesQuery]]:
    start = min(j.start for j in jobs)
    window = _window(start, max(j.end for j in jobs), _period_for(start, now))
    return window, [q for j in jobs for q in _queries(j, namespace)]


def collect_job_metrics(cloudwatch: BaseClient, region: str, jobs: list[JobSpan], namespace: str,
                        now: datetime) -> CollectedMetrics:
    """Frames keyed (job, host, None), columns 'Metric:Stat' as published (CPU summed over vCPUs)."""
    merged = CollectedMetrics()
    for window, queries in group_jobs(jobs, namespace, now):
        part = collect_metrics(cloudwatch, region, queries, window)
        merged.frames.update(part.all_frames())
        merged.errors.extend(part.errors)
        merged.calls += part.calls
        merged.queries += part.queries
        merged.datapoints += part.datapoints
    return merged
