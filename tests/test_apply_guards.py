"""Issue 24's scenarios of apply's pre-write guards, each through the CLI against the emulator, each
refused in one line with nothing written:

- a stale plan: run 1 proposes a resize, the load rises, run 2 proposes something else: run 1's id;
- a plan older than [apply] max_plan_age_hours (and the same plan applied once the setting allows it);
- an idle endpoint that serves 3,000 requests an hour after the audit: its delete; the same for a
  request to an inference component the endpoint hosts (the variant publishes no Invocations for it),
  and when its components cannot be listed;
- someone scales the variant to 8 with UpdateEndpointWeightsAndCapacities (same config name), or
  puts it under autoscaling: the resize;
- a history edited with sqlite3 so that a tagged endpoint's plan calls DeleteEndpoint on another,
  untagged endpoint; a plan id that is not its content's; a plan stored without its basis.

Each test seeds a small demo fleet afresh and audits it (the run and its plans recorded).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import replace
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
import time_machine
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config_file import load_config
from auditor.history.store import History
from auditor.tasks.audit import deliver_outcome, execute_audit
from auditor_emulator.components import add_component
from auditor_emulator.fleet import demo_fleet, seed_fleet
from auditor_emulator.server import Emulator
from conftest import APPLY_ROLE, utc_now
from helpers import resource_json

# search-embeddings: tagged auditor:apply=allowed (a resize plan); churn-model-legacy: idle, opted in by
# [apply] resources (a delete plan); pricing-api: opted in by neither.
ENDPOINTS = ("search-embeddings", "pricing-api", "churn-model-legacy")
runner = CliRunner()


@pytest.fixture
def fleet(aws: Emulator, tmp_path: Path) -> dict[str, Any]:
    seed_fleet(aws, [s for s in demo_fleet() if s.name in ENDPOINTS], now=utc_now())
    Emulator.deployments(seconds=0.2)
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    arn = sagemaker.describe_endpoint(EndpointName="search-embeddings")["EndpointArn"]
    sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "auditor:apply", "Value": "allowed"}])
    path = tmp_path / "auditor.toml"
    history = tmp_path / "history.sqlite3"
    path.write_text(f'[aws]\nregions = ["us-east-1"]\n[history]\npath = "{history}"\n'
                    f'[apply]\nrole_arn = "{APPLY_ROLE}"\nmax_risk = "medium"\nwait_minutes = 1\n'
                    'resources = ["churn-*"]\n')
    fleet = {"path": path, "history": history, "sagemaker": sagemaker}
    fleet["plans"] = audit(fleet)
    return fleet


def audit(fleet: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """One recorded run; its plans by (endpoint, action)."""
    config = load_config(fleet["path"])
    outcome = execute_audit(config)
    assert not deliver_outcome(config, outcome).problems
    assert outcome.report.errors == (), outcome.report.errors
    with History(fleet["history"]) as history:
        return {(p["resource"]["name"], p["proposed"]["action"]): p for p in history.latest_plans()}


def apply(fleet: dict[str, Any], plan_id: str, *flags: str) -> Any:
    return runner.invoke(app, ["apply", plan_id, *flags, "--config", str(fleet["path"])])


def refused(fleet: dict[str, Any], plan_id: str) -> str:
    """The one error line of `audit apply ID --yes` (exit 1); nothing was recorded as applied."""
    result = apply(fleet, plan_id, "--yes")
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    with History(fleet["history"]) as history:
        assert history.applied() == []
    return line.removeprefix("error: ")


def config_of(fleet: dict[str, Any], endpoint: str) -> str:
    return str(fleet["sagemaker"].describe_endpoint(EndpointName=endpoint)["EndpointConfigName"])


def wait_in_service(fleet: dict[str, Any], endpoint: str) -> None:
    for _ in range(200):
        if fleet["sagemaker"].describe_endpoint(EndpointName=endpoint)["EndpointStatus"] == "InService":
            return
        time.sleep(0.05)
    raise AssertionError(f"{endpoint} stayed Updating")


def test_a_plan_a_later_run_no_longer_proposes_is_refused(fleet: dict[str, Any]) -> None:
    """Run 1 proposes 4 x ml.m5.4xlarge -> 3 x ml.m5.xlarge; the load rises fourfold; run 2 no longer
    proposes that shape (it would run over 100%): run 1's id names the run that superseded it."""
    stale = fleet["plans"][("search-embeddings", "resize")]
    assert (stale["proposed"]["instance_type"], stale["proposed"]["instance_count"]) == ("ml.m5.xlarge", 3)
    for datum in Emulator.backend("cloudwatch", "us-east-1").metric_data:
        named = {d.name: d.value for d in datum.dimensions}
        if named.get("EndpointName") == "search-embeddings" and datum.name == "CPUUtilization":
            for field in ("value", "min", "max", "sum"):
                if hasattr(datum, field):
                    setattr(datum, field, getattr(datum, field) * 4)
    later = audit(fleet)
    assert stale["id"] not in {p["id"] for p in later.values()}
    line = refused(fleet, stale["id"])
    assert line.startswith(f"plan {stale['id']} is from run 1 (")
    assert line.endswith(") superseded it: it read account 123456789012 us-east-1 and does not propose it; "
                         "`audit plans` lists its plans")
    assert "run 2 (" in line
    assert config_of(fleet, "search-embeddings") == "search-embeddings-config"


