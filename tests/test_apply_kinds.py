"""`audit apply` beyond deployments, end to end in the emulator: an off-hours alternative applied with
`--option N` (EventBridge Scheduler schedules, read back with GetSchedule), a queue-alarm plan
(PutMetricAlarm, read back with DescribeAlarms), an autoscaling alternative (RegisterScalableTarget and
PutScalingPolicy, read back with DescribeScalingPolicies), a notebook instance stopped, idle HyperPod
nodes deleted and a Studio app deleted; the next run verifies each and the weekly digest counts
their savings; every guard of these kinds refuses with one line and changes nothing.

The endpoint plans are the audit's own, read from the history by `audit apply ID`. The notebook and
HyperPod plans are the audit's too; where the audit does not carry their change yet (another branch
gives them theirs), the test adds it in the shape the brief fixes (StopNotebookInstance
{NotebookInstanceName}, BatchDeleteClusterNodes {ClusterName, NodeIds}) and applies the JSON with
`apply_plan`.
"""

from __future__ import annotations

import contextlib
import copy
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
import time_machine
from typer.testing import CliRunner

from auditor.act.apply import apply_clients, apply_plan, dry_run_lines
from auditor.act.plan import AUDITED_IN, ApplyRefused, parse_plan, recomputed_id
from auditor.act.readback import missing_after
from auditor.cli import app
from auditor.config_file import load_config
from auditor.history.store import AppliedChange, History
from auditor.history.weekly import build_digest, iso_week
from auditor.kinds.endpoints.models import InferenceComponent
from auditor.kinds.endpoints.rules.off_hours import OffPeriod, off_hours_change
from auditor.kinds.registry import target_for, verifier_for
from auditor.records import plan_to_dict
from auditor.report.weekly import render_weekly_text
from auditor.tasks.audit import deliver_outcome, execute_audit
from auditor.write.verify import Evidence
from auditor_emulator.components import add_component
from auditor_emulator.fleet import demo_fleet, seed_fleet
from auditor_emulator.hyperpod import demo_clusters, seed_hyperpod
from auditor_emulator.server import Emulator
from auditor_emulator.workspaces import demo_notebooks, seed_workspaces
from conftest import APPLY_ROLE, seeded_emulator, utc_now
from helpers import endpoint as helper_endpoint
from helpers import live_basis, resource_json

ENDPOINTS = ("internal-reports", "pricing-api", "video-transcode-async", "churn-model-legacy")
NOTEBOOKS = ("cv-research-gpu", "feature-eng-m5")
TOPIC = "arn:aws:sns:us-east-1:123456789012:ml-oncall"
runner = CliRunner()


DOMAIN = "d-research"  # the emulator names a domain d-<name>
# The domain's JupyterLab defaults: a resource spec and idle settings users may choose within, but idle
# shutdown off; no Code Editor settings at all.
JUPYTER_SETTINGS = {"DefaultResourceSpec": {"InstanceType": "ml.t3.medium"},
                    "AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": "DISABLED",
                                                                "MaxIdleTimeoutInMinutes": 600}}}


def seed(emulator: Emulator) -> None:
    now = utc_now()
    seed_fleet(emulator, [s for s in demo_fleet() if s.name in ENDPOINTS], now=now)
    seed_workspaces(emulator, [n for n in demo_notebooks() if n.name in NOTEBOOKS], [], now=now)
    seed_hyperpod(emulator, [c for c in demo_clusters() if c.name == "llm-platform"], now)
    boto3.client("sagemaker", region_name="us-east-1").create_domain(
        DomainName="research", AuthMode="IAM", VpcId="vpc-0research", SubnetIds=["subnet-0research"],
        DefaultUserSettings={"ExecutionRole": "arn:aws:iam::123456789012:role/studio-users",
                             "JupyterLabAppSettings": JUPYTER_SETTINGS},
        Tags=[{"Key": "auditor:apply", "Value": "allowed"}])


