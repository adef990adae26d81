"""The registered resource kinds: every module (or package with a `kind` module) in `auditor.kinds`
that defines `KIND`, in their declared order. Nothing else lists the kinds: the pipeline, the JSON
and rendered reports, routing and the IAM policy test read this tuple.

From the kinds also come the rule registry (every kind's `rules`: REGISTRY, BY_ID,
configurable_rules), which the config's [rules.<id>] tables, the tag overrides and the pipeline's
judge read, the config's sections (the core's, then every kind's `settings`: CONFIG_SECTIONS),
which the config file's reader and `audit config` read, and each resource type's write side, which
apply (auditor.act) reads here (target_for, binding_for, evidence_for, verifier_for, runs_next).

Besides the built-in kinds, an installed distribution may register kinds of its own through the
entry-point group `sagemaker_auditor.kinds` (ENTRY_POINT_GROUP): each entry point is named after
its kind's key and loads its `ResourceKind`. A plug-in that cannot be loaded, is not a kind, or
takes what another kind has (its key, a rule id, a config section, a resource type apply changes)
stops the registry with one error naming it (KindPluginError), never a silent skip."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

import auditor.kinds
from auditor.analyse.rules.base import Rule
from auditor.catalog import Catalog
from auditor.config import SECTIONS, AuditConfig
from auditor.errors import AuditorError
from auditor.kinds.base import Audience, AudienceOf, Owned, ResourceKind
from auditor.models import AuditReport, Finding, Plan, Window
from auditor.recommend.plans import build_plans
from auditor.text import one_line_words

if TYPE_CHECKING:
    from auditor.write.binding import CallBinding
    from auditor.write.evidence import EvidenceCheck
    from auditor.write.target import Target
    from auditor.write.verify import ResourceKey, Verifier

_NOT_KINDS = {"base", "registry"}

# Calls the run makes whatever kinds it audits: the caller's identity, accounts and regions,
# prices, Cost Explorer, and mail through SES.
CORE_ACTIONS = frozenset({
    "sts:GetCallerIdentity", "sts:AssumeRole", "organizations:ListAccounts", "ec2:DescribeRegions",
    "pricing:GetProducts", "pricing:ListPriceLists", "pricing:GetPriceListFileUrl",
    "ce:GetCostAndUsage", "ce:GetSavingsPlansPurchaseRecommendation", "ses:SendRawEmail",
})


ENTRY_POINT_GROUP = "sagemaker_auditor.kinds"
# A plug-in's key names its JSON section (and its config section): a word, and none of the JSON
# document's own top-level keys (tests/test_example_kind.py holds this set to the document) nor
# the config's [rules].
_KEY = re.compile(r"[a-z][a-z0-9_]{0,39}")
RESERVED_KEYS = frozenset({
    "schema_version", "generated_at", "partial", "window", "settings", "prices", "accounts", "plans",
    "savings_plans", "findings", "skipped", "summary", "errors", "rules",
})


class KindPluginError(AuditorError):
    """A kind registered through ENTRY_POINT_GROUP that cannot be registered; the message names it."""


def _built_in() -> list[ResourceKind[Any]]:
    kinds: list[ResourceKind[Any]] = []
    for module in pkgutil.iter_modules(auditor.kinds.__path__):
        if module.name in _NOT_KINDS:
            continue
        name = f"{auditor.kinds.__name__}.{module.name}" + (".kind" if module.ispkg else "")
        kind = getattr(importlib.import_module(name), "KIND", None)
        if not isinstance(kind, ResourceKind):
            raise TypeError(f"{name} defines no KIND")
        kinds.append(kind)
    keys = [k.key for k in kinds]
    if len(set(keys)) != len(keys):
        raise ValueError(f"resource kinds defined twice: {sorted(k for k in keys if keys.count(k) > 1)}")
    return kinds


# A kind's write side, by resource type (apply finds each type's parts in one kind).
_WRITE_PARTS = ("targets", "bindings", "evidence", "verifiers")


def _named(entry: EntryPoint) -> str:
    """The plug-in as its error names it: its entry point, what it loads, and its distribution."""
    dist = (f", distribution {one_line_words(entry.dist.name)} {one_line_words(entry.dist.version)}"
            if entry.dist is not None else "")
    return f'plug-in kind "{one_line_words(entry.name)}" ({one_line_words(entry.value)}{dist})'


def _packaged_template(name: str) -> bool:
    """Whether `name` is "<package>:<file>" with the file in the package's templates/ directory."""
    package, sep, file = name.partition(":")
    try:
        return bool(sep and file) and (resources.files(package) / "templates" / file).is_file()
    except ImportError:
        return False


