"""The report as plain data: the JSON document (see SCHEMA_VERSION), which every renderer reads."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import Any, TextIO

from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.kinds.registry import KINDS
from auditor.models import (
    ApiCall,
    AuditReport,
    Change,
    Finding,
    Plan,
    PlanBasis,
    PlanOption,
    PriceUse,
    ReportSettings,
    Risk,
)
from auditor.report.headline import headline, incomplete, summary_figures
from auditor.values import iso
from auditor.wording import advice_text

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
SCHEMA_VERSION = 8


def _option(option: PlanOption) -> dict[str, Any]:
    return {
        "rules": list(option.rules),
        "action": option.action,
        "instance_type": option.instance_type,
        "instance_count": option.instance_count,
        "autoscaling": option.autoscaling,
        "monthly_cost_usd": option.monthly_cost_usd,
        "monthly_savings_usd": option.monthly_savings_usd,
        "advice": option.advice,
        "details": option.details,
    }


def call_to_dict(call: ApiCall) -> dict[str, Any]:
    return {"service": call.service, "operation": call.operation, "params": call.params, "purpose": call.purpose}


def risk_to_dict(risk: Risk | None) -> dict[str, Any] | None:
    if risk is None:
        return None
    return {
        "level": risk.level.value,
        "replays": [{"resource": r.resource.value, "p95": r.p95, "peak": r.peak,
                     "hours_over_target": r.hours_over_target, "hours_over_100": r.hours_over_100,
                     "headroom_at_peak": r.headroom_at_peak} for r in risk.replays],
        "load_test_first": list(risk.load_test_first),
        "load_test_request": None if risk.load_test_request is None else call_to_dict(risk.load_test_request),
        "basis": list(risk.basis),
    }


def change_to_dict(change: Change | None) -> dict[str, Any] | None:
    if change is None:
        return None
    return {"calls": [call_to_dict(c) for c in change.calls], "rollback": change.rollback,
            "waits_for": change.waits_for, "restore": [call_to_dict(c) for c in change.restore]}


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "id": plan.id,
        "account_id": plan.account_id,
        "region": plan.region,
        "endpoint": plan.endpoint,
        "variant": plan.variant,
        "resource_type": plan.resource_type,
        "current": {"instance_type": plan.current_instance_type, "instance_count": plan.current_instance_count,
                    "monthly_cost_usd": plan.current_monthly_usd, "endpoint_config_name": plan.endpoint_config},
        "proposed": _option(plan.proposed),
        "monthly_savings_usd": plan.monthly_savings_usd,
        "measured": plan.measured,
        "findings": list(plan.findings),
        "alternatives": [{**_option(o), "measured": o.measured, "risk": risk_to_dict(o.risk),
                          "change": change_to_dict(o.change)} for o in plan.alternatives],
        "risk": risk_to_dict(plan.risk),
        "change": change_to_dict(plan.change),
        "basis": basis_to_dict(plan.basis),
    }


def basis_to_dict(basis: PlanBasis | None) -> dict[str, Any] | None:
    """What an endpoint plan was computed from (`audit apply` reads it live again and compares)."""
    if basis is None:
        return None
    return {
        "endpoint_config_name": basis.endpoint_config_name,
        "status": basis.status,
        "autoscaling_read": basis.autoscaling_read,
        "variants": [{
            "name": v.name, "instance_type": v.instance_type, "instance_count": v.instance_count,
            "weight": v.weight, "shadow": v.shadow,
            "serverless": None if v.serverless_memory_mb is None else {
                "memory_size_mb": v.serverless_memory_mb, "max_concurrency": v.serverless_max_concurrency},
            "managed_instance_scaling": None if v.managed_scaling is None else {
                "min_instances": v.managed_scaling.min_instances, "max_instances": v.managed_scaling.max_instances},
            "autoscaling": None if v.autoscaling is None else {
                "min_capacity": v.autoscaling.min_capacity, "max_capacity": v.autoscaling.max_capacity,
                "policies": list(v.autoscaling.policies)},
        } for v in basis.variants],
    }


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    rec = finding.recommendation
    return {
        "rule": finding.rule,
        "title": finding.title,
        "remediation": finding.remediation,
        "resource_type": finding.resource_type,
        "severity": finding.severity.value,
        "account_id": finding.account_id,
        "region": finding.region,
        "endpoint": finding.endpoint,
        "variant": finding.variant,
        "message": finding.message,
        "evidence": finding.evidence,
        "recommendation": None if rec is None else {
            "action": rec.action,
            "instance_type": rec.instance_type,
            "instance_count": rec.instance_count,
            "current_monthly_usd": rec.current_monthly_usd,
            "recommended_monthly_usd": rec.recommended_monthly_usd,
            "monthly_savings_usd": rec.monthly_savings_usd,
            "advice": advice_text(rec),
            "details": rec.details,
        },
    }


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