@pytest.fixture(scope="module")
def fleet(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Three demo endpoints, two notebooks and a HyperPod cluster, audited once (the run and its
    plans recorded). Opted in: internal-reports and cv-research-gpu by the tag, video-* and
    llm-platform by [apply] resources, pricing-api by [apply] endpoints; feature-eng-m5 by neither."""
    home = tmp_path_factory.mktemp("apply-kinds")
    with seeded_emulator(emulator, home, seed):
        Emulator.deployments(seconds=0.2)
        sagemaker = boto3.client("sagemaker", region_name="us-east-1")
        for arn in (sagemaker.describe_endpoint(EndpointName="internal-reports")["EndpointArn"],
                    sagemaker.describe_notebook_instance(NotebookInstanceName="cv-research-gpu")["NotebookInstanceArn"]):
            sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "auditor:apply", "Value": "allowed"}])
        path = home / "auditor.toml"
        path.write_text(
            f'[aws]\nregions = ["us-east-1"]\n[history]\npath = "{home / "history.sqlite3"}"\n'
            f'[apply]\nrole_arn = "{APPLY_ROLE}"\nmax_risk = "medium"\nwait_minutes = 1\n'
            f'alarm_topic_arn = "{TOPIC}"\nendpoints = ["pricing-*"]\n'
            'resources = ["video-*", "churn-*", "llm-platform"]\n'
            '[rules.off-hours]\nscheduler_role_arn = "arn:aws:iam::{account_id}:role/off-hours-scheduler"\n')
        config = load_config(path)
        outcome = execute_audit(config)
        assert not deliver_outcome(config, outcome).problems
        plans = {(p.resource.name, p.proposed.action): plan_to_dict(p) for p in outcome.report.plans}
        assert outcome.report.errors == (), outcome.report.errors
        yield {"config": config, "path": path, "plans": plans, "sagemaker": sagemaker}
        Emulator.deployments(seconds=2.0)


def own_id(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan with the id its content gives it (apply refuses one whose id is not its content's)."""
    plan["id"] = recomputed_id(plan, plan["proposed"])
    return plan


def audited(fleet: dict[str, Any], plan: dict[str, Any]) -> dict[str, Any]:
    """The plan as `load_plan` gives it: with the run it is applied from (the fleet's latest), whose
    window end the fresh-evidence checks read from."""
    with History(Path(fleet["config"].history.path)) as history:
        run = history.runs(limit=1)[0]
    plan[AUDITED_IN] = {"run_id": run.id, "started_at": run.started_at.isoformat(),
                        "window_end": run.window_end.isoformat()}
    return plan


def option_of(plan: dict[str, Any], action: str) -> int:
    return next(i for i, a in enumerate(plan["alternatives"], start=1) if a["action"] == action)


def cli(fleet: dict[str, Any], *args: str) -> Any:
    return runner.invoke(app, ["apply", *args, "--config", str(fleet["path"])])


def records(fleet: dict[str, Any]) -> dict[str, AppliedChange]:
    with History(Path(fleet["config"].history.path)) as history:
        return {r.plan_id: r for r in reversed(history.applied())}


def notebook_plan(fleet: dict[str, Any], name: str = "cv-research-gpu") -> dict[str, Any]:
    """The audit's notebook-left-running plan, with its change where the audit carries none yet.
    The rule rests on timestamps (unmeasured): marked measured here, as a measured rule's would be."""
    plan = copy.deepcopy(fleet["plans"][("cv-research-gpu", "stop")])
    if name != "cv-research-gpu":  # the same plan for another notebook (m5.xlarge, running 2 days: no plan)
        plan.update(resource={**plan["resource"], "name": name}, change=None)
        plan["proposed"]["instance_type"] = "ml.m5.xlarge"
    plan["change"] = plan["change"] or {
        "calls": [{"service": "sagemaker", "operation": "StopNotebookInstance",
                   "params": {"NotebookInstanceName": name}, "purpose": f"stop {name} (its volume is kept)"}],
        "rollback": f"StartNotebookInstance {name}", "waits_for": f"notebook instance {name} Stopped"}
    return audited(fleet, own_id({**plan, "measured": True}))


def cluster_plan(fleet: dict[str, Any]) -> dict[str, Any]:
    plan = copy.deepcopy(fleet["plans"][("llm-platform", "shrink-group")])
    finding = plan["proposed"]["details"]
    plan["change"] = plan["change"] or {
        "calls": [{"service": "sagemaker", "operation": "BatchDeleteClusterNodes",
                   "params": {"ClusterName": "llm-platform", "NodeIds": finding["idle_nodes"]},
                   "purpose": "delete the idle nodes"}],
        "rollback": "UpdateCluster with the group's count raised again", "waits_for": "cluster InService"}
    return audited(fleet, plan)


# --- end to end ---------------------------------------------------------------------------------


def test_an_off_hours_alternative_is_applied_with_option_and_read_back(fleet: dict[str, Any]) -> None:
    plan = fleet["plans"][("internal-reports", "serverless")]
    option = option_of(plan, "off-hours")
    alternative = plan["alternatives"][option - 1]
    names = [c["params"]["Name"] for c in alternative["change"]["calls"]]
    assert [c["operation"] for c in alternative["change"]["calls"]] == ["CreateSchedule", "CreateSchedule"]
    scheduler = boto3.client("scheduler", region_name="us-east-1")

    dry = cli(fleet, plan["id"], "--option", str(option))
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.splitlines()[0].startswith(f"plan {plan['id']} option {option}: endpoint internal-reports ")
    assert "(off-hours)" in dry.stdout.splitlines()[0] and "risk medium" in dry.stdout.splitlines()[0]
    for call in alternative["change"]["calls"]:
        assert json.dumps(call["params"], sort_keys=True) in dry.stdout
    assert "guards pass: would apply as arn:aws:sts::123456789012:assumed-role/SageMakerAuditorApply/" in dry.stdout
    assert scheduler.list_schedules()["Schedules"] == []

    applied = cli(fleet, plan["id"], "--option", str(option), "--yes")
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines()[-1] == (f"plan {plan['id']} applied: endpoint internal-reports stays on "
                                               "internal-reports-config")
    for name in names:
        target = scheduler.get_schedule(Name=name)["Target"]
        assert target["Arn"].startswith("arn:aws:scheduler:::aws-sdk:sagemaker:")
    record = records(fleet)[plan["id"]]
    assert (record.outcome, record.plan["applied_option"], record.plan["proposed"]["action"]) == (
        "applied", option, "off-hours")
    assert record.monthly_savings_usd == alternative["monthly_savings_usd"] > 0
    # The endpoint is as it was: schedules do their work in the quiet hours.
    assert fleet["sagemaker"].describe_endpoint(EndpointName="internal-reports")["EndpointStatus"] == "InService"


def test_a_queue_alarm_plan_creates_both_alarms_and_reads_them_back(fleet: dict[str, Any]) -> None:
    plan = fleet["plans"][("video-transcode-async", "queue-alarm")]
    alarms = [c["params"]["AlarmName"] for c in plan["change"]["calls"]]
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    assert cloudwatch.describe_alarms(AlarmNames=alarms)["MetricAlarms"] == []
    applied = cli(fleet, plan["id"], "--yes")
    assert applied.exit_code == 0, applied.output
    found = cloudwatch.describe_alarms(AlarmNames=alarms)["MetricAlarms"]
    assert sorted(a["AlarmName"] for a in found) == sorted(alarms)
    assert all(a["AlarmActions"] == [TOPIC] for a in found)
    assert records(fleet)[plan["id"]].outcome == "applied"


def test_an_autoscaling_alternative_registers_the_target_and_policy(fleet: dict[str, Any]) -> None:
    plan = fleet["plans"][("pricing-api", "resize")]
    option = option_of(plan, "autoscale")
    applied = cli(fleet, plan["id"], "--option", str(option), "--yes")
    assert applied.exit_code == 0, applied.output
    (policy_call,) = [c for c in plan["alternatives"][option - 1]["change"]["calls"]
                      if c["operation"] == "PutScalingPolicy"]
    autoscaling = boto3.client("application-autoscaling", region_name="us-east-1")
    policies = autoscaling.describe_scaling_policies(ServiceNamespace="sagemaker",
                                                     ResourceId="endpoint/pricing-api/variant/AllTraffic")
    assert [p["PolicyName"] for p in policies["ScalingPolicies"]] == [policy_call["params"]["PolicyName"]]


def test_a_delete_plan_deletes_the_endpoint_and_keeps_its_config(fleet: dict[str, Any]) -> None:
    plan = fleet["plans"][("churn-model-legacy", "delete")]
    applied = cli(fleet, plan["id"], "--yes")
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines()[-1] == f"plan {plan['id']} applied: endpoint churn-model-legacy is gone"
    names = {e["EndpointName"] for e in fleet["sagemaker"].list_endpoints()["Endpoints"]}
    assert "churn-model-legacy" not in names
    fleet["sagemaker"].describe_endpoint_config(EndpointConfigName=plan["current"]["endpoint_config_name"])


def test_a_notebook_instance_is_stopped(fleet: dict[str, Any]) -> None:
    plan = notebook_plan(fleet)
    assert "notebook instance cv-research-gpu" in dry_run_lines(plan)[0]
    would = apply_plan(fleet["config"], plan, yes=False)
    assert would.outcome == "would-apply"
    sagemaker = fleet["sagemaker"]
    assert sagemaker.describe_notebook_instance(NotebookInstanceName="cv-research-gpu")[
        "NotebookInstanceStatus"] == "InService"
    result = apply_plan(fleet["config"], plan, yes=True)
    assert result.message == f"plan {plan['id']} applied: notebook instance cv-research-gpu is Stopped"
    assert sagemaker.describe_notebook_instance(NotebookInstanceName="cv-research-gpu")[
        "NotebookInstanceStatus"] == "Stopped"


def test_an_idle_node_busy_since_the_audit_is_not_deleted(fleet: dict[str, Any]) -> None:
    """A node the plan deletes that ran at 90% CPU an hour after the audit's window ended (its
    Container Insights series, found by InstanceId as the hyperpod kind finds it): refused, nothing
    deleted. Apply runs two hours after the window ended (time-machine)."""
    plan = cluster_plan(fleet)
    node = plan["change"]["calls"][0]["params"]["NodeIds"][0]
    window_end = datetime.fromisoformat(plan[AUDITED_IN]["window_end"])
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    (series,) = [m for m in cloudwatch.list_metrics(Namespace="ContainerInsights", MetricName="node_cpu_utilization")[
        "Metrics"] if {"Name": "InstanceId", "Value": node} in m["Dimensions"]]
    cloudwatch.put_metric_data(Namespace="ContainerInsights", MetricData=[{
        "MetricName": "node_cpu_utilization", "Dimensions": series["Dimensions"], "Value": 90.0,
        "Timestamp": window_end + timedelta(hours=1)}])
    with time_machine.travel(window_end + timedelta(hours=2), tick=True):
        assert refusal(fleet, plan, max_risk="medium") == (
            f"HyperPod cluster llm-platform's node {node} ran up to 90.0% CPU since the audit's window ended at "
            f"{window_end.astimezone(UTC):%Y-%m-%d %H:%M} UTC (idle: at most 5%); run the audit again")
    nodes = {n["InstanceId"] for n in fleet["sagemaker"].list_cluster_nodes(ClusterName="llm-platform")[
        "ClusterNodeSummaries"]}
    assert node in nodes


def test_idle_hyperpod_nodes_are_deleted_and_the_cluster_is_in_service_again(fleet: dict[str, Any]) -> None:
    plan = cluster_plan(fleet)
    nodes = plan["change"]["calls"][0]["params"]["NodeIds"]
    sagemaker = fleet["sagemaker"]
    before = {n["InstanceId"] for n in sagemaker.list_cluster_nodes(ClusterName="llm-platform")["ClusterNodeSummaries"]}
    assert set(nodes) < before and len(nodes) == 2
    refused = refusal(fleet, plan)  # risk medium: above the default max_risk
    assert refused == f"plan {plan['id']} (llm-platform): risk medium is above [apply] max_risk = low"
    result = apply_plan(fleet["config"], plan, yes=True)
    assert result.message == f"plan {plan['id']} applied: 2 nodes of llm-platform deleted; the cluster is InService"
    after = {n["InstanceId"] for n in sagemaker.list_cluster_nodes(ClusterName="llm-platform")["ClusterNodeSummaries"]}
    assert after == before - set(nodes)


def test_a_studio_app_is_deleted(fleet: dict[str, Any]) -> None:
    sagemaker = fleet["sagemaker"]
    keys = {"DomainId": "d-emulated01", "SpaceName": "research", "AppType": "JupyterLab", "AppName": "default"}
    sagemaker.create_app(**keys, ResourceSpec={"InstanceType": "ml.g5.xlarge"},
                         Tags=[{"Key": "auditor:apply", "Value": "allowed"}])
    plan = {"id": "p-app", "resource": resource_json("d-emulated01/research/JupyterLab/default", "studio-app"),
            "variant": None,
            "current": {"instance_type": "ml.g5.xlarge", "instance_count": 1, "monthly_cost_usd": 1102.38},
            "proposed": {"action": "delete-app", "instance_type": "ml.g5.xlarge", "instance_count": 1,
                         "monthly_savings_usd": 1102.38},
            "monthly_savings_usd": 1102.38, "measured": True, "risk": {"level": "low", "load_test_first": []},
            "change": {"calls": [{"service": "sagemaker", "operation": "DeleteApp", "params": keys,
                                  "purpose": "delete the idle app (the space and its storage are kept)"}],
                       "rollback": "CreateApp", "waits_for": None}}
    result = apply_plan(fleet["config"], audited(fleet, own_id(plan)), yes=True)
    assert result.message == (f"plan {plan['id']} applied: Studio app d-emulated01/research/JupyterLab/default is "
                              "Deleted")
    assert sagemaker.describe_app(**keys)["Status"] == "Deleted"


def test_a_studio_domain_gets_idle_shutdown_and_keeps_its_other_settings(fleet: dict[str, Any]) -> None:
    """The audit's own studio-no-idle-shutdown plan: UpdateDomain with each app type's settings
    copied, idle shutdown on; the domain Updating, then InService with it on."""
    plan = fleet["plans"][(DOMAIN, "idle-shutdown")]
    assert plan["resource"]["type"] == "studio-domain" and plan["risk"]["level"] == "low"
    sagemaker = fleet["sagemaker"]
    dry = cli(fleet, plan["id"])
    assert dry.exit_code == 0, dry.output
    assert f"plan {plan['id']}: Studio domain {DOMAIN} " in dry.stdout.splitlines()[0]
    assert "guards pass: would apply as " in dry.stdout
    applied = cli(fleet, plan["id"], "--yes")
    assert applied.exit_code == 0, applied.output
    assert applied.stdout.splitlines()[-1] == (f"plan {plan['id']} applied: Studio domain {DOMAIN} is InService with "
                                               "idle shutdown on for CodeEditor and JupyterLab apps")
    described = sagemaker.describe_domain(DomainId=DOMAIN)
    settings = described["DefaultUserSettings"]
    assert described["Status"] == "InService"
    assert settings["ExecutionRole"] == "arn:aws:iam::123456789012:role/studio-users"
    assert settings["JupyterLabAppSettings"] == {
        "DefaultResourceSpec": {"InstanceType": "ml.t3.medium"},
        "AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": 120,
                                                    "MaxIdleTimeoutInMinutes": 600}}}
    assert settings["CodeEditorAppSettings"] == {"AppLifecycleManagement": {"IdleSettings": {
        "LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": 120}}}
    assert records(fleet)[plan["id"]].outcome == "applied"
    # Applied again, the plan would overwrite what is there now: refused.
    assert refusal(fleet, plan) == (f"Studio domain {DOMAIN} changed since the audit: idle shutdown of CodeEditor "
                                    "apps is on now (120 min); run the audit again")


