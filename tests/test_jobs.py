"""Training and batch transform jobs, end to end against the emulator, checked by hand-computed
numbers: a V100 (ml.p3.2xlarge, $3.825/h) against a T4 (ml.g4dn.2xlarge, $0.94/h), batch size
128 and 256, learning rate 0.01 and 0.1, the T4 runs at lr 0.1 on Spot (billed 30% of the time)."""

from __future__ import annotations

import csv
import io
from datetime import UTC
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.catalog import load_catalog
from auditor.cli import app
from auditor.kinds.jobs.analysis import name_pattern, training_cost
from conftest import audit_json

runner = CliRunner()
V100, T4 = 3.825 / 3600, 0.94 / 3600  # dollars per second
SECONDS = {("p3", "128"): 3240, ("g4dn", "128"): 11520, ("p3", "256"): 2160, ("g4dn", "256"): 10080}


@pytest.fixture(scope="module")
def report(jobs_home: Path) -> dict:
    return audit_json(jobs_home)


def run(report: dict, name: str) -> dict:
    return next(j for j in report["jobs"]["training"] if j["name"] == name)


def test_costs_per_run_by_hand(report: dict) -> None:
    for (gpu, batch), seconds in SECONDS.items():
        price = V100 if gpu == "p3" else T4
        on_demand = run(report, f"resnet50-{gpu}-bs{batch}-lr001")
        assert on_demand["training_seconds"] == seconds and on_demand["spot"] is False
        assert on_demand["cost_usd"] == pytest.approx(seconds * price, abs=0.006)
        assert on_demand["spot_cost_usd"] == pytest.approx(seconds * price * 0.3, abs=0.006)  # estimated, 70% off
        assert on_demand["spot_cost_estimated"] is True
    spot = run(report, "resnet50-g4dn-bs128-lr01")
    assert spot["spot"] is True and spot["billable_seconds"] == 3456
    assert spot["cost_usd"] == pytest.approx(3456 * T4, abs=0.006)  # $0.90 billed
    assert spot["on_demand_cost_usd"] == pytest.approx(11520 * T4, abs=0.006)  # $3.01 on demand
    assert spot["spot_saving_usd"] == pytest.approx((11520 - 3456) * T4, abs=0.006)  # $2.11 realised
    summary = report["jobs"]["summary"]
    assert summary["training_jobs"] == 9 and summary["transform_jobs"] == 14
    assert summary["spot_saving_realised_usd"] == pytest.approx((11520 - 3456) * T4 + (10080 - 3024) * T4, abs=0.01)


def test_experiment_and_verdicts(report: dict) -> None:
    (experiment,) = report["jobs"]["experiments"]
    assert experiment["varied"] == ["batch_size", "learning_rate"]
    assert len(experiment["runs"]) == 8
    verdicts = {(v["setting"]["batch_size"], v["setting"]["learning_rate"]): v for v in experiment["verdicts"]}
    assert set(verdicts) == {(b, lr) for b in ("128", "256") for lr in ("0.01", "0.1")}
    for lr in ("0.01", "0.1"):
        # Batch 128: the T4 is cheaper per run ($3.01 against $3.44)...
        small = verdicts[("128", lr)]
        assert small["cheapest_instance_type"] == "ml.g4dn.2xlarge"
        assert small["cost_per_run_by_instance_type"]["ml.g4dn.2xlarge"] == pytest.approx(11520 * T4, abs=0.006)
        assert small["cost_per_run_by_instance_type"]["ml.p3.2xlarge"] == pytest.approx(3240 * V100, abs=0.006)
        # ...batch 256: the V100 finishes proportionally sooner and wins ($2.30 against $2.63).
        large = verdicts[("256", lr)]
        assert large["cheapest_instance_type"] == "ml.p3.2xlarge"
        assert large["cost_per_run_usd"] == pytest.approx(2160 * V100, abs=0.006)


