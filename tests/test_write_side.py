"""The write side of every resource kind lives in its package and is found through the registry:
the apply engine (auditor/act/) imports no kind module, the write core (auditor/write/) nothing
above it, and each type apply changes has all its parts (target, call binding, verifier)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from auditor.act import APPLY_OPERATIONS
from auditor.kinds.registry import BINDINGS, EVIDENCE, KINDS, NEXT_RUN_TYPES, TARGETS, VERIFIERS

PACKAGE = Path(__file__).resolve().parent.parent / "auditor"


def imported(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted((PACKAGE / "act").glob("*.py")), ids=lambda p: p.name)
def test_the_apply_engine_imports_no_kind(path: Path) -> None:
    kinds = {m for m in imported(path) if m.startswith("auditor.kinds") and m != "auditor.kinds.registry"}
    assert not kinds, f"auditor/act/{path.name} imports {sorted(kinds)}: read the kind's part through the registry"


@pytest.mark.parametrize("path", sorted((PACKAGE / "write").glob("*.py")), ids=lambda p: p.name)
def test_the_write_core_imports_nothing_above_it(path: Path) -> None:
    above = ("auditor.kinds", "auditor.act", "auditor.report", "auditor.tasks", "auditor.pipeline", "auditor.cli")
    upward = {m for m in imported(path) if m.startswith(above)}
    assert not upward, f"auditor/write/{path.name} imports {sorted(upward)}"


def test_every_type_apply_changes_has_a_target_a_binding_and_a_verifier_in_one_kind() -> None:
    assert set(TARGETS) == set(BINDINGS) == set(VERIFIERS)
    assert set(EVIDENCE) <= set(TARGETS)
    assert not NEXT_RUN_TYPES & set(TARGETS)  # a job's change is the next run's request, never applied
    assert {"training-job", "processing-job", "transform-job"} == NEXT_RUN_TYPES
    for kind in KINDS:  # each kind lists only its own types' parts
        assert set(kind.bindings) == set(kind.targets) == set(kind.verifiers), kind.key


def test_the_kinds_operations_are_the_ones_apply_may_make() -> None:
    """Each call binding's operations are among APPLY_OPERATIONS (what the apply policy allows), and
    every operation has the parameter keys its builders emit."""
    for resource_type, binding in BINDINGS.items():
        assert binding.operations <= APPLY_OPERATIONS, resource_type
        assert {operation for _, operation in binding.operations} == set(binding.parameter_keys), resource_type


WRITE_MODULES = sorted(p for part in ("target", "binding", "evidence", "verify")
                       for p in (PACKAGE / "kinds").glob(f"*/{part}.py"))


@pytest.mark.parametrize("path", WRITE_MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_kinds_write_side_imports_its_own_kind_and_the_core_only(path: Path) -> None:
    above = ("auditor.act", "auditor.report", "auditor.tasks", "auditor.pipeline", "auditor.cli")
    kind = f"auditor.kinds.{path.parent.name}"
    wrong = {m for m in imported(path) if m.startswith(above)
             or (m.startswith("auditor.kinds.") and not (m == kind or m.startswith(f"{kind}.")))}
    assert WRITE_MODULES and not wrong, f"auditor/kinds/{path.parent.name}/{path.name} imports {sorted(wrong)}"
