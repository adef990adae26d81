"""A plan as apply reads it (the stored JSON parsed: auditor.act.plan builds it) and the two ways
an apply ends early: a guard's refusal and a failure. Every kind's apply target reads these."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from auditor.errors import AuditorError
from auditor.models import ApiCall, Change, ResourceRef, Risk


class ApplyRefused(AuditorError):
    """A guard said no: one line naming why. Nothing was changed."""


class ApplyFailed(AuditorError):
    """A call failed, the deployment rolled back, or the wait ran out: one line naming what."""


class ApplyInterrupted(ApplyFailed):
    """SIGINT or SIGTERM ended the apply: one line with the calls made and what AWS still does."""

    def __init__(self, message: str, signal_name: str) -> None:
        super().__init__(message)
        self.signal_name = signal_name


@dataclass(frozen=True)
class PlanToApply:
    id: str
    resource: ResourceRef  # what the plan changes (its `resource`)
    variant: str | None
    measured: bool
    risk: Risk | None
    change: Change | None
    audited_config: str | None  # the endpoint config the audit saw (current.endpoint_config_name)
    current: dict[str, Any]
    proposed: dict[str, Any]
    monthly_savings_usd: float
    raw: dict[str, Any]
    # The plan id recomputed from the stored content (auditor.recommend.change.plan_id; None: the
    # proposed option cannot be read), and the id the applied option's names derive from (the
    # alternative's own id for --option N).
    content_id: str | None = None
    names_id: str = ""
    # What an endpoint plan was computed from (plan_to_dict's `basis`); None: not recorded.
    basis: dict[str, Any] | None = None
    # When the audit's metric window ended (the run the plan is applied from); None: not known
    # (a plan not read from the history by load_plan).
    window_end: datetime | None = None

    @property
    def option(self) -> int:
        """Which option is applied: 0 the proposed one, N the Nth alternative."""
        value = self.raw.get("applied_option")
        return value if isinstance(value, int) else 0

    def calls_of(self, service: str, operation: str) -> list[ApiCall]:
        calls = self.change.calls if self.change else ()
        return [c for c in calls if (c.service, c.operation) == (service, operation)]

    @property
    def target_config(self) -> str | None:
        """The endpoint config the change deploys (its UpdateEndpoint's EndpointConfigName)."""
        for call in self.change.calls if self.change else ():
            if (call.service, call.operation) == ("sagemaker", "UpdateEndpoint"):
                name = call.params.get("EndpointConfigName")
                return name if isinstance(name, str) else None
        return None
