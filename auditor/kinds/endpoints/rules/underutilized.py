"""underutilized: a resource under its threshold, kept only where a cheaper shape and count holds
the observed peak of every resource (the pricing step searches the catalog for it)."""

from __future__ import annotations

from auditor.analyse.rules.base import RESOURCE_LABELS, RuleSettings, join_words, period_label
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import HOTTEST_INSTANCE, EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.models import price_usage
from auditor.kinds.endpoints.packing import hosted_copies
from auditor.kinds.endpoints.pricing_steps import variant_of
from auditor.kinds.endpoints.rule_types import INSTANCE_KINDS, VariantRule
from auditor.kinds.endpoints.rules.instance_imbalance import imbalance
from auditor.models import Finding, Resource, Severity, ShapeProposal, VariantUtilization
from auditor.recommend.pricing import priced
from auditor.recommend.sizing import rightsize

# Disk is reported but not judged: storage size is not what the instance type buys.
JUDGED_RESOURCES = (Resource.CPU, Resource.MEMORY, Resource.GPU, Resource.GPU_MEMORY)


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


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    if va.utilization is None:
        return None
    low = under_threshold(va.utilization, config)
    if not low:
        return None
    stat = config.thresholds.sizing_statistic
    parts = ", ".join(f"{RESOURCE_LABELS[r]} {v:.1f}%" for r, v in low.items())
    resources = join_words([RESOURCE_LABELS[r] for r in low])
    return RULE.finding(
        assessment.endpoint, va.variant.name,
        f"{resources} under threshold on {va.variant.instance_count} x {va.variant.instance_type} "
        f"({stat} of {period_label(config.aws.period_seconds)} "
        f"{'averages' if stat == 'avg' else 'maxima'}: {parts})",
        {
            "sizing_statistic": stat,
            "sizing_basis": va.sizing_basis,
            "under_threshold": {r.value: round(v, 2) for r, v in low.items()},
            "thresholds": {r.value: getattr(config.thresholds, r.value) for r in low},
            "utilization": {
                r.value: {"avg": u.avg, "p95": u.p95, "max": u.max}
                for r, u in va.utilization.by_resource.items()
            },
        },
        proposal=ShapeProposal(),
    )


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    va = variant_of(finding, assessment)
    if va is None or va.shape is None or va.utilization is None:
        return None
    copies = hosted_copies(assessment.components, va.variant.name, assessment.endpoint.inference_components_listed)
    result = rightsize(va.utilization, va.shape, va.variant.instance_count, assessment.endpoint.region, catalog,
                       config.recommend, copies=copies,
                       price_of=catalog.priced_like(va.shape.instance_type, assessment.endpoint.region,
                                                    price_usage(assessment.endpoint)))
    if result is None:
        return None  # nothing cheaper holds the rest of the load: not waste
    if result.recommendation.instance_count < va.variant.instance_count and imbalance(va, config) is not None:
        return None  # one instance carries the load: no count reduction while it lasts (instance-imbalance)
    rec = result.recommendation
    demand = result.demand
    held = ([f"{demand.cpu_cores:.1f} of {result.shape.vcpu * rec.instance_count} vCPU"]
            if demand.cpu_cores is not None else [])
    if demand.memory_gib is not None:
        held.append(f"{demand.memory_gib:.1f} of {result.shape.memory_gib:g} GiB per instance")
    if demand.accelerators is not None:
        held.append(f"{demand.accelerators:.2f} of {result.shape.gpu_count * rec.instance_count} GPUs")
    if copies.placed:
        held.append(f"every one of the {sum(p.copies for p in copies.placed)} inference component copies "
                    f"(they need {copies.instances(result.shape)} instances)")
    basis = " of the hottest instance" if va.sizing_basis == HOTTEST_INSTANCE else ""
    message = (
        f"{finding.message}. {rec.instance_count} x {rec.instance_type} holds the "
        f"{config.recommend.peak_statistic} peak{basis} ({'; '.join(held)}) "
        f"at <= {config.recommend.target_utilization:g}%: "
        f"saves ${rec.monthly_savings_usd:,.2f}/month."
    )
    return priced(
        finding, rec, message,
        peak_statistic=config.recommend.peak_statistic,
        peak_demand=demand.as_dict(),
        target_utilization=config.recommend.target_utilization,
        current={"instance_type": va.variant.instance_type, "instance_count": va.variant.instance_count},
        price_source={va.variant.instance_type: va.shape.price_source, rec.instance_type: result.shape.price_source},
    )


RULE = VariantRule(
    id="underutilized",
    title="Under-used instances",
    severity=Severity.MEDIUM,
    remediation="Update the endpoint to a new endpoint config with the advised instance type and count.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-manage.html",
    judges=INSTANCE_KINDS,
    settings=RuleSettings,
    threshold_field="thresholds",
    check=check,
    price=price,
)
