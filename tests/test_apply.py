"""`audit apply ID`: a demo plan applied end to end in the emulator (dry run, --yes, the next run's
verification, the weekly digest's realised saving), a deployment that rolls back, every guard's
one-line refusal, and the two IAM policies held to the calls the code makes.

The plans are real: the audit of three demo endpoints, as `plan_to_dict` writes them; the change
(CreateEndpointConfig copying the audited config with the variant resized, a rollback alarm, then
UpdateEndpoint blue/green canary 10% with automatic rollback on it) is built here the way the
change builders build it. Until the history stores plans, `load_plan` is pointed at these dicts.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore import xform_name
from typer.testing import CliRunner

from auditor.act import APPLY_OPERATIONS, APPLY_READS, apply_policy_actions
from auditor.act.apply import apply_plan
from auditor.act.plan import ApplyFailed, ApplyRefused
from auditor.cli import app
from auditor.config import ApplyConfig, AuditConfig, AwsConfig, HistoryConfig
from auditor.history.store import History
from auditor.history.weekly import build_digest, iso_week
from auditor.kinds.endpoints.kind import KIND as ENDPOINT_KIND
from auditor.models import Plan
from auditor.recommend.change import plan_id, resource_name
from auditor.records import plan_to_dict
from auditor.report.weekly import render_weekly_text
from auditor.tasks.audit import deliver_outcome, execute_audit
from auditor_emulator.fleet import demo_fleet, seed_fleet
from auditor_emulator.server import Emulator
from conftest import APPLY_ROLE, error_lines, load_plans_from, resized_variants, seeded_emulator, utc_now
from helpers import live_basis

ROOT = Path(__file__).parent.parent
ENDPOINTS = ("search-embeddings", "image-tagger", "pricing-api")
runner = CliRunner()


@pytest.fixture(scope="module")
def fleet(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Three demo endpoints seeded and audited once (the run recorded); search-embeddings carries the
    opt-in tag, image-tagger is opted in by [apply] endpoints, pricing-api by neither."""
    specs = [s for s in demo_fleet() if s.name in ENDPOINTS]
    home = tmp_path_factory.mktemp("apply-home")
    with seeded_emulator(emulator, home, lambda emu: seed_fleet(emu, specs, now=utc_now())):
        Emulator.deployments(seconds=0.2, fail_instance_types=("ml.g4dn.xlarge",))
        sagemaker = boto3.client("sagemaker", region_name="us-east-1")
        arn = sagemaker.describe_endpoint(EndpointName="search-embeddings")["EndpointArn"]
        sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "auditor:apply", "Value": "allowed"}])
        config = AuditConfig(aws=AwsConfig(regions=("us-east-1",)),
                             history=HistoryConfig(path=str(home / "history.sqlite3")),
                             apply=ApplyConfig(role_arn=APPLY_ROLE, endpoints=("image-*",), wait_minutes=1.0))
        outcome = execute_audit(config)
        assert not deliver_outcome(config, outcome).problems
        plans = {p.resource.name: p for p in outcome.report.plans if p.resource.name in ENDPOINTS}
        assert set(plans) == set(ENDPOINTS), [p.resource.name for p in outcome.report.plans]
        (home / "auditor.toml").write_text(
            f'[history]\npath = "{home / "history.sqlite3"}"\n'
            f'[apply]\nrole_arn = "{APPLY_ROLE}"\nendpoints = ["image-*"]\nwait_minutes = 1\n')
        yield {"config": config, "plans": plans, "home": home, "sagemaker": sagemaker}
        Emulator.deployments(seconds=2.0, fail_instance_types=())


def config_of(fleet: dict[str, Any], sagemaker: Any, endpoint: str) -> str:
    return str(sagemaker.describe_endpoint(EndpointName=endpoint)["EndpointConfigName"])


