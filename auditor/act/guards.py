"""What must hold before a plan is applied; each refusal is one line naming why.

`plan_refusal` reads only the plan and the config (the dry run says it without credentials);
`credentials_refusal` that apply has credentials of its own; `resource_refusal` what the resource
is now (its type's read, its kind's target found through auditor.kinds.registry, and its tags, read
with apply's credentials).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import Any

import botocore.exceptions
import botocore.model
import botocore.session
import botocore.validate

from auditor.act import APPLY_OPERATIONS
from auditor.act.binding import call_refusal, content_refusal
from auditor.act.plan import PlanToApply
from auditor.config import OPT_IN_TAG, ApplyConfig
from auditor.kinds.registry import runs_next, target_for
from auditor.models import RiskLevel
from auditor.text import one_line, one_line_words
from auditor.write.target import Observed

_MODELS = botocore.session.get_session()  # service models only: never sends a request


def plan_refusal(plan: PlanToApply, config: ApplyConfig, load_tested: bool = False) -> str | None:
    """Why this plan is never applied as it stands, or None. `load_tested`: whoever applies it says
    the load test its risk asks for was run and passed (`audit apply --load-tested`)."""
    who = f"plan {plan.id} ({one_line(plan.resource.name)})"
    if runs_next(plan.resource.type):
        return (f"{who}: its change is the next run's request (audit plans show {plan.id} --as cli); "
                "apply never starts a job")
    target = target_for(plan.resource.type)
    if target is None:
        return f"{who}: apply does not change a {one_line(plan.resource.type)}"
    if plan.change is None or not plan.change.calls:
        return f"{who}: its change cannot be expressed as API calls; apply it by hand"
    if not plan.measured:
        return f"{who}: it rests on circumstantial evidence (unmeasured); apply never makes an unmeasured change"
    if plan.risk is not None and plan.risk.load_test_first and not load_tested:
        return (f"{who}: load-test first ({one_line('; '.join(plan.risk.load_test_first))}); "
                "a replay of the window cannot predict it")
    if plan.risk is None:
        return f"{who}: its risk was not assessed; apply needs a risk at or under [apply] max_risk ({config.max_risk})"
    if plan.risk.level.rank > RiskLevel(config.max_risk).rank:
        return f"{who}: risk {plan.risk.level.value} is above [apply] max_risk = {config.max_risk}"
    for call in plan.change.calls:
        if (call.service, call.operation) not in APPLY_OPERATIONS:
            return (f"{who}: its change calls {one_line(call.service)}:{one_line(call.operation)}, "
                    "which apply never makes")
        problem = _invalid(call.service, call.operation, call.params)
        if problem:
            return f"{who}: its {call.service}:{call.operation} call is not valid: {problem}"
    problem = target.plan_problem(plan) or call_refusal(plan) or content_refusal(plan, config)
    return f"{who}: {problem}" if problem else None


def credentials_refusal(config: ApplyConfig) -> str | None:
    if config.profile or config.role_arn:
        return None
    return ("no apply credentials: set [apply] profile or [apply] role_arn (apply never uses the audit's "
            "read-only credentials; see deploy/iam-apply-policy.json)")


def account_refusal(plan: PlanToApply, caller_account: str) -> str | None:
    """Apply's credentials must act in the plan's account (checked before the resource is read)."""
    if caller_account != plan.resource.account_id:
        return (f"plan {plan.id}: the apply credentials act in account {caller_account}, "
                f"the plan is for account {plan.resource.account_id}")
    return None


def resource_refusal(plan: PlanToApply, config: ApplyConfig, observed: Observed,
                     tags: Callable[[str], dict[str, str]]) -> str | None:
    """Why the resource as it is now must not be changed, or None. `tags`: the tags of a resource by
    its ARN (ListTags), for the opt-in of each resource the target names (the plan's own, or the
    member endpoints of a shared one)."""
    target = target_for(plan.resource.type)
    if target is None:
        return f"apply does not change a {one_line(plan.resource.type)}"
    changed = target.changed(plan, observed)
    if changed:
        return changed
    key, value = OPT_IN_TAG
    patterns, listed = target.opt_in_patterns(config)
    for noun, arn, name in target.opt_in_resources(plan, observed):
        if not any(fnmatch.fnmatchcase(name, p) for p in patterns) and tags(arn).get(key) != value:
            return f"{noun} is not opted in: tag it {key}={value} or list it in {listed}"
    return None


def _invalid(service: str, operation: str, params: dict[str, Any]) -> str | None:
    """botocore's own check of the request against the service model, one line; None when it holds."""
    try:
        model = _MODELS.get_service_model(service).operation_model(operation)
        botocore.validate.validate_parameters(params, model.input_shape)
    except botocore.exceptions.ParamValidationError as exc:
        return one_line_words(str(exc.kwargs.get("report", exc)))
    except (botocore.exceptions.UnknownServiceError, botocore.exceptions.DataNotFoundError) as exc:
        return one_line(str(exc))
    except botocore.model.OperationNotFoundError:
        return "no such operation"
    return None
