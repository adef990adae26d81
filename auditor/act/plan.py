"""A stored plan (the JSON `plan_to_dict` writes, read back from the history) as what apply needs:
its change as the models' ApiCalls, its risk, and the endpoint config it was audited on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from auditor.config import AuditConfig
from auditor.kinds.registry import target_for
from auditor.models import ApiCall, Change, ResourceRef, Risk, RiskLevel
from auditor.records import stated_resource
from auditor.text import one_line

# The plan type and apply's errors live in the write core (every kind's target reads them); apply's
# callers keep importing them from here.
from auditor.write.plan import ApplyFailed as ApplyFailed
from auditor.write.plan import ApplyInterrupted as ApplyInterrupted
from auditor.write.plan import ApplyRefused
from auditor.write.plan import PlanToApply as PlanToApply


def plan_noun(plan: PlanToApply) -> str:
    """The plan's resource as apply's messages name it: its type's noun (its target's) and its name."""
    target = target_for(plan.resource.type)
    return target.named(plan) if target else f"{one_line(plan.resource.type)} {one_line(plan.resource.name)}"


# How far ahead of the apply host's clock a run's start or window end may be (clock skew), no more.
MAX_CLOCK_AHEAD = timedelta(minutes=5)
AUDITED_IN = "audited_in"  # the key load_plan adds: the run the plan is applied from (not the stored JSON's)


def load_plan(config: AuditConfig, plan_id: str, now: datetime | None = None) -> dict[str, Any]:
    """The stored plan `plan_id` as `plan_to_dict` wrote it, from the latest run that read its
    account and region without an error (neither partial nor interrupted), when that run holds it
    and started less than [apply] max_plan_age_hours ago; with `audited_in` added: that run's id,
    start and window end (what the fresh-evidence checks read from). The one place apply reads plans."""
    from auditor.history.store import History, history_path

    now = now or datetime.now(UTC)
    path = history_path(config)
    if not path.exists():
        raise ApplyRefused(f"no history database at {path} (history.path): run `audit run` first")
    with History(path, reading=True) as history:
        found = history.plan_and_run(plan_id)
        if found is None:
            raise ApplyRefused(f"no plan {one_line(plan_id)} in the history {path}: `audit plans` lists the stored "
                               "plans")
        plan, holder = found
        resource = stated_resource(plan)
        account, region = str(resource.get("account_id") or ""), str(resource.get("region") or "")
        where = f"account {one_line(account)} {one_line(region)}"
        latest = history.latest_clean_run(account, region)
        if latest is None:
            raise ApplyRefused(f"plan {one_line(plan_id)}: no run read {where} without an error (run {holder.id} "
                               f"holds the plan); run the audit again")
        if latest.id != holder.id:
            held = history.plan_in_run(latest.id, plan_id)
            if held is None:
                newer = latest.started_at > holder.started_at
                raise ApplyRefused(
                    f"plan {one_line(plan_id)} is from run {holder.id} ({_when(holder.started_at)}); "
                    + (f"run {latest.id} ({_when(latest.started_at)}) superseded it: it read {where} and does not "
                       "propose it; `audit plans` lists its plans" if newer else
                       f"that run did not read {where} without an error (partial, interrupted or failed there); "
                       "run the audit again"))
            plan = held
    ahead = [f"{what} {_when(moment)}" for what, moment in (("started", latest.started_at),
                                                             ("its window ended", latest.window_end))
             if moment - now > MAX_CLOCK_AHEAD]
    if ahead:  # a negative age would pass the age guard, and a future window end skip fresh evidence
        raise ApplyRefused(f"plan {one_line(plan_id)} is from run {latest.id}, which {' and '.join(ahead)}: over "
                           f"{MAX_CLOCK_AHEAD.seconds // 60} minutes after this host's clock ({_when(now)}); "
                           "check the clocks and run the audit again")
    age = (now - latest.started_at).total_seconds() / 3600
    if age >= config.apply.max_plan_age_hours:
        raise ApplyRefused(f"plan {one_line(plan_id)} is from run {latest.id}, started {age:.1f} hours ago "
                           f"({_when(latest.started_at)}), over [apply] max_plan_age_hours = "
                           f"{config.apply.max_plan_age_hours:g}; run the audit again")
    return {**plan, AUDITED_IN: {"run_id": latest.id, "started_at": latest.started_at.isoformat(),
                                 "window_end": latest.window_end.isoformat()}}


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def with_option(plan: dict[str, Any], option: int) -> dict[str, Any]:
    """The plan as if its alternative `option` (1 = the first listed) were proposed: its proposed
    option, saving, measured, risk and change are the alternative's (the stored JSON of schema 7+,
    where each alternative carries its own). 0: the plan as it is. What apply checks, applies and
    records (`applied_option` says which)."""
    if option == 0:
        return plan
    plan_id = str(plan.get("id") or "?")
    alternatives = plan.get("alternatives")
    count = len(alternatives) if isinstance(alternatives, list) else 0
    if option < 0 or option > count:
        listed = f"options 1 to {count}" if count else "no alternative"
        raise ApplyRefused(f"plan {plan_id} has {listed}: --option {option} names none "
                           "(`audit plans --format json` lists each plan's alternatives)")
    chosen = alternatives[option - 1] if isinstance(alternatives, list) else None
    if not isinstance(chosen, dict) or "change" not in chosen:
        raise ApplyRefused(f"plan {plan_id} cannot be read: its alternative {option} carries no change "
                           "(a history written before alternatives had theirs: run the audit again)")
    proposed = {k: v for k, v in chosen.items() if k not in ("measured", "risk", "change")}
    return {**plan, "proposed": proposed, "monthly_savings_usd": chosen.get("monthly_savings_usd"),
            "measured": chosen.get("measured") is True, "risk": chosen.get("risk"), "change": chosen.get("change"),
            "alternatives": [], "applied_option": option}


def parse_plan(plan: dict[str, Any], option: int = 0) -> PlanToApply:
    """The plan JSON as typed values; ApplyRefused naming the key when it is not a plan apply can read.
    `option`: an alternative instead of the proposed option (see `with_option`). A plan stored before
    schema 9 (top-level account_id, region, endpoint, resource_type) reads as its upgrade."""
    from auditor.history.store import upgraded_plan

    plan = upgraded_plan(plan)
    content_id = recomputed_id(plan, plan.get("proposed"))
    plan = with_option(plan, option)
    plan_id = str(plan.get("id") or "?")
    names_id = content_id if option == 0 else recomputed_id(plan, plan.get("proposed"))

    def need(key: str, kind: type, where: dict[str, Any] = plan) -> Any:
        value = where.get(key)
        if not isinstance(value, kind):
            raise ApplyRefused(f"plan {plan_id} cannot be read: {key} missing or not a {kind.__name__}")
        return value

    need("id", str)
    current = need("current", dict)
    proposed = need("proposed", dict)
    stated = need("resource", dict)
    for key in ("kind", "type", "name", "account_id", "region"):
        if not isinstance(stated.get(key), str):
            raise ApplyRefused(f"plan {plan_id} cannot be read: resource.{key} missing or not a str")
    resource = ResourceRef(kind=stated["kind"], type=stated["type"], name=stated["name"],
                           account_id=stated["account_id"], region=stated["region"])
    return PlanToApply(
        id=plan_id,
        resource=resource,
        variant=plan.get("variant") if isinstance(plan.get("variant"), str) else None,
        measured=plan.get("measured") is True,
        risk=_risk(plan_id, plan.get("risk")),
        change=_change(plan_id, plan.get("change")),
        audited_config=current.get("endpoint_config_name") if isinstance(current.get("endpoint_config_name"),
                                                                          str) else None,
        current=current,
        proposed=proposed,
        monthly_savings_usd=float(plan.get("monthly_savings_usd") or proposed.get("monthly_savings_usd") or 0.0),
        raw=plan,
        content_id=content_id,
        names_id=names_id or "",
        basis=plan.get("basis") if isinstance(plan.get("basis"), dict) else None,
        window_end=_window_end(plan.get(AUDITED_IN)),
    )


def _window_end(audited_in: Any) -> datetime | None:
    try:
        moment = datetime.fromisoformat(str(audited_in["window_end"]))
    except (TypeError, KeyError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def recomputed_id(plan: dict[str, Any], option: Any) -> str | None:
    """The id `build_plans` gives a plan of this resource proposing `option` (plan_id: a digest of
    the resource and the option's action, shape, count, policy and settings); None when the
    stored JSON does not hold them."""
    from auditor.models import Plan, PlanOption
    from auditor.recommend.change import plan_id

    if not isinstance(option, dict) or not isinstance(option.get("action"), str):
        return None
    details: dict[str, Any] = option["details"] if isinstance(option.get("details"), dict) else {}
    try:
        # As stored (an int, or None where the option has no count): the digest reads it as it is.
        count: Any = option.get("instance_count")
        stated = PlanOption(rules=(), action=option["action"], instance_type=option.get("instance_type"),
                            instance_count=count, autoscaling=option.get("autoscaling"),
                            monthly_cost_usd=0.0, monthly_savings_usd=0.0, advice="", details=dict(details))
        resource = stated_resource(plan)
        ref = ResourceRef(kind=str(resource.get("kind")), type=str(resource.get("type")),
                          name=str(resource.get("name")), account_id=str(resource.get("account_id")),
                          region=str(resource.get("region")))
        return plan_id(Plan(resource=ref, variant=plan.get("variant"), current_instance_type=None,
                            current_instance_count=0, current_monthly_usd=0.0, proposed=stated))
    except (TypeError, ValueError):
        return None


def _risk(plan_id: str, risk: Any) -> Risk | None:
    if risk is None:
        return None
    try:
        level = RiskLevel(risk["level"])
        reasons = tuple(str(r) for r in risk.get("load_test_first") or ())
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ApplyRefused(f"plan {plan_id} cannot be read: risk.level is not low, medium or high") from None
    return Risk(level=level, load_test_first=reasons)


def _change(plan_id: str, change: Any) -> Change | None:
    if change is None:
        return None
    try:
        calls = tuple(ApiCall(service=str(c["service"]), operation=str(c["operation"]), params=dict(c["params"]),
                              purpose=str(c.get("purpose") or "")) for c in change["calls"])
        # What a failure after a deregister puts back: the variant's target and policies as read.
        restore = tuple(ApiCall(service=str(c["service"]), operation=str(c["operation"]), params=dict(c["params"]),
                                purpose=str(c.get("purpose") or "")) for c in change.get("restore") or ())
        rollback = str(change.get("rollback") or "")
        waits_for = change.get("waits_for")
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ApplyRefused(f"plan {plan_id} cannot be read: change.calls must each have service, operation "
                           "and params") from None
    return Change(calls=calls, rollback=rollback, waits_for=str(waits_for) if waits_for else None, restore=restore)


def call_to_dict(call: ApiCall) -> dict[str, Any]:
    return {"service": call.service, "operation": call.operation, "params": call.params, "purpose": call.purpose}
