"""Native consolidation (issue 27) through the CLI against the emulator: a component endpoint whose
copies' reservations fit on 2 of its 4 ml.g5.12xlarge gets a `managed-scaling` plan, a new config
whose variant's ManagedInstanceScaling has the CONSOLIDATION scale-in strategy (managed scaling
turned on where it was off), priced by the 2 instances it frees; every request validates against
botocore's model; the Terraform says what hashicorp/aws 5.100.0 cannot declare; `audit apply`
makes it in the emulator and the next run verifies it.

The fleet: three copies of a model that reserves 2 of the 4 GPUs (8 cores, 64 GiB) of an instance:
2 copies an instance, so 2 instances hold them (37.5% of the GPUs reserved)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.validate import ParamValidator
from typer.testing import CliRunner

from auditor.act.guards import plan_refusal
from auditor.act.plan import parse_plan, recomputed_id
from auditor.catalog import HOURS_PER_MONTH, load_catalog
from auditor.cli import app
from auditor.config import ApplyConfig
from auditor.history.store import History
from auditor.kinds.endpoints.change import build_change
from auditor.kinds.endpoints.models import ManagedScaling, Variant
from auditor.kinds.endpoints.plans import with_replay
from auditor.kinds.endpoints.verify import runs_scaling
from auditor.models import Plan, PlanOption, Resource, ResourceRef, ResourceReplay, Risk, RiskLevel
from auditor.recommend.change import plan_id, resource_name
from auditor.report.change_text import render_change
from auditor_emulator.fleet import ComponentSpec, EndpointSpec, Load, VariantSpec, demo_fleet, seed_fleet
from auditor_emulator.server import ACCOUNT_ID, Emulator
from conftest import APPLY_ROLE, audit_json, check_report_json, seeded_emulator, utc_now
from helpers import endpoint as helper_endpoint
from helpers import resource_json
from terraform_schema import problems, resources

runner = CliRunner()
SESSION = botocore.session.get_session()
SHAPE = "ml.g5.12xlarge"
PRICE = load_catalog().hourly_price(SHAPE, "us-east-1")
MANAGED = "llm-managed"  # managed instance scaling on: 1-4 instances, no scale-in policy
UNMANAGED = "llm-fixed"  # managed instance scaling off
CONSOLIDATION = {"Strategy": "CONSOLIDATION"}


def component_endpoint(name: str, managed_scaling: tuple[int, int] | None = None) -> EndpointSpec:
    return EndpointSpec(
        name, (VariantSpec(SHAPE, 4, cpu=Load(12, 2), memory=Load(35, 1), gpu=Load(18, 3), gpu_memory=Load(40, 1),
                           managed_scaling=managed_scaling),),
        components=(ComponentSpec(f"{name}-chat", copies=3, accelerators=2, cpu_cores=8.0, memory_mb=65536),),
        tags={"owner": "llm@example.com", "auditor:apply": "allowed"})


def seed(emulator: Emulator) -> None:
    seed_fleet(emulator, [component_endpoint(MANAGED, (1, 4)), component_endpoint(UNMANAGED)], now=utc_now())


@pytest.fixture(scope="module")
def fleet(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The two endpoints audited once through the CLI (the run recorded in the history)."""
    home = tmp_path_factory.mktemp("native")
    with seeded_emulator(emulator, home, seed):
        Emulator.deployments(seconds=0.2, fail_instance_types=())
        config = home / "auditor.toml"
        config.write_text(f'[aws]\nregions = ["us-east-1"]\n[jobs]\nenabled = false\n'
                          f'[history]\npath = "{home / "history.sqlite3"}"\n'
                          f'[apply]\nrole_arn = "{APPLY_ROLE}"\nmax_risk = "medium"\nwait_minutes = 1\n')
        out = home / "report.json"
        result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out)])
        assert result.exit_code == 0, result.output
        report = check_report_json(json.loads(out.read_text()))
        yield {"config": config, "report": report, "home": home}
        Emulator.deployments(seconds=2.0, fail_instance_types=())


