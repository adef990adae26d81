"""The changes of notebook and Studio app plans: StopNotebookInstance and DeleteApp requests valid
against botocore's service model, their rollbacks (StartNotebookInstance, CreateApp with the same
spec), and their risk levels from stated facts. Studio apps through botocore's Stubber (moto has no
ListApps / DescribeApp); the demo's notebooks through the emulator, where the stop is made for real."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import botocore.session
import pytest
import yaml
from botocore.validate import ParamValidator
from typer.testing import CliRunner

from auditor.kinds.workspaces.change import LOW_RISK_IDLE_DAYS, delete_app_details
from auditor.kinds.workspaces.models import StudioApp, StudioAppCost
from auditor.recommend.plans import build_plans
from auditor.records import plan_to_dict
from auditor.report.change_text import render_change
from conftest import audit_json
from helpers import NOW
from test_studio import DOMAIN
from test_studio import audit as studio_audit

runner = CliRunner()
SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")


def valid(operation: str, params: dict[str, Any]) -> None:
    report = ParamValidator().validate(params, SAGEMAKER.operation_model(operation).input_shape)
    assert not report.has_errors(), report.generate_report()


# --- Studio apps ---------------------------------------------------------------------------------


def test_an_idle_space_app_plan_deletes_it_by_its_space_and_can_create_it_again() -> None:
    found, findings = studio_audit()
    assert {a.app_name: a.owner_field for a in found.apps} == {"default": "SpaceName",
                                                               "datascience-ml-m5": "UserProfileName"}
    (plan,) = [p for p in build_plans(findings) if p.resource.type == "studio-app"]
    assert plan.change is not None and plan.risk is not None
    (call,) = plan.change.calls
    assert (call.service, call.operation) == ("sagemaker", "DeleteApp")
    assert call.params == {"DomainId": DOMAIN, "SpaceName": "alice-lab", "AppType": "JupyterLab",
                           "AppName": "default"}
    valid("DeleteApp", call.params)
    create = json.loads(plan.change.rollback.split("CreateApp ", 1)[1].split(" starts ", 1)[0])
    assert create == {**call.params, "ResourceSpec": {"InstanceType": "ml.g4dn.xlarge"}}
    valid("CreateApp", create)
    # Idle five days (no user, only health checks): under a week, so medium.
    assert plan.risk.level.value == "medium" and plan.risk.replays == ()
    assert plan.risk.basis[0].startswith("no user activity for 120 h (its last activity is only its last health check)")
    assert plan.change.waits_for == "app default Deleted"


IMAGE = "arn:aws:sagemaker:us-east-1:081325390199:image/datascience-1.0"


def _app_cost(owner_field: str, idle_hours: float) -> StudioAppCost:
    app = StudioApp("123456789012", "us-east-1", DOMAIN, "KernelGateway", "datascience-ml-m5", "bob", "InService",
                    "ml.m5.xlarge", NOW - timedelta(days=30), NOW - timedelta(hours=idle_hours), NOW,
                    owner_field=owner_field,
                    resource_spec={"InstanceType": "ml.m5.xlarge", "SageMakerImageArn": IMAGE})
    return StudioAppCost(app, 0.23, 167.9, idle_hours, "hosting")


@pytest.mark.parametrize(("idle_hours", "level"), [(LOW_RISK_IDLE_DAYS * 24, "low"), (LOW_RISK_IDLE_DAYS * 24 - 1,
                                                                                        "medium")])
def test_a_user_profile_app_idle_a_week_is_low_risk_and_less_is_medium(idle_hours: float, level: str) -> None:
    details = delete_app_details(_app_cost("UserProfileName", idle_hours))
    (call,) = details["change"]
    assert call["params"] == {"DomainId": DOMAIN, "UserProfileName": "bob", "AppType": "KernelGateway",
                              "AppName": "datascience-ml-m5"}
    valid("DeleteApp", call["params"])
    create = json.loads(details["rollback"].split("CreateApp ", 1)[1].split(" starts ", 1)[0])
    assert create["ResourceSpec"]["SageMakerImageArn"].endswith(":image/datascience-1.0")
    valid("CreateApp", create)
    assert details["risk"]["level"] == level
    assert "the user profile's storage" in details["risk"]["basis"][-1]


def test_an_app_whose_owner_is_not_named_gets_no_call() -> None:
    cost = _app_cost("UserProfileName", 200)
    details = delete_app_details(replace(cost, app=replace(cost.app, owner="")))
    assert "change" not in details and details["change_missing"].startswith("ListApps named neither")
    assert details["risk"]["level"] == "low"


def test_plans_show_for_a_studio_app_prints_the_cli_and_declares_nothing() -> None:
    _, findings = studio_audit()
    (plan,) = [p for p in build_plans(findings) if p.resource.type == "studio-app"]
    data = plan_to_dict(plan)
    cli = render_change(data, "cli")
    body = json.dumps({"AppName": "default", "AppType": "JupyterLab", "DomainId": DOMAIN, "SpaceName": "alice-lab"})
    assert f"aws sagemaker delete-app --region us-east-1 --cli-input-json '{body}'" in cli
    assert "aws sagemaker wait" not in cli  # botocore has no waiter for apps: the comment says what to wait for
    for as_ in ("cloudformation", "terraform"):
        text = render_change(data, as_)
        assert sum(line.startswith("# DeleteApp:") for line in text.splitlines()) == 1
        assert yaml.safe_load(text) is None



def test_a_domain_without_idle_shutdown_gets_an_update_domain_that_keeps_its_other_settings() -> None:
    found, findings = studio_audit()
    (domain,) = found.domains
    described = domain.app_settings["CodeEditorAppSettings"]
    assert described["AppLifecycleManagement"]["IdleSettings"]["IdleTimeoutInMinutes"] == 60
    (plan,) = [p for p in build_plans(findings)
               if p.resource.type == "studio-domain"]
    assert plan.resource.name == DOMAIN and plan.monthly_savings_usd == 0.0  # nothing priced: not measured
    assert plan.proposed.advice == "turn on idle shutdown after 120 min for JupyterLab apps"
    assert plan.change is not None and plan.risk is not None and plan.risk.level.value == "low"
    (call,) = plan.change.calls
    assert call.operation == "UpdateDomain"
    # Only the app type without idle shutdown, copied as described, with idle shutdown on.
    assert call.params == {"DomainId": DOMAIN, "DefaultUserSettings": {"JupyterLabAppSettings": {
        "AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": 120}}}}}
    valid("UpdateDomain", call.params)
    undo = json.loads(plan.change.rollback.split("UpdateDomain ", 1)[1].split(" puts ", 1)[0])
    assert undo["DefaultUserSettings"]["JupyterLabAppSettings"]["AppLifecycleManagement"] == {
        "IdleSettings": {"LifecycleManagement": "DISABLED"}}
    valid("UpdateDomain", undo)
    text = render_change(plan_to_dict(plan), "cloudformation")
    assert sum(line.startswith("# UpdateDomain:") for line in text.splitlines()) == 1
    assert yaml.safe_load(text) is None


def test_idle_shutdown_copies_the_other_settings_and_stays_within_what_users_may_set() -> None:
    from auditor.kinds.workspaces.change import idle_shutdown_details
    from auditor.kinds.workspaces.models import StudioDomain

    settings = {"DefaultResourceSpec": {"InstanceType": "ml.t3.medium"}, "LifecycleConfigArns": [
        "arn:aws:sagemaker:us-east-1:123456789012:studio-lifecycle-config/setup"],
        "AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": "DISABLED",
                                                    "MinIdleTimeoutInMinutes": 180, "MaxIdleTimeoutInMinutes": 600}}}
    domain = StudioDomain("123456789012", "us-east-1", DOMAIN, "research", "InService",
                          {"JupyterLab": None}, app_settings={"JupyterLabAppSettings": settings})
    details = idle_shutdown_details(domain, ["JupyterLab"], 120)
    (call,) = details["change"]
    new = call["params"]["DefaultUserSettings"]["JupyterLabAppSettings"]
    assert new["DefaultResourceSpec"] == settings["DefaultResourceSpec"]
    assert new["LifecycleConfigArns"] == settings["LifecycleConfigArns"]
    assert new["AppLifecycleManagement"]["IdleSettings"] == {
        "LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": 180,  # raised to the users' minimum
        "MinIdleTimeoutInMinutes": 180, "MaxIdleTimeoutInMinutes": 600}
    valid("UpdateDomain", call["params"])
    undo = json.loads(details["rollback"].split("UpdateDomain ", 1)[1].split(" puts ", 1)[0])
    assert undo["DefaultUserSettings"]["JupyterLabAppSettings"] == settings  # as it was, DISABLED included

# --- the demo's notebooks, end to end ------------------------------------------------------------


@pytest.fixture(scope="module")
def report(workspaces_home: Path) -> dict:
    return audit_json(workspaces_home)


def notebook_plan(report: dict) -> dict:
    (plan,) = [p for p in report["plans"] if p["resource"]["type"] == "notebook-instance"]
    return plan


def test_the_demo_notebook_plan_stops_it_with_medium_risk(report: dict) -> None:
    plan = notebook_plan(report)
    assert plan["resource"]["name"] == "cv-research-gpu" and plan["measured"] is False
    (call,) = plan["change"]["calls"]
    assert (call["service"], call["operation"], call["params"]) == (
        "sagemaker", "StopNotebookInstance", {"NotebookInstanceName": "cv-research-gpu"})
    valid(call["operation"], call["params"])
    assert plan["change"]["rollback"].startswith('by hand: StartNotebookInstance {"NotebookInstanceName": '
                                                 '"cv-research-gpu"}')
    assert plan["change"]["waits_for"] == "notebook instance cv-research-gpu Stopped"
    assert plan["risk"]["level"] == "medium"
    assert plan["risk"]["basis"][0].startswith("InService 23 days without a stop, start or update")


def test_plans_show_for_the_notebook_prints_the_cli_and_its_waiter(report: dict) -> None:
    plan = notebook_plan(report)
    cli = render_change(plan, "cli").splitlines()
    assert ("aws sagemaker stop-notebook-instance --region us-east-1 --cli-input-json "
            "'{\"NotebookInstanceName\": \"cv-research-gpu\"}'") in cli
    assert cli[-1] == ("aws sagemaker wait notebook-instance-stopped --region us-east-1 "
                       "--notebook-instance-name cv-research-gpu")
    for tool, as_ in (("CloudFormation", "cloudformation"), ("Terraform", "terraform")):
        text = render_change(plan, as_)
        (said,) = [line for line in text.splitlines() if line.startswith("# StopNotebookInstance:")]
        assert f"{tool} declares no running or stopped state" in said
        assert yaml.safe_load(text) is None


def test_the_stop_and_its_rollback_work_against_the_emulator(report: dict, workspaces_home: Path) -> None:
    """The plan's request and the rollback's, made as they are: the notebook stops, then starts again."""
    plan = notebook_plan(report)
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    (call,) = plan["change"]["calls"]
    sagemaker.stop_notebook_instance(**call["params"])
    assert sagemaker.describe_notebook_instance(**call["params"])["NotebookInstanceStatus"] == "Stopped"
    start = json.loads(plan["change"]["rollback"].split("StartNotebookInstance ", 1)[1].split(" starts ", 1)[0])
    valid("StartNotebookInstance", start)
    sagemaker.start_notebook_instance(**start)
    assert sagemaker.describe_notebook_instance(**start)["NotebookInstanceStatus"] == "InService"



def test_the_idle_timeout_is_a_bounded_setting_the_plan_uses() -> None:
    from auditor.config_file import ConfigError, parse_config

    with pytest.raises(ConfigError, match=r"idle_timeout_minutes must be from 60 to 525600, got 30"):
        parse_config({"rules": {"studio-no-idle-shutdown": {"idle_timeout_minutes": 30}}})
    _, findings = studio_audit(parse_config({"rules": {"studio-no-idle-shutdown": {"idle_timeout_minutes": 240}}}))
    (finding,) = [f for f in findings if f.rule == "studio-no-idle-shutdown"]
    assert finding.recommendation is not None
    (call,) = finding.recommendation.details["change"]
    idle = call["params"]["DefaultUserSettings"]["JupyterLabAppSettings"]["AppLifecycleManagement"]["IdleSettings"]
    assert idle["IdleTimeoutInMinutes"] == 240