def test_a_studio_domain_whose_settings_changed_since_the_audit_is_refused(fleet: dict[str, Any]) -> None:
    """Settings the plan copied that are no longer the domain's: the update would put them back."""
    plan = copy.deepcopy(fleet["plans"][(DOMAIN, "idle-shutdown")])
    (call,) = plan["change"]["calls"]
    del call["params"]["DefaultUserSettings"]["CodeEditorAppSettings"]
    call["params"]["DefaultUserSettings"]["JupyterLabAppSettings"]["DefaultResourceSpec"] = {
        "InstanceType": "ml.t3.large"}
    sagemaker = fleet["sagemaker"]
    sagemaker.update_domain(DomainId=DOMAIN, DefaultUserSettings={"JupyterLabAppSettings": JUPYTER_SETTINGS})
    wait_in_service(sagemaker)
    assert refusal(fleet, plan) == (f"Studio domain {DOMAIN} changed since the audit: its JupyterLabAppSettings are "
                                    "not the ones the plan copied (the update would overwrite the change); run the "
                                    "audit again")
    assert sagemaker.describe_domain(DomainId=DOMAIN)["DefaultUserSettings"]["JupyterLabAppSettings"] == (
        JUPYTER_SETTINGS)
    # The settings as the plan copied them again (idle shutdown still off): it applies.
    sagemaker.update_domain(DomainId=DOMAIN, DefaultUserSettings={"JupyterLabAppSettings": {
        **JUPYTER_SETTINGS, "DefaultResourceSpec": {"InstanceType": "ml.t3.large"}}})
    wait_in_service(sagemaker)
    result = apply_plan(fleet["config"], plan, yes=True)
    assert result.message == (f"plan {plan['id']} applied: Studio domain {DOMAIN} is InService with idle shutdown "
                              "on for JupyterLab apps")