def plan_of(fleet: dict[str, Any], name: str) -> dict[str, Any]:
    (plan,) = [p for p in fleet["report"]["plans"] if p["resource"]["name"] == name]
    return plan


def cost_of(fleet: dict[str, Any], name: str) -> float:
    (endpoint,) = [e for e in fleet["report"]["endpoints"] if e["name"] == name]
    return float(endpoint["variants"][0]["monthly_cost_usd"])


def valid(call: dict[str, Any]) -> None:
    shape = SESSION.get_service_model(call["service"]).operation_model(call["operation"]).input_shape
    report = ParamValidator().validate(call["params"], shape)
    assert not report.has_errors(), f"{call['operation']}: {report.generate_report()}"


def new_scaling(plan: dict[str, Any]) -> dict[str, Any]:
    (create,) = [c for c in plan["change"]["calls"] if c["operation"] == "CreateEndpointConfig"]
    (variant,) = create["params"]["ProductionVariants"]
    return dict(variant["ManagedInstanceScaling"])


def test_managed_scaling_gets_the_consolidating_scale_in_and_the_freed_instances_saving(
        fleet: dict[str, Any]) -> None:
    plan = plan_of(fleet, MANAGED)
    proposed = plan["proposed"]
    assert proposed["action"] == "managed-scaling" and "component-packing" in proposed["rules"]
    assert (proposed["instance_type"], proposed["instance_count"]) == (SHAPE, 2)
    # Its minimum of 1 raised to the availability floor of 2; its maximum kept.
    scaling = {"Status": "ENABLED", "MinInstanceCount": 2, "MaxInstanceCount": 4, "ScaleInPolicy": CONSOLIDATION}
    assert proposed["details"]["managed_instance_scaling"] == scaling == new_scaling(plan)
    # The 4 instances it ran (its average, read from the sample counts) less the 2 it keeps.
    assert cost_of(fleet, MANAGED) == pytest.approx(4 * PRICE * HOURS_PER_MONTH, rel=0.01)
    assert plan["monthly_savings_usd"] == round(cost_of(fleet, MANAGED) - round(2 * PRICE * HOURS_PER_MONTH, 2), 2)
    (finding,) = [f for f in fleet["report"]["findings"] if f["rule"] == "component-packing"
                  and f["resource"]["name"] == MANAGED]
    assert finding["message"].startswith("1 inference component(s) reserve ")
    assert "their 3 copies fit on 2 (llm-managed-chat: 2 per instance): ScaleInPolicy CONSOLIDATION, " \
           "MinInstanceCount 1 raised to 2 (the availability floor): saves $" in finding["message"]
    # Stated on its facts (no replay), for the plan and any alternative of the kind (`audit apply --option N`).
    assert plan["risk"]["level"] == "medium" and plan["risk"]["basis"]
    # The variant's load replayed on the 2 instances it keeps: the GPUs' load twice as dense.
    replays = {r["resource"]: r for r in plan["risk"]["replays"]}
    assert 30 < replays["gpu"]["peak"] < 70
    for report_plan in fleet["report"]["plans"]:
        for option in report_plan["alternatives"]:
            assert option["action"] != "managed-scaling" or option["risk"]["level"] == "medium", option
    # No manual count of the same type beside it: native consolidation says it.
    assert {a["action"] for a in plan["alternatives"]} <= {"managed-scaling", "autoscale"}


def test_without_managed_scaling_the_plan_turns_it_on_with_that_policy(fleet: dict[str, Any]) -> None:
    plan = plan_of(fleet, UNMANAGED)
    proposed = plan["proposed"]
    assert proposed["action"] == "managed-scaling"
    scaling = {"Status": "ENABLED", "MinInstanceCount": 2, "MaxInstanceCount": 4, "ScaleInPolicy": CONSOLIDATION}
    assert proposed["details"]["managed_instance_scaling"] == scaling == new_scaling(plan)
    assert proposed["advice"] == ("2 x ml.g5.12xlarge: managed instance scaling on, 2-4 instances, scale-in "
                                  "CONSOLIDATION")
    assert plan["monthly_savings_usd"] == round(2 * PRICE * HOURS_PER_MONTH, 2)


