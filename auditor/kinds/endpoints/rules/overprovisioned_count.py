"""overprovisioned-count: a multi-instance variant whose summed load fits in fewer instances of
the same type."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.analyse.rules.base import RuleSettings, settings_of, target_percent
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import HOTTEST_INSTANCE, EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.packing import hosted_copies
from auditor.kinds.endpoints.pricing_steps import price_fewer_instances
from auditor.kinds.endpoints.rule_types import INSTANCE_KINDS, VariantRule
from auditor.kinds.endpoints.rules.instance_imbalance import imbalance
from auditor.models import CountProposal, Finding, Resource, Severity
from auditor.recommend.demand import instances_needed, minimum_instances, peak_demand
from auditor.schema import setting


@dataclass(frozen=True)
class CountSettings(RuleSettings):
    target_utilization: float = setting(0.0, "0: recommend.target_utilization", minimum=0, maximum=100)


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    count = va.variant.instance_count
    if count < 2 or va.shape is None or va.utilization is None or Resource.CPU not in va.utilization.peak:
        return None
    if imbalance(va, config) is not None:
        return None  # one instance carries the load: fewer would make it worse (instance-imbalance says so)
    settings: CountSettings = settings_of(RULE, config)
    target = target_percent(settings.target_utilization, config)
    demand = peak_demand(va.utilization, va.shape, count)
    floor = minimum_instances(count, config.recommend)
    needed = instances_needed(va.shape, va.shape, demand, floor, target / 100.0)
    # Inference component copies keep their reservations wherever they run: the count holds them all.
    copies = hosted_copies(assessment.components, va.variant.name, assessment.endpoint.inference_components_listed)
    for_copies = copies.instances(va.shape)
    if needed is None or for_copies is None:
        return None
    needed = max(needed, for_copies)
    if needed >= count:
        return None
    held = [f"{demand.cpu_cores:.1f} of {va.shape.vcpu * needed} vCPU"] if demand.cpu_cores is not None else []
    if demand.accelerators is not None:
        held.append(f"{demand.accelerators:.2f} of {va.shape.gpu_count * needed} GPUs")
    return RULE.finding(
        assessment.endpoint, va.variant.name,
        f"{needed} of the {count} x {va.variant.instance_type} hold the {config.recommend.peak_statistic} peak"
        f"{' of the hottest instance' if va.sizing_basis == HOTTEST_INSTANCE else ''} "
        f"({'; '.join(held)}) at <= {target:g}%",
        {
            "current_count": count,
            "needed_count": needed,
            "minimum_count": floor,
            "target_utilization": target,
            "peak_statistic": config.recommend.peak_statistic,
            "sizing_basis": va.sizing_basis,
            "peak_demand": demand.as_dict(),
            "instances_for_component_copies": for_copies or None,
        },
        proposal=CountProposal(needed),
    )


RULE = VariantRule(
    id="overprovisioned-count",
    title="More instances than the load needs",
    severity=Severity.MEDIUM,
    remediation="Lower the variant's instance count (UpdateEndpointWeightsAndCapacities), or let autoscaling do it.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateEndpointWeightsAndCapacities.html",
    judges=INSTANCE_KINDS,
    settings=CountSettings,
    threshold_field="target_utilization",
    check=check,
    price=price_fewer_instances,
    # Fewer of the same type is the cheapest shape, said once: underutilized's would repeat it.
    supersedes=frozenset({"underutilized"}),
)
