"""A resize of an autoscaled variant: the scalable target is read with its policies' settings
(discover/autoscaling.py, no call of its own), deregistered only after everything that can be made
is made, and registered again after the update with each policy put back as read (AWS's "Update
endpoints that use auto scaling"). What cannot be carried faithfully raises the plan's risk and is
named in its basis. Every request validates against botocore's model; the carried requests are
replayed against the emulator and give back the target and policies as they were read."""

from __future__ import annotations

from dataclasses import replace

import boto3
import pytest

from auditor.kinds.endpoints.autoscaling import discover_autoscaling
from auditor.kinds.endpoints.change import build_change, scaling_risk
from auditor.kinds.endpoints.models import AutoScaling, ReadScalingPolicy, Variant
from auditor.models import Risk, RiskLevel
from auditor.recommend.change import PLAN_TAG, settable_tags, with_source_tags
from test_plan_change import DESCRIPTION, PLANS, RANKER, valid

RESOURCE = "endpoint/ranker/variant/AllTraffic"
DIMENSION = "sagemaker:variant:DesiredInstanceCount"
TRACKING = {"TargetValue": 120.5, "ScaleInCooldown": 600, "ScaleOutCooldown": 45, "DisableScaleIn": False,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}}
CUSTOM = {"TargetValue": 60.0, "CustomizedMetricSpecification": {
    "MetricName": "CPUUtilization", "Namespace": "/aws/sagemaker/Endpoints", "Statistic": "Average",
    "Dimensions": [{"Name": "EndpointName", "Value": "ranker"}, {"Name": "VariantName", "Value": "AllTraffic"}]}}
