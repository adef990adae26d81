"""Every call of a model plan names the plan's own model (auditor.act.binding runs this check)."""

from __future__ import annotations

from typing import Any

from auditor.write.binding import CallBinding, names
from auditor.write.plan import PlanToApply


def _model_call(plan: PlanToApply, operation: str, params: dict[str, Any]) -> str | None:
    return names(params.get("ModelName"), plan.resource.name, "model")


BINDINGS = {"model": CallBinding(frozenset({("sagemaker", "DeleteModel")}), _model_call,
                                 {"DeleteModel": frozenset({"ModelName"})})}
