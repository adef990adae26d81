"""What the next audit run checks after a model plan is applied: the model is gone from a run that
read models in its region without an error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from auditor.write.verify import Evidence, ResourceKey, Verifier

if TYPE_CHECKING:
    from auditor.history.store import AppliedChange
    from auditor_example_kind.kind import ModelsSection


def model_gone(change: AppliedChange, evidence: Evidence) -> bool:
    return evidence.absent(change, "model")


def seen(section: ModelsSection | None) -> Mapping[str, Mapping[ResourceKey, Any] | None]:
    """The models the run saw; None when it did not audit them."""
    return {"model": None if section is None else {(m.account_id, m.region, m.name): m for m in section.models}}


VERIFIERS: dict[str, Verifier] = {"model": model_gone}