STEP = {"AdjustmentType": "ChangeInCapacity", "Cooldown": 300, "MetricAggregationType": "Maximum",
        "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}


def scaled(*policies: ReadScalingPolicy, names: tuple[str, ...] | None = None,
           suspended: dict[str, bool] | None = None) -> AutoScaling:
    listed = names if names is not None else tuple(f"{p.name} ({p.policy_type})" for p in policies)
    return AutoScaling(2, 6, listed, policies, suspended)


def ranker(scaling: AutoScaling) -> object:
    return replace(RANKER, variants=(Variant("AllTraffic", "ml.m5.4xlarge", 4, autoscaling=scaling),))


def test_target_tracking_policies_are_put_back_as_read_after_the_update() -> None:
    target = scaled(ReadScalingPolicy("invocations", "TargetTrackingScaling", TRACKING),
                    ReadScalingPolicy("cpu", "TargetTrackingScaling", CUSTOM),
                    suspended={"DynamicScalingInSuspended": True, "DynamicScalingOutSuspended": False,
                               "ScheduledScalingSuspended": False})
    change = build_change(PLANS["resize"], ranker(target), 250.0)
    assert change is not None
    assert [c.operation for c in change.calls] == [
        "CreateEndpointConfig", "PutMetricAlarm", "PutMetricAlarm", "DeregisterScalableTarget", "UpdateEndpoint",
        "RegisterScalableTarget", "PutScalingPolicy", "PutScalingPolicy"]
    for call in change.calls:
        valid(call)
    register = change.calls[5].params
    assert register == {"ServiceNamespace": "sagemaker", "ResourceId": RESOURCE, "ScalableDimension": DIMENSION,
                        "MinCapacity": 2, "MaxCapacity": 6, "SuspendedState": target.suspended_state}
    puts = [c.params for c in change.calls[6:]]
    assert [(p["PolicyName"], p["PolicyType"], p["TargetTrackingScalingPolicyConfiguration"]) for p in puts] == [
        ("invocations", "TargetTrackingScaling", TRACKING), ("cpu", "TargetTrackingScaling", CUSTOM)]
    assert all((p["ResourceId"], p["ScalableDimension"]) == (RESOURCE, DIMENSION) for p in puts)
    assert "by hand" not in " ".join(c.purpose for c in change.calls)
    # Everything carried, but the invocations target was set for ml.m5.4xlarge: medium, and said.
    risk = scaling_risk(PLANS["resize"].proposed, ranker(target), "AllTraffic", Risk(RiskLevel.LOW))
    assert risk is not None and risk.level is RiskLevel.MEDIUM
    assert [line.split(",", 1)[0] for line in risk.basis[:1]] == [
        "policy invocations is put back with its target of 120.5 SageMakerVariantInvocationsPerInstance"]
    assert "set for ml.m5.4xlarge: on ml.m5.xlarge" in risk.basis[0]
    assert len(risk.basis) == 2 and "scheduled actions" in risk.basis[1]


def test_a_carried_utilisation_policy_leaves_the_replays_level() -> None:
    """CPU utilisation is a share of each instance, whatever its type: its target means the same."""
    target = scaled(ReadScalingPolicy("cpu", "TargetTrackingScaling", CUSTOM))
    risk = scaling_risk(PLANS["resize"].proposed, ranker(target), "AllTraffic", Risk(RiskLevel.LOW))
    assert risk is not None and risk.level is RiskLevel.LOW
    assert len(risk.basis) == 1 and "scheduled actions" in risk.basis[0]


def test_the_carried_policy_is_a_copy_not_the_models_own() -> None:
    policy = ReadScalingPolicy("invocations", "TargetTrackingScaling", {"TargetValue": 1.0, "ScaleInCooldown": 9})
    change = build_change(PLANS["resize"], ranker(scaled(policy)), None)
    assert change is not None
    change.calls[-1].params["TargetTrackingScalingPolicyConfiguration"]["TargetValue"] = 99.0
    assert policy.configuration == {"TargetValue": 1.0, "ScaleInCooldown": 9}


@pytest.mark.parametrize(("policy", "names", "said"), [
    (ReadScalingPolicy("backlog", "StepScaling", STEP, ("ranker-backlog-high",)), None,
     "step-scaling policy backlog is deleted"),
    (ReadScalingPolicy("odd", "TargetTrackingScaling", None), None, "its settings were not read"),
    (ReadScalingPolicy("ahead", "PredictiveScaling", {"MetricSpecifications": []}), None,
     "PredictiveScaling policy ahead is deleted"),
    (None, ("legacy (TargetTrackingScaling)",), "scaling policy legacy (TargetTrackingScaling)"),
])
def test_a_policy_that_cannot_be_carried_makes_the_plan_medium_and_is_named(
        policy: ReadScalingPolicy | None, names: tuple[str, ...] | None, said: str) -> None:
    kept = ReadScalingPolicy("cpu", "TargetTrackingScaling", CUSTOM)  # carried, leaves the level
    read = (kept, policy) if policy else (kept,)
    target = scaled(*read, names=(*(f"{p.name} ({p.policy_type})" for p in read), *(names or ())))
    change = build_change(PLANS["resize"], ranker(target), 250.0)
    assert change is not None
    puts = [c.params["PolicyName"] for c in change.calls if c.operation == "PutScalingPolicy"]
    assert puts == ["cpu"]  # only what is carried faithfully is put back
    register = next(c for c in change.calls if c.operation == "RegisterScalableTarget")
    assert "re-create by hand" in register.purpose
    for call in change.calls:
        valid(call)
    risk = scaling_risk(PLANS["resize"].proposed, ranker(target), "AllTraffic", Risk(RiskLevel.LOW))
    assert risk is not None and risk.level is RiskLevel.MEDIUM
    assert any(said in line for line in risk.basis), risk.basis
    if policy is not None and policy.alarms:
        assert any("ranker-backlog-high" in line and "new ARN" in line for line in risk.basis)
    # A high replay stays high; a plan not assessed is medium.
    high = scaling_risk(PLANS["resize"].proposed, ranker(target), "AllTraffic", Risk(RiskLevel.HIGH))
    assert high is not None and high.level is RiskLevel.HIGH
    unassessed = scaling_risk(PLANS["resize"].proposed, ranker(target), "AllTraffic", None)
    assert unassessed is not None and unassessed.level is RiskLevel.MEDIUM


def test_no_deregister_no_change_to_the_risk() -> None:
    target = scaled(ReadScalingPolicy("backlog", "StepScaling", STEP))
    same_type = replace(PLANS["resize"].proposed, instance_type="ml.m5.4xlarge")
    low = Risk(RiskLevel.LOW)
    assert scaling_risk(same_type, ranker(target), "AllTraffic", low) is low
    assert scaling_risk(PLANS["resize"].proposed, RANKER, "AllTraffic", low) is low  # not autoscaled
    change = build_change(replace(PLANS["resize"], proposed=same_type), ranker(target), None)
    assert change is not None and not any(c.service == "application-autoscaling" for c in change.calls)


def test_a_resize_under_a_new_policy_replaces_the_old_ones() -> None:
    target = scaled(ReadScalingPolicy("invocations", "TargetTrackingScaling", TRACKING))
    change = build_change(PLANS["resize+autoscale"], ranker(target), 250.0)
    assert change is not None
    ops = [c.operation for c in change.calls]
    assert ops.index("PutMetricAlarm") < ops.index("DeregisterScalableTarget") == ops.index("UpdateEndpoint") - 1
    assert ops[-2:] == ["RegisterScalableTarget", "PutScalingPolicy"]
    assert change.calls[-1].params["PolicyName"] != "invocations"  # the plan's own
    risk = scaling_risk(PLANS["resize+autoscale"].proposed, ranker(target), "AllTraffic", Risk(RiskLevel.MEDIUM))
    assert risk is not None and any("replaced by the plan's own" in line for line in risk.basis)


def test_a_variant_leaving_its_instances_is_deregistered_and_not_registered_again() -> None:
    target = scaled(ReadScalingPolicy("invocations", "TargetTrackingScaling", TRACKING))
    endpoint = replace(RANKER, variants=(Variant("AllTraffic", "ml.m5.4xlarge", 4),
                                         Variant("Canary", "ml.m5.xlarge", 1, autoscaling=target)))
    change = build_change(PLANS["remove-variant"], endpoint, 250.0)
    assert change is not None
    ops = [c.operation for c in change.calls]
    assert ops[-2:] == ["DeregisterScalableTarget", "UpdateEndpoint"]
    assert "RegisterScalableTarget" not in ops and "PutScalingPolicy" not in ops


def test_tags_the_copy_carries() -> None:
    """`auditor:plan` on the copy and the alarms; never the opt-in tag, nor AWS's own."""
    described = {**DESCRIPTION, "Tags": [{"Key": "team", "Value": "search"},
                                         {"Key": "auditor:apply", "Value": "allowed"},
                                         {"Key": "aws:cloudformation:stack-name", "Value": "s"},
                                         {"Key": "auditor:plan", "Value": "0123456789"}]}
    change = build_change(PLANS["resize"], replace(RANKER, config_description=described), 250.0)
    assert change is not None
    create = change.calls[0]
    assert create.params["Tags"] == [{"Key": "team", "Value": "search"},
                                     {"Key": PLAN_TAG, "Value": PLANS["resize"].id}]
    alarms = [c for c in change.calls if c.operation == "PutMetricAlarm"]
    assert alarms and all(c.params["Tags"] == [{"Key": PLAN_TAG, "Value": PLANS["resize"].id}] for c in alarms)
    for call in change.calls:
        valid(call)
    # Tags not read by the audit: the plan's tag alone; apply adds the source's, read then.
    unread = build_change(PLANS["resize"], replace(RANKER, config_description={
        k: v for k, v in DESCRIPTION.items() if k != "Tags"}), None)
    assert unread is not None
    assert unread.calls[0].params["Tags"] == [{"Key": PLAN_TAG, "Value": PLANS["resize"].id}]
    merged = with_source_tags(unread.calls[0].params["Tags"], {"team": "search", "auditor:apply": "allowed",
                                                               "aws:x": "y", PLAN_TAG: "old"})
    assert merged == [{"Key": PLAN_TAG, "Value": PLANS["resize"].id}, {"Key": "team", "Value": "search"}]


def test_settable_tags_leave_out_the_opt_in_tag_unless_the_same_resource_is_made_again() -> None:
    tags = {"team": "a", "auditor:apply": "allowed", "aws:x": "y"}
    assert settable_tags(tags) == [{"Key": "team", "Value": "a"}]
    assert settable_tags(tags, keep_opt_in=True) == [{"Key": "auditor:apply", "Value": "allowed"},
                                                     {"Key": "team", "Value": "a"}]


def test_discovery_keeps_each_policy_and_the_carried_calls_restore_them(aws) -> None:
    """Against the emulator: what discovery reads, put back by the change's own requests after a
    deregister, reads back the same."""
    client = boto3.client("application-autoscaling", region_name="us-east-1")
    client.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=RESOURCE, ScalableDimension=DIMENSION,
                                    MinCapacity=2, MaxCapacity=6,
                                    SuspendedState={"DynamicScalingInSuspended": True})
    client.put_scaling_policy(PolicyName="invocations", ServiceNamespace="sagemaker", ResourceId=RESOURCE,
                              ScalableDimension=DIMENSION, PolicyType="TargetTrackingScaling",
                              TargetTrackingScalingPolicyConfiguration=TRACKING)
    client.put_scaling_policy(PolicyName="backlog", ServiceNamespace="sagemaker", ResourceId=RESOURCE,
                              ScalableDimension=DIMENSION, PolicyType="StepScaling",
                              StepScalingPolicyConfiguration=STEP)
    found = discover_autoscaling(client, "us-east-1")[RESOURCE]
    assert (found.min_capacity, found.max_capacity) == (2, 6)
    assert found.suspended_state is not None and found.suspended_state["DynamicScalingInSuspended"] is True
    by_name = {p.name: p for p in found.read_policies}
    assert by_name["invocations"].configuration == TRACKING
    assert by_name["backlog"].policy_type == "StepScaling" and by_name["backlog"].configuration == STEP
    change = build_change(PLANS["resize"], ranker(found), 250.0)
    assert change is not None
    scaling_calls = [c for c in change.calls if c.service == "application-autoscaling"]
    assert [c.operation for c in scaling_calls] == ["DeregisterScalableTarget", "RegisterScalableTarget",
                                                    "PutScalingPolicy"]
    for call in scaling_calls:
        getattr(client, {"DeregisterScalableTarget": "deregister_scalable_target",
                         "RegisterScalableTarget": "register_scalable_target",
                         "PutScalingPolicy": "put_scaling_policy"}[call.operation])(**call.params)
    again = discover_autoscaling(client, "us-east-1")[RESOURCE]
    assert (again.min_capacity, again.max_capacity) == (2, 6)
    assert [p.configuration for p in again.read_policies if p.name == "invocations"] == [TRACKING]
    # The step-scaling policy is not put back (AWS deletes it with the target): the plan says so
    # and is at least medium.
    risk = scaling_risk(PLANS["resize"].proposed, ranker(found), "AllTraffic", Risk(RiskLevel.LOW))
    assert risk is not None and risk.level is RiskLevel.MEDIUM
    assert any(line.startswith("step-scaling policy backlog") for line in risk.basis)


