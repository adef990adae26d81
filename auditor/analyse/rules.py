"""The endpoint rules. Each reads only the assessment models; metadata is data beside the rule.

Order matters and is explicit: an endpoint that cannot be judged gets no waste verdict; an idle
endpoint is not also reported as under-used.
"""

from __future__ import annotations

from dataclasses import dataclass

from auditor.config import AuditConfig
from auditor.models import (
    Endpoint,
    EndpointKind,
    Finding,
    Resource,
    Severity,
    Variant,
    VariantUtilization,
)
from auditor.recommend.catalog import InstanceShape


@dataclass(frozen=True)
class RuleMeta:
    id: str
    title: str
    severity: Severity  # the default; a rule may raise it with the money at stake
    remediation: str


NOT_IN_SERVICE = RuleMeta(
    "not-in-service",
    "Endpoint is not InService",
    Severity.INFO,
    "Only InService endpoints are judged; look at the endpoint's status and failure reason.",
)
INSUFFICIENT_DATA = RuleMeta(
    "insufficient-data",
    "Too little data to judge",
    Severity.INFO,
    "No verdict until the endpoint has recommend.min_days of instance metrics.",
)
IDLE = RuleMeta(
    "idle",
    "Idle endpoint",
    Severity.HIGH,
    "Delete the endpoint (keep its model and config to re-create it), or move it to serverless.",
)
UNDERUTILIZED = RuleMeta(
    "underutilized",
    "Under-used instances",
    Severity.MEDIUM,
    "Update the endpoint to a new endpoint config with the advised instance type and count.",
)
RULES: tuple[RuleMeta, ...] = (NOT_IN_SERVICE, INSUFFICIENT_DATA, IDLE, UNDERUTILIZED)

RESOURCE_LABELS = {
    Resource.CPU: "CPU",
    Resource.MEMORY: "memory",
    Resource.DISK: "disk",
    Resource.GPU: "GPU",
    Resource.GPU_MEMORY: "GPU memory",
}
# Disk is reported but not judged: storage size is not what the instance type buys.
JUDGED_RESOURCES = (Resource.CPU, Resource.MEMORY, Resource.GPU, Resource.GPU_MEMORY)


@dataclass(frozen=True)
class VariantAssessment:
    variant: Variant
    shape: InstanceShape | None
    utilization: VariantUtilization | None
    monthly_cost_usd: float | None


@dataclass(frozen=True)
class EndpointAssessment:
    endpoint: Endpoint
    variants: tuple[VariantAssessment, ...]
    age_days: float


def _finding(rule: RuleMeta, endpoint: Endpoint, variant: str | None, message: str, evidence: dict) -> Finding:
    return Finding(
        rule=rule.id,
        severity=rule.severity,
        account_id=endpoint.account_id,
        region=endpoint.region,
        endpoint=endpoint.name,
        variant=variant,
        message=message,
        evidence=evidence,
    )


def evaluate_endpoint(assessment: EndpointAssessment, config: AuditConfig) -> list[Finding]:
    endpoint = assessment.endpoint
    if endpoint.not_judged_reason:
        # A deleted config is reported in errors by discovery; a status is a finding.
        if endpoint.status != "InService":
            return [_finding(NOT_IN_SERVICE, endpoint, None, f"Not judged: {endpoint.not_judged_reason}.",
                             {"status": endpoint.status})]
        return []
    if endpoint.kind is EndpointKind.SERVERLESS:
        # Billed per request: no instance to resize and nothing to pay while idle.
        return []

    min_days = config.recommend.min_days
    if assessment.age_days < min_days:
        return [_finding(
            INSUFFICIENT_DATA, endpoint, None,
            f"Endpoint created {assessment.age_days:.1f} days ago (needs {min_days}): no verdict yet.",
            {"age_days": round(assessment.age_days, 2), "min_days": min_days},
        )]

    findings: list[Finding] = []
    judged: list[VariantAssessment] = []
    for va in assessment.variants:
        days = va.utilization.instance_metric_days if va.utilization else 0.0
        if days < min_days:
            findings.append(_finding(
                INSUFFICIENT_DATA, endpoint, va.variant.name,
                f"Only {days:.1f} days of instance metrics for variant {va.variant.name} "
                f"(needs {min_days}): no verdict.",
                {"instance_metric_days": days, "min_days": min_days},
            ))
        else:
            judged.append(va)
    if not judged:
        return findings

    if len(judged) == len(assessment.variants) and all(
        va.utilization is not None and not va.utilization.invocations for va in judged
    ):
        findings.append(check_idle(assessment, config))
        return findings

    for va in judged:
        finding = check_underutilized(endpoint, va, config)
        if finding is not None:
            findings.append(finding)
    return findings


def check_idle(assessment: EndpointAssessment, config: AuditConfig) -> Finding:
    endpoint = assessment.endpoint
    shapes = ", ".join(f"{va.variant.instance_count} x {va.variant.instance_type}" for va in assessment.variants)
    cpu = [va.utilization.by_resource[Resource.CPU].avg for va in assessment.variants
           if va.utilization and Resource.CPU in va.utilization.by_resource]
    cpu_text = f" (CPU avg {max(cpu):.1f}%)" if cpu else ""
    days = min(va.utilization.instance_metric_days for va in assessment.variants if va.utilization)
    return _finding(
        IDLE, endpoint, None,
        f"No invocations in {days:.1f} days while {shapes} ran{cpu_text}.",
        {
            "invocations": 0,
            "instance_metric_days": days,
            "lookback_days": config.aws.lookback_days,
        },
    )


def join_words(words: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def period_label(period_seconds: int) -> str:
    if period_seconds == 3600:
        return "hourly"
    if period_seconds == 86400:
        return "daily"
    return f"{period_seconds // 60}-minute"


def under_threshold(utilization: VariantUtilization, config: AuditConfig) -> dict[Resource, float]:
    thresholds = config.thresholds
    limits = {
        Resource.CPU: thresholds.cpu,
        Resource.MEMORY: thresholds.memory,
        Resource.GPU: thresholds.gpu,
        Resource.GPU_MEMORY: thresholds.gpu_memory,
    }
    return {
        r: utilization.sizing[r]
        for r in JUDGED_RESOURCES
        if r in utilization.sizing and utilization.sizing[r] < limits[r]
    }


def check_underutilized(endpoint: Endpoint, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    """A candidate: the recommend stage keeps it only where a cheaper shape holds the peak."""
    assert va.utilization is not None
    low = under_threshold(va.utilization, config)
    if not low:
        return None
    stat = config.thresholds.sizing_statistic
    parts = ", ".join(f"{RESOURCE_LABELS[r]} {v:.1f}%" for r, v in low.items())
    resources = join_words([RESOURCE_LABELS[r] for r in low])
    return _finding(
        UNDERUTILIZED, endpoint, va.variant.name,
        f"{resources} under threshold on {va.variant.instance_count} x {va.variant.instance_type} "
        f"({stat} of {period_label(config.aws.period_seconds)} "
        f"{'averages' if stat == 'avg' else 'maxima'}: {parts})",
        {
            "sizing_statistic": stat,
            "under_threshold": {r.value: round(v, 2) for r, v in low.items()},
            "thresholds": {r.value: getattr(config.thresholds, r.value) for r in low},
            "utilization": {
                r.value: {"avg": u.avg, "p95": u.p95, "max": u.max}
                for r, u in va.utilization.by_resource.items()
            },
        },
    )