def test_a_plan_older_than_max_plan_age_hours_is_refused(fleet: dict[str, Any]) -> None:
    plan = fleet["plans"][("search-embeddings", "resize")]
    with History(fleet["history"]) as history:
        started = history.runs(limit=1)[0].started_at
    with time_machine.travel(started + timedelta(hours=27), tick=True):
        line = refused(fleet, plan["id"])
        assert line == (f"plan {plan['id']} is from run 1, started 27.0 hours ago "
                        f"({started.astimezone(UTC):%Y-%m-%d %H:%M} UTC), over [apply] max_plan_age_hours = 26; "
                        "run the audit again")
        # Whoever owns the config may allow older plans: the dry run then passes the guards.
        fleet["path"].write_text(fleet["path"].read_text().replace("[apply]\n", "[apply]\nmax_plan_age_hours = 48\n"))
        dry = apply(fleet, plan["id"])
        assert dry.exit_code == 0, dry.output
        assert "guards pass: would apply as " in dry.stdout
    assert config_of(fleet, "search-embeddings") == "search-embeddings-config"


def test_an_idle_endpoint_that_serves_requests_after_the_audit_is_not_deleted(fleet: dict[str, Any]) -> None:
    plan = fleet["plans"][("churn-model-legacy", "delete")]
    with History(fleet["history"]) as history:
        window_end = history.runs(limit=1)[0].window_end
    assert (dry := apply(fleet, plan["id"])).exit_code == 0, dry.output  # idle since the window ended
    with time_machine.travel(window_end + timedelta(hours=1, minutes=30), tick=True):
        boto3.client("cloudwatch", region_name="us-east-1").put_metric_data(Namespace="AWS/SageMaker", MetricData=[{
            "MetricName": "Invocations", "Timestamp": window_end + timedelta(hours=1), "Value": 3000.0,
            "Dimensions": [{"Name": "EndpointName", "Value": "churn-model-legacy"},
                           {"Name": "VariantName", "Value": "AllTraffic"}]}])
        line = refused(fleet, plan["id"])
    assert line == (f"endpoint churn-model-legacy served 3,000 requests since the audit's window ended at "
                    f"{window_end.astimezone(UTC):%Y-%m-%d %H:%M} UTC; run the audit again")
    assert fleet["sagemaker"].describe_endpoint(EndpointName="churn-model-legacy")["EndpointStatus"] == "InService"


