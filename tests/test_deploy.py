"""deploy/: every unit parses, and the IAM policy allows exactly the AWS calls the code makes."""

from __future__ import annotations

import ast
import configparser
import functools
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import botocore.session
import pytest
import yaml
from botocore import xform_name

ROOT = Path(__file__).parent.parent
DEPLOY = ROOT / "deploy"
# boto3 service name -> IAM action prefix, for the services the auditor talks to.
SERVICES = {"sagemaker": "sagemaker", "cloudwatch": "cloudwatch",
            "application-autoscaling": "application-autoscaling", "ses": "ses", "sts": "sts",
            "organizations": "organizations", "ec2": "ec2", "pricing": "pricing", "ce": "ce"}


# The code's convention: a boto3 client is held in a variable named after its service, or `client`.
CLIENT_NAMES = {"sagemaker", "cloudwatch", "autoscaling", "ses", "client", "sts", "organizations", "ec2"}


class CloudFormationLoader(yaml.SafeLoader):
    """Reads !Ref, !GetAtt, !Sub ... as plain values."""


CloudFormationLoader.add_multi_constructor(
    "!", lambda loader, suffix, node: (
        loader.construct_sequence(node) if isinstance(node, yaml.SequenceNode)
        else loader.construct_mapping(node) if isinstance(node, yaml.MappingNode)
        else loader.construct_scalar(node)
    )
)


def policy_actions(document: dict, effect: str = "Allow") -> set[str]:
    """The actions of the policy's statements of that effect (its Allow ones by default)."""
    actions: set[str] = set()
    for statement in document["Statement"]:
        assert statement["Effect"] in ("Allow", "Deny")
        if statement["Effect"] != effect:
            continue
        listed = statement["Action"]
        actions.update([listed] if isinstance(listed, str) else listed)
    return actions


def denied_actions() -> set[str]:
    """What the shipped apply and Scheduler policies deny outright (tagging: the opt-in tag is only
    ever set by people)."""
    documents = [json.loads((DEPLOY / "iam-apply-policy.json").read_text())]
    for name in ("sagemaker-auditor.yaml", "member-role.yaml"):
        resources = yaml.load((DEPLOY / "cloudformation" / name).read_text(), Loader=CloudFormationLoader)["Resources"]
        documents += [p["PolicyDocument"] for role in ("ApplyRole", "OffHoursSchedulerRole")
                      for p in resources[role]["Properties"]["Policies"]]
    return set().union(*(policy_actions(d, "Deny") for d in documents))


@functools.cache  # the same walk of the package for each test that asks (botocore's models are slow to load)
def operations_called_by_the_code() -> frozenset[str]:
    """IAM actions for every botocore operation the auditor's code calls (the emulator aside)."""
    session = botocore.session.get_session()
    by_method: dict[str, list[str]] = {}
    for service, prefix in SERVICES.items():
        for operation in session.get_service_model(service).operation_names:
            by_method.setdefault(xform_name(operation), []).append(f"{prefix}:{operation}")
    found: set[str] = set()
    for path in (ROOT / "auditor").rglob("*.py"):  # the emulator (auditor_emulator/) is not what runs against AWS
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            receiver = node.func.value
            if not (isinstance(receiver, ast.Name) and receiver.id in CLIENT_NAMES):
                continue
            name = node.func.attr
            if name == "get_paginator" and node.args and isinstance(node.args[0], ast.Constant):
                name = node.args[0].value
            actions = by_method.get(name, [])
            assert len(actions) <= 1, f"{path.name}: {name} is ambiguous: {actions}"
            found.update(actions)
    return frozenset(found)


def test_policy_allows_exactly_what_the_code_calls() -> None:
    policy = json.loads((DEPLOY / "iam-policy.json").read_text())
    called = operations_called_by_the_code()
    assert "sagemaker:Search" in called and "cloudwatch:GetMetricData" in called
    assert "ses:SendRawEmail" in called
    assert "pricing:GetProducts" in called and "ce:GetCostAndUsage" in called
    assert policy_actions(policy) == called
    assert all(s["Resource"] == "*" and s["Effect"] == "Allow" for s in policy["Statement"])


