"""A plan's change: the AWS requests (valid against botocore's service models), their text forms,
and `audit plans` reading them back from the history database after a run against the emulator."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import boto3
import botocore.session
import pytest
import yaml
from botocore.validate import ParamValidator
from typer.testing import CliRunner

from auditor.cli import app
from auditor.kinds.endpoints.change import CREATE_CONFIG_FIELDS, build_change
from auditor.models import ApiCall, Plan, PlanOption, ResourceRef
from auditor.recommend.change import plan_id
from auditor.records import plan_to_dict
from auditor.report.change_text import render_change
from auditor_emulator.fleet import demo_fleet, seed_fleet
from auditor_emulator.server import ACCOUNT_ID
from conftest import seeded_emulator, utc_now
from helpers import endpoint

runner = CliRunner()
SESSION = botocore.session.get_session()
HOSTILE = "it's $(rm -rf ~) ${var} %{x}\nnext line \"quoted\""
DESCRIPTION = {
    "EndpointConfigName": "ranker-config",
    "EndpointConfigArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/ranker-config",
    "CreationTime": "2026-11-01T00:00:00+00:00",
    "ProductionVariants": [
        {"VariantName": "AllTraffic", "ModelName": "ranker-v2", "InstanceType": "ml.m5.4xlarge",
         "InitialInstanceCount": 4, "InitialVariantWeight": 1.0, "VolumeSizeInGB": 30,
         "ContainerStartupHealthCheckTimeoutInSeconds": 600},
        {"VariantName": "Canary", "ModelName": "ranker-v3", "InstanceType": "ml.m5.xlarge",
         "InitialInstanceCount": 1, "InitialVariantWeight": 0.1},
    ],
    "DataCaptureConfig": {"EnableCapture": True, "InitialSamplingPercentage": 20,
                          "DestinationS3Uri": "s3://captures/ranker/", "KmsKeyId": "alias/capture",
                          "CaptureOptions": [{"CaptureMode": "Input"}, {"CaptureMode": "Output"}]},
    "KmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "Tags": [{"Key": "team", "Value": HOSTILE}],
}


def valid(call: ApiCall) -> None:
    shape = SESSION.get_service_model(call.service).operation_model(call.operation).input_shape
    report = ParamValidator().validate(call.params, shape)
    assert not report.has_errors(), f"{call.operation}: {report.generate_report()}"


def plan(action: str, instance_type: str | None = "ml.m5.xlarge", count: int = 3, variant: str | None = "AllTraffic",
         autoscaling: dict | None = None, details: dict | None = None) -> Plan:
    option = PlanOption(("underutilized",), action, instance_type, count, autoscaling, 500.0, 1500.0, "advice",
                        details or {})
    made = Plan(ResourceRef("endpoints", "endpoint", "ranker", "123456789012", "us-east-1"), variant, "ml.m5.4xlarge",
                4, 2000.0, option)
    return replace(made, id=plan_id(made))


RANKER = replace(endpoint("ranker"), config_name="ranker-config", config_description=DESCRIPTION)
POLICY = {"PolicyType": "TargetTrackingScaling", "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance",
          "TargetValue": 120.5, "MinCapacity": 2, "MaxCapacity": 5}
PLANS = {
    "resize": plan("resize"),
    "resize+autoscale": plan("resize+autoscale", count=2, autoscaling=POLICY),
    "autoscale": plan("autoscale", "ml.m5.4xlarge", 2, autoscaling=POLICY),
    "delete": plan("delete", None, 0, variant=None),
    "serverless": plan("serverless", None, 0, details={"memory_size_mb": 2048, "max_concurrency": 7}),
    "remove-variant": plan("remove-variant", "ml.m5.xlarge", 0, variant="Canary"),
}


def test_the_copied_config_keeps_every_field_the_create_call_takes() -> None:
    model = SESSION.get_service_model("sagemaker")
    takes = set(model.operation_model("CreateEndpointConfig").input_shape.members)
    described = set(model.operation_model("DescribeEndpointConfig").output_shape.members)
    assert set(CREATE_CONFIG_FIELDS) == (takes & described) - {"EndpointConfigName"}


@pytest.mark.parametrize("action", sorted(PLANS))
def test_every_change_request_validates_against_botocore(action: str) -> None:
    change = build_change(PLANS[action], RANKER, latency_threshold_ms=250.0)
    assert change is not None and change.calls and change.rollback
    for call in change.calls:
        valid(call)


def test_a_resize_copies_the_config_and_changes_only_the_variant() -> None:
    the_plan = PLANS["resize"]
    change = build_change(the_plan, RANKER, latency_threshold_ms=250.0)
    assert change is not None
    create, errors_alarm, latency_alarm, update = (change.calls[0], *sorted(change.calls[1:3],
                                                   key=lambda c: c.params["MetricName"]), change.calls[3])
    assert [c.operation for c in change.calls] == ["CreateEndpointConfig", "PutMetricAlarm", "PutMetricAlarm",
                                                   "UpdateEndpoint"]
    body = create.params
    assert body["EndpointConfigName"] == f"ranker-{the_plan.id}"
    assert re.fullmatch(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", body["EndpointConfigName"])
    for key in ("DataCaptureConfig", "KmsKeyId"):
        assert body[key] == DESCRIPTION[key]
    # The config's tags, and the plan's own (IAM conditions creates on it; leftovers are found by it).
    assert body["Tags"] == [*DESCRIPTION["Tags"], {"Key": "auditor:plan", "Value": the_plan.id}]
    changed, canary = body["ProductionVariants"]
    assert changed == {**DESCRIPTION["ProductionVariants"][0], "InstanceType": "ml.m5.xlarge",
                       "InitialInstanceCount": 3}
    assert canary == DESCRIPTION["ProductionVariants"][1]
    assert "EndpointConfigArn" not in body and "CreationTime" not in body
    policy = update.params["DeploymentConfig"]
    routing = policy["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]
    assert routing["Type"] == "CANARY" and routing["CanarySize"] == {"Type": "CAPACITY_PERCENT", "Value": 10}
    assert {a["AlarmName"] for a in policy["AutoRollbackConfiguration"]["Alarms"]} == {
        latency_alarm.params["AlarmName"], errors_alarm.params["AlarmName"]}
    assert latency_alarm.params["ExtendedStatistic"] == "p99"
    assert latency_alarm.params["Threshold"] == 250_000.0  # ModelLatency is in microseconds
    assert change.waits_for == "endpoint ranker InService"


def test_without_a_latency_figure_the_5xx_alarm_alone_guards_the_deployment() -> None:
    change = build_change(PLANS["resize"], RANKER, latency_threshold_ms=None)
    assert change is not None
    assert [c.params.get("MetricName") for c in change.calls if c.operation == "PutMetricAlarm"] == [
        "Invocation5XXErrors"]


def test_a_delete_keeps_the_config_and_says_how_to_recreate_it() -> None:
    change = build_change(PLANS["delete"], RANKER, None)
    assert change is not None
    assert [(c.operation, c.params) for c in change.calls] == [("DeleteEndpoint", {"EndpointName": "ranker"})]
    assert "CreateEndpoint EndpointName=ranker EndpointConfigName=ranker-config" in change.rollback


def test_autoscaling_plans_register_the_target_and_put_the_policy() -> None:
    change = build_change(PLANS["resize+autoscale"], RANKER, None)
    assert change is not None
    ops = [c.operation for c in change.calls]
    assert ops[-2:] == ["RegisterScalableTarget", "PutScalingPolicy"]
    create = change.calls[0].params["ProductionVariants"][0]
    assert create["InitialInstanceCount"] == 5  # the new fleet starts at MaxCapacity; the policy scales it in
    target = change.calls[-2].params
    assert (target["MinCapacity"], target["MaxCapacity"]) == (2, 5)
    assert change.calls[-1].params["TargetTrackingScalingPolicyConfiguration"]["TargetValue"] == 120.5


def test_an_autoscaled_variant_is_deregistered_before_its_instance_type_changes() -> None:
    from auditor.kinds.endpoints.models import AutoScaling, Variant

    scaled = replace(RANKER, variants=(Variant("AllTraffic", "ml.m5.4xlarge", 4,
                                               autoscaling=AutoScaling(2, 6, ("ranker-invocations",))),))
    change = build_change(PLANS["resize"], scaled, 250.0)
    assert change is not None
    ops = [c.operation for c in change.calls]
    # Made first (the config, the alarms), then the protection removed just before the update.
    assert ops == ["CreateEndpointConfig", "PutMetricAlarm", "PutMetricAlarm", "DeregisterScalableTarget",
                   "UpdateEndpoint", "RegisterScalableTarget"]
    assert (change.calls[-1].params["MinCapacity"], change.calls[-1].params["MaxCapacity"]) == (2, 6)
    assert "ranker-invocations" in change.calls[-1].purpose  # to re-create by hand: its settings are not read
    for call in change.calls:
        valid(call)
    # The same type, another count: nothing to deregister.
    same = build_change(replace(PLANS["resize"], proposed=replace(PLANS["resize"].proposed,
                                                                  instance_type="ml.m5.4xlarge")), scaled, None)
    assert same is not None and "DeregisterScalableTarget" not in [c.operation for c in same.calls]


def test_no_change_without_the_current_config_or_for_a_job() -> None:
    assert build_change(PLANS["resize"], replace(RANKER, config_description=None), None) is None
    job = replace(PLANS["resize"].resource, kind="jobs", type="training-job")
    assert build_change(replace(PLANS["resize"], resource=job), RANKER, None) is None


def test_cli_text_quotes_every_value_and_round_trips_the_requests() -> None:
    the_plan = replace(PLANS["resize"], change=build_change(PLANS["resize"], RANKER, 250.0))
    data = plan_to_dict(the_plan)
    text = render_change(data, "cli")
    commands = [line for line in text.splitlines() if line.startswith("aws ")]
    requests = [c for c in commands if "--cli-input-json" in c]
    assert len(requests) == 4
    first = shlex.split(requests[0])
    assert first[:3] == ["aws", "sagemaker", "create-endpoint-config"]
    assert json.loads(first[first.index("--cli-input-json") + 1]) == data["change"]["calls"][0]["params"]
    assert all(line.startswith(("#", "aws ")) for line in text.splitlines())  # no value broke out of a comment


def test_cloudformation_and_terraform_snippets() -> None:
    the_plan = replace(PLANS["resize+autoscale"], change=build_change(PLANS["resize+autoscale"], RANKER, 250.0))
    data = plan_to_dict(the_plan)
    template = yaml.safe_load(render_change(data, "cloudformation"))
    types = sorted(r["Type"] for r in template["Resources"].values())
    assert types == ["AWS::ApplicationAutoScaling::ScalableTarget", "AWS::ApplicationAutoScaling::ScalingPolicy",
                     "AWS::CloudWatch::Alarm", "AWS::CloudWatch::Alarm", "AWS::SageMaker::Endpoint",
                     "AWS::SageMaker::EndpointConfig"]
    config = next(r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::EndpointConfig")
    assert config["Properties"]["Tags"][0] == {"Key": "team", "Value": HOSTILE}  # the value intact, not markup
    hcl = render_change(data, "terraform")
    assert 'resource "aws_sagemaker_endpoint_configuration"' in hcl
    assert 'resource "aws_appautoscaling_policy"' in hcl
    assert "$${var}" in hcl and "%%{x}" in hcl and "${var}" not in hcl.replace("$${var}", "")


@pytest.fixture(scope="module")
def fleet_home(emulator, tmp_path_factory) -> Iterator[Path]:
    wanted = {"search-embeddings", "image-tagger", "churn-model-legacy", "internal-reports", "ab-ranker"}
    specs = [s for s in demo_fleet() if s.name in wanted]
    with seeded_emulator(emulator, tmp_path_factory.mktemp("home"),
                         lambda emu: seed_fleet(emu, specs, now=utc_now())) as home:
        # The config a plan copies, with the fields the copy must keep and a tag.
        sagemaker = boto3.client("sagemaker", region_name="us-east-1", endpoint_url=emulator.url)
        current = sagemaker.describe_endpoint_config(EndpointConfigName="search-embeddings-config")
        sagemaker.delete_endpoint_config(EndpointConfigName="search-embeddings-config")
        sagemaker.create_endpoint_config(
            EndpointConfigName="search-embeddings-config", ProductionVariants=current["ProductionVariants"],
            DataCaptureConfig=DESCRIPTION["DataCaptureConfig"], KmsKeyId=DESCRIPTION["KmsKeyId"],
            Tags=[{"Key": "team", "Value": "search"}])
        # Made again now, it would be a config the endpoint started on just now (nothing to judge
        # yet): it keeps the creation time of the long-running config it stands for.
        backend = emulator.backend("sagemaker", "us-east-1", ACCOUNT_ID)
        backend.endpoint_configs["search-embeddings-config"].creation_time = current["CreationTime"]
        yield home


@pytest.fixture(scope="module")
def config(fleet_home: Path) -> str:
    """One history database for the module (each test has a data home of its own)."""
    path = fleet_home / "auditor.toml"
    path.write_text(f"[history]\npath = {json.dumps(str(fleet_home / 'history.sqlite3'))}\n")
    return str(path)


@pytest.fixture(scope="module")
def report(fleet_home: Path, config: str) -> dict:
    out = fleet_home / "report.json"
    result = runner.invoke(app, ["run", "--config", config, "--format", "json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def test_every_endpoint_plan_shows_its_risk_and_change(report: dict) -> None:
    assert report["schema_version"] == 9
    endpoint_plans = [p for p in report["plans"] if p["resource"]["type"] == "endpoint"]
    assert {p["resource"]["name"] for p in endpoint_plans} >= {"search-embeddings", "churn-model-legacy",
                                                               "internal-reports"}
    for p in endpoint_plans:
        assert re.fullmatch(r"[0-9a-f]{10}", p["id"])
        assert p["risk"]["level"] in ("low", "medium", "high"), p
        assert p["change"] and p["change"]["calls"], p
        for call in p["change"]["calls"]:
            valid(ApiCall(call["service"], call["operation"], call["params"], call["purpose"]))
        # Each alternative carries its own change (audit apply --option N), valid too, and never
        # names a resource the proposed option's change creates.
        created = {c["params"].get("EndpointConfigName") for c in p["change"]["calls"]
                   if c["operation"] == "CreateEndpointConfig"}
        for alternative in p["alternatives"]:
            assert set(alternative) >= {"measured", "risk", "change"}, alternative
            for call in (alternative["change"] or {}).get("calls", []):
                valid(ApiCall(call["service"], call["operation"], call["params"], call["purpose"]))
                if call["operation"] == "CreateEndpointConfig":
                    assert call["params"]["EndpointConfigName"] not in created
    assert any(a["change"] for p in endpoint_plans for a in p["alternatives"])
    search = next(p for p in endpoint_plans if p["resource"]["name"] == "search-embeddings")
    create = search["change"]["calls"][0]
    assert create["operation"] == "CreateEndpointConfig"
    assert create["params"]["DataCaptureConfig"]["DestinationS3Uri"] == "s3://captures/ranker/"
    assert create["params"]["KmsKeyId"] == DESCRIPTION["KmsKeyId"]
    # The config's tags are not read by the audit (a ListTags a config): apply copies them; the
    # plan's own tag is in the request.
    assert create["params"]["Tags"] == [{"Key": "auditor:plan", "Value": search["id"]}]
    assert "tags are copied from" in create["purpose"]
    assert {r["resource"] for r in search["risk"]["replays"]} == {"cpu", "memory"}


def test_audit_plans_lists_the_latest_runs_plans_from_the_history(report: dict, config: str) -> None:
    listed = runner.invoke(app, ["plans", "--config", config, "--format", "json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout) == report["plans"]
    table = runner.invoke(app, ["plans", "--config", config])
    assert table.exit_code == 0, table.output
    for p in report["plans"]:
        assert p["id"] in table.output


@pytest.mark.parametrize("as_", ["cli", "cloudformation", "terraform", "json"])
def test_audit_plans_show_prints_the_change(report: dict, config: str, as_: str) -> None:
    search = next(p for p in report["plans"] if p["resource"]["name"] == "search-embeddings")
    result = runner.invoke(app, ["plans", "show", search["id"], "--as", as_, "--config", config])
    assert result.exit_code == 0, result.output
    if as_ == "json":
        assert json.loads(result.stdout)["change"] == search["change"]
    elif as_ == "cloudformation":
        assert "AWS::SageMaker::EndpointConfig" in yaml.safe_load(result.stdout)["Resources"][
            next(iter(yaml.safe_load(result.stdout)["Resources"]))]["Type"]
    else:
        assert search["id"] in result.output


def test_audit_plans_show_an_unknown_id_is_one_error_line(report: dict, config: str) -> None:
    result = runner.invoke(app, ["plans", "show", "0000000000", "--config", config])
    assert result.exit_code == 1
    assert "no plan '0000000000'" in result.output and "Traceback" not in result.output


def test_audit_apply_an_unknown_hostile_id_is_one_error_line(report: dict, config: str) -> None:
    result = runner.invoke(app, ["apply", "0000\nx[/b]", "--config", config])
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no plan 0000 x[/b] in the history" in errors[0], result.output


def test_the_history_keeps_each_runs_plans_and_finds_a_plan_by_id(tmp_path: Path) -> None:
    import sqlite3
    from datetime import timedelta

    from auditor.history.store import MIGRATIONS, History
    from fleet_report import synthetic_report

    path = tmp_path / "history.sqlite3"
    old = sqlite3.connect(path)  # a database from before plans were kept: upgraded in place
    old.executescript("".join(MIGRATIONS[:4]) + "; PRAGMA user_version = 4;")
    old.close()
    first = synthetic_report(count=12)
    later = replace(first, generated_at=first.generated_at + timedelta(days=1), plans=first.plans[1:])
    assert first.plans and all(p.id for p in first.plans)
    with History(path) as history:
        history.record_run(first)
        history.record_run(later)
        assert history.latest_plans() == json.loads(json.dumps([plan_to_dict(p) for p in later.plans]))
        gone = first.plans[0]  # only in the first run: still found by its id
        assert history.plan(gone.id) == json.loads(json.dumps(plan_to_dict(gone)))
        assert history.plan("no-such-id") is None