def test_the_plans_change_copies_the_config_and_validates_against_botocore(fleet: dict[str, Any]) -> None:
    for name in (MANAGED, UNMANAGED):
        plan = plan_of(fleet, name)
        calls = plan["change"]["calls"]
        assert [c["operation"] for c in calls if c["service"] == "sagemaker"] == ["CreateEndpointConfig",
                                                                                 "UpdateEndpoint"]
        for call in calls:
            valid(call)
        (variant,) = calls[0]["params"]["ProductionVariants"]
        # A copy of the running config: the component-style variant keeps its type and count, no model.
        assert "ModelName" not in variant
        assert (variant["InstanceType"], variant["InitialInstanceCount"]) == (SHAPE, 4)
        assert calls[-1]["params"]["EndpointConfigName"] == calls[0]["params"]["EndpointConfigName"]


def test_the_terraform_says_the_provider_cannot_declare_the_policy_and_gives_the_cli_step(
        fleet: dict[str, Any]) -> None:
    plan = plan_of(fleet, MANAGED)
    result = runner.invoke(app, ["plans", "show", plan["id"], "--as", "terraform", "--config", str(fleet["config"])])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert ("hashicorp/aws 5.100.0's managed_instance_scaling block has only status, min_instance_count and "
            "max_instance_count, so the ScaleInPolicy of variant AllTraffic {\"Strategy\": \"CONSOLIDATION\"} cannot "
            "be declared with this provider version") in text
    commands = [line.strip("# ") for line in text.splitlines() if line.startswith("#   aws sagemaker ")]
    assert [c.split()[2] for c in commands] == ["create-endpoint-config", "update-endpoint"]
    assert '"ScaleInPolicy": {"Strategy": "CONSOLIDATION"}' in commands[0]
    assert 'resource "aws_sagemaker_endpoint_configuration"' not in text
    assert 'resource "aws_sagemaker_endpoint"' not in text
    cloudformation = runner.invoke(app, ["plans", "show", plan["id"], "--as", "cloudformation",
                                         "--config", str(fleet["config"])])
    assert cloudformation.exit_code == 0, cloudformation.output
    assert '"ScaleInPolicy":\n              "Strategy": "CONSOLIDATION"' in cloudformation.stdout


def test_apply_makes_each_config_and_the_next_run_verifies_it(fleet: dict[str, Any], quick_deployments: None) -> None:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    made = {}
    for name in (MANAGED, UNMANAGED):
        plan = plan_of(fleet, name)
        new_config = f"{name}-{plan['id']}"
        result = runner.invoke(app, ["apply", plan["id"], "--yes", "--config", str(fleet["config"])])
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[-1] == (f"plan {plan['id']} applied: endpoint {name} is InService on "
                                                  f"{new_config} (was {name}-config)")
        (variant,) = sagemaker.describe_endpoint_config(EndpointConfigName=new_config)["ProductionVariants"]
        assert variant["ManagedInstanceScaling"] == plan["proposed"]["details"]["managed_instance_scaling"]
        assert sagemaker.describe_endpoint(EndpointName=name)["EndpointConfigName"] == new_config
        made[plan["id"]] = variant["ManagedInstanceScaling"]
    again = runner.invoke(app, ["run", "--config", str(fleet["config"]), "--format", "json",
                                "--output", str(fleet["home"] / "again.json")])
    assert again.exit_code == 0, again.output
    with History(fleet["home"] / "history.sqlite3") as history:
        latest = history.runs(limit=1)[0].id
        records = {r.plan_id: r for r in history.applied()}
    for applied in made:
        assert records[applied].outcome == "applied" and records[applied].verified_run_id == latest
    # Consolidating already: the same change is not proposed again.
    report = json.loads((fleet["home"] / "again.json").read_text())
    again_proposed = [p["proposed"]["details"].get("managed_instance_scaling") for p in report["plans"]
                      if p["resource"]["name"] in (MANAGED, UNMANAGED)]
    assert not [scaling for scaling in again_proposed if scaling in made.values()]


