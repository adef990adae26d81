"""What an endpoint's plans rest on (recommend/plans.py builds them): each variant's shape, each
option replayed over the window on its shape (recommend/risk), the resize under an autoscaling
policy scaled to it, the load-test request where a replay cannot predict the new shape, what a
change that deregisters an autoscaled variant cannot carry across, and the change as AWS requests
(change.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.change import MANAGED_SCALING, build_change, scaling_risk
from auditor.kinds.endpoints.consolidation import LOAD_TEST_FIRST, SHARED_TYPE
from auditor.kinds.endpoints.models import Endpoint, EndpointReport, PlanBasis, VariantReport, price_usage
from auditor.kinds.endpoints.packing import HostedCopies, hosted_copies
from auditor.models import (
    AutoscalingProposal,
    Change,
    Finding,
    Plan,
    PlanOption,
    Recommendation,
    Resource,
    ResourceRef,
    ResourceReplay,
    Risk,
    ScalingPolicy,
    Window,
)
from auditor.recommend.change import tagged
from auditor.recommend.demand import minimum_instances
from auditor.recommend.plans import PlanSubject, SubjectOf
from auditor.recommend.risk import assess, load_test_request, unreplayed_risk
from auditor.recommend.rule_changes import change_from_details, risk_from_details
from auditor.wording import advice_text

FIXED_ACTIONS = ("resize",)
LATENCY_ALARM_FACTOR = 1.2
RESOURCE_TYPE = "endpoint"  # its findings' and plans' resource type


def plan_subjects(section: tuple[EndpointReport, ...], catalog: Catalog, config: AuditConfig,
                  window: Window | None) -> SubjectOf:
    """The variant (or endpoint) each endpoint finding's plan is for."""
    # Keyed by account too: two accounts may each have an endpoint of the same name in a region.
    by_name = {(e.endpoint.account_id, e.endpoint.region, e.endpoint.name): e.endpoint for e in section}
    variants = {(e.endpoint.account_id, e.endpoint.region, e.endpoint.name, v.variant.name): v
                for e in section for v in e.variants}
    components = {(e.endpoint.account_id, e.endpoint.region, e.endpoint.name, v.variant.name): e
                  for e in section for v in e.variants
                  if e.components or not e.endpoint.inference_components_listed}

    def subject_of(finding: Finding) -> PlanSubject | None:
        if finding.resource.type == SHARED_TYPE and finding.recommendation is not None:
            return shared_subject(finding.recommendation.details, config, finding.resource)
        if finding.resource.type != RESOURCE_TYPE:
            return None
        where = (finding.resource.account_id, finding.resource.region, finding.resource.name)
        variant_name = finding.variant
        endpoint = by_name.get(where)
        variant = variants.get((*where, variant_name)) if variant_name else None
        hosting = components.get((*where, variant_name or ""))
        copies = (hosted_copies(hosting.components, variant_name or "", hosting.endpoint.inference_components_listed)
                  if hosting else None)
        # Replayed over the endpoint's shape window, the part of the audit window its rules read.
        shaped = window.starting_at(endpoint.config_created_at) if window and endpoint else window
        return VariantSubject(
            instance_type=variant.variant.instance_type if variant else None,
            instance_count=variant.variant.instance_count if variant else 0,
            basis=basis_to_dict(PlanBasis(endpoint.config_name, endpoint.status, endpoint.variants,
                                          endpoint.autoscaling_known)) if endpoint else None,
            endpoint_config=(endpoint.config_name or None) if endpoint else None,
            endpoint=endpoint, variant_name=variant_name, variant=variant, copies=copies,
            catalog=catalog, config=config, window=shaped)

    return subject_of


