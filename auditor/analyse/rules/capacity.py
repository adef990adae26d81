"""Capacity rules: can the endpoint be judged, is it used at all, is it bigger than its load."""

from __future__ import annotations

from auditor.analyse.demand import instances_needed, minimum_instances, peak_demand
from auditor.analyse.rules.base import (
    RESOURCE_LABELS,
    EndpointAssessment,
    RuleMeta,
    VariantAssessment,
    join_words,
    make_finding,
    period_label,
    target_percent,
)
from auditor.config import AuditConfig
from auditor.models import Endpoint, Finding, Resource, Severity, VariantUtilization

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
OVERPROVISIONED_COUNT = RuleMeta(
    "overprovisioned-count",
    "More instances than the load needs",
    Severity.MEDIUM,
    "Lower the variant's instance count (UpdateEndpointWeightsAndCapacities), or let autoscaling do it.",
)

# Disk is reported but not judged: storage size is not what the instance type buys.
JUDGED_RESOURCES = (Resource.CPU, Resource.MEMORY, Resource.GPU, Resource.GPU_MEMORY)


def check_not_in_service(endpoint: Endpoint) -> Finding:
    return make_finding(NOT_IN_SERVICE, endpoint, None, f"Not judged: {endpoint.not_judged_reason}.",
                        {"status": endpoint.status})


def check_endpoint_age(assessment: EndpointAssessment, config: AuditConfig) -> Finding | None:
    min_days = config.recommend.min_days
    if assessment.age_days >= min_days:
        return None
    return make_finding(
        INSUFFICIENT_DATA, assessment.endpoint, None,
        f"Endpoint created {assessment.age_days:.1f} days ago (needs {min_days}): no verdict yet.",
        {"age_days": round(assessment.age_days, 2), "min_days": min_days},
    )


def check_variant_data(endpoint: Endpoint, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    min_days = config.recommend.min_days
    days = va.utilization.instance_metric_days if va.utilization else 0.0
    if days >= min_days:
        return None
    return make_finding(
        INSUFFICIENT_DATA, endpoint, va.variant.name,
        f"Only {days:.1f} days of instance metrics for variant {va.variant.name} (needs {min_days}): no verdict.",
        {"instance_metric_days": days, "min_days": min_days},
    )


def is_idle(judged: list[VariantAssessment], config: AuditConfig) -> bool:
    limit = config.rules.idle.max_invocations
    return all(va.utilization is not None and (va.utilization.invocations or 0.0) <= limit for va in judged)


def check_idle(assessment: EndpointAssessment, config: AuditConfig) -> Finding:
    endpoint = assessment.endpoint
    shapes = ", ".join(f"{va.variant.instance_count} x {va.variant.instance_type}" for va in assessment.variants)
    cpu = [va.utilization.by_resource[Resource.CPU].avg for va in assessment.variants
           if va.utilization and Resource.CPU in va.utilization.by_resource]
    cpu_text = f" (CPU avg {max(cpu):.1f}%)" if cpu else ""
    days = min(va.utilization.instance_metric_days for va in assessment.variants if va.utilization)
    invocations = sum(va.utilization.invocations or 0.0 for va in assessment.variants if va.utilization)
    what = "No invocations" if not invocations else f"Only {invocations:,.0f} invocations"
    return make_finding(
        IDLE, endpoint, None,
        f"{what} in {days:.1f} days while {shapes} ran{cpu_text}.",
        {
            "invocations": invocations,
            "max_invocations": config.rules.idle.max_invocations,
            "instance_metric_days": days,
            "lookback_days": config.aws.lookback_days,
        },
    )


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
    if va.utilization is None:
        return None
    low = under_threshold(va.utilization, config)
    if not low:
        return None
    stat = config.thresholds.sizing_statistic
    parts = ", ".join(f"{RESOURCE_LABELS[r]} {v:.1f}%" for r, v in low.items())
    resources = join_words([RESOURCE_LABELS[r] for r in low])
    return make_finding(
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


def check_overprovisioned_count(endpoint: Endpoint, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    """A multi-instance variant whose summed load fits in fewer instances of the same type."""
    count = va.variant.instance_count
    if count < 2 or va.shape is None or va.utilization is None or Resource.CPU not in va.utilization.peak:
        return None
    target = target_percent(config.rules.overprovisioned_count.target_utilization, config)
    demand = peak_demand(va.utilization, va.shape, count)
    floor = minimum_instances(count, config.recommend)
    needed = instances_needed(va.shape, va.shape, demand, floor, target / 100.0)
    if needed is None or needed >= count:
        return None
    held = [f"{demand.cpu_cores:.1f} of {va.shape.vcpu * needed} vCPU"] if demand.cpu_cores is not None else []
    if demand.accelerators is not None:
        held.append(f"{demand.accelerators:.2f} of {va.shape.gpu_count * needed} GPUs")
    return make_finding(
        OVERPROVISIONED_COUNT, endpoint, va.variant.name,
        f"{needed} of the {count} x {va.variant.instance_type} hold the {config.recommend.peak_statistic} peak "
        f"({'; '.join(held)}) at <= {target:g}%",
        {
            "current_count": count,
            "needed_count": needed,
            "minimum_count": floor,
            "target_utilization": target,
            "peak_statistic": config.recommend.peak_statistic,
            "peak_demand": demand.as_dict(),
        },
    )
