"""The jobs kind's own parts of the outputs: the experiments table the CSV output writes beside
the findings (`<output>-experiments.csv`), and each job's hosts for the reports' "now" column."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.kinds.base import CsvTable, ShapeKey, shape_key

EXPERIMENT_COLUMNS = ("experiment", "job", "instance_type", "instance_count", "setting", "training_seconds",
                      "on_demand_cost_usd", "spot_cost_usd", "spot_cost_estimated", "final_metrics")


def csv_tables(section: dict[str, Any]) -> Mapping[str, CsvTable]:
    """One row per training run of every experiment; the varied hyperparameters as k=v pairs."""
    rows = [
        {
            "experiment": e["name"], "job": r["job"], "instance_type": r["instance_type"],
            "instance_count": r["instance_count"],
            "setting": " ".join(f"{k}={v}" for k, v in r["setting"].items()),
            "training_seconds": r["training_seconds"], "on_demand_cost_usd": r["on_demand_cost_usd"],
            "spot_cost_usd": r["spot_cost_usd"], "spot_cost_estimated": r["spot_cost_estimated"],
            "final_metrics": " ".join(f"{k}={v:g}" for k, v in r["final_metrics"].items()),
        }
        for e in section["experiments"] for r in e["runs"]
    ]
    return {"experiments": (EXPERIMENT_COLUMNS, rows)}


def shapes(section: dict[str, Any]) -> Mapping[ShapeKey, str]:
    """Each job's hosts (Spot or on-demand for training)."""
    found: dict[ShapeKey, str] = {}
    for j in section.get("training", []):
        found[shape_key("training-job", j, j["name"])] = (f"{'Spot' if j.get('spot') else 'on-demand'} "
                                                         f"{j['instance_count']} x {j['instance_type']}")
    for kind, part in (("transform-job", "transform"), ("processing-job", "processing")):
        for j in section.get(part, []):
            found[shape_key(kind, j, j["name"])] = f"{j['instance_count']} x {j['instance_type']}"
    return found
