"""The report as plain data: the JSON document (schema_version 1), which every renderer reads."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from auditor.models import AuditReport, AutoScaling, ComponentReport, Finding, Recommendation, Resource, VariantReport

SCHEMA_VERSION = 1


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


def advice_text(rec: Recommendation) -> str:
    """The advice in a few words, for tables and subject lines."""
    if rec.action == "delete":
        return "delete the endpoint"
    if rec.action == "autoscale":
        policy = rec.details.get("policy", {})
        return (f"autoscale {policy.get('MinCapacity')}-{policy.get('MaxCapacity')} x {rec.instance_type} "
                f"at {policy.get('TargetValue')} invocations/instance/min")
    if rec.action == "scale-out":
        return f"scale out to {rec.instance_count} x {rec.instance_type}"
    if rec.action == "resize-memory":
        return f"serverless memory {rec.details.get('memory_size_mb')} MB"
    if rec.action == "serverless":
        return f"serverless, {rec.details.get('memory_size_mb')} MB"
    return f"{rec.instance_count} x {rec.instance_type}"


def _autoscaling(scaling: AutoScaling | None) -> dict[str, Any] | None:
    if scaling is None:
        return None
    return {"min_capacity": scaling.min_capacity, "max_capacity": scaling.max_capacity,
            "policies": list(scaling.policies)}


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    rec = finding.recommendation
    return {
        "rule": finding.rule,
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


def report_to_dict(report: AuditReport) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": _iso(report.generated_at),
        "window": {
            "start": _iso(report.window.start),
            "end": _iso(report.window.end),
            "period_seconds": report.window.period_seconds,
        },
        "settings": report.settings,
        "prices": {
            "source": report.catalog.source,
            "as_of": report.catalog.as_of,
            "priced_regions": list(report.catalog.priced_regions),
        },
        "endpoints": [
            {
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
                        "utilization": _utilization(v),
                        "invocations": v.utilization.invocations if v.utilization else None,
                        "instance_metric_days": v.utilization.instance_metric_days if v.utilization else None,
                        "autoscaling": _autoscaling(v.variant.autoscaling) if e.endpoint.autoscaling_known else "unknown",
                    }
                    for v in e.variants
                ],
                "inference_components": [
                    {
                        "name": c.component.name,
                        "variant": c.component.variant,
                        "status": c.component.status,
                        "utilization": _utilization(c),
                    }
                    for c in e.components
                ],
            }
            for e in report.endpoints
        ],
        "findings": [finding_to_dict(f) for f in report.findings],
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
        },
        "errors": [
            {"region": e.region, "endpoint": e.endpoint, "stage": e.stage, "message": e.message}
            for e in report.errors
        ],
    }
