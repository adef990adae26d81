"""One plan per variant: the findings are the evidence, the plan is what to do.

Every priced finding proposes an option for its variant (a shape and count, a count, an
autoscaling policy, serverless, delete, scale out). The plan is:

- a scale-out, where one is advised: a variant falling behind is never told to shrink;
- otherwise the cheapest option (its kind may add options that combine findings: an endpoint's
  resize under an autoscaling policy scaled to it);
- the other options are listed under it as alternatives, with their own savings.

What the plan rests on is its kind's (ResourceKind.plan_subjects, a `PlanSubject` per resource):
the current shape and count, the risk of each option (an endpoint's replay over the window, a
job's next run, else the level the rule states from the facts it rests on) and the change as AWS
requests. An option whose replay goes over 100% of a resource in any period is never proposed.
Each plan carries a stable id (recommend/change). Plans sort by saving, the largest first; risk is
stated, and `--max-risk` filters by it. Pure: findings and the kinds' subjects in.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from auditor.models import Change, Finding, Plan, PlanOption, ResourceRef, Risk
from auditor.recommend.change import plan_id
from auditor.recommend.risk import exceeds_capacity, unreplayed_risk
from auditor.recommend.rule_changes import change_from_details, risk_from_details
from auditor.wording import advice_text


@dataclass(frozen=True)
class PlanSubject:
    """The resource one plan is for (a variant, a job, a notebook ...) as its kind knows it. This
    base knows only the findings: the risk and the change a rule states in its details (workspaces,
    HyperPod). A kind whose plans rest on more (an endpoint's replay, a job's next run) subclasses it."""

    instance_type: str | None = None  # the current shape and count
    instance_count: int = 0
    # What `audit apply` reads again live and compares, as JSON-safe data (Plan.basis), and the
    # endpoint config the audit saw (Plan.endpoint_config); None: the kind records none.
    basis: dict[str, Any] | None = None
    endpoint_config: str | None = None
    # The resources whose own plans this one includes (Plan.covers): a consolidation's members.
    covers: tuple[ResourceRef, ...] = ()

    def options(self, findings: Sequence[Finding]) -> tuple[PlanOption, ...]:
        """Options beyond one per finding: those that combine findings."""
        return ()

    def risk(self, option: PlanOption) -> Risk | None:
        """The option's risk on the resource's own facts (None: nothing to assess it on)."""
        return risk_from_details(option.details) or unreplayed_risk(option)

    def carried_risk(self, option: PlanOption, risk: Risk | None) -> Risk | None:
        """`risk` with what the option's change cannot carry across (the plan's and alternatives')."""
        return risk

    def proposed_risk(self, plan: Plan, risk: Risk | None) -> Risk | None:
        """The proposed option's risk as the plan (with its id) states it."""
        return self.carried_risk(plan.proposed, risk)

    def change(self, plan: Plan) -> Change | None:
        """The requests that make the plan's proposed option (a rule whose action is its own carries
        them in its details)."""
        return change_from_details(plan.proposed.details)


# A kind's subjects: the subject of the plan a finding belongs to, or None when it is not the kind's.
SubjectOf = Callable[[Finding], PlanSubject | None]


def no_subjects(_finding: Finding) -> PlanSubject | None:
    return None


def build_plans(findings: Iterable[Finding], subjects: Sequence[SubjectOf] = ()) -> tuple[Plan, ...]:
    """One plan per resource and variant with a priced finding; `subjects`: each kind's (a finding
    that none claims gets the base `PlanSubject`)."""
    groups: dict[tuple[ResourceRef, str | None], list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.recommendation is not None:
            groups[(finding.resource, finding.variant)].append(finding)
    plans = []
    for (resource, variant_name), group in groups.items():
        first = group[0]
        subject = next((s for of in subjects if (s := of(first)) is not None), None) or PlanSubject()
        options = [*(_option(f) for f in group), *subject.options(group)]
        risks = {id(o): subject.risk(o) for o in options}
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
            current_instance_type=subject.instance_type,
            current_instance_count=subject.instance_count,
            current_monthly_usd=rec.current_monthly_usd,
            proposed=proposed,
            alternatives=_alternatives(proposed, options, risks, group),
            measured=all(f.measured for f in group if f.rule in proposed.rules),
            endpoint_config=subject.endpoint_config,
            basis=subject.basis,
            covers=subject.covers,
        )
        plans.append(_finished(plan, risks[id(proposed)], subject))
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


def _finished(plan: Plan, risk: Risk | None, subject: PlanSubject) -> Plan:
    """The plan with its stable id, its risk and its change; each alternative with its own change
    (`audit apply ID --option N`), named by its own id so that its resources never take the
    proposed option's names."""
    plan = replace(plan, id=plan_id(plan))
    if risk is None:  # nothing assessed it: the level the rule stated, from the facts it rests on
        risk = risk_from_details(plan.proposed.details)
    alternatives = tuple(replace(o, change=subject.change(_proposing(plan, o)),
                                 risk=subject.carried_risk(o, o.risk))
                         for o in plan.alternatives)
    return replace(plan, risk=subject.proposed_risk(plan, risk), change=subject.change(plan),
                   alternatives=alternatives)


def _proposing(plan: Plan, option: PlanOption) -> Plan:
    as_proposed = replace(plan, proposed=option, alternatives=())
    return replace(as_proposed, id=plan_id(as_proposed))


def _option(finding: Finding) -> PlanOption:
    rec = finding.recommendation
    assert rec is not None
    policy = rec.details.get("policy") if rec.action == "autoscale" else None
    return PlanOption((finding.rule,), rec.action, rec.instance_type, rec.instance_count, policy,
                      rec.recommended_monthly_usd, rec.monthly_savings_usd, advice_text(rec), dict(rec.details))