# --- the write side, from the plan alone ----------------------------------------------------------

SCALING = {"Status": "ENABLED", "MinInstanceCount": 2, "MaxInstanceCount": 4, "ScaleInPolicy": CONSOLIDATION}
STORED: dict[str, Any] = {
    "resource": resource_json("llm"), "variant": "AllTraffic", "current": {"endpoint_config_name": "llm-config"},
    "measured": True, "risk": {"level": "medium"},
    "proposed": {"action": "managed-scaling", "instance_type": SHAPE, "instance_count": 2,
                 "details": {"managed_instance_scaling": SCALING}}}


def refusal(scaling: dict[str, Any]) -> str | None:
    plan_id = str(recomputed_id(STORED, STORED["proposed"]))
    create = {"EndpointConfigName": resource_name("llm", plan_id), "ProductionVariants": [
        {"VariantName": "AllTraffic", "InstanceType": SHAPE, "InitialInstanceCount": 4,
         "ManagedInstanceScaling": scaling}]}
    update = {"EndpointName": "llm", "EndpointConfigName": resource_name("llm", plan_id)}
    stored = {**STORED, "id": plan_id, "change": {"calls": [
        {"service": "sagemaker", "operation": "CreateEndpointConfig", "params": create},
        {"service": "sagemaker", "operation": "UpdateEndpoint", "params": update}]}}
    return plan_refusal(parse_plan(stored), ApplyConfig(role_arn=APPLY_ROLE, max_risk="medium"))


def test_a_stored_plan_whose_config_sets_other_scaling_than_its_own_is_refused() -> None:
    assert refusal(SCALING) is None
    assert refusal({**SCALING, "MinInstanceCount": 0}).endswith(  # type: ignore[union-attr]
        "call 1 (sagemaker:CreateEndpointConfig) sets the ManagedInstanceScaling of variant AllTraffic otherwise "
        "than the plan's (proposed.details.managed_instance_scaling)")


