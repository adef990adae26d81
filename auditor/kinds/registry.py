"""The registered resource kinds: every module (or package with a `kind` module) in `auditor.kinds`
that defines `KIND`, in their declared order. Nothing else lists the kinds: the pipeline, the JSON
and rendered reports, routing and the IAM policy test read this tuple.

Besides the built-in kinds, an installed distribution may register kinds of its own through the
entry-point group `sagemaker_auditor.kinds` (ENTRY_POINT_GROUP): each entry point is named after
its kind's key and loads its `ResourceKind`. A plug-in that cannot be loaded, is not a kind, or
takes a key already registered stops the registry with one error naming it (KindPluginError),
never a silent skip."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

import auditor.kinds
from auditor.errors import AuditorError
from auditor.kinds.base import Audience, AudienceOf, Owned, ResourceKind
from auditor.models import AuditReport

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


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _named(entry: EntryPoint) -> str:
    """The plug-in as its error names it: its entry point, what it loads, and its distribution."""
    dist = f", distribution {entry.dist.name} {entry.dist.version}" if entry.dist is not None else ""
    return f'plug-in kind "{_one_line(entry.name)}" ({_one_line(entry.value)}{dist})'


def plugin_kinds(entries: Iterable[EntryPoint], taken: Iterable[str]) -> list[ResourceKind[Any]]:
    """The kinds `entries` load (entry points of ENTRY_POINT_GROUP), by name; `taken`: the keys
    already registered. Any entry that cannot be registered is a KindPluginError naming it."""
    keys = set(taken)
    kinds: list[ResourceKind[Any]] = []
    for entry in sorted(entries, key=lambda e: (e.name, e.value)):
        named = _named(entry)
        try:
            kind = entry.load()
        except Exception as exc:  # a plug-in's import may fail in any way: one error naming the plug-in
            raise KindPluginError(f"{named} cannot be loaded: {type(exc).__name__}: {_one_line(str(exc))}") \
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
        keys.add(kind.key)
        kinds.append(kind)
    return kinds


def _discover() -> tuple[ResourceKind[Any], ...]:
    kinds = _built_in()
    kinds += plugin_kinds(entry_points(group=ENTRY_POINT_GROUP), (k.key for k in kinds))
    return tuple(sorted(kinds, key=lambda k: (k.order, k.key)))


KINDS: tuple[ResourceKind[Any], ...] = _discover()
BY_KEY: dict[str, ResourceKind[Any]] = {k.key: k for k in KINDS}


def audit_actions() -> frozenset[str]:
    """Every IAM action the audit needs: the kinds' and the core's (deploy/iam-policy.json)."""
    return CORE_ACTIONS.union(*(k.iam_actions for k in KINDS))


def owned_resources(report: AuditReport) -> list[Owned]:
    """Every resource of every kind in the report, with its tags (for routing by owner)."""
    return [o for k in KINDS if k.key in report.sections for o in k.owned(k.section(report))]


def sections_of(report: AuditReport, audience_of: AudienceOf, audience: Audience) -> dict[str, Any]:
    """Each kind's section narrowed to what `audience` reads."""
    return {k.key: k.only(k.section(report), audience_of, audience) for k in KINDS if k.key in report.sections}


def monthly_cost_by_kind(report: AuditReport) -> dict[str, float | None]:
    """Each audited kind's monthly cost (None: not known whole), in the kinds' order."""
    return {k.key: k.monthly_cost(k.section(report), report.window) for k in KINDS if k.key in report.sections}
