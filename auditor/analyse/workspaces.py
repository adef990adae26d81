"""Costs of notebook instances, Studio apps and processing jobs. Pure: models in, figures out.

The bundled catalog lists hosting prices only. Notebook instances and Studio apps are priced at the
hosting list price of the same type (SageMaker's notebook and Studio rates are list prices of their
own; where they differ from hosting, the report's figures differ by that much), and every figure
says so (`price_basis`). Processing jobs are priced like batch transform: duration x count x the
hosting price. The ML storage volume of a notebook instance is priced from `data/workspaces.json`.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from importlib import resources

from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.models import ProcessingCost, ProcessingJob
from auditor.workspaces import NotebookCost, NotebookInstance, StudioApp, StudioAppCost

PRICE_BASIS = "hosting"  # notebook and Studio compute: the catalog's hosting list price of the type
RUNNING = frozenset({"InService", "Pending", "Updating"})


@cache
def storage_prices() -> tuple[str, str, dict[str, float]]:
    """(source, as_of, region -> $ per GB-month) of the ML storage volume."""
    data = json.loads(resources.files("auditor.data").joinpath("workspaces.json").read_text("utf-8"))
    return data["source"], data["as_of"], {k: float(v) for k, v in data["storage_price_per_gb_month"].items()}


def storage_price(region: str, catalog: Catalog) -> float | None:
    prices = storage_prices()[2]
    if region in prices:
        return prices[region]
    return prices.get(catalog.fallback_price_region) if catalog.fallback_price_region else None


def notebook_cost(notebook: NotebookInstance, catalog: Catalog) -> NotebookCost:
    price = catalog.hourly_price(notebook.instance_type, notebook.region)
    running = notebook.status in RUNNING
    compute = None if price is None else round(price * HOURS_PER_MONTH, 2) if running else 0.0
    per_gb = storage_price(notebook.region, catalog)
    storage = None if per_gb is None else round(per_gb * notebook.volume_size_gb, 2)
    return NotebookCost(notebook, price, compute, storage, PRICE_BASIS)


def studio_app_cost(app: StudioApp, catalog: Catalog, now: datetime) -> StudioAppCost:
    price = catalog.hourly_price(app.instance_type, app.region) if app.instance_type else None
    since = app.user_activity or app.created_at
    idle = None if since is None else max(0.0, (now - since).total_seconds() / 3600)
    monthly = None if price is None else round(price * HOURS_PER_MONTH, 2)
    return StudioAppCost(app, price, monthly if app.status == "InService" else (0.0 if price else None), idle)


def processing_cost(job: ProcessingJob, catalog: Catalog) -> ProcessingCost:
    price = catalog.hourly_price(job.instance_type, job.region)
    seconds = job.duration_seconds
    cost = None if price is None or seconds is None else round(seconds / 3600 * price * job.instance_count, 4)
    return ProcessingCost(job, price, cost)