def plugin_kinds(entries: Iterable[EntryPoint], registered: Sequence[ResourceKind[Any]]) -> list[ResourceKind[Any]]:
    """The kinds `entries` load (entry points of ENTRY_POINT_GROUP), by name; `registered`: the
    kinds before them. An entry that cannot be registered (it does not load a kind; its key, a rule
    id, a config section or a resource type apply changes is taken; a template is not in its
    package) is a KindPluginError naming it."""
    keys = {k.key for k in registered}
    rule_ids = {r.id for k in registered for r in k.rules}
    sections = {*SECTIONS, "rules", *(name for k in registered for name in k.settings)}
    written = {t for k in registered for part in _WRITE_PARTS for t in getattr(k, part)}
    kinds: list[ResourceKind[Any]] = []
    for entry in sorted(entries, key=lambda e: (e.name, e.value)):
        named = _named(entry)
        try:
            kind = entry.load()
        except Exception as exc:  # a plug-in's import may fail in any way: one error naming the plug-in
            raise KindPluginError(f"{named} cannot be loaded: {type(exc).__name__}: {one_line_words(str(exc), 300)}") \
                from exc
        if not isinstance(kind, ResourceKind):
            raise KindPluginError(f"{named} is not a ResourceKind (it loads a {type(kind).__name__})")
        if kind.key != entry.name:
            raise KindPluginError(f"{named} loads the kind {kind.key!r}: the entry point is named after its kind's key")
        if not _KEY.fullmatch(kind.key) or kind.key in RESERVED_KEYS:
            raise KindPluginError(f"{named}: the key {kind.key!r} cannot be a section of the report "
                                  "(lower-case letters, digits and _, and not one of the document's own keys)")
        if kind.key in keys:
            raise KindPluginError(f"{named}: a kind with the key {kind.key!r} is already registered")
        if taken := sorted(rule_ids & {r.id for r in kind.rules}):
            raise KindPluginError(f"{named}: rule {', '.join(map(repr, taken))} is already registered")
        if taken := sorted(sections & set(kind.settings)):
            raise KindPluginError(f"{named}: config section {', '.join(f'[{t}]' for t in taken)} is already "
                                  "defined")
        own_types = {t for part in _WRITE_PARTS for t in getattr(kind, part)}
        if taken := sorted(written & own_types):
            raise KindPluginError(f"{named}: resource type {', '.join(map(repr, taken))} is another kind's to apply")
        if missing := [name for name in kind.templates.values() if not _packaged_template(name)]:
            raise KindPluginError(f"{named}: template {', '.join(map(repr, missing))} is not in its package "
                                  '(a plug-in\'s templates are named "<package>:<file>", in the package\'s templates/)')
        keys.add(kind.key)
        rule_ids.update(r.id for r in kind.rules)
        sections.update(kind.settings)
        written.update(own_types)
        kinds.append(kind)
    return kinds


def _discover() -> tuple[ResourceKind[Any], ...]:
    kinds = _built_in()
    kinds += plugin_kinds(entry_points(group=ENTRY_POINT_GROUP), kinds)
    return tuple(sorted(kinds, key=lambda k: (k.order, k.key)))


KINDS: tuple[ResourceKind[Any], ...] = _discover()
BY_KEY: dict[str, ResourceKind[Any]] = {k.key: k for k in KINDS}


def _rules() -> tuple[Rule[Any], ...]:
    rules = [r for k in KINDS for r in k.rules]
    ids = [r.id for r in rules]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"rule ids defined twice: {', '.join(duplicates)}")
    return tuple(sorted(rules, key=lambda r: r.id))


# Every kind's rules, by id.
REGISTRY: tuple[Rule[Any], ...] = _rules()
BY_ID: dict[str, Rule[Any]] = {r.id: r for r in REGISTRY}