def test_a_variant_scaled_or_put_under_autoscaling_since_the_audit_is_not_overwritten(fleet: dict[str, Any]) -> None:
    plan = fleet["plans"][("search-embeddings", "resize")]
    fleet["sagemaker"].update_endpoint_weights_and_capacities(
        EndpointName="search-embeddings", DesiredWeightsAndCapacities=[{"VariantName": "AllTraffic",
                                                                        "DesiredInstanceCount": 8}])
    wait_in_service(fleet, "search-embeddings")
    assert config_of(fleet, "search-embeddings") == "search-embeddings-config"  # the same config name
    assert refused(fleet, plan["id"]) == (
        "endpoint search-embeddings changed since the audit: variant AllTraffic's desired instance count is now 8 "
        "(the plan was made on 4); run the audit again")
    # Back to 4, but under autoscaling now (its count then moves by design: the target's min and max count).
    fleet["sagemaker"].update_endpoint_weights_and_capacities(
        EndpointName="search-embeddings", DesiredWeightsAndCapacities=[{"VariantName": "AllTraffic",
                                                                        "DesiredInstanceCount": 4}])
    wait_in_service(fleet, "search-embeddings")
    assert (dry := apply(fleet, plan["id"])).exit_code == 0, dry.output
    boto3.client("application-autoscaling", region_name="us-east-1").register_scalable_target(
        ServiceNamespace="sagemaker", ResourceId="endpoint/search-embeddings/variant/AllTraffic",
        ScalableDimension="sagemaker:variant:DesiredInstanceCount", MinCapacity=2, MaxCapacity=6)
    assert refused(fleet, plan["id"]) == (
        "endpoint search-embeddings changed since the audit: variant AllTraffic is under autoscaling now "
        "(2-6 instances); run the audit again")
    assert config_of(fleet, "search-embeddings") == "search-embeddings-config"


def test_a_run_from_the_future_of_the_apply_hosts_clock_is_refused(fleet: dict[str, Any]) -> None:
    """Clock skew: a run that started (or whose window ended) over 5 minutes after this host's clock
    would have a negative age, and skip the fresh evidence: refused, naming the times."""
    plan = fleet["plans"][("search-embeddings", "resize")]
    with History(fleet["history"]) as history:
        run = history.runs(limit=1)[0]
    now = run.started_at - timedelta(minutes=10)
    with time_machine.travel(now, tick=False):
        line = refused(fleet, plan["id"])
    ahead = [f"started {run.started_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"]
    if run.window_end - now > timedelta(minutes=5):
        ahead.append(f"its window ended {run.window_end.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    assert line == (f"plan {plan['id']} is from run 1, which {' and '.join(ahead)}: over 5 minutes after this "
                    f"host's clock ({now.astimezone(UTC):%Y-%m-%d %H:%M} UTC); check the clocks and run the audit "
                    "again")
    with time_machine.travel(run.started_at - timedelta(minutes=4), tick=False):  # within the skew allowed
        assert (dry := apply(fleet, plan["id"])).exit_code == 0, dry.output
    assert config_of(fleet, "search-embeddings") == "search-embeddings-config"


def edit_plan(fleet: dict[str, Any], plan_id: str, edit: Any) -> None:
    """Edit the stored plan in the history file itself, as anyone with the file could (sqlite3)."""
    db = sqlite3.connect(fleet["history"])
    with db:
        for run_id, body in db.execute("SELECT run_id, body FROM plans WHERE plan_id = ?", (plan_id,)).fetchall():
            plan = json.loads(body)
            edit(plan)
            db.execute("UPDATE plans SET body = ? WHERE run_id = ? AND plan_id = ?",
                       (json.dumps(plan), run_id, plan_id))
    db.close()


def test_an_edited_history_cannot_point_a_plan_at_another_endpoint(fleet: dict[str, Any]) -> None:
    """The tagged endpoint's plan, edited to delete pricing-api (neither tagged nor listed): refused in
    the dry run already and with --yes, naming the call and the endpoint; pricing-api is not deleted."""
    plan = fleet["plans"][("search-embeddings", "resize")]
    delete = {"service": "sagemaker", "operation": "DeleteEndpoint", "params": {"EndpointName": "pricing-api"},
              "purpose": "delete endpoint search-embeddings"}
    edit_plan(fleet, plan["id"], lambda p: p["change"].update(calls=[delete]))
    expected = (f"plan {plan['id']} (search-embeddings): call 1 (sagemaker:DeleteEndpoint) names endpoint "
                "pricing-api, not the plan's search-embeddings")
    dry = apply(fleet, plan["id"])
    assert dry.exit_code == 1 and f"error: {expected}" in dry.stderr.splitlines()
    assert refused(fleet, plan["id"]) == expected
    assert fleet["sagemaker"].describe_endpoint(EndpointName="pricing-api")["EndpointStatus"] == "InService"


