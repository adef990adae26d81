"""HyperPod clusters through the resource-kind seam, end to end: `audit run` against the emulator
seeded with the demo's two clusters (an EKS cluster whose evaluation group idled all window, and a
Slurm cluster), priced at the bundled HyperPod rate of ml.g5.8xlarge in us-east-1 ($3.06 an hour,
usage type USE1-Cluster:ml.g5.8xlarge)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.kinds.registry import BY_KEY
from conftest import audit_json

runner = CliRunner()
RATE = 3.06  # ml.g5.8xlarge HyperPod, us-east-1


@pytest.fixture(scope="module")
def report(hyperpod_home: Path) -> dict:
    return audit_json(hyperpod_home)


def test_hyperpod_is_a_registered_kind_with_its_own_iam_actions() -> None:
    kind = BY_KEY["hyperpod"]
    assert {"sagemaker:ListClusters", "sagemaker:DescribeCluster", "sagemaker:ListClusterNodes"} <= kind.iam_actions


def test_clusters_are_listed_with_nodes_and_cost(report: dict) -> None:
    section = report["hyperpod"]
    clusters = {c["cluster"]: c for c in section["clusters"]}
    assert set(clusters) == {"llm-platform", "research-slurm"}
    eks = clusters["llm-platform"]
    assert eks["orchestrator"] == "eks" and len(eks["nodes"]) == 5
    assert eks["monthly_cost"] == pytest.approx(5 * RATE * 730, abs=0.01)
    groups = {g["name"]: g for g in eks["instance_groups"]}
    assert groups["eval-g5-8xl"]["monthly_cost"] == pytest.approx(2 * RATE * 730, abs=0.01)
    slurm = clusters["research-slurm"]
    # No HyperPod rate for its types in the snapshot: not priced, never the training or hosting rate.
    assert slurm["monthly_cost"] is None and all(g["unpriced"] for g in slurm["instance_groups"])
    assert section["summary"]["clusters"] == 2 and section["summary"]["monthly_cost_usd"] is None


def test_idle_group_is_a_finding_and_a_plan_and_the_busy_one_is_not(report: dict) -> None:
    idle = [f for f in report["findings"] if f["rule"] == "hyperpod-idle-nodes"]
    assert [(f["resource"]["name"], f["variant"]) for f in idle] == [("llm-platform", "eval-g5-8xl")]
    finding = idle[0]
    assert finding["resource"]["type"] == "hyperpod-cluster"
    assert finding["recommendation"]["monthly_savings_usd"] == pytest.approx(2 * RATE * 730, abs=0.01)
    assert finding["recommendation"]["advice"] == "shrink instance group eval-g5-8xl to 0 x ml.g5.8xlarge"
    plans = [p for p in report["plans"] if p["resource"]["type"] == "hyperpod-cluster"]
    assert [(p["resource"]["name"], p["variant"]) for p in plans] == [("llm-platform", "eval-g5-8xl")]


def test_slurm_cluster_is_not_judged_and_says_how_to_enable_a_metric(report: dict) -> None:
    slurm = next(c for c in report["hyperpod"]["clusters"] if c["cluster"] == "research-slurm")
    (note,) = slurm["not_judged"]
    assert note["reason"].startswith("not judged: no utilisation metric")
    assert note["how_to_enable"]
    assert not slurm["findings"]


def test_hyperpod_prices_are_stated_with_their_source(report: dict) -> None:
    used = [u for u in report["prices"]["used"] if u["usage"] == "hyperpod"]
    assert used == [{"region": "us-east-1", "instance_type": "ml.g5.8xlarge", "usage": "hyperpod",
                     "price_per_hour": RATE, "price_basis": "hyperpod", "source": "bundled", "as_of": "2026-09-16",
                     "kind": "list"}]


def test_hyperpod_off_makes_no_cluster_call(hyperpod_home: Path) -> None:
    (hyperpod_home / "auditor.toml").write_text("[hyperpod]\nenabled = false\n")
    try:
        result = runner.invoke(app, ["run", "--format", "json", "--output", str(hyperpod_home / "off.json"),
                                     "--no-history"])
    finally:
        (hyperpod_home / "auditor.toml").unlink()
    assert result.exit_code == 0, result.output
    doc = json.loads((hyperpod_home / "off.json").read_text())
    assert doc["hyperpod"]["clusters"] == []
    assert not [op for op in doc["summary"]["api_calls_by_operation"] if "Cluster" in op]
