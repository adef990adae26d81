"""The apply journal: one row of the history's `applied` table, written before the first write call
(outcome `in-progress`: the plan, the calls it will make, who, when) and updated after each step, so
that whatever stops the process, the history says which calls were made and what AWS answered.

Each step is a dict: `step` (call | read | restore | cleanup | note), and for a call `service`,
`operation`, `status` (made | landed | reused | failed | skipped), the answer's key fields or the
error, and `at`. A change that cannot be journaled is not made: `Journal.begin` failing refuses the
apply before any call.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from auditor.act.plan import ApplyRefused, PlanToApply, call_to_dict
from auditor.errors import AuditorError
from auditor.history.store import AppliedChange, History
from auditor.models import ApiCall

IN_PROGRESS = "in-progress"
# What became of a write call (docs/apply.md "The journal" lists each).
CALL_STATUSES = ("made", "landed", "reused", "skipped", "failed")
# The answer fields worth keeping per operation (the rest is noise or large).
_KEPT = ("EndpointConfigArn", "EndpointArn", "PolicyARN", "ScalableTargetARN", "ScheduleArn", "DomainArn",
         "ClusterArn", "Failed", "Successful", "Alarms")


def answer_fields(answer: dict[str, Any]) -> dict[str, Any]:
    """What a write call's answer says that the journal keeps."""
    return {k: answer[k] for k in _KEPT if k in answer}


class Journal:
    """One apply's row; `calls` are the write calls made (or that landed), in order."""

    def __init__(self, history: History, applied_id: int, now: Callable[[], datetime]) -> None:
        self.history = history
        self.id = applied_id
        self.now = now
        self.calls: list[ApiCall] = []
        self.steps: list[dict[str, Any]] = []
        self.broken: AuditorError | None = None  # the journal write that failed

    @classmethod
    def begin(cls, history: History, plan: PlanToApply, caller: str, now: Callable[[], datetime]) -> Journal:
        """The intent, before any write; ApplyRefused (nothing made) when it cannot be written."""
        started = now()
        planned = [call_to_dict(c) for c in (plan.change.calls if plan.change else ())]
        try:
            applied_id = history.record_applied(AppliedChange(
                plan_id=plan.id, account_id=plan.resource.account_id, region=plan.resource.region,
                endpoint=plan.resource.name,
                variant=plan.variant, caller=caller, calls=(), plan=plan.raw, started_at=started, finished_at=started,
                outcome=IN_PROGRESS, message=f"plan {plan.id}: applying ({len(planned)} calls planned)",
                previous_config=plan.audited_config, new_config=plan.target_config,
                monthly_savings_usd=plan.monthly_savings_usd,
                steps=({"step": "intent", "at": started.isoformat(), "calls": planned},)))
        except AuditorError as exc:
            raise ApplyRefused(f"{exc}: the apply journal cannot be written, so nothing was changed") from None
        journal = cls(history, applied_id, now)
        journal.steps.append({"step": "intent", "at": started.isoformat(), "calls": planned})
        return journal

    def call(self, call: ApiCall, status: str, **detail: Any) -> None:
        """A write call's fate: made, landed (failed but AWS shows it done), reused, failed, skipped."""
        if status in ("made", "landed", "reused"):
            self.calls.append(call)
        self.record({"step": "call", "service": call.service, "operation": call.operation, "status": status,
                     **detail})

    def record(self, step: dict[str, Any]) -> None:
        """Append a step and write the row; once a write failed, the steps are kept here only (the
        apply stops making calls, and `finish` tries the row once more)."""
        self.steps.append({**step, "at": self.now().isoformat()})
        if self.broken is not None and step.get("step") != "call":
            return
        try:
            self.history.update_applied(self.id, calls=tuple(call_to_dict(c) for c in self.calls),
                                        steps=tuple(self.steps), at=self.now())
        except AuditorError as exc:
            self.broken = exc
            raise

    def finish(self, outcome: str, message: str) -> None:
        self.steps.append({"step": "outcome", "outcome": outcome, "at": self.now().isoformat()})
        self.history.update_applied(self.id, calls=tuple(call_to_dict(c) for c in self.calls),
                                    steps=tuple(self.steps), at=self.now(), outcome=outcome, message=message)

    def made(self, service: str, operation: str) -> list[ApiCall]:
        return [c for c in self.calls if (c.service, c.operation) == (service, operation)]
