"""What the next audit run checks after an apply, as a kind says it for each resource type it
changes (its `verifiers`, in auditor/kinds/<kind>/verify.py): pure over what the run saw (Evidence)
and the applied change as the history holds it; auditor.act.verify runs them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # history.store imports the report (to store plans), which imports the kinds: a type only here.
    from auditor.history.store import AppliedChange


ResourceKey = tuple[str, str, str]  # account, region, name (as the plan names the resource)


def key_of(change: AppliedChange) -> ResourceKey:
    return (change.account_id, change.region, change.endpoint)


@dataclass(frozen=True)
class Evidence:
    """What one run saw, by resource type (each kind's `seen`); a type missing or None where the run
    did not audit it."""

    seen: Mapping[str, Mapping[ResourceKey, Any] | None]
    blind: frozenset[tuple[str, str]]  # (account, region) with an error: an absence there proves nothing
    complete: bool  # the run was not cut short

    def found(self, change: AppliedChange, resource_type: str) -> Any | None:
        """The change's resource as the run saw it; None when it did not (or did not audit the type)."""
        return (self.seen.get(resource_type) or {}).get(key_of(change))

    def absent(self, change: AppliedChange, resource_type: str) -> bool:
        """Not in the run, where the run read that type in that region without an error."""
        seen = self.seen.get(resource_type)
        if seen is None or not self.complete:
            return False
        if (change.account_id, change.region) in self.blind or ("", change.region) in self.blind:
            return False
        return key_of(change) not in seen


# (the applied change, what the run saw) -> whether the run sees the change done.
Verifier = Callable[["AppliedChange", Evidence], bool]


def attempted(change: AppliedChange) -> list[dict[str, Any]]:
    """The calls made, and those the journal says failed (AWS may have done them all the same), as
    the plan has them."""
    failed = {(s.get("service"), s.get("operation")) for s in change.steps
              if s.get("step") == "call" and s.get("status") == "failed"}
    made = {(c.get("service"), c.get("operation")) for c in change.calls}
    planned = (change.plan.get("change") or {}).get("calls") or []
    return [*change.calls, *(c for c in planned if isinstance(c, dict)
                             and (c.get("service"), c.get("operation")) in failed - made)]


def operations(change: AppliedChange) -> set[tuple[str, str]]:
    return {(str(c.get("service")), str(c.get("operation"))) for c in attempted(change)}


def params_of(change: AppliedChange, service: str, operation: str) -> list[dict[str, Any]]:
    return [dict(c.get("params") or {}) for c in attempted(change) if (c.get("service"), c.get("operation")) ==
            (service, operation)]
