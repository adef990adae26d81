"""component-underutilized: inference components whose normalised CPU, GPU and memory stay under
the thresholds: fewer copies, or less reserved per copy, priced by the instances that frees."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from auditor.analyse.rules.base import RESOURCE_LABELS, RuleSettings, settings_of, target_percent
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.models import ComponentReport
from auditor.kinds.endpoints.packing import Placement, Reservation, instances_to_hold, on_variant, reservation
from auditor.kinds.endpoints.pricing_steps import same_type_count
from auditor.kinds.endpoints.rule_types import VariantRule
from auditor.models import CountProposal, Finding, Judged, Resource, Severity
from auditor.recommend.demand import minimum_instances
from auditor.recommend.pricing import priced
from auditor.schema import setting


@dataclass(frozen=True)
class ComponentSettings(RuleSettings):
    target_utilization: float = setting(0.0, "per copy after the change; 0: recommend.target_utilization",
                                        minimum=0, maximum=100)
    min_copies: int = setting(2, "never advise fewer copies than min(current copies, this)", minimum=1,
                              maximum=1000)


@dataclass(frozen=True)
class Advice:
    name: str
    copies: int
    per_copy: Reservation
    new_copies: int
    new_per_copy: Reservation
    sizing: dict[Resource, float]

    @property
    def changed(self) -> bool:
        return self.new_copies != self.copies or self.new_per_copy != self.per_copy

    def words(self) -> str:
        parts = []
        if self.new_copies != self.copies:
            parts.append(f"{self.new_copies} copies instead of {self.copies}")
        if self.new_per_copy.cpu_cores != self.per_copy.cpu_cores:
            parts.append(f"{self.new_per_copy.cpu_cores:g} CPU cores per copy instead of {self.per_copy.cpu_cores:g}")
        if self.new_per_copy.memory_mb != self.per_copy.memory_mb:
            parts.append(f"{self.new_per_copy.memory_mb:g} MB per copy instead of {self.per_copy.memory_mb:g}")
        return f"{self.name}: {', '.join(parts)}"

    def as_dict(self) -> dict[str, Any]:
        return {"copies": self.copies, "per_copy": self.per_copy.as_dict(), "advised_copies": self.new_copies,
                "advised_per_copy": self.new_per_copy.as_dict(),
                "sizing": {r.value: round(v, 2) for r, v in self.sizing.items()}}


# What each resource's normalised figure is a share of, in a copy's reservation.
_RESERVED = {Resource.CPU: "cpu_cores", Resource.GPU: "accelerators", Resource.MEMORY: "memory_mb"}


def advise(report: ComponentReport, config: AuditConfig, settings: ComponentSettings) -> Advice | None:
    """Advice for one component whose every measured, reserved resource is under its threshold."""
    per_copy = reservation(report.component)
    copies = report.component.copy_count
    u = report.utilization
    if per_copy is None or copies is None or copies < 1 or u is None:
        return None
    if u.instance_metric_days < config.recommend.min_days:
        return None
    limits = {Resource.CPU: config.thresholds.cpu, Resource.GPU: config.thresholds.gpu,
              Resource.MEMORY: config.thresholds.memory}
    reserved = [r for r in _RESERVED if getattr(per_copy, _RESERVED[r]) > 0]
    if any(r not in u.sizing for r in reserved if r is not Resource.MEMORY):
        return None  # a reserved CPU or GPU without its metric: the copies cannot be sized
    measured = {r: u.sizing[r] for r in reserved if r in u.sizing}
    if not measured or any(v >= limits[r] for r, v in measured.items()):
        return None
    target = target_percent(settings.target_utilization, config)
    peak = {r: u.peak.get(r, v) for r, v in measured.items()}
    # CPU and GPU load divides among copies; memory is held in full by every copy.
    divisible = [peak[r] for r in (Resource.CPU, Resource.GPU) if r in peak]
    floor = min(copies, settings.min_copies)
    new_copies = max(floor, math.ceil(copies * max(divisible) / target)) if divisible else copies
    new_copies = min(new_copies, copies)
    cores = per_copy.cpu_cores
    if new_copies == copies and Resource.CPU in peak and Resource.GPU not in peak and cores > 1:
        # No copy to spare: reserve fewer cores per copy instead (whole cores).
        cores = float(min(cores, max(1, math.ceil(cores * peak[Resource.CPU] / target))))
    memory = per_copy.memory_mb
    if Resource.MEMORY in peak:
        memory = float(min(memory, max(1024, math.ceil(memory * peak[Resource.MEMORY] / target / 1024) * 1024)))
    advice = Advice(report.component.name, copies, per_copy, new_copies,
                    Reservation(cores, per_copy.accelerators, memory), measured)
    return advice if advice.changed else None


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    hosted = on_variant(assessment.components, va.variant.name)
    if not hosted or va.shape is None:
        return None
    settings: ComponentSettings = settings_of(RULE, config)
    advices = {a.name: a for a in (advise(c, config, settings) for c in hosted) if a is not None}
    if not advices:
        return None
    stat = config.thresholds.sizing_statistic
    low = "; ".join(
        f"{a.name} ({a.copies} copies): " + ", ".join(f"{RESOURCE_LABELS[r]} {v:.1f}%" for r, v in a.sizing.items())
        for a in advices.values())
    evidence: dict[str, Any] = {
        "sizing_statistic": stat,
        "thresholds": {"cpu": config.thresholds.cpu, "gpu": config.thresholds.gpu, "memory": config.thresholds.memory},
        "target_utilization": target_percent(settings.target_utilization, config),
        "components": {name: a.as_dict() for name, a in advices.items()},
        "advice": "; ".join(a.words() for a in advices.values()),
    }
    message = (f"inference components under threshold on {va.variant.instance_type} "
               f"({stat} of their normalised utilisation: {low}); advised: {evidence['advice']}")
    # Copies cost nothing by themselves: the saving is the instances the smaller reservations free.
    before: list[Placement] = []
    after: list[Placement] = []
    for c in hosted:
        per_copy = reservation(c.component)
        if per_copy is None or c.component.copy_count is None:
            return RULE.finding(assessment.endpoint, va.variant.name, message, evidence)
        before.append(Placement(c.component.name, c.component.copy_count, per_copy))
        a = advices.get(c.component.name)
        after.append(Placement(a.name, a.new_copies, a.new_per_copy) if a else before[-1])
    count = va.variant.instance_count
    floor = minimum_instances(count, config.recommend)
    held_before, held_after = instances_to_hold(before, va.shape), instances_to_hold(after, va.shape)
    evidence.update(instances_before=held_before, instances_after=held_after, current_count=count)
    if held_before is None or held_after is None:
        return RULE.finding(assessment.endpoint, va.variant.name, message, evidence)
    needed = max(held_after, floor)
    if needed < min(max(held_before, floor), count):
        return RULE.finding(assessment.endpoint, va.variant.name,
                            f"{message}; the copies then fit on {needed} of the {count} instances",
                            evidence, proposal=CountProposal(needed))
    return replace(RULE.finding(assessment.endpoint, va.variant.name,
                                f"{message}; this frees reserved capacity but no instance at the current count",
                                evidence), severity=Severity.INFO)


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    if not isinstance(finding.proposal, CountProposal):
        return finding
    rec = same_type_count(finding, assessment, catalog, finding.proposal.instance_count, "resize")
    if rec is None:
        return finding
    if rec.monthly_savings_usd < rec.current_monthly_usd * config.recommend.min_savings_percent / 100.0:
        return replace(finding, severity=Severity.INFO, proposal=None)
    rec = replace(rec, details={"component_advice": finding.evidence["advice"],
                                "components": finding.evidence["components"]})
    return priced(finding, rec, f"{finding.message}: saves ${rec.monthly_savings_usd:,.2f}/month.")


RULE = VariantRule(
    id="component-underutilized",
    title="Inference components reserve more than they use",
    severity=Severity.LOW,
    remediation="Lower the component's copy count (UpdateInferenceComponentRuntimeConfig), or its "
                "ComputeResourceRequirements (UpdateInferenceComponent), then let the endpoint run fewer instances.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateInferenceComponentRuntimeConfig.html",
    judges=frozenset({Judged.REAL_TIME}),
    settings=ComponentSettings,
    threshold_field="thresholds",
    check=check,
    price=price,
)
