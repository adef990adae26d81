"""An organisation in one run: several accounts in the moto server, entered by AssumeRole (moto
keeps resources per account; assumed-role credentials act in the role's account), one of which
refuses the hub."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.history.store import History
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now

runner = CliRunner()
HUB = "123456789012"
TEAM_A, TEAM_B, LOCKED = "111111111111", "222222222222", "333333333333"
ROLE = "SageMakerAuditorReadOnly"
ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


def act_in(emulator, account: str) -> dict[str, str]:
    """Credentials acting in `account` (no IAM checks yet), to create its role and seed it."""
    sts = boto3.session.Session().client("sts", region_name="us-east-1")
    credentials = sts.assume_role(RoleArn=f"arn:aws:iam::{account}:role/bootstrap",
                                  RoleSessionName="bootstrap")["Credentials"]
    return {"AWS_ACCESS_KEY_ID": credentials["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": credentials["SecretAccessKey"],
            "AWS_SESSION_TOKEN": credentials["SessionToken"]}


@pytest.fixture
def estate(aws, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Two team accounts with endpoints and the member role, a third that refuses the hub, and a
    hub user allowed everything but assuming the locked account's role."""
    now = utc_now()
    for account, name in ((TEAM_A, "team-a-idle"), (TEAM_B, "team-b-oversized")):
        with monkeypatch.context() as mp:
            for key, value in act_in(aws, account).items():
                mp.setenv(key, value)
            # A fresh session: boto3's default one keeps the credentials it first saw.
            iam = boto3.session.Session().client("iam", region_name="us-east-1")
            trust = {"Version": "2012-10-17", "Statement": [{
                "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{HUB}:root"}, "Action": "sts:AssumeRole"}]}
            iam.create_role(RoleName=ROLE, AssumeRolePolicyDocument=json.dumps(trust))
            iam.put_role_policy(RoleName=ROLE, PolicyName="read", PolicyDocument=json.dumps(ALLOW_ALL))
            used = name.endswith("oversized")  # called all day, on twice the instances it needs
            seed_fleet(aws, [EndpointSpec(name, (VariantSpec(
                "ml.m5.4xlarge" if used else "ml.m5.xlarge", 2 if used else 1,
                cpu=Load(8, 2) if used else Load(1, 0.2, 0.1), memory=Load(10, 1),
                invocations_per_hour=4000 if used else 0),))], now=now, account_id=account)
    iam = boto3.session.Session().client("iam", region_name="us-east-1")
    iam.create_user(UserName="hub")
    iam.put_user_policy(UserName="hub", PolicyName="hub", PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [
            *ALLOW_ALL["Statement"],
            {"Effect": "Deny", "Action": "sts:AssumeRole", "Resource": f"arn:aws:iam::{LOCKED}:role/{ROLE}"}]}))
    key = iam.create_access_key(UserName="hub")["AccessKey"]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["AccessKeyId"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"])
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    config = tmp_path / "auditor.toml"
    config.write_text(f'[aws]\naccounts = ["{TEAM_A}", "{TEAM_B}", "{LOCKED}"]\nrole_name = "{ROLE}"\n'
                      f'[jobs]\nenabled = false\n[history]\npath = "{tmp_path / "history.sqlite3"}"\n')
    return config


def test_three_accounts_one_refusing_the_hub(estate: Path, aws, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    with aws.iam_enforced():
        result = runner.invoke(app, ["run", "--config", str(estate), "--format", "json", "--output", str(out)])
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: audited 2 of 3 accounts; account 333333333333")
    assert "sts:AssumeRole" in errors[0]
    report = json.loads(out.read_text())
    assert {(a["id"], a["audited"]) for a in report["accounts"]} == {(TEAM_A, True), (TEAM_B, True), (LOCKED, False)}
    assert report["summary"]["accounts_audited"] == 2 and report["summary"]["accounts"] == 3
    by_name = {e["name"]: e for e in report["endpoints"]}
    assert by_name["team-a-idle"]["account_id"] == TEAM_A and by_name["team-b-oversized"]["account_id"] == TEAM_B
    rules = {(f["resource"]["account_id"], f["resource"]["name"], f["rule"]) for f in report["findings"]}
    assert (TEAM_A, "team-a-idle", "idle") in rules
    assert not any(f[1] == "team-b-oversized" and f[2] == "idle" for f in rules)
    assert {p["resource"]["account_id"] for p in report["plans"]} == {TEAM_A, TEAM_B}
    assert any(e["account_id"] == LOCKED for e in report["errors"])
    with History(tmp_path / "history.sqlite3") as history:
        (run,) = history.runs()
    assert set(run.accounts) == {TEAM_A, TEAM_B} and run.status == "failed"


def test_the_organisation_lists_its_active_accounts(aws, tmp_path: Path) -> None:
    organizations = boto3.session.Session().client("organizations", region_name="us-east-1")
    organizations.create_organization(FeatureSet="ALL")
    created = organizations.create_account(Email="ml@example.com", AccountName="ml-team")
    account = created["CreateAccountStatus"]["AccountId"]
    config = tmp_path / "auditor.toml"
    config.write_text(f'[aws]\norganization = true\nrole_name = "{ROLE}"\nexclude_accounts = ["{HUB}"]\n'
                      '[jobs]\nenabled = false\n')
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out),
                                 "--no-history"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert [(a["id"], a["name"], a["audited"]) for a in report["accounts"]] == [(account, "ml-team", True)]


def test_all_regions_audits_the_enabled_ones_and_lists_the_others(aws, tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text('[aws]\nregions = "all"\n[jobs]\nenabled = false\n')
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out),
                                 "--no-history"])
    assert result.exit_code == 0, result.output
    (account,) = json.loads(out.read_text())["accounts"]
    assert "us-east-1" in account["regions"] and "eu-west-1" in account["regions"]
    assert "ap-east-1" in account["skipped_regions"]  # not opted in: listed, not an error
    assert not set(account["regions"]) & set(account["skipped_regions"])


def test_accounts_without_a_role_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text(f'[aws]\naccounts = ["{TEAM_A}"]\n')
    result = runner.invoke(app, ["run", "--config", str(config)])
    assert result.exit_code == 1 and "aws.role_name or aws.role_arn_template" in result.stderr


def test_the_html_report_groups_plans_by_account(estate: Path, aws, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    with aws.iam_enforced():
        runner.invoke(app, ["run", "--config", str(estate), "--format", "html", "--output", str(out)])
    html = out.read_text()
    assert f"Account {TEAM_A}" in html and f"Account {TEAM_B}" in html
