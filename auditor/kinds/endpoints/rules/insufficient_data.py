"""insufficient-data: an endpoint too young, one whose config (its shape) is too young, or a variant
with too few days of instance metrics, gets this note and no other verdict. A delete or idle
verdict (idle, variant-unused) on fewer than recommend.min_idle_days of data gets it instead too
(`withheld_idle_verdict`), whatever the lookback."""

from __future__ import annotations

from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.models import Endpoint, EndpointKind
from auditor.kinds.endpoints.rule_types import ENDPOINT_KINDS, Gate, GateRule
from auditor.models import Finding, Severity


def withheld_idle_verdict(endpoint: Endpoint, variant: str | None, rule: str, what: str, days: float,
                          config: AuditConfig) -> Finding | None:
    """The note that stands for a delete or idle verdict (`rule`'s: `what` it saw) judged on fewer
    than recommend.min_idle_days of data; None when there are enough."""
    needed = config.recommend.min_idle_days
    if days >= needed:
        return None
    return RULE.finding(
        endpoint, variant,
        f"{what} in {days:.1f} days of data; the {rule} verdict needs {needed} (recommend.min_idle_days): "
        "no verdict yet.",
        {"withheld_rule": rule, "data_days": round(days, 2), "min_idle_days": needed},
    )


def _variant_note(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    min_days = config.recommend.min_days
    days = va.utilization.instance_metric_days if va.utilization else 0.0
    if days >= min_days:
        return None
    return RULE.finding(
        assessment.endpoint, va.variant.name,
        f"Only {days:.1f} days of instance metrics for variant {va.variant.name} (needs {min_days}): no verdict.",
        {"instance_metric_days": days, "min_days": min_days},
    )


def check(assessment: EndpointAssessment, config: AuditConfig) -> Gate:
    endpoint = assessment.endpoint
    min_days = config.recommend.min_days
    if assessment.age_days < min_days:
        return Gate(findings=(RULE.finding(
            endpoint, None,
            f"Endpoint created {assessment.age_days:.1f} days ago (needs {min_days}): no verdict yet.",
            {"age_days": round(assessment.age_days, 2), "min_days": min_days},
        ),))
    since, window = assessment.shape_since, assessment.window
    if since is not None and window is not None and window.days < min_days:
        # Its config is younger than the window: the data before it measured another shape, and
        # what is left since is too little (ShapeFrames cut it away).
        return Gate(findings=(RULE.finding(
            endpoint, None,
            f"Changed to {endpoint.config_name} on {since:%Y-%m-%d}: {window.days:.1f} days of data on this "
            f"shape, the rules need {min_days}: no verdict yet.",
            {"config": endpoint.config_name, "shape_since": since.isoformat(), "shape_days": round(window.days, 2),
             "min_days": min_days},
        ),))
    notes: list[Finding] = []
    judged: list[VariantAssessment] = []
    for va in assessment.variants:
        note = _variant_note(assessment, va, config)
        if note is None:
            judged.append(va)
        # Serverless variants with no traffic publish nothing and cost nothing: no note needed.
        elif endpoint.kind is not EndpointKind.SERVERLESS or (va.utilization and va.utilization.invocations):
            notes.append(note)
    return Gate(findings=tuple(notes), judged=tuple(judged) if judged else None)


RULE = GateRule(
    id="insufficient-data",
    title="Too little data to judge",
    severity=Severity.INFO,
    remediation="No verdict until the endpoint has recommend.min_days of instance metrics.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch.html",
    judges=ENDPOINT_KINDS,
    check=check,
)
