"""The emulator's writes as AWS answers them where `audit apply` depends on it, and the faults a test
arms on any call (auditor_emulator.writes, auditor_emulator.faults), through boto3 over HTTP, with
botocore's own retries in play."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import boto3
import botocore.config
import botocore.exceptions
import pytest

from auditor_emulator.server import Emulator

ROLE = "arn:aws:iam::123456789012:role/sagemaker-execution"
ENDPOINT_ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/ep"
TARGET = {"ServiceNamespace": "sagemaker", "ResourceId": "endpoint/ep/variant/AllTraffic",
          "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"}
# botocore's standard retries, quick: a fault taken by the first attempt is retried as against AWS.
RETRIES = botocore.config.Config(retries={"mode": "standard", "total_max_attempts": 3}, read_timeout=5,
                                 connect_timeout=2)
NO_RETRIES = botocore.config.Config(retries={"mode": "standard", "total_max_attempts": 1}, read_timeout=5,
                                    connect_timeout=2)


def client(service: str, config: botocore.config.Config = RETRIES) -> Any:
    return boto3.client(service, region_name="us-east-1", config=config)


@pytest.fixture
def sagemaker(aws: Emulator) -> Iterator[Any]:
    Emulator.deployments(seconds=0.2)
    sm = client("sagemaker")
    sm.create_model(ModelName="m", PrimaryContainer={"Image": "img"}, ExecutionRoleArn=ROLE)
    config(sm, "old", "ml.m5.4xlarge", 4)
    sm.create_endpoint(EndpointName="ep", EndpointConfigName="old")
    Emulator.faults.reset()  # the seeding's calls are not the test's
    yield sm
    Emulator.deployments(seconds=2.0)


def config(sm: Any, name: str, instance_type: str, count: int, variant: str = "AllTraffic") -> None:
    sm.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[
        {"VariantName": variant, "ModelName": "m", "InstanceType": instance_type, "InitialInstanceCount": count}])


def settled(sm: Any) -> dict[str, Any]:
    for _ in range(60):
        described = sm.describe_endpoint(EndpointName="ep")
        if described["EndpointStatus"] == "InService":
            return dict(described)
        time.sleep(0.05)
    raise AssertionError(f"still {described['EndpointStatus']}")


def error_of(call: Any, **kwargs: Any) -> dict[str, Any]:
    with pytest.raises(botocore.exceptions.ClientError) as caught:
        call(**kwargs)
    return {**caught.value.response["Error"], "Status": caught.value.response["ResponseMetadata"]["HTTPStatusCode"]}


# -- writes as AWS answers them -------------------------------------------------------------------

def test_an_endpoint_config_or_endpoint_name_that_exists_is_refused_and_the_first_is_kept(sagemaker: Any) -> None:
    error = error_of(config, sm=sagemaker, name="old", instance_type="ml.m5.xlarge", count=1)
    assert error["Code"] == "ValidationException"
    assert error["Message"] == ('Cannot create already existing endpoint configuration '
                                '"arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/old".')
    kept = sagemaker.describe_endpoint_config(EndpointConfigName="old")["ProductionVariants"][0]
    assert (kept["InstanceType"], kept["InitialInstanceCount"]) == ("ml.m5.4xlarge", 4)
    error = error_of(sagemaker.create_endpoint, EndpointName="ep", EndpointConfigName="old")
    assert error["Message"] == f'Cannot create already existing endpoint "{ENDPOINT_ARN}".'
    sagemaker.delete_endpoint_config(EndpointConfigName="old")
    config(sagemaker, "old", "ml.m5.xlarge", 1)  # a deleted name may be used again


def test_weights_and_capacities_change_a_variant_without_a_new_config(sagemaker: Any) -> None:
    # Long enough that the calls made during it find it Updating on a loaded machine (0.2 s was not).
    Emulator.deployments(seconds=1.5)
    arn = sagemaker.update_endpoint_weights_and_capacities(EndpointName="ep", DesiredWeightsAndCapacities=[
        {"VariantName": "AllTraffic", "DesiredInstanceCount": 8, "DesiredWeight": 2.0}])["EndpointArn"]
    assert arn == ENDPOINT_ARN
    during = sagemaker.describe_endpoint(EndpointName="ep")
    variant = during["ProductionVariants"][0]
    assert during["EndpointStatus"] == "Updating" and "PendingDeploymentSummary" not in during
    assert (variant["CurrentInstanceCount"], variant["DesiredInstanceCount"]) == (4, 8)
    assert (variant["CurrentWeight"], variant["DesiredWeight"]) == (1.0, 2.0)
    for refused in (
        lambda: sagemaker.update_endpoint_weights_and_capacities(EndpointName="ep", DesiredWeightsAndCapacities=[
            {"VariantName": "AllTraffic", "DesiredInstanceCount": 3}]),
        lambda: sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="old"),
    ):
        with pytest.raises(botocore.exceptions.ClientError) as caught:
            refused()
        assert caught.value.response["Error"]["Message"] == f'Cannot update in-progress endpoint "{ENDPOINT_ARN}".'
    after = settled(sagemaker)
    variant = after["ProductionVariants"][0]
    assert after["EndpointConfigName"] == "old"  # the same name: a config-name comparison does not see it
    assert (variant["CurrentInstanceCount"], variant["DesiredInstanceCount"]) == (8, 8)
    assert (variant["CurrentWeight"], variant["DesiredWeight"]) == (2.0, 2.0)
    found = sagemaker.search(Resource="Endpoint")["Results"][0]["Endpoint"]["ProductionVariants"][0]
    assert found["CurrentInstanceCount"] == 8


def test_weights_and_capacities_refuse_unknown_or_repeated_variants_and_change_nothing(sagemaker: Any) -> None:
    error = error_of(sagemaker.update_endpoint_weights_and_capacities, EndpointName="ep",
                     DesiredWeightsAndCapacities=[{"VariantName": "Shadow", "DesiredInstanceCount": 2}])
    assert error["Code"] == "ValidationException"
    assert error["Message"] == 'The variant name(s) "Shadow" is/are not present within endpoint configuration "old".'
    error = error_of(sagemaker.update_endpoint_weights_and_capacities, EndpointName="ep",
                     DesiredWeightsAndCapacities=[{"VariantName": "AllTraffic", "DesiredInstanceCount": 2},
                                                  {"VariantName": "AllTraffic", "DesiredWeight": 0.5}])
    assert "non-unique" in error["Message"]
    error = error_of(sagemaker.update_endpoint_weights_and_capacities, EndpointName="missing",
                     DesiredWeightsAndCapacities=[{"VariantName": "AllTraffic", "DesiredInstanceCount": 2}])
    assert "Could not find endpoint" in error["Message"]
    described = sagemaker.describe_endpoint(EndpointName="ep")
    assert described["EndpointStatus"] == "InService"
    assert described["ProductionVariants"][0]["DesiredInstanceCount"] == 4


def test_an_update_that_retains_variant_properties_keeps_the_live_count(sagemaker: Any) -> None:
    sagemaker.update_endpoint_weights_and_capacities(EndpointName="ep", DesiredWeightsAndCapacities=[
        {"VariantName": "AllTraffic", "DesiredInstanceCount": 6}])
    settled(sagemaker)
    config(sagemaker, "model-only", "ml.m5.4xlarge", 4)
    sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="model-only", RetainAllVariantProperties=True)
    assert settled(sagemaker)["ProductionVariants"][0]["CurrentInstanceCount"] == 6
    config(sagemaker, "plain", "ml.m5.4xlarge", 4)
    sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="plain")
    assert settled(sagemaker)["ProductionVariants"][0]["CurrentInstanceCount"] == 4


TARGET_TRACKING = {
    "TargetValue": 70.0,
    "CustomizedMetricSpecification": {
        "MetricName": "CPUUtilization", "Namespace": "/aws/sagemaker/Endpoints", "Statistic": "Average",
        "Unit": "Percent",
        "Dimensions": [{"Name": "EndpointName", "Value": "ep"}, {"Name": "VariantName", "Value": "AllTraffic"}]},
    "ScaleInCooldown": 600, "ScaleOutCooldown": 60, "DisableScaleIn": False,
}
STEP_SCALING = {
    "AdjustmentType": "ChangeInCapacity", "Cooldown": 300, "MetricAggregationType": "Maximum",
    "MinAdjustmentMagnitude": 1,
    "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "MetricIntervalUpperBound": 10.0, "ScalingAdjustment": 1},
                        {"MetricIntervalLowerBound": 10.0, "ScalingAdjustment": 2}],
}
SUSPENDED = {"DynamicScalingInSuspended": True, "DynamicScalingOutSuspended": False, "ScheduledScalingSuspended": False}


def register_with_policies(autoscaling: Any) -> None:
    autoscaling.register_scalable_target(**TARGET, MinCapacity=2, MaxCapacity=6, SuspendedState=SUSPENDED)
    autoscaling.put_scaling_policy(PolicyName="cpu", PolicyType="TargetTrackingScaling", **TARGET,
                                   TargetTrackingScalingPolicyConfiguration=TARGET_TRACKING)
    autoscaling.put_scaling_policy(PolicyName="backlog", PolicyType="StepScaling", **TARGET,
                                   StepScalingPolicyConfiguration=STEP_SCALING)
    autoscaling.put_scheduled_action(ScheduledActionName="nightly", Schedule="cron(0 20 * * ? *)", **TARGET,
                                     ScalableTargetAction={"MinCapacity": 1, "MaxCapacity": 1})


def read_scaling(autoscaling: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    keys = ("ServiceNamespace", "ResourceId", "ScalableDimension", "MinCapacity", "MaxCapacity", "SuspendedState")
    targets = [{k: t[k] for k in keys}
               for t in autoscaling.describe_scalable_targets(ServiceNamespace="sagemaker",
                                                              ResourceIds=[TARGET["ResourceId"]])["ScalableTargets"]]
    policy_keys = ("PolicyName", "PolicyType", "ResourceId", "TargetTrackingScalingPolicyConfiguration",
                   "StepScalingPolicyConfiguration")
    policies = [{k: p[k] for k in policy_keys if k in p}
                for p in autoscaling.describe_scaling_policies(ServiceNamespace="sagemaker",
                                                               ResourceId=TARGET["ResourceId"])["ScalingPolicies"]]
    actions = autoscaling.describe_scheduled_actions(ServiceNamespace="sagemaker",
                                                     ResourceId=TARGET["ResourceId"])["ScheduledActions"]
    return targets, policies, actions


def test_a_target_and_its_policies_round_trip_as_read_so_apply_can_restore_them(sagemaker: Any) -> None:
    autoscaling = client("application-autoscaling")
    register_with_policies(autoscaling)
    targets, policies, actions = read_scaling(autoscaling)
    assert targets == [{**TARGET, "MinCapacity": 2, "MaxCapacity": 6, "SuspendedState": SUSPENDED}]
    assert sorted(policies, key=lambda p: p["PolicyName"]) == [
        {"PolicyName": "backlog", "PolicyType": "StepScaling", "ResourceId": TARGET["ResourceId"],
         "StepScalingPolicyConfiguration": STEP_SCALING},
        {"PolicyName": "cpu", "PolicyType": "TargetTrackingScaling", "ResourceId": TARGET["ResourceId"],
         "TargetTrackingScalingPolicyConfiguration": TARGET_TRACKING},
    ]
    assert [a["ScheduledActionName"] for a in actions] == ["nightly"]
    # Restored from what was read: the same descriptions come back.
    autoscaling.deregister_scalable_target(**TARGET)
    target = targets[0]
    autoscaling.register_scalable_target(**TARGET, MinCapacity=target["MinCapacity"], MaxCapacity=target["MaxCapacity"],
                                         SuspendedState=target["SuspendedState"])
    for policy in policies:
        autoscaling.put_scaling_policy(**TARGET, **{k: v for k, v in policy.items() if k != "ResourceId"})
    restored_targets, restored_policies, _ = read_scaling(autoscaling)
    assert (restored_targets, restored_policies) == (targets, policies)


def test_deregistering_a_target_deletes_its_policies_and_scheduled_actions_only(sagemaker: Any) -> None:
    autoscaling = client("application-autoscaling")
    register_with_policies(autoscaling)
    other = {**TARGET, "ResourceId": "endpoint/ep/variant/AllTraffic2"}  # moto matched ResourceIds by substring
    autoscaling.register_scalable_target(**other, MinCapacity=1, MaxCapacity=2)
    autoscaling.put_scaling_policy(PolicyName="cpu", PolicyType="TargetTrackingScaling", **other,
                                   TargetTrackingScalingPolicyConfiguration=TARGET_TRACKING)
    autoscaling.deregister_scalable_target(**TARGET)
    assert read_scaling(autoscaling) == ([], [], [])
    left = autoscaling.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"]
    assert [(p["ResourceId"], p["PolicyName"]) for p in left] == [(other["ResourceId"], "cpu")]
    error = error_of(autoscaling.deregister_scalable_target, **TARGET)  # a retry's second deregister
    assert error["Code"] == "ObjectNotFoundException"
    assert error["Message"] == ("No scalable target found for service namespace: sagemaker, resource ID: "
                                "endpoint/ep/variant/AllTraffic, scalable dimension: "
                                "sagemaker:variant:DesiredInstanceCount")


def test_policies_and_scheduled_actions_need_a_registered_target(sagemaker: Any) -> None:
    autoscaling = client("application-autoscaling")
    error = error_of(autoscaling.put_scaling_policy, PolicyName="cpu", PolicyType="TargetTrackingScaling", **TARGET,
                     TargetTrackingScalingPolicyConfiguration=TARGET_TRACKING)
    assert error["Code"] == "ObjectNotFoundException"
    assert error["Message"].startswith("No scalable target registered for service namespace: sagemaker, resource ID: "
                                       "endpoint/ep/variant/AllTraffic")
    error = error_of(autoscaling.put_scheduled_action, ScheduledActionName="nightly", Schedule="cron(0 20 * * ? *)",
                     **TARGET, ScalableTargetAction={"MinCapacity": 1})
    assert error["Code"] == "ObjectNotFoundException"
    autoscaling.register_scalable_target(**TARGET, MinCapacity=1, MaxCapacity=3)
    described = autoscaling.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"][0]
    assert described["SuspendedState"] == {"DynamicScalingInSuspended": False, "DynamicScalingOutSuspended": False,
                                           "ScheduledScalingSuspended": False}


def test_an_autoscaled_variant_changes_instance_type_only_once_deregistered(sagemaker: Any) -> None:
    autoscaling = client("application-autoscaling")
    register_with_policies(autoscaling)
    config(sagemaker, "smaller", "ml.m5.xlarge", 3)
    error = error_of(sagemaker.update_endpoint, EndpointName="ep", EndpointConfigName="smaller")
    assert error["Code"] == "ValidationException"
    assert error["Message"].startswith(f'The variant(s) "AllTraffic" of endpoint "{ENDPOINT_ARN}" are registered with '
                                       "Application Auto Scaling")
    config(sagemaker, "renamed", "ml.m5.4xlarge", 4, variant="Blue")  # dropping the registered variant
    assert error_of(sagemaker.update_endpoint, EndpointName="ep", EndpointConfigName="renamed")["Code"] == \
        "ValidationException"
    assert sagemaker.describe_endpoint(EndpointName="ep")["EndpointStatus"] == "InService"
    config(sagemaker, "same-type", "ml.m5.4xlarge", 2)  # another model or count on the same type is allowed
    sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="same-type")
    settled(sagemaker)
    autoscaling.deregister_scalable_target(**TARGET)
    sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="smaller")
    assert settled(sagemaker)["EndpointConfigName"] == "smaller"


def test_deleting_an_endpoint_deregisters_its_targets(sagemaker: Any) -> None:
    autoscaling = client("application-autoscaling")
    register_with_policies(autoscaling)
    sagemaker.delete_endpoint(EndpointName="ep")
    assert read_scaling(autoscaling) == ([], [], [])


# -- faults ---------------------------------------------------------------------------------------

def test_a_throttle_is_retried_by_botocore_and_the_calls_are_recorded_in_order(sagemaker: Any) -> None:
    armed = Emulator.faults.arm("sagemaker", "DescribeEndpoint", "throttle", times=2)
    assert sagemaker.describe_endpoint(EndpointName="ep")["EndpointStatus"] == "InService"
    assert armed.fired == 2
    assert Emulator.faults.calls() == [("sagemaker", "DescribeEndpoint")] * 3
    assert Emulator.faults.faulted() == [("sagemaker", "DescribeEndpoint", "throttle")] * 2
    Emulator.faults.arm("sagemaker", "DescribeEndpoint", "throttle", times=1)
    error = error_of(client("sagemaker", NO_RETRIES).describe_endpoint, EndpointName="ep")
    assert (error["Code"], error["Message"], error["Status"]) == ("ThrottlingException", "Rate exceeded", 400)


def test_a_500_after_the_change_lands_and_botocores_retry_is_refused_as_in_progress(sagemaker: Any) -> None:
    config(sagemaker, "new", "ml.m5.xlarge", 3)
    armed = Emulator.faults.arm("sagemaker", "UpdateEndpoint", "server_error_after")
    error = error_of(sagemaker.update_endpoint, EndpointName="ep", EndpointConfigName="new")
    # The first attempt's change was made; the caller sees only its retry's refusal.
    assert error["Code"] == "ValidationException"
    assert error["Message"] == f'Cannot update in-progress endpoint "{ENDPOINT_ARN}".'
    assert armed.fired == 1
    assert Emulator.faults.calls() == [("sagemaker", "CreateEndpointConfig"), ("sagemaker", "UpdateEndpoint"),
                                       ("sagemaker", "UpdateEndpoint")]
    during = sagemaker.describe_endpoint(EndpointName="ep")
    assert during["EndpointStatus"] == "Updating"
    assert during["PendingDeploymentSummary"]["EndpointConfigName"] == "new"
    assert settled(sagemaker)["EndpointConfigName"] == "new"


def test_a_500_before_the_call_changes_nothing_and_a_retry_succeeds(sagemaker: Any) -> None:
    config(sagemaker, "new", "ml.m5.xlarge", 3)
    Emulator.faults.arm("sagemaker", "UpdateEndpoint", "server_error", times=1)
    error = error_of(client("sagemaker", NO_RETRIES).update_endpoint, EndpointName="ep", EndpointConfigName="new")
    assert (error["Code"], error["Status"]) == ("InternalFailure", 500)
    assert sagemaker.describe_endpoint(EndpointName="ep")["EndpointStatus"] == "InService"
    Emulator.faults.arm("sagemaker", "UpdateEndpoint", "server_error", times=1, status=503)
    sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="new")  # botocore retries the 503
    assert Emulator.faults.faulted() == [("sagemaker", "UpdateEndpoint", "server_error")] * 2
    assert settled(sagemaker)["EndpointConfigName"] == "new"


def test_an_outage_for_some_seconds_fails_every_call_then_ends(sagemaker: Any) -> None:
    armed = Emulator.faults.arm("sagemaker", "*", "server_error", times=None, for_seconds=0.5)
    error = error_of(client("sagemaker", NO_RETRIES).describe_endpoint, EndpointName="ep")
    assert error["Status"] == 500
    time.sleep(0.6)
    assert sagemaker.describe_endpoint(EndpointName="ep")["EndpointStatus"] == "InService"
    assert armed.fired == 1


def test_access_denied_names_the_action_and_resource_and_is_not_retried(sagemaker: Any) -> None:
    Emulator.faults.arm("sagemaker", "DeleteEndpoint", "access_denied")
    error = error_of(sagemaker.delete_endpoint, EndpointName="ep")
    assert (error["Code"], error["Status"]) == ("AccessDeniedException", 400)
    assert error["Message"] == (
        f"User: arn:aws:iam::123456789012:user/testing is not authorized to perform: sagemaker:DeleteEndpoint on "
        f"resource: {ENDPOINT_ARN} because no identity-based policy allows the sagemaker:DeleteEndpoint action")
    assert Emulator.faults.calls() == [("sagemaker", "DeleteEndpoint")]
    assert sagemaker.describe_endpoint(EndpointName="ep")["EndpointStatus"] == "InService"
    Emulator.faults.arm("cloudwatch", "PutMetricAlarm", "access_denied")
    cloudwatch = client("cloudwatch")
    error = error_of(cloudwatch.put_metric_alarm, AlarmName="a", MetricName="CPUUtilization", Namespace="x",
                     Statistic="Average", Period=60, EvaluationPeriods=1, Threshold=1.0,
                     ComparisonOperator="GreaterThanThreshold")
    assert (error["Code"], error["Status"]) == ("AccessDenied", 403)
    assert "cloudwatch:PutMetricAlarm" in error["Message"]
    assert cloudwatch.describe_alarms()["MetricAlarms"] == []


@pytest.mark.parametrize(("service", "operation", "call", "throttle"), [
    ("cloudwatch", "DescribeAlarms", lambda c: c.describe_alarms(), ("Throttling", 400)),
    ("application-autoscaling", "DescribeScalableTargets",
     lambda c: c.describe_scalable_targets(ServiceNamespace="sagemaker"), ("ThrottlingException", 400)),
    ("sts", "GetCallerIdentity", lambda c: c.get_caller_identity(), ("Throttling", 400)),
])
def test_each_service_answers_a_fault_in_its_own_protocol(aws: Emulator, service: str, operation: str, call: Any,
                                                          throttle: tuple[str, int]) -> None:
    api = client(service, NO_RETRIES)
    for kind, expected in (("throttle", throttle), ("server_error", ("InternalFailure", 500))):
        Emulator.faults.arm(service, operation, kind)
        error = error_of(lambda: call(api))
        assert (error["Code"], error["Status"]) == expected
        if service != "application-autoscaling":  # JSON errors carry no fault type; query ones do
            assert error["Type"] == ("Sender" if expected[1] < 500 else "Receiver")
    call(api)  # disarmed once taken
    assert Emulator.faults.calls() == [(service, operation)] * 3


def test_a_hang_holds_the_request_then_answers_or_drops_it(sagemaker: Any) -> None:
    Emulator.faults.arm("sagemaker", "DescribeEndpoint", "hang", seconds=0.5)
    started = time.monotonic()
    assert sagemaker.describe_endpoint(EndpointName="ep")["EndpointStatus"] == "InService"
    assert time.monotonic() - started >= 0.5
    Emulator.faults.arm("sagemaker", "DescribeEndpoint", "hang", seconds=0.1, then="drop")
    with pytest.raises(botocore.exceptions.ConnectionClosedError):
        client("sagemaker", NO_RETRIES).describe_endpoint(EndpointName="ep")
    impatient = botocore.config.Config(retries={"mode": "standard", "total_max_attempts": 1}, read_timeout=0.3)
    Emulator.faults.arm("sagemaker", "DescribeEndpoint", "hang", seconds=30)
    started = time.monotonic()
    with pytest.raises(botocore.exceptions.ReadTimeoutError):
        client("sagemaker", impatient).describe_endpoint(EndpointName="ep")
    Emulator.faults.reset()  # releases the held request at once
    assert time.monotonic() - started < 5


def test_faults_are_matched_in_the_order_armed_and_reset_disarms_them(sagemaker: Any) -> None:
    Emulator.faults.arm("sagemaker", "DescribeEndpoint", "throttle", times=1)
    Emulator.faults.arm("sagemaker", "*", "server_error", times=1)
    Emulator.faults.arm("*", "*", "access_denied", times=1)
    Emulator.faults.arm("sagemaker", "ListEndpoints", "access_denied", times=1)
    with pytest.raises(botocore.exceptions.ClientError, match="AccessDenied"):
        sagemaker.describe_endpoint(EndpointName="ep")
    assert [kind for *_, kind in Emulator.faults.faulted()] == ["throttle", "server_error", "access_denied"]
    Emulator.faults.reset()
    assert Emulator.faults.calls() == [] and Emulator.faults.faulted() == []
    assert sagemaker.list_endpoints()["Endpoints"]
    with pytest.raises(ValueError, match="unknown fault"):
        Emulator.faults.arm("sagemaker", "ListEndpoints", "explode")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="for_seconds"):
        Emulator.faults.arm("sagemaker", "ListEndpoints", "throttle", times=None)
