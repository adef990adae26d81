"""Training and batch transform jobs created in the window: List*Jobs by creation time, then
Describe* for what the list does not say (instance type and count, times, Spot, hyperparameters, and
the fields the next run's Create*Job request takes)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region
from auditor.discover.arns import account_of
from auditor.kinds.jobs.models import TrainingJob, TransformJob
from auditor.models import AuditError


@dataclass(frozen=True)
class JobDiscovery:
    training: tuple[TrainingJob, ...]
    transform: tuple[TransformJob, ...]
    errors: tuple[AuditError, ...]


def discover_jobs(sagemaker: BaseClient, region: str, since: datetime, max_workers: int = 8) -> JobDiscovery:
    errors: list[AuditError] = []
    lock = threading.Lock()

    def record(error: AuditError) -> None:
        with lock:
            errors.append(error)

    pages = {"PaginationConfig": {"PageSize": 100}, "CreationTimeAfter": since}
    training_names = _list(
        lambda: sagemaker.get_paginator("list_training_jobs").paginate(**pages),
        region, "ListTrainingJobs", "TrainingJobSummaries", "TrainingJobName",
    )
    transform_names = _list(
        lambda: sagemaker.get_paginator("list_transform_jobs").paginate(**pages),
        region, "ListTransformJobs", "TransformJobSummaries", "TransformJobName",
    )

    training_takes = create_members(sagemaker, "CreateTrainingJob")
    transform_takes = create_members(sagemaker, "CreateTransformJob")

    def training(name: str) -> TrainingJob | None:
        return _describe(lambda: sagemaker.describe_training_job(TrainingJobName=name), region, name,
                         "DescribeTrainingJob", lambda d, r: _training_job(d, r, training_takes), record)

    def transform(name: str) -> TransformJob | None:
        return _describe(lambda: sagemaker.describe_transform_job(TransformJobName=name), region, name,
                         "DescribeTransformJob", lambda d, r: _transform_job(d, r, transform_takes), record)

    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="jobs") as pool:
        trainings = [j for j in pool.map(training, training_names) if j]
        transforms = [j for j in pool.map(transform, transform_names) if j]
    return JobDiscovery(tuple(trainings), tuple(transforms), tuple(errors))


def _list(pages: Callable[[], Any], region: str, operation: str, key: str, name_key: str) -> list[str]:
    try:
        return [summary[name_key] for page in pages() for summary in page.get(key, [])]
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "sagemaker", operation, region)) from exc


def _describe(
    call: Callable[[], dict[str, Any]], region: str, name: str, operation: str,
    build: Callable[[dict[str, Any], str], Any], record: Callable[[AuditError], None],
) -> Any:
    try:
        described = call()
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        if is_fatal_for_region(exc):
            raise RegionAccessError(describe_client_error(exc, "sagemaker", operation, region)) from exc
        record(AuditError(region, name, "discover", describe_client_error(exc, "sagemaker", operation, region)))
        return None
    return build(described, region)


def create_members(sagemaker: BaseClient, operation: str) -> frozenset[str]:
    """The request fields of `operation` (a Create*Job call), from the client's own service model."""
    return frozenset(sagemaker.meta.service_model.operation_model(operation).input_shape.members)


# A field of the Describe answer that is never kept: teams put tokens in a job's environment, and a
# secret is never echoed (the next run's request says how many variables to copy instead).
NOT_KEPT = frozenset({"Environment"})


def create_fields(described: dict[str, Any], takes: frozenset[str]) -> dict[str, Any]:
    """The Describe answer's fields that the Create call takes, but Environment: the next run's
    request is built from them (recommend/job_change.py), so a plan's change needs no further call
    per job."""
    return {k: v for k, v in described.items() if k in takes and k not in NOT_KEPT}


def environment_variables(described: dict[str, Any]) -> int:
    """How many variables the job's Environment sets (their names and values are not kept)."""
    return len(described.get("Environment") or {})


def _training_job(d: dict[str, Any], region: str, takes: frozenset[str] = frozenset()) -> TrainingJob:
    resources = d.get("ResourceConfig", {})
    algorithm = d.get("AlgorithmSpecification", {})
    stopping = d.get("StoppingCondition", {})
    return TrainingJob(
        account_id=account_of(d.get("TrainingJobArn", "")),
        region=region,
        name=d["TrainingJobName"],
        status=d.get("TrainingJobStatus", "Unknown"),
        instance_type=resources.get("InstanceType", ""),
        instance_count=int(resources.get("InstanceCount", 1)),
        created_at=d["CreationTime"],
        started_at=d.get("TrainingStartTime"),
        ended_at=d.get("TrainingEndTime"),
        training_seconds=d.get("TrainingTimeInSeconds"),
        billable_seconds=d.get("BillableTimeInSeconds"),
        spot=bool(d.get("EnableManagedSpotTraining")),
        checkpoint_s3_uri=(d.get("CheckpointConfig") or {}).get("S3Uri"),
        max_wait_seconds=stopping.get("MaxWaitTimeInSeconds"),
        max_runtime_seconds=stopping.get("MaxRuntimeInSeconds"),
        image=algorithm.get("TrainingImage") or algorithm.get("AlgorithmName") or "",
        hyperparameters={k: str(v) for k, v in (d.get("HyperParameters") or {}).items()},
        final_metrics={m["MetricName"]: float(m["Value"]) for m in d.get("FinalMetricDataList", []) if "Value" in m},
        arn=d.get("TrainingJobArn", ""),
        create_fields=create_fields(d, takes),
        environment_variables=environment_variables(d),
    )


def _transform_job(d: dict[str, Any], region: str, takes: frozenset[str] = frozenset()) -> TransformJob:
    resources = d.get("TransformResources", {})
    return TransformJob(
        account_id=account_of(d.get("TransformJobArn", "")),
        region=region,
        name=d["TransformJobName"],
        status=d.get("TransformJobStatus", "Unknown"),
        instance_type=resources.get("InstanceType", ""),
        instance_count=int(resources.get("InstanceCount", 1)),
        model_name=d.get("ModelName", ""),
        created_at=d["CreationTime"],
        started_at=d.get("TransformStartTime"),
        ended_at=d.get("TransformEndTime"),
        arn=d.get("TransformJobArn", ""),
        create_fields=create_fields(d, takes),
        environment_variables=environment_variables(d),
    )


def read_tags(sagemaker: BaseClient, region: str,
              names: dict[str, str]) -> tuple[dict[str, dict[str, str]], list[AuditError]]:
    """ListTags for each resource in `names` (ARN -> name): {ARN: tags}. A resource whose tags
    cannot be read is missing from the answer, with an error naming it; once access is denied no
    further call is made, and one error says so."""
    tags: dict[str, dict[str, str]] = {}
    errors: list[AuditError] = []
    for arn, name in names.items():
        try:
            answer = sagemaker.list_tags(ResourceArn=arn, MaxResults=100)
        except botocore.exceptions.ClientError as exc:
            message = describe_client_error(exc, "sagemaker", "ListTags", region)
            if is_fatal_for_region(exc):
                errors.append(AuditError(region, None, "discover", f"{message}: the jobs' findings go to the "
                                                                   "default recipients and channels"))
                break
            errors.append(AuditError(region, name, "discover", message))
            continue
        tags[arn] = {t["Key"]: t.get("Value", "") for t in answer.get("Tags", [])}
    return tags, errors
