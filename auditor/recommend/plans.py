"""One plan per variant: the findings are the evidence, the plan is what to do.

Every priced finding proposes an option for its variant (a shape and count, a count, an
autoscaling policy, serverless, delete, scale out). The plan is:

- a scale-out, where one is advised: a variant falling behind is never told to shrink;
- otherwise the cheapest option, where a fixed resize (shape or count) and an autoscaling policy
  combine into the resized shape under a policy scaled to it, when that is cheaper still;
- the other options are listed under it as alternatives, with their own savings.

Each option of an instance-backed variant is replayed over the window on its shape (recommend/risk):
an option whose replay goes over 100% of a resource in any period is never proposed. Each plan
carries a stable id, its risk and its change as AWS requests (recommend/change). Plans sort by
saving, the largest first; risk is stated, and `--max-risk` filters by it.

Plans are per (resource, variant); for a job, per job: its risk from recommend/job_risk, its
change the next run's request (recommend/job_change). Pure: findings and the catalog in.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.config import AuditConfig
from auditor.models import (
    AutoscalingProposal,
    Change,
    Endpoint,
    EndpointReport,
    Finding,
    Plan,
    PlanBasis,
    PlanOption,
    ProcessingCost,
    Recommendation,
    ResourceRef,
    Risk,
    ScalingPolicy,
    TrainingCost,
    TransformCost,
    VariantReport,
    Window,
    price_usage,
)
from auditor.recommend.change import build_change, plan_id, scaling_risk
from auditor.recommend.demand import minimum_instances
from auditor.recommend.job_change import job_change
from auditor.recommend.job_risk import JobCost, job_risk
from auditor.recommend.packing import HostedCopies, hosted_copies
from auditor.recommend.risk import assess, exceeds_capacity, load_test_request, unreplayed_risk
from auditor.recommend.rule_changes import change_from_details, risk_from_details
from auditor.recommend.wording import advice_text

FIXED_ACTIONS = ("resize",)


def build_plans(findings: list[Finding] | tuple[Finding, ...], endpoints: tuple[EndpointReport, ...],
                catalog: Catalog, config: AuditConfig, window: Window | None = None,
                jobs: Iterable[JobCost] = ()) -> tuple[Plan, ...]:
    job_costs = {(c.job.account_id, c.job.region, _JOB_TYPES[type(c)], c.job.name): c for c in jobs}
    by_name = {(e.endpoint.region, e.endpoint.name): e.endpoint for e in endpoints}
    variants = {(e.endpoint.region, e.endpoint.name, v.variant.name): v for e in endpoints for v in e.variants}
    components = {(e.endpoint.region, e.endpoint.name, v.variant.name): e
                  for e in endpoints for v in e.variants
                  if e.components or not e.endpoint.inference_components_listed}
    usages = {(e.endpoint.region, e.endpoint.name): price_usage(e.endpoint) for e in endpoints}
    groups: dict[tuple[ResourceRef, str | None], list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.recommendation is not None:
            groups[(finding.resource, finding.variant)].append(finding)
    plans = []
    for (resource, variant_name), group in groups.items():
        region, name = resource.region, resource.name
        options = [_option(f) for f in group]
        hosting = components.get((region, name, variant_name or ""))
        copies = (hosted_copies(hosting.components, variant_name or "", hosting.endpoint.inference_components_listed)
                  if hosting else None)
        combined = _combined(group, catalog, config, region, usages.get((region, name), "hosting"), copies)
        if combined is not None:
            options.append(combined)
        variant = variants.get((region, name, variant_name)) if variant_name else None
        first = group[0]
        endpoint_kind = resource.type == "endpoint"
        job = job_costs.get((resource.account_id, region, resource.type, name))
        endpoint = by_name.get((region, name)) if endpoint_kind else None
        # Replayed over the endpoint's shape window, the part of the audit window its rules read.
        shaped = window.starting_at(endpoint.config_created_at) if window and endpoint else window
        # Endpoints: the replay; jobs: their next run's facts; other kinds: the level their rule
        # states from the facts it rests on, else the level for changes with nothing to replay.
        risks = {id(o): _risk(o, variant, catalog, config, shaped) if endpoint_kind
                 else job_risk(o, job, catalog, config) if job is not None
                 else risk_from_details(o.details) or unreplayed_risk(o) for o in options}
        # A replay over 100% of a resource in some period: the option would have failed on the
        # window's own load, so it is never proposed (nor offered as an alternative).
        options = [o for o in options if not ((r := risks[id(o)]) and exceeds_capacity(r.replays))]
        if not options:
            continue
        risky = [o for o in options if o.monthly_savings_usd < 0 and o.action == "scale-out"]
        proposed = (min(risky, key=lambda o: o.monthly_cost_usd) if risky
                    else max(options, key=lambda o: (o.monthly_savings_usd, o.action)))
        rec = first.recommendation
        assert rec is not None
        plan = Plan(
            resource=resource, variant=variant_name,
            current_instance_type=variant.variant.instance_type if variant else job.job.instance_type if job else None,
            current_instance_count=variant.variant.instance_count if variant else job.job.instance_count if job else 0,
            current_monthly_usd=rec.current_monthly_usd,
            proposed=proposed,
            alternatives=_alternatives(proposed, options, risks, group),
            measured=all(f.measured for f in group if f.rule in proposed.rules),
            endpoint_config=(endpoint.config_name or None) if endpoint else None,
            basis=PlanBasis(endpoint.config_name, endpoint.status, endpoint.variants, endpoint.autoscaling_known)
            if endpoint else None,
        )
        plans.append(_finished(plan, risks[id(proposed)], endpoint, variant, config, job))
    # Biggest money first (risk is a column and a filter, not the order); a plan that costs more
    # (a risk to fix) after those that save.
    plans.sort(key=lambda p: (-p.monthly_savings_usd, p.resource.region, p.resource.name, p.variant or ""))
    return tuple(plans)


def _alternatives(proposed: PlanOption, options: list[PlanOption], risks: dict[int, Risk | None],
                  group: list[Finding]) -> tuple[PlanOption, ...]:
    """The other options, by saving: each advises something else than the plan (and than each other;
    of two that advise the same, the one that saves most). One that saves nothing stays (`audit apply
    --option N` can apply it: autoscaling for the load's sake); the reports say "costs the same", never
    "$0.00" as if it were a saving."""
    kept: dict[str, PlanOption] = {}
    for o in sorted(options, key=lambda o: -o.monthly_savings_usd):
        if o is proposed or o.advice == proposed.advice or o.advice in kept:
            continue
        kept[o.advice] = replace(o, risk=risks[id(o)], measured=all(f.measured for f in group if f.rule in o.rules))
    return tuple(kept.values())


def _risk(option: PlanOption, variant: VariantReport | None, catalog: Catalog, config: AuditConfig,
          window: Window | None) -> Risk | None:
    unreplayed = unreplayed_risk(option)
    if unreplayed is not None:
        return unreplayed
    if variant is None:
        return None
    current_type = variant.variant.instance_type
    current = catalog.shape(current_type) if current_type else None
    new = catalog.shape(option.instance_type) if option.instance_type else None
    period = window.period_seconds if window else 3600
    hours = window.days * 24 if window else 0.0
    if variant.series is not None and not variant.series.empty and not hours:
        hours = len(variant.series) * period / 3600.0
    count = variant.average_instances if variant.average_instances else float(variant.variant.instance_count)
    return assess(option, variant.series, period, hours, current, count, new, variant.model_latency_max_ms,
                  config.recommend)


def _finished(plan: Plan, risk: Risk | None, endpoint: Endpoint | None, variant: VariantReport | None,
              config: AuditConfig, job: JobCost | None = None) -> Plan:
    """The plan with its stable id, its risk (with the load-test request where one is needed) and
    its change (for a job: its next run's request, recommend/job_change)."""
    plan = replace(plan, id=plan_id(plan))
    if risk is None:  # no replay applies: the level the rule stated, from the facts it rests on
        risk = risk_from_details(plan.proposed.details)
    if risk is not None and risk.load_test_first and endpoint is not None:
        model = _model_of(endpoint, plan.variant)
        request = load_test_request(plan.resource.account_id, plan.resource.name, plan.id, model, plan.proposed,
                                    config.recommend)
        risk = replace(risk, load_test_request=request)
    latency = variant.model_latency_max_ms if variant else None
    objective = config.recommend.latency_objective_ms
    # The p99 alarm: the objective when there is one, else 1.2 x the window's highest ModelLatency
    # (a p99 above anything the window saw means the new shape is slower).
    threshold = objective if objective > 0 else (round(latency * LATENCY_ALARM_FACTOR, 3) if latency else None)
    # A rule whose action is its own (off-hours, queue-alarm) carries its change in its details.
    change = (build_change(plan, endpoint, threshold, config.apply) or change_from_details(plan.proposed.details)
              or job_change(plan, job.job if job else None))
    # Each alternative gets its own change (`audit apply ID --option N`), named by its own id so
    # that its resources never take the proposed option's names.
    alternatives = tuple(replace(o, change=_alternative_change(plan, o, endpoint, threshold, config, job),
                                 risk=scaling_risk(o, endpoint, plan.variant, o.risk))
                         for o in plan.alternatives)
    # A change that deregisters an autoscaled variant: what it cannot carry across raises the risk.
    risk = scaling_risk(plan.proposed, endpoint, plan.variant, risk)
    return replace(plan, risk=risk, change=change, alternatives=alternatives)


def _alternative_change(plan: Plan, option: PlanOption, endpoint: Endpoint | None,
                        threshold: float | None, config: AuditConfig, job: JobCost | None) -> Change | None:
    as_proposed = replace(plan, proposed=option, alternatives=())
    as_proposed = replace(as_proposed, id=plan_id(as_proposed))
    return (build_change(as_proposed, endpoint, threshold, config.apply) or change_from_details(option.details)
            or job_change(as_proposed, job.job if job else None))


LATENCY_ALARM_FACTOR = 1.2
_JOB_TYPES = {TrainingCost: "training-job", TransformCost: "transform-job", ProcessingCost: "processing-job"}


def _model_of(endpoint: Endpoint, variant: str | None) -> str | None:
    described = endpoint.config_description or {}
    for key in ("ProductionVariants", "ShadowProductionVariants"):
        for v in described.get(key) or []:
            if v.get("VariantName") == variant and v.get("ModelName"):
                return str(v["ModelName"])
    return None


def _option(finding: Finding) -> PlanOption:
    rec = finding.recommendation
    assert rec is not None
    policy = rec.details.get("policy") if rec.action == "autoscale" else None
    return PlanOption((finding.rule,), rec.action, rec.instance_type, rec.instance_count, policy,
                      rec.recommended_monthly_usd, rec.monthly_savings_usd, advice_text(rec), dict(rec.details))


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
