"""The rule engine every kind shares, over whatever rules it is given.

A rule is one module in its kind's `rules/` package (`auditor/kinds/<kind>/rules/<rule_id>.py`)
that defines `RULE`; `discover_rules` finds them there, so a new rule is a new module. Each kind
lists its rules as its `ResourceKind.rules`, and `auditor.kinds.registry` joins them (REGISTRY,
BY_ID, configurable_rules); nothing else lists rule ids: the config's [rules.<id>] tables, the tag
overrides, evaluation and pricing all read the registry. This package names no kind.

`judge_collection` judges a kind's assessment of a region: every rule whose `assessment` type it
is runs its check, then its pricing step (a step that returns None drops a candidate whose advice
does not hold up: nothing cheaper, a saving below the minimum), then advice that another rule
`supersedes` is dropped. A kind with rule types of its own (the endpoint kind's gates and variant
rules) runs them in its own engine, and uses `without_superseded` the same way.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from auditor.analyse.rules.base import CollectionRule, Phase, Rule, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.models import Finding

__all__ = ["Phase", "Rule", "RuleJudge", "discover_rules", "evaluate_collection", "judge_collection",
           "without_superseded"]


def discover_rules(package_name: str) -> tuple[Rule[Any], ...]:
    """The `RULE` of every module in the package `package_name` (a kind's `rules/`), by id."""
    package = importlib.import_module(package_name)
    rules: list[Rule[Any]] = []
    for module in pkgutil.iter_modules(package.__path__):
        rule = getattr(importlib.import_module(f"{package_name}.{module.name}"), "RULE", None)
        if not isinstance(rule, Rule):
            raise TypeError(f"{package_name}.{module.name} defines no RULE")
        rules.append(rule)
    return tuple(sorted(rules, key=lambda r: r.id))


def evaluate_collection(rules: Iterable[Rule[Any]], assessment: object, catalog: Catalog,
                        config: AuditConfig) -> list[Finding]:
    """Every enabled collection rule whose assessment type is `assessment`'s (a kind's resources in
    a region, as a whole); `skip_endpoints` patterns match the resource's name as findings give it."""
    findings: list[Finding] = []
    for rule in rules:
        if isinstance(rule, CollectionRule) and isinstance(assessment, rule.assessment) \
                and (settings := settings_of(rule, config)).enabled:
            findings.extend(f for f in rule.check(assessment, catalog, config)
                            if not _matches(f.resource.name, settings.skip_endpoints))
    return findings


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def judge_collection(rules: tuple[Rule[Any], ...], assessment: object, catalog: Catalog,
                     config: AuditConfig) -> list[Finding]:
    """A kind's assessment of a region: its findings, each priced by its rule."""
    by_id = {r.id: r for r in rules}
    priced: list[Finding] = []
    for finding in evaluate_collection(rules, assessment, catalog, config):
        rule = by_id.get(finding.rule)
        result = (rule.price(finding, assessment, catalog, config) if isinstance(rule, CollectionRule) and rule.price
                  else finding)
        if result is not None:
            priced.append(result)
    return without_superseded(rules, priced)


@dataclass(frozen=True)
class RuleJudge:
    """The registered rules (every kind's), bound to a run's catalog and config: a kind's
    assessment in, its priced findings out. The pipeline gives one to each kind's audit as its
    `RegionScope.judge` (auditor.kinds.base.Judge); `rules` is there for what names a rule (tags
    that skip rules)."""

    rules: tuple[Rule[Any], ...]
    catalog: Catalog
    config: AuditConfig

    def __call__(self, assessment: object) -> list[Finding]:
        return judge_collection(self.rules, assessment, self.catalog, self.config)


def without_superseded(rules: Iterable[Rule[Any]], findings: list[Finding]) -> list[Finding]:
    """Drop a finding whose advice a superseding rule's finding on the same variant already gives
    (the same instance type)."""
    superseding = [r for r in rules if r.supersedes]
    advised = {(f.resource, f.variant, f.rule): f.recommendation for f in findings if f.recommendation}

    def superseded(finding: Finding) -> bool:
        if finding.recommendation is None:
            return False
        return any(
            finding.rule in rule.supersedes
            and (other := advised.get((finding.resource, finding.variant, rule.id))) is not None
            and other.instance_type == finding.recommendation.instance_type
            for rule in superseding
        )

    return [f for f in findings if not superseded(f)]
