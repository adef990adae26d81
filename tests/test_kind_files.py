"""docs/kinds/index.md says which files a new resource kind touches ("Adding a resource kind"):
that list is held here to the built-in kinds. Every path it names exists for each of them (or
holds for what the kind declares: its templates, its rules, its IAM actions), every path it names
is known here (a new row needs its check), and it names no file of the core: nothing under
auditor/ outside the kind's own package."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

import auditor.kinds
from auditor.kinds.base import ResourceKind
from auditor.kinds.registry import BY_KEY, KINDS

ROOT = Path(__file__).parent.parent
PAGE = (ROOT / "docs" / "kinds" / "index.md").read_text(encoding="utf-8")
EXTENSIONS = {"html": "html", "text": "txt", "markdown": "md"}
# The first kind: its report part is the body of report.*.j2, its settings are the core's sections and
# its pages predate docs/kinds/.
FIRST = "endpoints"
# Files of the core a kind still touches because the kinds' seam does not reach them yet.
STILL_IN_THE_CORE: set[str] = set()


def listed_paths() -> list[str]:
    """The paths in the first column of the "Adding a resource kind" table."""
    section = PAGE.split("## Adding a resource kind", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows, "docs/kinds/index.md has the table of what adding a kind touches"
    return [path for row in rows for path in re.findall(r"`([^`]+)`", row.split("|")[1])]


def packages() -> dict[str, Path]:
    """Each built-in kind's package directory, by its key."""
    found = {}
    for module in pkgutil.iter_modules(auditor.kinds.__path__):
        if module.ispkg:
            kind = importlib.import_module(f"auditor.kinds.{module.name}.kind").KIND
            found[kind.key] = Path(auditor.kinds.__path__[0]) / module.name
    assert set(found) == {k.key for k in KINDS}, "every built-in kind is a package with kind.py"
    return found


def _policy_actions(document: dict[str, Any]) -> set[str]:
    return {a for s in document["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}


def _nav_pages(nav: Any) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return {p for value in nav.values() for p in _nav_pages(value)}
    return {p for item in nav for p in _nav_pages(item)}


def _package_file(name: str) -> Callable[[], None]:
    def check() -> None:
        for key, package in packages().items():
            assert (package / name).is_file(), f"auditor/kinds/{package.name}/{name} ({key})"
    return check


def _rules() -> None:
    for key, package in packages().items():
        modules = {p.stem for p in (package / "rules").glob("*.py")} - {"__init__"}
        assert modules == {r.id.replace("-", "_") for r in BY_KEY[key].rules}, key


def _settings() -> None:
    for key, package in packages().items():
        kind = BY_KEY[key]
        if key == FIRST:  # its settings are the core's [thresholds], [recommend] ...
            assert kind.settings == {}
            continue
        assert kind.settings and {c.__module__ for c in kind.settings.values()} == {
            f"auditor.kinds.{package.name}.settings"}, key


def _plans() -> None:
    default = ResourceKind.__dataclass_fields__["plan_subjects"].default
    own = {key: BY_KEY[key].plan_subjects for key in packages() if BY_KEY[key].plan_subjects is not default}
    assert own, "some kind builds its own plan subjects"
    for key, plan_subjects in own.items():
        assert plan_subjects.__module__ == f"auditor.kinds.{packages()[key].name}.plans", key


def _write_side(part: str, modules_of: Callable[[ResourceKind[Any]], set[str]]) -> Callable[[], None]:
    """Every kind that declares this part of the write side declares it from its package's `part` module."""
    def check() -> None:
        declaring = {key: modules_of(BY_KEY[key]) for key in packages() if modules_of(BY_KEY[key])}
        assert declaring, f"some kind has its {part}"
        for key, modules in declaring.items():
            assert modules == {f"auditor.kinds.{packages()[key].name}.{part}"}, (key, part)
    return check


def _apply_policy() -> None:
    granted = _policy_actions(json.loads((ROOT / "deploy" / "iam-apply-policy.json").read_text(encoding="utf-8")))
    for kind in KINDS:
        for binding in kind.bindings.values():
            assert {f"{service}:{operation}" for service, operation in binding.operations} <= granted, kind.key


def _templates(fmt: str) -> Callable[[], None]:
    def check() -> None:
        for kind in KINDS:
            if kind.key == FIRST:
                assert kind.templates == {}
                continue
            name = kind.templates[fmt]
            assert name == f"kind_{kind.key}.{EXTENSIONS[fmt]}.j2"
            assert (ROOT / "templates" / name).is_file(), name
    return check


def _iam_policy() -> None:
    granted = _policy_actions(json.loads((ROOT / "deploy" / "iam-policy.json").read_text(encoding="utf-8")))
    for kind in KINDS:
        assert kind.iam_actions <= granted, kind.key


def _exists(path: str) -> Callable[[], None]:
    def check() -> None:
        assert (ROOT / path).is_file(), path
    return check


def _kind_pages() -> None:
    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    for key, package in packages().items():
        if key == FIRST:
            continue
        page = f"kinds/{package.name}.md"
        assert (ROOT / "docs" / page).is_file() and page in nav, page


# Each path the table may list, and what makes it true of the built-in kinds.
CHECKS: dict[str, Callable[[], None]] = {
    "auditor/kinds/<kind>/__init__.py": _package_file("__init__.py"),
    "auditor/kinds/<kind>/kind.py": _package_file("kind.py"),
    "auditor/kinds/<kind>/rules/<rule_id>.py": _rules,
    "auditor/kinds/<kind>/settings.py": _settings,
    "auditor/kinds/<kind>/plans.py": _plans,
    "auditor/kinds/<kind>/target.py": _write_side(
        "target", lambda k: {type(t).__module__ for t in k.targets.values()}),
    "auditor/kinds/<kind>/binding.py": _write_side(
        "binding", lambda k: {b.names.__module__ for b in k.bindings.values()}),
    "auditor/kinds/<kind>/evidence.py": _write_side(
        "evidence", lambda k: {e.since.__module__ for e in k.evidence.values()}),
    "auditor/kinds/<kind>/verify.py": _write_side(
        "verify", lambda k: {v.__module__ for v in k.verifiers.values()}),
    "deploy/iam-apply-policy.json": _apply_policy,
    "templates/kind_<key>.html.j2": _templates("html"),
    "templates/kind_<key>.txt.j2": _templates("text"),
    "templates/kind_<key>.md.j2": _templates("markdown"),
    "deploy/iam-policy.json": _iam_policy,
    "deploy/cloudformation/sagemaker-auditor.yaml": _exists("deploy/cloudformation/sagemaker-auditor.yaml"),
    "deploy/cloudformation/member-role.yaml": _exists("deploy/cloudformation/member-role.yaml"),
    "docs/kinds/<kind>.md": _kind_pages,
    "mkdocs.yml": _exists("mkdocs.yml"),
    **{f"docs/{page}": _exists(f"docs/{page}") for page in ("configuration.md", "rules.md", "json-report.md",
                                                            "deployment.md")},
}


def test_the_docs_list_of_what_a_kind_touches_is_known_here() -> None:
    assert sorted(listed_paths()) == sorted(CHECKS)


def test_every_path_the_docs_list_holds_for_the_built_in_kinds() -> None:
    for path in listed_paths():
        CHECKS[path]()


def test_the_docs_list_names_no_file_of_the_core() -> None:
    core = [p for p in listed_paths() if p.startswith("auditor/") and not p.startswith("auditor/kinds/<kind>/")]
    assert set(core) <= STILL_IN_THE_CORE, core