def test_the_change_brings_the_initial_count_within_the_bounds_and_makes_the_plans_own_calls_after() -> None:
    """A config made at 6 instances (managed scaling ran it lower since): the copy starts at the new
    maximum; `then` calls (another rule's, e.g. an inference component's scalable target) follow the update."""
    description = {"EndpointConfigName": "llm-config", "ProductionVariants": [
        {"VariantName": "AllTraffic", "InstanceType": SHAPE, "InitialInstanceCount": 6,
         "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 6}}]}
    llm = replace(helper_endpoint("llm", (Variant("AllTraffic", SHAPE, 4),)), config_description=description)
    target = {"ServiceNamespace": "sagemaker", "ResourceId": "inference-component/llm-chat",
              "ScalableDimension": "sagemaker:inference-component:DesiredCopyCount", "MinCapacity": 1,
              "MaxCapacity": 3}
    then = [{"service": "application-autoscaling", "operation": "RegisterScalableTarget", "params": target,
             "purpose": "copies 1-3"}]
    option = PlanOption(("component-packing",), "managed-scaling", SHAPE, 2, None, 0.0, 0.0, "advice",
                        {"managed_instance_scaling": SCALING, "then": then})
    made = Plan(ResourceRef("endpoints", "endpoint", "llm", ACCOUNT_ID, "us-east-1"), "AllTraffic", SHAPE, 4, 0.0,
                option)
    change = build_change(replace(made, id=plan_id(made)), llm, None)
    assert change is not None
    assert [c.operation for c in change.calls] == ["CreateEndpointConfig", "PutMetricAlarm", "UpdateEndpoint",
                                                   "RegisterScalableTarget"]
    (variant,) = change.calls[0].params["ProductionVariants"]
    assert variant["ManagedInstanceScaling"] == SCALING and variant["InitialInstanceCount"] == 4
    assert change.calls[-1].params == target
    for call in change.calls:
        valid({"service": call.service, "operation": call.operation, "params": call.params})


def test_the_next_run_verifies_by_the_scaling_of_the_config_the_endpoint_runs() -> None:
    description = {"ProductionVariants": [{"VariantName": "AllTraffic", "ManagedInstanceScaling": SCALING}]}
    running = replace(helper_endpoint("llm", (Variant("AllTraffic", SHAPE, 3),)), config_description=description)
    assert runs_scaling(running, "AllTraffic", SCALING)
    assert not runs_scaling(running, "AllTraffic", {**SCALING, "ScaleInPolicy": {"Strategy": "IDLE_RELEASE"}})
    undescribed = replace(helper_endpoint("llm", (replace(Variant("AllTraffic", SHAPE, 3),
                                                          managed_scaling=ManagedScaling(2, 4)),)))
    assert runs_scaling(undescribed, "AllTraffic", SCALING)
    assert not runs_scaling(undescribed, "AllTraffic", {**SCALING, "MinInstanceCount": 1})


def test_a_new_endpoint_on_a_config_terraform_cannot_declare_is_made_with_the_cli_too() -> None:
    """A shared endpoint's config with the consolidating policy (design C2) and the endpoint made on it."""
    config = {"EndpointConfigName": "shared-config", "ProductionVariants": [
        {"VariantName": "AllTraffic", "InstanceType": "ml.m5.large", "InitialInstanceCount": 2,
         "ManagedInstanceScaling": SCALING}]}
    calls = [{"service": "sagemaker", "operation": "CreateEndpointConfig", "params": config, "purpose": "config"},
             {"service": "sagemaker", "operation": "CreateEndpoint", "purpose": "endpoint",
              "params": {"EndpointName": "shared", "EndpointConfigName": "shared-config"}}]
    plan = {"id": "0123abcdef", "resource": resource_json("shared"), "variant": None, "current": {},
            "proposed": {"action": "consolidate", "advice": "advice"}, "risk": {"level": "medium"},
            "change": {"calls": calls, "rollback": "by hand"}}
    text = render_change(plan, "terraform")
    commands = [line.strip("# ").split()[2] for line in text.splitlines() if line.startswith("#   aws sagemaker ")]
    assert commands == ["create-endpoint-config", "create-endpoint"]
    assert problems(text) == [] and not resources(text)


def test_the_replay_on_the_kept_count_raises_the_stated_level_never_lowers_it() -> None:
    stated = Risk(RiskLevel.MEDIUM, basis=("the count rests on the copies' reservations",))
    crowded = Risk(RiskLevel.HIGH, replays=(ResourceReplay(Resource.GPU, 80.0, 95.0, 40.0, 0.0, 5.0),))
    assert with_replay(stated, crowded) == Risk(RiskLevel.HIGH, replays=crowded.replays, basis=stated.basis)
    assert with_replay(stated, replace(crowded, level=RiskLevel.LOW)).level is RiskLevel.MEDIUM
    assert with_replay(stated, None) == stated


def test_the_demos_component_endpoint_consolidates_natively(aws, tmp_path) -> None:
    """llm-components (4 x ml.g5.12xlarge under managed scaling 1-4, copies reserving 7 of 16 GPUs)."""
    (llm,) = [e for e in demo_fleet() if e.name == "llm-components"]
    seed_fleet(aws, [llm], now=utc_now())
    doc = audit_json(tmp_path)
    (plan,) = [p for p in doc["plans"] if p["resource"]["name"] == "llm-components"]
    assert plan["proposed"]["action"] == "managed-scaling" and plan["proposed"]["instance_count"] == 2
    assert plan["proposed"]["details"]["managed_instance_scaling"] == SCALING
    (endpoint,) = doc["endpoints"]
    cost = endpoint["variants"][0]["monthly_cost_usd"]
    assert plan["monthly_savings_usd"] == round(cost - round(2 * PRICE * HOURS_PER_MONTH, 2), 2) > 0
