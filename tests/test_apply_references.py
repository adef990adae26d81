"""Answer references (auditor.models): a call of a change takes a field of an earlier call's answer,
here the step-scaling policy's PolicyARN (AWS makes it up) in the AlarmActions of the alarm that
invokes it. Apply puts the real ARN in before it makes the alarm, from the policy's answer, or read
back (DescribeScalingPolicies) when the policy's call landed with an error; a reference no earlier
call makes is refused before any call; the dry run says where each one comes from; the CLI,
CloudFormation and Terraform texts write it as a shell variable, a Ref, the policy's `arn`.

The endpoint is a copy of the demo's search-embeddings under autoscaling (2-6 instances), audited
once; the plan's change is built here as a rule builds it (the step policy and its alarm named after
the endpoint, the variant and the plan id).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from auditor.act.answers import answered
from auditor.cli import app
from auditor.collect.session import AwsClients
from auditor.history.store import AppliedChange, History
from auditor.models import AnswerReference, ApiCall, answer_reference
from auditor.recommend.change import resource_name
from auditor.records import plan_to_dict
from auditor.report.change_text import render_change
from auditor_emulator.server import Emulator
from cfn_lint_snippets import lint_all
from conftest import SCALABLE_DIMENSION, apply_fleet, error_lines, load_plans_from
from terraform_schema import problems, resources, string_value

NAMES = ("ref-steps", "ref-landed", "ref-orphan")
runner = CliRunner()
pytestmark = pytest.mark.usefixtures("quick_deployments")


@pytest.fixture(scope="module")
def fleet(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with apply_fleet(emulator, tmp_path_factory.mktemp("references"), NAMES, scaled=NAMES) as made:
        yield made


def policy_name(endpoint: str, plan_id: str) -> str:
    return f"{resource_name(endpoint, plan_id, limit=200)}-AllTraffic"


def step_change(endpoint: str, plan_id: str, *, refer_to: str | None = None) -> dict[str, Any]:
    """A step-scaling policy on the variant and the alarm that invokes it (its AlarmActions: the
    policy's PolicyARN as an answer reference; `refer_to`: another policy name, which no call puts)."""
    policy = policy_name(endpoint, plan_id)
    keys = {"ServiceNamespace": "sagemaker", "ResourceId": f"endpoint/{endpoint}/variant/AllTraffic",
            "ScalableDimension": SCALABLE_DIMENSION}
    return {"calls": [
        {"service": "application-autoscaling", "operation": "PutScalingPolicy",
         "purpose": "add an instance when requests wait with no instance to take them",
         "params": {**keys, "PolicyName": policy, "PolicyType": "StepScaling",
                    "StepScalingPolicyConfiguration": {
                        "AdjustmentType": "ChangeInCapacity", "Cooldown": 300, "MetricAggregationType": "Maximum",
                        "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]}}},
        {"service": "cloudwatch", "operation": "PutMetricAlarm", "purpose": "the alarm that invokes the policy",
         "params": {"AlarmName": f"{endpoint}-AllTraffic-{plan_id}-scale-out", "Namespace": "AWS/SageMaker",
                    "MetricName": "HasBacklogWithoutCapacity",
                    "Dimensions": [{"Name": "EndpointName", "Value": endpoint}],
                    "Statistic": "Average", "Period": 60, "EvaluationPeriods": 2, "Threshold": 1.0,
                    "ComparisonOperator": "GreaterThanOrEqualToThreshold", "TreatMissingData": "missing",
                    "AlarmActions": [answer_reference("PutScalingPolicy", refer_to or policy, "PolicyARN")],
                    "Tags": [{"Key": "auditor:plan", "Value": plan_id}]}},
    ], "rollback": "delete the alarm and the policy", "waits_for": None}


@pytest.fixture
def stored(fleet: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    plans = {}
    for name, plan in fleet["plans"].items():
        plans[plan.id] = {**plan_to_dict(plan), "risk": {"level": "low", "load_test_first": []}, "measured": True,
                          "change": step_change(name, plan.id, refer_to="someone-elses" if name == "ref-orphan"
                                                else None)}
    return load_plans_from(monkeypatch, plans)


def plan_id_of(fleet: dict[str, Any], endpoint: str) -> str:
    return str(fleet["plans"][endpoint].id)


def policy_arn(fleet: dict[str, Any], endpoint: str) -> str:
    policies = fleet["scaling"].describe_scaling_policies(
        ServiceNamespace="sagemaker", ResourceId=f"endpoint/{endpoint}/variant/AllTraffic",
        PolicyNames=[policy_name(endpoint, plan_id_of(fleet, endpoint))])["ScalingPolicies"]
    (policy,) = policies
    return str(policy["PolicyARN"])


def alarm_actions(fleet: dict[str, Any], endpoint: str) -> list[str]:
    name = f"{endpoint}-AllTraffic-{plan_id_of(fleet, endpoint)}-scale-out"
    (alarm,) = fleet["cloudwatch"].describe_alarms(AlarmNames=[name])["MetricAlarms"]
    return list(alarm["AlarmActions"])


def record(fleet: dict[str, Any], plan_id: str) -> AppliedChange:
    with History(Path(fleet["config"].history.path)) as history:
        return next(r for r in history.applied() if r.plan_id == plan_id)


def test_the_alarm_gets_the_arn_the_policy_answered(fleet: dict[str, Any], stored: dict[str, Any]) -> None:
    plan_id = plan_id_of(fleet, "ref-steps")
    dry = runner.invoke(app, ["apply", plan_id])
    assert dry.exit_code == 0, dry.output
    assert (f"     AlarmActions[0] = the PolicyARN of PutScalingPolicy {policy_name('ref-steps', plan_id)} "
            "(call 1's answer), put in when it is made") in dry.stdout.splitlines()
    applied = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert applied.exit_code == 0, applied.output
    arn = policy_arn(fleet, "ref-steps")
    assert arn.startswith("arn:aws:autoscaling:") and "${" not in arn
    assert alarm_actions(fleet, "ref-steps") == [arn]
    made = record(fleet, plan_id)
    assert made.outcome == "applied"
    (alarm_call,) = [c for c in made.calls if c["operation"] == "PutMetricAlarm"]
    assert alarm_call["params"]["AlarmActions"] == [arn]  # the journal holds what was sent


def test_a_policy_call_that_landed_is_read_back_for_its_arn(fleet: dict[str, Any], stored: dict[str, Any]) -> None:
    """PutScalingPolicy answers 500 after putting the policy, every time: apply finds it put
    (landed, no answer), reads its ARN back with DescribeScalingPolicies and gives it to the alarm."""
    plan_id = plan_id_of(fleet, "ref-landed")
    Emulator.faults.arm("application-autoscaling", "PutScalingPolicy", "server_error_after", times=None,
                        for_seconds=20)
    applied = runner.invoke(app, ["apply", plan_id, "--yes"])
    Emulator.faults.reset()
    assert applied.exit_code == 0, applied.output
    statuses = [(s["operation"], s["status"]) for s in record(fleet, plan_id).steps if s.get("step") == "call"]
    assert statuses == [("PutScalingPolicy", "landed"), ("PutMetricAlarm", "made")]
    assert alarm_actions(fleet, "ref-landed") == [policy_arn(fleet, "ref-landed")]


def test_a_reference_no_earlier_call_answers_is_refused_before_any_call(
        fleet: dict[str, Any], stored: dict[str, Any]) -> None:
    plan_id = plan_id_of(fleet, "ref-orphan")
    refused = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert refused.exit_code == 1
    assert error_lines(refused) == [
        f"error: plan {plan_id} (ref-orphan): call 2 (cloudwatch:PutMetricAlarm) takes the PolicyARN of "
        "PutScalingPolicy someone-elses, which no earlier call of the change makes"]
    assert fleet["scaling"].describe_scaling_policies(
        ServiceNamespace="sagemaker", ResourceId="endpoint/ref-orphan/variant/AllTraffic",
        PolicyNames=[policy_name("ref-orphan", plan_id)])["ScalingPolicies"] == []


def test_an_answer_that_cannot_be_read_back_says_why(fleet: dict[str, Any]) -> None:
    """A call whose answer has no field, and whose thing AWS does not show: no value, and the reason
    (apply then fails before the call that takes it)."""
    call = ApiCall("application-autoscaling", "PutScalingPolicy", {
        "ServiceNamespace": "sagemaker", "ResourceId": "endpoint/ref-orphan/variant/AllTraffic",
        "ScalableDimension": SCALABLE_DIMENSION, "PolicyName": "never-put"}, "")
    reference = AnswerReference("PutScalingPolicy", "never-put", "PolicyARN")
    assert answered(AwsClients(), "us-east-1", call, {}, reference) == (None, "DescribeScalingPolicies shows no "
                                                                         "PolicyARN")
    assert answered(AwsClients(), "us-east-1", call, {"PolicyARN": "arn:x"}, reference) == ("arn:x", None)


# --- the three texts ----------------------------------------------------------------------------


def text_plan() -> dict[str, Any]:
    return {"id": "0a1b2c3d4e", "resource": {"kind": "endpoints", "type": "endpoint", "name": "ranker",
                                             "account_id": "123456789012", "region": "us-east-1"},
            "variant": "AllTraffic", "current": {"endpoint_config_name": "ranker-config"},
            "proposed": {"action": "autoscale", "advice": "scale out from zero"}, "risk": {"level": "low"},
            "change": step_change("ranker", "0a1b2c3d4e")}


def test_the_cli_captures_the_arn_in_a_shell_variable_the_alarm_takes() -> None:
    lines = render_change(text_plan(), "cli").splitlines()
    (put,) = [line for line in lines if "put-scaling-policy" in line]
    assert put.startswith("POLICY_ARN_1=$(aws application-autoscaling put-scaling-policy --region us-east-1 "
                          "--cli-input-json '")
    assert put.endswith("' --query PolicyARN --output text)")
    (alarm,) = [line for line in lines if "put-metric-alarm" in line]
    assert '"AlarmActions": ["\'"$POLICY_ARN_1"\'"]' in alarm and "${" not in alarm
    import shlex
    words = shlex.split(alarm.replace('"$POLICY_ARN_1"', "arn:aws:autoscaling:policy-1"))
    body = words[words.index("--cli-input-json") + 1]
    import json
    assert json.loads(body)["AlarmActions"] == ["arn:aws:autoscaling:policy-1"]


def test_cloudformation_refs_the_policy_and_is_cfn_lint_clean(tmp_path: Path) -> None:
    text = render_change(text_plan(), "cloudformation")
    resources_ = yaml.safe_load(text)["Resources"]
    (policy,) = [k for k, v in resources_.items() if v["Type"] == "AWS::ApplicationAutoScaling::ScalingPolicy"]
    (alarm,) = [v for v in resources_.values() if v["Type"] == "AWS::CloudWatch::Alarm"]
    assert alarm["Properties"]["AlarmActions"] == [{"Ref": policy}]
    assert lint_all({"references": text}, tmp_path) == {}


def test_terraform_takes_the_policys_arn_and_is_valid_for_the_provider() -> None:
    text = render_change(text_plan(), "terraform")
    assert problems(text) == [], text
    (policy,) = [name for kind, name, _ in resources(text) if kind == "aws_appautoscaling_policy"]
    ((_, _, alarm),) = [r for r in resources(text) if r[0] == "aws_cloudwatch_metric_alarm"]
    assert alarm["alarm_actions"] == [f"${{aws_appautoscaling_policy.{policy}.arn}}"]
    assert string_value(alarm["alarm_name"]) == "ranker-AllTraffic-0a1b2c3d4e-scale-out"


def test_a_reference_no_call_declares_is_said_not_hidden() -> None:
    plan = copy.deepcopy(text_plan())
    plan["change"]["calls"] = plan["change"]["calls"][1:]  # the alarm alone
    for form in ("cli", "terraform", "cloudformation"):
        text = render_change(plan, form)
        assert ("# PutMetricAlarm takes the PolicyARN of PutScalingPolicy ranker-0a1b2c3d4e-AllTraffic, which "
                ) in text, (form, text)
