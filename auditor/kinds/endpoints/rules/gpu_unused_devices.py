"""gpu-unused-devices: with enhanced metrics (AcceleratorId), a multi-GPU instance whose devices
beyond the first k stay under the idle ceiling in compute and memory on every instance: the model
uses k GPUs, and a shape with k GPUs of the same model that holds the peak costs less.

The variant's aggregate cannot tell one GPU at 60% from four at 15% (a model sharded over all
four needs them all); the per-device series can. A device without a series is not read as idle:
every instance must publish every one of its GPUs."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.models import price_usage
from auditor.kinds.endpoints.pricing_steps import variant_of
from auditor.kinds.endpoints.rule_types import INSTANCE_KINDS, VariantRule
from auditor.kinds.endpoints.rules.idle import RULE as IDLE
from auditor.kinds.endpoints.rules.idle import IdleSettings
from auditor.models import Finding, Severity, ShapeProposal
from auditor.recommend.pricing import priced
from auditor.recommend.sizing import fewer_gpu_shape


@dataclass(frozen=True)
class DeviceUse:
    gpus: int  # GPUs per instance
    used: int  # the most devices any instance used (above the idle ceiling in compute or memory)
    device_memory_gib: float  # the busiest device's memory use (max)
    by_instance: dict[str, dict[str, dict[str, float | None]]]  # instance -> device -> {gpu_p95, gpu_memory_max}

    def as_dict(self) -> dict[str, Any]:
        return {"gpus_per_instance": self.gpus, "gpus_used": self.used,
                "busiest_device_memory_gib": round(self.device_memory_gib, 2), "devices": self.by_instance}


def device_use(va: VariantAssessment, ceiling: float) -> DeviceUse | None:
    shape = va.shape
    if shape is None or shape.gpu_count < 2 or not va.instances:
        return None
    per_device_gib = shape.accelerator_memory_gib / shape.gpu_count
    used, memory = 0, 0.0
    by_instance: dict[str, dict[str, dict[str, float | None]]] = {}
    for instance in va.instances:
        if len(instance.accelerators) != shape.gpu_count:
            return None  # a device without a series is unknown, never idle
        devices: dict[str, dict[str, float | None]] = {}
        busy = 0
        for device, gpu in sorted(instance.accelerators.items()):
            held = instance.accelerator_memory.get(device)
            memory_max = held.max if held is not None else None
            devices[device] = {"gpu_p95": gpu.p95, "gpu_memory_max": memory_max}
            if gpu.p95 > ceiling or memory_max is None or memory_max > ceiling:
                busy += 1  # memory unmeasured: the device may hold part of the model
            if memory_max is not None:
                memory = max(memory, memory_max / 100.0 * per_device_gib)
        by_instance[instance.instance_id] = devices
        used = max(used, busy)
    used = max(used, 1)
    return DeviceUse(shape.gpu_count, used, memory, by_instance) if used < shape.gpu_count else None


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    idle: IdleSettings = settings_of(IDLE, config)  # "idle" means the same for both rules
    ceiling = idle.idle_ceiling_percent
    use = device_use(va, ceiling)
    if use is None:
        return None
    return RULE.finding(
        assessment.endpoint, va.variant.name,
        f"at most {use.used} of the {use.gpus} GPUs of each {va.variant.instance_type} rose above {ceiling:g}% "
        f"(p95 of compute, max of memory)",
        {**use.as_dict(), "idle_ceiling_percent": ceiling, "sizing_basis": va.sizing_basis},
        proposal=ShapeProposal(),
    )


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    va = variant_of(finding, assessment)
    if va is None or va.shape is None or va.utilization is None:
        return finding
    result = fewer_gpu_shape(
        va.utilization, va.shape, va.variant.instance_count, int(finding.evidence["gpus_used"]),
        float(finding.evidence["busiest_device_memory_gib"]), assessment.endpoint.region, catalog, config.recommend,
        price_of=catalog.priced_like(va.shape.instance_type, assessment.endpoint.region,
                                     price_usage(assessment.endpoint)))
    if result is None:
        # The devices idle, but no smaller GPU shape of the same model is cheaper and holds the rest: say so.
        return replace(finding, severity=Severity.INFO, proposal=None,
                       message=f"{finding.message}; no cheaper shape with that many GPUs holds the rest of the load")
    rec = result.recommendation
    return priced(
        finding, rec,
        f"{finding.message}: {rec.instance_count} x {rec.instance_type} ({result.shape.gpu_count} GPU"
        f"{'s' if result.shape.gpu_count > 1 else ''}) holds the {config.recommend.peak_statistic} peak at <= "
        f"{config.recommend.target_utilization:g}%: saves ${rec.monthly_savings_usd:,.2f}/month.",
        peak_demand=result.demand.as_dict(), target_utilization=config.recommend.target_utilization,
        current={"instance_type": va.variant.instance_type, "instance_count": va.variant.instance_count},
        price_source={va.variant.instance_type: va.shape.price_source, rec.instance_type: result.shape.price_source},
    )


RULE = VariantRule(
    id="gpu-unused-devices",
    title="GPUs the model never uses",
    severity=Severity.MEDIUM,
    remediation="Deploy the model on a shape with as many GPUs as it uses (a new endpoint config), after checking "
                "that it is not meant to shard across the idle ones.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch-enhanced-metrics.html",
    judges=INSTANCE_KINDS,
    settings=RuleSettings,
    check=check,
    price=price,
    # The same advice from the per-device view: underutilized's would repeat it where both name one type.
    supersedes=frozenset({"underutilized"}),
)
