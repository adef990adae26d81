"""pricing.basis = "effective": Cost Explorer's amortized cost per usage type (moto's `ce` over
HTTP, its results injected through moto's /moto-api/static/ce/cost-and-usage-results) prices the
types the account used at its own rate; the report says so, with a reconciliation line per region."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from auditor.catalog import HOURS_PER_MONTH, load_catalog
from auditor.cli import app
from auditor.prices.effective import UsageCost, region_of, usage_rates
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now

runner = CliRunner()
TYPE = "ml.m5.4xlarge"
DISCOUNT = 0.7  # the account pays 70% of list (a Savings Plan, an EDP...)
FLEET = [EndpointSpec("oversized", (VariantSpec(TYPE, 2, cpu=Load(5, 1), memory=Load(8, 1)),))]


def inject_cost_and_usage(aws: Any, result: dict[str, Any]) -> None:
    request = urllib.request.Request(f"{aws.url}/moto-api/static/ce/cost-and-usage-results",
                                     data=json.dumps({"results": [result]}).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    assert urllib.request.urlopen(request).status == 201


def group(usage_type: str, cost: float, hours: float) -> dict[str, Any]:
    return {"Keys": [usage_type], "Metrics": {"AmortizedCost": {"Amount": f"{cost:.4f}", "Unit": "USD"},
                                              "UsageQuantity": {"Amount": f"{hours:.1f}", "Unit": "Hrs"}}}


@pytest.fixture
def fleet(aws, tmp_path: Path) -> Path:
    seed_fleet(aws, FLEET, now=utc_now())
    list_price = load_catalog().hourly_price(TYPE, "us-east-1")
    assert list_price is not None
    # Two months in the 30 days: 2 instances x 720 h at 70% of list, split across them; 40 h of a
    # type the audit does not see, which is billed but not estimated.
    inject_cost_and_usage(aws, {"ResultsByTime": [
        {"TimePeriod": {"Start": "2026-10-31", "End": "2026-11-01"}, "Total": {}, "Estimated": False,
         "Groups": [group(f"USE1-Host:{TYPE}", 48 * list_price * DISCOUNT, 48)]},
        {"TimePeriod": {"Start": "2026-11-01", "End": "2026-11-30"}, "Total": {}, "Estimated": True,
         "Groups": [group(f"USE1-Host:{TYPE}", 1392 * list_price * DISCOUNT, 1392),
                    group("USE1-Host:ml.c5.xlarge", 40 * 0.2, 40),
                    group("USE1-ML:VolumeUsage.gp2", 3.5, 120)]},
    ], "DimensionValueAttributes": []})
    config = tmp_path / "auditor.toml"
    config.write_text('[jobs]\nenabled = false\n[pricing]\n')
    return config


def audit(config: Path, out: Path) -> dict[str, Any]:
    result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out),
                                 "--no-history"])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def test_effective_basis_changes_the_figures_and_says_so(fleet: Path, tmp_path: Path) -> None:
    listed = audit(fleet, tmp_path / "list.json")
    effective_config = tmp_path / "effective.toml"
    effective_config.write_text(fleet.read_text().replace("[pricing]\n", '[pricing]\nbasis = "effective"\n'))
    effective = audit(effective_config, tmp_path / "effective.json")

    list_cost = listed["endpoints"][0]["variants"][0]["monthly_cost_usd"]
    cost = effective["endpoints"][0]["variants"][0]["monthly_cost_usd"]
    assert cost == pytest.approx(list_cost * DISCOUNT, rel=0.001)
    assert listed["prices"]["basis"] == "list" and effective["prices"]["basis"] == "effective"
    used = {u["instance_type"]: u for u in effective["prices"]["used"]}
    assert used[TYPE]["kind"] == "effective" and used[TYPE]["source"] == "cost-explorer"
    # The advised type was not used by the account: it stays at list, and says so.
    advised = effective["plans"][0]["proposed"]["instance_type"]
    assert used[advised]["kind"] in ("list", "derived") and used[advised]["source"] == "bundled"
    assert effective["prices"]["statement"].startswith("Basis: effective rates")
    (line,) = effective["prices"]["reconciliation"]
    billed = (1440 * load_catalog().hourly_price(TYPE, "us-east-1") * DISCOUNT + 8.0) * HOURS_PER_MONTH / 720  # type: ignore[operator]
    assert line["region"] == "us-east-1" and line["billed_monthly_usd"] == pytest.approx(billed, abs=0.02)
    assert line["estimated_monthly_usd"] == pytest.approx(cost, abs=0.01)
    assert line["coverage_percent"] == pytest.approx(100 * cost / billed, abs=0.1)
    assert listed["prices"]["reconciliation"] == []
    text = runner.invoke(app, ["run", "--config", str(effective_config), "--format", "text", "--no-history"]).output
    assert "Reconciliation us-east-1: estimated hosting $" in text and "% coverage" in text
    # The bundled snapshot's prices are older than pricing.max_price_age_days: every report says so.
    old = "prices for us-east-1 include some as of 2025-06-01, older than pricing.max_price_age_days (365 days)"
    assert any(w.startswith(old) for w in listed["prices"]["warnings"])
    assert f"Note: {old}" in text  # a footnote, after the figures


def test_effective_basis_without_cost_explorer_access_is_one_warning(fleet: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_COST_EXPLORER", "http://127.0.0.1:9")  # nothing listens
    config = tmp_path / "effective.toml"
    config.write_text(fleet.read_text().replace("[pricing]\n", '[pricing]\nbasis = "effective"\n')
                      + "[aws]\nconnect_timeout_seconds = 1\nmax_attempts = 1\n")
    result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--no-history"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    (warning,) = [w for w in report["prices"]["warnings"] if "not read" in w]
    assert warning.startswith("effective rates not read: cannot reach ce in us-east-1")
    assert warning.endswith("list prices used")
    assert f"warning: {warning}" in result.stderr
    assert report["prices"]["used"][0]["kind"] in ("list", "derived")


def test_usage_types_name_their_region() -> None:
    assert region_of("EUC1-Host:ml.m5.xlarge") == "eu-central-1"
    assert region_of("EU-Processing:ml.m5.large") == "eu-west-1"
    assert region_of("APN1-AsyncInf:ml.g6.xlarge") == "ap-northeast-1"
    (rate,) = usage_rates([UsageCost("APN1-Train:ml.p3.2xlarge", 100.0, 25.0),
                           UsageCost("APN1-ML:VolumeUsage", 1.0, 10.0)])
    assert (rate.region, rate.instance_type, rate.usage) == ("ap-northeast-1", "ml.p3.2xlarge", "training")
    assert rate.rate == 4.0
