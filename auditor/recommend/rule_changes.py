"""The changes rules carry as data (off-hours, no-queue-alarm, and the workspaces and HyperPod
kinds' plans): a recommendation's `details["change"]` (ApiCall dicts: service, operation, params,
purpose), `details["rollback"]` and `details["waits_for"]`, as the plan's `Change`; and where no
replay applies, `details["risk"]` ({level, basis[]}: the stated facts the level rests on) as its
`Risk`. Pure: recommend imports nothing from analyse."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.models import ApiCall, Change, Risk, RiskLevel


def change_from_details(details: Mapping[str, Any]) -> Change | None:
    """The Change a rule put in its recommendation's details; None where it carries none (no calls,
    e.g. `change_missing` says what setting they need)."""
    calls = details.get("change")
    if not calls:
        return None
    return Change(
        calls=tuple(ApiCall(str(c["service"]), str(c["operation"]), dict(c["params"]), str(c["purpose"]))
                    for c in calls),
        rollback=str(details.get("rollback") or ""),
        waits_for=details.get("waits_for"),
    )


def risk_from_details(details: Mapping[str, Any]) -> Risk | None:
    """The Risk a rule stated in its recommendation's details; None where it states none."""
    stated = details.get("risk")
    if not isinstance(stated, Mapping) or stated.get("level") not in {level.value for level in RiskLevel}:
        return None
    return Risk(level=RiskLevel(stated["level"]), basis=tuple(str(b) for b in stated.get("basis") or ()))
