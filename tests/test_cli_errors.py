"""Bad input and refused access: a one-line error, a non-zero exit, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor_emulator.fleet import EndpointSpec, VariantSpec, seed_fleet
from conftest import utc_now

runner = CliRunner()


def assert_one_line_error(result, exit_code: int, *needles: str) -> None:
    assert result.exit_code == exit_code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in errors[0], errors[0]


def test_no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing may be called
    assert_one_line_error(runner.invoke(app, ["run"]), 1, "no AWS credentials")


def test_unknown_profile(aws, tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text('[aws]\nprofile = "nosuchprofile"\n')
    assert_one_line_error(runner.invoke(app, ["run", "--config", str(config)]), 1, "nosuchprofile", "aws.profile")


def test_unknown_region(aws) -> None:
    assert_one_line_error(runner.invoke(app, ["run", "--region", "us-east-9"]), 1, "us-east-9", "aws.regions")


def test_bad_config_key(aws, tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text("[thresholds]\ncpu_percent = 30\n")
    assert_one_line_error(runner.invoke(app, ["run", "--config", str(config)]), 1, "thresholds.cpu_percent")


def test_config_found_in_working_directory(aws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "auditor.toml").write_text("[aws]\nlookback_days = 0\n")
    assert_one_line_error(runner.invoke(app, ["run"]), 1, "aws.lookback_days")


def test_bad_lookback_option(aws) -> None:
    assert_one_line_error(runner.invoke(app, ["run", "--lookback-days", "900"]), 1, "lookback_days")


def _user_with_policy(actions: list[str]) -> dict[str, str]:
    iam = boto3.client("iam", region_name="us-east-1")
    iam.create_user(UserName="auditor")
    iam.put_user_policy(
        UserName="auditor", PolicyName="audit",
        PolicyDocument=json.dumps({"Version": "2012-10-17",
                                   "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}),
    )
    key = iam.create_access_key(UserName="auditor")["AccessKey"]
    return {"AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}


def test_access_denied_names_the_permission(aws, monkeypatch: pytest.MonkeyPatch) -> None:
    credentials = _user_with_policy(["cloudwatch:GetMetricData"])
    for key, value in credentials.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    with aws.iam_enforced():
        result = runner.invoke(app, ["run"])
    assert_one_line_error(result, 1, "access denied", "sagemaker:Search", "us-east-1")


def test_denied_metrics_keep_what_was_discovered(aws, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seed_fleet(aws, [EndpointSpec("kept", (VariantSpec("ml.m5.xlarge", 1),))], now=utc_now())
    credentials = _user_with_policy(["sagemaker:Search", "sagemaker:DescribeEndpointConfig"])
    for key, value in credentials.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    out = tmp_path / "report.json"
    with aws.iam_enforced():
        result = runner.invoke(app, ["run", "--format", "json", "--output", str(out)])
    assert_one_line_error(result, 1, "access denied", "cloudwatch:GetMetricData")
    report = json.loads(out.read_text())
    assert [e["name"] for e in report["endpoints"]] == ["kept"]
    assert "metrics not collected" in report["endpoints"][0]["not_judged_reason"]
    assert report["findings"] == []  # no verdict on no data
    assert any("GetMetricData" in e["message"] for e in report["errors"])
    # No plan copies a config here, so its tags are not asked for (and no ListTags error is made up).
    assert not [e for e in report["errors"] if "ListTags" in e["message"]]


def test_unwritable_output(aws, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert_one_line_error(runner.invoke(app, ["run", "--output", str(blocker / "report.txt")]), 1, "cannot write")


def test_empty_account_is_a_clean_run(aws) -> None:
    result = runner.invoke(app, ["run", "--fail-on-findings"])
    assert result.exit_code == 0, result.output
    assert "0 endpoints" in result.output and "No findings." in result.output


def test_denied_notebooks_are_named_and_the_rest_is_kept(aws, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seed_fleet(aws, [EndpointSpec("kept", (VariantSpec("ml.m5.xlarge", 1),))], now=utc_now())
    policy = json.loads((Path(__file__).parent.parent / "deploy" / "iam-policy.json").read_text())
    actions = [a for s in policy["Statement"] for a in s["Action"] if a != "sagemaker:ListNotebookInstances"]
    for key, value in _user_with_policy(actions).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    out = tmp_path / "report.json"
    with aws.iam_enforced():
        result = runner.invoke(app, ["run", "--format", "json", "--output", str(out)])
    # One line (the emulator's IAM also refuses its own CloudWatch calls, which come first); the
    # notebook denial is in the report's errors by name, and the endpoints are kept.
    assert_one_line_error(result, 1, "access denied")
    report = json.loads(out.read_text())
    assert [e["name"] for e in report["endpoints"]] == ["kept"]
    assert any("access denied: sagemaker:ListNotebookInstances in us-east-1" in e["message"]
               and "workspaces.notebooks = false" in e["message"] for e in report["errors"])
