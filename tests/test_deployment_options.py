"""A plan's blue/green deployment: canary or linear traffic shifting from [apply] (bounded by what
SageMaker takes, checked against botocore's model), and rollback on the variant's existing alarms
(read from a moto server) instead of alarms the plan defines."""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from pathlib import Path

import boto3
import pytest
import yaml
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import MAX_DEPLOYMENT_TIMEOUT_SECONDS, TERMINATION_WAIT_SECONDS, ApplyConfig, AuditConfig
from auditor.config_file import parse_config
from auditor.errors import ConfigError
from auditor.kinds.endpoints.alarms import discover_alarms
from auditor.kinds.endpoints.change import build_change
from auditor.kinds.endpoints.models import RollbackAlarm
from auditor.records import plan_to_dict
from auditor.report.change_text import render_change
from auditor_emulator.fleet import demo_fleet, seed_fleet
from conftest import seeded_emulator, utc_now
from test_plan_change import PLANS, RANKER, SESSION, valid

runner = CliRunner()
LINEAR = ApplyConfig(traffic_shifting="linear", linear_step_percent=25, wait_interval_minutes=5)


def _update(change) -> dict:
    (update,) = [c for c in change.calls if c.operation == "UpdateEndpoint"]
    return update


def _config(text: str) -> AuditConfig:
    return parse_config(tomllib.loads(text), source="auditor.toml")


# --- traffic shifting -------------------------------------------------------------------------------

@pytest.mark.parametrize("apply", [
    ApplyConfig(), ApplyConfig(canary_percent=1, wait_interval_minutes=1),
    ApplyConfig(canary_percent=50, wait_interval_minutes=60), LINEAR,
    ApplyConfig(traffic_shifting="linear", linear_step_percent=10, wait_interval_minutes=42),
    ApplyConfig(traffic_shifting="linear", linear_step_percent=50, wait_interval_minutes=60),
], ids=["default", "canary-1%-1min", "canary-50%-60min", "linear-25%", "linear-10%-42min", "linear-50%-60min"])
def test_both_modes_build_requests_botocore_accepts(apply: ApplyConfig) -> None:
    change = build_change(PLANS["resize"], RANKER, 250.0, apply)
    assert change is not None
    for call in change.calls:
        valid(call)
    policy = _update(change).params["DeploymentConfig"]["BlueGreenUpdatePolicy"]
    routing = policy["TrafficRoutingConfiguration"]
    assert routing["WaitIntervalInSeconds"] == apply.wait_interval_minutes * 60
    if apply.traffic_shifting == "linear":
        assert routing["Type"] == "LINEAR" and "CanarySize" not in routing
        assert routing["LinearStepSize"] == {"Type": "CAPACITY_PERCENT", "Value": apply.linear_step_percent}
    else:
        assert routing["Type"] == "CANARY" and "LinearStepSize" not in routing
        assert routing["CanarySize"] == {"Type": "CAPACITY_PERCENT", "Value": apply.canary_percent}
    # AWS: the timeout must be larger than the waits together (every shift's baking period, and the
    # old fleet kept after the switch).
    waits = apply.traffic_shifts * routing["WaitIntervalInSeconds"] + policy["TerminationWaitInSeconds"]
    assert waits < policy["MaximumExecutionTimeoutInSeconds"] <= MAX_DEPLOYMENT_TIMEOUT_SECONDS


def test_the_default_is_a_10_percent_canary_for_10_minutes() -> None:
    change = build_change(PLANS["resize"], RANKER, 250.0)
    assert change is not None
    assert "10% canary for 10 minutes, then the rest" in _update(change).purpose
    linear = build_change(PLANS["resize"], RANKER, 250.0, LINEAR)
    assert linear is not None
    assert "4 linear steps of 25% of the capacity, 5 minutes apart" in _update(linear).purpose


