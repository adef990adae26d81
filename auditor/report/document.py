"""The report as plain data: the JSON document (see SCHEMA_VERSION), which every renderer reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any, TextIO

from auditor.models import (
    AuditReport,
    AutoScaling,
    ComponentReport,
    EndpointReport,
    Finding,
    JobsSection,
    Plan,
    PlanOption,
    Resource,
    VariantReport,
)
from auditor.recommend.wording import advice_text
from auditor.workspaces import WorkspacesSection

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
SCHEMA_VERSION = 5


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _utilization(variant: VariantReport | ComponentReport) -> dict[str, Any]:
    util = variant.utilization
    out: dict[str, Any] = {}
    for resource in Resource:
        figures = util.get(resource) if util else None
        out[resource.value] = (
            None if figures is None else {"avg": figures.avg, "p95": figures.p95, "max": figures.max}
        )
    return out


def _autoscaling(scaling: AutoScaling | None) -> dict[str, Any] | None:
    if scaling is None:
        return None
    return {"min_capacity": scaling.min_capacity, "max_capacity": scaling.max_capacity,
            "policies": list(scaling.policies)}


def _money(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _summary(utilization: Any) -> dict[str, Any] | None:
    if utilization is None:
        return None
    return {r.value: {"avg": u.avg, "p95": u.p95, "max": u.max} for r, u in utilization.by_resource.items()}


def jobs_to_dict(jobs: JobsSection) -> dict[str, Any]:
    training = [
        {
            "account_id": c.job.account_id, "region": c.job.region, "name": c.job.name, "status": c.job.status,
            "instance_type": c.job.instance_type, "instance_count": c.job.instance_count, "spot": c.job.spot,
            "created_at": _iso(c.job.created_at), "training_seconds": c.job.training_seconds,
            "billable_seconds": c.job.billable_seconds, "cost_usd": _money(c.cost_usd),
            "on_demand_cost_usd": _money(c.on_demand_cost_usd), "spot_cost_usd": _money(c.spot_cost_usd),
            "spot_cost_estimated": c.spot_estimated, "spot_saving_usd": _money(c.spot_saving_usd),
            "checkpoint_config": bool(c.job.checkpoint_s3_uri), "max_wait_seconds": c.job.max_wait_seconds,
            "image": c.job.image, "hyperparameters": c.job.hyperparameters, "final_metrics": c.job.final_metrics,
            "utilization": _summary(c.utilization),
        }
        for c in jobs.training
    ]
    transform = [
        {
            "account_id": c.job.account_id, "region": c.job.region, "name": c.job.name, "status": c.job.status,
            "instance_type": c.job.instance_type, "instance_count": c.job.instance_count,
            "model_name": c.job.model_name, "created_at": _iso(c.job.created_at),
            "duration_seconds": c.job.duration_seconds, "cost_usd": _money(c.cost_usd),
            "utilization": _summary(c.utilization),
        }
        for c in jobs.transform
    ]
    experiments = [
        {
            "name": e.name, "image": e.image, "varied": list(e.varied),
            "runs": [
                {"job": r.job, "instance_type": r.instance_type, "instance_count": r.instance_count,
                 "setting": r.setting, "training_seconds": r.training_seconds,
                 "on_demand_cost_usd": _money(r.on_demand_cost_usd), "spot_cost_usd": _money(r.spot_cost_usd),
                 "spot_cost_estimated": r.spot_estimated, "final_metrics": r.final_metrics}
                for r in e.runs
            ],
            "verdicts": [
                {"setting": v.setting, "cheapest_instance_type": v.cheapest_instance_type,
                 "cost_per_run_usd": _money(v.cost_per_run_usd),
                 "spot_cost_per_run_usd": _money(v.spot_cost_per_run_usd),
                 "cost_per_run_by_instance_type": {t: _money(c) for t, c in v.alternatives.items()}}
                for v in e.verdicts
            ],
        }
        for e in jobs.experiments
    ]
    processing = [
        {
            "account_id": c.job.account_id, "region": c.job.region, "name": c.job.name, "status": c.job.status,
            "instance_type": c.job.instance_type, "instance_count": c.job.instance_count, "image": c.job.image,
            "created_at": _iso(c.job.created_at), "duration_seconds": c.job.duration_seconds,
            "cost_usd": _money(c.cost_usd), "utilization": _summary(c.utilization),
        }
        for c in jobs.processing
    ]
    realised = [c.spot_saving_usd for c in jobs.training if c.job.spot]
    potential = [c.spot_saving_usd for c in jobs.training if not c.job.spot and c.job.status == "Completed"]
    return {
        "summary": {
            "training_jobs": len(training),
            "training_cost_usd": round(sum(c.cost_usd or 0.0 for c in jobs.training), 2),
            "spot_saving_realised_usd": round(sum(v or 0.0 for v in realised), 2),
            "spot_saving_potential_usd": round(sum(v or 0.0 for v in potential), 2),
            "transform_jobs": len(transform),
            "transform_cost_usd": round(sum(c.cost_usd or 0.0 for c in jobs.transform), 2),
            "processing_jobs": len(processing),
            "processing_cost_usd": round(sum(c.cost_usd or 0.0 for c in jobs.processing), 2),
        },
        "training": training,
        "transform": transform,
        "experiments": experiments,
        "processing": processing,
    }


def _time(value: datetime | None) -> str | None:
    return None if value is None else _iso(value)


def workspaces_to_dict(section: WorkspacesSection | None) -> dict[str, Any] | None:
    """Notebook instances and Studio, or None when they were not audited."""
    if section is None:
        return None
    notebooks = [
        {
            "account_id": c.notebook.account_id, "region": c.notebook.region, "name": c.notebook.name,
            "status": c.notebook.status, "instance_type": c.notebook.instance_type,
            "volume_size_gb": c.notebook.volume_size_gb, "lifecycle_config": c.notebook.lifecycle_config,
            "idle_stop": c.notebook.idle_stop, "accelerator_types": list(c.notebook.accelerator_types),
            "created_at": _iso(c.notebook.created_at), "last_modified_at": _iso(c.notebook.last_modified_at),
            "tags": c.notebook.tags, "price_per_hour": c.price_per_hour, "price_basis": c.price_basis,
            "compute_monthly_usd": c.compute_monthly_usd, "storage_monthly_usd": c.storage_monthly_usd,
            "monthly_cost_usd": c.monthly_cost_usd,
        }
        for c in section.notebooks
    ]
    apps = [
        {
            "account_id": c.app.account_id, "region": c.app.region, "domain_id": c.app.domain_id,
            "app_type": c.app.app_type, "app_name": c.app.app_name, "owner": c.app.owner, "status": c.app.status,
            "instance_type": c.app.instance_type, "created_at": _time(c.app.created_at),
            "last_user_activity": _time(c.app.last_user_activity), "last_health_check": _time(c.app.last_health_check),
            "idle_hours": None if c.idle_hours is None else round(c.idle_hours, 1),
            "price_per_hour": c.price_per_hour, "monthly_cost_usd": c.monthly_usd,
        }
        for c in section.apps
    ]
    return {
        "summary": {
            "notebooks": len(notebooks),
            "notebooks_in_service": sum(1 for n in section.notebooks if n.notebook.status == "InService"),
            "notebooks_monthly_cost_usd": round(sum(n.monthly_cost_usd or 0.0 for n in section.notebooks), 2),
            "studio_domains": len(section.domains),
            "studio_apps": len(apps),
            "studio_apps_monthly_cost_usd": round(sum(a.monthly_usd or 0.0 for a in section.apps), 2),
            "price_basis": "notebook and Studio compute at the hosting list price of the same type",
            "storage_prices": section.storage_price_source,
        },
        "notebooks": notebooks,
        "studio": {
            "domains": [{"account_id": d.account_id, "region": d.region, "domain_id": d.domain_id, "name": d.name,
                         "status": d.status, "idle_timeout_minutes": d.idle_timeout_minutes}
                        for d in section.domains],
            "spaces": [{"region": s.region, "domain_id": s.domain_id, "name": s.name, "app_type": s.app_type,
                        "idle_timeout_minutes": s.idle_timeout_minutes} for s in section.spaces],
            "apps": apps,
        },
    }


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
    }


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "account_id": plan.account_id,
        "region": plan.region,
        "endpoint": plan.endpoint,
        "variant": plan.variant,
        "resource_type": plan.resource_type,
        "current": {"instance_type": plan.current_instance_type, "instance_count": plan.current_instance_count,
                    "monthly_cost_usd": plan.current_monthly_usd},
        "proposed": _option(plan.proposed),
        "monthly_savings_usd": plan.monthly_savings_usd,
        "measured": plan.measured,
        "findings": list(plan.findings),
        "alternatives": [_option(o) for o in plan.alternatives],
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
         "price_per_hour": u.price_per_hour, "source": u.source, "as_of": u.as_of, "kind": u.kind}
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
        "statement": price_statement(info.basis, by_region, info.as_of),
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


def price_statement(basis: str, by_region: list[dict[str, Any]], as_of: str) -> str:
    """E.g. "Basis: list prices. eu-central-1: the AWS Price List API (list, 2026-11-30)."."""
    head = ("Basis: effective rates (what the account paid over the last 30 days, from Cost Explorer) "
            "where the account used a type, list prices elsewhere." if basis == "effective"
            else "Basis: on-demand list prices.")
    if not by_region:
        return f"{head} Prices: the bundled snapshot as of {as_of}."
    parts = []
    for region in by_region:
        sources = "; ".join(f"{_SOURCE_NAMES.get(s['source'], s['source'])} ({s['kind']}, {s['as_of']})"
                            for s in region["sources"])
        parts.append(f"{region['region']}: {sources}")
    return f"{head} Prices by region: " + ". ".join(parts) + "."


def endpoint_to_dict(e: EndpointReport) -> dict[str, Any]:
    return {
        "account_id": e.endpoint.account_id,
        "region": e.endpoint.region,
        "name": e.endpoint.name,
        "status": e.endpoint.status,
        "kind": e.endpoint.kind.value,
        "created_at": _iso(e.endpoint.created_at),
        "tags": e.endpoint.tags,
        "not_judged_reason": e.endpoint.not_judged_reason,
        "skipped_reason": e.endpoint.skipped_reason,
        "skipped_rules": sorted(e.endpoint.skipped_rules) or None,
        "variants": [
            {
                "name": v.variant.name,
                "instance_type": v.variant.instance_type,
                "instance_count": v.variant.instance_count,
                "serverless_memory_mb": v.variant.serverless_memory_mb,
                "monthly_cost_usd": v.monthly_cost_usd,
                "average_instances": v.average_instances,
                "utilization": _utilization(v),
                "invocations": v.utilization.invocations if v.utilization else None,
                "instance_metric_days": v.utilization.instance_metric_days if v.utilization else None,
                "autoscaling": (_autoscaling(v.variant.autoscaling) if e.endpoint.autoscaling_known
                                else "unknown"),
            }
            for v in e.variants
        ],
        "inference_components": [
            {
                "name": c.component.name,
                "variant": c.component.variant,
                "status": c.component.status,
                "copy_count": c.component.copy_count,
                "per_copy": {"cpu_cores": c.component.cpu_cores, "accelerators": c.component.accelerators,
                             "memory_mb": c.component.memory_mb},
                "utilization": _utilization(c),
            }
            for c in e.components
        ],
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
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": _iso(report.generated_at),
        "partial": report.partial,
        "window": {
            "start": _iso(report.window.start),
            "end": _iso(report.window.end),
            "period_seconds": report.window.period_seconds,
        },
        "settings": report.settings,
        "prices": prices_to_dict(report),
        "endpoints": (endpoint_to_dict(e) for e in report.endpoints),
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
        "jobs": jobs_to_dict(report.jobs),
        "workspaces": workspaces_to_dict(report.workspaces),
        "skipped": [
            {
                "region": e.endpoint.region,
                "endpoint": e.endpoint.name,
                "rules": sorted(e.endpoint.skipped_rules) or None,
                "reason": e.endpoint.skipped_reason,
            }
            for e in report.endpoints
            if e.endpoint.skipped_reason
        ],
        "summary": {
            "endpoints": len(report.endpoints),
            "findings": len(report.findings),
            "findings_by_severity": report.findings_by_severity(),
            "monthly_cost_usd": report.monthly_cost_usd,
            "monthly_savings_usd": report.monthly_savings_usd,
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
