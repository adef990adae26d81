"""Every usage at its own rate when the prices have it: asynchronous inference (an endpoint in the
local AWS emulator), batch transform and Studio apps; the hosting rate of the type where they do
not (the bundled snapshot lists hosting and training only), and every figure says which."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.catalog import load_catalog
from auditor.cli import app
from auditor.kinds.jobs.analysis import transform_cost
from auditor.kinds.jobs.models import TransformJob
from auditor.kinds.workspaces.costs import studio_app_cost
from auditor.kinds.workspaces.models import StudioApp
from auditor.prices.merge import apply_price_table
from auditor.prices.parse import PriceRecord, usage_of
from auditor.prices.table import build_table, write_cache
from auditor_emulator.fleet import EndpointSpec, async_variant, seed_fleet
from conftest import utc_now

runner = CliRunner()
HOSTING_M5_XLARGE = load_catalog().hourly_price("ml.m5.xlarge", "us-east-1")
NOW = datetime(2026, 11, 30, 6, tzinfo=UTC)


def own_rates() -> list[PriceRecord]:
    """Rates as `audit prices update` stores them (platoinstancetype AsyncInf, BatchTransform, Studio-JupyterLab)."""
    return [PriceRecord("ml.m5.xlarge", "us-east-1", "async", 0.25, None),
            PriceRecord("ml.m5.xlarge", "us-east-1", "batch", 0.24, None),
            PriceRecord("ml.m5.xlarge", "us-east-1", "studio-jupyterlab", 0.27, None)]


def test_async_endpoints_are_priced_at_the_async_rate_when_the_prices_have_it(aws, tmp_path: Path) -> None:
    """Was: the hosting rate ($0.23/h), although the cache held AsyncInf's ($0.25/h)."""
    seed_fleet(aws, [EndpointSpec("queue", (async_variant("ml.m5.xlarge", 2, arrivals_per_hour=30,
                                                          processing_seconds=60),), kind="async")], now=utc_now())
    cache = tmp_path / "prices.json"
    config = tmp_path / "auditor.toml"
    config.write_text(f'[jobs]\nenabled = false\n[pricing]\ncache_path = "{cache}"\n')

    def variant(out: Path) -> tuple[dict, dict]:
        result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out),
                                     "--no-history"])
        assert result.exit_code == 0, result.output
        report = json.loads(out.read_text())
        (endpoint,) = report["endpoints"]
        return endpoint["variants"][0], report["prices"]

    bundled, prices = variant(tmp_path / "bundled.json")
    assert bundled["price_basis"] == "hosting"
    assert bundled["monthly_cost_usd"] == pytest.approx(HOSTING_M5_XLARGE * 2 * 730, abs=0.01)
    assert "Asynchronous inference: at the hosting rate of the same type" in prices["statement"]
    assert [(u["usage"], u["price_basis"]) for u in prices["used"]] == [("async", "hosting")]

    write_cache(cache, build_table(own_rates(), utc_now().date().isoformat(),
                                   "price-list-api"))
    own, prices = variant(tmp_path / "own.json")
    assert own["price_basis"] == "async"
    assert own["monthly_cost_usd"] == pytest.approx(0.25 * 2 * 730, abs=0.01)
    (used,) = prices["used"]
    assert (used["usage"], used["price_basis"], used["price_per_hour"], used["source"]) == (
        "async", "async", 0.25, "price-list-api")
    assert "at the hosting rate" not in prices["statement"]


def test_batch_transform_and_studio_apps_use_their_own_rates_else_say_hosting() -> None:
    job = TransformJob("1", "us-east-1", "nightly", "Completed", "ml.m5.xlarge", 2, NOW - timedelta(hours=3),
                       NOW - timedelta(hours=3), NOW - timedelta(hours=1), model_name="m")
    studio = StudioApp("1", "us-east-1", "d-1", "JupyterLab", "default", "space-a", "InService", "ml.m5.xlarge",
                       NOW - timedelta(days=2), NOW - timedelta(hours=1), None)
    bundled = load_catalog()
    priced = apply_price_table(bundled, build_table(own_rates(), "2026-11-30", "price-list-api"))

    cost = transform_cost(job, priced)
    assert (cost.price_per_hour, cost.price_basis, cost.cost_usd) == (0.24, "batch", pytest.approx(2 * 2 * 0.24))
    fallback = transform_cost(job, bundled)
    assert (fallback.price_per_hour, fallback.price_basis) == (HOSTING_M5_XLARGE, "hosting")

    app_cost = studio_app_cost(studio, priced, NOW)
    assert (app_cost.price_per_hour, app_cost.price_basis) == (0.27, "studio-jupyterlab")
    assert app_cost.monthly_usd == pytest.approx(0.27 * 730, abs=0.01)
    other = studio_app_cost(replace(studio, app_type="CodeEditor"), priced, NOW)
    assert (other.price_per_hour, other.price_basis) == (HOSTING_M5_XLARGE, "hosting")  # no CodeEditor rate
    origin = priced.price_origin("ml.m5.xlarge", "us-east-1", "batch")
    assert origin is not None and origin.source == "price-list-api"
    assert priced.price_origin("ml.m5.xlarge", "us-east-1", "studio-codeeditor") == bundled.price_origin(
        "ml.m5.xlarge", "us-east-1")


@pytest.mark.parametrize(("plato", "usage"), [("Hosting", "hosting"), ("AsyncInf", "async"),
                                              ("BatchTransform", "batch"), ("Processing", "processing"),
                                              ("Notebook", "notebook"), ("Studio-JupyterLab", "studio-jupyterlab"),
                                              ("Studio-CodeEditor", "studio-codeeditor")])
def test_each_platoinstancetype_is_a_usage_of_its_own(plato: str, usage: str) -> None:
    assert usage_of({"platoinstancetype": plato}) == usage
