"""Every change a plan emits as text is valid for its tool: the Terraform against hashicorp/aws
5.100.0's own schema (tests/terraform_schema.py: every block and argument where it is written,
required ones present, attributes and blocks as the schema types them), the CloudFormation
cfn-lint clean. Over every plan (and alternative) of the demo fleet audited once, and over
hand-built changes of each kind of action."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import ApplyConfig
from auditor.kinds.endpoints.change import build_change
from auditor.kinds.endpoints.models import AutoScaling, InferenceComponent, ManagedScaling, Variant
from auditor.kinds.endpoints.rules.no_queue_alarm import queue_alarm_change
from auditor.kinds.endpoints.rules.off_hours import OffPeriod, off_hours_change
from auditor.models import Plan, PlanOption, ResourceRef
from auditor.recommend.change import plan_id
from auditor.recommend.rule_changes import change_from_details
from auditor.records import change_to_dict, plan_to_dict
from auditor.report.change_text import render_change
from auditor_emulator.fleet import demo_fleet, demo_jobs, seed_fleet, seed_jobs
from auditor_emulator.hyperpod import demo_clusters, seed_hyperpod
from auditor_emulator.workspaces import demo_notebooks, demo_processing, seed_workspaces
from cfn_lint_snippets import lint_all
from conftest import seeded_emulator, utc_now
from helpers import endpoint, resource_json
from terraform_schema import SCHEMA, problems, resources, string_value

runner = CliRunner()
ROLE = "arn:aws:iam::{account_id}:role/auditor-off-hours"
TOPIC = "arn:aws:sns:us-east-1:123456789012:ml-alarms"
# A config with every field a copy carries, in the shapes DescribeEndpointConfig answers.
DESCRIPTION: dict[str, Any] = {
    "EndpointConfigName": "ranker-config",
    "EndpointConfigArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/ranker-config",
    "ProductionVariants": [
        {"VariantName": "AllTraffic", "ModelName": "ranker-v2", "InstanceType": "ml.m5.4xlarge",
         "InitialInstanceCount": 4, "InitialVariantWeight": 1.0, "VolumeSizeInGB": 30,
         "ContainerStartupHealthCheckTimeoutInSeconds": 600, "ModelDataDownloadTimeoutInSeconds": 900,
         "EnableSSMAccess": False, "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"},
         "CoreDumpConfig": {"DestinationS3Uri": "s3://dumps/ranker/", "KmsKeyId": "alias/dumps"},
         "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 6},
         "InferenceAmiVersion": "al2-ami-sagemaker-inference-gpu-2"},
        {"VariantName": "Canary", "ModelName": "ranker-v3", "InstanceType": "ml.m5.xlarge",
         "InitialInstanceCount": 1, "InitialVariantWeight": 0.1},
    ],
    "ShadowProductionVariants": [
        {"VariantName": "Shadow", "ModelName": "ranker-v4", "InstanceType": "ml.m5.xlarge",
         "InitialInstanceCount": 1, "InitialVariantWeight": 0.5},
    ],
    "DataCaptureConfig": {"EnableCapture": True, "InitialSamplingPercentage": 20,
                          "DestinationS3Uri": "s3://captures/ranker/", "KmsKeyId": "alias/capture",
                          "CaptureOptions": [{"CaptureMode": "Input"}, {"CaptureMode": "Output"}],
                          "CaptureContentTypeHeader": {"CsvContentTypes": ["text/csv"],
                                                       "JsonContentTypes": ["application/json"]}},
    "KmsKeyId": "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "AsyncInferenceConfig": {"ClientConfig": {"MaxConcurrentInvocationsPerInstance": 4},
                             "OutputConfig": {"S3OutputPath": "s3://async/out/", "S3FailurePath": "s3://async/fail/",
                                              "NotificationConfig": {"SuccessTopic": TOPIC, "ErrorTopic": TOPIC}}},
    # Fields hashicorp/aws 5.100.0 has no argument for: left out of the Terraform, and said so.
    "MetricsConfig": {"EnableEnhancedMetrics": True},
    "EnableNetworkIsolation": True,
    "Tags": [{"Key": "team", "Value": "search"}],
}
POLICY = {"PolicyType": "TargetTrackingScaling", "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance",
          "TargetValue": 120.5, "MinCapacity": 2, "MaxCapacity": 5}
RANKER = replace(endpoint("ranker"), config_name="ranker-config", config_description=DESCRIPTION)
AUTOSCALED = replace(RANKER, variants=(
    Variant("AllTraffic", "ml.m5.4xlarge", 4, autoscaling=AutoScaling(2, 6, ("ranker-invocations",))),
    Variant("Canary", "ml.m5.xlarge", 1)))
SERVERLESS = replace(RANKER, config_description={
    **DESCRIPTION, "ProductionVariants": [
        {"VariantName": "AllTraffic", "ModelName": "ranker-v2",
         "ServerlessConfig": {"MemorySizeInMB": 4096, "MaxConcurrency": 5, "ProvisionedConcurrency": 1}}],
    "ShadowProductionVariants": []})


def _plan(action: str, instance_type: str | None = "ml.m5.xlarge", count: int = 3, variant: str | None = "AllTraffic",
          autoscaling: dict | None = None, details: dict | None = None) -> Plan:
    option = PlanOption(("underutilized",), action, instance_type, count, autoscaling, 500.0, 1500.0, "advice",
                        details or {})
    made = Plan(ResourceRef("endpoints", "endpoint", "ranker", "123456789012", "us-east-1"), variant, "ml.m5.4xlarge",
                4, 2000.0, option, endpoint_config="ranker-config")
    return replace(made, id=plan_id(made))


def _built(action: str, *args: Any, on: Any = RANKER, apply: ApplyConfig | None = None,
           **kwargs: Any) -> dict[str, Any]:
    the_plan = _plan(action, *args, **kwargs)
    change = build_change(the_plan, on, 250.0, apply)
    assert change is not None, action
    return plan_to_dict(replace(the_plan, change=change))


def _rule_plan(details: dict[str, Any], name: str = "ranker") -> dict[str, Any]:
    """A plan dict carrying a rule's change (off-hours, queue alarms), as plan_to_dict writes one."""
    change = change_from_details(details)
    assert change is not None, details
    return {"id": "0123abcdef", "resource": resource_json(name), "variant": None,
            "current": {"endpoint_config_name": f"{name}-config"},
            "proposed": {"action": "off-hours", "advice": "advice"}, "risk": {"level": "low"},
            "change": change_to_dict(change)}


