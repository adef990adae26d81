"""Costs of notebook instances and Studio apps. Pure: models in, figures out.

Each usage is priced at its own rate (notebook instances, Studio apps by app type)
where the prices have it (after `audit prices update` or an offer-file import); where they do not
(the bundled snapshot lists hosting and training only), at the hosting list price of the same type.
Every figure says which (`price_basis`). The ML
storage volume of a notebook instance is priced from `data/workspaces.json`.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from importlib import resources

from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.kinds.workspaces.models import NotebookCost, NotebookInstance, StudioApp, StudioAppCost
from auditor.prices.parse import studio_usage

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
    price, basis = _rate(catalog, notebook.instance_type, notebook.region, "notebook")
    running = notebook.status in RUNNING
    compute = None if price is None else round(price * HOURS_PER_MONTH, 2) if running else 0.0
    per_gb = storage_price(notebook.region, catalog)
    storage = None if per_gb is None else round(per_gb * notebook.volume_size_gb, 2)
    return NotebookCost(notebook, price, compute, storage, basis)


def _rate(catalog: Catalog, instance_type: str, region: str, usage: str) -> tuple[float | None, str]:
    """The usage's hourly rate and whose rate it is ("hosting" when the prices have none of its own)."""
    found = catalog.rate(instance_type, region, usage)
    return (None, usage) if found is None else found


def studio_app_cost(app: StudioApp, catalog: Catalog, now: datetime) -> StudioAppCost:
    usage = studio_usage(app.app_type)
    price, basis = _rate(catalog, app.instance_type, app.region, usage) if app.instance_type else (None, usage)
    since = app.user_activity or app.created_at
    idle = None if since is None else max(0.0, (now - since).total_seconds() / 3600)
    monthly = None if price is None else round(price * HOURS_PER_MONTH, 2)
    return StudioAppCost(app, price, monthly if app.status == "InService" else (0.0 if price else None), idle,
                         basis)