def test_policy_is_what_the_resource_kinds_declare() -> None:
    """Each resource kind declares the read-only actions it needs (auditor/kinds/); the policy is
    their union with the core's, and the code calls exactly those."""
    from auditor.kinds.registry import KINDS, audit_actions

    assert {k.key for k in KINDS} >= {"endpoints", "jobs", "workspaces"}
    policy = policy_actions(json.loads((DEPLOY / "iam-policy.json").read_text()))
    assert policy == set(audit_actions())
    assert operations_called_by_the_code() == set(audit_actions())


def test_docs_list_the_same_permissions() -> None:
    page = (ROOT / "docs" / "deployment.md").read_text()
    for action in operations_called_by_the_code():
        assert f'"{action}"' in page or f"`{action}`" in page, action


def test_cloudformation_template_parses_and_its_task_role_is_the_policy() -> None:
    template = yaml.load((DEPLOY / "cloudformation" / "sagemaker-auditor.yaml").read_text(),
                         Loader=CloudFormationLoader)
    resources = template["Resources"]
    task_policy = resources["TaskRole"]["Properties"]["Policies"][0]["PolicyDocument"]
    assert policy_actions(task_policy) == policy_actions(json.loads((DEPLOY / "iam-policy.json").read_text()))
    # Mail only as the configured sender: its SES identity (the address or its domain) and From address.
    (mail,) = [s for s in task_policy["Statement"] if "ses:SendRawEmail" in s["Action"]]
    assert mail["Action"] == ["ses:SendRawEmail"]
    address, (domain, names) = mail["Resource"]
    assert address.endswith(":identity/${MailFrom}") and domain.endswith(":identity/${Domain}")
    assert names == {"Domain": [1, ["@", "MailFrom"]]}  # !Select [1, !Split ["@", !Ref MailFrom]]
    assert mail["Condition"] == {"StringEquals": {"ses:FromAddress": "MailFrom"}}
    assert "Default" not in template["Parameters"]["MailFrom"]  # required: every schedule mails
    schedules = [r for r in resources.values() if r["Type"] == "AWS::Scheduler::Schedule"]
    assert len(schedules) == 2
    for schedule in schedules:
        assert schedule["Properties"]["Target"]["EcsParameters"]["LaunchType"] == "FARGATE"
        overrides = json.loads(schedule["Properties"]["Target"]["Input"])
        assert "audit " in overrides["containerOverrides"][0]["command"][0]
    assert resources["TaskDefinition"]["Properties"]["RequiresCompatibilities"] == ["FARGATE"]