def wait_in_service(sagemaker: Any) -> None:
    for _ in range(200):
        if sagemaker.describe_domain(DomainId=DOMAIN)["Status"] == "InService":
            return
        time.sleep(0.05)
    raise AssertionError(f"{DOMAIN} stayed Updating")


def test_the_next_run_verifies_each_kind_and_the_digest_counts_them(fleet: dict[str, Any]) -> None:
    """After the changes above (module order): the off-hours schedules fire (what EventBridge Scheduler's universal
    targets would call, from each schedule's own Input), then a run verifies them all."""
    done = records(fleet)
    notebook, cluster = notebook_plan(fleet)["id"], cluster_plan(fleet)["id"]
    off_hours = fleet["plans"][("internal-reports", "serverless")]["id"]
    alarms = fleet["plans"][("video-transcode-async", "queue-alarm")]["id"]
    scaling = fleet["plans"][("pricing-api", "resize")]["id"]
    deleted = fleet["plans"][("churn-model-legacy", "delete")]["id"]
    assert {notebook, cluster, off_hours, alarms, scaling, deleted} <= set(done), sorted(done)
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    sagemaker = fleet["sagemaker"]
    for call in done[off_hours].calls:
        target = scheduler.get_schedule(Name=call["params"]["Name"])["Target"]
        action = target["Arn"].rsplit(":", 1)[-1]  # deleteEndpoint, then createEndpoint
        getattr(sagemaker, {"deleteEndpoint": "delete_endpoint", "createEndpoint": "create_endpoint"}[action])(
            **json.loads(target["Input"]))
    created = sagemaker.describe_endpoint(EndpointName="internal-reports")["CreationTime"]
    assert created > done[off_hours].finished_at

    outcome = execute_audit(fleet["config"])
    assert not deliver_outcome(fleet["config"], outcome).problems
    with History(Path(fleet["config"].history.path)) as history:
        run = history.runs(limit=1)[0].id
        verified = {r.plan_id: r for r in history.applied() if r.verified_run_id == run}
        digest = build_digest(history, iso_week(utc_now()))
    assert outcome.report.errors == (), outcome.report.errors
    domain = fleet["plans"][(DOMAIN, "idle-shutdown")]["id"]
    assert {notebook, cluster, alarms, scaling, off_hours, deleted, domain} <= set(verified), sorted(verified)
    assert digest is not None
    realised = {a.change.plan_id: a.realised_monthly_usd for a in digest.applied}
    assert realised[notebook] == done[notebook].monthly_savings_usd > 0
    assert realised[cluster] == done[cluster].monthly_savings_usd > 0
    assert realised[alarms] == 0.0
    text = render_weekly_text(digest)
    assert f"\n- notebook-instance cv-research-gpu (us-east-1) plan {notebook} by " in text
    assert f"\n- internal-reports / AllTraffic (us-east-1) plan {off_hours} by " in text
    assert ": off-hours, saved $" in text and ": stop, saved $" in text


