"""The review of `audit apply`'s write engine (findings 2, 4, 5, 6, 7, 8), each through the CLI or
apply_plan against the emulator:

- cleanup replays only what the row's own apply could have read: the variant's own target, the
  fields apply keeps, alarms named after the row's endpoint, variant and plan id, and only on an
  endpoint still opted in (a crafted row written with sqlite3);
- a failure after the deployment landed does not put the old scaling on the new shape;
- the endpoint is read again right before DeregisterScalableTarget and UpdateEndpoint, and a second
  apply on an endpoint with an apply in progress is refused;
- no AuditorError leaves the journal in-progress;
- a signal during the cleanup before the change stops the apply before its first call;
- after a landed resize the scheduled actions read are put back; step-scaling policies are named.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from auditor.act.apply import apply_clients, apply_plan
from auditor.act.journal import Journal
from auditor.act.plan import ApplyFailed, ApplyInterrupted, parse_plan
from auditor.cli import app
from auditor.history.store import AppliedChange, History
from auditor_emulator.server import Emulator
from conftest import SCALABLE_DIMENSION, apply_fleet, error_lines, load_plans_from, utc_now
from test_apply_engine import (
    alarm_of,
    needs_faults,
    scaling_state,
    statuses,
    stored_resizes,
)

TAGGED, UNTAGGED = "rv-tagged", "rv-untagged"
RESHAPED, DRIFT, BUSY, TAGS = "rv-reshaped", "rv-drift", "rv-busy", "rv-tags"
SIGNAL, ACTIONS, STEP, ROLLBACK = "rv-signal", "rv-actions", "rv-step", "rv-rollback"
SCENARIOS = (TAGGED, UNTAGGED, RESHAPED, DRIFT, BUSY, TAGS, SIGNAL, ACTIONS, STEP, ROLLBACK)
SCALED = (RESHAPED, ACTIONS, STEP)
DIMENSION = SCALABLE_DIMENSION
runner = CliRunner()
pytestmark = pytest.mark.usefixtures("quick_deployments")  # conftest.py: 0.2 s deployments, no fault armed


@pytest.fixture(scope="module")
def fleet(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A copy of search-embeddings per scenario, audited once; all tagged auditor:apply=allowed but
    rv-untagged; rv-reshaped, rv-actions and rv-step under autoscaling (2-6, a policy, a scheduled
    action), rv-step with a step-scaling policy as well."""
    def step_policy(scaling: Any) -> None:
        scaling.put_scaling_policy(
            PolicyName=f"{STEP}-steps", ServiceNamespace="sagemaker", ResourceId=f"endpoint/{STEP}/variant/AllTraffic",
            ScalableDimension=DIMENSION, PolicyType="StepScaling", StepScalingPolicyConfiguration={
                "AdjustmentType": "ChangeInCapacity", "Cooldown": 300,
                "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]})

    with apply_fleet(emulator, tmp_path_factory.mktemp("review-home"), SCENARIOS, untagged=(UNTAGGED,),
                     scaled=SCALED, prepare=step_policy) as made:
        yield made


@pytest.fixture
def stored(fleet: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    # (The plan's own RegisterScalableTarget carries the target across as the audit read it: the
    # binding guard refuses any other capacity than the plan's or the basis's.)
    return load_plans_from(monkeypatch, stored_resizes(fleet, scaled=SCALED))


def plan_id_of(fleet: dict[str, Any], endpoint: str) -> str:
    return str(fleet["plans"][endpoint].id)


def rows(fleet: dict[str, Any], plan_id: str) -> list[AppliedChange]:
    with History(Path(fleet["config"].history.path)) as history:
        return [r for r in history.applied() if r.plan_id == plan_id]


def targets_of(fleet: dict[str, Any], endpoint: str) -> list[tuple[int, int]]:
    found = fleet["scaling"].describe_scalable_targets(
        ServiceNamespace="sagemaker", ScalableDimension=DIMENSION,
        ResourceIds=[f"endpoint/{endpoint}/variant/AllTraffic"])["ScalableTargets"]
    return [(t["MinCapacity"], t["MaxCapacity"]) for t in found]


# --- finding 2: cleanup trusts the journal -------------------------------------------------------


def craft_row(fleet: dict[str, Any], *, endpoint: str, plan_id: str, outcome: str, steps: list[dict[str, Any]],
              calls: list[dict[str, Any]], plan: dict[str, Any]) -> None:
    """A row of `applied` as anyone who can write the history file could write it."""
    at = (utc_now()).isoformat()
    with sqlite3.connect(fleet["config"].history.path) as db:
        columns = [r[1] for r in db.execute("PRAGMA table_info(applied)")]
        row = {"plan_id": plan_id, "account_id": "123456789012", "region": "us-east-1", "endpoint": endpoint,
               "variant": "AllTraffic", "caller": "someone", "calls": json.dumps(calls), "plan": json.dumps(plan),
               "started_at": at, "finished_at": "2026-01-01T00:00:00+00:00", "outcome": outcome, "message": "",
               "previous_config": f"{endpoint}-config", "new_config": None, "monthly_savings_usd": 0.0,
               "steps": json.dumps(steps)}
        row = {k: v for k, v in row.items() if k in columns}
        db.execute(f"INSERT INTO applied ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                   tuple(row.values()))


def deregister_call() -> dict[str, Any]:
    return {"service": "application-autoscaling", "operation": "DeregisterScalableTarget", "params": {
        "ServiceNamespace": "sagemaker", "ResourceId": f"endpoint/{TAGGED}/variant/AllTraffic",
        "ScalableDimension": DIMENSION}}


def test_cleanup_registers_only_the_rows_own_variant_with_the_fields_apply_keeps(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """A crafted interrupted row for the opted-in rv-tagged whose snapshot's target and scheduled
    action name rv-untagged: nothing is registered on rv-untagged; a snapshot whose resource is not
    the row's own variant is not registered at all, and says so."""
    smuggled = {"namespace": "sagemaker", "resource_id": f"endpoint/{TAGGED}/variant/AllTraffic",
                "dimension": DIMENSION,
                "target": {"ResourceId": f"endpoint/{UNTAGGED}/variant/AllTraffic", "MinCapacity": 1,
                           "MaxCapacity": 1, "RoleARN": "arn:aws:iam::123456789012:role/other"},
                "policies": [],
                "scheduled_actions": [{"ScheduledActionName": "x", "Schedule": "rate(1 hour)",
                                       "ResourceId": f"endpoint/{UNTAGGED}/variant/AllTraffic",
                                       "ScalableTargetAction": {"MinCapacity": 1, "MaxCapacity": 1}}]}
    craft_row(fleet, endpoint=TAGGED, plan_id="crafted1", outcome="interrupted", calls=[deregister_call()],
              steps=[{"step": "read", "scaling": smuggled}], plan={})
    other = {**smuggled, "resource_id": f"endpoint/{UNTAGGED}/variant/AllTraffic", "target": {
        "MinCapacity": 1, "MaxCapacity": 1}}
    craft_row(fleet, endpoint=TAGGED, plan_id="crafted2", outcome="interrupted", calls=[deregister_call()],
              steps=[{"step": "read", "scaling": other}], plan={})
    result = runner.invoke(app, ["apply", "--cleanup", "--yes"])
    assert result.exit_code == 0, result.output
    assert targets_of(fleet, UNTAGGED) == []
    assert fleet["scaling"].describe_scheduled_actions(
        ServiceNamespace="sagemaker", ResourceId=f"endpoint/{UNTAGGED}/variant/AllTraffic")["ScheduledActions"] == []
    assert (f"plan crafted2: not registered again: the journal's scalable target endpoint/{UNTAGGED}/variant/"
            f"AllTraffic is not endpoint/{TAGGED}/variant/AllTraffic") in result.stdout
    # crafted1's target went on rv-tagged's own variant, with its min and max only.
    assert targets_of(fleet, TAGGED) == [(1, 1)]
    fleet["scaling"].deregister_scalable_target(ServiceNamespace="sagemaker", ScalableDimension=DIMENSION,
                                                ResourceId=f"endpoint/{TAGGED}/variant/AllTraffic")


def test_cleanup_deletes_no_alarm_not_named_after_the_row_and_writes_nothing_on_an_endpoint_not_opted_in(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    cloudwatch = fleet["cloudwatch"]
    for name in ("team-a-critical", f"{UNTAGGED}-AllTraffic-a-5xx"):
        cloudwatch.put_metric_alarm(AlarmName=name, Namespace="AWS/SageMaker", MetricName="Invocation5XXErrors",
                                    Statistic="Sum", Period=60, EvaluationPeriods=1, Threshold=1.0,
                                    ComparisonOperator="GreaterThanOrEqualToThreshold")

    def rolled_back(endpoint: str, alarm: str) -> dict[str, Any]:
        plan = {"change": {"calls": [{"operation": "UpdateEndpoint", "params": {"DeploymentConfig": {
            "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": alarm}]}}}}]}}
        return {"endpoint": endpoint, "plan_id": "a", "outcome": "rolled-back", "steps": [], "plan": plan,
                "calls": [{"service": "cloudwatch", "operation": "PutMetricAlarm", "params": {"AlarmName": alarm}}]}

    craft_row(fleet, **rolled_back(TAGGED, "team-a-critical"))  # "a" is in the name, but it is not apply's
    craft_row(fleet, **rolled_back(UNTAGGED, f"{UNTAGGED}-AllTraffic-a-5xx"))  # apply's name, not opted in
    result = runner.invoke(app, ["apply", "--cleanup", "--yes"])
    assert result.exit_code == 0, result.output
    assert f"plan a: nothing cleaned: endpoint {UNTAGGED} is not opted in now (tag auditor:apply=allowed)" \
        in result.stdout
    left = {a["AlarmName"] for a in cloudwatch.describe_alarms(
        AlarmNames=["team-a-critical", f"{UNTAGGED}-AllTraffic-a-5xx"])["MetricAlarms"]}
    assert left == {"team-a-critical", f"{UNTAGGED}-AllTraffic-a-5xx"}
    cloudwatch.delete_alarms(AlarmNames=sorted(left))
    with sqlite3.connect(fleet["config"].history.path) as db:
        db.execute("DELETE FROM applied WHERE plan_id = 'a'")


# --- finding 4: never the old scaling on the new shape -------------------------------------------


def test_a_failure_after_the_deployment_landed_leaves_the_old_scaling_off_the_new_shape(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """The endpoint is InService on the plan's config; the plan's RegisterScalableTarget is denied:
    the scaling read before the change is not put back on the new shape (restore is only for the
    audited config); the message names the plan's calls not made, and `audit apply --cleanup --yes`
    makes them, as the plan says (with the scheduled action read before)."""
    faults = needs_faults()
    plan_id = plan_id_of(fleet, RESHAPED)
    before = scaling_state(fleet, RESHAPED)
    faults.arm("application-autoscaling", "RegisterScalableTarget", "access_denied")
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert (f"the scalable target endpoint/{RESHAPED}/variant/AllTraffic is not registered again as read (the "
            f"endpoint is on the plan's config {RESHAPED}-{plan_id}: the old scaling would not fit it); the plan's "
            "calls not made: RegisterScalableTarget, PutScalingPolicy: `audit apply --cleanup --yes` makes them") \
        in line, line
    assert targets_of(fleet, RESHAPED) == []
    assert fleet["sagemaker"].describe_endpoint(EndpointName=RESHAPED)["EndpointConfigName"] == f"{RESHAPED}-{plan_id}"
    done = runner.invoke(app, ["apply", "--cleanup", "--yes"])
    assert done.exit_code == 0, done.output
    assert "was registered again as the plan's calls after UpdateEndpoint say" in done.stdout
    targets, policies, actions = scaling_state(fleet, RESHAPED)
    assert [(t["MinCapacity"], t["MaxCapacity"]) for t in targets] == [(2, 6)]  # the plan's call, carried
    assert policies == before[1] and actions == before[2]
    again = runner.invoke(app, ["apply", "--cleanup"])
    assert f"plan {plan_id}" not in again.stdout


# --- finding 5: read again right before the change; one apply at a time --------------------------


def test_a_change_by_a_person_after_the_first_read_stops_the_apply_before_update_endpoint(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """Someone scales the variant by hand while apply makes its alarm: UpdateEndpoint is not called,
    the endpoint keeps what the person set."""
    plan_id = plan_id_of(fleet, DRIFT)
    config = fleet["config"]
    clients = apply_clients(config, "us-east-1")
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")

    def by_hand(**_: Any) -> None:
        sagemaker.update_endpoint_weights_and_capacities(
            EndpointName=DRIFT, DesiredWeightsAndCapacities=[{"VariantName": "AllTraffic", "DesiredInstanceCount": 5}])

    clients.client("cloudwatch", "us-east-1").meta.events.register(
        "before-call.cloudwatch.PutMetricAlarm", by_hand)
    with pytest.raises(ApplyFailed) as failed:
        apply_plan(config, stored[plan_id], yes=True, clients=clients)
    assert f"plan {plan_id}: endpoint {DRIFT} is Updating, not InService: nothing is changed while it is: " \
        "UpdateEndpoint not called; 2 of 3 calls made before it" in str(failed.value)
    (row,) = rows(fleet, plan_id)
    assert row.outcome == "failed"
    assert [op for op, _ in statuses(row)] == ["CreateEndpointConfig", "PutMetricAlarm"]
    assert fleet["sagemaker"].describe_endpoint(EndpointName=DRIFT)["EndpointConfigName"] == f"{DRIFT}-config"


def test_a_second_apply_on_an_endpoint_with_one_in_progress_is_refused_naming_it(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    plan_id = plan_id_of(fleet, BUSY)
    with History(Path(fleet["config"].history.path)) as history:
        Journal.begin(history, parse_plan(stored[plan_id]), "someone-else", utc_now)
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert f"another apply on endpoint {BUSY} (plan {plan_id}, started " in line and "is in progress" in line, line
    assert len(rows(fleet, plan_id)) == 1


# --- finding 6: no AuditorError leaves the journal in-progress ----------------------------------


def test_a_list_tags_failure_while_copying_the_config_finishes_the_journal_failed(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    faults = needs_faults()
    plan_id = plan_id_of(fleet, TAGS)
    config = fleet["config"]
    clients = apply_clients(config, "us-east-1")

    described: list[int] = []

    def deny_next_list_tags(**_: Any) -> None:
        # The observe step reads the audited config, then the guard's ListTags is made; the copy reads
        # the config again (the second DescribeEndpointConfig): its ListTags is denied.
        described.append(1)
        if len(described) == 2:
            faults.arm("sagemaker", "ListTags", "access_denied")

    clients.client("sagemaker", "us-east-1").meta.events.register(
        "before-call.sagemaker.DescribeEndpointConfig", deny_next_list_tags)
    with pytest.raises(ApplyFailed) as failed:
        apply_plan(config, stored[plan_id], yes=True, clients=clients)
    assert "sagemaker:ListTags" in str(failed.value)
    (row,) = rows(fleet, plan_id)
    assert row.outcome == "failed"


def test_a_journal_write_refused_during_the_undo_still_finishes_the_row(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """A rollback: the apply deletes its rollback alarm, and the history refuses to mark it cleaned
    (a trigger stands in for the failure): the line says so and the row is finished rolled-back."""
    plan_id = plan_id_of(fleet, ROLLBACK)
    Emulator.deployments(seconds=0.2, fail_instance_types=(fleet["plans"][ROLLBACK].proposed.instance_type,))
    path = fleet["config"].history.path
    with sqlite3.connect(path) as db:
        db.execute("CREATE TRIGGER no_clean BEFORE UPDATE OF cleaned_at ON applied "
                   "BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    try:
        result = runner.invoke(app, ["apply", plan_id, "--yes"])
    finally:
        with sqlite3.connect(path) as db:
            db.execute("DROP TRIGGER no_clean")
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert f"rollback alarms {alarm_of(ROLLBACK, plan_id)} deleted (the journal could not record it: " in line, line
    (row,) = rows(fleet, plan_id)
    assert row.outcome == "rolled-back"


# --- finding 8: a signal during the cleanup before the change -----------------------------------


def test_a_signal_during_the_cleanup_before_the_change_stops_the_apply_before_its_first_call(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    plan_id = plan_id_of(fleet, SIGNAL)
    alarm = f"{SIGNAL}-AllTraffic-b-5xx"
    fleet["cloudwatch"].put_metric_alarm(
        AlarmName=alarm, Namespace="AWS/SageMaker", MetricName="Invocation5XXErrors", Statistic="Sum", Period=60,
        EvaluationPeriods=1, Threshold=1.0, ComparisonOperator="GreaterThanOrEqualToThreshold")
    plan = {"change": {"calls": [{"operation": "UpdateEndpoint", "params": {"DeploymentConfig": {
        "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": alarm}]}}}}]}}
    craft_row(fleet, endpoint=SIGNAL, plan_id="b", outcome="rolled-back", steps=[], plan=plan,
              calls=[{"service": "cloudwatch", "operation": "PutMetricAlarm", "params": {"AlarmName": alarm}}])
    config = fleet["config"]
    clients = apply_clients(config, "us-east-1")

    def interrupt(**_: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)

    clients.client("cloudwatch", "us-east-1").meta.events.register("before-call.cloudwatch.DeleteAlarms", interrupt)
    with pytest.raises(ApplyInterrupted) as stopped:
        apply_plan(config, stored[plan_id], yes=True, clients=clients)
    assert str(stopped.value).startswith(f"plan {plan_id} interrupted by SIGINT before its first call: nothing of "
                                         f"it was made; plan b (rolled-back): rollback alarms {alarm} deleted")
    assert rows(fleet, plan_id) == []
    assert fleet["cloudwatch"].describe_alarms(AlarmNames=[alarm])["MetricAlarms"] == []


# --- finding 7: what is restored is what was read -----------------------------------------------


def test_a_landed_autoscaled_resize_puts_its_scheduled_actions_back(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    plan_id = plan_id_of(fleet, ACTIONS)
    before = scaling_state(fleet, ACTIONS)
    assert before[2]
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert result.exit_code == 0, result.output
    assert f"scheduled actions {ACTIONS}-nights put back as read before the change" in result.stdout
    assert scaling_state(fleet, ACTIONS) == before
    assert alarm_of(ACTIONS, plan_id)


def test_a_step_scaling_policy_put_back_is_said_to_need_its_alarms_pointed_at_it(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """UpdateEndpoint denied: the target and both policies are put back, and the line says the step
    policy has a new ARN its alarms do not name (not "as read" alone)."""
    faults = needs_faults()
    plan_id = plan_id_of(fleet, STEP)
    faults.arm("sagemaker", "UpdateEndpoint", "access_denied")
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert "was registered again as read before the change; step-scaling policy rv-step-steps put back with a new " \
        "ARN: the alarms that invoked it name the deleted one and are not restored" in line, line