@dataclass(frozen=True, kw_only=True)
class VariantSubject(PlanSubject):
    endpoint: Endpoint | None  # None: not in the report's section (its change cannot be written)
    variant_name: str | None
    variant: VariantReport | None
    copies: HostedCopies | None  # its inference components' copies, where it hosts any
    catalog: Catalog
    config: AuditConfig
    window: Window | None

    def options(self, findings: Sequence[Finding]) -> tuple[PlanOption, ...]:
        region = findings[0].resource.region
        usage = price_usage(self.endpoint) if self.endpoint else "hosting"
        combined = _combined(list(findings), self.catalog, self.config, region, usage, self.copies)
        return (combined,) if combined is not None else ()

    def risk(self, option: PlanOption) -> Risk | None:
        stated = risk_from_details(option.details)  # a rule that states the level on its own facts
        if option.action == MANAGED_SCALING and stated is not None:
            # Native consolidation: the count rests on the copies' reservations; the variant's load
            # replayed on that count says what the instances it keeps carry (over 100%: never proposed).
            return with_replay(stated, self._replayed(replace(option, action="resize")))
        unreplayed = stated or unreplayed_risk(option)
        if unreplayed is not None:
            return unreplayed
        return self._replayed(option)

    def _replayed(self, option: PlanOption) -> Risk | None:
        """The option replayed over the window on its shape (recommend/risk.assess)."""
        variant, window = self.variant, self.window
        if variant is None:
            return None
        current_type = variant.variant.instance_type
        current = self.catalog.shape(current_type) if current_type else None
        new = self.catalog.shape(option.instance_type) if option.instance_type else None
        period = window.period_seconds if window else 3600
        hours = window.days * 24 if window else 0.0
        if variant.series is not None and not variant.series.empty and not hours:
            hours = len(variant.series) * period / 3600.0
        count = variant.average_instances if variant.average_instances else float(variant.variant.instance_count)
        return assess(option, variant.series, period, hours, current, count, new, variant.model_latency_max_ms,
                      self.config.recommend)

    def carried_risk(self, option: PlanOption, risk: Risk | None) -> Risk | None:
        # A change that deregisters an autoscaled variant: what it cannot carry across raises the risk.
        return scaling_risk(option, self.endpoint, self.variant_name, risk)

    def proposed_risk(self, plan: Plan, risk: Risk | None) -> Risk | None:
        if risk is not None and risk.load_test_first and self.endpoint is not None:
            model = _model_of(self.endpoint, plan.variant)
            request = load_test_request(plan.resource.account_id, plan.resource.name, plan.id, model, plan.proposed,
                                        self.config.recommend)
            risk = replace(risk, load_test_request=request)
        return self.carried_risk(plan.proposed, risk)

    def change(self, plan: Plan) -> Change | None:
        latency = self.variant.model_latency_max_ms if self.variant else None
        objective = self.config.recommend.latency_objective_ms
        # The p99 alarm: the objective when there is one, else 1.2 x the window's highest ModelLatency
        # (a p99 above anything the window saw means the new shape is slower).
        threshold = objective if objective > 0 else (round(latency * LATENCY_ALARM_FACTOR, 3) if latency else None)
        # A rule whose action is its own (off-hours, queue-alarm) carries its change in its details.
        return (build_change(plan, self.endpoint, threshold, self.config.apply)
                or change_from_details(plan.proposed.details))


def with_replay(stated: Risk, replayed: Risk | None) -> Risk:
    """The level a rule stated, with the replay's figures (and its level where that is higher)."""
    if replayed is None:
        return stated
    level = replayed.level if replayed.level.rank > stated.level.rank else stated.level
    return replace(stated, level=level, replays=replayed.replays, load_test_first=replayed.load_test_first)




def shared_subject(details: Mapping[str, Any], config: AuditConfig,
                   shared_endpoint: ResourceRef | None = None) -> SharedEndpointSubject:
    """A shared endpoint's plan (consolidate-onto-components): what apply reads again live is each
    member as the audit saw it (design C2); the plan covers the members' own plans (Plan.covers)."""
    members = [m for m in details.get("members") or [] if isinstance(m, Mapping)]
    shared = details.get("shared") if isinstance(details.get("shared"), Mapping) else {}
    assert isinstance(shared, Mapping)
    basis = {"shared_endpoint": shared.get("endpoint"),
             "members": [{"endpoint": m.get("endpoint"), "endpoint_config": m.get("endpoint_config"),
                          "status": m.get("status"), "variant": m.get("variant"), "model": m.get("model"),
                          "execution_role": m.get("execution_role")}
                         for m in members]}
    return SharedEndpointSubject(instance_type=None, instance_count=sum(int(m.get("instance_count") or 0)
                                                                        for m in members),
                                 basis=basis, config=config,
                                 covers=() if shared_endpoint is None else tuple(
                                     replace(shared_endpoint, type=RESOURCE_TYPE, name=str(m.get("endpoint")))
                                     for m in members))


@dataclass(frozen=True, kw_only=True)
class SharedEndpointSubject(PlanSubject):
    """The plan for an endpoint consolidation would create: its risk is the rule's (at least medium,
    load-test first, with the time-aligned replay's figures); its change is the rule's calls, each
    tagged with the plan's id."""

    config: AuditConfig

    def risk(self, option: PlanOption) -> Risk | None:
        stated = risk_from_details(option.details)
        if stated is None:
            return None
        resources = (option.details.get("replay") or {}).get("resources") or {}
        replays = tuple(ResourceReplay(Resource(name), float(r["p95_percent"]), float(r["peak_percent"]),
                                       float(r["hours_over_target"]), float(r["hours_over_100"]),
                                       float(r["headroom_at_peak_percent"]))
                        for name, r in resources.items())
        # The load test is said once, as what to do first (the rule's basis names it too).
        return replace(stated, replays=replays, load_test_first=(LOAD_TEST_FIRST,),
                       basis=tuple(b for b in stated.basis if b != LOAD_TEST_FIRST))

    def proposed_risk(self, plan: Plan, risk: Risk | None) -> Risk | None:
        members = plan.proposed.details.get("members") or []
        shared = plan.proposed.details.get("shared") or {}
        if risk is None or not members:
            return risk
        # Inference Recommender tests one model at a time: the member with the largest reservation.
        heaviest = max(members, key=lambda m: (float(m["compute"].get("NumberOfCpuCoresRequired", 0)),
                                               int(m["compute"].get("MinMemoryRequiredInMb", 0))))
        request = load_test_request(plan.resource.account_id, str(shared.get("endpoint") or plan.resource.name),
                                    plan.id, str(heaviest["model"]), plan.proposed, self.config.recommend)
        return replace(risk, load_test_request=request)

    def change(self, plan: Plan) -> Change | None:
        found = change_from_details(plan.proposed.details)
        if found is None:
            return None
        calls = tuple(replace(c, params={**c.params, "Tags": tagged(c.params.get("Tags") or [], plan.id)})
                      for c in found.calls)
        return replace(found, calls=calls)