def test_every_accepted_setting_gives_a_timeout_sagemaker_takes() -> None:
    """Over every value the keys accept: the config check refuses exactly the linear deployments
    SageMaker would refuse (timeout over 8 hours)."""
    model = SESSION.get_service_model("sagemaker").shape_for("MaximumExecutionTimeoutInSeconds").metadata
    assert (model["min"], model["max"]) == (600, MAX_DEPLOYMENT_TIMEOUT_SECONDS)
    wait_model = SESSION.get_service_model("sagemaker").shape_for("WaitIntervalInSeconds").metadata
    for wait in range(1, 61):
        assert wait_model["min"] <= wait * 60 <= wait_model["max"]
        for mode, sizes in (("canary", range(1, 51)), ("linear", range(10, 51))):
            for size in sizes:
                apply = ApplyConfig(traffic_shifting=mode, canary_percent=size if mode == "canary" else 10,
                                    linear_step_percent=size if mode == "linear" else 20, wait_interval_minutes=wait)
                text = (f'[apply]\ntraffic_shifting = "{mode}"\nwait_interval_minutes = {wait}\n'
                        f'{"canary_percent" if mode == "canary" else "linear_step_percent"} = {size}\n')
                fits = apply.deployment_timeout_seconds <= MAX_DEPLOYMENT_TIMEOUT_SECONDS
                if fits:
                    assert _config(text).apply == apply
                    assert apply.deployment_timeout_seconds > (apply.traffic_shifts * wait * 60
                                                               + TERMINATION_WAIT_SECONDS)
                else:
                    assert mode == "linear"
                    with pytest.raises(ConfigError) as refused:
                        _config(text)
                    message = str(refused.value)
                    assert "\n" not in message and "apply.wait_interval_minutes" in message
                    assert "apply.linear_step_percent" in message


