"""Processing jobs created in the window: ListProcessingJobs by creation time, then
DescribeProcessingJob (instance type and count, times, image, and the fields the next run's
CreateProcessingJob takes)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.client import BaseClient

from auditor.discover.arns import account_of
from auditor.kinds.jobs.discover import _describe, _list, create_fields, create_members, environment_variables
from auditor.kinds.jobs.models import ProcessingJob
from auditor.models import AuditError


@dataclass(frozen=True)
class ProcessingDiscovery:
    jobs: tuple[ProcessingJob, ...]
    errors: tuple[AuditError, ...]


def discover_processing_jobs(sagemaker: BaseClient, region: str, since: datetime,
                             max_workers: int = 8) -> ProcessingDiscovery:
    errors: list[AuditError] = []
    lock = threading.Lock()

    def record(error: AuditError) -> None:
        with lock:
            errors.append(error)

    names = _list(
        lambda: sagemaker.get_paginator("list_processing_jobs").paginate(
            PaginationConfig={"PageSize": 100}, CreationTimeAfter=since),
        region, "ListProcessingJobs", "ProcessingJobSummaries", "ProcessingJobName",
    )

    takes = create_members(sagemaker, "CreateProcessingJob")

    def describe(name: str) -> ProcessingJob | None:
        job: ProcessingJob | None = _describe(
            lambda: sagemaker.describe_processing_job(ProcessingJobName=name), region, name,
            "DescribeProcessingJob", lambda d, r: processing_job(d, r, takes), record)
        return job

    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="processing") as pool:
        jobs = [j for j in pool.map(describe, names) if j]
    return ProcessingDiscovery(tuple(jobs), tuple(errors))


def processing_job(d: dict[str, Any], region: str, takes: frozenset[str] = frozenset()) -> ProcessingJob:
    cluster = (d.get("ProcessingResources") or {}).get("ClusterConfig") or {}
    return ProcessingJob(
        account_id=account_of(d.get("ProcessingJobArn", "")),
        region=region,
        name=d["ProcessingJobName"],
        status=d.get("ProcessingJobStatus", "Unknown"),
        instance_type=cluster.get("InstanceType", ""),
        instance_count=int(cluster.get("InstanceCount", 1)),
        volume_size_gb=int(cluster.get("VolumeSizeInGB", 0)),
        image=(d.get("AppSpecification") or {}).get("ImageUri", ""),
        created_at=d["CreationTime"],
        started_at=d.get("ProcessingStartTime"),
        ended_at=d.get("ProcessingEndTime"),
        arn=d.get("ProcessingJobArn", ""),
        create_fields=create_fields(d, takes),
        environment_variables=environment_variables(d),
    )
