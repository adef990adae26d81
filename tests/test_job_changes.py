"""A job plan's change is the next run's Create*Job request (valid against botocore's model, only
the advised fields changed from the job's own Describe answer) and its risk (docs/plans.md);
`audit plans show` prints it, `audit apply` refuses it. A job's Environment is never kept nor copied:
a secret planted there reaches no output. End to end on the demo's jobs in the emulator."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

import boto3
import botocore.session
import numpy as np
import pandas as pd
import pytest
from botocore.validate import ParamValidator
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from auditor.act.guards import plan_refusal
from auditor.act.plan import parse_plan
from auditor.catalog import load_catalog
from auditor.cli import app
from auditor.config import ApplyConfig, AuditConfig
from auditor.kinds.jobs.change import OPERATIONS, job_change, spot_limits
from auditor.kinds.jobs.discover import _training_job, _transform_job, create_members, discover_jobs
from auditor.kinds.jobs.discover_processing import discover_processing_jobs, processing_job
from auditor.kinds.jobs.kind import JobsSection
from auditor.kinds.jobs.models import ProcessingCost, TransformCost
from auditor.kinds.jobs.risk import scale_out_risk, spot_risk
from auditor.kinds.registry import plans_for
from auditor.models import ApiCall, Finding, Plan, PlanOption, Recommendation, ResourceRef, RiskLevel, Severity
from auditor.recommend.change import plan_id
from auditor.records import plan_to_dict
from auditor.report.change_text import render_change
from auditor_emulator.fleet import demo_jobs, seed_jobs
from auditor_emulator.workspaces import demo_processing, seed_workspaces
from conftest import seeded_emulator, utc_now

runner = CliRunner()
SESSION = botocore.session.get_session()
MODEL = SESSION.get_service_model("sagemaker")
CLIENT = SESSION.create_client("sagemaker", region_name="us-east-1", aws_access_key_id="testing",
                               aws_secret_access_key="testing")  # its service model only: nothing is sent
ACCOUNT = "123456789012"
MARK = "S3CR3T"  # in every planted secret (tests/test_secrets.py): a leak of any of them shows
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sagemaker-execution"
CREATED = datetime(2026, 11, 20, 9, tzinfo=UTC)

# Describe answers as AWS gives them: the request's fields and the output-only ones around them.
TRAINING = {
    "TrainingJobName": "churn-train-0412", "TrainingJobArn": f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:training-job/"
                                                             "churn-train-0412",
    "TrainingJobStatus": "Completed", "SecondaryStatus": "Completed",
    "ModelArtifacts": {"S3ModelArtifacts": "s3://ml/out/churn-train-0412/output/model.tar.gz"},
    "HyperParameters": {"max_depth": "8", "eta": "0.2"},
    "AlgorithmSpecification": {"TrainingImage": "683313688378.dkr.ecr.us-east-1.amazonaws.com/xgboost:1.7-1",
                               "TrainingInputMode": "File", "EnableSageMakerMetricsTimeSeries": True},
    "RoleArn": ROLE,
    "InputDataConfig": [{"ChannelName": "train", "DataSource": {"S3DataSource": {
        "S3DataType": "S3Prefix", "S3Uri": "s3://ml/train/", "S3DataDistributionType": "FullyReplicated"}},
        "ContentType": "text/csv", "CompressionType": "None", "RecordWrapperType": "None"}],
    "OutputDataConfig": {"S3OutputPath": "s3://ml/out/", "KmsKeyId": "alias/ml"},
    "ResourceConfig": {"InstanceType": "ml.m5.4xlarge", "InstanceCount": 2, "VolumeSizeInGB": 50,
                       "KeepAlivePeriodInSeconds": 600},
    "VpcConfig": {"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0123456789abcdef0"]},
    "StoppingCondition": {"MaxRuntimeInSeconds": 36000},
    "CreationTime": CREATED, "TrainingStartTime": CREATED + timedelta(minutes=3),
    "TrainingEndTime": CREATED + timedelta(hours=5), "LastModifiedTime": CREATED + timedelta(hours=5),
    "SecondaryStatusTransitions": [{"Status": "Completed", "StartTime": CREATED, "StatusMessage": "done"}],
    "FinalMetricDataList": [{"MetricName": "validation:auc", "Value": 0.91, "Timestamp": CREATED}],
    "EnableNetworkIsolation": False, "EnableInterContainerTrafficEncryption": True,
    "EnableManagedSpotTraining": False,
    "CheckpointConfig": {"S3Uri": "s3://ml/checkpoints/churn/", "LocalPath": "/opt/ml/ckpt"},
    "TrainingTimeInSeconds": 17820, "BillableTimeInSeconds": 17820,
    "DebugHookConfig": {"S3OutputPath": "s3://ml/debug/", "CollectionConfigurations": [
        {"CollectionName": "metrics", "CollectionParameters": {"save_interval": "100"}}]},
    "ExperimentConfig": {"ExperimentName": "churn", "TrialName": "churn-trial-7"},
    "Environment": {"OMP_NUM_THREADS": "8"},
    "RetryStrategy": {"MaximumRetryAttempts": 2},
    "ProfilerConfig": {"DisableProfiler": True},
}
PROCESSING = {
    "ProcessingJobName": "feature-build-2026-11-29",
    "ProcessingJobArn": f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:processing-job/feature-build-2026-11-29",
    "ProcessingInputs": [{"InputName": "raw", "AppManaged": False, "S3Input": {
        "S3Uri": "s3://ml/raw/", "LocalPath": "/opt/ml/processing/input", "S3DataType": "S3Prefix",
        "S3InputMode": "File", "S3DataDistributionType": "ShardedByS3Key"}}],
    "ProcessingOutputConfig": {"Outputs": [{"OutputName": "features", "AppManaged": False, "S3Output": {
        "S3Uri": "s3://ml/features/", "LocalPath": "/opt/ml/processing/output", "S3UploadMode": "EndOfJob"}}]},
    "ProcessingResources": {"ClusterConfig": {"InstanceCount": 2, "InstanceType": "ml.m5.2xlarge",
                                              "VolumeSizeInGB": 30, "VolumeKmsKeyId": "alias/ml"}},
    "StoppingCondition": {"MaxRuntimeInSeconds": 86400},
    "AppSpecification": {"ImageUri": "683313688378.dkr.ecr.us-east-1.amazonaws.com/sklearn:1.2-1",
                         "ContainerEntrypoint": ["python3", "/opt/ml/processing/code/build.py"]},
    "Environment": {"STAGE": "prod"},
    "NetworkConfig": {"EnableNetworkIsolation": False},
    "RoleArn": ROLE,
    "ProcessingJobStatus": "Completed", "ExitMessage": "", "CreationTime": CREATED,
    "ProcessingStartTime": CREATED + timedelta(minutes=2), "ProcessingEndTime": CREATED + timedelta(hours=4),
    "LastModifiedTime": CREATED + timedelta(hours=4), "MonitoringScheduleArn": "",
}
TRANSFORM = {
    "TransformJobName": "nightly-scoring-2026-11-29",
    "TransformJobArn": f"arn:aws:sagemaker:us-east-1:{ACCOUNT}:transform-job/nightly-scoring-2026-11-29",
    "TransformJobStatus": "Completed", "ModelName": "scoring-v4", "MaxConcurrentTransforms": 4,
    "ModelClientConfig": {"InvocationsTimeoutInSeconds": 600, "InvocationsMaxRetries": 1},
    "MaxPayloadInMB": 6, "BatchStrategy": "MultiRecord",
    "TransformInput": {"DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://ml/in/"}},
                       "ContentType": "text/csv", "SplitType": "Line", "CompressionType": "None"},
    "TransformOutput": {"S3OutputPath": "s3://ml/scores/", "AssembleWith": "Line"},
    "DataCaptureConfig": {"DestinationS3Uri": "s3://ml/capture/"},
    "TransformResources": {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1},
    "CreationTime": CREATED, "TransformStartTime": CREATED, "TransformEndTime": CREATED + timedelta(hours=3),
    "DataProcessing": {"InputFilter": "$[1:]", "JoinSource": "None"},
    "Environment": {"MODEL_SERVER_TIMEOUT": "600"},
}


def valid(call: ApiCall) -> None:
    shape = MODEL.operation_model(call.operation).input_shape
    report = ParamValidator().validate(call.params, shape)
    assert not report.has_errors(), f"{call.operation}: {report.generate_report()}"


def training(described: dict[str, Any] = TRAINING, **changes: Any) -> Any:
    return replace(_training_job(described, "us-east-1", create_members(CLIENT, "CreateTrainingJob")), **changes)


def processing(described: dict[str, Any] = PROCESSING) -> Any:
    return processing_job(described, "us-east-1", create_members(CLIENT, "CreateProcessingJob"))


def transform(described: dict[str, Any] = TRANSFORM) -> Any:
    return _transform_job(described, "us-east-1", create_members(CLIENT, "CreateTransformJob"))


def job_plan(job: Any, resource_type: str, action: str, instance_type: str, count: int) -> Plan:
    option = PlanOption(("rule",), action, instance_type, count, None, 10.0, 5.0, "advice")
    made = Plan(ResourceRef("jobs", resource_type, job.name, job.account_id, job.region), None, job.instance_type,
                job.instance_count, 15.0, option)
    return replace(made, id=plan_id(made))


def spot_request(job: Any) -> ApiCall:
    change = job_change(job_plan(job, "training-job", "spot", job.instance_type, job.instance_count), job)
    assert change is not None
    return change.calls[0]


def differences(before: Any, after: Any, path: str = "") -> set[str]:
    """The dotted paths at which two request bodies differ."""
    if isinstance(before, dict) and isinstance(after, dict):
        return {d for key in set(before) | set(after)
                for d in differences(before.get(key), after.get(key), f"{path}.{key}" if path else key)}
    return set() if before == after else {path}


def request_fields(described: dict[str, Any], operation: str) -> dict[str, Any]:
    takes = set(MODEL.operation_model(operation).input_shape.members)
    return {k: v for k, v in described.items() if k in takes}


CASES = {
    "spot": (training, TRAINING, "training-job", "spot", "ml.m5.4xlarge", 2,
             {"TrainingJobName", "EnableManagedSpotTraining", "StoppingCondition.MaxWaitTimeInSeconds"}),
    "training resize": (training, TRAINING, "training-job", "resize", "ml.m5.xlarge", 1,
                        {"TrainingJobName", "ResourceConfig.InstanceType", "ResourceConfig.InstanceCount"}),
    "processing resize": (processing, PROCESSING, "processing-job", "resize", "ml.m5.large", 1,
                          {"ProcessingJobName", "ProcessingResources.ClusterConfig.InstanceType",
                           "ProcessingResources.ClusterConfig.InstanceCount"}),
    "processing scale-out": (processing, PROCESSING, "processing-job", "scale-out", "ml.m5.2xlarge", 4,
                             {"ProcessingJobName", "ProcessingResources.ClusterConfig.InstanceCount"}),
    "transform scale-out": (transform, TRANSFORM, "transform-job", "scale-out", "ml.m5.xlarge", 2,
                            {"TransformJobName", "TransformResources.InstanceCount"}),
    "transform resize": (transform, TRANSFORM, "transform-job", "resize", "ml.m5.large", 1,
                         {"TransformJobName", "TransformResources.InstanceType"}),
}


def test_the_operations_table_matches_botocore() -> None:
    for resource_type, request in OPERATIONS.items():
        shape = MODEL.operation_model(request.operation).input_shape
        assert set(shape.required_members) - {request.name_field} == set(request.required), resource_type
        assert request.name_field in shape.required_members
        resources: Any = shape
        for key in request.resources:
            resources = resources.members[key]
        assert {"InstanceType", "InstanceCount"} <= set(resources.members), resource_type


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_next_runs_request_is_valid_and_changes_only_the_advised_fields(case: str) -> None:
    make, described, resource_type, action, instance_type, count, changed = CASES[case]
    job = make()
    plan = job_plan(job, resource_type, action, instance_type, count)
    change = job_change(plan, job)
    assert change is not None and len(change.calls) == 1
    call = change.calls[0]
    valid(call)
    assert (call.service, call.operation) == ("sagemaker", OPERATIONS[resource_type].operation)
    # Output-only fields (ARN, status, times, metrics, artifacts) and Environment (never copied: a
    # secret may be there) are gone; every other field is kept.
    assert differences(request_fields(described, call.operation), call.params) == changed | {"Environment"}
    assert "without its Environment (1 variable: the audit never keeps their values)" in call.purpose
    name = call.params[OPERATIONS[resource_type].name_field]
    assert name == f"{described[OPERATIONS[resource_type].name_field]}-{plan.id}"
    assert "next run's request" in call.purpose and "never starts a job" in call.purpose
    assert change.waits_for is None and change.rollback


def planted(described: dict[str, Any]) -> dict[str, Any]:
    """The Describe answer with tokens in its Environment, as teams put them there."""
    return {**described, "Environment": {**described["Environment"], "HF_TOKEN": f"hf_{MARK}q8Zx",
                                         "DB_PASSWORD": f"pw-{MARK}-7", "API_KEY": f"{MARK}key"}}


DESCRIBE = {"training-job": "describe-training-job --region us-east-1 --training-job-name",
            "processing-job": "describe-processing-job --region us-east-1 --processing-job-name",
            "transform-job": "describe-transform-job --region us-east-1 --transform-job-name"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_environment_secret_is_neither_kept_nor_in_the_request_nor_printed(case: str) -> None:
    make, described, resource_type, action, instance_type, count, _ = CASES[case]
    job = make(planted(described))
    assert MARK not in repr(asdict(job))  # discovery keeps how many variables, never a value
    assert job.environment_variables == 4 and "Environment" not in job.create_fields
    plan = job_plan(job, resource_type, action, instance_type, count)
    change = job_change(plan, job)
    assert change is not None
    (call,) = change.calls
    valid(call)  # a valid request without Environment: no placeholder value in its place
    assert "Environment" not in call.params
    name = described[OPERATIONS[resource_type].name_field]
    assert call.purpose.endswith(f"; without its Environment (4 variables: the audit never keeps their values): "
                                 f"copy them from `aws sagemaker {DESCRIBE[resource_type]} {name} --query "
                                 f"Environment` before starting it")
    stored = plan_to_dict(replace(plan, change=change))
    shown = {as_: render_change(stored, as_) for as_ in ("cli", "json", "cloudformation", "terraform")}
    assert not [as_ for as_, text in shown.items() if MARK in text]
    assert MARK not in json.dumps(stored) and "--query Environment" in shown["cli"]


def test_a_job_without_environment_says_nothing_of_it() -> None:
    job = training({k: v for k, v in TRAINING.items() if k != "Environment"})
    assert job.environment_variables == 0
    assert "Environment" not in spot_request(job).purpose


def test_spot_sets_a_wait_of_at_least_the_runtime_and_keeps_the_checkpoints() -> None:
    job = training()
    call = spot_request(job)
    stopping = call.params["StoppingCondition"]
    assert stopping["MaxRuntimeInSeconds"] == 36000  # the job's own limit, kept
    assert stopping["MaxWaitTimeInSeconds"] == 36000 >= 2 * 17820  # at least the runtime and twice the run
    assert call.params["CheckpointConfig"] == TRAINING["CheckpointConfig"]
    assert "CheckpointConfig kept" in call.purpose and "/opt/ml/ckpt" in call.purpose


def test_spot_without_checkpoints_says_an_interrupted_run_restarts_from_the_beginning() -> None:
    described = {k: v for k, v in TRAINING.items() if k != "CheckpointConfig"}
    described["StoppingCondition"] = {"MaxRuntimeInSeconds": 20000}
    job = training(described)
    change = job_change(job_plan(job, "training-job", "spot", job.instance_type, 2), job)
    assert change is not None
    call = change.calls[0]
    valid(call)
    assert "CheckpointConfig" not in call.params
    assert "restarts from the beginning" in call.purpose
    assert call.params["StoppingCondition"] == {"MaxRuntimeInSeconds": 20000, "MaxWaitTimeInSeconds": 2 * 17820}


@settings(max_examples=200, deadline=None)
@given(runtime=st.one_of(st.none(), st.integers(1, 28 * 86400)), run=st.one_of(st.none(), st.integers(0, 28 * 86400)),
       wait=st.one_of(st.none(), st.integers(1, 60 * 86400)))
def test_the_spot_wait_is_never_under_the_runtime_nor_twice_the_run(runtime: int | None, run: int | None,
                                                                  wait: int | None) -> None:
    stopping = {k: v for k, v in (("MaxRuntimeInSeconds", runtime), ("MaxWaitTimeInSeconds", wait)) if v}
    job = training({**TRAINING, "StoppingCondition": stopping, "TrainingTimeInSeconds": run},
                   training_seconds=run)
    limit, chosen = spot_limits(job)
    assert limit == (runtime or 86400)  # AWS's default runtime limit is a day
    assert chosen >= limit and chosen >= 2 * (run or 0) and chosen >= (wait or 0)
    call = spot_request(job)
    valid(call)
    assert call.params["StoppingCondition"]["MaxWaitTimeInSeconds"] == chosen


def test_a_long_job_name_is_cut_to_the_apis_limit() -> None:
    name = "a" * 60 + "-x"
    job = training({**TRAINING, "TrainingJobName": name})
    call = spot_request(job)
    assert re.fullmatch(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", call.params["TrainingJobName"])
    valid(call)


def test_the_jobs_tags_are_copied_when_the_audit_read_them() -> None:
    job = training(tags={"team": "churn", "aws:cloudformation:stack-name": "ml"})
    call = spot_request(job)
    assert call.params["Tags"] == [{"Key": "team", "Value": "churn"}]  # aws: keys are AWS's own, never set
    valid(call)


def test_no_request_without_what_it_needs() -> None:
    no_role = training({k: v for k, v in TRAINING.items() if k != "RoleArn"})
    assert job_change(job_plan(no_role, "training-job", "spot", "ml.m5.4xlarge", 2), no_role) is None
    groups = {**TRAINING, "ResourceConfig": {"InstanceGroups": [
        {"InstanceType": "ml.m5.4xlarge", "InstanceCount": 2, "InstanceGroupName": "a"}], "VolumeSizeInGB": 50}}
    grouped = training(groups)
    assert job_change(job_plan(grouped, "training-job", "resize", "ml.m5.xlarge", 1), grouped) is None
    bare = replace(training(), create_fields={})  # a job kept by a version that did not keep its answer
    assert job_change(job_plan(bare, "training-job", "spot", "ml.m5.4xlarge", 2), bare) is None


# --- risk ------------------------------------------------------------------------------------


def test_spot_risk_by_checkpoints_and_the_runs_length() -> None:
    assert spot_risk(training()).level is RiskLevel.LOW  # it checkpoints
    unchecked = {k: v for k, v in TRAINING.items() if k != "CheckpointConfig"}
    short = training(unchecked, checkpoint_s3_uri=None)
    assert short.training_seconds == 17820 and 2 * 17820 <= 36000
    assert spot_risk(short).level is RiskLevel.LOW  # a restart from scratch still fits
    long = training({**unchecked, "StoppingCondition": {"MaxRuntimeInSeconds": 20000}}, checkpoint_s3_uri=None)
    risk = spot_risk(long)
    assert risk.level is RiskLevel.MEDIUM and "restarts it from the beginning" in risk.basis[0]
    unknown = training(unchecked, checkpoint_s3_uri=None, training_seconds=None)
    assert spot_risk(unknown).level is RiskLevel.MEDIUM


def test_scale_out_risk_by_how_the_input_is_split() -> None:
    sharded = ProcessingCost(processing(), 0.46, 10.0)
    assert scale_out_risk(sharded).level is RiskLevel.LOW
    (raw,) = PROCESSING["ProcessingInputs"]
    inputs = [{**raw, "S3Input": {**raw["S3Input"], "S3DataDistributionType": "FullyReplicated"}}]
    replicated = scale_out_risk(ProcessingCost(processing({**PROCESSING, "ProcessingInputs": inputs}), 0.46, 10.0))
    assert replicated.level is RiskLevel.HIGH and "raw is FullyReplicated" in replicated.basis[0]
    none = {k: v for k, v in PROCESSING.items() if k != "ProcessingInputs"}
    assert scale_out_risk(ProcessingCost(processing(none), 0.46, 10.0)).level is RiskLevel.MEDIUM
    batch = scale_out_risk(TransformCost(transform(), 0.23, 1.0))
    assert batch.level is RiskLevel.MEDIUM and "S3 objects" in batch.basis[0]


def series(cpu_percent: float, memory_percent: float, minutes: int = 240) -> pd.DataFrame:
    index = pd.date_range(CREATED, periods=minutes, freq="1min")
    wave = np.linspace(0.5, 1.0, minutes)
    return pd.DataFrame({"cpu:Maximum": cpu_percent * wave, "memory:Maximum": memory_percent * wave}, index=index)


def resize_finding(job: Any, resource_type: str, instance_type: str, count: int) -> Finding:
    return Finding("processing-underutilized", Severity.LOW,
                   ResourceRef("jobs", resource_type, job.name, job.account_id, job.region), None, "under",
                   {}, Recommendation("resize", instance_type, count, 100.0, 40.0))


def test_a_resize_is_replayed_on_the_jobs_own_series() -> None:
    catalog, config = load_catalog(), AuditConfig()
    job = processing()  # 2 x ml.m5.2xlarge (8 vCPU, 32 GiB)
    quiet = ProcessingCost(job, 0.46, 10.0, series=series(cpu_percent=20.0, memory_percent=10.0))
    (plan,) = plans_for([resize_finding(job, "processing-job", "ml.m5.xlarge", 2)],
                        {"jobs": JobsSection(processing=(quiet,))}, catalog, config)
    assert plan.risk is not None and plan.risk.level is RiskLevel.LOW
    cpu = next(r for r in plan.risk.replays if r.resource.value == "cpu")
    assert cpu.peak == pytest.approx(40.0)  # 20% of 8 vCPUs is 40% of 4
    assert plan.change is not None and plan.change.calls[0].operation == "CreateProcessingJob"
    assert (plan.current_instance_type, plan.current_instance_count) == ("ml.m5.2xlarge", 2)
    # The same advice on a busy run would have gone over 100%: never proposed.
    busy = replace(quiet, series=series(cpu_percent=60.0, memory_percent=10.0))
    assert plans_for([resize_finding(job, "processing-job", "ml.m5.xlarge", 2)],
                     {"jobs": JobsSection(processing=(busy,))}, catalog, config) == ()


def test_a_resize_without_a_series_is_medium_and_says_why() -> None:
    job = processing()
    section = JobsSection(processing=(ProcessingCost(job, 0.46, 10.0),))
    (plan,) = plans_for([resize_finding(job, "processing-job", "ml.m5.xlarge", 2)], {"jobs": section},
                        load_catalog(), AuditConfig())
    assert plan.risk is not None and plan.risk.level is RiskLevel.MEDIUM and not plan.risk.replays
    assert "no per-minute utilisation" in plan.risk.basis[0]


# --- text and apply --------------------------------------------------------------------------


def test_plans_show_prints_the_request_and_no_invented_resource() -> None:
    job = training()
    plan = job_plan(job, "training-job", "spot", job.instance_type, 2)
    stored = plan_to_dict(replace(plan, change=job_change(plan, job), risk=spot_risk(job)))
    cli = render_change(stored, "cli")
    assert "aws sagemaker create-training-job --region us-east-1 --cli-input-json" in cli
    assert "# risk rests on: it keeps checkpoints" in cli
    as_json = json.loads(render_change(stored, "json"))
    assert as_json["change"]["calls"][0]["params"]["EnableManagedSpotTraining"] is True
    for as_, tool in (("cloudformation", "CloudFormation"), ("terraform", "Terraform")):
        text = render_change(stored, as_)
        assert text.count("\n") == 1 and text.startswith(f"# plan {plan.id}: {tool} has no resource")
        assert "CreateTrainingJob" in text and "Resources" not in text and "resource \"" not in text


def test_apply_refuses_a_job_plan_in_one_line() -> None:
    job = training()
    plan = job_plan(job, "training-job", "spot", job.instance_type, 2)
    stored = plan_to_dict(replace(plan, change=job_change(plan, job), risk=spot_risk(job)))
    refusal = plan_refusal(parse_plan(stored), ApplyConfig())
    assert refusal == (f"plan {plan.id} (churn-train-0412): its change is the next run's request "
                       f"(audit plans show {plan.id} --as cli); apply never starts a job")


# --- end to end: the demo's jobs -------------------------------------------------------------


@pytest.fixture(scope="module")
def home(emulator, tmp_path_factory) -> Iterator[Path]:
    training_specs, transform_specs = demo_jobs()

    def seed(emu: Any) -> None:
        now = utc_now()
        seed_jobs(emu, training_specs, transform_specs, now=now)
        seed_workspaces(emu, [], demo_processing(), now=now)
        # A token in every job's Environment (the emulator keeps only a transform job's from the
        # request; the others' are set on its state, which DescribeTrainingJob and
        # DescribeProcessingJob then answer with).
        backend = emu.backend("sagemaker", "us-east-1")
        for jobs in (backend.training_jobs, backend.processing_jobs, backend.transform_jobs):
            for name, job in jobs.items():
                job.environment = {"STAGE": "prod", "HF_TOKEN": f"hf_{MARK}_{name}"}

    with seeded_emulator(emulator, tmp_path_factory.mktemp("job-changes"), seed) as path:
        (path / "auditor.toml").write_text(f"[history]\npath = {json.dumps(str(path / 'history.sqlite3'))}\n")
        yield path


@pytest.fixture(scope="module")
def report(home: Path) -> dict:
    out = home / "report.json"
    result = runner.invoke(app, ["run", "--config", str(home / "auditor.toml"), "--format", "json",
                                 "--output", str(out), "--email-to-file", str(home / "report.eml")])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def test_discovery_keeps_only_what_the_create_call_takes(home: Path) -> None:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    since = utc_now() - timedelta(days=30)
    found = discover_jobs(sagemaker, "us-east-1", since)
    processed = discover_processing_jobs(sagemaker, "us-east-1", since)
    for jobs, operation in ((found.training, "CreateTrainingJob"), (found.transform, "CreateTransformJob"),
                            (processed.jobs, "CreateProcessingJob")):
        takes = set(MODEL.operation_model(operation).input_shape.members)
        assert jobs
        for job in jobs:
            assert job.create_fields and set(job.create_fields) <= takes, job.name


def test_every_demo_job_plan_has_its_change_and_risk(report: dict, home: Path) -> None:
    plans = [p for p in report["plans"] if p["resource"]["type"] in OPERATIONS]
    assert {p["proposed"]["action"] for p in plans} == {"spot", "resize", "scale-out"}
    assert {p["resource"]["type"] for p in plans} == set(OPERATIONS)
    for p in plans:
        assert p["risk"] and p["risk"]["level"] in ("low", "medium", "high"), p["resource"]["name"]
        assert p["risk"]["replays"] or p["risk"]["basis"], p["resource"]["name"]
        (call,) = p["change"]["calls"]
        valid(ApiCall(call["service"], call["operation"], call["params"], call["purpose"]))
        assert call["operation"] == OPERATIONS[p["resource"]["type"]].operation
    shown = runner.invoke(app, ["plans", "show", plans[0]["id"], "--as", "terraform", "--config",
                                str(home / "auditor.toml")])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.count("\n") == 1 and "Terraform has no resource for a one-off job run" in shown.stdout
    applied = runner.invoke(app, ["apply", plans[0]["id"], "--config", str(home / "auditor.toml")])
    assert applied.exit_code == 1
    assert [line for line in applied.stderr.splitlines() if line.startswith("error:")] == [
        f"error: plan {plans[0]['id']} ({plans[0]['resource']['name']}): its change is the next run's request "
        f"(audit plans show {plans[0]['id']} --as cli); apply never starts a job"]


def test_a_planted_environment_secret_reaches_no_output(report: dict, home: Path) -> None:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    planted_in = [sagemaker.describe_training_job(TrainingJobName="churn-xgb-tuning-0412"),
                  sagemaker.describe_transform_job(TransformJobName="nightly-scoring-2026-11-29")]
    assert all(MARK in d["Environment"]["HF_TOKEN"] for d in planted_in)  # AWS answers with it
    plans = [p for p in report["plans"] if p["resource"]["type"] in OPERATIONS]
    assert {p["resource"]["type"] for p in plans} == set(OPERATIONS)
    shown = []
    for p in plans:
        for as_ in ("cli", "json"):
            result = runner.invoke(app, ["plans", "show", p["id"], "--as", as_, "--config", str(home / "auditor.toml")])
            assert result.exit_code == 0, result.output
            shown.append(result.output)
    assert not [text for text in shown if MARK in text]
    mail = message_from_bytes((home / "report.eml").read_bytes(), policy=policy.default)
    parts = [part.get_content() for part in mail.walk() if part.get_content_maintype() == "text"]
    assert parts and not [part for part in parts if MARK in part]  # decoded: base64 would hide it
    written = {str(f): f.read_bytes() for f in home.rglob("*") if f.is_file() and f.suffix != ".eml"}
    assert {"report.json", "history.sqlite3"} <= {Path(f).name for f in written}
    assert not [f for f, data in written.items() if MARK.encode() in data]
    # What the next run must copy is said instead.
    for p in plans:
        (call,) = p["change"]["calls"]
        assert "Environment" not in call["params"]
        assert "without its Environment (2 variables: the audit never keeps their values)" in call["purpose"]
    assert "--query Environment" in "".join(shown)
