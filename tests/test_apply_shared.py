"""`audit apply` of a consolidation plan (resource type "shared-endpoint", design C2), through the CLI
against the emulator: it creates the shared endpoint's config, the endpoint, then (once it is
InService) one inference component per member, and waits for each; it never deletes or updates a
member endpoint; a component that fails is reported with its FailureReason and what was made is
named with its delete command; a retry continues from what exists; SIGINT during the wait is
journaled; and each refusal (a member changed, running another model, not opted in, busier since the
audit than its copies reserve; the shared endpoint made by someone else; a component name taken; the
members edited; a role other than the members' models' passed) is one line, nothing made.

Each scenario has its own member endpoints: copies of the demo's search-embeddings (one model each),
tagged auditor:apply=allowed and audited once. The plan is built here as the record the history
stores (plan_to_dict), following design C2: the change's calls (the config passing the members' model
role), its basis (the members: endpoint, config, status, variant, model, role), its details; the
shared endpoint is named after its members.
"""

from __future__ import annotations

import copy
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from auditor.act.plan import AUDITED_IN, parse_plan
from auditor.cli import app
from auditor.history.store import AppliedChange, History
from auditor.kinds.endpoints.consolidation import shared_name
from auditor.models import Plan, PlanOption, ResourceRef
from auditor.recommend.change import plan_id, resource_name
from auditor.records import plan_to_dict
from auditor.tasks.audit import deliver_outcome, execute_audit
from auditor_emulator.server import Emulator
from conftest import APPLY_ROLE, apply_fleet, error_lines, load_plans_from
from test_off_hours import validate

ACCOUNT, REGION = "123456789012", "us-east-1"
GROUPS = {
    "made": ("cs-made-1", "cs-made-2", "cs-made-3"),
    "fails": ("cs-fails-1", "cs-fails-2"),
    "signal": ("cs-signal-1", "cs-signal-2"),
    "moved": ("cs-moved-1", "cs-moved-2"),
    "taken": ("cs-made-1", "cs-taken-2"),  # cs-made-1's component is the first group's
    "someone": ("cs-someone-1", "cs-someone-2"),
    "optout": ("cs-optout-1", "cs-optout-2"),
    "busy": ("cs-busy-1", "cs-busy-2"),
}
UNTAGGED = ("cs-optout-2",)
LOAD_TEST = "load-test the shared fleet with the members' traffic first"
runner = CliRunner()
pytestmark = pytest.mark.usefixtures("quick_deployments")