# A config whose variant hosts inference components: no ModelName, which the provider requires.
COMPONENT_CONFIG = replace(RANKER, config_description={
    "EndpointConfigName": "ranker-config", "ProductionVariants": [
        {"VariantName": "AllTraffic", "InstanceType": "ml.m5.4xlarge", "InitialInstanceCount": 4,
         "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": 4},
         "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}}],
    "ExecutionRoleArn": "arn:aws:iam::123456789012:role/sagemaker"})
CONSOLIDATING = {"Status": "ENABLED", "MinInstanceCount": 2, "MaxInstanceCount": 4,
                 "ScaleInPolicy": {"Strategy": "CONSOLIDATION"}}
COMPONENTS = replace(endpoint("llm"), autoscaling_known=True, inference_components=(
    InferenceComponent("llm-ic", "AllTraffic", "InService", copy_count=2),
    InferenceComponent("llm-ic-2", "AllTraffic", "InService", copy_count=1)),
    variants=(replace(Variant("AllTraffic", "ml.g5.2xlarge", 2), managed_scaling=ManagedScaling(0, 4)),))
HAND_BUILT = {
    "resize": lambda: _built("resize"),
    "resize-linear": lambda: _built("resize", apply=ApplyConfig(traffic_shifting="linear")),
    "scale-out": lambda: _built("scale-out", "ml.m5.4xlarge", 6),
    "resize-autoscaled": lambda: _built("resize", on=AUTOSCALED),
    "resize+autoscale": lambda: _built("resize+autoscale", count=2, autoscaling=POLICY),
    "resize+autoscale-autoscaled": lambda: _built("resize+autoscale", on=AUTOSCALED, count=2, autoscaling=POLICY),
    "autoscale": lambda: _built("autoscale", "ml.m5.4xlarge", 2, autoscaling=POLICY),
    "delete": lambda: _built("delete", None, 0, variant=None),
    "serverless": lambda: _built("serverless", None, 0, details={"memory_size_mb": 2048, "max_concurrency": 7}),
    "resize-components": lambda: _built("resize", on=COMPONENT_CONFIG),
    "resize-memory": lambda: _built("resize-memory", None, 0, on=SERVERLESS, details={"memory_size_mb": 2048}),
    "remove-variant": lambda: _built("remove-variant", "ml.m5.xlarge", 0, variant="Canary"),
    "end-shadow-test": lambda: _built("end-shadow-test", None, 0, variant="Shadow"),
    "off-hours": lambda: _rule_plan(off_hours_change(
        replace(RANKER, tags={"owner": "ml@example.com", "aws:cloudformation:stack-name": "s"}),
        (OffPeriod(18, 14), OffPeriod(42, 14)), 60, ROLE)),
    "off-hours-components": lambda: _rule_plan(off_hours_change(COMPONENTS, (OffPeriod(18, 14),), 60, None), "llm"),
    "queue-alarms": lambda: _rule_plan(queue_alarm_change(RANKER, 600.0, TOPIC)),
    # Native consolidation (design C3): on a component config, and turning managed scaling on for a model's.
    "managed-scaling": lambda: _built("managed-scaling", "ml.m5.4xlarge", 2, on=COMPONENT_CONFIG,
                                      details={"managed_instance_scaling": CONSOLIDATING}),
    "managed-scaling-on": lambda: _built("managed-scaling", "ml.m5.xlarge", 1, variant="Canary",
                                         details={"managed_instance_scaling": CONSOLIDATING}),
}


@pytest.mark.parametrize("kind", sorted(HAND_BUILT))
def test_hand_built_terraform_is_valid_for_the_provider(kind: str) -> None:
    text = render_change(HAND_BUILT[kind](), "terraform")
    assert problems(text) == [], text
    assert resources(text) or kind == "delete", text  # something is declared: the check is not vacuous


def test_hand_built_cloudformation_is_cfn_lint_clean(tmp_path: Path) -> None:
    snippets = {kind: render_change(build(), "cloudformation") for kind, build in HAND_BUILT.items()}
    assert lint_all(snippets, tmp_path) == {}
    assert all(yaml.safe_load(s)["Resources"] for kind, s in snippets.items() if kind != "delete"), snippets


def test_a_resize_endpoint_names_its_new_config_at_the_top_level() -> None:
    text = render_change(HAND_BUILT["resize"](), "terraform")
    ((_, _, endpoint_body),) = [r for r in resources(text) if r[0] == "aws_sagemaker_endpoint"]
    (config_name,) = [name for kind, name, _ in resources(text) if kind == "aws_sagemaker_endpoint_configuration"]
    assert endpoint_body["endpoint_config_name"] == f"${{aws_sagemaker_endpoint_configuration.{config_name}.name}}"
    (deployment,) = endpoint_body["deployment_config"]
    assert set(deployment) - {"__is_block__"} == {"blue_green_update_policy", "auto_rollback_configuration"}
    (rollback,) = deployment["auto_rollback_configuration"]
    assert [a["alarm_name"] for a in rollback["alarms"]] == [
        f"${{aws_cloudwatch_metric_alarm.{n}.alarm_name}}" for k, n, _ in resources(text)
        if k == "aws_cloudwatch_metric_alarm"]


def test_fields_the_provider_has_no_argument_for_are_named_not_dropped_silently() -> None:
    text = render_change(HAND_BUILT["resize"](), "terraform")
    assert "metrics_config" not in text and "enable_network_isolation" not in text
    (line,) = [line for line in text.splitlines() if "MetricsConfig" in line]
    assert line.startswith("# ") and "EnableNetworkIsolation" in line and "5.100.0" in line
    ((_, _, config),) = [r for r in resources(text) if r[0] == "aws_sagemaker_endpoint_configuration"]
    assert {string_value(v["variant_name"]) for v in config["production_variants"]} == {"AllTraffic", "Canary"}
    assert string_value(config["tags"]['"team"']) == "search"


def test_a_config_the_provider_cannot_declare_is_said_and_the_endpoint_names_it() -> None:
    text = render_change(HAND_BUILT["resize-components"](), "terraform")
    (line,) = [line for line in text.splitlines() if "not declared" in line]
    assert line.startswith("# CreateEndpointConfig: not declared: hashicorp/aws 5.100.0's "
                           "aws_sagemaker_endpoint_configuration requires an argument the request lacks "
                           "(ProductionVariants has no ModelName)")
    assert "aws_sagemaker_endpoint_configuration" not in {kind for kind, _, _ in resources(text)}
    ((_, _, endpoint_body),) = [r for r in resources(text) if r[0] == "aws_sagemaker_endpoint"]
    assert string_value(endpoint_body["endpoint_config_name"]).startswith("ranker-")  # the config by its name


def test_the_checker_refuses_what_terraform_validate_refuses() -> None:
    """The schema walk itself: each kind of mistake is found (a check that cannot fail proves nothing)."""
    bad = '''resource "aws_sagemaker_endpoint" "e" {
  name = "ranker"
  deployment_config {
    endpoint_config_name = "x"
  }
  tags {
    team = "a"
  }
  bogus = 1
}
resource "aws_sagemaker_endpoint_configuration" "c" {
  metrics_config {
    enable_enhanced_metrics = true
  }
  production_variants {
    variant_name = "v"
    initial_instance_count = "3"
    serverless_config = {}
  }
  name = "a${var.b}"
}
resource "aws_nothing" "n" {
}
'''
    found = "\n".join(problems(bad))
    for expected in ("deployment_config[0].endpoint_config_name: not an argument",
                     "aws_sagemaker_endpoint.e: the required argument endpoint_config_name is missing",
                     "aws_sagemaker_endpoint.e.tags: an attribute written as a block",
                     "aws_sagemaker_endpoint.e.bogus: not an argument",
                     "metrics_config: not an argument",
                     "the required argument model_name is missing",
                     "initial_instance_count: a number attribute",
                     "serverless_config: a nested block written as an attribute",
                     "unescaped template sequence",
                     "aws_nothing.n: not a resource type"):
        assert expected in found, found
    assert problems('resource "aws_sagemaker_endpoint" "e" {\n  endpoint_config_name = "a$${b} %%{c}"\n}\n') == []


# --- every plan of the demo fleet ----------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_plans(emulator, tmp_path_factory) -> Iterator[list[dict[str, Any]]]:
    """The demo fleet (endpoints, jobs, notebooks, HyperPod) audited once, with the settings the
    off-hours schedules and queue alarms need: every plan, and each alternative as a plan of its own."""
    home = tmp_path_factory.mktemp("forms")
    now = utc_now()

    def seed(emu) -> None:
        seed_fleet(emu, demo_fleet(), now=now)
        seed_jobs(emu, *demo_jobs(), now=now)
        seed_workspaces(emu, demo_notebooks(), demo_processing(), now=now)
        seed_hyperpod(emu, demo_clusters(), now=now)

    with seeded_emulator(emulator, home, seed):
        config = home / "auditor.toml"
        config.write_text(f'[aws]\nregions = ["us-east-1"]\n[history]\npath = {json.dumps(str(home / "h.db"))}\n'
                          f'[apply]\nalarm_topic_arn = "{TOPIC}"\n'
                          f'[rules.off-hours]\nscheduler_role_arn = "{ROLE}"\n')
        out = home / "report.json"
        result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out)])
        assert result.exit_code == 0, result.output
        plans = json.loads(out.read_text())["plans"]
        every = list(plans)
        for p in plans:
            for index, alternative in enumerate(p["alternatives"], 1):
                if alternative.get("change"):
                    every.append({**p, "id": f"{p['id']}-alt{index}", "change": alternative["change"],
                                  "risk": alternative.get("risk") or {}})
        yield every