def test_an_edited_history_cannot_change_what_the_calls_do(fleet: dict[str, Any]) -> None:
    """The review's crafted plans, names all the plan's own: the copy of the config capturing data to
    another bucket or serving another team's model (refused once the audited config is read), an
    alarm notifying a foreign topic, a plan that only deregisters the variant's autoscaling (refused
    in the dry run already). Each one line naming the call; nothing is made."""
    plan = fleet["plans"][("search-embeddings", "resize")]
    calls = plan["change"]["calls"]
    create = next(i for i, c in enumerate(calls) if c["operation"] == "CreateEndpointConfig")
    which = f"call {create + 1} (sagemaker:CreateEndpointConfig)"

    def body(edit: Any) -> str:
        def change(p: dict[str, Any]) -> None:
            p["change"]["calls"] = json.loads(json.dumps(calls))
            edit(p["change"]["calls"][create]["params"])
        edit_plan(fleet, plan["id"], change)
        return refused(fleet, plan["id"])

    capture = {"EnableCapture": True, "InitialSamplingPercentage": 100, "DestinationS3Uri": "s3://someone-elses/x",
               "CaptureOptions": [{"CaptureMode": "Input"}, {"CaptureMode": "Output"}]}
    assert body(lambda p: p.update(DataCaptureConfig=capture)).endswith(
        f"{which} sets DataCaptureConfig otherwise, not as in search-embeddings-config; run the audit again")
    assert body(lambda p: p["ProductionVariants"][0].update(ModelName="billing-team-model")).endswith(
        f"{which} sets ProductionVariants {plan['variant']} otherwise than its shape, not as in "
        "search-embeddings-config; run the audit again")
    alarm = {"AlarmName": "search-embeddings-ApproximateAgeOfOldestRequest", "Namespace": "AWS/SageMaker",
             "Dimensions": [{"Name": "EndpointName", "Value": "search-embeddings"}], "MetricName": "X",
             "EvaluationPeriods": 1, "ComparisonOperator": "GreaterThanThreshold", "Threshold": 0.0, "Period": 60,
             "Statistic": "Sum", "AlarmActions": ["arn:aws:sns:us-east-1:999999999999:elsewhere"]}
    edit_plan(fleet, plan["id"], lambda p: p["change"].update(calls=[
        {"service": "cloudwatch", "operation": "PutMetricAlarm", "params": alarm}]))
    expected = (f"plan {plan['id']} (search-embeddings): call 1 (cloudwatch:PutMetricAlarm) sets AlarmActions "
                "arn:aws:sns:us-east-1:999999999999:elsewhere: alarms notify only [apply] alarm_topic_arn (not set)")
    dry = apply(fleet, plan["id"])
    assert dry.exit_code == 1 and f"error: {expected}" in dry.stderr.splitlines()
    assert refused(fleet, plan["id"]) == expected
    resource = f"endpoint/search-embeddings/variant/{plan['variant']}"
    edit_plan(fleet, plan["id"], lambda p: p["change"].update(calls=[
        {"service": "application-autoscaling", "operation": "DeregisterScalableTarget", "params": {
            "ServiceNamespace": "sagemaker", "ResourceId": resource,
            "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"}}]))
    assert refused(fleet, plan["id"]) == (
        f"plan {plan['id']} (search-embeddings): call 1 (application-autoscaling:DeregisterScalableTarget) "
        f"deregisters {resource} with no UpdateEndpoint after it")
    made = [c["EndpointConfigName"] for c in fleet["sagemaker"].list_endpoint_configs()["EndpointConfigs"]]
    assert not [name for name in made if plan["id"] in name], made
    assert not boto3.client("cloudwatch", region_name="us-east-1").describe_alarms(
        AlarmNamePrefix="search-embeddings")["MetricAlarms"]


def test_an_edited_plan_id_or_a_plan_without_its_basis_is_refused(fleet: dict[str, Any]) -> None:
    plan = fleet["plans"][("search-embeddings", "resize")]
    # The proposed count edited (the change's names still derive from the id): the id is not the content's.
    edit_plan(fleet, plan["id"], lambda p: p["proposed"].update(instance_count=1))
    line = refused(fleet, plan["id"])
    assert line.startswith(f"plan {plan['id']} (search-embeddings): its id does not match its content (recomputed ")
    assert line.endswith("): the stored plan was edited or written by another version; run the audit again")
    # As a history written before plans carried their basis.
    edit_plan(fleet, plan["id"], lambda p: (p["proposed"].update(instance_count=3), p.pop("basis")))
    assert refused(fleet, plan["id"]) == (
        "endpoint search-embeddings: the plan does not record what it was computed from (a history written before "
        "plans carried their basis); run the audit again")
    assert config_of(fleet, "search-embeddings") == "search-embeddings-config"


