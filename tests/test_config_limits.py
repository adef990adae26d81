"""Values a user gets wrong, or sets in an unusual way: what they get is one line that names the key,
the flag or the environment variable the value came from."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import AuditConfig
from auditor.config_file import parse_config
from auditor.errors import ConfigError
from test_cli_errors import assert_one_line_error

runner = CliRunner()


@pytest.mark.parametrize("days", [1, 3, 6])
def test_a_short_lookback_caps_the_default_min_days(days: int) -> None:
    config = AuditConfig().with_overrides(lookback_days=days)
    assert config.aws.lookback_days == days and config.recommend.min_days == days
    from_file = parse_config({"aws": {"lookback_days": days}})
    assert from_file.recommend.min_days == days
    assert AuditConfig().with_overrides(lookback_days=30).recommend.min_days == 7


def test_a_configured_min_days_longer_than_the_lookback_is_an_error_naming_both() -> None:
    config = parse_config({"recommend": {"min_days": 10}}, source="auditor.toml")
    with pytest.raises(ConfigError) as flag:
        config.with_overrides(lookback_days=5)
    assert str(flag.value) == ("auditor.toml: recommend.min_days (10) must be at most the lookback "
                               "(--lookback-days 5)")
    with pytest.raises(ConfigError) as key:
        parse_config({"aws": {"lookback_days": 5}, "recommend": {"min_days": 10}}, source="auditor.toml")
    assert "recommend.min_days (10)" in str(key.value) and "aws.lookback_days = 5" in str(key.value)
    # Explicit and within the lookback: kept as set.
    assert parse_config({"recommend": {"min_days": 3}}).with_overrides(lookback_days=5).recommend.min_days == 3


def test_run_with_a_short_lookback_works(aws) -> None:
    result = runner.invoke(app, ["run", "--lookback-days", "3", "--format", "json", "--no-history"])
    assert result.exit_code == 0, result.output


def test_run_with_a_configured_min_days_names_the_flag(aws, tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text("[recommend]\nmin_days = 10\n")
    assert_one_line_error(runner.invoke(app, ["run", "--config", str(config), "--lookback-days", "5"]), 1,
                          "recommend.min_days (10)", "--lookback-days 5")


def test_a_bad_lookback_flag_names_the_flag(aws) -> None:
    assert_one_line_error(runner.invoke(app, ["run", "--lookback-days", "0"]), 1, "--lookback-days", "got 0")


def test_unknown_profile_from_the_environment_is_named(aws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_PROFILE", "nope")
    result = runner.invoke(app, ["run", "--no-history"])
    assert_one_line_error(result, 1, "'nope'", "AWS_PROFILE")
    assert "None" not in result.stderr


@pytest.mark.parametrize("port", [0, -1, 65536, 100000])
def test_smtp_port_out_of_range(port: int) -> None:
    with pytest.raises(ConfigError, match=rf"auditor.toml: email.smtp_port must be from 1 to 65535, got {port}"):
        parse_config({"email": {"smtp_port": port}}, source="auditor.toml")


def test_smtp_login_in_clear_is_refused_unless_allowed(tmp_path: Path, aws) -> None:
    plain = {"smtp_username": "auditor", "smtp_password_env": "SMTP_PASSWORD"}
    with pytest.raises(ConfigError) as refused:
        parse_config({"email": plain}, source="auditor.toml")
    message = str(refused.value)
    assert "\n" not in message
    for key in ("email.smtp_username", "email.smtp_starttls", "email.smtp_ssl", "email.smtp_allow_plain_login"):
        assert key in message
    assert parse_config({"email": {**plain, "smtp_starttls": True}}).email.smtp_starttls
    assert parse_config({"email": {**plain, "smtp_ssl": True, "smtp_port": 465}}).email.smtp_ssl
    assert parse_config({"email": {**plain, "smtp_allow_plain_login": True}}).email.smtp_allow_plain_login
    assert parse_config({"email": {**plain, "transport": "ses"}}).email.transport == "ses"  # no SMTP login
    # Through the command: before any AWS call, exit 1, one line.
    config = tmp_path / "auditor.toml"
    config.write_text('[email]\nsender = "a@example.com"\nrecipients = ["b@example.com"]\n'
                      'smtp_username = "auditor"\nsmtp_password_env = "SMTP_PASSWORD"\n')
    assert_one_line_error(runner.invoke(app, ["run", "--config", str(config), "--email"]), 1,
                          "email.smtp_allow_plain_login")