# --- the guards, one line each, nothing changed -----------------------------------------------------


def refusal(fleet: dict[str, Any], plan: dict[str, Any], option: int = 0, **apply: Any) -> str:
    config = replace(fleet["config"], apply=replace(fleet["config"].apply, **{"max_risk": "low", **apply}))
    before = len(records(fleet))
    with pytest.raises(ApplyRefused) as refused:
        apply_plan(config, plan, yes=True, option=option)
    assert len(records(fleet)) == before
    message = str(refused.value)
    assert "\n" not in message
    return message


def test_a_job_plan_is_refused_apply_never_starts_a_job(fleet: dict[str, Any]) -> None:
    plan = {**notebook_plan(fleet, "feature-eng-m5"), "id": "p-job",
            "resource": resource_json("nightly-train", "training-job")}
    assert refusal(fleet, plan) == ("plan p-job (nightly-train): its change is the next run's request "
                                    "(audit plans show p-job --as cli); apply never starts a job")


def test_an_unmeasured_notebook_plan_is_refused(fleet: dict[str, Any]) -> None:
    plan = {**notebook_plan(fleet, "feature-eng-m5"), "measured": False}
    assert "unmeasured" in refusal(fleet, plan, max_risk="medium")


def test_a_notebook_not_opted_in_is_refused(fleet: dict[str, Any]) -> None:
    # A notebook stop is medium (nothing measures a notebook's use): allowed here, to reach the opt-in.
    assert refusal(fleet, notebook_plan(fleet, "feature-eng-m5"), max_risk="medium") == (
        "notebook instance feature-eng-m5 is not opted in: tag it auditor:apply=allowed or list it in "
        "[apply] resources")
    # [apply] endpoints opts in endpoints only.
    assert "not opted in" in refusal(fleet, notebook_plan(fleet, "feature-eng-m5"), endpoints=("feature-*",),
                                     max_risk="medium")


def test_a_notebook_changed_since_the_audit_is_refused(fleet: dict[str, Any]) -> None:
    plan = notebook_plan(fleet, "feature-eng-m5")
    plan["proposed"]["instance_type"] = "ml.m5.4xlarge"
    own_id(plan)
    assert refusal(fleet, plan, resources=("feature-*",), max_risk="medium") == (
        "notebook instance feature-eng-m5 changed since the audit: it runs ml.m5.xlarge, the plan was made on "
        "ml.m5.4xlarge; run the audit again")


def test_a_plan_to_load_test_first_or_above_max_risk_is_refused(fleet: dict[str, Any]) -> None:
    plan = {**notebook_plan(fleet, "feature-eng-m5"), "risk": {"level": "low", "load_test_first": ["a GPU"]}}
    assert "load-test first (a GPU)" in refusal(fleet, plan)
    plan = {**plan, "risk": {"level": "high", "load_test_first": []}}
    assert refusal(fleet, plan, max_risk="medium").endswith("risk high is above [apply] max_risk = medium")


def test_nodes_already_gone_are_refused(fleet: dict[str, Any]) -> None:
    plan = cluster_plan(fleet)
    plan["change"]["calls"][0]["params"]["NodeIds"] = ["i-0000000000000dead"]
    plan["proposed"]["details"]["idle_nodes"] = ["i-0000000000000dead"]
    own_id(plan)
    assert refusal(fleet, plan, max_risk="medium") == (
        "HyperPod cluster llm-platform changed since the audit: node i-0000000000000dead no longer exists; "
        "run the audit again")


def test_another_account_and_no_credentials_are_refused(fleet: dict[str, Any]) -> None:
    stored = notebook_plan(fleet)
    plan = own_id({**stored, "resource": {**stored["resource"], "account_id": "210987654321"}})
    assert refusal(fleet, plan, max_risk="medium") == (
        f"plan {plan['id']}: the apply credentials act in account 123456789012, the plan is for account 210987654321")
    assert refusal(fleet, notebook_plan(fleet), role_arn=None, max_risk="medium").startswith("no apply credentials")


def test_an_option_the_plan_does_not_have_is_refused(fleet: dict[str, Any]) -> None:
    plan = fleet["plans"][("video-transcode-async", "queue-alarm")]
    assert refusal(fleet, plan, option=1) == (f"plan {plan['id']} has no alternative: --option 1 names none "
                                              "(`audit plans --format json` lists each plan's alternatives)")
    # Through the CLI: a plan of the latest run (the one above was applied, and a later run no longer proposes it).
    with History(Path(fleet["config"].history.path)) as history:
        latest = next(p for p in history.latest_plans() if not p["alternatives"])
    result = cli(fleet, latest["id"], "--option", "3")
    assert result.exit_code == 1
    assert [line for line in result.stderr.splitlines() if line.startswith("error:")] == [
        f"error: plan {latest['id']} has no alternative: --option 3 names none (`audit plans --format json` "
        "lists each plan's alternatives)"]


def test_nodes_the_answer_lists_as_failed_fail_the_apply() -> None:
    """BatchDeleteClusterNodes answers 200 with the nodes it could not delete in `Failed`."""
    plan = parse_plan({"id": "p-nodes", "resource": resource_json("llm-platform", "hyperpod-cluster"),
                       "current": {}, "proposed": {},
                       "change": {"calls": [{"service": "sagemaker", "operation": "BatchDeleteClusterNodes",
                                             "params": {"ClusterName": "llm-platform", "NodeIds": ["i-1", "i-2"]}}]}})
    answers = [{"Successful": ["i-1"], "Failed": [{"NodeId": "i-2", "Code": "NodeIdInUse", "Message": "busy"}]}]
    target = target_for("hyperpod-cluster")
    assert target is not None
    outcome, message = target.settle(None, plan, answers, 1.0, lambda _: None, lambda: 0.0)  # type: ignore[arg-type]
    assert (outcome, message) == ("failed", "plan p-nodes failed: BatchDeleteClusterNodes did not delete 1 of 2 "
                                            "nodes of llm-platform: i-2: NodeIdInUse busy")