def test_a_run_that_could_not_read_the_region_does_not_supersede_but_a_plan_only_in_it_is_refused(
        fleet: dict[str, Any]) -> None:
    """A later run with an error in the region is not the latest for it: run 1's plan still applies (dry
    run); a plan only that run holds is refused."""
    plan = fleet["plans"][("search-embeddings", "resize")]
    with History(fleet["history"]) as history:
        run = history.runs(limit=1)[0]
    db = sqlite3.connect(fleet["history"])
    with db:  # run 2, as one that failed to read us-east-1: recorded, but no clean (account, region)
        cursor = db.execute("INSERT INTO runs (started_at, window_start, window_end, period_seconds, regions, accounts,"
                            " endpoints, findings, monthly_cost_usd, monthly_savings_usd, errors, fatal, status)"
                            " VALUES (?, ?, ?, 3600, '[\"us-east-1\"]', '[]', 0, 0, 0, 0, '[\"x\"]', 1, 'failed')",
                            ((run.started_at + timedelta(minutes=5)).isoformat(), run.window_start.isoformat(),
                             run.window_end.isoformat()))
        db.execute("INSERT INTO run_regions VALUES (?, '-', '-')", (cursor.lastrowid,))
        db.execute("INSERT INTO plans SELECT ?, 'only-in-run-2', 0, body FROM plans WHERE plan_id = ?",
                   (cursor.lastrowid, plan["id"]))
    db.close()
    assert (dry := apply(fleet, plan["id"])).exit_code == 0, dry.output
    line = refused(fleet, "only-in-run-2")
    assert line == (f"plan only-in-run-2 is from run 2 ({run.started_at + timedelta(minutes=5):%Y-%m-%d %H:%M} UTC); "
                    "that run did not read account 123456789012 us-east-1 without an error (partial, interrupted or "
                    "failed there); run the audit again")


def test_off_hours_evidence_reads_only_the_hours_the_schedules_would_have_it_off() -> None:
    from auditor.act.plan import parse_plan
    from auditor.kinds.endpoints.evidence import off_hours_of_week

    plan = parse_plan({"id": "p", "resource": resource_json("reports"), "current": {},
                       "proposed": {"action": "off-hours", "details": {
                           "off_periods_utc": [{"from": "Sat 00:00", "to": "Mon 00:00", "hours": 48},
                                               {"from": "Mon 20:00", "to": "Tue 06:00", "hours": 10}]}}})
    hours = off_hours_of_week(plan)
    assert hours == set(range(120, 168)) | set(range(20, 30))
    assert off_hours_of_week(parse_plan({**plan.raw, "proposed": {"action": "delete"}})) is None


def test_a_run_reads_a_region_cleanly_unless_the_region_itself_failed() -> None:
    """An error of one endpoint leaves its region read; an error of the region (no endpoint) or of the
    account does not; a partial run reads none."""
    from auditor.history.store import read_cleanly
    from auditor.models import AccountInfo, AuditError
    from fleet_report import synthetic_report

    report = synthetic_report(count=2)
    accounts = (AccountInfo("111111111111", "a", True, ("us-east-1", "eu-west-1")),
                AccountInfo("222222222222", "b", False, ("us-east-1",), error="AccessDenied"))
    endpoint_error = AuditError("us-east-1", "orphaned", "discover", "config deleted", "111111111111")
    region_error = AuditError("eu-west-1", None, "collect", "region not audited", "111111111111")
    replaced = replace(report, accounts=accounts, errors=(endpoint_error, region_error), partial=None)
    assert read_cleanly(replaced) == [("111111111111", "us-east-1")]
    assert read_cleanly(replace(replaced, partial="interrupted by SIGTERM")) == []