@pytest.mark.parametrize("action", ["resize", "resize+autoscale", "remove-variant"])
def test_the_change_says_how_to_restore_the_target_as_read(action: str) -> None:
    """What apply makes if a call after the deregister fails: the target and its policies as the
    audit read them (for a resize under a new policy, or a variant leaving its instances, the calls
    after the update are not that)."""
    target = scaled(ReadScalingPolicy("invocations", "TargetTrackingScaling", TRACKING),
                    suspended={"DynamicScalingInSuspended": True})
    variant = "Canary" if action == "remove-variant" else "AllTraffic"
    resource = f"endpoint/ranker/variant/{variant}"
    endpoint = replace(RANKER, variants=(Variant(variant, "ml.m5.4xlarge", 4, autoscaling=target),))
    change = build_change(PLANS[action], endpoint, 250.0)
    assert change is not None and "DeregisterScalableTarget" in [c.operation for c in change.calls]
    assert [(c.operation, c.params["ResourceId"]) for c in change.restore] == [
        ("RegisterScalableTarget", resource), ("PutScalingPolicy", resource)]
    register, put = (c.params for c in change.restore)
    assert (register["MinCapacity"], register["MaxCapacity"], register["SuspendedState"]) == (
        2, 6, {"DynamicScalingInSuspended": True})
    assert (put["PolicyName"], put["TargetTrackingScalingPolicyConfiguration"]) == ("invocations", TRACKING)
    for call in change.restore:
        valid(call)
    from auditor.records import change_to_dict
    assert change_to_dict(change)["restore"][0]["operation"] == "RegisterScalableTarget"
    # Nothing deregistered, nothing to restore.
    plain = build_change(PLANS[action], RANKER, 250.0)
    assert plain is not None and plain.restore == ()
