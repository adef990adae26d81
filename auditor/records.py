"""Findings and plans as JSON records: what the JSON report writes (auditor/report/document.py), the
history stores and `audit apply` reads back. Core: every kind's findings and plans share the shape
(schema 9: `resource` names what each is about)."""

from __future__ import annotations

from typing import Any

from auditor.models import ApiCall, Change, Finding, Plan, PlanOption, ResourceRef, Risk
from auditor.wording import advice_text


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
        "resource": resource_to_dict(plan.resource),
        "variant": plan.variant,
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
        "basis": plan.basis,  # the kind's own record, JSON-safe (the endpoints kind's PlanBasis)
        "covers": [resource_to_dict(r) for r in plan.covers],
    }


def resource_to_dict(resource: ResourceRef) -> dict[str, str]:
    """What a finding or a plan is about (schema 9): its kind's key, its type, name, account and region."""
    return {"kind": resource.kind, "type": resource.type, "name": resource.name,
            "account_id": resource.account_id, "region": resource.region}


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    rec = finding.recommendation
    return {
        "rule": finding.rule,
        "title": finding.title,
        "remediation": finding.remediation,
        "severity": finding.severity.value,
        "resource": resource_to_dict(finding.resource),
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


def stated_resource(record: dict[str, Any]) -> dict[str, Any]:
    """A stored plan's or finding's `resource` (schema 9: kind, type, name, account_id, region) as
    it was read from outside; {} when it has none."""
    resource = record.get("resource")
    return resource if isinstance(resource, dict) else {}
