"""component-packing: a variant whose inference components reserve little of its instances, so
their copies fit on fewer instances of the same type.

The change is native consolidation (auditor/kinds/endpoints/managed_scaling.py): managed instance
scaling with the CONSOLIDATION scale-in strategy in a new endpoint config (turned on where it is
off), SageMaker moving the copies; a fixed lower count only where Application Auto Scaling scales
the variant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.managed_scaling import ScalingProposal, consolidating, price_consolidation
from auditor.kinds.endpoints.packing import (
    copies_per_instance,
    instances_to_hold,
    on_variant,
    placements,
    reserved_share,
)
from auditor.kinds.endpoints.pricing_steps import price_fewer_instances
from auditor.kinds.endpoints.rule_types import VariantRule
from auditor.models import CountProposal, Finding, Judged, Severity
from auditor.recommend.demand import minimum_instances
from auditor.schema import setting


@dataclass(frozen=True)
class PackingSettings(RuleSettings):
    max_reserved_percent: float = setting(50.0, "judged when every resource is reserved under this share",
                                          above=0, maximum=100)


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    hosted = on_variant(assessment.components, va.variant.name)
    count = va.variant.instance_count
    if not hosted or va.shape is None or count < 2:
        return None
    placed = placements(hosted)
    if placed is None:
        return None
    settings: PackingSettings = settings_of(RULE, config)
    shares = reserved_share(placed, va.shape, count)
    if not shares or max(shares.values()) >= settings.max_reserved_percent:
        return None
    packed = instances_to_hold(placed, va.shape)
    if packed is None:
        return None
    floor = minimum_instances(count, config.recommend)
    needed = max(packed, floor)
    if needed >= count:
        return None
    per_instance = {p.name: copies_per_instance(p.per_copy, va.shape) for p in placed}
    copies = sum(p.copies for p in placed)
    reserved = ", ".join(f"{'GPU' if k == 'gpu' else k} {v:g}%" for k, v in shares.items())
    fit = ", ".join(f"{name}: {n} per instance" for name, n in per_instance.items())
    evidence: dict[str, Any] = {
        "current_count": count,
        "needed_count": needed,
        "packed_count": packed,
        "minimum_count": floor,
        "reserved_percent": shares,
        "max_reserved_percent": settings.max_reserved_percent,
        "components": {p.name: {"copies": p.copies, "per_copy": p.per_copy.as_dict(),
                                "copies_per_instance": per_instance[p.name]} for p in placed},
    }
    message = (f"{len(placed)} inference component(s) reserve {reserved} of the {count} x "
               f"{va.variant.instance_type}: their {copies} copies fit on {needed} ({fit})")
    native = consolidating(assessment, va, needed, floor)
    if native is not None:
        return RULE.finding(assessment.endpoint, va.variant.name, f"{message}: {native.note}",
                            {**evidence, **native.evidence()})
    if va.variant.managed_scaling is not None:
        return None  # its config already consolidates onto that many: nothing to change
    return RULE.finding(assessment.endpoint, va.variant.name, message, evidence, proposal=CountProposal(needed))


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    """Native consolidation priced by the instances it frees; a fixed count (autoscaled variants) as
    fewer instances of the same type."""
    if isinstance(finding.proposal, CountProposal):
        return price_fewer_instances(finding, assessment, catalog, config)
    return price_consolidation(finding, assessment, catalog, config, ScalingProposal.from_evidence(finding.evidence))


RULE = VariantRule(
    id="component-packing",
    title="Inference components leave most of their instances unreserved",
    severity=Severity.MEDIUM,
    remediation="Set managed instance scaling's scale-in strategy to CONSOLIDATION (turning managed scaling on "
                "where it is off) so that SageMaker moves the component copies onto fewer instances.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-deploy-models.html",
    judges=frozenset({Judged.REAL_TIME}),
    settings=PackingSettings,
    threshold_field="max_reserved_percent",
    check=check,
    price=price,
    # Native consolidation rather than a manual count of the same type (issue 27): their counts hold every
    # copy, so never fewer than this rule's.
    supersedes=frozenset({"overprovisioned-count", "underutilized"}),
)