def test_a_read_back_that_finds_nothing_says_which(fleet: dict[str, Any]) -> None:
    """A schedule that is not there when read back (deleted meanwhile) is named."""
    plan = copy.deepcopy(fleet["plans"][("internal-reports", "serverless")])
    option = option_of(plan, "off-hours")
    calls = parse_plan(plan, option).change.calls  # type: ignore[union-attr]
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    for call in calls:  # made by the first test of the module: made again here
        with contextlib.suppress(scheduler.exceptions.ResourceNotFoundException):
            scheduler.delete_schedule(Name=call.params["Name"])
    assert apply_plan(fleet["config"], audited(fleet, plan), yes=True, option=option).outcome == "applied"
    scheduler.delete_schedule(Name=calls[0].params["Name"])
    problem = missing_after(apply_clients(fleet["config"], "us-east-1"), "us-east-1", list(calls))
    assert problem == f"the calls were made, but schedule {calls[0].params['Name']} is not found when read back"


# --- inference components, and what the next run does not take as done ------------------------------


def test_off_hours_scheduled_actions_on_inference_components_are_read_back(fleet: dict[str, Any]) -> None:
    """The rule's own change for an endpoint that hosts a component (moto has no inference components:
    pricing-api stands in for the endpoint; Application Auto Scaling takes the component's ResourceId
    without one, as the emulator's dimension for copies lets it)."""
    add_component("123456789012", "us-east-1", "pricing-api", "AllTraffic", "pricing-ic", 2, 1.0, 0.0, 1024,
                  utc_now())
    component = InferenceComponent("pricing-ic", "AllTraffic", "InService", copy_count=2)
    hosting = replace(helper_endpoint("pricing-api"), config_name="pricing-api-config", autoscaling_known=True,
                      inference_components=(component,))
    change = off_hours_change(hosting, (OffPeriod(18, 14), OffPeriod(42, 14)), 60, None)
    plan = {"id": "p-ic-off-hours", "resource": resource_json("pricing-api"), "variant": None,
            "current": {"instance_type": "ml.c5.xlarge", "instance_count": 1, "monthly_cost_usd": 100.0,
                        "endpoint_config_name": "pricing-api-config"},
            "proposed": {"action": "off-hours", "monthly_savings_usd": 60.0}, "monthly_savings_usd": 60.0,
            "measured": True, "risk": {"level": "medium", "load_test_first": []},
            "change": {"calls": change["change"], "rollback": change["rollback"], "waits_for": None},
            "basis": live_basis("pricing-api")}
    result = apply_plan(fleet["config"], audited(fleet, own_id(plan)), yes=True)
    assert result.message == f"plan {plan['id']} applied: endpoint pricing-api stays on pricing-api-config"
    autoscaling = boto3.client("application-autoscaling", region_name="us-east-1")
    actions = autoscaling.describe_scheduled_actions(ServiceNamespace="sagemaker",
                                                     ResourceId="inference-component/pricing-ic")["ScheduledActions"]
    assert sorted(a["ScheduledActionName"] for a in actions) == sorted(
        c["params"]["ScheduledActionName"] for c in change["change"] if c["operation"] == "PutScheduledAction")


def test_off_hours_on_components_is_refused_when_a_component_served_requests_in_its_off_hours(
        fleet: dict[str, Any]) -> None:
    """The variant publishes no Invocations for its components: the fresh evidence reads each component
    the plan schedules (InferenceComponentName), and a request since the audit in the hours the plan
    has it off refuses the plan, nothing made."""
    add_component("123456789012", "us-east-1", "pricing-api", "AllTraffic", "pricing-ic-busy", 1, 1.0, 0.0, 1024,
                  utc_now())
    with History(Path(fleet["config"].history.path)) as history:
        window_end = history.runs(limit=1)[0].window_end
    first = window_end.weekday() * 24 + window_end.hour  # the hours since the audit's window: off
    component = InferenceComponent("pricing-ic-busy", "AllTraffic", "InService", copy_count=1)
    hosting = replace(helper_endpoint("pricing-api"), config_name="pricing-api-config", autoscaling_known=True,
                      inference_components=(component,))
    change = off_hours_change(hosting, (OffPeriod(first, 6),), 0, None)
    boto3.client("cloudwatch", region_name="us-east-1").put_metric_data(Namespace="AWS/SageMaker", MetricData=[
        {"MetricName": "Invocations", "Timestamp": max(utc_now() - timedelta(seconds=5), window_end),
         "Value": 3.0, "Unit": "None", "Dimensions": [{"Name": "InferenceComponentName", "Value": "pricing-ic-busy"}]}])
    plan = {"id": "p-ic-busy", "resource": resource_json("pricing-api"), "variant": None,
            "current": {"instance_type": "ml.c5.xlarge", "instance_count": 1, "monthly_cost_usd": 100.0,
                        "endpoint_config_name": "pricing-api-config"},
            "proposed": {"action": "off-hours", "monthly_savings_usd": 60.0, "details": {
                "off_periods_utc": [{"from": f"{['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'][first // 24]} "
                                             f"{first % 24:02d}:00", "to": "-", "hours": 6}]}},
            "monthly_savings_usd": 60.0, "measured": True, "risk": {"level": "medium", "load_test_first": []},
            "change": {"calls": change["change"], "rollback": change["rollback"], "waits_for": None},
            "basis": live_basis("pricing-api")}
    with pytest.raises(ApplyRefused) as refused:
        apply_plan(fleet["config"], audited(fleet, own_id(plan)), yes=True, now=past_a_minute(window_end))
    assert ("endpoint pricing-api's inference component pricing-ic-busy served 3 requests in the hours the schedules "
            "would have it off") in str(refused.value)
    autoscaling = boto3.client("application-autoscaling", region_name="us-east-1")
    assert autoscaling.describe_scheduled_actions(ServiceNamespace="sagemaker",
                                                  ResourceId="inference-component/pricing-ic-busy")[
        "ScheduledActions"] == []


