"""Values that used to pass the config and then crash, mislead or leak later (project issue 17):
each is now refused when read, with one line that names the key."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import schedule
from typer.testing import CliRunner

from auditor.analyse.rules.base import settings_of
from auditor.cli import app
from auditor.config import AuditConfig
from auditor.config_file import parse_config
from auditor.errors import ConfigError
from auditor.kinds.endpoints.control import config_for_endpoint
from auditor.kinds.registry import BY_ID, REGISTRY
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now
from helpers import endpoint
from test_cli_errors import assert_one_line_error

runner = CliRunner()


def refused(raw: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as error:
        parse_config(raw, source="auditor.toml")
    message = str(error.value)
    assert "\n" not in message and "\r" not in message
    return message


# --- the schedule is read as `audit schedule` reads it -------------------------------------------


def test_a_time_with_a_newline_is_refused_though_the_scheduler_would_take_it() -> None:
    schedule.Scheduler().every().day.at("02:00\n")  # `$` matches before a final newline
    assert "schedule.nightly_at must be a time as HH:MM" in refused({"schedule": {"nightly_at": "02:00\n"}})


@pytest.mark.parametrize("time", ["2:00", "24:00", "02:60", "02:0", "0200", "02:00 ", "two"])
def test_a_time_the_scheduler_cannot_read_is_refused(time: str) -> None:
    assert refused({"schedule": {"nightly_at": time}}).startswith(
        "auditor.toml: schedule.nightly_at must be a time as HH:MM")
    assert "schedule.weekly_at" in refused({"schedule": {"weekly_at": time}})
    with pytest.raises(schedule.ScheduleValueError):  # what `audit schedule` would have died of
        schedule.Scheduler().every().day.at(time)


@pytest.mark.parametrize("zone", ["posixrules", "Mars/Olympus_Mons", "", "../etc/passwd"])
def test_a_zone_the_scheduler_cannot_read_is_refused(zone: str) -> None:
    message = refused({"schedule": {"timezone": zone}})
    assert message.startswith("auditor.toml: schedule.timezone must be a time zone name")


def test_a_readable_schedule_builds_the_scheduler(tmp_path: Path) -> None:
    from auditor.tasks.scheduler import Scheduler

    config = parse_config({"schedule": {"nightly_at": "23:59", "weekly_day": "Friday", "weekly_at": "00:00",
                                        "timezone": "Europe/Berlin"}})
    assert config.schedule.weekly_day == "friday"
    jobs = Scheduler(config, nightly=dict, weekly=dict, log=lambda _: None).jobs
    assert len(jobs.get_jobs()) == 2


# --- rule settings --------------------------------------------------------------------------------


def test_a_negative_idle_ceiling_is_refused_through_the_cli(tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text("[rules.idle]\nidle_ceiling_percent = -5\n", encoding="utf-8")
    result = runner.invoke(app, ["run", "--config", str(config)])
    assert_one_line_error(result, 1)
    assert result.stderr.strip() == f"error: {config}: rules.idle.idle_ceiling_percent must be from 0 to 100, got -5"


@pytest.mark.parametrize("rule_id", ["overprovisioned-count", "no-autoscaling", "serverless-oversized",
                                     "component-underutilized"])
def test_a_target_over_100_percent_is_refused(rule_id: str) -> None:
    assert refused({"rules": {rule_id: {"target_utilization": 500}}}) == (
        f"auditor.toml: rules.{rule_id}.target_utilization must be from 0 to 100, got 500")


def test_nan_and_inf_are_refused_for_every_kind_of_number() -> None:
    assert "must be a finite number, got inf" in refused({"rules": {"idle": {"max_invocations": float("inf")}}})
    assert "must be a finite number, got nan" in refused({"thresholds": {"cpu": float("nan")}})


# --- tag overrides pass the same check ------------------------------------------------------------


@pytest.mark.parametrize(("tag", "value"), [
    ("auditor:idle:threshold", "inf"),
    ("auditor:idle:threshold", "nan"),
    ("auditor:idle:threshold", "-1"),
    ("auditor:idle:threshold", "Infinity"),
    ("auditor:no-autoscaling:threshold", "500"),
    ("auditor:component-packing:threshold", "0"),
    ("auditor:serverless-candidate:threshold", "100"),
    ("auditor:underutilized:threshold", "0"),
    ("auditor:underutilized:threshold", "1e400"),
])
def test_an_out_of_range_threshold_tag_is_reported_and_ignored(tag: str, value: str) -> None:
    tagged = replace(endpoint("svc"), tags={tag: value})
    config, errors = config_for_endpoint(tagged, AuditConfig(), REGISTRY)
    assert config == AuditConfig()  # nothing obeyed
    assert len(errors) == 1 and errors[0].message.startswith(f"tag {tag}={value!r} is ")
    assert errors[0].message.endswith(": the configured threshold applies")


def test_a_threshold_tag_names_the_bounds_it_broke() -> None:
    tagged = replace(endpoint("svc"), tags={"auditor:no-autoscaling:threshold": "500"})
    _, errors = config_for_endpoint(tagged, AuditConfig(), REGISTRY)
    assert errors[0].message == ("tag auditor:no-autoscaling:threshold='500' is out of range: "
                                 "rules.no-autoscaling.target_utilization must be from 0 to 100: "
                                 "the configured threshold applies")


def test_an_in_range_threshold_tag_is_obeyed() -> None:
    tagged = replace(endpoint("svc"), tags={"auditor:idle:threshold": "250", "auditor:underutilized:threshold": "100"})
    config, errors = config_for_endpoint(tagged, AuditConfig(), REGISTRY)
    assert errors == [] and settings_of(BY_ID["idle"], config).max_invocations == 250
    assert config.thresholds.cpu == config.thresholds.gpu_memory == 100


# --- mail: addresses and header values ------------------------------------------------------------


@pytest.mark.parametrize(("key", "value"), [
    ("sender", "auditor@example.com\r\nBcc: all@example.com"),
    ("sender", "auditor@example.com\n"),
    ("subject_prefix", "Audit\r\nX-Injected: 1"),
    ("subject_prefix", "Audit\x00"),
    ("smtp_username", "me\nyou"),
])
def test_a_header_value_with_cr_lf_is_refused(key: str, value: str) -> None:
    message = refused({"email": {key: value}})
    assert message.startswith(f"auditor.toml: email.{key} must be ")


@pytest.mark.parametrize("address", ["not an email", "not", "@example.com", "a@", "a@b@c", "a@example.com, b@x.org"])
def test_a_recipient_that_is_not_an_address_is_refused(address: str) -> None:
    assert refused({"email": {"recipients": ["ok@example.com", address]}}).startswith(
        "auditor.toml: email.recipients must be an email address")


def test_addresses_that_are_fine() -> None:
    email = parse_config({"email": {"sender": "SageMaker auditor <auditor@example.com>",
                                    "recipients": ["ml-platform@example.com", "first.last+ml@sub.example.org"]}}).email
    assert email.recipients == ("ml-platform@example.com", "first.last+ml@sub.example.org")


# --- AWS identifiers ------------------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "starts"), [
    ({"aws": {"accounts": ["١٢٣٤٥٦٧٨٩٠١٢"], "role_name": "R"}}, "auditor.toml: aws.accounts must hold 12-digit"),
    ({"aws": {"exclude_accounts": ["12345678901"]}}, "auditor.toml: aws.exclude_accounts must hold 12-digit"),
    ({"aws": {"accounts": ["123456789012"], "role_arn_template": "arn:aws:iam::{account_id}:user/x"}},
     "auditor.toml: aws.role_arn_template must be a role ARN"),
    ({"aws": {"role_arn_template": "arn:aws:iam::123456789012:role/x"}},
     "auditor.toml: aws.role_arn_template must be a role ARN with {account_id}"),
    ({"aws": {"role_arn_template": "{account_id}"}}, "auditor.toml: aws.role_arn_template must be a role ARN"),
    ({"email": {"ses_region": "nowhere-1"}}, "auditor.toml: email.ses_region must be an AWS region code"),
    ({"aws": {"regions": ["us-east-1", "US-WEST-2"]}}, "auditor.toml: aws.regions must be AWS region codes"),
    ({"pricing": {"assume_prices_from": "virginia"}}, "auditor.toml: pricing.assume_prices_from must be an AWS region"),
])
def test_malformed_aws_identifiers_are_refused(raw: dict[str, Any], starts: str) -> None:
    assert refused(raw).startswith(starts)


def test_well_formed_aws_identifiers_pass() -> None:
    aws = parse_config({"aws": {"regions": ["us-gov-west-1", "ap-southeast-5", "eu-central-1"],
                                "accounts": ["123456789012"],
                                "role_arn_template": "arn:aws-cn:iam::{account_id}:role/path/Auditor"}}).aws
    assert aws.regions == ("us-gov-west-1", "ap-southeast-5", "eu-central-1")


# --- regions and accounts are de-duplicated -------------------------------------------------------


def test_repeated_regions_and_accounts_are_kept_once_in_order() -> None:
    aws = parse_config({"aws": {"regions": ["eu-west-1", "us-east-1", "eu-west-1"],
                                "accounts": ["222222222222", "111111111111", "222222222222"],
                                "exclude_accounts": ["111111111111", "111111111111"], "role_name": "Auditor"}}).aws
    assert aws.regions == ("eu-west-1", "us-east-1")
    assert aws.accounts == ("222222222222", "111111111111") and aws.exclude_accounts == ("111111111111",)
    assert AuditConfig().with_overrides(regions=["us-east-1", "eu-west-1", "us-east-1"]).aws.regions == (
        "us-east-1", "eu-west-1")


def test_a_malformed_region_flag_names_the_flag() -> None:
    with pytest.raises(ConfigError, match=r"^--region \(aws.regions\) must be AWS region codes.*got 'not a region'$"):
        AuditConfig().with_overrides(regions=["us-east-1", "not a region"])


def test_a_region_given_twice_is_audited_once(aws, tmp_path: Path) -> None:
    seed_fleet(aws, [
        EndpointSpec("busy", (VariantSpec("ml.m5.xlarge", 2, cpu=Load(70, 5), invocations_per_hour=500),)),
        EndpointSpec("quiet", (VariantSpec("ml.m5.large", 1, cpu=Load(2, 0.5), invocations_per_hour=0),)),
    ], now=utc_now())
    reports = []
    for regions in (["--region", "us-east-1"], ["--region", "us-east-1", "--region", "us-east-1"]):
        out = tmp_path / f"report-{len(regions)}.json"
        result = runner.invoke(app, ["run", *regions, "--format", "json", "--no-history", "--output", str(out)])
        assert result.exit_code == 0, result.output
        reports.append(json.loads(out.read_text(encoding="utf-8")))
    once, twice = reports
    assert len(twice["endpoints"]) == len(once["endpoints"]) == 2
    def monthly(report: dict[str, Any]) -> float:
        return sum(v["monthly_cost_usd"] or 0 for e in report["endpoints"] for v in e["variants"])

    assert monthly(twice) == monthly(once) > 0
    assert len(twice["findings"]) == len(once["findings"]) > 0


# --- names of environment variables, and secrets put there by mistake -----------------------------

SECRET = "hunter2-Sup3rSecret"
WEBHOOK = "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX"


@pytest.mark.parametrize(("section", "key", "value"), [
    ("email", "smtp_password_env", SECRET),
    ("chat", "slack_webhook_env", WEBHOOK),
    ("chat", "teams_webhook_env", "password=" + SECRET),
])
def test_a_value_in_an_env_name_key_is_refused_without_echoing_it(section: str, key: str, value: str,
                                                                  tmp_path: Path) -> None:
    message = refused({section: {key: value}})
    assert message == (f"auditor.toml: {section}.{key} must be the NAME of an environment variable "
                       "(letters, digits, _), not its value")
    config = tmp_path / "auditor.toml"
    config.write_text(f'[{section}]\n{key} = "{value}"\n', encoding="utf-8")
    result = runner.invoke(app, ["run", "--config", str(config)])
    assert_one_line_error(result, 1, f"{section}.{key}")
    for part in (value, SECRET, "hooks.slack.com", "XXXXXXXX"):
        assert part not in result.output


def test_a_webhook_url_in_a_route_is_refused_without_echoing_it() -> None:
    message = refused({"chat": {"route_by_tag": "owner", "slack_routes": [f"team-a={WEBHOOK}"]}})
    assert message.startswith("auditor.toml: chat.slack_routes entries must be")
    assert "hooks.slack.com" not in message and "team-a" not in message


def test_a_wrong_type_in_an_env_name_key_is_not_echoed_either() -> None:
    message = refused({"email": {"smtp_password_env": ["hunter2"]}})
    assert "hunter2" not in message and message.startswith("auditor.toml: email.smtp_password_env must be a string")


# --- the file itself ------------------------------------------------------------------------------


def test_a_config_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_bytes('[email]\nsubject_prefix = "Prüfung"\n'.encode("latin-1"))
    result = runner.invoke(app, ["run", "--config", str(config)])
    assert_one_line_error(result, 1, str(config), "not UTF-8")