def blue_green_change(plan: Plan, sagemaker: Any) -> dict[str, Any]:
    """What the change builders emit for a resize: a copy of the config the endpoint runs with the
    variant resized, a rollback alarm, and UpdateEndpoint blue/green (canary 10%) rolling back on it;
    named as apply requires, from the endpoint, the variant and the plan id."""
    assert plan.variant
    running = config_of({}, sagemaker, plan.resource.name)
    variants = resized_variants(sagemaker, running, plan)
    new_config = resource_name(plan.resource.name, plan.id)
    alarm = f"{plan.resource.name}-{plan.variant}-{plan.id}-5xx"
    return {
        "calls": [
            {"service": "cloudwatch", "operation": "PutMetricAlarm",
             "purpose": "the alarm the deployment rolls back on",
             "params": {"AlarmName": alarm, "Namespace": "AWS/SageMaker", "MetricName": "Invocation5XXErrors",
                        "Dimensions": [{"Name": "EndpointName", "Value": plan.resource.name},
                                       {"Name": "VariantName", "Value": plan.variant}],
                        "Statistic": "Sum", "Period": 60, "EvaluationPeriods": 2, "Threshold": 1.0,
                        "ComparisonOperator": "GreaterThanOrEqualToThreshold"}},
            {"service": "sagemaker", "operation": "CreateEndpointConfig",
             "purpose": f"the audited config with {plan.variant} on the proposed shape",
             "params": {"EndpointConfigName": new_config, "ProductionVariants": variants}},
            {"service": "sagemaker", "operation": "UpdateEndpoint",
             "purpose": "blue/green: 10% canary, then the rest; rolls back on the alarm",
             "params": {"EndpointName": plan.resource.name, "EndpointConfigName": new_config,
                        "DeploymentConfig": {
                            "BlueGreenUpdatePolicy": {
                                "TrafficRoutingConfiguration": {
                                    "Type": "CANARY", "WaitIntervalInSeconds": 300,
                                    "CanarySize": {"Type": "CAPACITY_PERCENT", "Value": 10}},
                                "TerminationWaitInSeconds": 600, "MaximumExecutionTimeoutInSeconds": 3600},
                            "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": alarm}]}}}},
        ],
        "rollback": f"automatic: SageMaker returns to {running} when {alarm} fires",
        "waits_for": f"endpoint {plan.resource.name} InService",
    }


def stored_plan(fleet: dict[str, Any], endpoint: str, count: int | None = None, **changes: Any) -> dict[str, Any]:
    """The plan's JSON as the history keeps it (plan_to_dict, with its id, risk and change), made on
    the endpoint as it is now (its config and basis); `count`: another proposed count, for a plan
    (and names) of its own."""
    plan = fleet["plans"][endpoint]
    if count is not None:
        plan = replace(plan, proposed=replace(plan.proposed, instance_count=count))
    plan = replace(plan, id=plan_id(plan))
    stored = {**plan_to_dict(plan), "risk": {"level": "low", "load_test_first": []},
              "change": blue_green_change(plan, fleet["sagemaker"]), "basis": live_basis(endpoint)}
    stored["current"]["endpoint_config_name"] = config_of(fleet, fleet["sagemaker"], endpoint)
    for key, value in changes.items():
        stored[key] = value
    return stored


