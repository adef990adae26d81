"""Native consolidation (docs/rules.md, `component-packing` and `component-empty-instances`): where
a variant's inference-component copies fit on fewer instances than run, SageMaker's managed
instance scaling with the `CONSOLIDATION` scale-in strategy moves copies to free whole instances.
The plan is the `managed-scaling` config action (change.py): a copy of the running config whose
variant gets the ManagedInstanceScaling built here. Pure: read by the rules.

- Managed scaling on: the same MinInstanceCount and MaxInstanceCount, but MinInstanceCount lowered
  to the instances the copies need when it keeps more, and never below the availability floor;
  ScaleInPolicy {Strategy: CONSOLIDATION}.
- Managed scaling off: turned on between the instances the copies need (never below the floor) and
  the count that runs now, with that policy.
MaximumStepSize and CooldownInMinutes stay as the config sets them, else SageMaker's defaults (1
instance at a time, 20 minutes): nothing the audit measures argues for faster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.change import MANAGED_SCALING
from auditor.kinds.endpoints.pricing_steps import same_type_count, variant_of
from auditor.models import Finding, Recommendation
from auditor.recommend.pricing import priced

CONSOLIDATION = "CONSOLIDATION"
# Said in the plan's risk: at least medium on these facts, whatever the replay on the kept count says.
RISK_BASIS = (
    "SageMaker places each copy only where its reserved CPU cores, accelerators and memory fit: the instance "
    "count is from the copies' reservations (the replay is the variant's load on the instances it keeps)",
    "consolidation moves copies between instances (by default one instance released at a time, 20 minutes "
    "after the last endpoint operation); a copy that uses more than it reserves shares its new instance",
)


@dataclass(frozen=True)
class ScalingProposal:
    """The ManagedInstanceScaling a new config gives the variant, and the instances it then runs."""

    scaling: dict[str, Any]  # as CreateEndpointConfig takes it (ProductionVariantManagedInstanceScaling)
    instances: int  # the instances left once SageMaker has consolidated
    turned_on: bool  # managed scaling was off
    note: str = ""  # what changes, in words (for the finding's message)

    def evidence(self) -> dict[str, Any]:
        return {"proposed_managed_instance_scaling": self.scaling, "consolidated_count": self.instances,
                "turns_on_managed_scaling": self.turned_on}

    @classmethod
    def from_evidence(cls, evidence: dict[str, Any]) -> ScalingProposal:
        """The proposal a finding's evidence states (`evidence()`), for its pricing step."""
        return cls(dict(evidence["proposed_managed_instance_scaling"]), int(evidence["consolidated_count"]),
                   bool(evidence["turns_on_managed_scaling"]))


def running_scaling(va: VariantAssessment, description: dict[str, Any] | None) -> dict[str, Any]:
    """The variant's ManagedInstanceScaling as its endpoint config says it ({} when it says none)."""
    for variant in (description or {}).get("ProductionVariants") or []:
        if isinstance(variant, dict) and variant.get("VariantName") == va.variant.name:
            scaling = variant.get("ManagedInstanceScaling")
            return dict(scaling) if isinstance(scaling, dict) else {}
    return {}


def consolidating(assessment: EndpointAssessment, va: VariantAssessment, needed: int,
                  floor: int) -> ScalingProposal | None:
    """The scaling that consolidates the variant onto `needed` instances (at least `floor`); None
    where the variant scales by Application Auto Scaling (two scalers on one count), or may (its
    region's scaling targets could not be read: a denied read is never "no target"), or where its
    config already sets exactly that (nothing to change)."""
    managed = va.variant.managed_scaling
    count = va.variant.instance_count
    if managed is None:
        if va.variant.autoscaling is not None or not assessment.endpoint.autoscaling_known:
            return None
        scaling = {"Status": "ENABLED", "MinInstanceCount": max(needed, floor), "MaxInstanceCount": count,
                   "ScaleInPolicy": {"Strategy": CONSOLIDATION}}
        return ScalingProposal(scaling, max(needed, floor), turned_on=True,
                               note=f"managed instance scaling turned on ({max(needed, floor)}-{count} instances) "
                                    "with ScaleInPolicy CONSOLIDATION")
    current = running_scaling(va, assessment.endpoint.config_description)
    minimum = needed if managed.min_instances is None else min(managed.min_instances, needed)
    minimum = max(minimum, floor)
    maximum = max(managed.max_instances if managed.max_instances is not None else count, minimum)
    policy = dict(current.get("ScaleInPolicy") or {})
    policy["Strategy"] = CONSOLIDATION  # its step size and cooldown, where set, are kept
    scaling = {"Status": "ENABLED", "MinInstanceCount": minimum, "MaxInstanceCount": maximum,
               "ScaleInPolicy": policy}
    if {k: current.get(k) for k in scaling} == scaling:
        return None
    words = ["ScaleInPolicy CONSOLIDATION"]
    if managed.min_instances is not None and minimum != managed.min_instances:
        why = " (the availability floor)" if minimum > managed.min_instances else ""
        words.append(f"MinInstanceCount {managed.min_instances} {'raised' if why else 'lowered'} to {minimum}{why}")
    return ScalingProposal(scaling, max(needed, minimum), turned_on=False, note=", ".join(words))


def described(proposal: ScalingProposal, instances: int, instance_type: str | None) -> str:
    """The advice in a few words (tables, subject lines): what it runs once consolidated, and how."""
    scaling = proposal.scaling
    how = "managed instance scaling on" if proposal.turned_on else "managed instance scaling"
    return (f"{instances} x {instance_type}: {how}, {scaling['MinInstanceCount']}-"
            f"{scaling['MaxInstanceCount']} instances, scale-in CONSOLIDATION")


def price_consolidation(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig,
                        proposal: ScalingProposal, saved_instances: int | None = None) -> Finding | None:
    """The finding priced as a `managed-scaling` plan: the instances it frees at the variant's price
    (`saved_instances`, else the count now less the instances left); dropped when it saves less
    than recommend.min_savings_percent, unpriced (kept) when the variant cannot be priced."""
    va = variant_of(finding, assessment)
    if va is None:
        return finding
    left = proposal.instances if saved_instances is None else va.variant.instance_count - saved_instances
    rec = same_type_count(finding, assessment, catalog, left, MANAGED_SCALING)
    if rec is None:
        return finding
    if rec.monthly_savings_usd < rec.current_monthly_usd * config.recommend.min_savings_percent / 100.0:
        return None
    basis = list(RISK_BASIS)
    kept = proposal.scaling["MinInstanceCount"]
    basis.append(f"MinInstanceCount {kept} keeps at least {kept} instance{'s' if kept != 1 else ''} running, never "
                 "fewer than the availability floor ([recommend] min_instances, else min(current, 2))")
    advice = described(proposal, rec.instance_count, rec.instance_type)
    details = {"managed_instance_scaling": proposal.scaling, "advice": advice,
               "risk": {"level": "medium", "basis": basis}}
    recommendation = Recommendation(MANAGED_SCALING, rec.instance_type, rec.instance_count,
                                    current_monthly_usd=rec.current_monthly_usd,
                                    recommended_monthly_usd=rec.recommended_monthly_usd, details=details)
    saving = recommendation.monthly_savings_usd
    return priced(finding, recommendation, f"{finding.message}: saves ${saving:,.2f}/month.")
