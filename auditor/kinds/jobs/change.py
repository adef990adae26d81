"""A job plan's change: the request for the job's next run (docs/plans.md). Pure: no AWS.

A training, processing or batch transform job runs once; what a plan can change is its next run.
The change is that run's CreateTrainingJob, CreateProcessingJob or CreateTransformJob request,
built from the job's own Describe answer (the fields the Create call takes, kept by discovery: no
further call per job) with only the advised fields changed, named `<job>-<plan id>`:

- spot: `EnableManagedSpotTraining` true and `StoppingCondition.MaxWaitTimeInSeconds` (at least
  `MaxRuntimeInSeconds`, as AWS requires, and twice the run: room for one interruption and a
  restart); the job's `CheckpointConfig` is kept (it is part of the copy);
- resize and scale-out: the instance type and count in `ResourceConfig` (training),
  `ProcessingResources.ClusterConfig` (processing) or `TransformResources` (transform).

The job's `Environment` is never copied (teams put tokens there, and a secret is never echoed;
discovery does not even keep it): the request goes without it, and its purpose says how many
variables the next run must copy from the job's own definition, and the command that shows them.
An empty or made-up value in their place would be a request passed off as the job's own.

`audit apply` never sends it (it would start a job, and bill it): whoever starts the job (its
pipeline, schedule or script) runs the next one with it, or with the changed fields.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.kinds.jobs.models import ProcessingJob, TrainingJob, TransformJob
from auditor.models import ApiCall, Change, Plan, PlanOption
from auditor.recommend.change import resource_name, settable_tags

Job = TrainingJob | TransformJob | ProcessingJob


@dataclass(frozen=True)
class RunRequest:
    """The Create call of one kind of job (tests/test_job_changes.py holds it to botocore's model)."""

    operation: str
    name_field: str
    resources: tuple[str, ...]  # where the request keeps InstanceType and InstanceCount
    required: tuple[str, ...]  # the fields botocore's model requires besides the name


OPERATIONS = {
    "training-job": RunRequest("CreateTrainingJob", "TrainingJobName", ("ResourceConfig",),
                               ("RoleArn", "OutputDataConfig")),
    "processing-job": RunRequest("CreateProcessingJob", "ProcessingJobName", ("ProcessingResources", "ClusterConfig"),
                                 ("ProcessingResources", "AppSpecification", "RoleArn")),
    "transform-job": RunRequest("CreateTransformJob", "TransformJobName", ("TransformResources",),
                                ("ModelName", "TransformInput", "TransformOutput", "TransformResources")),
}
SHAPE_ACTIONS = ("resize", "scale-out")
# AWS's MaxRuntimeInSeconds when a training job's StoppingCondition does not set it: one day.
DEFAULT_MAX_RUNTIME_SECONDS = 86400
# On Spot, MaxWaitTimeInSeconds (capacity waits and the run together) is at least this many runs:
# one interruption and a restart from the beginning still fit.
SPOT_WAIT_RUNS = 2
# Where SageMaker syncs CheckpointConfig.S3Uri on the instance when LocalPath is not set.
DEFAULT_CHECKPOINT_PATH = "/opt/ml/checkpoints"


def spot_limits(job: TrainingJob) -> tuple[int, int]:
    """(MaxRuntimeInSeconds, MaxWaitTimeInSeconds) of the Spot run: the job's runtime limit (AWS's
    default of a day when unset) and a wait of at least that, at least twice the run, and never
    less than a wait the job already sets."""
    stopping = job.create_fields.get("StoppingCondition") or {}
    runtime = int(stopping.get("MaxRuntimeInSeconds") or job.max_runtime_seconds or DEFAULT_MAX_RUNTIME_SECONDS)
    wait = max(runtime, SPOT_WAIT_RUNS * int(job.training_seconds or 0),
               int(stopping.get("MaxWaitTimeInSeconds") or job.max_wait_seconds or 0))
    return runtime, wait


def job_change(plan: Plan, job: Job | None) -> Change | None:
    """The next run's request; None when the plan is not a job's, its action is not one a request
    expresses, or the Describe answer lacks what the request needs (never an invalid request)."""
    request = OPERATIONS.get(plan.resource.type)
    if request is None or job is None or not job.create_fields:
        return None
    if any(key not in job.create_fields for key in request.required):
        return None
    operation = request.operation
    # A deep copy that the JSON report can hold: a timestamp (none of these fields has one today)
    # would be written as ISO 8601, which botocore takes for a timestamp.
    body: dict[str, Any] = json.loads(json.dumps(job.create_fields, default=_iso))
    name = resource_name(job.name, plan.id)
    body[request.name_field] = name
    option = plan.proposed
    changed: str | None
    if option.action == "spot" and isinstance(job, TrainingJob):
        changed = _to_spot(body, job)
        undo = f"start the run after it without EnableManagedSpotTraining (on demand, as {job.name} ran)"
    elif option.action in SHAPE_ACTIONS:
        changed = _to_shape(body, request.resources, option)
        undo = f"start the run after it on {job.instance_count} x {job.instance_type} again, as {job.name} ran"
    else:
        return None
    if changed is None:
        return None
    tags = settable_tags(job.tags)
    if tags:
        body["Tags"] = tags
    tagged = ("; its tags copied" if tags else
              "; no Tags (the audit reads a job's tags only for owner routing): add the job's own")
    purpose = (f"the next run's request, not sent by `audit apply` (it never starts a job): {job.name}'s own "
               f"{operation} named {name}, with {changed}{tagged}{_without_environment(job, request)}")
    rollback = (f"nothing runs until the next run is started with it; to go back, {undo}")
    return Change(calls=(ApiCall("sagemaker", operation, body, purpose),), rollback=rollback)


def _without_environment(job: Job, request: RunRequest) -> str:
    count = job.environment_variables
    if not count:
        return ""
    describe = _kebab("Describe" + request.operation.removeprefix("Create"))
    variables = "variable" if count == 1 else "variables"
    return (f"; without its Environment ({count} {variables}: the audit never keeps their values): copy them from "
            f"`aws sagemaker {describe} --region {shlex.quote(job.region)} --{_kebab(request.name_field)} "
            f"{shlex.quote(job.name)} --query Environment` before starting it")


def _kebab(name: str) -> str:
    """An API name as the AWS CLI spells it: DescribeTrainingJob -> describe-training-job."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def _to_spot(body: dict[str, Any], job: TrainingJob) -> str:
    runtime, wait = spot_limits(job)
    stopping = body.setdefault("StoppingCondition", {})
    stopping["MaxWaitTimeInSeconds"] = wait
    body["EnableManagedSpotTraining"] = True
    said = (f"EnableManagedSpotTraining true and StoppingCondition.MaxWaitTimeInSeconds {wait} "
            f"(at least MaxRuntimeInSeconds {runtime} and twice the {int(job.training_seconds or 0)} s run)")
    checkpoint = body.get("CheckpointConfig") or {}
    if checkpoint.get("S3Uri"):
        local = checkpoint.get("LocalPath") or DEFAULT_CHECKPOINT_PATH
        return (f"{said}; its CheckpointConfig kept ({checkpoint['S3Uri']}): an interrupted run resumes from its "
                f"last checkpoint when the script saves to and loads from {local}")
    return (f"{said}; it has no CheckpointConfig: an interrupted run restarts from the beginning (add one, and "
            f"a script that saves to and loads from {DEFAULT_CHECKPOINT_PATH}, to resume instead)")


def _to_shape(body: dict[str, Any], path: tuple[str, ...], option: PlanOption) -> str | None:
    """The advised instance type and count where the request keeps them; None when it keeps none
    (a heterogeneous training cluster's InstanceGroups, or no resources described)."""
    resources: Any = body
    for key in path:
        resources = resources.get(key) if isinstance(resources, dict) else None
    if not isinstance(resources, dict) or not resources.get("InstanceType") or not option.instance_type:
        return None
    resources["InstanceType"] = option.instance_type
    resources["InstanceCount"] = option.instance_count
    where = ".".join(path)
    return f"{where} {option.instance_count} x {option.instance_type}"


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")