@pytest.mark.parametrize(("text", "key"), [
    ('traffic_shifting = "blue-green"', "apply.traffic_shifting"),
    ("canary_percent = 0", "apply.canary_percent"),
    ("canary_percent = 51", "apply.canary_percent"),  # SageMaker: at most 50% of the fleet
    ("linear_step_percent = 9", "apply.linear_step_percent"),  # SageMaker: steps of 10-50%
    ("linear_step_percent = 51", "apply.linear_step_percent"),
    ("wait_interval_minutes = 0", "apply.wait_interval_minutes"),  # no baking period: no alarm can fire
    ("wait_interval_minutes = 61", "apply.wait_interval_minutes"),  # WaitIntervalInSeconds <= 3600
    ('wait_interval_minutes = "ten"', "apply.wait_interval_minutes"),
])
def test_each_out_of_bounds_setting_is_refused_in_one_line_naming_the_key(text: str, key: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _config(f"[apply]\n{text}\n")
    message = str(refused.value)
    assert "\n" not in message and key in message, message


def test_linear_is_read_in_any_case() -> None:
    assert _config('[apply]\ntraffic_shifting = "LINEAR"\n').apply.traffic_shifting == "linear"


def test_cloudformation_and_terraform_carry_the_linear_policy() -> None:
    the_plan = replace(PLANS["resize"], change=build_change(PLANS["resize"], RANKER, 250.0, LINEAR))
    data = plan_to_dict(the_plan)
    template = yaml.safe_load(render_change(data, "cloudformation"))
    (endpoint,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Endpoint"]
    deployment = endpoint["Properties"]["DeploymentConfig"]
    routing = deployment["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]
    assert routing == {"Type": "LINEAR", "WaitIntervalInSeconds": 300,
                       "LinearStepSize": {"Type": "CAPACITY_PERCENT", "Value": 25}}
    assert len(deployment["AutoRollbackConfiguration"]["Alarms"]) == 2
    hcl = render_change(data, "terraform")
    assert "traffic_routing_configuration {" in hcl and "linear_step_size {" in hcl
    assert 'type = "LINEAR"' in hcl and "wait_interval_in_seconds = 300" in hcl
    assert "canary_size" not in hcl
    cli = render_change(data, "cli")
    assert "4 linear steps of 25% of the capacity, 5 minutes apart" in cli


# --- rollback on the variant's existing alarms -----------------------------------------------------

FIVE_XX = RollbackAlarm("ranker-5xx-page", "AllTraffic", "Invocation5XXErrors")
MODEL_ERRORS = RollbackAlarm("ranker-model-errors", "AllTraffic", "InvocationModelErrors")
LATENCY = RollbackAlarm("ranker-p99", "AllTraffic", "ModelLatency")
OTHER_VARIANT = RollbackAlarm("canary-5xx", "Canary", "Invocation5XXErrors")


def _alarms(change) -> tuple[list[str], list[str]]:
    """(the alarms the deployment names, the metrics of the alarms the plan puts)."""
    named = [a["AlarmName"] for a in _update(change).params["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"]]
    put = [c.params["MetricName"] for c in change.calls if c.operation == "PutMetricAlarm"]
    return named, put


def test_existing_error_and_latency_alarms_replace_the_plans_own() -> None:
    ranker = replace(RANKER, rollback_alarms=(FIVE_XX, LATENCY, OTHER_VARIANT))
    change = build_change(PLANS["resize"], ranker, 250.0)
    assert change is not None
    named, put = _alarms(change)
    assert sorted(named) == ["ranker-5xx-page", "ranker-p99"] and put == []
    assert "the variant's own alarms ranker-5xx-page, ranker-p99" in _update(change).purpose
    assert "an alarm the plan defines" not in _update(change).purpose
    for call in change.calls:
        valid(call)


def test_an_existing_error_alarm_alone_keeps_the_plans_latency_alarm() -> None:
    ranker = replace(RANKER, rollback_alarms=(MODEL_ERRORS, OTHER_VARIANT))
    change = build_change(PLANS["resize"], ranker, 250.0)
    assert change is not None
    named, put = _alarms(change)
    assert put == ["ModelLatency"]
    assert named[0] == "ranker-model-errors" and named[1].endswith("-latency-p99") and len(named) == 2
    assert "an alarm the plan defines (ModelLatency)" in _update(change).purpose


def test_another_variants_alarms_do_not_count_and_unread_alarms_are_said() -> None:
    only_other = build_change(PLANS["resize"], replace(RANKER, rollback_alarms=(OTHER_VARIANT,)), 250.0)
    assert only_other is not None
    assert sorted(_alarms(only_other)[1]) == ["Invocation5XXErrors", "ModelLatency"]
    assert "not read" not in _update(only_other).purpose
    unread = build_change(PLANS["resize"], replace(RANKER, rollback_alarms=None), 250.0)
    assert unread is not None
    assert sorted(_alarms(unread)[1]) == ["Invocation5XXErrors", "ModelLatency"]
    assert "(the endpoint's alarms were not read)" in _update(unread).purpose


def test_at_most_ten_alarms_are_named_both_kinds_among_them() -> None:
    many = (*(RollbackAlarm(f"errors-{i:02}", "AllTraffic", "Invocation5XXErrors") for i in range(12)), LATENCY)
    change = build_change(PLANS["resize"], replace(RANKER, rollback_alarms=many), 250.0)
    assert change is not None
    named, put = _alarms(change)
    assert len(named) == 10 and "ranker-p99" in named and put == []
    valid(_update(change))


def _put(cloudwatch, name: str, metric: str, dimensions: dict[str, str], **extra) -> None:
    cloudwatch.put_metric_alarm(
        AlarmName=name, Namespace="AWS/SageMaker", MetricName=metric,
        Dimensions=[{"Name": k, "Value": v} for k, v in dimensions.items()], Statistic="Sum", Period=60,
        EvaluationPeriods=1, Threshold=1.0, ComparisonOperator="GreaterThanThreshold", **extra)


def test_discovery_reads_the_rollback_worthy_alarms_from_describe_alarms(aws) -> None:
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    variant = {"EndpointName": "ranker", "VariantName": "AllTraffic"}
    _put(cloudwatch, "ranker-5xx", "Invocation5XXErrors", variant)
    _put(cloudwatch, "ranker-latency", "ModelLatency", variant)
    _put(cloudwatch, "ranker-4xx", "Invocation4XXErrors", variant)  # the callers' errors: not a rollback signal
    _put(cloudwatch, "ranker-overhead", "OverheadLatency", variant)  # SageMaker's time, not the model's
    _put(cloudwatch, "ranker-one-instance", "Invocation5XXErrors", {**variant, "InstanceId": "i-0abc"})
    _put(cloudwatch, "ranker-endpoint-only", "Invocation5XXErrors", {"EndpointName": "ranker"})  # never published
    cloudwatch.put_metric_alarm(  # metric math over the variant's model errors
        AlarmName="ranker-error-rate", EvaluationPeriods=1, Threshold=0.01, ComparisonOperator="GreaterThanThreshold",
        Metrics=[
            {"Id": "errors", "ReturnData": False, "MetricStat": {"Metric": {
                "Namespace": "AWS/SageMaker", "MetricName": "InvocationModelErrors",
                "Dimensions": [{"Name": "EndpointName", "Value": "ranker"},
                               {"Name": "VariantName", "Value": "AllTraffic"}]}, "Period": 60, "Stat": "Sum"}},
            {"Id": "calls", "ReturnData": False, "MetricStat": {"Metric": {
                "Namespace": "AWS/SageMaker", "MetricName": "Invocations",
                "Dimensions": [{"Name": "EndpointName", "Value": "ranker"},
                               {"Name": "VariantName", "Value": "AllTraffic"}]}, "Period": 60, "Stat": "Sum"}},
            {"Id": "rate", "Expression": "errors / calls", "ReturnData": True},
        ])
    _put(cloudwatch, "other-5xx", "Invocation5XXErrors", {"EndpointName": "other", "VariantName": "v1"})
    found = discover_alarms(cloudwatch, "us-east-1")
    assert found.rollback["ranker"] == (
        RollbackAlarm("ranker-5xx", "AllTraffic", "Invocation5XXErrors"),
        RollbackAlarm("ranker-error-rate", "AllTraffic", "InvocationModelErrors"),
        RollbackAlarm("ranker-latency", "AllTraffic", "ModelLatency"),
    )
    assert found.rollback["other"] == (RollbackAlarm("other-5xx", "v1", "Invocation5XXErrors"),)


@pytest.fixture(scope="module")
def audited(emulator, tmp_path_factory) -> dict:
    specs = [s for s in demo_fleet() if s.name in {"search-embeddings", "image-tagger"}]

    def seed(emu) -> None:
        seed_fleet(emu, specs, now=utc_now())
        cloudwatch = boto3.client("cloudwatch", region_name="us-east-1", endpoint_url=emu.url)
        _put(cloudwatch, "search-5xx", "Invocation5XXErrors",
             {"EndpointName": "search-embeddings", "VariantName": "AllTraffic"})

    with seeded_emulator(emulator, tmp_path_factory.mktemp("home"), seed) as home:
        config = home / "auditor.toml"
        config.write_text('[apply]\ntraffic_shifting = "linear"\nlinear_step_percent = 50\n')
        out = home / "report.json"
        result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out),
                                     "--no-history"])
        assert result.exit_code == 0, result.output
        return json.loads(out.read_text())


