"""The changes rules carry as data (off-hours, no-queue-alarm): a recommendation's
`details["change"]` (ApiCall dicts: service, operation, params, purpose), `details["rollback"]` and
`details["waits_for"]`, as the plan's `Change`. Pure: recommend imports nothing from analyse."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.models import ApiCall, Change


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