def test_the_demo_fleet_has_a_plan_of_each_kind(demo_plans: list[dict[str, Any]]) -> None:
    operations = {c["operation"] for p in demo_plans for c in (p.get("change") or {}).get("calls") or []}
    assert operations >= {"CreateEndpointConfig", "UpdateEndpoint", "PutMetricAlarm", "RegisterScalableTarget",
                          "PutScalingPolicy", "DeleteEndpoint", "CreateSchedule"}, operations


def test_every_demo_plans_terraform_is_valid_for_the_provider(demo_plans: list[dict[str, Any]]) -> None:
    declared = 0
    for p in demo_plans:
        text = render_change(p, "terraform")
        assert problems(text) == [], f"plan {p['id']} ({p['proposed'].get('action')}):\n{text}"
        declared += len(resources(text))
    assert declared >= len([p for p in demo_plans if p.get("change")])


def test_every_demo_plans_cloudformation_is_cfn_lint_clean(demo_plans: list[dict[str, Any]], tmp_path: Path) -> None:
    snippets = {p["id"]: render_change(p, "cloudformation") for p in demo_plans}
    assert lint_all(snippets, tmp_path) == {}


def test_the_schema_subset_covers_every_resource_a_plan_emits(demo_plans: list[dict[str, Any]]) -> None:
    emitted = {kind for build in HAND_BUILT.values() for kind, _, _ in resources(render_change(build(), "terraform"))}
    emitted |= {kind for p in demo_plans for kind, _, _ in resources(render_change(p, "terraform"))}
    assert emitted <= set(SCHEMA)
    assert emitted >= {"aws_sagemaker_endpoint_configuration", "aws_sagemaker_endpoint", "aws_cloudwatch_metric_alarm",
                       "aws_appautoscaling_target", "aws_appautoscaling_policy", "aws_appautoscaling_scheduled_action",
                       "aws_scheduler_schedule"}, emitted
