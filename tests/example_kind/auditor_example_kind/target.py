"""The example kind's apply target for a model: DescribeModel; unchanged = the model the audit
described (same ARN and creation time); DeleteModel answers at once, so apply is done when
DescribeModel no longer finds it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from auditor.collect.session import AwsClients
from auditor.text import one_line
from auditor.write.plan import PlanToApply
from auditor.write.target import ERRORS, Observed, Target, gone


class ModelTarget(Target):
    """A model deleted (DeleteModel)."""

    noun = "model"
    reads = frozenset({("sagemaker", "DescribeModel")})

    def plan_problem(self, plan: PlanToApply) -> str | None:
        calls = plan.calls_of("sagemaker", "DeleteModel")
        if len(calls) != 1 or calls[0].params.get("ModelName") != plan.resource.name:
            return "its change is not one DeleteModel naming the model"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        described = self.described(plan, "DescribeModel", lambda: api.describe_model(ModelName=plan.resource.name))
        return Observed(str(described.get("ModelArn") or ""), "present", described)

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        details = plan.proposed.get("details")
        created = details.get("created") if isinstance(details, dict) else None
        now = observed.described.get("CreationTime")
        if not isinstance(created, str) or not isinstance(now, datetime) or datetime.fromisoformat(created) != now:
            return f"model {one_line(plan.resource.name)} was made again since the audit: run the audit again"
        return None

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        api = clients.client("sagemaker", plan.resource.region)
        try:
            api.describe_model(ModelName=plan.resource.name)
        except ERRORS as exc:
            if gone(exc):
                return "applied", f"plan {plan.id} applied: model {one_line(plan.resource.name)} deleted"
            raise
        return "failed", f"plan {plan.id} failed: model {one_line(plan.resource.name)} is still there after DeleteModel"


TARGETS: dict[str, Target] = {"model": ModelTarget()}