@pytest.fixture(scope="module")
def fleet(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    names = sorted({n for group in GROUPS.values() for n in group})
    with apply_fleet(emulator, tmp_path_factory.mktemp("shared"), names, untagged=UNTAGGED) as made:
        (made["home"] / "auditor.toml").write_text(
            f'[history]\npath = "{made["home"] / "history.sqlite3"}"\n'
            f'[apply]\nrole_arn = "{APPLY_ROLE}"\nwait_minutes = 1\nmax_risk = "medium"\n')
        made["config"] = replace(made["config"], apply=replace(made["config"].apply, max_risk="medium"))
        yield made


def member_record(sagemaker: Any, name: str) -> dict[str, Any]:
    """A member as the plan's basis records it (design C2): its endpoint, config, status, variant,
    model, and the role its model runs with."""
    described = sagemaker.describe_endpoint(EndpointName=name)
    config = sagemaker.describe_endpoint_config(EndpointConfigName=described["EndpointConfigName"])
    (variant,) = config["ProductionVariants"]
    role = sagemaker.describe_model(ModelName=variant["ModelName"]).get("ExecutionRoleArn")
    return {"endpoint": name, "endpoint_config": described["EndpointConfigName"],
            "status": described["EndpointStatus"], "variant": variant["VariantName"], "model": variant["ModelName"],
            "execution_role": role}


def consolidation(sagemaker: Any, members: tuple[str, ...], *, cores: float = 8.0) -> dict[str, Any]:
    """The consolidation plan of `members` as the history stores it (design C2). Each copy reserves
    `cores`: 8 covers a member's peak (4 x ml.m5.4xlarge at up to about 1.4 cores each, at 70%), so
    only a member busier since the audit than that is refused."""
    records = [member_record(sagemaker, m) for m in members]
    shared = shared_name(list(members))
    compute = {"NumberOfCpuCoresRequired": cores, "MinMemoryRequiredInMb": 1024}
    details = {
        "members": [{**r, "instance_type": "ml.m5.4xlarge", "instance_count": 4, "monthly_cost_usd": 2700.0,
                     "own_plan_monthly_usd": 300.0, "component": r["endpoint"], "copies": 1, "compute": compute}
                    for r in records],
        "shared": {"endpoint": shared, "endpoint_config": None, "variant": "AllTraffic",
                   "instance_type": "ml.m5.4xlarge", "instance_count": 2, "min_instances": 2, "max_instances": 3},
        "callers": [f"InvokeEndpoint(EndpointName={shared}, InferenceComponentName={r['endpoint']}) instead of "
                    f"InvokeEndpoint(EndpointName={r['endpoint']})" for r in records],
    }
    option = PlanOption(("consolidate-onto-components",), "consolidate", "ml.m5.4xlarge", 2, None, 280.0,
                        600.0 * len(members), "consolidate onto inference components", details)
    made = Plan(ResourceRef("endpoints", "shared-endpoint", shared, ACCOUNT, REGION), None, None, 0,
                2700.0 * len(members), option, basis={"shared_endpoint": shared, "members": [
                    {k: r[k] for k in ("endpoint", "endpoint_config", "status", "variant", "model", "execution_role")}
                    for r in records]})
    made = replace(made, id=plan_id(made))
    config = resource_name(shared, made.id)
    tags = [{"Key": "auditor:plan", "Value": made.id}]
    calls = [
        {"service": "sagemaker", "operation": "CreateEndpointConfig", "purpose": "the shared fleet",
         "params": {"EndpointConfigName": config, "Tags": tags, "ExecutionRoleArn": records[0]["execution_role"],
                    "ProductionVariants": [{
             "VariantName": "AllTraffic", "InstanceType": "ml.m5.4xlarge", "InitialInstanceCount": 2,
             "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 2, "MaxInstanceCount": 3,
                                        "ScaleInPolicy": {"Strategy": "CONSOLIDATION"}},
             "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}}]}},
        {"service": "sagemaker", "operation": "CreateEndpoint", "purpose": "the shared endpoint",
         "params": {"EndpointName": shared, "EndpointConfigName": config, "Tags": tags}},
        *({"service": "sagemaker", "operation": "CreateInferenceComponent", "purpose": f"{r['endpoint']}'s model",
           "params": {"InferenceComponentName": r["endpoint"], "EndpointName": shared, "VariantName": "AllTraffic",
                      "Specification": {"ModelName": r["model"], "ComputeResourceRequirements": compute},
                      "RuntimeConfig": {"CopyCount": 1}, "Tags": tags}} for r in records),
    ]
    window_end = datetime.now(UTC) - timedelta(hours=1)
    return {**plan_to_dict(made), "measured": True,
            "risk": {"level": "medium", "load_test_first": [LOAD_TEST], "basis": ["callers switch first"]},
            "change": {"calls": calls, "rollback": "delete the components, the endpoint and its config",
                       "waits_for": f"endpoint {shared} InService, then its inference components InService",
                       "restore": []},
            AUDITED_IN: {"run_id": 1, "started_at": (window_end + timedelta(minutes=5)).isoformat(),
                         "window_end": window_end.isoformat()}}


@pytest.fixture
def plans(fleet: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    """Each group's plan, by group; `load_plan` reads them by id."""
    made = {group: consolidation(fleet["sagemaker"], members, **({"cores": 7.0} if group == "busy" else {}))
            for group, members in GROUPS.items()}
    load_plans_from(monkeypatch, {p["id"]: p for p in made.values()})
    return made


def record(fleet: dict[str, Any], plan_id_: str) -> AppliedChange:
    with History(Path(fleet["config"].history.path)) as history:
        return next(r for r in history.applied() if r.plan_id == plan_id_)


def statuses(change: AppliedChange) -> list[tuple[str, str]]:
    return [(s["operation"], s["status"]) for s in change.steps if s.get("step") == "call"]


def members_unchanged(fleet: dict[str, Any], members: tuple[str, ...], before: dict[str, dict[str, Any]]) -> None:
    """Every member endpoint still InService on the config it ran, with its own model."""
    for name in members:
        assert member_record(fleet["sagemaker"], name) == before[name], name


def test_the_plans_calls_are_valid_for_botocore(fleet: dict[str, Any], plans: dict[str, dict[str, Any]]) -> None:
    for call in plans["made"]["change"]["calls"]:
        validate(call)
    assert parse_plan(plans["made"]).resource.type == "shared-endpoint"


def test_apply_creates_the_shared_endpoint_then_its_components_and_never_touches_a_member(
        fleet: dict[str, Any], plans: dict[str, dict[str, Any]]) -> None:
    plan = plans["made"]
    members = GROUPS["made"]
    shared = plan["resource"]["name"]
    before = {m: member_record(fleet["sagemaker"], m) for m in members}
    untested = runner.invoke(app, ["apply", plan["id"]])  # its risk says load-test first
    assert untested.exit_code == 1
    assert error_lines(untested) == [f"error: plan {plan['id']} ({shared}): load-test first ({LOAD_TEST}); a replay "
                                     "of the window cannot predict it"]
    dry = runner.invoke(app, ["apply", plan["id"], "--load-tested"])
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.splitlines()[0].startswith(f"plan {plan['id']}: shared endpoint {shared} / - in {ACCOUNT} "
                                                 f"{REGION}: ")
    Emulator.deployments(create_seconds=0.5)
    Emulator.faults.reset()
    applied = runner.invoke(app, ["apply", plan["id"], "--yes", "--load-tested"])
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines()[-1] == (
        f"plan {plan['id']} applied: shared endpoint {shared} is InService hosting 3 inference components "
        f"({', '.join(members)}); the member endpoints are unchanged: callers move to InvokeEndpoint with "
        "InferenceComponentName before their deletes are proposed")
    sagemaker = fleet["sagemaker"]
    described = sagemaker.describe_endpoint(EndpointName=shared)
    assert described["EndpointStatus"] == "InService"
    assert described["EndpointConfigName"] == resource_name(shared, plan["id"])
    for member in members:
        component = sagemaker.describe_inference_component(InferenceComponentName=member)
        assert component["InferenceComponentStatus"] == "InService" and component["EndpointName"] == shared
        assert component["Specification"]["ModelName"] == before[member]["model"]
    members_unchanged(fleet, members, before)
    # Apply called no Delete* or Update* at all, and no call on a member endpoint but reads.
    made = [op for service, op in Emulator.faults.calls("sagemaker")]
    assert made.count("CreateInferenceComponent") == 3 and "DescribeEndpoint" in made  # the calls were seen
    assert not [op for op in made if op.startswith(("Delete", "Update"))], made
    change = record(fleet, plan["id"])
    assert change.outcome == "applied"
    assert statuses(change) == [("CreateEndpointConfig", "made"), ("CreateEndpoint", "made"),
                                *[("CreateInferenceComponent", "made")] * 3]
    assert [s["note"] for s in change.steps if s.get("step") == "note"] == [
        f"the caller said the load test was run and passed (--load-tested): {LOAD_TEST}"]

    # The next run sees the shared endpoint InService hosting every component: the plan is verified.
    assert not deliver_outcome(fleet["config"], execute_audit(fleet["config"])).problems
    with History(Path(fleet["config"].history.path)) as history:
        verified = next(r for r in history.applied() if r.plan_id == plan["id"])
    assert verified.verified_run_id is not None


def test_a_component_that_fails_is_named_with_what_was_made_and_a_retry_continues(
        fleet: dict[str, Any], plans: dict[str, dict[str, Any]]) -> None:
    plan = plans["fails"]
    shared = plan["resource"]["name"]
    first, second = GROUPS["fails"]
    config = resource_name(shared, plan["id"])
    Emulator.inference_components(fail={second: "no instance can hold its memory"})
    try:
        failed = runner.invoke(app, ["apply", plan["id"], "--yes", "--load-tested"])
    finally:
        Emulator.inference_components(fail={})
    assert failed.exit_code == 1, failed.output
    (line,) = error_lines(failed)
    assert line == (
        f"error: plan {plan['id']} failed: inference component {second} is Failed: no instance can hold its memory; "
        f"left behind: inference component {first} (aws sagemaker delete-inference-component "
        f"--inference-component-name {first} --region {REGION}); inference component {second} (aws sagemaker "
        f"delete-inference-component --inference-component-name {second} --region {REGION}); endpoint {shared} "
        f"(aws sagemaker delete-endpoint --endpoint-name {shared} --region {REGION}); endpoint config {config} (aws "
        f"sagemaker delete-endpoint-config --endpoint-config-name {config} --region {REGION}); a retry of plan "
        f"{plan['id']} reuses them")
    assert record(fleet, plan["id"]).outcome == "failed"

    # The retry finds the failed component: refused, naming the command that removes it.
    refused = runner.invoke(app, ["apply", plan["id"], "--yes", "--load-tested"])
    assert refused.exit_code == 1
    (line,) = error_lines(refused)
    assert line.startswith(f"error: plan {plan['id']}: inference component {second} exists and is not the one this "
                           "plan makes (it Failed: no instance can hold its memory); 3 of 4 calls made before it")
    assert (f"remove it if nothing uses it: aws sagemaker delete-inference-component --inference-component-name "
            f"{second} --region {REGION}; left behind: ") in line
    fleet["sagemaker"].delete_inference_component(InferenceComponentName=second)
    for _ in range(50):  # Deleting, then gone
        try:
            fleet["sagemaker"].describe_inference_component(InferenceComponentName=second)
        except fleet["sagemaker"].exceptions.ClientError:
            break
        time.sleep(0.1)

    retried = runner.invoke(app, ["apply", plan["id"], "--yes", "--load-tested"])
    assert retried.exit_code == 0, retried.output
    assert statuses(record(fleet, plan["id"])) == [
        ("CreateEndpointConfig", "reused"), ("CreateEndpoint", "reused"), ("CreateInferenceComponent", "reused"),
        ("CreateInferenceComponent", "made")]


def signal_when_creating(endpoint: str, sent: list[float]) -> None:
    sagemaker = boto3.client("sagemaker", region_name=REGION)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            status = sagemaker.describe_endpoint(EndpointName=endpoint)["EndpointStatus"]
        except sagemaker.exceptions.ClientError:
            status = "absent"
        if status == "Creating":
            time.sleep(0.3)
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)
            return
        time.sleep(0.05)


def test_sigint_during_the_wait_for_the_shared_endpoint_is_journaled_and_a_retry_continues(
        fleet: dict[str, Any], plans: dict[str, dict[str, Any]]) -> None:
    plan = plans["signal"]
    shared = plan["resource"]["name"]
    config = resource_name(shared, plan["id"])
    Emulator.deployments(create_seconds=3.0)
    sent: list[float] = []
    signaller = threading.Thread(target=signal_when_creating, args=(shared, sent), daemon=True)
    signaller.start()
    try:
        result = runner.invoke(app, ["apply", plan["id"], "--yes", "--load-tested"])
    finally:
        signaller.join(timeout=10)
        Emulator.deployments(create_seconds=0.0)
    assert result.exit_code == 130, result.output
    (line,) = error_lines(result)
    assert line == (
        f"error: plan {plan['id']} interrupted by SIGINT after 2 of 4 calls (CreateEndpointConfig, CreateEndpoint); "
        f"shared endpoint {shared} is Creating; its creation goes on; not made: CreateInferenceComponent, "
        f"CreateInferenceComponent; left behind: endpoint {shared} (aws sagemaker delete-endpoint --endpoint-name "
        f"{shared} --region {REGION}); endpoint config {config} (aws sagemaker delete-endpoint-config "
        f"--endpoint-config-name {config} --region {REGION}); a retry of plan {plan['id']} reuses them")
    change = record(fleet, plan["id"])
    assert change.outcome == "interrupted"
    assert statuses(change) == [("CreateEndpointConfig", "made"), ("CreateEndpoint", "made")]
    retried = runner.invoke(app, ["apply", plan["id"], "--yes", "--load-tested"])  # waits, then goes on
    assert retried.exit_code == 0, retried.output
    assert statuses(record(fleet, plan["id"])) == [("CreateEndpointConfig", "reused"), ("CreateEndpoint", "reused"),
                                                   ("CreateInferenceComponent", "made"),
                                                   ("CreateInferenceComponent", "made")]


# --- refusals: one line each, nothing made -----------------------------------------------------------


def refused(fleet: dict[str, Any], plan: dict[str, Any]) -> str:
    result = runner.invoke(app, ["apply", plan["id"], "--yes", "--load-tested"])
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    shared = plan["resource"]["name"]
    configs = {c["EndpointConfigName"] for c in fleet["sagemaker"].list_endpoint_configs()["EndpointConfigs"]}
    assert resource_name(shared, plan["id"]) not in configs, line
    return line


def test_a_member_on_another_config_is_refused(fleet: dict[str, Any], plans: dict[str, dict[str, Any]]) -> None:
    sagemaker = fleet["sagemaker"]
    name = GROUPS["moved"][0]
    running = sagemaker.describe_endpoint(EndpointName=name)["EndpointConfigName"]
    variants = sagemaker.describe_endpoint_config(EndpointConfigName=running)["ProductionVariants"]
    sagemaker.create_endpoint_config(EndpointConfigName=f"{name}-by-hand", ProductionVariants=variants)
    sagemaker.update_endpoint(EndpointName=name, EndpointConfigName=f"{name}-by-hand")
    for _ in range(50):
        if sagemaker.describe_endpoint(EndpointName=name)["EndpointStatus"] == "InService":
            break
        time.sleep(0.1)
    line = refused(fleet, plans["moved"])
    assert line == (f"error: member endpoint {name} changed since the audit: its config is now '{name}-by-hand', the "
                    f"plan was made on '{running}'; run the audit again")


def test_a_member_running_another_model_is_refused(fleet: dict[str, Any], plans: dict[str, dict[str, Any]],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan (its basis and its component alike) was made on a model the member no longer runs."""
    plan = copy.deepcopy(plans["moved"])
    name = GROUPS["moved"][1]
    plan["basis"]["members"] = plan["basis"]["members"][::-1]  # this member is read first
    plan["basis"]["members"][0]["model"] = "the-model-the-audit-saw"
    for call in plan["change"]["calls"]:
        if call["params"].get("InferenceComponentName") == name:
            call["params"]["Specification"]["ModelName"] = "the-model-the-audit-saw"
    load_plans_from(monkeypatch, {plan["id"]: plan})
    line = refused(fleet, plan)
    running = member_record(fleet["sagemaker"], name)["model"]
    assert line == (f"error: member endpoint {name} runs model {running} on variant AllTraffic, not "
                    "the-model-the-audit-saw as the plan was made on; run the audit again")
    plan["change"]["calls"][-1]["params"]["Specification"]["ModelName"] = running  # the call edited alone
    load_plans_from(monkeypatch, {plan["id"]: plan})
    assert refused(fleet, plan).endswith(f"call 4 (sagemaker:CreateInferenceComponent) names model {running} "
                                         f"(member {name} runs the-model-the-audit-saw in the plan's basis), not the "
                                         f"plan's {plan['resource']['name']}")


def test_a_shared_endpoint_someone_else_made_is_refused(fleet: dict[str, Any],
                                                        plans: dict[str, dict[str, Any]]) -> None:
    plan = plans["someone"]
    shared = plan["resource"]["name"]
    running = member_record(fleet["sagemaker"], GROUPS["someone"][0])["endpoint_config"]
    fleet["sagemaker"].create_endpoint(EndpointName=shared, EndpointConfigName=running,
                                       Tags=[{"Key": "auditor:plan", "Value": "0000000000"}])
    line = refused(fleet, plan)
    assert line == (f"error: shared endpoint {shared} exists and was made by plan 0000000000, not by plan "
                    f"{plan['id']}: nothing is made")


def test_a_component_name_taken_is_refused(fleet: dict[str, Any], plans: dict[str, dict[str, Any]]) -> None:
    """cs-made-1 hosts nothing, but the first group's shared endpoint hosts a component of its name."""
    made = plans["made"]["resource"]["name"]
    try:
        fleet["sagemaker"].describe_inference_component(InferenceComponentName="cs-made-1")
    except fleet["sagemaker"].exceptions.ClientError:  # run alone: the first group's apply makes the name taken
        Emulator.deployments(create_seconds=0.5)
        Emulator.faults.reset()
        first = runner.invoke(app, ["apply", plans["made"]["id"], "--yes", "--load-tested"])
        assert first.exit_code == 0, first.output
        fleet["sagemaker"].describe_inference_component(InferenceComponentName="cs-made-1")
    line = refused(fleet, plans["taken"])
    assert line == (f"error: inference component cs-made-1 exists on endpoint {made}: the name is taken; nothing "
                    "is made")


def test_every_member_must_be_opted_in(fleet: dict[str, Any], plans: dict[str, dict[str, Any]]) -> None:
    line = refused(fleet, plans["optout"])
    assert line == ("error: member endpoint cs-optout-2 is not opted in: tag it auditor:apply=allowed or list it in "
                    "[apply] endpoints or [apply] resources")


def test_a_member_busier_since_the_audit_than_its_copies_reserve_is_refused(
        fleet: dict[str, Any], plans: dict[str, dict[str, Any]]) -> None:
    # 2.5 cores on its hottest instance, on each of the 4 it ran at the audit: 10 cores, where its one
    # copy reserves 7 (the hottest instance alone, 2.5, would read as fitting).
    name = GROUPS["busy"][1]
    Emulator.publish_metrics("/aws/sagemaker/Endpoints", [{
        "MetricName": "CPUUtilization", "Value": 250.0, "Unit": "Percent",
        "Timestamp": datetime.now(UTC) - timedelta(minutes=20),
        "Dimensions": [{"Name": "EndpointName", "Value": name}, {"Name": "VariantName", "Value": "AllTraffic"}]}],
        REGION)
    line = refused(fleet, plans["busy"])
    assert line.startswith(f"error: member endpoint {name} used up to 10.00 CPU cores since the audit's window "
                           "ended at ")
    assert line.endswith("more than its copies reserve on the shared endpoint (7); run the audit again")


def test_members_edited_in_the_stored_plan_are_refused(fleet: dict[str, Any], plans: dict[str, dict[str, Any]],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared endpoint is named for its members (a digest): a member swapped in the history is caught."""
    plan = copy.deepcopy(plans["busy"])
    plan["basis"]["members"][0] = member_record(fleet["sagemaker"], "cs-optout-1")
    load_plans_from(monkeypatch, {plan["id"]: plan})
    line = refused(fleet, plan)
    assert line == (f"error: plan {plan['id']} ({plan['resource']['name']}): its members (cs-busy-2, cs-optout-1) "
                    f"are not those shared endpoint {plan['resource']['name']} is named for: the stored plan was "
                    "edited; run the audit again")


def test_the_cli_text_waits_for_the_shared_endpoint_before_its_components(
        fleet: dict[str, Any], plans: dict[str, dict[str, Any]]) -> None:
    from auditor.report.change_text import render_change

    plan = plans["made"]
    commands = [line.split(" --region")[0] for line in render_change(plan, "cli").splitlines()
                if line.startswith("aws ")]
    assert commands == ["aws sagemaker create-endpoint-config", "aws sagemaker create-endpoint",
                        "aws sagemaker wait endpoint-in-service", *["aws sagemaker create-inference-component"] * 3]
    assert render_change(plan, "cli").splitlines()[-1].startswith("aws sagemaker create-inference-component")


def test_the_config_may_carry_the_rules_name_and_nothing_else(fleet: dict[str, Any],
                                                                plans: dict[str, dict[str, Any]]) -> None:
    """The rule names the config `<shared endpoint>-config`; apply names its own `<shared>-<plan id>`:
    both pass the guards; any other name is refused before any call."""
    from auditor.act.guards import plan_refusal

    plan = copy.deepcopy(plans["made"])
    shared = plan["resource"]["name"]
    for call in plan["change"]["calls"][:2]:
        call["params"]["EndpointConfigName"] = f"{shared}-config"
    assert plan_refusal(parse_plan(plan), fleet["config"].apply, load_tested=True) is None
    plan["change"]["calls"][1]["params"]["EndpointConfigName"] = "people-config"
    assert plan_refusal(parse_plan(plan), fleet["config"].apply, load_tested=True) == (
        f"plan {plan['id']} ({shared}): call 2 (sagemaker:CreateEndpoint) names endpoint config people-config (not "
        f"the one the plan creates), not the plan's {shared}")


def test_the_config_passes_only_the_role_the_members_models_run_with(
        fleet: dict[str, Any], plans: dict[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The config's ExecutionRoleArn is passed to SageMaker (iam:PassRole, which the policy allows
    for any role of the account): the call edited alone is refused from the plan (its basis records
    the members' role), and the basis edited with it is refused by the models as DescribeModel reads
    them, before any call."""
    plan = copy.deepcopy(plans["moved"])
    shared = plan["resource"]["name"]
    first = GROUPS["moved"][0]
    running = member_record(fleet["sagemaker"], first)
    role = running["execution_role"]
    assert role and plan["change"]["calls"][0]["params"]["ExecutionRoleArn"] == role
    admin = f"arn:aws:iam::{ACCOUNT}:role/Admin"
    plan["change"]["calls"][0]["params"]["ExecutionRoleArn"] = admin  # the call edited alone
    load_plans_from(monkeypatch, {plan["id"]: plan})
    assert refused(fleet, plan) == (
        f"error: plan {plan['id']} ({shared}): call 1 (sagemaker:CreateEndpointConfig) passes ExecutionRoleArn "
        f"{admin}, not the role the members' models run with in the plan's basis ({role})")
    for member in plan["basis"]["members"]:  # the basis edited with it
        member["execution_role"] = admin
    load_plans_from(monkeypatch, {plan["id"]: plan})
    assert refused(fleet, plan) == (
        f"error: member endpoint {first}'s model {running['model']} runs with role {role}, not {admin}, which the "
        "plan's endpoint config passes: nothing is made; run the audit again")