@pytest.fixture
def plans_in_history(monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    """`load_plan` reads these (the history's plans table is another branch's)."""
    return load_plans_from(monkeypatch, {})


# --- the guards, each one line, nothing changed ------------------------------------------------


def refusal(fleet: dict[str, Any], plan: dict[str, Any], **apply: Any) -> str:
    config = replace(fleet["config"], apply=replace(fleet["config"].apply, **apply))
    configs_before = len(fleet["sagemaker"].list_endpoint_configs()["EndpointConfigs"])
    with pytest.raises(ApplyRefused) as refused:
        apply_plan(config, plan, yes=True)
    assert len(fleet["sagemaker"].list_endpoint_configs()["EndpointConfigs"]) == configs_before
    message = str(refused.value)
    assert "\n" not in message
    return message


def test_a_plan_above_max_risk_is_refused(fleet: dict[str, Any]) -> None:
    plan = stored_plan(fleet, "search-embeddings", risk={"level": "medium", "load_test_first": []})
    assert "risk medium is above [apply] max_risk = low" in refusal(fleet, plan)
    assert "risk" not in refusal(fleet, plan, max_risk="medium", role_arn=None)  # then the next guard speaks
    unassessed = stored_plan(fleet, "search-embeddings", risk=None)
    assert "its risk was not assessed" in refusal(fleet, unassessed)


def test_an_endpoint_not_opted_in_is_refused(fleet: dict[str, Any]) -> None:
    message = refusal(fleet, stored_plan(fleet, "pricing-api"))
    assert message == ("endpoint pricing-api is not opted in: tag it auditor:apply=allowed or list it in "
                       "[apply] endpoints or [apply] resources")


def test_an_unmeasured_plan_is_refused(fleet: dict[str, Any]) -> None:
    assert "unmeasured" in refusal(fleet, stored_plan(fleet, "search-embeddings", measured=False))


def test_a_plan_to_load_test_first_is_refused(fleet: dict[str, Any]) -> None:
    plan = stored_plan(fleet, "search-embeddings", risk={"level": "low", "load_test_first": ["another GPU model"]})
    assert "load-test first (another GPU model)" in refusal(fleet, plan)


def test_an_endpoint_changed_since_the_audit_is_refused(fleet: dict[str, Any]) -> None:
    plan = stored_plan(fleet, "search-embeddings")
    plan["current"]["endpoint_config_name"] = "search-embeddings-config-older"
    message = refusal(fleet, plan)
    assert message.startswith("endpoint search-embeddings changed since the audit: its config is now "
                              "'search-embeddings-config'")


def test_without_apply_credentials_apply_refuses(fleet: dict[str, Any]) -> None:
    message = refusal(fleet, stored_plan(fleet, "search-embeddings"), role_arn=None, profile=None)
    assert message.startswith("no apply credentials: set [apply] profile or [apply] role_arn")


def test_a_call_apply_never_makes_is_refused(fleet: dict[str, Any]) -> None:
    plan = stored_plan(fleet, "search-embeddings")
    plan["change"]["calls"].insert(0, {"service": "sagemaker", "operation": "DeleteModel",
                                       "params": {"ModelName": "search-embeddings"}, "purpose": "x"})
    assert "sagemaker:DeleteModel, which apply never makes" in refusal(fleet, plan)


def test_a_call_botocore_would_reject_is_refused(fleet: dict[str, Any]) -> None:
    plan = stored_plan(fleet, "search-embeddings")
    plan["change"]["calls"][1]["params"]["ProductionVariants"][0]["InitialInstanceCount"] = "three"
    assert "CreateEndpointConfig call is not valid" in refusal(fleet, plan)


def test_the_cli_refusal_is_one_error_line_and_exit_1(fleet: dict[str, Any],
                                                      plans_in_history: dict[str, dict[str, Any]]) -> None:
    plan = stored_plan(fleet, "pricing-api")
    plans_in_history[plan["id"]] = plan
    for flags in ([], ["--yes"]):
        result = runner.invoke(app, ["apply", plan["id"], *flags])
        assert result.exit_code == 1, result.output
        assert error_lines(result) == ["error: endpoint pricing-api is not opted in: tag it auditor:apply=allowed "
                                       "or list it in [apply] endpoints or [apply] resources"]
    assert config_of(fleet, fleet["sagemaker"], "pricing-api") == "pricing-api-config"


# --- end to end ------------------------------------------------------------------------------


def test_dry_run_then_apply_then_the_next_run_verifies_and_the_digest_counts_it(
        fleet: dict[str, Any], plans_in_history: dict[str, dict[str, Any]]) -> None:
    sagemaker = fleet["sagemaker"]
    plan = stored_plan(fleet, "search-embeddings")
    plans_in_history[plan["id"]] = plan
    new_config = plan["change"]["calls"][2]["params"]["EndpointConfigName"]

    dry = runner.invoke(app, ["apply", plan["id"]])
    assert dry.exit_code == 0, dry.output
    for call in plan["change"]["calls"]:
        assert f"{call['service']} {call['operation']}: " in dry.stdout
        assert json.dumps(call["params"], sort_keys=True) in dry.stdout
    assert "4 x ml.m5.4xlarge -> 3 x ml.m5.xlarge" in dry.stdout
    assert "guards pass: would apply as arn:aws:sts::123456789012:assumed-role/SageMakerAuditorApply/" in dry.stdout
    assert config_of(fleet, sagemaker, "search-embeddings") == "search-embeddings-config"
    assert new_config not in {c["EndpointConfigName"] for c in sagemaker.list_endpoint_configs()["EndpointConfigs"]}
    with History(Path(fleet["config"].history.path)) as history:
        assert history.applied() == []

    # The config's own tags (the audit does not read them) go with the copy apply makes.
    source_arn = sagemaker.describe_endpoint_config(EndpointConfigName="search-embeddings-config")["EndpointConfigArn"]
    sagemaker.add_tags(ResourceArn=source_arn, Tags=[{"Key": "team", "Value": "search"}])
    applied = runner.invoke(app, ["apply", plan["id"], "--yes"])
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines()[-1] == (f"plan {plan['id']} applied: endpoint search-embeddings is InService "
                                               f"on {new_config} (was search-embeddings-config)")
    copy_arn = sagemaker.describe_endpoint_config(EndpointConfigName=new_config)["EndpointConfigArn"]
    assert {"Key": "team", "Value": "search"} in sagemaker.list_tags(ResourceArn=copy_arn)["Tags"]
    described = sagemaker.describe_endpoint(EndpointName="search-embeddings")
    assert (described["EndpointStatus"], described["EndpointConfigName"]) == ("InService", new_config)
    assert described["LastDeploymentConfig"]["BlueGreenUpdatePolicy"]["TrafficRoutingConfiguration"]["CanarySize"] \
        == {"Type": "CAPACITY_PERCENT", "Value": 10}
    with History(Path(fleet["config"].history.path)) as history:
        (record,) = history.applied()
    assert (record.plan_id, record.outcome, record.new_config) == (plan["id"], "applied", new_config)
    assert record.caller.startswith("arn:aws:sts::123456789012:assumed-role/SageMakerAuditorApply/")
    assert [c["operation"] for c in record.calls] == ["PutMetricAlarm", "CreateEndpointConfig", "UpdateEndpoint"]
    assert record.verified_run_id is None

    listed = runner.invoke(app, ["history", "--applied", "--format", "json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout)[0]["outcome"] == "applied"

    # The next run sees the new shape and verifies the change; the week's digest counts its saving.
    outcome = execute_audit(fleet["config"])
    variant = next(v for e in ENDPOINT_KIND.section(outcome.report) if e.endpoint.name == "search-embeddings"
                   for v in e.variants)
    assert (variant.variant.instance_type, variant.variant.instance_count) == ("ml.m5.xlarge", 3)
    assert not deliver_outcome(fleet["config"], outcome).problems
    with History(Path(fleet["config"].history.path)) as history:
        (record,) = history.applied()
        assert record.verified_run_id == history.runs(limit=1)[0].id
        digest = build_digest(history, iso_week(utc_now()))
    assert digest is not None
    (saving,) = digest.applied
    before = plan["current"]["monthly_cost_usd"]
    after = variant.monthly_cost_usd
    assert after is not None and saving.realised_monthly_usd == round(before - after, 2) > 0
    assert digest.realised_monthly_usd >= saving.realised_monthly_usd
    assert "APPLIED AND VERIFIED THIS WEEK" in render_weekly_text(digest)
    assert f"plan {plan['id']} by arn:aws:sts::123456789012:assumed-role/SageMakerAuditorApply/" in \
        render_weekly_text(digest)


def test_a_deployment_that_fails_rolls_back_and_apply_says_so(
        fleet: dict[str, Any], plans_in_history: dict[str, dict[str, Any]]) -> None:
    sagemaker = fleet["sagemaker"]
    plan = stored_plan(fleet, "image-tagger")  # to ml.g4dn.xlarge, which the emulator fails
    assert plan["proposed"]["instance_type"] == "ml.g4dn.xlarge"
    plans_in_history[plan["id"]] = plan
    result = runner.invoke(app, ["apply", plan["id"], "--yes"])
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert line.startswith(f"error: plan {plan['id']} rolled back: endpoint image-tagger is InService on "
                           f"image-tagger-config, not image-tagger-{plan['id']}: The primary container")
    assert config_of(fleet, sagemaker, "image-tagger") == "image-tagger-config"
    with History(Path(fleet["config"].history.path)) as history:
        record = next(r for r in history.applied() if r.plan_id == plan["id"])
    assert record.outcome == "rolled-back" and "ping health check" in record.message


# --- the policies ------------------------------------------------------------------------------


def _actions(document: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for statement in document["Statement"]:
        if statement["Effect"] != "Allow":  # the apply policy's Denys (tagging) grant nothing
            continue
        listed = statement["Action"]
        found.update([listed] if isinstance(listed, str) else listed)
    return found


def test_the_apply_policy_is_exactly_what_apply_calls() -> None:
    policy = json.loads((ROOT / "deploy" / "iam-apply-policy.json").read_text())
    assert _actions(policy) == apply_policy_actions()
    # The reads apply makes in its code (its writes are data: the plan's ApiCalls): the engine's, the
    # write core's and the kinds' write side (targets, fresh evidence).
    methods = {xform_name(op): (service, op) for service, op in APPLY_READS}
    called: set[tuple[str, str]] = set()
    kinds_write = [p for part in ("target", "binding", "evidence", "verify")
                   for p in (ROOT / "auditor" / "kinds").glob(f"*/{part}.py")]
    assert kinds_write  # the glob finds the kinds' modules
    for path in [*(ROOT / "auditor" / "act").rglob("*.py"), *(ROOT / "auditor" / "write").rglob("*.py"),
                 *kinds_write]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name = node.func.attr
                if name == "get_paginator" and node.args and isinstance(node.args[0], ast.Constant):
                    name = str(node.args[0].value)
                if name in methods:
                    called.add(methods[name])
    assert called == set(APPLY_READS)


def test_the_audit_policy_stays_read_only() -> None:
    policy = _actions(json.loads((ROOT / "deploy" / "iam-policy.json").read_text()))
    writes = {a for a in policy if a.split(":")[1].startswith(("Create", "Update", "Put", "Delete", "Register",
                                                                 "Add", "Tag", "Untag", "Start", "Stop"))}
    assert writes == set()
    assert not policy & {f"{s}:{o}" for s, o in APPLY_OPERATIONS}


def test_every_change_a_plan_carries_uses_only_apply_operations(fleet: dict[str, Any]) -> None:
    """The change builders' calls are data: every operation any plan of the audit carries is one
    apply may make (and the change built here, like theirs, is)."""
    carried = {(c.service, c.operation) for p in fleet["plans"].values() if p.change for c in p.change.calls}
    built = {(c["service"], c["operation"]) for c in stored_plan(fleet, "pricing-api")["change"]["calls"]}
    assert carried | built <= APPLY_OPERATIONS


# --- calls that fail, alarms that do not exist, a wait that runs out -----------------------------


def test_a_failed_call_stops_the_change_and_is_recorded(fleet: dict[str, Any]) -> None:
    # A plan of its own (another count): its own id and config name (AWS refuses a name that exists).
    plan = stored_plan(fleet, "search-embeddings", count=5)
    # The copy names the audited config's model (a guard holds it to that config); gone since, AWS refuses it.
    model = plan["change"]["calls"][1]["params"]["ProductionVariants"][0]["ModelName"]
    described = fleet["sagemaker"].describe_model(ModelName=model)
    fleet["sagemaker"].delete_model(ModelName=model)
    try:
        with pytest.raises(ApplyFailed) as failed:
            apply_plan(fleet["config"], plan, yes=True)
    finally:
        fleet["sagemaker"].create_model(**{k: described[k] for k in ("ModelName", "PrimaryContainer",
                                                                     "ExecutionRoleArn") if k in described})
    assert str(failed.value).startswith(f"plan {plan['id']}: sagemaker:CreateEndpointConfig in us-east-1 failed: "
                                        "ValidationException: Could not find model")
    alarm = plan["change"]["calls"][0]["params"]["AlarmName"]
    assert str(failed.value).endswith(
        f"; 1 of 3 calls made before it; left behind: alarm {alarm} (aws cloudwatch delete-alarms --alarm-names "
        f"{alarm} --region us-east-1); a retry of plan {plan['id']} reuses it")
    with History(Path(fleet["config"].history.path)) as history:
        record = next(r for r in history.applied() if r.plan_id == plan["id"])
    assert record.outcome == "failed" and [c["operation"] for c in record.calls] == ["PutMetricAlarm"]


def test_a_rollback_alarm_that_does_not_exist_is_refused_before_anything_is_made(fleet: dict[str, Any]) -> None:
    plan = stored_plan(fleet, "search-embeddings", count=6)
    before = plan["current"]["endpoint_config_name"]
    plan["change"]["calls"][2]["params"]["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"] = [
        {"AlarmName": "never-created"}]
    assert refusal(fleet, plan) == (f"plan {plan['id']}: the rollback alarm never-created does not exist: "
                                    "nothing was changed")
    assert config_of(fleet, fleet["sagemaker"], "search-embeddings") == before


def test_a_rollback_alarm_in_alarm_is_refused_before_anything_is_made(fleet: dict[str, Any]) -> None:
    """SageMaker would roll the deployment back at once: refused in the dry run already, and with
    --yes before the plan's own alarm or endpoint config is made. The plan's own alarm, created new,
    starts INSUFFICIENT_DATA and is no reason to refuse."""
    sagemaker, cloudwatch = fleet["sagemaker"], boto3.client("cloudwatch", region_name="us-east-1")
    cloudwatch.put_metric_alarm(AlarmName="search-embeddings-errors", Namespace="AWS/SageMaker",
                                MetricName="Invocation5XXErrors", Statistic="Sum", Period=60, EvaluationPeriods=1,
                                Threshold=1.0, ComparisonOperator="GreaterThanOrEqualToThreshold",
                                Dimensions=[{"Name": "EndpointName", "Value": "search-embeddings"}])
    cloudwatch.set_alarm_state(AlarmName="search-embeddings-errors", StateValue="ALARM", StateReason="5XX errors")
    plan = stored_plan(fleet, "search-embeddings", count=7)
    before = plan["current"]["endpoint_config_name"]
    own = plan["change"]["calls"][0]["params"]["AlarmName"]
    update = plan["change"]["calls"][2]["params"]
    update["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"] = [
        {"AlarmName": own}, {"AlarmName": "search-embeddings-errors"}]
    expected = (f"plan {plan['id']}: the rollback alarm search-embeddings-errors is in state ALARM: the deployment "
                "would roll back at once (or the endpoint has a problem now); nothing was changed")
    with pytest.raises(ApplyRefused, match=rf"^plan {plan['id']}: the rollback alarm search-embeddings-errors is in"):
        apply_plan(fleet["config"], plan, yes=False)
    assert refusal(fleet, plan) == expected
    assert cloudwatch.describe_alarms(AlarmNames=[own])["MetricAlarms"] == []
    assert config_of(fleet, sagemaker, "search-embeddings") == before
    with History(Path(fleet["config"].history.path)) as history:
        assert plan["id"] not in {r.plan_id for r in history.applied()}
    # Once it is OK again, the same plan applies (the plan's own alarm, not there yet, is no reason to refuse).
    cloudwatch.set_alarm_state(AlarmName="search-embeddings-errors", StateValue="OK", StateReason="quiet")
    assert apply_plan(fleet["config"], plan, yes=True).outcome == "applied"


def fake_time() -> tuple[list[float], Any, Any]:
    """A clock that moves only when apply sleeps: a wait of hours polls the emulator in a second."""
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    return now, sleep, lambda: now[0]


def test_apply_waits_as_long_as_the_deployment_it_started_can_take(fleet: dict[str, Any]) -> None:
    """The plan's UpdateEndpoint allows its deployment 3600 s plus a 600 s termination wait: apply
    waits those 70 minutes, not [apply] wait_minutes (1 here, 60 by default), before it says
    "timed out"; the deployment goes on and the record says timed-out."""
    plan = stored_plan(fleet, "pricing-api")
    config = replace(fleet["config"], apply=replace(fleet["config"].apply, endpoints=("pricing-*",)))
    now, sleep, clock = fake_time()
    Emulator.deployments(seconds=10.0)
    try:
        with pytest.raises(ApplyFailed) as failed:
            apply_plan(config, plan, yes=True, sleep=sleep, clock=clock)
    finally:
        Emulator.deployments(seconds=0.2)
    assert str(failed.value) == (
        f"plan {plan['id']}: endpoint pricing-api is still Updating after 70 minutes (the deployment's "
        "MaximumExecutionTimeoutInSeconds 3600 + TerminationWaitInSeconds 600); the deployment goes on and the "
        "next audit run checks its shape")
    assert now[0] == 70 * 60
    with History(Path(config.history.path)) as history:
        record = next(r for r in history.applied() if r.plan_id == plan["id"])
    assert record.outcome == "timed-out"


def test_wait_minutes_governs_where_it_is_longer_or_no_deployment_is_set(fleet: dict[str, Any]) -> None:
    """A longer [apply] wait_minutes is kept; an UpdateEndpoint without a DeploymentConfig (a
    serverless plan: SageMaker's default update) waits [apply] wait_minutes."""
    from auditor.act.plan import parse_plan
    from auditor.kinds.endpoints.target import deployment_wait

    plan = stored_plan(fleet, "image-tagger")
    assert deployment_wait(parse_plan(plan), 90.0) == (90.0, "[apply] wait_minutes")
    del plan["change"]["calls"][2]["params"]["DeploymentConfig"]
    assert deployment_wait(parse_plan(plan), 1.0) == (1.0, "[apply] wait_minutes")
    plan = stored_plan(fleet, "image-tagger", count=5)  # a plan of its own: its own config name
    del plan["change"]["calls"][2]["params"]["DeploymentConfig"]
    config = replace(fleet["config"], apply=replace(fleet["config"].apply, wait_minutes=0.5))
    now, sleep, clock = fake_time()
    Emulator.deployments(seconds=10.0)
    try:
        with pytest.raises(ApplyFailed, match=r"is still Updating after 0.5 minutes \(\[apply\] wait_minutes\)"):
            apply_plan(config, plan, yes=True, sleep=sleep, clock=clock)
    finally:
        Emulator.deployments(seconds=0.2)
    assert now[0] == 30.0


def test_every_operation_a_change_builder_can_emit_is_one_apply_may_make() -> None:
    """Read from the builders' code, not from one fleet's plans: every write operation of the
    services a change uses that the plan and rule modules name is in APPLY_OPERATIONS (and so in
    deploy/iam-apply-policy.json, which the policy test keeps equal to it)."""
    import ast
    from pathlib import Path

    import botocore.session

    session = botocore.session.get_session()
    services = ("sagemaker", "application-autoscaling", "cloudwatch", "scheduler")
    names = {service: set(session.get_service_model(service).operation_names) for service in services}
    root = Path(__file__).parent.parent / "auditor"
    # A job's change is its next run's request, which apply never makes: the jobs kind is left out.
    builders = [path for path in [root / "recommend" / "change.py", *sorted(root.glob("kinds/*/rules/*.py")),
                                  *sorted(root.glob("kinds/*/change.py")), *sorted(root.glob("kinds/*/plans.py"))]
                if "jobs" not in path.parts]
    named = {(service, node.value) for path in builders for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             for service in services
             if node.value in names[service] and not node.value.startswith(("Describe", "List", "Get"))}
    assert ("sagemaker", "UpdateEndpoint") in named and ("scheduler", "CreateSchedule") in named
    assert {("sagemaker", "StopNotebookInstance"), ("sagemaker", "DeleteApp"),
            ("sagemaker", "BatchDeleteClusterNodes"), ("sagemaker", "UpdateDomain")} <= named
    assert named <= APPLY_OPERATIONS, sorted(named - APPLY_OPERATIONS)
