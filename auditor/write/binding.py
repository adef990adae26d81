"""How a resource type's calls are held to the plan's own resource (auditor.act.binding runs the
checks; each kind's package says them for its types: auditor/kinds/<kind>/binding.py or target.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from auditor.text import one_line
from auditor.write.plan import PlanToApply

# (plan, operation, parameters) -> what the call names that is not the plan's (a phrase), or None.
NamesCheck = Callable[[PlanToApply, str, dict[str, Any]], str | None]
# (plan, the call's index in the change, operation, parameters) -> what the call does that the plan
# does not (a phrase naming the key), or None.
ContentCheck = Callable[[PlanToApply, int, str, dict[str, Any]], str | None]


def _no_content_problem(plan: PlanToApply, index: int, operation: str, params: dict[str, Any]) -> str | None:
    return None


@dataclass(frozen=True)
class CallBinding:
    """One resource type's calls: the operations its plans make, the check that each call names
    the plan's resource, what each call may do, and the top-level parameter keys its change
    builders emit, by operation (a key outside is an effect no check looked at)."""

    operations: frozenset[tuple[str, str]]
    names: NamesCheck
    parameter_keys: Mapping[str, frozenset[str]]
    content: ContentCheck = field(default=_no_content_problem)


def names(value: Any, expected: str, what: str) -> str | None:
    """None when `value` is `expected`; otherwise "names <what> <value>"."""
    return None if value == expected else f"names {what} {one_line(str(value))}"
