"""The whole audit through the CLI against the seeded demo fleet in the local emulator."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor_emulator.fleet import demo_fleet, seed_fleet
from conftest import seeded_emulator, utc_now

runner = CliRunner()


@pytest.fixture(scope="module")
def demo_env(emulator, tmp_path_factory) -> Iterator[Path]:
    with seeded_emulator(emulator, tmp_path_factory.mktemp("home"),
                         lambda emu: seed_fleet(emu, demo_fleet(), now=utc_now())) as home:
        yield home


@pytest.fixture(scope="module")
def report(demo_env: Path) -> dict:
    out = demo_env / "report.json"
    result = runner.invoke(app, ["run", "--format", "json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def findings_of(report: dict, endpoint: str) -> list[dict]:
    return [f for f in report["findings"] if f["resource"]["name"] == endpoint]


def test_json_document_shape(report: dict) -> None:
    assert report["schema_version"] == 9
    assert set(report) >= {"generated_at", "window", "endpoints", "plans", "findings", "summary", "errors"}
    assert report["window"]["period_seconds"] == 3600
    assert report["summary"]["endpoints"] == len(report["endpoints"]) == len(demo_fleet())
    variant = report["endpoints"][0]["variants"][0]
    assert set(variant["utilization"]) == {"cpu", "memory", "disk", "gpu", "gpu_memory"}
    for finding in report["findings"]:
        assert set(finding) >= {"rule", "title", "remediation", "severity", "resource", "variant", "message",
                                "evidence", "recommendation"}
        assert set(finding["resource"]) == {"kind", "type", "name", "account_id", "region"}
        assert finding["title"] and finding["remediation"]
    # One plan per variant: alternatives are never added up, and advice that costs more is no saving.
    keys = [(p["resource"]["region"], p["resource"]["name"], p["variant"]) for p in report["plans"]]
    assert len(keys) == len(set(keys))
    advised = {(f["resource"]["region"], f["resource"]["name"], f["variant"]) for f in report["findings"]
               if f["recommendation"]}
    assert set(keys) == advised
    for plan in report["plans"]:
        assert plan["findings"] and set(plan["proposed"]) >= {"action", "instance_type", "instance_count",
                                                             "autoscaling", "monthly_savings_usd"}
        assert all(a["monthly_savings_usd"] <= plan["monthly_savings_usd"] for a in plan["alternatives"]) or \
            plan["proposed"]["action"] == "scale-out"
    # A plan another covers (a consolidation's members') is counted in that one, not again.
    covered = {tuple(r.values()) for p in report["plans"] for r in p["covers"]}
    saving = sum(max(p["monthly_savings_usd"], 0) for p in report["plans"]
                 if p["measured"] and tuple(p["resource"].values()) not in covered)
    included = [p for p in report["plans"] if tuple(p["resource"].values()) in covered]
    assert included and report["summary"]["plans_included"] == {
        "plans": len(included), "monthly_savings_usd": pytest.approx(sum(p["monthly_savings_usd"] for p in included),
                                                                     abs=0.01)}
    assert report["summary"]["monthly_savings_usd"] == pytest.approx(saving, abs=0.01)

    # The spend counts every kind, as the saving counts every kind's plans: each kind's own totals.
    summary = report["summary"]
    hours = (datetime.fromisoformat(report["window"]["end"]) - datetime.fromisoformat(report["window"]["start"])
             ).total_seconds() / 3600
    jobs = report["jobs"]["summary"]
    expected = {
        "endpoints": sum(v["monthly_cost_usd"] or 0 for e in report["endpoints"] for v in e["variants"]),
        "jobs": (jobs["training_cost_usd"] + jobs["transform_cost_usd"] + jobs["processing_cost_usd"]) * 730 / hours,
    }
    if report["workspaces"] is not None:
        ws = report["workspaces"]["summary"]
        expected["workspaces"] = ws["notebooks_monthly_cost_usd"] + ws["studio_apps_monthly_cost_usd"]
    if report.get("hyperpod") is not None:
        expected["hyperpod"] = report["hyperpod"]["summary"]["monthly_cost_usd"]
    assert set(summary["monthly_cost_by_kind"]) == set(expected)
    for kind, cost in expected.items():
        assert summary["monthly_cost_by_kind"][kind] == pytest.approx(cost, abs=0.02), kind
    assert summary["monthly_cost_usd"] == pytest.approx(sum(c for c in expected.values() if c is not None), abs=0.05)


@pytest.mark.parametrize("busy", ["fraud-scoring", "nlp-summarizer", "vision-detector", "doc-ocr-async",
                                  "intent-classifier"])
def test_busy_endpoints_are_not_flagged(report: dict, busy: str) -> None:
    assert findings_of(report, busy) == []


def rules_of(report: dict, endpoint: str) -> dict[tuple[str, str | None], dict]:
    return {(f["rule"], f["variant"]): f for f in findings_of(report, endpoint)}


def test_normalisation_trap_raw_cpu_over_100_is_still_underused(report: dict) -> None:
    assert ("underutilized", "AllTraffic") in rules_of(report, "pricing-api")
    endpoint = next(e for e in report["endpoints"] if e["name"] == "pricing-api")
    assert endpoint["variants"][0]["utilization"]["cpu"]["max"] < 35  # 8 vCPUs: raw ~190% is ~24%


def test_gpu_summed_over_four_gpus_is_busy(report: dict) -> None:
    endpoint = next(e for e in report["endpoints"] if e["name"] == "vision-detector")
    assert 60 < endpoint["variants"][0]["utilization"]["gpu"]["avg"] <= 100


def test_memory_optimised_instance_moves_across_families(report: dict) -> None:
    (finding,) = findings_of(report, "recsys-ranker")
    rec = finding["recommendation"]
    assert finding["rule"] == "underutilized" and "memory" in finding["message"]
    assert rec["action"] == "resize" and not rec["instance_type"].startswith("ml.r5")
    assert rec["monthly_savings_usd"] > 0
    assert rec["current_monthly_usd"] == pytest.approx(0.605 * 730)


def test_gpu_model_stays_on_gpu(report: dict) -> None:
    (finding,) = findings_of(report, "image-tagger")
    assert finding["recommendation"]["instance_type"].startswith("ml.g4dn.")


def test_idle_endpoint(report: dict) -> None:
    (finding,) = findings_of(report, "churn-model-legacy")
    assert finding["rule"] == "idle" and finding["severity"] == "high"
    assert finding["recommendation"] == {
        "action": "delete", "instance_type": None, "instance_count": 0,
        "current_monthly_usd": round(0.461 * 730, 2), "recommended_monthly_usd": 0.0,
        "monthly_savings_usd": round(0.461 * 730, 2), "advice": "delete the endpoint", "details": {},
    }


def test_multi_variant_flags_only_the_underused_variant(report: dict) -> None:
    rules = rules_of(report, "ab-ranker")
    assert ("underutilized", "challenger") in rules
    assert ("underutilized", "champion") not in rules
    assert all(f["variant"] in ("champion", "challenger") for f in findings_of(report, "ab-ranker"))


def test_insufficient_data_gets_no_verdict(report: dict) -> None:
    for name in ("new-model-canary", "sentiment-v2"):
        assert [(f["rule"], f["recommendation"]) for f in findings_of(report, name)] == [("insufficient-data", None)]


def test_deleted_config_and_failed_endpoint_are_listed_with_why(report: dict) -> None:
    names = {e["name"]: e for e in report["endpoints"]}
    assert "deleted" in names["orphaned-endpoint"]["not_judged_reason"]
    assert any(e["endpoint"] == "orphaned-endpoint" and e["stage"] == "discover" for e in report["errors"])
    assert [f["rule"] for f in findings_of(report, "broken-deploy")] == ["not-in-service"]


def test_findings_sorted_by_saving_then_severity(report: dict) -> None:
    order = {"high": 3, "medium": 2, "low": 1, "info": 0}
    keys = [(max(f["recommendation"]["monthly_savings_usd"], 0) if f["recommendation"] else 0, order[f["severity"]])
            for f in report["findings"]]
    assert keys == sorted(keys, reverse=True)


def test_rising_queue_is_flagged_with_a_scale_out(report: dict) -> None:
    (finding,) = [f for f in findings_of(report, "video-transcode-async") if f["rule"] != "no-queue-alarm"]
    assert finding["rule"] == "rising-queue-latency" and finding["severity"] == "high"
    age = finding["evidence"]["ApproximateAgeOfOldestRequest"]
    assert age["slope_per_day"] > 0 and age["end_level"] > 2 * age["start_level"] and age["p_value"] < 0.01
    rec = finding["recommendation"]
    assert rec["action"] == "scale-out" and rec["instance_type"] == "ml.m5.xlarge" and rec["instance_count"] > 2
    assert rec["monthly_savings_usd"] < 0  # a risk to fix, not money saved
    assert "ApproximateBacklogSizePerInstance" in finding["message"]


def test_flat_noisy_queue_with_one_spike_is_not_a_trend(report: dict) -> None:
    assert findings_of(report, "doc-ocr-async") == []


def test_the_queue_without_an_alarm_is_told_and_the_one_with_an_alarm_is_not(report: dict) -> None:
    told = [f["resource"]["name"] for f in report["findings"] if f["rule"] == "no-queue-alarm"]
    assert told == ["video-transcode-async"]


def test_the_office_hours_endpoint_is_stopped_out_of_hours_and_no_other(report: dict) -> None:
    (finding,) = [f for f in report["findings"] if f["rule"] == "off-hours"]
    assert finding["resource"]["name"] == "internal-reports" and finding["recommendation"]["monthly_savings_usd"] > 0
    assert [p["hours"] for p in finding["evidence"]["off_periods_utc"]] == [14, 14, 14, 14, 62]


def test_latency_creep_without_load_growth_is_a_regression(report: dict) -> None:
    (finding,) = findings_of(report, "checkout-ranker")
    assert finding["rule"] == "rising-latency"
    evidence = finding["evidence"]
    assert evidence["ModelLatency"]["unit"] == "ms"
    assert evidence["ModelLatency"]["end_level"] > 1.8 * evidence["ModelLatency"]["start_level"]
    assert abs(evidence["invocations"]["relative_rise"]) < 0.2
    assert evidence["verdict"] == "regression"
    assert finding["recommendation"] is None


def test_autoscaled_pair_is_not_flagged_but_busy_pair_without_it_is(report: dict) -> None:
    assert findings_of(report, "fraud-scoring") == []
    finding = rules_of(report, "ab-ranker")[("no-autoscaling", "champion")]
    policy = finding["recommendation"]["details"]["policy"]
    assert policy["PredefinedMetricType"] == "SageMakerVariantInvocationsPerInstance"
    assert policy["MinCapacity"] == 2 and policy["MaxCapacity"] > 2
    assert policy["TargetValue"] > 0


def test_overprovisioned_count(report: dict) -> None:
    finding = rules_of(report, "search-embeddings")[("overprovisioned-count", "AllTraffic")]
    rec = finding["recommendation"]
    assert rec["instance_type"] == "ml.m5.4xlarge" and rec["instance_count"] == 2
    assert rec["monthly_savings_usd"] == pytest.approx(0.922 * 2 * 730, abs=0.01)


def test_serverless_rules(report: dict) -> None:
    (oversized,) = findings_of(report, "faq-bot")
    assert oversized["rule"] == "serverless-oversized"
    assert oversized["recommendation"]["details"] == {"memory_size_mb": 1024}
    assert oversized["recommendation"]["monthly_savings_usd"] > 0
    candidate = rules_of(report, "internal-reports")[("serverless-candidate", "AllTraffic")]
    rec = candidate["recommendation"]
    assert rec["action"] == "serverless"
    assert rec["recommended_monthly_usd"] < rec["current_monthly_usd"] / 2
    assert "invocations a month" in candidate["message"]
    # A busy real-time endpoint is no serverless candidate.
    assert ("serverless-candidate", "AllTraffic") not in rules_of(report, "fraud-scoring")


def test_api_calls_stay_within_budget(demo_env: Path) -> None:
    from auditor.config import AuditConfig
    from auditor.tasks.audit import execute_audit

    outcome = execute_audit(AuditConfig())
    calls = outcome.report.api_calls
    endpoints = len(ENDPOINTS.section(outcome.report))
    assert sum(calls.values()) <= 4 * endpoints
    # Every series of the demo's endpoints in as few calls as CloudWatch's limits allow (500 queries,
    # 100,800 datapoints a call): its 30 endpoints' fortnight takes two.
    (stats,) = [s for s in outcome.report.collection if s.queries]
    assert calls["cloudwatch:GetMetricData"] == stats.calls == max(
        math.ceil(stats.queries / 500), math.ceil(stats.datapoints / 100_800)) == 2
    # Every call the run made is allowed by the policy in deploy/.
    policy = json.loads((Path(__file__).parent.parent / "deploy" / "iam-policy.json").read_text())
    allowed = {action for statement in policy["Statement"] for action in statement["Action"]}
    iam_prefix = {"application-auto-scaling": "application-autoscaling"}
    # CloudWatch's PromQL API has no IAM action of its own (the CloudWatch guide's "IAM permissions for PromQL").
    needs = {"cloudwatch:QueryMetrics": {"cloudwatch:GetMetricData", "cloudwatch:ListMetrics"}}
    for operation in calls:
        service, name = operation.split(":")
        assert needs.get(operation, {f"{iam_prefix.get(service, service)}:{name}"}) <= allowed, operation


def test_every_format_renders(demo_env: Path) -> None:
    outputs = {}
    for fmt in ("table", "html", "csv", "markdown"):
        result = runner.invoke(app, ["run", "--format", fmt])
        assert result.exit_code == 0, result.output
        assert "recsys-ranker" in result.output
        outputs[fmt] = result.output
    # The spend is every kind's, and each summary says what it is made of.
    assert "/month (all kinds)" in outputs["table"] and "Monthly spend by kind: endpoints $" in outputs["table"]
    assert "Monthly spend by kind: endpoints \\$" in outputs["markdown"]  # Markdown escapes the dollar sign
    assert "endpoints $" in outputs["html"] and "jobs $" in outputs["html"]
    html = outputs["html"]  # (the run above: another would print the same report)
    # Tag values are user input: markup in a tag is escaped, never executed.
    assert "<script>alert" not in html
    assert "&lt;script&gt;" in html or "broken-deploy" in html


def test_fail_on_findings_exits_3(demo_env: Path) -> None:
    result = runner.invoke(app, ["run", "--fail-on-findings", "--format", "csv"])
    assert result.exit_code == 3