def test_end_to_end_the_plan_rolls_back_on_the_endpoints_own_alarm(audited: dict) -> None:
    assert audited["summary"]["api_calls_by_operation"]["cloudwatch:DescribeAlarms"] == 1
    (search,) = [p for p in audited["plans"] if p["resource"]["name"] == "search-embeddings"]
    calls = search["change"]["calls"]
    (update,) = [c for c in calls if c["operation"] == "UpdateEndpoint"]
    deployment = update["params"]["DeploymentConfig"]
    names = [a["AlarmName"] for a in deployment["AutoRollbackConfiguration"]["Alarms"]]
    assert "search-5xx" in names
    assert deployment["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]["LinearStepSize"]["Value"] == 50
    assert "the variant's own alarms search-5xx" in update["purpose"]
    assert [c["params"]["MetricName"] for c in calls if c["operation"] == "PutMetricAlarm"] == ["ModelLatency"]
    # An endpoint without alarms of its own: the plan defines them, as before.
    (tagger,) = [p for p in audited["plans"] if p["resource"]["name"] == "image-tagger"]
    (update,) = [c for c in tagger["change"]["calls"] if c["operation"] == "UpdateEndpoint"]
    assert "an alarm the plan defines (Invocation5XXErrors, ModelLatency)" in update["purpose"]
    assert "own alarms" not in update["purpose"]


def test_the_apply_sections_keys_are_documented_with_their_bounds() -> None:
    page = (Path(__file__).parent.parent / "docs" / "configuration.md").read_text()
    for line in ("canary_percent = 10", "linear_step_percent = 20", "wait_interval_minutes = 10",
                 'traffic_shifting = "canary"'):
        assert line in page


def test_the_snippets_refer_to_the_alarms_they_declare_and_name_existing_ones() -> None:
    """CloudFormation and Terraform create what a snippet declares in the order of its references:
    the endpoint refers to the plan's own alarm (so it exists before the deployment starts), and
    names the variant's existing alarm as it is."""
    ranker = replace(RANKER, rollback_alarms=(MODEL_ERRORS,))
    data = plan_to_dict(replace(PLANS["resize"], change=build_change(PLANS["resize"], ranker, 250.0)))
    template = yaml.safe_load(render_change(data, "cloudformation"))
    resources = template["Resources"]
    (alarm_id,) = [k for k, r in resources.items() if r["Type"] == "AWS::CloudWatch::Alarm"]
    (endpoint,) = [r for r in resources.values() if r["Type"] == "AWS::SageMaker::Endpoint"]
    assert endpoint["Properties"]["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"] == [
        {"AlarmName": "ranker-model-errors"}, {"AlarmName": {"Ref": alarm_id}}]
    hcl = render_change(data, "terraform")
    (alarm_resource,) = [line.split('"')[3] for line in hcl.splitlines()
                         if line.startswith('resource "aws_cloudwatch_metric_alarm"')]
    assert f"alarm_name = aws_cloudwatch_metric_alarm.{alarm_resource}.alarm_name" in hcl
    assert 'alarm_name = "ranker-model-errors"' in hcl
    # The stored plan keeps plain names (what `audit apply` sends).
    assert {a["AlarmName"] for c in data["change"]["calls"] if c["operation"] == "UpdateEndpoint"
            for a in c["params"]["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"]} == {
        "ranker-model-errors", f"ranker-AllTraffic-{data['id']}-latency-p99"}
