"""The report as plain data: the JSON document (schema_version 1), which every renderer reads."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from auditor.models import AuditReport, Finding, Recommendation, Resource, VariantReport

SCHEMA_VERSION = 1


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _utilization(variant: VariantReport) -> dict[str, Any]:
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
                    }
                    for v in e.variants
                ],
            }
            for e in report.endpoints
        ],
        "findings": [finding_to_dict(f) for f in report.findings],
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
