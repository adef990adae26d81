"""component-empty-instances: instances of an endpoint with inference components that host no copy,
hour after hour, while they are billed like the others.

The evidence is the endpoint's placement (detailed observability, read with PromQL; see
auditor/kinds/endpoints/promql.py): per instance and hour, whether any of its GPU series was attributed to an
inference component. Counted per hour: the instances that ran hosting no copy. `k` instances are
empty when at least `k` were on `min_empty_percent` of the hours measured and at the last one. Only
judged where every component on the variant reserves at least one GPU a copy (a copy that reserves
none leaves no GPU attributed, so its instance would look empty) and the variant is the endpoint's
only one (placement is read per endpoint and instance). Never without placement data.

The saving: the empty instances at the variant's price. The change is native consolidation
(auditor/kinds/endpoints/managed_scaling.py, the `managed-scaling` config action): without managed
instance scaling, turning it on between the instances that hold every copy (the count floor of
[recommend] kept) and the count now, with the CONSOLIDATION scale-in strategy (a fixed lower count
where Application Auto Scaling scales the variant). With managed instance scaling SageMaker removes
instances that host no copy itself, down to MinInstanceCount: only the empty instances that
MinInstanceCount keeps are a saving, and the change is a lower MinInstanceCount (never below the
floor), with CONSOLIDATION.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.managed_scaling import ScalingProposal, consolidating, price_consolidation
from auditor.kinds.endpoints.models import ComponentPlacement
from auditor.kinds.endpoints.packing import instances_to_hold, on_variant, placements
from auditor.kinds.endpoints.pricing_steps import price_fewer_instances
from auditor.kinds.endpoints.rule_types import VariantRule
from auditor.models import CountProposal, Finding, Judged, Severity
from auditor.recommend.demand import minimum_instances
from auditor.schema import setting


@dataclass(frozen=True)
class EmptyInstancesSettings(RuleSettings):
    min_empty_percent: float = setting(75.0, "instances count as empty when at least this many hosted no copy on "
                                             "this percent of the hours measured (and at the last)",
                                       minimum=25, maximum=100)
    min_hours: int = setting(12, "judged only with placement for at least this many of the last 24 hours",
                             minimum=2, maximum=24)


@dataclass(frozen=True)
class EmptyHours:
    hours: int  # hours with at least one instance measured
    empty_by_hour: tuple[int, ...]  # instances that ran hosting no copy, each hour measured
    running_last: int  # instances running at the last hour measured
    empty_last: int  # of them, hosting no copy
    empty: int  # k: empty on at least min_empty_percent of the hours and at the last

    def as_dict(self) -> dict[str, Any]:
        return {"hours_measured": self.hours, "empty_instances_by_hour": list(self.empty_by_hour),
                "running_at_last_hour": self.running_last, "empty_instances": self.empty}


def empty_hours(placement: ComponentPlacement, min_share: float) -> EmptyHours | None:
    by_hour: list[tuple[int, int]] = []  # (running, empty) for each hour with a sample
    for i in range(len(placement.hours)):
        values = [row[i] for row in placement.hosts.values() if row[i] is not None]
        if values:
            by_hour.append((len(values), sum(1 for v in values if v == 0)))
    if not by_hour:
        return None
    empties = sorted((e for _, e in by_hour), reverse=True)
    # The largest k met on at least min_share of the hours, and at the last hour measured.
    on_share = empties[max(0, math.ceil(min_share * len(empties)) - 1)]
    running_last, empty_last = by_hour[-1]
    return EmptyHours(len(by_hour), tuple(e for _, e in by_hour), running_last, empty_last,
                      min(on_share, empty_last))


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    endpoint = assessment.endpoint
    placement = endpoint.placement
    hosted = on_variant(assessment.components, va.variant.name)
    if placement is None or not hosted or va.shape is None or not va.shape.gpu_count:
        return None
    if len(endpoint.variants) != 1:
        return None  # placement is per endpoint and instance: not attributable among several (or shadow) variants
    if any(c.component.accelerators is None or c.component.accelerators < 1 for c in hosted):
        return None
    settings: EmptyInstancesSettings = settings_of(RULE, config)
    found = empty_hours(placement, settings.min_empty_percent / 100)
    if found is None or found.hours < settings.min_hours or found.empty == 0:
        return None
    # Placement is read from which GPUs carry a component label (an inference from AWS's wording):
    # the copies' own reservations must fit on the instances left, or the placement data is not trusted.
    hosted_copies = placements(hosted)
    packed = instances_to_hold(hosted_copies, va.shape) if hosted_copies is not None else None
    if packed is None:
        return None
    count = va.variant.instance_count
    occupied = max(1, found.running_last - found.empty_last, packed)  # instances hosting a copy at the last hour
    evidence: dict[str, Any] = {**found.as_dict(), "current_count": count,
                                "min_empty_percent": settings.min_empty_percent}
    where = (f"{found.empty} of the {found.running_last} x {va.variant.instance_type} hosted no inference-component "
             f"copy on at least {settings.min_empty_percent:g}% of the {found.hours} hours measured (and at the last)")
    scaling = va.variant.managed_scaling
    floor = minimum_instances(count, config.recommend)
    if scaling is not None:
        # Managed instance scaling removes instances with no copy itself, down to MinInstanceCount.
        minimum = scaling.min_instances or 0
        lowered = max(minimum - min(found.empty, max(0, minimum - occupied)), floor)
        kept = minimum - lowered
        native = consolidating(assessment, va, lowered, floor) if kept > 0 else None
        if native is None:
            return None
        evidence.update(managed_min_instances=minimum, proposed_min_instances=lowered, removable=kept,
                        **native.evidence())
        return RULE.finding(
            endpoint, va.variant.name,
            f"{where}: managed instance scaling keeps {kept} of them for MinInstanceCount {minimum}; "
            f"lower it to {lowered}, with ScaleInPolicy CONSOLIDATION",
            evidence)
    needed = max(count - found.empty, occupied, floor)
    if needed >= count:
        return None
    evidence.update(needed_count=needed, removable=count - needed)
    message = f"{where}: {needed} instances hold every copy"
    native = consolidating(assessment, va, needed, floor)
    if native is not None:
        return RULE.finding(endpoint, va.variant.name, f"{message}: {native.note}", {**evidence, **native.evidence()})
    return RULE.finding(endpoint, va.variant.name, message, evidence, proposal=CountProposal(needed))


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    """Native consolidation priced by the empty instances it frees (with managed scaling on: those
    MinInstanceCount keeps); a fixed count (autoscaled variants) as fewer instances of the same type."""
    if isinstance(finding.proposal, CountProposal):
        return price_fewer_instances(finding, assessment, catalog, config)
    return price_consolidation(finding, assessment, catalog, config, ScalingProposal.from_evidence(finding.evidence),
                               saved_instances=int(finding.evidence["removable"]))


RULE = VariantRule(
    id="component-empty-instances",
    title="Instances host no inference-component copy",
    severity=Severity.MEDIUM,
    remediation="Turn on managed instance scaling with the CONSOLIDATION scale-in strategy between the instances "
                "that host copies and the count now (with managed instance scaling on: lower its MinInstanceCount, "
                "and SageMaker removes the empty instances itself).",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/inference-monitoring.html",
    judges=frozenset({Judged.REAL_TIME}),
    settings=EmptyInstancesSettings,
    threshold_field="min_empty_percent",
    check=check,
    price=price,
    # Native consolidation rather than a manual count of the same type (issue 27): their counts hold every
    # copy, so never fewer than this rule's.
    supersedes=frozenset({"overprovisioned-count", "underutilized"}),
)