def test_each_call_must_name_the_plans_endpoint_its_variants_or_names_from_its_id() -> None:
    """The name checks on their own (read from the plan alone): a policy carried across under the name
    the audit saw on the variant is the variant's own; any other name, an alarm watching another
    endpoint, a config named otherwise, a variant of another endpoint are refused, naming the call."""
    from auditor.act.binding import call_refusal
    from auditor.act.plan import parse_plan, recomputed_id

    resource = "endpoint/reports/variant/AllTraffic"
    base = {"resource": resource_json("reports"), "variant": "AllTraffic",
            "current": {"endpoint_config_name": "reports-config"},
            "proposed": {"action": "resize", "instance_type": "ml.m5.large", "instance_count": 2},
            "basis": {"variants": [{"name": "AllTraffic", "autoscaling": {
                "min_capacity": 1, "max_capacity": 4, "policies": ["reports-scaling (TargetTrackingScaling)"]}}]}}
    plan_id = recomputed_id(base, base["proposed"])
    policy = {"PolicyName": "reports-scaling", "ServiceNamespace": "sagemaker", "ResourceId": resource,
              "ScalableDimension": "sagemaker:variant:DesiredInstanceCount", "PolicyType": "TargetTrackingScaling"}

    def verdict(*calls: tuple[str, str, dict[str, Any]]) -> str | None:
        plan = {**base, "id": plan_id, "change": {"calls": [
            {"service": s, "operation": o, "params": p} for s, o, p in calls]}}
        return call_refusal(parse_plan(plan))

    assert verdict(("application-autoscaling", "PutScalingPolicy", policy)) is None
    assert verdict(("application-autoscaling", "PutScalingPolicy", {**policy, "PolicyName": "other"})) == (
        "call 1 (application-autoscaling:PutScalingPolicy) names scaling policy other, not the plan's reports")
    assert verdict(("application-autoscaling", "RegisterScalableTarget", {
        **policy, "ResourceId": "endpoint/billing/variant/AllTraffic"})) == (
        "call 1 (application-autoscaling:RegisterScalableTarget) names resource endpoint/billing/variant/AllTraffic, "
        "not the plan's reports")
    assert verdict(("sagemaker", "CreateEndpointConfig", {"EndpointConfigName": "billing-config"})) == (
        "call 1 (sagemaker:CreateEndpointConfig) names endpoint config billing-config, not the plan's reports")
    assert verdict(("cloudwatch", "PutMetricAlarm", {
        "AlarmName": f"reports-AllTraffic-{plan_id}-5xx", "Dimensions": [{"Name": "EndpointName", "Value": "billing"}]
    })) == "call 1 (cloudwatch:PutMetricAlarm) watches billing, not the plan's reports"
    assert verdict(("sagemaker", "StopNotebookInstance", {"NotebookInstanceName": "reports"})) == (
        "call 1 (sagemaker:StopNotebookInstance) is not a call endpoint plans make")


def test_an_idle_endpoint_whose_instances_got_busy_since_the_audit_is_not_deleted(fleet: dict[str, Any]) -> None:
    """CPU per vCPU (CPUUtilization is summed over them: 300% on the 8 vCPUs of an ml.m5.2xlarge) over
    the idle rule's ceiling since the audit's window ended refuses a delete, whatever the requests say."""
    plan = fleet["plans"][("churn-model-legacy", "delete")]
    with History(fleet["history"]) as history:
        window_end = history.runs(limit=1)[0].window_end
    with time_machine.travel(window_end + timedelta(hours=2), tick=True):
        boto3.client("cloudwatch", region_name="us-east-1").put_metric_data(
            Namespace="/aws/sagemaker/Endpoints", MetricData=[{
                "MetricName": "CPUUtilization", "Timestamp": window_end + timedelta(hours=1), "Value": 300.0,
                "Dimensions": [{"Name": "EndpointName", "Value": "churn-model-legacy"},
                               {"Name": "VariantName", "Value": "AllTraffic"}]}])
        line = refused(fleet, plan["id"])
    assert line == ("endpoint churn-model-legacy's variant AllTraffic ran up to 37.5% CPU per vCPU since the audit's "
                    f"window ended at {window_end.astimezone(UTC):%Y-%m-%d %H:%M} UTC (idle: at most 5%); run the "
                    "audit again")


