"""`audit apply --yes` from the first write to the recorded outcome, through the CLI against the
emulator: the journal, SIGINT and SIGTERM, transient errors, a call that failed but landed, an
autoscaled variant's target and policies put back after a failure, a retry that reuses its config,
leftovers named, rollback alarms cleaned up, and the next run verifying whatever landed.

Each test has its own copy of the demo's search-embeddings endpoint (4 x ml.m5.4xlarge, idle:
a resize plan), audited once; its plan's change is built here as the change builders build it
(a copy of the audited config resized, a rollback alarm named after the plan id, UpdateEndpoint
blue/green rolling back on it).
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.history.store import AppliedChange, History
from auditor.history.weekly import build_digest, iso_week
from auditor.models import Plan
from auditor.records import plan_to_dict
from auditor.tasks.audit import deliver_outcome, execute_audit
from auditor_emulator.server import Emulator
from conftest import (
    SCALABLE_DIMENSION,
    apply_fleet,
    error_lines,
    load_plans_from,
    resized_variants,
    utc_now,
)

SCENARIOS = ("se-sigint", "se-sigterm", "se-killed", "se-scaled", "se-retry", "se-rollback", "se-verified", "se-500",
             "se-outage", "se-mid-call", "se-landed", "se-scaled-wait", "se-no-journal")
SCALED = "se-scaled"
SCALED_WAIT = "se-scaled-wait"
RESOURCE = f"endpoint/{SCALED}/variant/AllTraffic"
DIMENSION = SCALABLE_DIMENSION
runner = CliRunner()
pytestmark = pytest.mark.usefixtures("quick_deployments")  # conftest.py: 0.2 s deployments, no fault armed


@pytest.fixture(scope="module")
def fleet(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A copy of search-embeddings per scenario, tagged auditor:apply=allowed and audited once;
    se-scaled and se-scaled-wait are under autoscaling (2-6 instances, a target-tracking policy, a
    scheduled action)."""
    with apply_fleet(emulator, tmp_path_factory.mktemp("engine-home"), SCENARIOS, scaled=(SCALED, SCALED_WAIT)) as made:
        yield made


def alarm_of(endpoint: str, plan_id: str) -> str:
    """The rollback alarm's name as the change builder derives it (the binding guard holds it so)."""
    return f"{endpoint}-AllTraffic-{plan_id}-5xx"


