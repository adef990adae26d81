"""consolidate-onto-components through the CLI against the emulator: six small models near their
smallest shape consolidate onto a shared fleet; endpoints in another VPC, with another KMS key, busy
ones and single-GPU models on single-GPU shapes are never grouped with them. Every request body of
the plan validates against botocore's model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import botocore.session
import pytest
import yaml
from botocore.validate import ParamValidator
from typer.testing import CliRunner

from auditor.act.binding import call_refusal, content_refusal
from auditor.act.plan import parse_plan
from auditor.catalog import load_catalog
from auditor.cli import app
from auditor.config import ApplyConfig
from auditor.report.change_text import render_change
from auditor_emulator.fleet import INSTANCE_NS, EndpointSpec, Load, VariantSpec, seed_fleet
from auditor_emulator.server import ACCOUNT_ID, Emulator
from cfn_lint_snippets import lint_all
from conftest import audit_json, seeded_emulator, utc_now
from terraform_schema import problems, resources

SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")
CATALOG = load_catalog()
REGION = "us-east-1"
RULE = "consolidate-onto-components"
VPC_A = {"Subnets": ["subnet-0aaa0001", "subnet-0aaa0002"], "SecurityGroupIds": ["sg-0aaa0001"]}
VPC_B = {"Subnets": ["subnet-0bbb0001", "subnet-0bbb0002"], "SecurityGroupIds": ["sg-0bbb0001"]}
# The same VPC config as VPC_B, its subnets listed in another order.
VPC_B_REORDERED = {"Subnets": ["subnet-0bbb0002", "subnet-0bbb0001"], "SecurityGroupIds": ["sg-0bbb0001"]}
KEY_A = "arn:aws:kms:us-east-1:123456789012:key/aaaa-1111"
KEY_B = "arn:aws:kms:us-east-1:123456789012:key/bbbb-2222"
TINY = [f"reco-tiny-{i}" for i in range(1, 7)]
PEAK_CPU = 7.0  # percent of the variant's vCPUs, each tiny model's busiest hour of the day
BASE_CPU = Load(2.0, 0.0, 0.2, burst=0.1)


def tiny(name: str, instance_type: str = "ml.m5.large", **kw: Any) -> EndpointSpec:
    return EndpointSpec(name, (VariantSpec(instance_type, 2, cpu=BASE_CPU, memory=Load(11.0, 0.0, 0.3, burst=0.1),
                                           invocations_per_hour=600, **kw),),
                        tags={"owner": "reco@example.com", "env": "prod"})


def fleet() -> list[EndpointSpec]:
    return [
        *(tiny(name) for name in TINY),
        # Small too, but in another VPC, or with another KMS key: never with the six.
        tiny("other-vpc-1"), tiny("other-vpc-2"), tiny("other-key-1"), tiny("other-key-2"),
        # Network isolation on: never with models that may call out.
        tiny("isolated-1"), tiny("isolated-2"),
        # Busy: its CPU peaks at 60% of its instances.
        EndpointSpec("busy-ranker", (VariantSpec("ml.m5.large", 2, cpu=Load(45.0, 10.0, 1.0), memory=Load(20.0, 1.0),
                                                 invocations_per_hour=9000),)),
        # Single-GPU models on single-GPU shapes: a 4-GPU shape costs about as much as four singles.
        *(EndpointSpec(f"gpu-small-{i}", (VariantSpec("ml.g5.xlarge", 1, cpu=Load(3.0, 0.5), memory=Load(12.0, 0.5),
                                                      gpu=Load(5.0, 1.0), gpu_memory=Load(20.0, 1.0),
                                                      invocations_per_hour=300),)) for i in range(1, 4)),
        # GPU models that hold 2 of an ml.g5.12xlarge's 4 GPUs' memory, on two instances each: whole
        # devices are free on a 4-GPU shape, so their copies can share fewer of them.
        *(EndpointSpec(f"llm-mid-{i}", (VariantSpec("ml.g5.12xlarge", 2, cpu=Load(3.0, 0.5), memory=Load(10.0, 0.5),
                                                    gpu=Load(10.0, 1.0), gpu_memory=Load(22.0, 0.0, 0.5, burst=0.1),
                                                    invocations_per_hour=300),)) for i in range(1, 4)),
    ]


def peaks_at_different_hours(emulator: Emulator, now: Any) -> list[dict[str, Any]]:
    """Each tiny model's busiest hour: one hour of the day at PEAK_CPU, a different one for each
    (published as SageMaker does, summed over the instance's 2 vCPUs; CloudWatch's hourly maximum
    of the variant then is that hour's)."""
    end = now.replace(minute=0, second=0, microsecond=0)
    datums = []
    for i, name in enumerate(TINY):
        peak_hour = 4 * i
        for day in range(14):
            stamp = end - timedelta(days=day + 1)
            stamp = stamp.replace(hour=peak_hour) + timedelta(minutes=20)
            if stamp >= end - timedelta(days=14):
                raw = PEAK_CPU * 2
                datums.append({"MetricName": "CPUUtilization", "Timestamp": stamp, "Unit": "Percent",
                               "Dimensions": [{"Name": "EndpointName", "Value": name},
                                              {"Name": "VariantName", "Value": "AllTraffic"}],
                               "StatisticValues": {"SampleCount": 1.0, "Sum": raw, "Minimum": raw, "Maximum": raw}})
    emulator.publish_metrics(INSTANCE_NS, datums, REGION, ACCOUNT_ID)
    return datums


def set_network(emulator: Emulator) -> None:
    """The models' VPC configs (CreateModel again, through the API) and the configs' KMS keys (the
    emulator's endpoint config, as if created with KmsKeyId: a config cannot be changed once made)."""
    sagemaker = boto3.client("sagemaker", region_name=REGION)
    backend = emulator.backend("sagemaker", REGION)
    for spec in fleet():
        vpc, key = VPC_A, KEY_A
        if spec.name.startswith("other-vpc-"):
            vpc = VPC_B if spec.name.endswith("1") else VPC_B_REORDERED
        if spec.name.startswith("other-key-"):
            key = KEY_B
        if spec.name.startswith("gpu-"):
            vpc = VPC_A
        model = f"{spec.name}-model"
        sagemaker.delete_model(ModelName=model)
        sagemaker.create_model(ModelName=model, ExecutionRoleArn="arn:aws:iam::123456789012:role/sagemaker-execution",
                               PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/model:latest"},
                               VpcConfig=vpc)
        backend.endpoint_configs[f"{spec.name}-config"].kms_key_id = key
        if spec.name.startswith("isolated-"):
            # The emulator's CreateModel drops EnableNetworkIsolation (its DescribeModel always says
            # false): set what DescribeModel answers for a model created with it.
            backend._models[model].enable_network_isolation = True


@pytest.fixture(scope="module")
def home(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    def seed(emu: Emulator) -> None:
        now = utc_now()
        seed_fleet(emu, fleet(), now=now)
        peaks_at_different_hours(emu, now)
        set_network(emu)

    with seeded_emulator(emulator, tmp_path_factory.mktemp("consolidation"), seed) as seeded:
        yield seeded


@pytest.fixture(scope="module")
def doc(home: Path) -> dict[str, Any]:
    return audit_json(home)


def consolidations(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["rule"] == RULE]


def members_of(finding: dict[str, Any]) -> set[str]:
    return {m["endpoint"] for m in finding["recommendation"]["details"]["members"]}


def test_six_small_models_consolidate_far_below_their_own_plans(doc: dict[str, Any]) -> None:
    found = [f for f in consolidations(doc) if members_of(f) & set(TINY)]
    assert len(found) == 1
    finding = found[0]
    assert members_of(finding) == set(TINY)
    rec = finding["recommendation"]
    details = rec["details"]
    shared = details["shared"]
    assert finding["resource"]["type"] == "shared-endpoint" and finding["resource"]["name"] == shared["endpoint"]
    assert shared["endpoint"].startswith("consolidated-") and len(shared["endpoint"]) == len("consolidated-") + 10
    assert rec["action"] == "consolidate" and rec["instance_count"] == shared["instance_count"] >= 2
    current = sum(m["monthly_cost_usd"] for m in details["members"])
    own = sum(m["own_plan_monthly_usd"] for m in details["members"])
    # Far less than their own plans: each endpoint keeps its own floor of instances there.
    assert rec["recommended_monthly_usd"] < 0.5 * own
    # The saving is the members' cost now less the shared fleet's, more than their own plans save
    # together; those stay in the report beside it, and the plan covers them, so the run's saving
    # counts what consolidating saves once (the headline says the members' plans are counted in it).
    assert details["group_monthly_usd"] == pytest.approx(current, abs=0.05)
    assert details["saving_usd"] == pytest.approx(current - rec["recommended_monthly_usd"], abs=0.05)
    assert details["own_plans_saving_usd"] < details["saving_usd"]
    assert rec["current_monthly_usd"] == pytest.approx(current, abs=0.05)
    assert rec["monthly_savings_usd"] == pytest.approx(details["saving_usd"], abs=0.05)
    member_plans = [p for p in doc["plans"] if p["resource"]["name"] in TINY]
    own_plans = sum(p["monthly_savings_usd"] for p in member_plans)
    assert own_plans == pytest.approx(details["own_plans_saving_usd"], abs=0.05)
    (plan,) = [p for p in doc["plans"] if p["resource"]["name"] == shared["endpoint"]]
    assert sorted(r["name"] for r in plan["covers"]) == sorted(TINY)
    assert {r["type"] for r in plan["covers"]} == {"endpoint"}
    summary = doc["summary"]
    assert summary["plans_included"]["plans"] >= len(member_plans)
    included = {(r["type"], r["name"]) for p in doc["plans"] for r in p["covers"]}
    counted = sum(p["monthly_savings_usd"] for p in doc["plans"] if p["measured"] and p["monthly_savings_usd"] > 0
                  and (p["resource"]["type"], p["resource"]["name"]) not in included)
    assert summary["monthly_savings_usd"] == pytest.approx(counted, abs=0.05)
    # Each copy covers its model's peak (on its own: a copy lost with its instance leaves enough).
    shape = CATALOG.shape("ml.m5.large")
    assert shape is not None
    for member in details["members"]:
        compute = member["compute"]
        peak_cores = member["peak_percent"]["cpu"] / 100 * shape.vcpu * member["instance_count"]
        peak_memory = member["peak_percent"]["memory"] / 100 * shape.memory_gib * 1024
        assert compute["NumberOfCpuCoresRequired"] >= max(0.25, peak_cores)
        assert compute["MinMemoryRequiredInMb"] >= max(128, peak_memory)
        assert member["copies"] == 2 and "NumberOfAcceleratorDevicesRequired" not in compute
    # The time-aligned replay holds, below what every peak at one hour would take.
    cpu = details["replay"]["resources"]["cpu"]
    assert cpu["peak_percent"] < 70 and cpu["headroom_at_peak_percent"] == pytest.approx(100 - cpu["peak_percent"])
    assert cpu["peak_percent"] < cpu["sum_of_peaks_percent"]
    assert cpu["p95_percent"] <= cpu["peak_percent"]


def test_never_grouped_across_networks_keys_busy_or_single_gpus(doc: dict[str, Any]) -> None:
    grouped = set().union(*(members_of(f) for f in consolidations(doc)))
    assert "busy-ranker" not in grouped
    assert not {n for n in grouped if n.startswith("gpu-small-")}
    # The two in VPC B (their subnets listed in another order) and the two with key B may each share
    # an endpoint, never with the six nor with each other.
    groups = sorted(sorted(members_of(f)) for f in consolidations(doc))
    assert groups == [["isolated-1", "isolated-2"], ["llm-mid-1", "llm-mid-2", "llm-mid-3"],
                      ["other-key-1", "other-key-2"], ["other-vpc-1", "other-vpc-2"], sorted(TINY)]
    by_members = {frozenset(members_of(f)): f for f in consolidations(doc)}
    vpc_b = by_members[frozenset({"other-vpc-1", "other-vpc-2"})]["recommendation"]["details"]["change"][0]["params"]
    assert vpc_b["VpcConfig"] == {"SecurityGroupIds": VPC_B["SecurityGroupIds"], "Subnets": VPC_B["Subnets"]}
    key_b = by_members[frozenset({"other-key-1", "other-key-2"})]["recommendation"]["details"]["change"][0]["params"]
    assert key_b["KmsKeyId"] == KEY_B
    isolated = by_members[frozenset({"isolated-1", "isolated-2"})]["recommendation"]["details"]["change"][0]["params"]
    assert isolated["EnableNetworkIsolation"] is True
    tiny_config = by_members[frozenset(TINY)]["recommendation"]["details"]["change"][0]["params"]
    assert "EnableNetworkIsolation" not in tiny_config


def test_gpu_models_share_whole_devices_of_a_multi_gpu_shape(doc: dict[str, Any]) -> None:
    found = [f for f in consolidations(doc) if members_of(f) & {"llm-mid-1", "llm-mid-2", "llm-mid-3"}]
    assert len(found) == 1 and members_of(found[0]) == {"llm-mid-1", "llm-mid-2", "llm-mid-3"}
    rec = found[0]["recommendation"]
    shape = CATALOG.shape(rec["instance_type"])
    assert shape is not None and shape.accelerator == CATALOG.shape("ml.g5.12xlarge").accelerator  # type: ignore[union-attr]
    assert shape.gpu_count >= 2
    for member in rec["details"]["members"]:
        # About 25% of 4 GPUs' memory at the peak is 1 device: at the 70% target, two whole devices a copy.
        assert member["compute"]["NumberOfAcceleratorDevicesRequired"] == 2
    # 3 models x 2 copies x 2 devices: 12 devices, on three 4-GPU instances instead of six.
    assert rec["instance_count"] * shape.gpu_count >= 12
    assert rec["recommended_monthly_usd"] < rec["current_monthly_usd"]
    assert rec["details"]["risk"]["level"] == "high"
    assert "gpu" in rec["details"]["replay"]["resources"]


def test_the_plan_validates_against_botocore_and_creates_only(doc: dict[str, Any]) -> None:
    plan = next(p for p in doc["plans"] if p["resource"]["type"] == "shared-endpoint"
                and {m["endpoint"] for m in p["basis"]["members"]} == set(TINY))
    calls = plan["change"]["calls"]
    operations = [c["operation"] for c in calls]
    assert operations[:2] == ["CreateEndpointConfig", "CreateEndpoint"]
    assert operations[2:] == ["CreateInferenceComponent"] * len(TINY)
    assert not [o for o in operations if o.startswith("Delete")]
    for call in calls:
        report = ParamValidator().validate(call["params"], SAGEMAKER.operation_model(call["operation"]).input_shape)
        assert not report.has_errors(), report.generate_report()
        assert {"Key": "auditor:plan", "Value": plan["id"]} in call["params"]["Tags"]
    config = calls[0]["params"]
    variant = config["ProductionVariants"][0]
    assert "ModelName" not in variant
    assert variant["ManagedInstanceScaling"]["ScaleInPolicy"] == {"Strategy": "CONSOLIDATION"}
    assert variant["RoutingConfig"] == {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}
    assert config["KmsKeyId"] == KEY_A
    assert config["VpcConfig"] == {"SecurityGroupIds": VPC_A["SecurityGroupIds"], "Subnets": VPC_A["Subnets"]}
    assert plan["risk"]["level"] in ("medium", "high") and plan["risk"]["load_test_first"]
    assert plan["basis"]["shared_endpoint"] == plan["resource"]["name"]
    assert {m["endpoint"] for m in plan["basis"]["members"]} == set(TINY)
    assert all(m["model"] == f"{m['endpoint']}-model" for m in plan["basis"]["members"])
    # The config passes the role the members' models run with (iam:PassRole), as the basis records
    # it; the guards' binding holds the call to it.
    assert config["ExecutionRoleArn"] == "arn:aws:iam::123456789012:role/sagemaker-execution"
    assert {m["execution_role"] for m in plan["basis"]["members"]} == {config["ExecutionRoleArn"]}
    assert call_refusal(parse_plan(plan)) is None and content_refusal(parse_plan(plan), ApplyConfig()) is None


def test_a_load_test_request_validates(home: Path) -> None:
    (home / "auditor.toml").write_text(
        '[recommend]\nload_test_role_arn = "arn:aws:iam::{account_id}:role/recommender"\n')
    try:
        out = home / "with-role.json"
        result = CliRunner().invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
        assert result.exit_code == 0, result.output
        plan = next(p for p in json.loads(out.read_text())["plans"] if p["resource"]["type"] == "shared-endpoint"
                    and {m["endpoint"] for m in p["basis"]["members"]} == set(TINY))
    finally:
        (home / "auditor.toml").unlink()
    request = plan["risk"]["load_test_request"]
    assert request["operation"] == "CreateInferenceRecommendationsJob"
    assert request["params"]["InputConfig"]["EndpointConfigurations"] == [{"InstanceType": plan["proposed"]
                                                                           ["instance_type"]}]
    report = ParamValidator().validate(request["params"], SAGEMAKER.operation_model(request["operation"]).input_shape)
    assert not report.has_errors(), report.generate_report()


def test_the_reports_show_the_members_the_shared_shape_the_replay_and_the_callers_switch(home: Path) -> None:
    for fmt in ("markdown", "text", "html"):
        out = home / f"report.{fmt}"
        result = CliRunner().invoke(app, ["run", "--format", fmt, "--output", str(out), "--no-history"])
        assert result.exit_code == 0, result.output
        text = out.read_text()
        assert "consolidate 6 endpoints onto" in text
        assert all(name in text for name in TINY)
        assert "summed load peaks at CPU" in text and "headroom" in text
        assert "InferenceComponentName" in text
        assert "the old endpoints are deleted by later runs once idle" in text


def test_the_change_as_cloudformation_and_terraform(doc: dict[str, Any], tmp_path: Path) -> None:
    plans = [p for p in doc["plans"] if p["resource"]["type"] == "shared-endpoint"]
    snippets = {p["id"]: render_change(p, "cloudformation") for p in plans}
    assert lint_all(snippets, tmp_path) == {}
    for plan in plans:
        declared = yaml.safe_load(snippets[plan["id"]])["Resources"]
        kinds = sorted(r["Type"] for r in declared.values())
        members = len(plan["basis"]["members"])
        assert kinds == sorted(["AWS::SageMaker::EndpointConfig", "AWS::SageMaker::Endpoint",
                                *["AWS::SageMaker::InferenceComponent"] * members])
        # Each component names the endpoint declared with it, so the stack creates the endpoint first.
        endpoint = next(k for k, r in declared.items() if r["Type"] == "AWS::SageMaker::Endpoint")
        assert all(r["Properties"]["EndpointName"] == {"Fn::GetAtt": [endpoint, "EndpointName"]}
                   for r in declared.values() if r["Type"] == "AWS::SageMaker::InferenceComponent")
        terraform = render_change(plan, "terraform")
        assert problems(terraform) == [], terraform
        # hashicorp/aws 5.100.0 declares no ScaleInPolicy and no inference component: nothing is
        # declared that would not be the plan's; the config and the endpoint are AWS CLI steps.
        assert resources(terraform) == []
        assert "aws sagemaker create-endpoint-config" in terraform and "aws sagemaker create-endpoint " in terraform
        assert "CreateInferenceComponent: no Terraform resource" in terraform
