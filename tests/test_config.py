"""Config validation: every error names the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.config import AuditConfig
from auditor.config_file import load_config, parse_config
from auditor.errors import ConfigError


def test_defaults() -> None:
    config = AuditConfig()
    assert config.aws.lookback_days == 14 and config.aws.period_seconds == 3600
    assert config.thresholds.cpu == 50.0 and config.thresholds.sizing_statistic == "p95"
    assert config.recommend.target_utilization == 70.0 and config.recommend.min_days == 7
    assert config.recommend.min_instances is None


def test_full_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "auditor.toml"
    path.write_text(
        '[aws]\nregions = ["us-east-1", "eu-west-1"]\nprofile = "audit"\nlookback_days = 28\nperiod_seconds = 300\n'
        '[thresholds]\ncpu = 40\nmemory = 45.5\nsizing_statistic = "p99"\n'
        '[recommend]\ntarget_utilization = 60\nmin_instances = 1\nmin_days = 10\n'
        '[pricing]\nassume_prices_from = "us-east-1"\n'
    )
    config = load_config(path)
    assert config.aws.regions == ("us-east-1", "eu-west-1")
    assert config.aws.profile == "audit"
    assert config.thresholds.memory == 45.5 and config.thresholds.cpu == 40.0
    assert config.recommend.min_instances == 1
    assert config.pricing.assume_prices_from == "us-east-1"


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        ({"aws": {"regoins": ["us-east-1"]}}, "aws.regoins"),
        ({"awz": {}}, "[awz]"),
        ({"aws": {"lookback_days": "14"}}, "aws.lookback_days"),
        ({"aws": {"lookback_days": 500}}, "aws.lookback_days"),
        ({"aws": {"period_seconds": 90}}, "aws.period_seconds"),
        ({"thresholds": {"cpu": 150}}, "thresholds.cpu"),
        ({"thresholds": {"sizing_statistic": "p42x"}}, "thresholds.sizing_statistic"),
        ({"recommend": {"min_instances": 0}}, "recommend.min_instances"),
        ({"recommend": {"min_days": 30}}, "recommend.min_days"),
        ({"recommend": {"allow_burstable": "yes"}}, "recommend.allow_burstable"),
        ({"email": {"transport": "pigeon"}}, "email.transport"),
    ],
)
def test_errors_name_the_key(raw: dict, names: str) -> None:
    with pytest.raises(ConfigError, match=names.replace("[", r"\[").replace("]", r"\]")):
        parse_config(raw, source="auditor.toml")


def test_invalid_toml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[aws\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.toml")


def test_command_line_overrides_are_validated() -> None:
    config = AuditConfig().with_overrides(regions=["eu-west-1"], lookback_days=30)
    assert config.aws.regions == ("eu-west-1",) and config.aws.lookback_days == 30
    with pytest.raises(ConfigError, match="lookback_days"):
        AuditConfig().with_overrides(lookback_days=0)


def test_docs_config_reference_is_valid() -> None:
    page = (Path(__file__).parent.parent / "docs" / "configuration.md").read_text()
    block = page.split("```toml\n[aws]", 1)[1].split("```", 1)[0]
    config = parse_config(__import__("tomllib").loads("[aws]" + block), source="docs/configuration.md")
    assert config.aws.regions == ("us-east-1",)
    assert config.recommend.min_instances is None