def test_spot_candidates_note_checkpoints_and_max_wait(report: dict) -> None:
    candidates = {f["resource"]["name"]: f for f in report["findings"] if f["rule"] == "training-spot-candidate"}
    assert "resnet50-g4dn-bs128-lr01" not in candidates  # already on Spot
    finding = candidates["resnet50-p3-bs128-lr001"]
    assert finding["resource"]["type"] == "training-job"
    details = finding["recommendation"]["details"]
    assert details["per_run_usd"] == pytest.approx(3240 * V100, abs=0.006)
    assert details["per_run_spot_usd"] == pytest.approx(3240 * V100 * 0.3, abs=0.006)
    assert "no CheckpointConfig" in finding["message"] and "MaxWaitTimeInSeconds is unset" in finding["message"]


def test_underused_training_gpus(report: dict) -> None:
    (finding,) = [f for f in report["findings"] if f["rule"] == "training-underutilized"]
    assert finding["resource"]["name"] == "churn-xgb-tuning-0412"
    assert finding["evidence"]["resource"] == "gpu" and finding["evidence"]["level"] < 50
    rec = finding["recommendation"]
    assert rec["instance_type"] == "ml.p3.2xlarge"  # a smaller V100 shape, never another GPU model
    assert rec["details"]["per_run_usd"] == pytest.approx(5400 * 14.688 / 3600, abs=0.006)
    assert rec["details"]["per_run_advised_usd"] == pytest.approx(5400 * rec["instance_count"] * V100, abs=0.006)


def test_recurring_cpu_bound_transform_scales_out(report: dict) -> None:
    (finding,) = [f for f in report["findings"] if f["rule"] == "transform-long-running"]
    evidence = finding["evidence"]
    assert evidence["pattern"] == "nightly-scoring-#-#-#" and evidence["runs"] == 14
    assert evidence["median_hours"] == pytest.approx(3.0) and evidence["median_gap_hours"] == pytest.approx(24.0)
    assert evidence["cost_per_run_usd"] == pytest.approx(3 * 0.23, abs=0.01)
    rec = finding["recommendation"]
    assert rec["action"] == "scale-out" and rec["instance_count"] == 2 and rec["details"]["estimated_hours"] == 1.5


def test_experiment_table_in_markdown_and_csv(jobs_home: Path) -> None:
    markdown = runner.invoke(app, ["run", "--format", "markdown", "--no-history"]).output
    assert "## Experiment resnet50" in markdown
    assert "| resnet50-g4dn-bs128-lr01 | 1 x ml.g4dn.2xlarge | 128 | 0.1 |" in markdown
    out = jobs_home / "findings.csv"
    result = runner.invoke(app, ["run", "--format", "csv", "--output", str(out), "--no-history"])
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO((jobs_home / "findings-experiments.csv").read_text())))
    assert len(rows) == 8 and {r["instance_type"] for r in rows} == {"ml.p3.2xlarge", "ml.g4dn.2xlarge"}
    spot_row = next(r for r in rows if r["job"] == "resnet50-g4dn-bs128-lr01")
    assert spot_row["setting"] == "batch_size=128 learning_rate=0.1" and spot_row["spot_cost_estimated"] == "False"


def test_html_and_text_have_the_training_section(jobs_home: Path) -> None:
    html = runner.invoke(app, ["run", "--format", "html", "--no-history"]).output
    assert "Training and batch" in html and "Experiment resnet50" in html
    assert "is cheapest per run" in html


def test_name_patterns_and_unpriced_jobs() -> None:
    assert name_pattern("nightly-scoring-2026-11-16") == "nightly-scoring-#-#-#"
    from datetime import datetime

    from auditor.kinds.jobs.models import TrainingJob

    job = TrainingJob("1", "us-east-1", "j", "Completed", "ml.inf2.xlarge", 1, datetime.now(UTC), None, None,
                      600, 600, False, None, None, None, "img", {}, {})
    cost = training_cost(job, load_catalog(), 0.7)
    assert cost.cost_usd is None  # Inferentia is not offered for training: no price, no guess
