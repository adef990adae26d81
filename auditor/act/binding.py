"""Every call of a stored plan names the plan's own resource (stored plans are data from disk:
untrusted). The guards check one resource (its tag, its state); a call that acts on another one
would bypass them, so each call is held, before the first is made, to what the plan is for:

- its operation is one apply makes for the plan's resource type (an endpoint plan never stops a
  notebook, a notebook plan never deletes an endpoint);
- the names it carries are the plan's resource, its variants, or names derived from the plan id
  (auditor.recommend.change.resource_name and the rules' own naming);
- the plan id is the digest of the plan's content (auditor.recommend.change.plan_id), so the names
  derived from it cannot be pointed elsewhere by editing the id.

`call_refusal` reads the plan alone (the dry run says it without credentials); `content_refusal`
what each call does, from the plan alone too (its parameter keys, alarm actions, capacities,
policies, order, domain settings). Each resource type's operations, names, parameter keys and
content checks are its kind's (auditor/kinds/<kind>/binding.py, its `bindings`, found through
auditor.kinds.registry); what only the resource as it is now can say (an endpoint's variants and
inference components, a config copy) its target checks (auditor/kinds/endpoints/binding.py's
`observed_refusal`).
"""

from __future__ import annotations

from typing import Any

from auditor.act.answers import describe, referred_call
from auditor.act.plan import PlanToApply
from auditor.config import ApplyConfig
from auditor.kinds.registry import BINDINGS, binding_for
from auditor.models import ApiCall, parse_reference, references_in
from auditor.text import one_line

# The operations each resource type's plans make, and the top-level keys of each operation's
# parameters (exactly those the change builders emit), gathered from the kinds.
OPERATIONS_BY_TYPE: dict[str, frozenset[tuple[str, str]]] = {t: b.operations for t, b in BINDINGS.items()}
PARAMETER_KEYS: dict[str, frozenset[str]] = {
    operation: keys for binding in BINDINGS.values() for operation, keys in binding.parameter_keys.items()}


def call_refusal(plan: PlanToApply) -> str | None:
    """The first call that does not name the plan's resource (one line naming the call and the
    name), or a plan id that is not its content's; None when every call is the plan's."""
    if plan.content_id is not None and plan.content_id != plan.id:
        return (f"its id does not match its content (recomputed {plan.content_id}): the stored plan was edited or "
                "written by another version; run the audit again")
    if plan.content_id is None:
        return "its id cannot be recomputed from its content (proposed option unreadable); run the audit again"
    binding = binding_for(plan.resource.type)
    allowed = binding.operations if binding else frozenset()
    calls = plan.change.calls if plan.change else ()
    for number, call in enumerate(calls, start=1):
        which = f"call {number} ({one_line(call.service)}:{one_line(call.operation)})"
        for reference in references_in(call.params):
            if referred_call(calls[:number - 1], reference) is None:
                return f"{which} takes {describe(reference)}, which no earlier call of the change makes"
        if (call.service, call.operation) not in allowed:
            return f"{which} is not a call {one_line(plan.resource.type)} plans make"
        problem = binding.names(plan, call.operation, call.params) if binding else "no check for this resource type"
        if problem:
            return f"{which} {problem}, not the plan's {one_line(plan.resource.name)}"
    return None


ALARM_ACTION_KEYS = ("AlarmActions", "OKActions", "InsufficientDataActions")


def content_refusal(plan: PlanToApply, config: ApplyConfig) -> str | None:
    """What each call does, read from the plan alone (after `call_refusal`: the names are the plan's):
    only the parameter keys the builders emit; alarms notify only [apply] alarm_topic_arn; scaling
    capacities and policies are the plan's own or the variant's as the audit saw them; a
    deregister is followed by the update and the target registered again; UpdateDomain sets only
    the app settings the plan copies. One line naming the call and the key; None when all hold."""
    calls = plan.change.calls if plan.change else ()
    binding = binding_for(plan.resource.type)
    for number, call in enumerate(calls, start=1):
        which = f"call {number} ({one_line(call.service)}:{one_line(call.operation)})"
        extra = sorted(set(call.params) - (binding.parameter_keys.get(call.operation, frozenset()) if binding
                                           else frozenset()))
        if extra:
            return f"{which} sets {', '.join(one_line(str(k)) for k in extra)}, which no plan's change sets"
        problem = _alarm_problem(config, call.operation, call.params, calls[:number - 1]) or (
            binding.content(plan, number - 1, call.operation, call.params) if binding else None)
        if problem:
            return f"{which} {problem}"
    return None


def _alarm_problem(config: ApplyConfig, operation: str, params: dict[str, Any],
                   earlier: tuple[ApiCall, ...] = ()) -> str | None:
    """An alarm notifies only [apply] alarm_topic_arn (whichever kind's plan puts it); its
    AlarmActions may also invoke a scaling policy an earlier call of the same change puts (the
    answer reference to its PolicyARN: a step-scaling policy runs only when its alarm invokes it)."""
    if operation == "PutMetricAlarm":
        for key in ALARM_ACTION_KEYS:
            actions = params.get(key)

            def allowed(action: Any, key: str = key) -> bool:
                return ((config.alarm_topic_arn is not None and action == config.alarm_topic_arn)
                        or (key == "AlarmActions" and _policy_put_before(action, earlier)))

            if actions is not None and (not isinstance(actions, list) or not all(allowed(a) for a in actions)):
                shown = ", ".join(one_line(str(a)) for a in actions) if isinstance(actions, list) else "?"
                return (f"sets {key} {shown}: alarms notify only [apply] alarm_topic_arn "
                        f"({one_line(config.alarm_topic_arn or 'not set')})")
    return None


def _policy_put_before(action: Any, earlier: tuple[ApiCall, ...]) -> bool:
    """`action` is the PolicyARN of a PutScalingPolicy among `earlier` (the plan's own calls before
    the alarm's; that call's names are held to the plan's resource by `call_refusal`)."""
    reference = parse_reference(action)
    return (reference is not None and (reference.operation, reference.field) == ("PutScalingPolicy", "PolicyARN")
            and referred_call(earlier, reference) is not None)
