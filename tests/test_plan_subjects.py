"""Plan building asks each kind for what its plans rest on (ResourceKind.plan_subjects): the shared
builder groups, chooses and orders; the kind's subject gives the shape, an option's risk and the
change. A finding no kind claims gets what its rule's details state. And the report's core imports
no kind: the circle models -> kinds.registry -> kinds.base -> ... -> models is gone."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import auditor
from auditor.kinds.registry import KINDS
from auditor.models import (
    ApiCall,
    Change,
    Finding,
    Plan,
    PlanOption,
    Recommendation,
    ResourceRef,
    Risk,
    RiskLevel,
    Severity,
)
from auditor.recommend.plans import PlanSubject, build_plans


def finding(name: str, saving: float, details: dict[str, object] | None = None, rule: str = "idle") -> Finding:
    return Finding(rule, Severity.MEDIUM, ResourceRef("widgets", "widget", name, "123456789012", "us-east-1"),
                   None, "m", {},
                   recommendation=Recommendation("delete", None, 0, 100.0, 100.0 - saving, details=details or {}))


@dataclass(frozen=True, kw_only=True)
class WidgetSubject(PlanSubject):
    """A kind of its own: a stated shape, a risk from its own facts and a change of its own."""

    replayed: RiskLevel

    def risk(self, option: PlanOption) -> Risk | None:
        return Risk(self.replayed, basis=(f"{option.action} replayed on the widget",))

    def change(self, plan: Plan) -> Change | None:
        call = ApiCall("widgets", "DeleteWidget", {"Name": plan.resource.name}, f"delete widget {plan.resource.name}")
        return Change(calls=(call,), rollback=f"create {plan.resource.name} again")


def widgets(found: Finding) -> PlanSubject | None:
    if found.resource.name != "mine":
        return None
    return WidgetSubject(instance_type="ml.m5.large", instance_count=3, replayed=RiskLevel.HIGH)


def test_a_kinds_subject_gives_the_shape_the_risk_and_the_change_of_its_plans() -> None:
    stated = {"risk": {"level": "low", "basis": ["idle 30 days"]}}
    mine, other = build_plans([finding("mine", 90.0, stated), finding("other", 10.0, stated)], [widgets])
    assert (mine.resource.name, mine.current_instance_type, mine.current_instance_count) == ("mine", "ml.m5.large", 3)
    assert mine.risk == Risk(RiskLevel.HIGH, basis=("delete replayed on the widget",))
    assert mine.change is not None and mine.change.calls[0].operation == "DeleteWidget"
    # Not the kind's: the level its rule states, no shape and no change (the details carry none).
    assert (other.resource.name, other.current_instance_type, other.current_instance_count) == ("other", None, 0)
    assert other.risk == Risk(RiskLevel.LOW, basis=("idle 30 days",)) and other.change is None
    assert build_plans([finding("mine", 90.0)], [widgets]) != build_plans([finding("mine", 90.0)])


def test_every_kind_gives_plan_subjects_for_its_own_findings_only() -> None:
    stray = finding("nobody", 50.0)  # a resource type no kind has
    for kind in KINDS:
        subjects = kind.plan_subjects(kind.empty, None, None, None)  # type: ignore[arg-type]
        assert subjects(stray) is None, kind.key


def test_the_report_core_imports_no_kind() -> None:
    """models (AuditReport), plan building and the other shared modules import no kind, not even
    inside a function (AuditReport priced its sections through the registry that way)."""
    package = Path(auditor.__file__).parent
    core = [package / "models.py", package / "catalog.py", package / "config.py",
            *(package / "recommend").glob("*.py"), *(package / "collect").glob("*.py"),
            *(package / "prices").glob("*.py"), *(package / "history").glob("*.py")]
    upward = []
    for path in core:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            upward += [f"{path.relative_to(package)}: {n}" for n in names if n.startswith("auditor.kinds")]
    assert len(core) > 20 and upward == []
