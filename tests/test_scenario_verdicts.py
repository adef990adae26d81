"""What the audit concludes about each endpoint of the scenario fleet, which publishes exactly what
AWS publishes per kind: the verdicts issue 10 asks for, end to end through `audit run`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from auditor.catalog import load_catalog
from auditor.cli import app
from auditor_emulator.fleet import scenario_fleet, seed_fleet
from conftest import seeded_emulator, utc_now

runner = CliRunner()


@pytest.fixture(scope="module")
def report(emulator, tmp_path_factory) -> Iterator[dict]:
    home = tmp_path_factory.mktemp("home")
    with seeded_emulator(emulator, home, lambda emu: seed_fleet(emu, scenario_fleet(), now=utc_now())):
        out = home / "report.json"
        result = runner.invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
        assert result.exit_code == 0, result.output
        yield json.loads(out.read_text())


def rules(report: dict, endpoint: str) -> set[str]:
    return {f["rule"] for f in report["findings"] if f["resource"]["name"] == endpoint}


def plan(report: dict, endpoint: str) -> dict:
    (found,) = [p for p in report["plans"] if p["resource"]["name"] == endpoint]
    return found


def test_busy_async_endpoint_without_invocations_is_not_idle(report: dict) -> None:
    assert "idle" not in rules(report, "async-busy-gpu-draining")
    assert not [p for p in report["plans"] if p["resource"]["name"] == "async-busy-gpu-draining"
                and p["proposed"]["action"] == "delete"]


def test_truly_idle_async_endpoint_is_idle(report: dict) -> None:
    (finding,) = [f for f in report["findings"] if f["resource"]["name"] == "async-idle-empty-queue"]
    assert finding["rule"] == "idle" and "TotalProcessingTime" in finding["message"]
    assert plan(report, "async-idle-empty-queue")["proposed"]["action"] == "delete"


def test_slowly_growing_queue_gets_proportionate_advice_from_throughput(report: dict) -> None:
    (finding,) = [f for f in report["findings"] if f["resource"]["name"] == "async-queue-growing-slowly"]
    assert finding["rule"] == "rising-queue-latency"
    scale_out = finding["evidence"]["scale_out"]
    # Arrivals exceed what 2 instances process by about one request an hour: one more instance.
    assert scale_out["needed_count"] == 3
    assert 1000 < scale_out["processed_per_hour"] < 2000 and 0 < scale_out["backlog_growth_per_hour"] < 5
    assert "TotalProcessingTime" in scale_out["estimate_rests_on"]
    # Levels quoted are observed ones, never below zero.
    for metric in ("ApproximateAgeOfOldestRequest", "ApproximateBacklogSizePerInstance"):
        assert finding["evidence"][metric]["start_level"] >= 0
    assert "rose from -" not in finding["message"]
    assert finding["recommendation"]["instance_count"] == 3
    assert plan(report, "async-queue-growing-slowly")["proposed"]["action"] == "scale-out"


def test_steady_busy_endpoint_is_no_serverless_candidate(report: dict) -> None:
    assert "serverless-candidate" not in rules(report, "realtime-steady-busy")
    assert "idle" not in rules(report, "realtime-steady-busy")


def test_bursty_low_traffic_endpoint_is_a_serverless_candidate_with_the_cold_start_trade_off(report: dict) -> None:
    (finding,) = [f for f in report["findings"]
                  if f["resource"]["name"] == "realtime-bursty-low-traffic" and f["rule"] == "serverless-candidate"]
    assert finding["evidence"]["idle_hours_percent"] > 50
    assert "cold start" in finding["message"]
    # One plan for the variant: serverless, with the resize listed as its alternative. Its traffic
    # stops every evening (three hours a day, 06-18 UTC): where its CPU stayed under the idle ceiling
    # all those hours (the emulator's CPU noise decides), off-hours is a third, cheaper-to-keep option.
    bursty = plan(report, "realtime-bursty-low-traffic")
    assert bursty["proposed"]["action"] == "serverless"
    assert [a["action"] for a in bursty["alternatives"] if a["action"] != "off-hours"] == ["resize"]
    assert set(bursty["findings"]) - {"off-hours"} == {"serverless-candidate", "underutilized"}


def test_autoscaled_variant_is_priced_from_the_instance_hours_it_ran(report: dict) -> None:
    (endpoint,) = [e for e in report["endpoints"] if e["name"] == "realtime-autoscaled-day-night"]
    (variant,) = endpoint["variants"]
    # 2 instances at night, 6 by day: the average lies between, and the cost follows it.
    assert 2 < variant["average_instances"] < 6
    price = load_catalog().hourly_price("ml.c5.xlarge", "us-east-1")
    assert price is not None
    # Priced from what ran, not from the count DescribeEndpoint shows at this hour x 730 h.
    assert variant["monthly_cost_usd"] == pytest.approx(price * variant["average_instances"] * 730, rel=0.01)


def test_summary_saving_is_the_sum_of_the_plans(report: dict) -> None:
    saving = sum(max(p["monthly_savings_usd"], 0) for p in report["plans"] if p["measured"])
    assert report["summary"]["monthly_savings_usd"] == pytest.approx(saving, abs=0.01)