def change_of(plan: Plan, sagemaker: Any, *, scaled: bool = False) -> dict[str, Any]:
    """A resize's change: (for an autoscaled variant, DeregisterScalableTarget first,) the copy of the
    audited config resized, a rollback alarm named after the plan, UpdateEndpoint blue/green rolling
    back on it (and RegisterScalableTarget and PutScalingPolicy after it, as read by the audit)."""
    assert plan.endpoint_config and plan.variant
    variants = resized_variants(sagemaker, plan.endpoint_config, plan)
    new_config = f"{plan.resource.name}-{plan.id}"
    alarm = alarm_of(plan.resource.name, plan.id)
    calls: list[dict[str, Any]] = [
        {"service": "sagemaker", "operation": "CreateEndpointConfig", "purpose": "the copy, resized",
         "params": {"EndpointConfigName": new_config, "ProductionVariants": variants,
                    "Tags": [{"Key": "auditor:plan", "Value": plan.id}]}},
        {"service": "cloudwatch", "operation": "PutMetricAlarm", "purpose": "the alarm the deployment rolls back on",
         "params": {"AlarmName": alarm, "Namespace": "AWS/SageMaker", "MetricName": "Invocation5XXErrors",
                    "Dimensions": [{"Name": "EndpointName", "Value": plan.resource.name},
                                   {"Name": "VariantName", "Value": plan.variant}],
                    "Statistic": "Sum", "Period": 60, "EvaluationPeriods": 2, "Threshold": 1.0,
                    "ComparisonOperator": "GreaterThanOrEqualToThreshold",
                    "Tags": [{"Key": "auditor:plan", "Value": plan.id}]}},
        {"service": "sagemaker", "operation": "UpdateEndpoint", "purpose": "blue/green, rolls back on the alarm",
         "params": {"EndpointName": plan.resource.name, "EndpointConfigName": new_config,
                    "DeploymentConfig": {
                        "BlueGreenUpdatePolicy": {
                            "TrafficRoutingConfiguration": {"Type": "ALL_AT_ONCE", "WaitIntervalInSeconds": 60},
                            "TerminationWaitInSeconds": 0, "MaximumExecutionTimeoutInSeconds": 600},
                        "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": alarm}]}}}},
    ]
    if scaled:
        keys = {"ServiceNamespace": "sagemaker", "ResourceId": f"endpoint/{plan.resource.name}/variant/{plan.variant}",
                "ScalableDimension": DIMENSION}
        calls.insert(2, {"service": "application-autoscaling", "operation": "DeregisterScalableTarget",
                         "purpose": "an instance type change fails otherwise", "params": keys})
        calls += [
            {"service": "application-autoscaling", "operation": "RegisterScalableTarget", "purpose": "again",
             "params": {**keys, "MinCapacity": 2, "MaxCapacity": 6}},
            {"service": "application-autoscaling", "operation": "PutScalingPolicy", "purpose": "as read",
             "params": {**keys, "PolicyName": f"{plan.resource.name}-invocations",
                        "PolicyType": "TargetTrackingScaling",
                        "TargetTrackingScalingPolicyConfiguration": {
                            "TargetValue": 300.0, "ScaleInCooldown": 600, "ScaleOutCooldown": 120,
                            "PredefinedMetricSpecification": {
                                "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}}}},
        ]
    # What a failure after the deregister puts back (change.py's `restore`: the target as read).
    restore = calls[-2:] if scaled else []
    return {"calls": calls, "rollback": f"automatic: back to {plan.endpoint_config} when {alarm} fires",
            "waits_for": f"endpoint {plan.resource.name} InService", "restore": restore}


@pytest.fixture
def stored(fleet: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, Any]]:
    """Each scenario's plan as the history keeps it; `load_plan` reads these."""
    return load_plans_from(monkeypatch, stored_resizes(fleet, scaled=(SCALED, SCALED_WAIT)))


def stored_resizes(fleet: dict[str, Any], scaled: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Each plan of `fleet` by id, as the history keeps it, with its change as `change_of` builds it."""
    return {plan.id: {**plan_to_dict(plan), "id": plan.id, "risk": {"level": "low", "load_test_first": []},
                      "measured": True, "change": change_of(plan, fleet["sagemaker"], scaled=name in scaled)}
            for name, plan in fleet["plans"].items()}


def plan_of(fleet: dict[str, Any], endpoint: str) -> str:
    return str(fleet["plans"][endpoint].id)


def record(fleet: dict[str, Any], plan_id: str) -> AppliedChange:
    with History(Path(fleet["config"].history.path)) as history:
        return next(r for r in history.applied() if r.plan_id == plan_id)


def statuses(change: AppliedChange) -> list[tuple[str, str]]:
    return [(s["operation"], s["status"]) for s in change.steps if s.get("step") == "call"]


def needs_faults() -> Any:
    if getattr(Emulator, "faults", None) is None:
        pytest.skip("the emulator's fault injection (branch emu) is not merged yet")
    return Emulator.faults


def test_apply_without_a_plan_id_or_with_both_says_so_on_one_line(fleet: dict[str, Any]) -> None:
    alone = runner.invoke(app, ["apply"])
    assert alone.exit_code == 1
    assert error_lines(alone) == ["error: audit apply needs a plan id (audit plans lists them), or --cleanup"]
    both = runner.invoke(app, ["apply", "p-x", "--cleanup"])
    assert both.exit_code == 1
    assert error_lines(both) == ["error: audit apply --cleanup takes no plan id"]


# --- the journal ---------------------------------------------------------------------------------


def test_a_change_that_cannot_be_journaled_is_not_made_and_one_whose_journal_breaks_stops(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """The history refuses the journal's row (a trigger stands in for a full disk): apply refuses,
    nothing is made. It accepts the row but not its updates: apply stops after the first call and
    the error line names the call it made."""
    import sqlite3

    plan_id = plan_of(fleet, "se-no-journal")
    path = fleet["config"].history.path
    with sqlite3.connect(path) as db:
        db.execute("CREATE TRIGGER no_journal BEFORE INSERT ON applied BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    try:
        refused = runner.invoke(app, ["apply", plan_id, "--yes"])
    finally:
        with sqlite3.connect(path) as db:
            db.execute("DROP TRIGGER no_journal")
    assert refused.exit_code == 1, refused.output
    (line,) = error_lines(refused)
    assert line.endswith("disk full: the apply journal cannot be written, so nothing was changed"), line
    configs = {c["EndpointConfigName"] for c in fleet["sagemaker"].list_endpoint_configs()["EndpointConfigs"]}
    assert f"se-no-journal-{plan_id}" not in configs

    with sqlite3.connect(path) as db:
        db.execute("CREATE TRIGGER no_update BEFORE UPDATE ON applied BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    try:
        broken = runner.invoke(app, ["apply", plan_id, "--yes"])
    finally:
        with sqlite3.connect(path) as db:
            db.execute("DROP TRIGGER no_update")
    assert broken.exit_code == 1, broken.output
    (line,) = error_lines(broken)
    cannot = f"cannot write the apply journal to the history database {path}: disk full"
    config_name = f"se-no-journal-{plan_id}"
    assert line == (f"error: plan {plan_id}: {cannot}: stopped; calls made: CreateEndpointConfig; left behind: "
                    f"endpoint config {config_name} (aws sagemaker delete-endpoint-config --endpoint-config-name "
                    f"{config_name} --region us-east-1); a retry of plan {plan_id} reuses it; the apply journal could "
                    f"not be finished ({cannot}): calls made: CreateEndpointConfig")
    assert fleet["sagemaker"].describe_endpoint(EndpointName="se-no-journal")["EndpointConfigName"] == \
        "se-no-journal-config"
    assert record(fleet, plan_id).outcome == "in-progress"  # what the history could keep


# --- interrupted ---------------------------------------------------------------------------------


def signal_when_updating(endpoint: str, sig: signal.Signals, sent: list[float]) -> None:
    """Send `sig` to this process once the endpoint is Updating (apply is waiting then)."""
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if sagemaker.describe_endpoint(EndpointName=endpoint)["EndpointStatus"] == "Updating":
            time.sleep(0.3)
            sent.append(time.monotonic())
            os.kill(os.getpid(), sig)
            return
        time.sleep(0.05)


@pytest.mark.parametrize(("endpoint", "sig", "code"), [("se-sigint", signal.SIGINT, 130),
                                                       ("se-sigterm", signal.SIGTERM, 143)])
def test_a_signal_during_the_wait_is_recorded_said_and_exits_as_a_stopped_process(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]], endpoint: str, sig: signal.Signals,
        code: int) -> None:
    """The deployment takes 3 s; the signal arrives 0.5 s into the wait: apply ends at once, says on
    stderr what it made and that the deployment goes on, records "interrupted", and puts the
    handlers back. The next run, after the deployment ended, verifies the change."""
    plan_id = plan_of(fleet, endpoint)
    name = sig.name
    Emulator.deployments(seconds=3.0)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    sent: list[float] = []
    signaller = threading.Thread(target=signal_when_updating, args=(endpoint, sig, sent), daemon=True)
    signaller.start()
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    ended = time.monotonic()
    signaller.join(timeout=10)
    assert result.exit_code == code, result.output
    assert sent and ended - sent[0] < 1.0, (sent, ended)  # the wait ended at the signal, not after the 3 s
    assert {s: signal.getsignal(s) for s in before} == before
    assert len(error_lines(result)) == 1, (result.stdout, result.stderr)
    (line,) = error_lines(result)
    new_config = f"{endpoint}-{plan_id}"
    assert line == (f"error: plan {plan_id} interrupted by {name} after 3 of 3 calls (CreateEndpointConfig, "
                    f"PutMetricAlarm, UpdateEndpoint); endpoint {endpoint} is Updating to config {new_config}; "
                    "the deployment goes on")
    change = record(fleet, plan_id)
    assert change.outcome == "interrupted" and change.message == line.removeprefix("error: ")
    assert statuses(change) == [("CreateEndpointConfig", "made"), ("PutMetricAlarm", "made"),
                                ("UpdateEndpoint", "made")]

    listed = runner.invoke(app, ["history", "--applied", "--format", "json"])
    shown = next(c for c in json.loads(listed.stdout) if c["plan_id"] == plan_id)
    assert shown["outcome"] == "interrupted" and [c["operation"] for c in shown["calls"]] == [
        "CreateEndpointConfig", "PutMetricAlarm", "UpdateEndpoint"]
    table = runner.invoke(app, ["history", "--applied"])
    assert any(plan_id[:16] in row and "interrupted" in row for row in table.stdout.splitlines())

    # The deployment goes on and ends; the next run sees the new shape and verifies the change.
    time.sleep(3.0)
    assert fleet["sagemaker"].describe_endpoint(EndpointName=endpoint)["EndpointConfigName"] == new_config
    outcome = execute_audit(fleet["config"])
    assert not deliver_outcome(fleet["config"], outcome).problems
    assert record(fleet, plan_id).verified_run_id is not None
    with History(Path(fleet["config"].history.path)) as history:  # and the week's digest counts it
        digest = build_digest(history, iso_week(utc_now()))
    assert digest is not None and plan_id in {a.change.plan_id for a in digest.applied}


def test_a_signal_during_a_write_call_is_acted_on_once_the_call_returned(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """UpdateEndpoint is held 1.5 s by the emulator; SIGTERM arrives meanwhile. The call is not cut
    in half: it returns, is journaled as made, and only then does apply stop (exit 143)."""
    faults = needs_faults()
    plan_id = plan_of(fleet, "se-mid-call")
    Emulator.deployments(seconds=3.0)
    faults.arm("sagemaker", "UpdateEndpoint", "hang", seconds=1.5)

    def signal_during_the_call() -> None:
        deadline = time.monotonic() + 20
        while ("sagemaker", "UpdateEndpoint") not in faults.calls() and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGTERM)

    signaller = threading.Thread(target=signal_during_the_call, daemon=True)
    signaller.start()
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    signaller.join(timeout=10)
    assert result.exit_code == 143, result.output
    (line,) = error_lines(result)
    assert line.startswith(f"error: plan {plan_id} interrupted by SIGTERM after 3 of 3 calls (")
    assert line.endswith(f"endpoint se-mid-call is Updating to config se-mid-call-{plan_id}; the deployment goes on")
    assert statuses(record(fleet, plan_id))[-1] == ("UpdateEndpoint", "made")


def test_an_apply_killed_outright_stays_in_progress_in_the_history(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """The journal row is written before the first call: a process that dies in the wait (here the
    sleep hook raises what no handler catches) leaves it in-progress with the calls it made."""
    from auditor.act.apply import apply_plan

    plan_id = plan_of(fleet, "se-killed")
    Emulator.deployments(seconds=5.0)

    class Killed(BaseException):
        pass

    def die(_seconds: float) -> None:
        raise Killed

    with pytest.raises(Killed):
        apply_plan(fleet["config"], stored[plan_id], yes=True, sleep=die)
    change = record(fleet, plan_id)
    assert change.outcome == "in-progress"
    assert [c["operation"] for c in change.calls] == ["CreateEndpointConfig", "PutMetricAlarm", "UpdateEndpoint"]
    table = runner.invoke(app, ["history", "--applied"])
    assert any(plan_id[:16] in row and "in-progress" in row for row in table.stdout.splitlines())


# --- transient errors are not outcomes ------------------------------------------------------------


def test_a_500_on_update_endpoint_after_the_change_was_made_is_applied(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """SageMaker made the change and answered 500; botocore's retry is refused ("Cannot update
    in-progress endpoint"). The endpoint is Updating to the plan's own config: the call landed, the
    wait goes on, and the change is applied."""
    faults = needs_faults()
    plan_id = plan_of(fleet, "se-500")
    faults.arm("sagemaker", "UpdateEndpoint", "server_error_after")
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (f"plan {plan_id} applied: endpoint se-500 is InService on "
                                              f"se-500-{plan_id} (was se-500-config)")
    change = record(fleet, plan_id)
    assert change.outcome == "applied"
    (update,) = [s for s in change.steps if s.get("operation") == "UpdateEndpoint"]
    assert update["status"] == "landed" and "Cannot update in-progress endpoint" in update["error"]
    assert update["evidence"] == f"endpoint se-500 is Updating to se-500-{plan_id}"
    assert [c["operation"] for c in change.calls] == ["CreateEndpointConfig", "PutMetricAlarm", "UpdateEndpoint"]


def test_a_6_second_describe_endpoint_outage_during_the_wait_does_not_fail_the_apply(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """Once UpdateEndpoint is made, DescribeEndpoint answers 500 for 6 s (botocore's retries
    included): the wait goes on through it, the deployment ends, and the message names the outage
    in one clause."""
    faults = needs_faults()
    plan_id = plan_of(fleet, "se-outage")
    Emulator.deployments(seconds=8.0)

    def outage_after_the_update() -> None:
        deadline = time.monotonic() + 20
        while ("sagemaker", "UpdateEndpoint") not in faults.calls() and time.monotonic() < deadline:
            time.sleep(0.02)
        faults.arm("sagemaker", "DescribeEndpoint", "server_error", times=None, for_seconds=6)

    arming = threading.Thread(target=outage_after_the_update, daemon=True)
    arming.start()
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    arming.join(timeout=5)
    assert result.exit_code == 0, result.output
    last = result.stdout.splitlines()[-1]
    assert last.startswith(f"plan {plan_id} applied: endpoint se-outage is InService on se-outage-{plan_id} "
                           "(was se-outage-config); DescribeEndpoint did not answer for ")
    assert last.endswith("s (sagemaker:DescribeEndpoint in us-east-1 failed: InternalFailure: The request "
                         "processing has failed because of an unknown error, exception or failure.); kept waiting")
    assert last.count("did not answer") == 1  # one clause per outage, not one per failed read
    assert ("sagemaker", "DescribeEndpoint", "server_error") in faults.faulted()
    assert record(fleet, plan_id).outcome == "applied"


def test_a_change_recorded_failed_that_landed_is_verified_by_the_next_run(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """UpdateEndpoint answers 500 after making the change and the read that would show it landed is
    denied: the record says failed. The next run sees the endpoint on the plan's config and
    verifies it all the same."""
    faults = needs_faults()
    plan_id = plan_of(fleet, "se-landed")
    faults.arm("sagemaker", "UpdateEndpoint", "server_error_after")

    def deny_the_check() -> None:
        deadline = time.monotonic() + 20
        while ("sagemaker", "UpdateEndpoint") not in faults.calls() and time.monotonic() < deadline:
            time.sleep(0.005)
        faults.arm("sagemaker", "DescribeEndpoint", "access_denied")

    arming = threading.Thread(target=deny_the_check, daemon=True)
    arming.start()
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    arming.join(timeout=5)
    assert result.exit_code == 1, result.output
    change = record(fleet, plan_id)
    assert change.outcome == "failed" and statuses(change)[-1] == ("UpdateEndpoint", "failed")
    time.sleep(0.5)  # the deployment (0.2 s) ends
    outcome = execute_audit(fleet["config"])
    assert not deliver_outcome(fleet["config"], outcome).problems
    assert record(fleet, plan_id).verified_run_id is not None


# --- failures undone or named --------------------------------------------------------------------


def scaling_state(fleet: dict[str, Any], endpoint: str = SCALED
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    scaling = fleet["scaling"]
    resource = f"endpoint/{endpoint}/variant/AllTraffic"
    keys = {"ServiceNamespace": "sagemaker", "ScalableDimension": DIMENSION}
    targets = [{k: t[k] for k in ("ResourceId", "MinCapacity", "MaxCapacity")}
               for t in scaling.describe_scalable_targets(**keys, ResourceIds=[resource])["ScalableTargets"]]
    policies = [{k: p[k] for k in ("PolicyName", "PolicyType", "TargetTrackingScalingPolicyConfiguration")}
                for p in scaling.describe_scaling_policies(**keys, ResourceId=resource)["ScalingPolicies"]]
    actions = [{k: a[k] for k in ("ScheduledActionName", "Schedule", "ScalableTargetAction")}
               for a in scaling.describe_scheduled_actions(**keys, ResourceId=resource)["ScheduledActions"]]
    return targets, policies, actions


def test_an_autoscaled_resize_whose_update_fails_gets_its_target_and_policies_back(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """DeregisterScalableTarget deletes the target's policies and scheduled actions (AWS); the
    UpdateEndpoint after it is denied: the target is registered again and every policy and
    scheduled action put back as read right before the deregister."""
    faults = needs_faults()
    plan_id = plan_of(fleet, SCALED)
    before = scaling_state(fleet)
    assert before[0] and before[1] and before[2]
    faults.arm("sagemaker", "UpdateEndpoint", "access_denied")
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert "access denied: sagemaker:UpdateEndpoint in us-east-1" in line
    assert (f"the scalable target {RESOURCE} (2-6 instances, policies se-scaled-invocations, 1 scheduled actions) "
            "was registered again as read before the change") in line
    assert scaling_state(fleet) == before
    change = record(fleet, plan_id)
    assert change.outcome == "failed"
    assert statuses(change) == [("CreateEndpointConfig", "made"), ("PutMetricAlarm", "made"),
                                ("DeregisterScalableTarget", "made"), ("UpdateEndpoint", "failed")]
    (read,) = [s for s in change.steps if s["step"] == "read"]
    assert read["scaling"]["policies"][0]["PolicyName"] == "se-scaled-invocations"
    (restored,) = [s for s in change.steps if s["step"] == "restore"]
    assert restored["made"] == ["RegisterScalableTarget", "PutScalingPolicy", "PutScheduledAction"]
    assert restored["error"] is None

    # The retry reuses the config the first attempt made, deregisters again and completes; the target
    # is registered again after the deployment, with its policy.
    retry = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert retry.exit_code == 0, retry.output
    assert statuses(record(fleet, plan_id))[:2] == [("CreateEndpointConfig", "reused"), ("PutMetricAlarm", "made")]
    targets, policies, _ = scaling_state(fleet)
    assert targets == before[0] and policies == before[1]


def test_an_autoscaled_resize_interrupted_during_its_deployment_is_registered_again_by_cleanup(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """Interrupted while the deployment goes on: the target cannot be registered during it (AWS's
    procedure registers it after), so the message says it stays deregistered and what registers it;
    `audit apply --cleanup --yes` waits for InService, then puts back the target, its policy and its
    scheduled action as the journal read them."""
    plan_id = plan_of(fleet, SCALED_WAIT)
    before = scaling_state(fleet, SCALED_WAIT)
    Emulator.deployments(seconds=3.0)
    sent: list[float] = []
    signaller = threading.Thread(target=signal_when_updating, args=(SCALED_WAIT, signal.SIGINT, sent), daemon=True)
    signaller.start()
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    signaller.join(timeout=10)
    assert result.exit_code == 130, result.output
    (line,) = error_lines(result)
    assert line.endswith(
        f"; the deployment goes on; not made: RegisterScalableTarget, PutScalingPolicy; the scalable target "
        f"endpoint/{SCALED_WAIT}/variant/AllTraffic (2-6 instances, policies {SCALED_WAIT}-invocations, 1 scheduled "
        "actions) stays deregistered while the deployment goes on: once the endpoint is InService, `audit apply "
        "--cleanup --yes` registers it again: as read before the change if the endpoint is back on its audited "
        "config, as the plan's calls say if it is on the plan's")
    assert scaling_state(fleet, SCALED_WAIT) == ([], [], [])  # AWS: the deregister deleted them

    waiting = runner.invoke(app, ["apply", "--cleanup", "--yes"])
    assert f"plan {plan_id} (interrupted): endpoint {SCALED_WAIT} is Updating: its scalable target" in waiting.stdout
    assert scaling_state(fleet, SCALED_WAIT) == ([], [], [])
    time.sleep(3.0)
    done = runner.invoke(app, ["apply", "--cleanup", "--yes"])
    assert done.exit_code == 0, done.output
    assert f"plan {plan_id} (interrupted): the scalable target endpoint/{SCALED_WAIT}/variant/AllTraffic" in done.stdout
    assert "was registered again as the plan's calls after UpdateEndpoint say" in done.stdout  # on the new config
    assert scaling_state(fleet, SCALED_WAIT) == before
    again = runner.invoke(app, ["apply", "--cleanup"])
    assert f"plan {plan_id}" not in again.stdout


def test_a_failed_apply_names_its_leftovers_and_a_retry_reuses_them(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """UpdateEndpoint denied: the message names the config and the alarm the attempt made, each with
    the command that removes it. The retry skips CreateEndpointConfig (the config exists as the call
    makes it: AWS would refuse the name) and applies. A config of that name with other settings is
    refused, named, with nothing made."""
    faults = needs_faults()
    plan_id = plan_of(fleet, "se-retry")
    config_name, alarm = f"se-retry-{plan_id}", alarm_of("se-retry", plan_id)
    faults.arm("sagemaker", "UpdateEndpoint", "access_denied")
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert line.endswith(
        f"; left behind: endpoint config {config_name} (aws sagemaker delete-endpoint-config --endpoint-config-name "
        f"{config_name} --region us-east-1); alarm {alarm} (aws cloudwatch delete-alarms --alarm-names {alarm} "
        f"--region us-east-1); a retry of plan {plan_id} reuses them")

    # The same plan whose stored call was edited to other settings (its id is its proposal's, so the
    # binding guard lets it through): the config of that name is not the one it makes.
    original = stored[plan_id]
    different = copy.deepcopy(original)
    different["change"]["calls"][0]["params"]["ProductionVariants"][0]["InitialInstanceCount"] = 5
    stored[plan_id] = different
    refused = runner.invoke(app, ["apply", plan_id, "--yes"])
    stored[plan_id] = original
    assert refused.exit_code == 1
    (line,) = error_lines(refused)
    assert line == (f"error: plan {plan_id}: endpoint config {config_name} exists and is not the one this plan "
                    "makes (its settings differ); 0 of 3 calls made before it; remove it if nothing uses it: aws "
                    f"sagemaker delete-endpoint-config --endpoint-config-name {config_name} --region us-east-1")

    retry = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert retry.exit_code == 0, retry.output
    assert statuses(record(fleet, plan_id)) == [("CreateEndpointConfig", "reused"), ("PutMetricAlarm", "made"),
                                                ("UpdateEndpoint", "made")]
    # The next run verifies the retry; the failed attempt before it is not counted a second time.
    outcome = execute_audit(fleet["config"])
    assert not deliver_outcome(fleet["config"], outcome).problems
    with History(Path(fleet["config"].history.path)) as history:
        attempts = [r for r in history.applied() if r.plan_id == plan_id]
    # Newest first: the retry (verified), the refused edited attempt and the first one (neither counted).
    assert [(r.outcome, r.verified_run_id is not None) for r in attempts] == [
        ("applied", True), ("failed", False), ("failed", False)]


# --- rollback alarms cleaned up ------------------------------------------------------------------


def alarms_named(fleet: dict[str, Any], *names: str) -> list[str]:
    return [a["AlarmName"] for a in fleet["cloudwatch"].describe_alarms(AlarmNames=list(names))["MetricAlarms"]]


def test_a_rollback_deletes_the_rollback_alarms_the_apply_made(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    plan_id = plan_of(fleet, "se-rollback")
    new_type = fleet["plans"]["se-rollback"].proposed.instance_type
    Emulator.deployments(seconds=0.2, fail_instance_types=(new_type,))
    result = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    alarm = alarm_of("se-rollback", plan_id)
    assert line.startswith(f"error: plan {plan_id} rolled back: endpoint se-rollback is InService on ")
    assert f"; rollback alarms {alarm} deleted; left behind: endpoint config se-rollback-{plan_id} (" in line
    assert alarms_named(fleet, alarm) == []
    assert record(fleet, plan_id).cleaned_at is not None  # nothing left for `audit apply --cleanup`


def test_the_rollback_alarms_of_a_verified_change_are_deleted_by_cleanup(
        fleet: dict[str, Any], stored: dict[str, dict[str, Any]]) -> None:
    """Applied, then verified by the next run: `audit apply --cleanup` lists the plan's rollback
    alarm, `--cleanup --yes` deletes it (and no other alarm), and the journal says when."""
    plan_id = plan_of(fleet, "se-verified")
    alarm = alarm_of("se-verified", plan_id)
    cloudwatch = fleet["cloudwatch"]
    cloudwatch.put_metric_alarm(AlarmName="se-verified-own-errors", Namespace="AWS/SageMaker",
                                MetricName="Invocation5XXErrors", Statistic="Sum", Period=60, EvaluationPeriods=1,
                                Threshold=1.0, ComparisonOperator="GreaterThanOrEqualToThreshold")
    applied = runner.invoke(app, ["apply", plan_id, "--yes"])
    assert applied.exit_code == 0, applied.output
    assert alarms_named(fleet, alarm) == [alarm]
    nothing = runner.invoke(app, ["apply", "--cleanup"])
    assert f"plan {plan_id}" not in nothing.stdout  # not verified yet: the alarm still guards

    outcome = execute_audit(fleet["config"])
    delivered = deliver_outcome(fleet["config"], outcome)
    assert not delivered.problems
    assert record(fleet, plan_id).verified_run_id is not None
    # The run only reads: it says what the cleanup would do.
    assert delivered.cleanup is not None and delivered.cleanup.endswith(
        " of verified or rolled-back changes can be deleted: audit apply --cleanup --yes")
    dry = runner.invoke(app, ["apply", "--cleanup"])
    assert dry.exit_code == 0, dry.output
    assert f"plan {plan_id} (verified by run " in dry.stdout and f"would delete rollback alarms {alarm}" in dry.stdout
    assert dry.stdout.splitlines()[-1] == "nothing was changed (--yes does it)"
    assert alarms_named(fleet, alarm) == [alarm]
    done = runner.invoke(app, ["apply", "--cleanup", "--yes"])
    assert done.exit_code == 0, done.output
    assert f"plan {plan_id} (verified by run " in done.stdout and f"rollback alarms {alarm} deleted" in done.stdout
    assert alarms_named(fleet, alarm, "se-verified-own-errors") == ["se-verified-own-errors"]
    assert record(fleet, plan_id).cleaned_at is not None
    again = runner.invoke(app, ["apply", "--cleanup", "--yes"])
    assert f"plan {plan_id}" not in again.stdout


# --- docs/apply.md held to the code --------------------------------------------------------------


def section(title: str) -> str:
    text = (Path(__file__).parent.parent / "docs" / "apply.md").read_text()
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def first_column(table_text: str) -> list[str]:
    rows = [line for line in table_text.splitlines() if line.startswith("| `")]
    return [cell for line in rows for cell in re.findall(r"`([^`]+)`", line.split("|")[1])]


def test_the_journal_statuses_the_docs_list_are_the_ones_apply_writes() -> None:
    from auditor.act.journal import CALL_STATUSES

    assert first_column(section("The journal")) == list(CALL_STATUSES)
    source = (Path(__file__).parent.parent / "auditor" / "act" / "execute.py").read_text()
    written = set(re.findall(r'self\.journal\.call\(call, "([a-z]+)"', source))
    assert written == set(CALL_STATUSES)


def test_the_calls_the_docs_say_are_checked_for_landing_are_the_ones_apply_checks() -> None:
    from auditor.act.execute import LANDED_CHECKED

    assert set(first_column(section("When a call fails"))) == {op for _, op in LANDED_CHECKED}


def test_the_exit_statuses_the_docs_give_for_signals_are_the_clis() -> None:
    from auditor.cli_frame import EXIT_SIGINT, EXIT_SIGTERM

    text = section("Interrupted")
    assert f"The exit status is {EXIT_SIGINT} after SIGINT and {EXIT_SIGTERM} after SIGTERM" in " ".join(text.split())


def test_an_applied_row_from_before_the_journal_reads_as_it_did(tmp_path: Path) -> None:
    """Migration 8 adds the journal's columns: a row written before reads with no steps, whether the
    file is upgraded or (not as root) opened read-only as it is."""
    import sqlite3

    from auditor.history.store import JOURNAL_SCHEMA, MIGRATIONS

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        for number, script in enumerate(MIGRATIONS[:JOURNAL_SCHEMA - 1], start=1):
            db.executescript(script)
            db.execute(f"PRAGMA user_version = {number}")
        db.execute("INSERT INTO applied (plan_id, account_id, region, endpoint, variant, caller, calls, plan, "
                   "started_at, finished_at, outcome, message, previous_config, new_config, monthly_savings_usd) "
                   "VALUES ('p1', '123456789012', 'us-east-1', 'ep', 'AllTraffic', 'arn:caller', '[]', '{}', "
                   "'2026-11-30T10:00:00+00:00', '2026-11-30T10:05:00+00:00', 'applied', 'plan p1 applied', "
                   "'c1', 'c2', 10.0)")
    if os.geteuid() != 0:  # root writes a read-only file all the same
        path.chmod(0o444)
        try:
            with History(path, reading=True) as history:  # read-only, as it is
                assert history.schema_version == JOURNAL_SCHEMA - 1
                (old,) = history.applied()
            assert (old.plan_id, old.outcome, old.steps, old.cleaned_at) == ("p1", "applied", (), None)
        finally:
            path.chmod(0o644)
    with History(path) as history:  # upgraded
        assert history.schema_version == len(MIGRATIONS)
        (upgraded,) = history.applied()
    assert (upgraded.plan_id, upgraded.outcome, upgraded.message, upgraded.new_config) == (
        "p1", "applied", "plan p1 applied", "c2")
    assert (upgraded.steps, upgraded.cleaned_at) == ((), None)
