"""A fleet in Frankfurt and Tokyo, neither priced by the bundled snapshot: before `audit prices
update` its costs are 'no price'; after it (the Price List API stubbed, the fleet in the local AWS
emulator over HTTP), every endpoint is priced, the savings differ by region as the rates do, a
type the snapshot does not know is audited, and the report names the source of every price."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from auditor.catalog import load_catalog
from auditor.cli import app
from auditor.collect.pricing import fetch_price_table
from auditor.prices.merge import apply_price_table
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now
from pricelist import catalog_items, paged, price_item, stubbed_pricing

runner = CliRunner()
RATES = {"eu-central-1": 1.2, "ap-northeast-1": 1.3}
OLD_TYPE = "ml.m4.xlarge"  # a type the bundled catalog does not know (and moto still accepts)
FLEET = [
    EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),)),
    EndpointSpec("forgotten", (VariantSpec(OLD_TYPE, 1, cpu=Load(1, 0.2, 0.1), memory=Load(10, 1),
                                           invocations_per_hour=0),)),
]


def region_items(region: str) -> list[dict[str, Any]]:
    return [*catalog_items(region, RATES[region]),
            price_item(OLD_TYPE, region, "hosting", round(0.24 * RATES[region], 4), vcpu=4, memory_gib=16)]


def pages() -> dict[str, list[list[dict[str, Any]]]]:
    return {region: paged(region_items(region)) for region in RATES}


@pytest.fixture
def fleet(aws, tmp_path: Path) -> Path:
    # The emulator publishes metrics by the shape of each type: give it the refreshed catalog.
    table = fetch_price_table(stubbed_pricing(pages()), tuple(RATES), utc_now().date())
    catalog = apply_price_table(load_catalog(), table)
    for region in RATES:
        seed_fleet(aws, FLEET, now=utc_now(), region=region, catalog=catalog)
    config = tmp_path / "auditor.toml"
    config.write_text('[aws]\nregions = ["eu-central-1", "ap-northeast-1"]\n[jobs]\nenabled = false\n'
                      f'[pricing]\ncache_path = "{tmp_path / "prices.json"}"\n')
    return config


def audit(config: Path, out: Path) -> dict[str, Any]:
    result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out),
                                 "--no-history"])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def saving(report: dict[str, Any], region: str, endpoint: str) -> float:
    (plan,) = [p for p in report["plans"] if p["resource"]["region"] == region and p["resource"]["name"] == endpoint]
    return float(plan["monthly_savings_usd"])


def test_frankfurt_and_tokyo_are_priced_after_a_refresh(fleet: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    before = audit(fleet, tmp_path / "before.json")
    messages = [e["message"] for e in before["errors"]]
    assert any("no list prices for eu-central-1" in m for m in messages)
    assert any(f"instance type {OLD_TYPE} not in the catalog" in m for m in messages)
    assert before["summary"]["monthly_savings_usd"] == 0

    client = stubbed_pricing(pages())
    monkeypatch.setattr("auditor.tasks.prices.pricing_client", lambda config: client)
    update = runner.invoke(app, ["prices", "update", "--config", str(fleet)])
    assert update.exit_code == 0, update.output
    client.stubber.assert_no_pending_responses()
    assert f"not in the bundled catalog, now auditable: {OLD_TYPE}" in update.output
    hosting = sum(1 for s in load_catalog().shapes.values() if "us-east-1" in s.hosting_price_per_hour) + 1
    assert f"eu-central-1: {hosting} hosting prices" in update.output

    after = audit(fleet, tmp_path / "after.json")
    assert not [e for e in after["errors"] if e["stage"] in ("recommend", "analyse")], after["errors"]
    for region in RATES:
        variants = [v for e in after["endpoints"] if e["region"] == region for v in e["variants"]]
        assert all(v["monthly_cost_usd"] for v in variants)
    # The savings differ by region as the rates do.
    for endpoint in ("oversized", "forgotten"):
        frankfurt, tokyo = saving(after, "eu-central-1", endpoint), saving(after, "ap-northeast-1", endpoint)
        assert frankfurt > 0 and tokyo > 0
        assert tokyo / frankfurt == pytest.approx(RATES["ap-northeast-1"] / RATES["eu-central-1"], rel=0.01)
    # The type unknown to the snapshot is judged: idle, its full cost to save.
    forgotten = [f for f in after["findings"] if f["resource"]["name"] == "forgotten"
                 and f["resource"]["region"] == "eu-central-1"]
    assert any(f["rule"] == "idle" for f in forgotten)
    assert saving(after, "eu-central-1", "forgotten") == pytest.approx(0.24 * 1.2 * 730, rel=0.01)
    # The source of every price is stated.
    prices = after["prices"]
    assert prices["basis"] == "list"
    used = {(u["region"], u["instance_type"]): u for u in prices["used"]}
    assert used[("ap-northeast-1", OLD_TYPE)]["source"] == "price-list-api"
    assert all(u["source"] == "price-list-api" and u["kind"] == "list" and u["as_of"] == utc_now().date().isoformat()
               for u in prices["used"])
    advised = {f["recommendation"]["instance_type"] for f in after["findings"]
               if f["recommendation"] and f["recommendation"]["instance_type"]}
    assert advised and all(("eu-central-1", t) in used for t in advised)
    assert "eu-central-1: the AWS Price List API (list," in prices["statement"]
    text = runner.invoke(app, ["run", "--config", str(fleet), "--format", "text", "--no-history"])
    assert "Prices by region: ap-northeast-1: the AWS Price List API (list," in text.output