def test_off_hours_schedules_are_refused_when_a_component_added_since_the_audit_served_requests(
        fleet: dict[str, Any]) -> None:
    """An off-hours plan of schedules (an endpoint that hosted no component when audited) names no
    component: the fresh evidence lists those the endpoint hosts now and reads their Invocations too."""
    add_component("123456789012", "us-east-1", "internal-reports", "AllTraffic", "reports-ic-late", 1, 1.0, 0.0,
                  1024, utc_now())
    with History(Path(fleet["config"].history.path)) as history:
        window_end = history.runs(limit=1)[0].window_end
    first = window_end.weekday() * 24 + window_end.hour  # the hours since the audit's window: off
    audited_shape = replace(helper_endpoint("internal-reports"), config_name="internal-reports-config")
    change = off_hours_change(audited_shape, (OffPeriod(first, 6),), 0, "arn:aws:iam::{account_id}:role/off-hours")
    assert {c["operation"] for c in change["change"]} == {"CreateSchedule"}
    Emulator.publish_metrics("AWS/SageMaker", [
        {"MetricName": "Invocations", "Timestamp": max(utc_now() - timedelta(seconds=5), window_end),
         "Value": 4.0, "Unit": "None", "Dimensions": [{"Name": "InferenceComponentName", "Value": "reports-ic-late"}]}],
        "us-east-1")
    plan = {"id": "p-late-ic", "resource": resource_json("internal-reports"), "variant": None,
            "current": {"instance_type": "ml.m5.xlarge", "instance_count": 1, "monthly_cost_usd": 100.0,
                        "endpoint_config_name": "internal-reports-config"},
            "proposed": {"action": "off-hours", "monthly_savings_usd": 60.0, "details": {
                "off_periods_utc": [{"from": f"{['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'][first // 24]} "
                                             f"{first % 24:02d}:00", "to": "-", "hours": 6}]}},
            "monthly_savings_usd": 60.0, "measured": True, "risk": {"level": "medium", "load_test_first": []},
            "change": {"calls": change["change"], "rollback": change["rollback"], "waits_for": None},
            "basis": live_basis("internal-reports")}
    scheduler = boto3.client("scheduler", region_name="us-east-1")
    before = scheduler.list_schedules()["Schedules"]
    try:
        with pytest.raises(ApplyRefused) as refused:
            apply_plan(fleet["config"], audited(fleet, own_id(plan)), yes=True, now=past_a_minute(window_end))
    finally:
        fleet["sagemaker"].delete_inference_component(InferenceComponentName="reports-ic-late")
    assert ("endpoint internal-reports's inference component reports-ic-late served 4 requests in the hours the "
            "schedules would have it off") in str(refused.value)
    assert scheduler.list_schedules()["Schedules"] == before


def past_a_minute(window_end: datetime) -> Callable[[], datetime]:
    """Apply's clock at least a minute after the audit's window (within one, nothing has been
    published since and fresh evidence is not read: a run in the first minute of an hour would not
    test it)."""
    return lambda: max(utc_now(), window_end + timedelta(seconds=61))


def applied_change(plan: dict[str, Any], calls: list[dict[str, Any]]) -> AppliedChange:
    at = utc_now()
    return AppliedChange(plan_id=plan["id"], account_id="123456789012", region="us-east-1",
                         endpoint=plan["resource"]["name"],
                         variant=None, caller="arn", calls=tuple(calls), plan=plan, started_at=at, finished_at=at,
                         outcome="applied", message="", previous_config=None, new_config=None,
                         monthly_savings_usd=60.0)


def evidence(*endpoints: Any, errors: tuple[str, ...] = ()) -> Evidence:
    return Evidence(seen={"endpoint": {(e.account_id, e.region, e.name): e for e in endpoints}},
                    blind=frozenset(("123456789012", r) for r in errors), complete=True)


def test_the_next_run_takes_only_what_it_sees_as_done() -> None:
    ep = helper_endpoint("reports")
    component = InferenceComponent("reports-ic", "AllTraffic", "InService", copy_count=2)
    scheduled = applied_change({"id": "p1", "resource": resource_json("reports", "endpoint")}, [
        {"service": "application-autoscaling", "operation": "PutScheduledAction",
         "params": {"ResourceId": "inference-component/reports-ic", "ScheduledActionName": "x"}}])
    done = verifier_for("endpoint")
    assert done is not None
    assert not done(scheduled, evidence(replace(ep, inference_components=(component,))))  # working hours
    assert done(scheduled, evidence(replace(ep, inference_components=(replace(component, copy_count=0),))))
    schedules = applied_change({"id": "p2", "resource": resource_json("reports", "endpoint")}, [
        {"service": "scheduler", "operation": "CreateSchedule", "params": {"Name": "auditor-stop-0-reports"}}])
    assert not done(schedules, evidence(ep))  # created before the apply: the schedules have not run yet
    assert done(schedules, evidence())  # gone: the evening's schedule deleted it
    assert not done(schedules, evidence(errors=("us-east-1",)))  # gone from a region read with an error: unknown
    alarms = applied_change({"id": "p3", "resource": resource_json("reports", "endpoint")}, [
        {"service": "cloudwatch", "operation": "PutMetricAlarm", "params": {"AlarmName": "reports-age"}}])
    assert not done(alarms, evidence(replace(ep, queue_alarms=())))
    assert done(alarms, evidence(replace(ep, queue_alarms=("reports-age",))))
    assert not done(alarms, evidence(replace(ep, queue_alarms=None)))  # DescribeAlarms not read: unknown