def hosting_a_component(fleet: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """churn-model-legacy hosting an idle inference component, audited again: its delete plan and the
    run's window end."""
    add_component("123456789012", "us-east-1", "churn-model-legacy", "AllTraffic", "churn-ic", 1, 1.0, 0.0, 1024,
                  utc_now())
    plan = audit(fleet)[("churn-model-legacy", "delete")]
    with History(fleet["history"]) as history:
        return plan, history.runs(limit=1)[0].window_end


def test_an_endpoint_whose_inference_component_served_requests_after_the_audit_is_not_deleted(
        fleet: dict[str, Any]) -> None:
    """AWS publishes no per-variant Invocations for the requests an endpoint's inference components
    serve, only each component's own (InferenceComponentName): the delete lists the components live
    and reads theirs in the same GetMetricData request."""
    plan, window_end = hosting_a_component(fleet)
    with time_machine.travel(window_end + timedelta(hours=1, minutes=30), tick=True):
        Emulator.publish_metrics("AWS/SageMaker", [{
            "MetricName": "Invocations", "Timestamp": window_end + timedelta(hours=1), "Value": 1.0, "Unit": "None",
            "Dimensions": [{"Name": "InferenceComponentName", "Value": "churn-ic"}]}], "us-east-1")
        line = refused(fleet, plan["id"])
    assert line == ("endpoint churn-model-legacy's inference component churn-ic served 1 requests since the audit's "
                    f"window ended at {window_end.astimezone(UTC):%Y-%m-%d %H:%M} UTC; run the audit again")
    assert fleet["sagemaker"].describe_endpoint(EndpointName="churn-model-legacy")["EndpointStatus"] == "InService"
    assert [c["InferenceComponentName"] for c in fleet["sagemaker"].list_inference_components(
        EndpointNameEquals="churn-model-legacy")["InferenceComponents"]] == ["churn-ic"]


def test_an_endpoint_whose_inference_components_served_nothing_after_the_audit_is_deleted(
        fleet: dict[str, Any]) -> None:
    plan, window_end = hosting_a_component(fleet)
    with time_machine.travel(window_end + timedelta(hours=1, minutes=30), tick=True):
        Emulator.faults.reset()
        result = apply(fleet, plan["id"], "--yes")
    assert result.exit_code == 0, result.output
    assert ("sagemaker", "ListInferenceComponents") in Emulator.faults.calls()
    with pytest.raises(fleet["sagemaker"].exceptions.ClientError):
        fleet["sagemaker"].describe_endpoint(EndpointName="churn-model-legacy")


def test_an_endpoint_delete_is_refused_when_its_inference_components_cannot_be_listed(fleet: dict[str, Any]) -> None:
    """A denied ListInferenceComponents is not "no components": the delete is refused, naming the call."""
    plan, window_end = hosting_a_component(fleet)
    denied = Emulator.faults.arm("sagemaker", "ListInferenceComponents", "access_denied")
    with time_machine.travel(window_end + timedelta(hours=1, minutes=30), tick=True):
        line = refused(fleet, plan["id"])
    assert line == ("endpoint churn-model-legacy: access denied: sagemaker:ListInferenceComponents in us-east-1 "
                    "(AccessDeniedException)")
    assert denied.fired == 1
    assert fleet["sagemaker"].describe_endpoint(EndpointName="churn-model-legacy")["EndpointStatus"] == "InService"


def test_the_components_read_before_a_delete_are_split_at_500_queries_a_request(fleet: dict[str, Any]) -> None:
    """GetMetricData takes at most 500 queries a request (AWS; the emulator does not enforce it): an
    endpoint hosting 600 components, added since the audit, is read in two, a request to the last one
    seen."""
    plan = fleet["plans"][("churn-model-legacy", "delete")]
    with History(fleet["history"]) as history:
        window_end = history.runs(limit=1)[0].window_end
    for index in range(600):
        add_component("123456789012", "us-east-1", "churn-model-legacy", "AllTraffic", f"churn-ic-{index:03d}", 1,
                      0.1, 0.0, 128, utc_now())
    with time_machine.travel(window_end + timedelta(hours=1, minutes=30), tick=True):
        Emulator.publish_metrics("AWS/SageMaker", [{
            "MetricName": "Invocations", "Timestamp": window_end + timedelta(hours=1), "Value": 2.0, "Unit": "None",
            "Dimensions": [{"Name": "InferenceComponentName", "Value": "churn-ic-599"}]}], "us-east-1")
        Emulator.faults.reset()
        line = refused(fleet, plan["id"])
    assert line.startswith("endpoint churn-model-legacy's inference component churn-ic-599 served 2 requests since")
    assert Emulator.faults.calls().count(("cloudwatch", "GetMetricData")) == 2
