"""The jobs kind's own parts of the outputs: the experiments table the CSV output writes beside
the findings (`<output>-experiments.csv`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.kinds.base import CsvTable

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
