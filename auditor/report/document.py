"""The report as plain data: the JSON document (see SCHEMA_VERSION), which every renderer reads."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from importlib import resources
from typing import Any, TextIO

from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.kinds.registry import KINDS
from auditor.models import AuditReport, PriceUse, ReportSettings
from auditor.records import finding_to_dict, plan_to_dict
from auditor.report.headline import headline, incomplete, summary_figures
from auditor.values import iso

# 2: the `jobs` section (training and batch transform), `resource_type` on findings.
# 3: `plans` (one per variant: what to change, with alternatives); findings carry `title` and
#    `remediation`; variants carry `average_instances`; the summary's saving is the plans' sum;
#    `partial` (null, or why the run stopped early); the summary's `api_calls` and `call_problems`.
# 4: `jobs.processing` (processing jobs) and its summary figures; `workspaces` (notebook instances
#    and Studio; null when not audited); resource types processing-job, notebook-instance,
#    studio-app and studio-domain on findings and plans.
# 5: `accounts` (several accounts) and `account_id` on errors; `savings_plans`; `measured` on plans;
#    the summary's `accounts_audited`, `accounts`, `api_calls_by_operation` and `collection`;
#    in `prices`: `basis`, `statement`, `by_region`, `used`, `warnings`, `reconciliation`.
# 6: plans carry `id` (stable between runs), `risk` (the replay on the proposed shape, what needs a
#    load test first) and `change` (the AWS requests that apply it); options carry `details`.
# 7: each of a plan's `alternatives` carries its own `measured`, `risk` and `change` (`audit apply ID
#    --option N` applies the Nth).
# 8: the summary's `findings` counts the findings above info only (each a reason to act); the info
#    findings are its `not_judged`; `headline` (the line every output opens with), `incomplete`,
#    `unread` (the regions and accounts not read), `plans_counted`, `plans_not_counted` and
#    `plans_costing_more` (what the headline saving leaves out). Plans are ordered by saving.
#    Endpoint plans carry `basis` (what the plan was computed from: `audit apply` compares it with
#    the live endpoint and refuses when it differs).
# 9: findings and plans name what they are about in `resource` ({kind, type, name, account_id,
#    region}: kind the resource kind's key, type the former `resource_type`, name the former
#    `endpoint`), in place of their top-level `account_id`, `region`, `endpoint` and `resource_type`;
#    the document validates against auditor/data/audit-report.schema.json (docs/json-schema.md).
SCHEMA_VERSION = 9
# The document's JSON Schema (draft 2020-12), shipped as package data; docs/ holds the same file.
SCHEMA_FILE = "audit-report.schema.json"


def report_schema() -> dict[str, Any]:
    """The JSON Schema every document of SCHEMA_VERSION validates against."""
    schema = json.loads((resources.files("auditor.data") / SCHEMA_FILE).read_text(encoding="utf-8"))
    return dict(schema)


def prices_to_dict(report: AuditReport) -> dict[str, Any]:
    """Where every price came from: the bundled snapshot, the Price List API's cache, an imported
    offer file or (basis effective) Cost Explorer; `statement` says it in one line for the reports."""
    info = report.catalog
    used = [
        {"region": u.region, "instance_type": u.instance_type, "usage": u.usage,
         "price_per_hour": u.price_per_hour, "price_basis": u.price_basis or u.usage, "source": u.source,
         "as_of": u.as_of, "kind": u.kind}
        for u in info.used
    ]
    regions: dict[str, set[tuple[str, str, str]]] = {}
    for u in info.used:
        regions.setdefault(u.region, set()).add((u.source, u.kind, u.as_of))
    by_region = [
        {"region": region, "sources": [{"source": s, "kind": k, "as_of": d} for s, k, d in sorted(origins)]}
        for region, origins in sorted(regions.items())
    ]
    return {
        "source": info.source,
        "as_of": info.as_of,
        "priced_regions": list(info.priced_regions),
        "basis": info.basis,
        "statement": price_statement(info.basis, by_region, info.as_of, at_hosting_rate(info.used)),
        "by_region": by_region,
        "used": used,
        "warnings": list(info.warnings),
        "reconciliation": [
            {"region": r.region, "estimated_monthly_usd": r.estimated_monthly_usd,
             "billed_monthly_usd": r.billed_monthly_usd, "coverage_percent": r.coverage_percent}
            for r in info.reconciliation
        ],
    }


_SOURCE_NAMES = {"bundled": "the bundled snapshot", "price-list-api": "the AWS Price List API",
                 "offer-file": "an AWS offer file", "cost-explorer": "Cost Explorer (the account's own rate)"}


_USAGE_NAMES = {"async": "asynchronous inference", "batch": "batch transform", "processing": "processing jobs",
                "notebook": "notebook instances"}


def at_hosting_rate(used: Iterable[PriceUse]) -> tuple[str, ...]:
    """The usages priced at the hosting rate of their type, the prices having no rate of their own."""
    return tuple(sorted({u.usage for u in used if u.price_basis and u.price_basis != u.usage}))


def price_statement(basis: str, by_region: list[dict[str, Any]], as_of: str, fallback: tuple[str, ...] = ()) -> str:
    """E.g. "Basis: list prices. eu-central-1: the AWS Price List API (list, 2026-11-30)."."""
    head = ("Basis: effective rates (what the account paid over the last 30 days, from Cost Explorer) "
            "where the account used a type, list prices elsewhere." if basis == "effective"
            else "Basis: on-demand list prices.")
    tail = ""
    if fallback:
        names = ", ".join(_USAGE_NAMES.get(u, f"Studio {u.removeprefix('studio-')} apps") for u in fallback)
        tail = (f" {names[0].upper()}{names[1:]}: at the hosting rate of the same type (the prices have no "
                "rate of their own for them; audit prices update fetches them).")
    if not by_region:
        return f"{head} Prices: the bundled snapshot as of {as_of}.{tail}"
    parts = []
    for region in by_region:
        # Each source named once, with its newest date (and the older ones some of its prices carry).
        dates: dict[tuple[str, str], list[str]] = {}
        for s in region["sources"]:
            dates.setdefault((s["source"], s["kind"]), []).append(s["as_of"])
        sources = "; ".join(
            f"{_SOURCE_NAMES.get(source, source)} ({kind}, as of {max(ds)}"
            + (f"; some prices as of {', '.join(sorted(set(ds) - {max(ds)}))}" if len(set(ds)) > 1 else "") + ")"
            for (source, kind), ds in dates.items())
        parts.append(f"{region['region']}: {sources}")
    return f"{head} Prices by region: " + ". ".join(parts) + "." + tail


def settings_to_dict(settings: ReportSettings) -> dict[str, Any]:
    return {
        "regions": list(settings.regions),
        "lookback_days": settings.lookback_days,
        "thresholds": asdict(settings.thresholds),
        "sizing_statistic": settings.sizing_statistic,
        "peak_statistic": settings.peak_statistic,
        "target_utilization": settings.target_utilization,
        "min_days": settings.min_days,
    }


def report_to_dict(report: AuditReport) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, Iterator) else value for key, value in _document(report).items()}


def write_report_json(report: AuditReport, out: TextIO) -> None:
    """The JSON document written to `out` piece by piece, as json.dumps(report_to_dict(report),
    indent=2) + "\n" would write it, but never whole in memory: each endpoint and finding is
    made, written and let go in turn (at 10,000 endpoints the document as Python objects took a
    few hundred MB)."""
    out.write("{")
    for position, (key, value) in enumerate(_document(report).items()):
        out.write(("\n" if position == 0 else ",\n") + "  " + json.dumps(key) + ": ")
        if not isinstance(value, Iterator):
            out.write(json.dumps(value, indent=2).replace("\n", "\n  "))
            continue
        empty = True
        for item in value:
            out.write(("[\n" if empty else ",\n") + "    " + json.dumps(item, indent=2).replace("\n", "\n    "))
            empty = False
        out.write("[]" if empty else "\n  ]")
    out.write("\n}\n")


def _document(report: AuditReport) -> dict[str, Any]:
    """The document, its long lists (endpoints, findings) as iterators made on demand."""
    figures = summary_figures(report)
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": iso(report.generated_at),
        "partial": report.partial,
        "window": {
            "start": iso(report.window.start),
            "end": iso(report.window.end),
            "period_seconds": report.window.period_seconds,
        },
        "settings": settings_to_dict(report.settings),
        "prices": prices_to_dict(report),
        "accounts": [
            {"id": a.id, "name": a.name, "audited": a.audited, "regions": list(a.regions),
             "skipped_regions": list(a.skipped_regions), "error": a.error}
            for a in report.accounts
        ],
        "plans": [plan_to_dict(p) for p in report.plans],
        "savings_plans": [
            {"term": s.term, "payment_option": s.payment_option, "lookback": s.lookback,
             "hourly_commitment_usd": s.hourly_commitment_usd,
             "estimated_monthly_savings_usd": s.estimated_monthly_savings_usd,
             "estimated_savings_percent": s.estimated_savings_percent,
             "current_on_demand_spend_usd": s.current_on_demand_spend_usd, "coverage_percent": s.coverage_percent,
             "source": "AWS Cost Explorer's recommendation, computed on the usage before the plans above"}
            for s in report.savings_plans
        ],
        "findings": (finding_to_dict(f) for f in report.findings),
        # Each resource kind's section (auditor.kinds), in the kinds' order: endpoints, jobs, workspaces, ...
        **{kind.key: kind.to_dict(kind.section(report)) for kind in KINDS},
        "skipped": [
            {
                "region": e.endpoint.region,
                "endpoint": e.endpoint.name,
                "rules": sorted(e.endpoint.skipped_rules) or None,
                "reason": e.endpoint.skipped_reason,
            }
            for e in ENDPOINTS.section(report)
            if e.endpoint.skipped_reason
        ],
        "summary": {
            "headline": headline(figures),
            "incomplete": incomplete(figures),
            "endpoints": len(ENDPOINTS.section(report)),
            **{key: value for key, value in figures.items() if key != "partial"},  # the document's own
            "findings_by_severity": report.findings_by_severity(),
            "monthly_cost_usd": report.monthly_cost_usd,
            "monthly_cost_by_kind": report.monthly_cost_by_kind,
            "accounts_audited": sum(1 for a in report.accounts if a.audited),
            "accounts": len(report.accounts),
            "api_calls": sum(report.api_calls.values()),
            "api_calls_by_operation": report.api_calls,
            "collection": [{"account_id": c.account_id or None, "region": c.region, "metric_queries": c.queries,
                            "datapoints": c.datapoints, "get_metric_data_calls": c.calls}
                           for c in report.collection],
            "call_problems": report.call_problems,
        },
        "errors": [
            {"account_id": e.account_id or None, "region": e.region, "endpoint": e.endpoint, "stage": e.stage,
             "message": e.message}
            for e in report.errors
        ],
    }