def configurable_rules() -> tuple[Rule[Any], ...]:
    """The rules that have a [rules.<id>] table: every rule but the gates."""
    return tuple(r for r in REGISTRY if r.configurable)


def _sections() -> dict[str, type]:
    sections = dict(SECTIONS)
    for kind in KINDS:
        for name, cls in kind.settings.items():
            if name in sections or name == "rules":
                raise ValueError(f"config section [{name}] of kind {kind.key} is defined twice")
            sections[name] = cls
    return sections


# Every config section but [rules.<id>]: the core's, then each kind's, in the kinds' order.
CONFIG_SECTIONS: dict[str, type] = _sections()


def audit_actions() -> frozenset[str]:
    """Every IAM action the audit needs: the kinds' and the core's (deploy/iam-policy.json)."""
    return CORE_ACTIONS.union(*(k.iam_actions for k in KINDS))


def owned_resources(report: AuditReport) -> list[Owned]:
    """Every resource of every kind in the report, with its tags (for routing by owner)."""
    return [o for k in KINDS if k.key in report.sections for o in k.owned(k.section(report))]


def sections_of(report: AuditReport, audience_of: AudienceOf, audience: Audience) -> dict[str, Any]:
    """Each kind's section narrowed to what `audience` reads."""
    return {k.key: k.only(k.section(report), audience_of, audience) for k in KINDS if k.key in report.sections}


def monthly_cost_by_kind(sections: Mapping[str, Any], window: Window) -> dict[str, float | None]:
    """Each audited kind's monthly cost (None: not known whole), in the kinds' order: what a report
    built from `sections` holds (AuditReport.monthly_cost_by_kind)."""
    return {k.key: k.monthly_cost(sections[k.key], window) for k in KINDS if k.key in sections}


def plans_for(findings: Iterable[Finding], sections: Mapping[str, Any], catalog: Catalog, config: AuditConfig,
              window: Window | None = None) -> tuple[Plan, ...]:
    """The plans of the findings: each kind in `sections` (merged, by key) says what its own rest on."""
    return build_plans(findings, [k.plan_subjects(sections[k.key], catalog, config, window)
                                  for k in KINDS if k.key in sections])


# --- the write side: apply (auditor.act) finds each resource type's parts here, never in a kind ---


def _by_type(part: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for kind in KINDS:
        for resource_type, value in getattr(kind, part).items():
            if resource_type in found:
                raise ValueError(f"resource type {resource_type} has {part} in two kinds")
            found[resource_type] = value
    return found


TARGETS: dict[str, Target] = _by_type("targets")
BINDINGS: dict[str, CallBinding] = _by_type("bindings")
EVIDENCE: dict[str, EvidenceCheck] = _by_type("evidence")
VERIFIERS: dict[str, Verifier] = _by_type("verifiers")
NEXT_RUN_TYPES: frozenset[str] = frozenset().union(*(k.next_run_types for k in KINDS))


def target_for(resource_type: str) -> Target | None:
    """How apply reads, checks and waits for a resource of this type; None: apply does not change it."""
    return TARGETS.get(resource_type)


def binding_for(resource_type: str) -> CallBinding | None:
    """The calls this type's plans make and what each must name and may do."""
    return BINDINGS.get(resource_type)


def evidence_for(resource_type: str) -> EvidenceCheck | None:
    """The fresh evidence read before a destructive plan of this type; None: none is read."""
    return EVIDENCE.get(resource_type)


def verifier_for(resource_type: str) -> Verifier | None:
    """What the next run checks to call an applied change of this type done."""
    return VERIFIERS.get(resource_type)


def runs_next(resource_type: str) -> bool:
    """Whether this type's change is the next run's request (a job's): apply never makes it."""
    return resource_type in NEXT_RUN_TYPES


def seen_by_type(report: AuditReport) -> dict[str, Mapping[ResourceKey, Any] | None]:
    """What the run saw of each resource type the kinds verify (None: not audited)."""
    seen: dict[str, Mapping[ResourceKey, Any] | None] = {}
    for kind in KINDS:
        seen.update(kind.seen(report.sections.get(kind.key)))
    return seen
