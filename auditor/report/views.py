"""What the report templates read about findings and plans: typed views made from the JSON
document (schema 9, auditor/data/audit-report.schema.json), each field named here, so that a
template reads `p.resource.label` or `f.owner` and never reaches into a model or guesses a key.

The views are made after `plain_document` (auditor/report/render.py) has made every string one
line; they add what the templates show beside the document: the resource's current shape and,
for an endpoint, its owner tag. A finding's or plan's `resource` is the models' ResourceRef.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.kinds.base import ShapeKey
from auditor.kinds.base import shape_key as kinds_shape_key
from auditor.models import ResourceRef


def resource_of(stated: Mapping[str, Any]) -> ResourceRef:
    """A document's `resource` ({kind, type, name, account_id, region}) as the typed reference."""
    return ResourceRef(kind=str(stated["kind"]), type=str(stated["type"]), name=str(stated["name"]),
                       account_id=str(stated["account_id"]), region=str(stated["region"]))


@dataclass(frozen=True)
class RecommendationView:
    action: str
    advice: str
    monthly_savings_usd: float


@dataclass(frozen=True)
class FindingView:
    rule: str
    title: str
    remediation: str
    severity: str
    resource: ResourceRef
    variant: str | None
    message: str
    recommendation: RecommendationView | None
    now: str  # the resource's current shape ("2 x ml.c5.xlarge"); "" when not known
    owner: str  # an endpoint's owner tag; "" for other resources or none

    @property
    def target(self) -> str:
        """"label / variant", or the label."""
        return self.resource.label + (f" / {self.variant}" if self.variant else "")


@dataclass(frozen=True)
class OptionView:
    """A plan's proposed option or one of its alternatives."""

    action: str
    advice: str
    monthly_savings_usd: float


@dataclass(frozen=True)
class RiskView:
    level: str
    load_test_first: bool
    peak: float | None  # the highest projected peak of its replays (percent); None: no replay


@dataclass(frozen=True)
class PlanView:
    id: str
    resource: ResourceRef
    variant: str | None
    monthly_savings_usd: float
    measured: bool
    findings: tuple[str, ...]
    proposed: OptionView
    alternatives: tuple[OptionView, ...]
    risk: RiskView | None
    now: str
    owner: str
    included_in: str = ""  # the id of the plan that includes this one (its saving counted there); "": none

    @property
    def target(self) -> str:
        """"label / variant", or the label."""
        return self.resource.label + (f" / {self.variant}" if self.variant else "")


Shapes = Mapping[ShapeKey, str]  # what runs now, by resource (kinds.base.shape_key)
OwnerKey = tuple[str, str, str]  # an endpoint's (account, region, name)


def shape_key(resource: Mapping[str, Any], variant: str | None) -> ShapeKey:
    """The key of a finding's or a plan's resource (its JSON `resource`) in Shapes."""
    return kinds_shape_key(str(resource.get("type")), resource, str(resource.get("name")), variant)


def finding_view(finding: Mapping[str, Any], shapes: Shapes, owners: Mapping[OwnerKey, str]) -> FindingView:
    """A finding of the document (finding_to_dict) as the templates read it."""
    resource = resource_of(finding["resource"])
    rec = finding["recommendation"]
    return FindingView(
        rule=finding["rule"], title=finding["title"], remediation=finding["remediation"],
        severity=finding["severity"], resource=resource, variant=finding["variant"], message=finding["message"],
        recommendation=None if not rec else RecommendationView(rec["action"], rec["advice"],
                                                               rec["monthly_savings_usd"]),
        now=shapes.get(shape_key(finding["resource"], finding["variant"])) or "",
        owner=_owner(resource, owners),
    )


def _key(resource: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(resource.get(k)) for k in ("kind", "type", "name", "account_id", "region"))


def included_plans(plans: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The document's plans another plan includes: plan id -> the including plan's id (the JSON form
    of auditor.models.covered_plans, which the headline's figures use)."""
    covering = {_key(r): str(p.get("id") or "") for p in plans
                if p.get("measured", True) and float(p.get("monthly_savings_usd") or 0) > 0
                for r in p.get("covers") or []}
    return {str(p.get("id") or ""): covering[_key(p.get("resource") or {})] for p in plans
            if _key(p.get("resource") or {}) in covering and covering[_key(p.get("resource") or {})] != p.get("id")}


def plan_view(plan: Mapping[str, Any], shapes: Shapes, owners: Mapping[OwnerKey, str],
              included: Mapping[str, str] | None = None) -> PlanView:
    """A plan of the document (plan_to_dict) as the templates read it; `included`: included_plans."""
    resource = resource_of(plan["resource"])
    risk = plan.get("risk")
    return PlanView(
        id=plan.get("id") or "", resource=resource, variant=plan["variant"],
        monthly_savings_usd=plan["monthly_savings_usd"], measured=plan.get("measured", True),
        findings=tuple(plan["findings"]), proposed=_option(plan["proposed"]),
        alternatives=tuple(_option(a) for a in plan["alternatives"]),
        risk=None if not risk else RiskView(
            level=risk["level"], load_test_first=bool(risk.get("load_test_first")),
            peak=max((r["peak"] for r in risk.get("replays") or []), default=None)),
        now=shapes.get(shape_key(plan["resource"], plan["variant"])) or "",
        owner=_owner(resource, owners),
        included_in=(included or {}).get(str(plan.get("id") or ""), ""),
    )


def _option(option: Mapping[str, Any]) -> OptionView:
    return OptionView(option["action"], option["advice"], option["monthly_savings_usd"])


def _owner(resource: ResourceRef, owners: Mapping[OwnerKey, str]) -> str:
    """The owner tag the report shows: endpoints' (by account, region and name); another kind's
    resource of the same name is not that endpoint."""
    return owners.get((resource.account_id, resource.region, resource.name), "") if resource.type == "endpoint" else ""
