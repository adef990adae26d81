"""Notebook instances and processing jobs end to end against the emulator (moto 5.2.5 implements
ListNotebookInstances, DescribeNotebookInstance, DescribeNotebookInstanceLifecycleConfig, ListTags,
ListProcessingJobs, DescribeProcessingJob and ListDomains), checked by hand-computed numbers at the
catalog's hosting list prices: ml.p3.2xlarge $3.825/h, ml.m5.xlarge $0.23/h, ml.m5.2xlarge
$0.461/h, ml.c5.4xlarge $0.816/h; ML storage $0.14 per GB-month."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from conftest import audit_json, utc_now

runner = CliRunner()


@pytest.fixture(scope="module")
def report(workspaces_home: Path) -> dict:
    return audit_json(workspaces_home)


def findings(report: dict, rule: str) -> dict[str, dict]:
    return {f["resource"]["name"]: f for f in report["findings"] if f["rule"] == rule}


def test_notebooks_are_discovered_and_priced(report: dict) -> None:
    assert report["schema_version"] == 9
    notebooks = {n["name"]: n for n in report["workspaces"]["notebooks"]}
    assert set(notebooks) == {"cv-research-gpu", "analytics-scratch", "feature-eng-m5", "old-prototype"}
    gpu = notebooks["cv-research-gpu"]
    assert gpu["status"] == "InService" and gpu["instance_type"] == "ml.p3.2xlarge" and gpu["volume_size_gb"] == 100
    assert gpu["tags"] == {"owner": "vision@example.com"} and gpu["lifecycle_config"] is None
    assert gpu["compute_monthly_usd"] == pytest.approx(3.825 * 730, abs=0.01)  # $2,792.25
    assert gpu["storage_monthly_usd"] == pytest.approx(100 * 0.14)
    assert gpu["price_basis"] == "hosting"
    stopped = notebooks["old-prototype"]
    assert stopped["compute_monthly_usd"] == 0.0 and stopped["monthly_cost_usd"] == pytest.approx(1.4)
    assert notebooks["analytics-scratch"]["idle_stop"] is True
    assert notebooks["feature-eng-m5"]["idle_stop"] is False
    summary = report["workspaces"]["summary"]
    assert summary["notebooks"] == 4 and summary["notebooks_in_service"] == 3


def test_notebook_left_running_rests_on_last_modified_and_stays_low(report: dict) -> None:
    found = findings(report, "notebook-left-running")
    assert set(found) == {"cv-research-gpu"}  # the others were started recently or are stopped
    finding = found["cv-research-gpu"]
    assert finding["resource"]["type"] == "notebook-instance" and finding["severity"] == "low"
    assert "publish no CPU or GPU metrics" in finding["message"]
    assert finding["evidence"]["days_since_last_modified"] == pytest.approx(23, abs=0.1)
    rec = finding["recommendation"]
    assert rec["action"] == "stop"
    assert rec["monthly_savings_usd"] == pytest.approx(3.825 * 730, abs=0.01)  # the volume stays billed
    assert rec["recommended_monthly_usd"] == pytest.approx(14.0)


def test_notebook_without_idle_stop(report: dict) -> None:
    found = findings(report, "notebook-no-auto-stop")
    assert set(found) == {"cv-research-gpu", "feature-eng-m5", "old-prototype"}
    assert "no lifecycle configuration" in found["cv-research-gpu"]["message"]
    assert "no idle-stop in its OnStart script" in found["feature-eng-m5"]["message"]
    assert "autostop" in found["feature-eng-m5"]["remediation"]


def test_processing_jobs_cost_per_run(report: dict) -> None:
    jobs = {j["name"]: j for j in report["jobs"]["processing"]}
    assert len(jobs) == 9
    build = jobs["feature-build-2026-11-29"]
    assert build["instance_count"] == 2 and build["duration_seconds"] == 4 * 3600
    assert build["cost_usd"] == pytest.approx(4 * 2 * 0.461, abs=0.01)  # $3.69 a run
    assert report["jobs"]["summary"]["processing_jobs"] == 9
    assert build["utilization"]["cpu"]["p95"] > 80


def test_recurring_cpu_bound_processing_scales_out(report: dict) -> None:
    (finding,) = findings(report, "processing-long-running").values()
    assert finding["resource"]["type"] == "processing-job"
    assert finding["evidence"]["pattern"] == "feature-build-#-#-#" and finding["evidence"]["runs"] == 7
    rec = finding["recommendation"]
    assert rec["action"] == "scale-out" and rec["instance_count"] == 4 and rec["details"]["estimated_hours"] == 2.0


def test_underused_processing_gets_a_smaller_shape(report: dict) -> None:
    (finding,) = findings(report, "processing-underutilized").values()
    assert finding["resource"]["name"] == "model-eval-w48" and finding["evidence"]["level"] < 15
    rec = finding["recommendation"]
    assert rec["instance_count"] == 1 and rec["instance_type"] != "ml.c5.4xlarge"
    assert rec["details"]["per_run_usd"] == pytest.approx(2 * 0.816, abs=0.01)
    assert rec["details"]["per_run_advised_usd"] < rec["details"]["per_run_usd"] / 2
    assert rec["monthly_savings_usd"] > 0


def test_every_format_shows_notebooks_and_processing(workspaces_home: Path) -> None:
    html = runner.invoke(app, ["run", "--format", "html", "--no-history"]).output
    assert "Notebooks and Studio" in html and "cv-research-gpu" in html and "Processing jobs / cost" in html
    text = runner.invoke(app, ["run", "--format", "text", "--no-history"]).output
    assert "NOTEBOOKS AND STUDIO" in text and "Processing jobs: 9" in text
    markdown = runner.invoke(app, ["run", "--format", "markdown", "--no-history"]).output
    assert "## Notebook instances" in markdown and "| cv-research-gpu | us-east-1 | InService |" in markdown
    csv_run = runner.invoke(app, ["run", "--format", "csv", "--output", str(workspaces_home / "f.csv"), "--no-history"])
    assert csv_run.exit_code == 0
    rows = list(csv.DictReader(io.StringIO((workspaces_home / "f.csv").read_text())))
    stop = next(r for r in rows if r["rule"] == "notebook-left-running")
    assert stop["action"] == "stop" and stop["resource"] == "cv-research-gpu"


def test_history_records_the_new_findings(workspaces_home: Path) -> None:
    assert runner.invoke(app, ["run", "--format", "json", "--output", str(workspaces_home / "h.json")]).exit_code == 0
    listed = json.loads(runner.invoke(app, ["history", "--format", "json"]).stdout)
    document = json.loads((workspaces_home / "h.json").read_text())
    total = sum(1 for f in document["findings"] if f["severity"] != "info")  # the findings above info
    assert listed[0]["findings"] == total == document["summary"]["findings"]
    weekly = runner.invoke(app, ["weekly", "--output", str(workspaces_home / "weekly.html")])
    assert weekly.exit_code == 0, weekly.output
    assert "cv-research-gpu" in (workspaces_home / "weekly.html").read_text()


def test_notebooks_off_makes_no_notebook_calls(workspaces_home: Path) -> None:
    (workspaces_home / "auditor.toml").write_text("[workspaces]\nnotebooks = false\nstudio = false\n")
    try:
        result = runner.invoke(app, ["run", "--format", "json", "--output", str(workspaces_home / "off.json"),
                                     "--no-history"])
    finally:
        (workspaces_home / "auditor.toml").unlink()
    assert result.exit_code == 0, result.output
    doc = json.loads((workspaces_home / "off.json").read_text())
    assert doc["workspaces"]["notebooks"] == [] and not [f for f in doc["findings"] if "notebook" in f["rule"]]


def test_advice_on_circumstantial_evidence_is_listed_but_not_counted(report: dict) -> None:
    """Notebooks publish no usage metric: a stop on timestamps alone is a plan, not a saving."""
    unmeasured = [p for p in report["plans"] if not p["measured"]]
    assert unmeasured and all(p["findings"] == ["notebook-left-running"] for p in unmeasured)
    counted = sum(max(p["monthly_savings_usd"], 0) for p in report["plans"] if p["measured"])
    assert report["summary"]["monthly_savings_usd"] == pytest.approx(counted, abs=0.01)
    assert report["summary"]["monthly_savings_usd"] < counted + sum(p["monthly_savings_usd"] for p in unmeasured)


def own_rates_cache(path: Path) -> None:
    """A price cache as `audit prices update` writes it, holding each usage's own rate in
    us-east-1: notebook and processing rates that differ from the hosting ones."""
    from auditor.prices.parse import PriceRecord
    from auditor.prices.table import build_table, write_cache

    records = [PriceRecord("ml.p3.2xlarge", "us-east-1", "notebook", 4.284, None),
               PriceRecord("ml.m5.xlarge", "us-east-1", "notebook", 0.23, None),
               PriceRecord("ml.t2.medium", "us-east-1", "notebook", 0.0464, None),
               PriceRecord("ml.t3.medium", "us-east-1", "notebook", 0.05, None),
               PriceRecord("ml.m5.2xlarge", "us-east-1", "processing", 0.53, None),
               PriceRecord("ml.c5.4xlarge", "us-east-1", "processing", 0.952, None)]
    write_cache(path, build_table(records, utc_now().date().isoformat(), "price-list-api"))


def test_notebooks_and_processing_are_priced_at_their_own_rates_when_the_prices_have_them(
        workspaces_home: Path, report: dict) -> None:
    """Was: at the hosting rate (p3.2xlarge $3.825/h, m5.2xlarge $0.461/h) although the cache held
    the notebook's ($4.284/h) and processing's ($0.53/h) own rates."""
    # The bundled snapshot has no such rates: the hosting rate, and the report says so.
    assert "Notebook instances, processing jobs: at the hosting rate of the same type" in report["prices"]["statement"]
    assert {j["price_basis"] for j in report["jobs"]["processing"]} == {"hosting"}
    config = workspaces_home / "own-rates.toml"
    own_rates_cache(workspaces_home / "own-rates-prices.json")
    config.write_text(f'[pricing]\ncache_path = "{workspaces_home / "own-rates-prices.json"}"\n')
    out = workspaces_home / "own-rates.json"
    result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out),
                                 "--no-history"])
    assert result.exit_code == 0, result.output
    priced = json.loads(out.read_text())
    notebooks = {n["name"]: n for n in priced["workspaces"]["notebooks"]}
    gpu = notebooks["cv-research-gpu"]
    assert gpu["price_basis"] == "notebook" and gpu["price_per_hour"] == 4.284
    assert gpu["compute_monthly_usd"] == pytest.approx(4.284 * 730, abs=0.01)
    jobs = {j["name"]: j for j in priced["jobs"]["processing"]}
    build = jobs["feature-build-2026-11-29"]
    assert build["price_basis"] == "processing" and build["cost_usd"] == pytest.approx(4 * 2 * 0.53, abs=0.01)
    used = {(u["usage"], u["instance_type"]): u for u in priced["prices"]["used"]}
    assert used[("notebook", "ml.p3.2xlarge")]["price_basis"] == "notebook"
    assert used[("notebook", "ml.p3.2xlarge")]["source"] == "price-list-api"
    assert used[("processing", "ml.m5.2xlarge")]["price_per_hour"] == 0.53
    assert not [(u["usage"], u["instance_type"]) for u in priced["prices"]["used"] if u["price_basis"] != u["usage"]]
    assert "at the hosting rate" not in priced["prices"]["statement"]
    assert priced["workspaces"]["summary"]["price_basis"] == "notebook and Studio compute at their own list rates"
    stop = next(f for f in priced["findings"] if f["rule"] == "notebook-left-running")
    assert stop["recommendation"]["monthly_savings_usd"] == pytest.approx(4.284 * 730, abs=0.01)
