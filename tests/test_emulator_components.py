"""Inference components, component-style endpoint configs, the models' network settings and
step-scaling policies in the emulator, through boto3 over HTTP, refusals included
(auditor_emulator.components, auditor_emulator.hosting, auditor_emulator.writes)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import boto3
import botocore.exceptions
import pytest

from auditor_emulator.server import Emulator

ROLE = "arn:aws:iam::123456789012:role/sagemaker-execution"
ARN = "arn:aws:sagemaker:us-east-1:123456789012"
KMS = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
VPC = {"SecurityGroupIds": ["sg-0a1b2c3d"], "Subnets": ["subnet-0a1b2c3d", "subnet-4e5f6a7b"]}
MANAGED = {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 4,
           "ScaleInPolicy": {"Strategy": "CONSOLIDATION", "MaximumStepSize": 2, "CooldownInMinutes": 15}}
ROUTING = {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}
SHARED_VARIANT = {"VariantName": "AllTraffic", "InstanceType": "ml.m5.large", "InitialInstanceCount": 2,
                  "ManagedInstanceScaling": MANAGED, "RoutingConfig": ROUTING}
COPY_DIMENSION = "sagemaker:inference-component:DesiredCopyCount"


def client(service: str) -> Any:
    return boto3.client(service, region_name="us-east-1")


@pytest.fixture
def sagemaker(aws: Emulator) -> Iterator[Any]:
    """A shared endpoint (2 x ml.m5.large, managed scaling up to 4) and two models, one in a VPC."""
    sm = client("sagemaker")
    sm.create_model(ModelName="reco-a", PrimaryContainer={"Image": "img"}, ExecutionRoleArn=ROLE)
    sm.create_model(ModelName="reco-b", PrimaryContainer={"Image": "img"}, ExecutionRoleArn=ROLE,
                    VpcConfig=VPC, EnableNetworkIsolation=True)
    sm.create_endpoint_config(EndpointConfigName="shared-config", ProductionVariants=[SHARED_VARIANT],
                              ExecutionRoleArn=ROLE, KmsKeyId=KMS)
    sm.create_endpoint(EndpointName="shared", EndpointConfigName="shared-config")
    yield sm
    Emulator.deployments(seconds=2.0)


def component(sm: Any, name: str, model: str = "reco-a", copies: int = 1, cores: float = 0.5,
              memory_mb: int = 1024, **overrides: Any) -> str:
    request: dict[str, Any] = {
        "InferenceComponentName": name, "EndpointName": "shared", "VariantName": "AllTraffic",
        "Specification": {"ModelName": model, "ComputeResourceRequirements": {
            "NumberOfCpuCoresRequired": cores, "MinMemoryRequiredInMb": memory_mb}},
        "RuntimeConfig": {"CopyCount": copies}, **overrides}
    return str(sm.create_inference_component(**request)["InferenceComponentArn"])


def error_of(call: Any, **kwargs: Any) -> dict[str, Any]:
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        call(**kwargs)
    return dict(caught.value.response["Error"])


def described(sm: Any, name: str) -> dict[str, Any]:
    answer = dict(sm.describe_inference_component(InferenceComponentName=name))
    answer.pop("ResponseMetadata")
    return answer


def settled(sm: Any, name: str) -> dict[str, Any]:
    for _ in range(100):
        answer = described(sm, name)
        if answer["InferenceComponentStatus"] not in ("Creating", "Updating"):
            return answer
        time.sleep(0.05)
    raise AssertionError(f"{name} still {answer['InferenceComponentStatus']}")


# -- component-style configs, endpoints and models ------------------------------------------------

def test_a_component_style_config_round_trips_and_its_endpoint_shows_the_scaling(sagemaker: Any) -> None:
    config = sagemaker.describe_endpoint_config(EndpointConfigName="shared-config")
    assert config["ProductionVariants"] == [SHARED_VARIANT]
    assert (config["KmsKeyId"], config["ExecutionRoleArn"]) == (KMS, ROLE)
    running = sagemaker.describe_endpoint(EndpointName="shared")["ProductionVariants"][0]
    assert (running["ManagedInstanceScaling"], running["RoutingConfig"]) == (MANAGED, ROUTING)
    assert (running["CurrentInstanceCount"], running["DesiredInstanceCount"]) == (2, 2)
    searched = sagemaker.search(Resource="Endpoint")["Results"][0]["Endpoint"]["ProductionVariants"][0]
    assert searched["ManagedInstanceScaling"] == MANAGED


def test_config_level_network_settings_are_kept(sagemaker: Any) -> None:
    sagemaker.create_endpoint_config(EndpointConfigName="isolated", ProductionVariants=[SHARED_VARIANT],
                                     ExecutionRoleArn=ROLE, VpcConfig=VPC, EnableNetworkIsolation=True)
    config = sagemaker.describe_endpoint_config(EndpointConfigName="isolated")
    assert (config["VpcConfig"], config["EnableNetworkIsolation"]) == (VPC, True)
    assert "VpcConfig" not in sagemaker.describe_endpoint_config(EndpointConfigName="shared-config")


def test_a_variant_without_a_model_needs_instances(sagemaker: Any) -> None:
    error = error_of(sagemaker.create_endpoint_config, EndpointConfigName="serverless-components",
                     ProductionVariants=[{"VariantName": "AllTraffic",
                                          "ServerlessConfig": {"MemorySizeInMB": 2048, "MaxConcurrency": 5}}])
    assert error["Code"] == "ValidationException"
    assert "names no model" in error["Message"]
    error = error_of(sagemaker.create_endpoint_config, EndpointConfigName="missing-model", ProductionVariants=[
        {"VariantName": "AllTraffic", "ModelName": "nope", "InstanceType": "ml.m5.large", "InitialInstanceCount": 1}])
    assert error["Message"] == f"Could not find model '{ARN}:model/nope'."
    names = [c["EndpointConfigName"] for c in sagemaker.list_endpoint_configs()["EndpointConfigs"]]
    assert names == ["shared-config"]


def test_models_keep_their_vpc_and_network_isolation(sagemaker: Any) -> None:
    in_vpc = sagemaker.describe_model(ModelName="reco-b")
    assert (in_vpc["VpcConfig"], in_vpc["EnableNetworkIsolation"]) == (VPC, True)
    plain = sagemaker.describe_model(ModelName="reco-a")
    assert "VpcConfig" not in plain
    assert plain["EnableNetworkIsolation"] is False


def test_an_endpoint_updates_onto_a_component_style_config(sagemaker: Any) -> None:
    Emulator.deployments(seconds=0.2)
    sagemaker.create_endpoint_config(EndpointConfigName="single", ProductionVariants=[
        {"VariantName": "AllTraffic", "ModelName": "reco-a", "InstanceType": "ml.m5.large", "InitialInstanceCount": 2}])
    sagemaker.create_endpoint(EndpointName="reco", EndpointConfigName="single")
    assert "ManagedInstanceScaling" not in sagemaker.describe_endpoint(EndpointName="reco")["ProductionVariants"][0]
    sagemaker.update_endpoint(EndpointName="reco", EndpointConfigName="shared-config")
    updating = sagemaker.describe_endpoint(EndpointName="reco")
    assert updating["EndpointStatus"] == "Updating"
    pending = updating["PendingDeploymentSummary"]["ProductionVariants"][0]
    assert (pending["ManagedInstanceScaling"], pending["RoutingConfig"]) == (MANAGED, ROUTING)
    for _ in range(60):
        now = sagemaker.describe_endpoint(EndpointName="reco")
        if now["EndpointStatus"] == "InService":
            break
        time.sleep(0.05)
    assert now["EndpointConfigName"] == "shared-config"
    assert now["ProductionVariants"][0]["ManagedInstanceScaling"] == MANAGED


# -- inference components -------------------------------------------------------------------------

def test_a_component_is_created_described_listed_and_tagged(sagemaker: Any) -> None:
    arn = component(sagemaker, "reco-a", copies=2, Tags=[{"Key": "auditor:plan", "Value": "p-1"}])
    assert arn == f"{ARN}:inference-component/reco-a"
    answer = settled(sagemaker, "reco-a")
    assert answer["InferenceComponentStatus"] == "InService"
    assert answer["Specification"] == {"ModelName": "reco-a", "ComputeResourceRequirements": {
        "NumberOfCpuCoresRequired": 0.5, "MinMemoryRequiredInMb": 1024}}
    assert answer["RuntimeConfig"] == {"DesiredCopyCount": 2, "CurrentCopyCount": 2}
    assert (answer["EndpointName"], answer["EndpointArn"], answer["VariantName"]) == (
        "shared", f"{ARN}:endpoint/shared", "AllTraffic")
    assert "FailureReason" not in answer and answer["CreationTime"] <= answer["LastModifiedTime"]
    assert sagemaker.list_tags(ResourceArn=arn)["Tags"] == [{"Key": "auditor:plan", "Value": "p-1"}]
    listed = sagemaker.list_inference_components(EndpointNameEquals="shared")["InferenceComponents"]
    assert [(c["InferenceComponentName"], c["InferenceComponentStatus"], c["VariantName"]) for c in listed] == [
        ("reco-a", "InService", "AllTraffic")]


def test_create_refuses_what_sagemaker_refuses_and_creates_nothing(sagemaker: Any) -> None:
    sagemaker.create_endpoint_config(EndpointConfigName="single", ProductionVariants=[
        {"VariantName": "AllTraffic", "ModelName": "reco-a", "InstanceType": "ml.m5.large", "InitialInstanceCount": 1}])
    sagemaker.create_endpoint(EndpointName="single-model", EndpointConfigName="single")
    component(sagemaker, "taken")
    spec = {"ModelName": "reco-a", "ComputeResourceRequirements": {"MinMemoryRequiredInMb": 1024}}
    refusals = {
        "taken": ({"InferenceComponentName": "taken"},
                  f'Cannot create already existing inference component "{ARN}:inference-component/taken".'),
        "no-endpoint": ({"EndpointName": "nope"}, f'Could not find endpoint "{ARN}:endpoint/nope".'),
        "no-variant": ({"VariantName": "Blue"},
                       f'The variant name "Blue" is not present within endpoint "{ARN}:endpoint/shared".'),
        "model-variant": ({"EndpointName": "single-model"}, 'it hosts model "reco-a"'),
        "no-model": ({"Specification": {**spec, "ModelName": "nope"}}, f'Could not find model "{ARN}:model/nope".'),
        "no-compute": ({"Specification": {"ModelName": "reco-a"}},
                       "Specification.ComputeResourceRequirements is required."),
        "no-runtime": ({"RuntimeConfig": None}, "RuntimeConfig is required."),
    }
    for name, (changes, message) in refusals.items():
        request: dict[str, Any] = {"InferenceComponentName": name, "EndpointName": "shared",
                                   "VariantName": "AllTraffic", "Specification": spec,
                                   "RuntimeConfig": {"CopyCount": 1}, **changes}
        error = error_of(sagemaker.create_inference_component,
                         **{k: v for k, v in request.items() if v is not None})
        assert error["Code"] == "ValidationException", name
        assert message in error["Message"], (name, error["Message"])
    listed = sagemaker.list_inference_components()["InferenceComponents"]
    assert [c["InferenceComponentName"] for c in listed] == ["taken"]


def test_an_endpoint_that_is_not_in_service_takes_no_component(sagemaker: Any) -> None:
    Emulator.deployments(seconds=5)
    sagemaker.update_endpoint(EndpointName="shared", EndpointConfigName="shared-config")
    error = error_of(component, sm=sagemaker, name="early")
    assert error["Message"] == (f'Endpoint "{ARN}:endpoint/shared" is Updating: inference components can be '
                                "created only on an endpoint that is InService.")


def test_a_component_stays_creating_or_fails_as_a_test_says(sagemaker: Any) -> None:
    Emulator.inference_components(seconds=0.2, hold={"slow"}, fail={"broken": "The container failed to start."})
    component(sagemaker, "slow", copies=2)
    component(sagemaker, "broken")
    creating = described(sagemaker, "slow")
    assert creating["InferenceComponentStatus"] == "Creating"
    assert creating["RuntimeConfig"] == {"DesiredCopyCount": 2, "CurrentCopyCount": 0}
    failed = settled(sagemaker, "broken")
    assert (failed["InferenceComponentStatus"], failed["FailureReason"]) == ("Failed", "The container failed to start.")
    assert failed["RuntimeConfig"]["CurrentCopyCount"] == 0
    time.sleep(0.3)
    assert described(sagemaker, "slow")["InferenceComponentStatus"] == "Creating"
    assert [c["InferenceComponentName"] for c in sagemaker.list_inference_components(
        StatusEquals="Failed")["InferenceComponents"]] == ["broken"]
    Emulator.inference_components(hold=())
    assert described(sagemaker, "slow")["InferenceComponentStatus"] == "InService"


def test_copies_that_do_not_fit_the_instances_fail_the_component(sagemaker: Any) -> None:
    # 4 x ml.m5.large at most (managed scaling): 2 vCPUs, 8 GiB each.
    component(sagemaker, "fits", copies=4, cores=1, memory_mb=4096)  # half of each instance
    component(sagemaker, "fills", copies=4, cores=1, memory_mb=4096)  # the other half
    component(sagemaker, "too-many", copies=1, cores=0.5, memory_mb=512)
    component(sagemaker, "too-big", copies=1, cores=4, memory_mb=1024)
    assert settled(sagemaker, "fills")["InferenceComponentStatus"] == "InService"
    for name in ("too-many", "too-big"):
        answer = settled(sagemaker, name)
        assert answer["InferenceComponentStatus"] == "Failed"
        assert answer["FailureReason"].startswith(f"Insufficient capacity to place 1 copies of inference component "
                                                  f"{name}")
        assert "on 4 x ml.m5.large of variant AllTraffic" in answer["FailureReason"]


def test_copy_count_updates_go_updating_then_in_service(sagemaker: Any) -> None:
    component(sagemaker, "reco-a", copies=1)
    settled(sagemaker, "reco-a")
    Emulator.inference_components(seconds=0.2)
    arn = sagemaker.update_inference_component_runtime_config(
        InferenceComponentName="reco-a", DesiredRuntimeConfig={"CopyCount": 0})["InferenceComponentArn"]
    assert arn == f"{ARN}:inference-component/reco-a"
    updating = described(sagemaker, "reco-a")
    assert updating["InferenceComponentStatus"] == "Updating"
    assert updating["RuntimeConfig"] == {"DesiredCopyCount": 0, "CurrentCopyCount": 1}
    error = error_of(sagemaker.update_inference_component_runtime_config, InferenceComponentName="reco-a",
                     DesiredRuntimeConfig={"CopyCount": 3})
    assert error["Message"] == f'Cannot update inference component "{arn}" while it is Updating.'
    assert settled(sagemaker, "reco-a")["RuntimeConfig"] == {"DesiredCopyCount": 0, "CurrentCopyCount": 0}
    error = error_of(sagemaker.update_inference_component_runtime_config, InferenceComponentName="nope",
                     DesiredRuntimeConfig={"CopyCount": 1})
    assert error["Message"] == 'Could not find inference component "nope".'


def test_a_deleted_component_is_deleting_then_gone(sagemaker: Any) -> None:
    component(sagemaker, "reco-a")
    Emulator.inference_components(seconds=0.2)
    sagemaker.delete_inference_component(InferenceComponentName="reco-a")
    assert described(sagemaker, "reco-a")["InferenceComponentStatus"] == "Deleting"
    time.sleep(0.25)
    error = error_of(sagemaker.describe_inference_component, InferenceComponentName="reco-a")
    assert (error["Code"], error["Message"]) == ("ValidationException", 'Could not find inference component "reco-a".')
    assert sagemaker.list_inference_components()["InferenceComponents"] == []
    error = error_of(sagemaker.delete_inference_component, InferenceComponentName="reco-a")
    assert error["Message"] == 'Could not find inference component "reco-a".'
    component(sagemaker, "reco-a")  # the name is free again


def test_components_are_filtered_sorted_and_paged(sagemaker: Any) -> None:
    sagemaker.create_endpoint_config(EndpointConfigName="other-config", ProductionVariants=[
        {**SHARED_VARIANT, "VariantName": "Blue"}])
    sagemaker.create_endpoint(EndpointName="other", EndpointConfigName="other-config")
    Emulator.inference_components(fail={"c-failed": "no"})
    for name in ("c-1", "c-2", "c-failed"):
        component(sagemaker, name)
        time.sleep(0.01)
    component(sagemaker, "d-other", EndpointName="other", VariantName="Blue")

    def names(**filters: Any) -> list[str]:
        pages = sagemaker.get_paginator("list_inference_components").paginate(**filters)
        return [c["InferenceComponentName"] for page in pages for c in page["InferenceComponents"]]

    assert names() == ["d-other", "c-failed", "c-2", "c-1"]  # newest first
    assert names(SortBy="Name", SortOrder="Ascending") == ["c-1", "c-2", "c-failed", "d-other"]
    assert names(EndpointNameEquals="shared", StatusEquals="InService") == ["c-2", "c-1"]
    assert names(VariantNameEquals="Blue") == ["d-other"]
    assert names(NameContains="fail") == ["c-failed"]
    assert names(PaginationConfig={"PageSize": 1}) == names()
    first = sagemaker.list_inference_components(MaxResults=3)
    assert len(first["InferenceComponents"]) == 3 and first["NextToken"]


# -- Application Auto Scaling on components: step scaling and its alarms ----------------------------

def test_a_step_policy_on_a_components_copies_lists_the_alarm_that_triggers_it(sagemaker: Any) -> None:
    component(sagemaker, "reco-a")
    scaling, cloudwatch = client("application-autoscaling"), client("cloudwatch")
    target = {"ServiceNamespace": "sagemaker", "ResourceId": "inference-component/reco-a",
              "ScalableDimension": COPY_DIMENSION}
    scaling.register_scalable_target(**target, MinCapacity=0, MaxCapacity=4)
    step = {"AdjustmentType": "ChangeInCapacity", "MetricAggregationType": "Maximum", "Cooldown": 60,
            "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}
    put = scaling.put_scaling_policy(PolicyName="scale-from-zero", PolicyType="StepScaling",
                                     StepScalingPolicyConfiguration=step, **target)
    arn = put["PolicyARN"]
    assert arn.startswith("arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:")
    assert arn.endswith(":resource/sagemaker/inference-component/reco-a:policyName/scale-from-zero")
    cloudwatch.put_metric_alarm(
        AlarmName="reco-a-no-capacity", AlarmActions=[arn], Namespace="AWS/SageMaker",
        MetricName="NoCapacityInvocationFailures", Dimensions=[{"Name": "InferenceComponentName", "Value": "reco-a"}],
        Statistic="Maximum", Period=60, EvaluationPeriods=1, Threshold=1.0,
        ComparisonOperator="GreaterThanOrEqualToThreshold")
    cloudwatch.put_metric_alarm(  # an alarm that does not name the policy is not its
        AlarmName="unrelated", Namespace="AWS/SageMaker", MetricName="Invocations", Statistic="Sum", Period=60,
        EvaluationPeriods=1, Threshold=1.0, ComparisonOperator="GreaterThanOrEqualToThreshold")
    policy = scaling.describe_scaling_policies(ServiceNamespace="sagemaker",
                                               ResourceId="inference-component/reco-a")["ScalingPolicies"][0]
    assert (policy["PolicyARN"], policy["PolicyType"], policy["StepScalingPolicyConfiguration"]) == (
        arn, "StepScaling", step)
    assert policy["Alarms"] == [{"AlarmName": "reco-a-no-capacity",
                                 "AlarmARN": "arn:aws:cloudwatch:us-east-1:123456789012:alarm:reco-a-no-capacity"}]
    again = scaling.put_scaling_policy(PolicyName="scale-from-zero", PolicyType="StepScaling",
                                       StepScalingPolicyConfiguration={**step, "Cooldown": 120}, **target)
    assert again["PolicyARN"] == arn  # updated in place: the alarm still triggers it
    assert [a["AlarmName"] for a in again["Alarms"]] == ["reco-a-no-capacity"]
    assert scaling.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"][0]["MinCapacity"] == 0


def test_a_target_tracking_policy_on_copies_and_the_refusals_without_a_target(sagemaker: Any) -> None:
    scaling = client("application-autoscaling")
    target = {"ServiceNamespace": "sagemaker", "ResourceId": "inference-component/reco-a",
              "ScalableDimension": COPY_DIMENSION}
    tracking = {"TargetValue": 5.0, "PredefinedMetricSpecification": {
        "PredefinedMetricType": "SageMakerInferenceComponentInvocationsPerCopy"}}
    error = error_of(scaling.put_scaling_policy, PolicyName="per-copy", PolicyType="TargetTrackingScaling",
                     TargetTrackingScalingPolicyConfiguration=tracking, **target)
    assert error["Code"] == "ObjectNotFoundException"
    scaling.register_scalable_target(**target, MinCapacity=1, MaxCapacity=4)
    scaling.put_scaling_policy(PolicyName="per-copy", PolicyType="TargetTrackingScaling",
                               TargetTrackingScalingPolicyConfiguration=tracking, **target)
    policy = scaling.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"][0]
    assert policy["TargetTrackingScalingPolicyConfiguration"] == tracking
    scaling.deregister_scalable_target(**target)
    assert scaling.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"] == []


def test_a_new_endpoint_can_be_made_to_take_time_or_fail(sagemaker: Any) -> None:
    Emulator.deployments(create_seconds=0.2, fail_instance_types=("ml.c5.large",))
    try:
        sagemaker.create_endpoint(EndpointName="slow", EndpointConfigName="shared-config")
        sagemaker.create_endpoint_config(EndpointConfigName="failing", ProductionVariants=[
            {**SHARED_VARIANT, "InstanceType": "ml.c5.large"}])
        sagemaker.create_endpoint(EndpointName="failing", EndpointConfigName="failing")
        assert sagemaker.describe_endpoint(EndpointName="slow")["EndpointStatus"] == "Creating"
        refused = error_of(component, sm=sagemaker, name="early", EndpointName="slow")["Message"]
        assert refused.startswith(f'Endpoint "{ARN}:endpoint/slow" is Creating: inference components can be created')
        time.sleep(0.25)
        assert sagemaker.describe_endpoint(EndpointName="slow")["EndpointStatus"] == "InService"
        failed = sagemaker.describe_endpoint(EndpointName="failing")
        assert failed["EndpointStatus"] == "Failed"
        assert failed["FailureReason"].startswith("The primary container for production variant AllTraffic did not")
    finally:
        Emulator.deployments(create_seconds=0.0, fail_instance_types=())


def test_access_denied_on_a_component_names_the_component(sagemaker: Any) -> None:
    Emulator.faults.arm("sagemaker", "CreateInferenceComponent", "access_denied")
    error = error_of(component, sm=sagemaker, name="reco-a")
    assert error["Code"] == "AccessDeniedException"
    assert error["Message"] == (
        "User: arn:aws:iam::123456789012:user/testing is not authorized to perform: "
        f"sagemaker:CreateInferenceComponent on resource: {ARN}:inference-component/reco-a because no "
        "identity-based policy allows the sagemaker:CreateInferenceComponent action")
    assert sagemaker.list_inference_components()["InferenceComponents"] == []


def test_iam_is_enforced_on_component_calls(sagemaker: Any, aws: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    iam = client("iam")
    iam.create_user(UserName="reader")
    iam.put_user_policy(UserName="reader", PolicyName="read", PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Resource": "*", "Action": [
            "sagemaker:DescribeInferenceComponent", "sagemaker:ListInferenceComponents"]}]}))
    key = iam.create_access_key(UserName="reader")["AccessKey"]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["AccessKeyId"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"])
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    reader = boto3.session.Session().client("sagemaker", region_name="us-east-1")  # with the reader's keys
    with aws.iam_enforced():
        assert reader.list_inference_components()["InferenceComponents"] == []
        with pytest.raises(botocore.exceptions.ClientError) as caught:
            component(reader, "reco-a")
    # moto's IAM answers a denial 403 in its query protocol (botocore reads the status as the code).
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    assert sagemaker.list_inference_components()["InferenceComponents"] == []


def test_seeded_and_created_components_list_together(sagemaker: Any) -> None:
    from datetime import UTC, datetime, timedelta

    from auditor_emulator.components import add_component

    add_component("123456789012", "us-east-1", "shared", "AllTraffic", "seeded", 1, 0.5, 0.0, 512,
                  datetime.now(UTC) - timedelta(days=30))
    component(sagemaker, "created")
    listed = sagemaker.list_inference_components(SortBy="CreationTime", SortOrder="Ascending")
    assert [c["InferenceComponentName"] for c in listed["InferenceComponents"]] == ["seeded", "created"]
    recent = sagemaker.list_inference_components(CreationTimeAfter=datetime.now(UTC) - timedelta(days=1))
    assert [c["InferenceComponentName"] for c in recent["InferenceComponents"]] == ["created"]