def test_cloudformation_template_passes_cfn_lint() -> None:
    cfn_lint = shutil.which("cfn-lint", path=str(Path(sys.executable).parent))
    assert cfn_lint, "cfn-lint is a dev dependency"
    result = subprocess.run([cfn_lint, str(DEPLOY / "cloudformation" / "sagemaker-auditor.yaml")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_kubernetes_cronjobs() -> None:
    documents = list(yaml.safe_load_all((DEPLOY / "kubernetes" / "cronjobs.yaml").read_text()))
    kinds = [d["kind"] for d in documents]
    assert kinds.count("CronJob") == 2 and "ServiceAccount" in kinds
    account = next(d for d in documents if d["kind"] == "ServiceAccount")
    assert account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"].startswith("arn:aws:iam::")
    config = next(d for d in documents if d["kind"] == "ConfigMap")
    from auditor.config_file import parse_config

    parse_config(__import__("tomllib").loads(config["data"]["auditor.toml"]))
    for job in (d for d in documents if d["kind"] == "CronJob"):
        pod = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        assert pod["serviceAccountName"] == account["metadata"]["name"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert job["spec"]["concurrencyPolicy"] == "Forbid"
        (container,) = pod["containers"]
        assert container["args"][0] in ("run", "weekly") and "--email" in container["args"]
        assert len(job["spec"]["schedule"].split()) == 5


@pytest.mark.parametrize("unit", sorted((DEPLOY / "systemd").glob("*.*")), ids=lambda p: p.name)
def test_systemd_units(unit: Path) -> None:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(unit)
    if unit.suffix == ".timer":
        assert parser["Timer"]["OnCalendar"] and parser["Install"]["WantedBy"] == "timers.target"
        assert (unit.with_suffix(".service")).exists()
    else:
        service = parser["Service"]
        assert service["Type"] == "oneshot" and service["User"] != "root"
        command = service["ExecStart"].split()
        assert command[0].endswith("/audit") and command[1] in ("run", "weekly")


def test_crontab_lines() -> None:
    lines = [line for line in (DEPLOY / "crontab").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(lines) == 2
    for line in lines:
        fields = line.split(None, 5)
        assert len(fields) == 6 and "audit " in fields[5] and "--email" in fields[5]


def test_dockerfile() -> None:
    lines = [line.strip() for line in (DEPLOY / "Dockerfile").read_text().splitlines()
             if line.strip() and not line.strip().startswith("#")]
    assert lines[0].startswith("FROM python:") and "slim" in lines[0]
    user = [line for line in lines if line.startswith("USER ")]
    assert user and user[-1] != "USER root"
    assert any(line.startswith("VOLUME") and "/data" in line for line in lines)
    assert any("XDG_DATA_HOME=/data" in line for line in lines)
    assert lines[-2] == 'ENTRYPOINT ["audit"]'


# The audit stops within this many seconds of SIGTERM (tests/test_faults.py proves it); every unit
# must then leave it time to write the partial report, the history and the mail.
STOP_SECONDS = 5
GRACE_SECONDS = 30


def test_every_unit_gives_the_audit_time_to_stop_cleanly() -> None:
    jobs = list(yaml.safe_load_all((DEPLOY / "kubernetes" / "cronjobs.yaml").read_text()))
    pods = [d["spec"]["jobTemplate"]["spec"]["template"]["spec"] for d in jobs if d and d.get("kind") == "CronJob"]
    assert pods and all(p["terminationGracePeriodSeconds"] >= GRACE_SECONDS for p in pods)
    for unit in sorted((DEPLOY / "systemd").glob("*.service")):
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        parser.read_string(unit.read_text())
        assert int(parser["Service"]["TimeoutStopSec"]) >= GRACE_SECONDS, unit.name
    template = yaml.load((DEPLOY / "cloudformation" / "sagemaker-auditor.yaml").read_text(),
                         Loader=CloudFormationLoader)
    containers = [c for r in template["Resources"].values() if r["Type"] == "AWS::ECS::TaskDefinition"
                  for c in r["Properties"]["ContainerDefinitions"]]
    assert containers and all(c["StopTimeout"] >= GRACE_SECONDS for c in containers)
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "STOPSIGNAL SIGTERM" in dockerfile and f"docker stop -t {GRACE_SECONDS}" in dockerfile
    assert GRACE_SECONDS > STOP_SECONDS * 3


# The hub reads prices (the Price List API and Cost Explorer) for the whole organisation.
HUB_ONLY = {"sts:AssumeRole", "sts:GetCallerIdentity", "organizations:ListAccounts", "ses:SendRawEmail",
            "pricing:GetProducts", "pricing:ListPriceLists", "pricing:GetPriceListFileUrl", "ce:GetCostAndUsage",
            "ce:GetSavingsPlansPurchaseRecommendation"}


def test_member_role_stackset_is_the_read_only_part_of_the_policy_and_trusts_the_hub() -> None:
    path = DEPLOY / "cloudformation" / "member-role.yaml"
    member = yaml.load(path.read_text(), Loader=CloudFormationLoader)
    role = member["Resources"]["MemberRole"]["Properties"]
    (document,) = [p["PolicyDocument"] for p in role["Policies"]]
    hub = policy_actions(json.loads((DEPLOY / "iam-policy.json").read_text()))
    assert policy_actions(document) == hub - HUB_ONLY
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert "${HubAccountId}" in trust["Principal"]["AWS"] and "${HubRoleName}" in trust["Principal"]["AWS"]
    hub_template = yaml.load((DEPLOY / "cloudformation" / "sagemaker-auditor.yaml").read_text(),
                             Loader=CloudFormationLoader)
    assert hub_template["Resources"]["TaskRole"]["Properties"]["RoleName"] == member["Parameters"]["HubRoleName"][
        "Default"]
    if shutil.which("cfn-lint") is None and not (Path(sys.executable).parent / "cfn-lint").exists():
        pytest.skip("cfn-lint is not installed")
    linter = shutil.which("cfn-lint") or str(Path(sys.executable).parent / "cfn-lint")
    result = subprocess.run([linter, str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# --- the opt-in apply and Scheduler roles (both templates) ----------------------------------------

TEMPLATES = {"hub": "sagemaker-auditor.yaml", "member": "member-role.yaml"}


def scheduler_role_actions() -> set[str]:
    """What the off-hours schedules call, derived from the change the rule builds: each universal
    target (arn:aws:scheduler:::aws-sdk:sagemaker:deleteEndpoint ...) as an IAM action, and
    sagemaker:AddTags when a request carries tags (SageMaker authorises tags on create with it)."""
    from auditor.kinds.endpoints.rules.off_hours import OffPeriod, off_hours_change
    from helpers import endpoint

    tagged = replace(endpoint("office-hours"), tags={"auditor:apply": "allowed", "team": "search"})
    change = off_hours_change(tagged, (OffPeriod(19, 13),), 60, "arn:aws:iam::{account_id}:role/SchedulerRole")
    actions: set[str] = set()
    for call in change["change"]:
        target = call["params"]["Target"]
        service, api = target["Arn"].split(":")[-2:]
        actions.add(f"{service}:{api[0].upper()}{api[1:]}")
        if "Tags" in json.loads(target["Input"]):
            actions.add(f"{service}:AddTags")
    return actions


def _template(name: str) -> dict:
    return yaml.load((DEPLOY / "cloudformation" / TEMPLATES[name]).read_text(), Loader=CloudFormationLoader)


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_the_apply_role_is_opt_in_and_holds_exactly_the_apply_actions(name: str) -> None:
    from auditor.act import APPLY_OPERATIONS, apply_policy_actions

    template = _template(name)
    assert template["Parameters"]["EnableApply"]["Default"] == "false"
    role = template["Resources"]["ApplyRole"]
    assert role["Condition"] == "ApplyEnabled"
    assert template["Conditions"]["ApplyEnabled"] == ["EnableApply", "true"]  # !Equals [!Ref EnableApply, "true"]
    (document,) = [p["PolicyDocument"] for p in role["Properties"]["Policies"]]
    assert policy_actions(document) == apply_policy_actions()  # derived from the code, never hard-coded
    assert policy_actions(document) == policy_actions(json.loads((DEPLOY / "iam-apply-policy.json").read_text()))
    to_scheduler, to_sagemaker = [s for s in document["Statement"] if "iam:PassRole" in s["Action"]]
    assert to_scheduler["Action"] == to_sagemaker["Action"] == ["iam:PassRole"]
    assert to_scheduler["Resource"] == "OffHoursSchedulerRole.Arn"  # !GetAtt: that role and no other
    assert to_scheduler["Condition"] == {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}}
    # An endpoint config's ExecutionRoleArn: the account's roles, only to SageMaker.
    assert to_sagemaker["Resource"] == "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/*"
    assert to_sagemaker["Condition"] == {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}}
    allow, deny = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert allow["Effect"] == "Allow" and allow["Action"] == "sts:AssumeRole"
    # A named principal only (never an account's root), required whenever the role is made.
    assert allow["Principal"] == {"AWS": "ApplyPrincipalArn"}  # !Ref
    (rule,) = template["Rules"].values()
    assert rule["RuleCondition"] == ["EnableApply", "true"]
    (assertion,) = rule["Assertions"]
    assert assertion["Assert"] == [["ApplyPrincipalArn", ""]]  # !Not [!Equals [!Ref ApplyPrincipalArn, ""]]
    assert ":root" not in json.dumps(role)
    assert deny["Effect"] == "Deny" and deny["Action"] == "sts:AssumeRole"
    # The audit's own role (the hub's task role) never becomes the apply role.
    denied = deny["Principal"]["AWS"]
    assert (denied == "TaskRole.Arn") if name == "hub" else ("${HubRoleName}" in denied)
    # The audit's role reads what apply reads, but makes none of apply's writes.
    read_only = template["Resources"]["TaskRole" if name == "hub" else "MemberRole"]["Properties"]["Policies"]
    writes = {f"{service}:{operation}" for service, operation in APPLY_OPERATIONS} | {"iam:PassRole"}
    assert not any(a in writes for p in read_only for a in policy_actions(p["PolicyDocument"]))


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_the_scheduler_role_may_only_stop_and_start_opted_in_endpoints(name: str) -> None:
    from auditor.config import OPT_IN_TAG

    template = _template(name)
    role = template["Resources"]["OffHoursSchedulerRole"]
    assert role["Condition"] == "ApplyEnabled"
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"} and trust["Action"] == "sts:AssumeRole"
    assert "aws:SourceAccount" in trust["Condition"]["StringEquals"]  # no other account's schedules
    (document,) = [p["PolicyDocument"] for p in role["Properties"]["Policies"]]
    assert policy_actions(document) == scheduler_role_actions() == {
        "sagemaker:DeleteEndpoint", "sagemaker:CreateEndpoint", "sagemaker:AddTags"}
    key, value = OPT_IN_TAG
    allows = {s["Sid"]: s for s in document["Statement"] if s["Effect"] == "Allow"}
    for statement in allows.values():
        resources = [statement["Resource"]] if isinstance(statement["Resource"], str) else statement["Resource"]
        assert resources and all(":${AWS::AccountId}:endpoint" in r for r in resources), resources
    # DeleteEndpoint reads the endpoint's tag; CreateEndpoint the request's; AddTags only on create.
    assert allows["StopOptedInEndpoints"]["Condition"] == {"StringEquals": {f"aws:ResourceTag/{key}": value}}
    assert allows["StartOptedInEndpoints"]["Condition"] == {"StringEquals": {f"aws:RequestTag/{key}": value}}
    assert allows["TagOnlyTheEndpointItCreates"]["Condition"] == {"StringEquals": {
        "sagemaker:TaggingAction": "CreateEndpoint", f"aws:RequestTag/{key}": value}}
    (deny,) = [s for s in document["Statement"] if s["Effect"] == "Deny"]
    assert deny["Condition"] == {"Null": {"sagemaker:TaggingAction": "true"}}  # never an existing resource
    # tests/test_iam_conditions.py evaluates these statements against the schedules' own requests.


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_the_outputs_are_what_the_config_keys_take(name: str) -> None:
    from auditor.config_file import parse_config

    template = _template(name)
    outputs = template["Outputs"]
    assert outputs["ApplyRoleArn"]["Value"] == "ApplyRole.Arn" and "[apply] role_arn" in outputs["ApplyRoleArn"][
        "Description"]
    output = outputs["SchedulerRoleArn"]
    assert "[rules.off-hours] scheduler_role_arn" in output["Description"]
    role_name = template["Parameters"]["SchedulerRoleName"]["Default"]
    arn = output["Value"].replace("${AWS::Partition}", "aws").replace("${OffHoursSchedulerRole}", role_name)
    config = parse_config({"rules": {"off-hours": {"scheduler_role_arn": arn}}}, source="outputs")
    assert dict(config.rules.configured)["off-hours"].scheduler_role_arn == arn
    # One role name in every account: the hub's stack and the member StackSet agree.
    assert role_name == _template("member" if name == "hub" else "hub")["Parameters"]["SchedulerRoleName"]["Default"]