def test_the_next_run_takes_a_domain_as_done_only_with_idle_shutdown_on_for_each_app_type_set() -> None:
    from auditor.kinds.workspaces.models import StudioDomain

    change = applied_change({"id": "p4", "resource": resource_json(DOMAIN, "studio-domain")}, [
        {"service": "sagemaker", "operation": "UpdateDomain", "params": {"DomainId": DOMAIN, "DefaultUserSettings": {
            "JupyterLabAppSettings": {}, "CodeEditorAppSettings": {}}}}])

    def seen(minutes: dict[str, int | None]) -> Evidence:
        domain = StudioDomain("123456789012", "us-east-1", DOMAIN, "research", "InService", minutes)
        return replace(evidence(), seen={"studio-domain": {("123456789012", "us-east-1", DOMAIN): domain}})

    done = verifier_for("studio-domain")
    assert done is not None
    assert done(change, seen({"JupyterLab": 120, "CodeEditor": 120}))
    assert not done(change, seen({"JupyterLab": 120, "CodeEditor": None}))  # one app type still off
    assert not done(change, evidence())  # the run did not audit Studio: unknown


# --- fresh evidence where no metric exists ------------------------------------------------------------


def test_a_notebook_started_stopped_or_updated_since_the_audit_is_not_stopped(fleet: dict[str, Any]) -> None:
    """Notebook instances publish no usage metric: a LastModifiedTime after the audit's window ended
    (a start, stop or update since) refuses; a plan that does not say when that window ended refuses."""
    plan = notebook_plan(fleet, "feature-eng-m5")
    modified = fleet["sagemaker"].describe_notebook_instance(NotebookInstanceName="feature-eng-m5")["LastModifiedTime"]
    window_end = (modified - timedelta(hours=1)).astimezone(UTC)
    plan[AUDITED_IN] = {"run_id": 1, "started_at": window_end.isoformat(), "window_end": window_end.isoformat()}
    assert refusal(fleet, plan, resources=("feature-*",), max_risk="medium") == (
        "notebook instance feature-eng-m5 was started, stopped or updated at "
        f"{modified.astimezone(UTC):%Y-%m-%d %H:%M} UTC, since the audit's window ended at "
        f"{window_end:%Y-%m-%d %H:%M} UTC; run the audit again")
    del plan[AUDITED_IN]
    assert refusal(fleet, plan, resources=("feature-*",), max_risk="medium") == (
        "notebook instance feature-eng-m5: the plan does not say when its audit's window ended, so its activity since "
        "cannot be read; apply it from the history (`audit apply ID`)")


def test_a_studio_app_used_since_the_audit_is_not_deleted() -> None:
    """Studio apps publish no metric: DescribeApp's LastUserActivityTimestamp after the window ended
    refuses, unless it is only the last health check (the emulator's DescribeApp has neither: the
    answer is AWS's shape, given here)."""
    from auditor.kinds.workspaces.evidence import app_since
    from auditor.write.evidence import Since
    from auditor.write.target import Observed

    window_end = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
    plan = parse_plan({"id": "p", "resource": resource_json("d-1/research/JupyterLab/default", "studio-app"),
                       "current": {}, "proposed": {}})

    def seen(active: datetime, health: datetime) -> str | None:
        described = {"Status": "InService", "LastUserActivityTimestamp": active, "LastHealthCheckTimestamp": health}
        return app_since(Since(None, plan, Observed("arn", "InService", described), window_end,  # type: ignore[arg-type]
                               window_end + timedelta(hours=3), None, "Studio app"))  # type: ignore[arg-type]

    used = window_end + timedelta(hours=1)
    assert seen(used, used + timedelta(minutes=5)) == (
        "Studio app d-1/research/JupyterLab/default had user activity at 2026-12-01 07:00 UTC, since the audit's "
        "window ended at 2026-12-01 06:00 UTC; run the audit again")
    assert seen(used, used) is None  # only the health check
    assert seen(window_end - timedelta(hours=2), used) is None  # used before the window ended


def test_an_async_endpoint_that_processed_or_queued_requests_since_the_audit_is_not_deleted(
        fleet: dict[str, Any]) -> None:
    """Async endpoints publish no Invocations: the requests they processed (TotalProcessingTime's
    SampleCount) and their queue (ApproximateBacklogSize) since the audit's window ended refuse a delete."""
    delete = {"service": "sagemaker", "operation": "DeleteEndpoint",
              "params": {"EndpointName": "video-transcode-async"}, "purpose": "delete endpoint video-transcode-async"}
    plan = audited(fleet, own_id({
        "resource": resource_json("video-transcode-async"), "variant": None,
        "current": {"endpoint_config_name": "video-transcode-async-config"},
        "proposed": {"action": "delete", "instance_type": None, "instance_count": 0}, "measured": True,
        "risk": {"level": "low", "load_test_first": []}, "basis": live_basis("video-transcode-async"),
        "change": {"calls": [delete], "rollback": "CreateEndpoint", "waits_for": None}}))
    window_end = datetime.fromisoformat(plan[AUDITED_IN]["window_end"])
    ended = f"since the audit's window ended at {window_end.astimezone(UTC):%Y-%m-%d %H:%M} UTC; run the audit again"
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    with time_machine.travel(window_end + timedelta(hours=3), tick=True):
        cloudwatch.put_metric_data(Namespace="AWS/SageMaker", MetricData=[{
            "MetricName": "ApproximateBacklogSize", "Timestamp": window_end + timedelta(hours=1), "Value": 12.0,
            "Dimensions": [{"Name": "EndpointName", "Value": "video-transcode-async"}]}])
        assert refusal(fleet, plan, resources=("video-*",)) == (
            f"endpoint video-transcode-async had 12 requests queued {ended}")
        cloudwatch.put_metric_data(Namespace="AWS/SageMaker", MetricData=[{
            "MetricName": "TotalProcessingTime", "Timestamp": window_end + timedelta(hours=2),
            "StatisticValues": {"SampleCount": 40, "Sum": 52000.0, "Minimum": 900.0, "Maximum": 2100.0},
            "Dimensions": [{"Name": "EndpointName", "Value": "video-transcode-async"},
                           {"Name": "VariantName", "Value": "AllTraffic"}]}])
        assert refusal(fleet, plan, resources=("video-*",)) == (
            f"endpoint video-transcode-async served 40 requests {ended}")
    assert fleet["sagemaker"].describe_endpoint(EndpointName="video-transcode-async")["EndpointStatus"] == "InService"