def _model_of(endpoint: Endpoint, variant: str | None) -> str | None:
    described = endpoint.config_description or {}
    for key in ("ProductionVariants", "ShadowProductionVariants"):
        for v in described.get(key) or []:
            if v.get("VariantName") == variant and v.get("ModelName"):
                return str(v["ModelName"])
    return None


def _combined(group: list[Finding], catalog: Catalog, config: AuditConfig, region: str,
              usage: str, copies: HostedCopies | None = None) -> PlanOption | None:
    """The cheapest fixed resize under the autoscaling policy, scaled to the new shape: the policy's
    average load in the new shape's instances, never fewer than the floor (nor than the instances
    that hold the variant's inference component copies) nor more than the count the resize found
    holds the peak."""
    scaling = next((f for f in group if isinstance(f.proposal, AutoscalingProposal) and f.recommendation), None)
    fixed = [f for f in group if f.recommendation is not None and f.recommendation.action in FIXED_ACTIONS
             and f.recommendation.monthly_savings_usd > 0]
    if scaling is None or not fixed:
        return None
    resize = min(fixed, key=lambda f: f.recommendation.recommended_monthly_usd if f.recommendation else math.inf)
    rec, base = resize.recommendation, scaling.recommendation
    assert rec is not None and base is not None and isinstance(scaling.proposal, AutoscalingProposal)
    old, new = catalog.shape(base.instance_type or ""), catalog.shape(rec.instance_type or "")
    price = catalog.priced_like(base.instance_type or "", region, usage)(rec.instance_type or "", region)
    if old is None or new is None or price is None or not rec.instance_count:
        return None
    ratio = old.vcpu / new.vcpu  # new instances per old instance, for the same CPU load
    policy = scaling.proposal.policy
    floor = minimum_instances(rec.instance_count, config.recommend)
    maximum = rec.instance_count  # holds the observed peak, by the resize's own sizing
    for_copies = copies.instances(new) if copies is not None else 0
    if for_copies is None:
        return None  # the copies' reservations are unknown, or a copy does not fit the new shape
    minimum = min(maximum, max(floor, for_copies, math.ceil(policy.min_capacity * ratio - 1e-9)))
    if maximum <= minimum:
        return None  # nothing left to scale: the fixed resize says it all
    average = min(maximum, max(minimum, scaling.proposal.average_instances * ratio))
    combined_policy = ScalingPolicy(policy.metric, round(policy.target_value / ratio, 1), minimum, maximum)
    monthly = round(price * average * HOURS_PER_MONTH, 2)
    recommendation = Recommendation("resize+autoscale", rec.instance_type, minimum, rec.current_monthly_usd, monthly,
                                    details={"policy": combined_policy.as_dict()})
    return PlanOption(tuple(sorted({resize.rule, scaling.rule})), "resize+autoscale", rec.instance_type, minimum,
                      combined_policy.as_dict(), monthly, recommendation.monthly_savings_usd,
                      advice_text(recommendation))


def basis_to_dict(basis: PlanBasis) -> dict[str, Any]:
    """What an endpoint plan was computed from, as the plan carries it (Plan.basis, the JSON's
    `basis`): `audit apply` reads it live again and compares."""
    return {
        "endpoint_config_name": basis.endpoint_config_name,
        "status": basis.status,
        "autoscaling_read": basis.autoscaling_read,
        "variants": [{
            "name": v.name, "instance_type": v.instance_type, "instance_count": v.instance_count,
            "weight": v.weight, "shadow": v.shadow,
            "serverless": None if v.serverless_memory_mb is None else {
                "memory_size_mb": v.serverless_memory_mb, "max_concurrency": v.serverless_max_concurrency},
            "managed_instance_scaling": None if v.managed_scaling is None else {
                "min_instances": v.managed_scaling.min_instances, "max_instances": v.managed_scaling.max_instances},
            "autoscaling": None if v.autoscaling is None else {
                "min_capacity": v.autoscaling.min_capacity, "max_capacity": v.autoscaling.max_capacity,
                "policies": list(v.autoscaling.policies)},
        } for v in basis.variants],
    }
