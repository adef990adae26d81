"""The rule registry and the engine that applies it.

Every module in this package (besides `base`) defines one rule as `RULE`; the registry is what
those modules define, found at import, so a new rule is a new module. Nothing else lists rule
ids: the config's [rules.<id>] tables, the tag overrides, evaluation and pricing all read the
registry.

The registry also prices: `judge` (an endpoint's assessment, or any other kind's) runs every rule's check, then its
pricing step (a step that returns None drops a candidate whose advice does not hold up: nothing
cheaper, a saving below the minimum), then drop advice that another rule `supersedes`.

Order of evaluation for an endpoint: the gates (not-in-service, then insufficient-data) decide
what may be judged at all; an exclusive verdict (idle) makes the others moot, and an exclusive
variant verdict (variant-unused) those on its variant; then every judging
rule that judges the endpoint's kind adds its finding (variant rules judge production variants;
those marked `shadow_variants` judge shadow variants only). Findings are sorted later, so the
order among judging rules does not matter.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

from auditor.analyse.assessment import EndpointAssessment, VariantAssessment
from auditor.analyse.rules.base import (
    AnyRule,
    CollectionRule,
    EndpointRule,
    GateRule,
    Phase,
    Rule,
    VariantRule,
    settings_of,
)
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.models import Endpoint, Finding, Judged


def _discover() -> tuple[AnyRule, ...]:
    rules: list[AnyRule] = []
    for module in pkgutil.iter_modules(__path__):
        if module.name == "base":
            continue
        rule = getattr(importlib.import_module(f"{__name__}.{module.name}"), "RULE", None)
        if not isinstance(rule, GateRule | EndpointRule | VariantRule | CollectionRule):
            raise TypeError(f"{__name__}.{module.name} defines no RULE")
        rules.append(rule)
    ids = [r.id for r in rules]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"rule ids defined twice: {', '.join(duplicates)}")
    return tuple(sorted(rules, key=lambda r: r.id))


REGISTRY: tuple[AnyRule, ...] = _discover()
BY_ID: dict[str, AnyRule] = {r.id: r for r in REGISTRY}
# Gates run in this order: a status first (nothing else can be said), then the data.
GATES: tuple[GateRule, ...] = (BY_ID["not-in-service"], BY_ID["insufficient-data"])  # type: ignore[assignment]

__all__ = ["BY_ID", "REGISTRY", "EndpointAssessment", "Rule", "VariantAssessment", "configurable_rules",
           "evaluate_collection", "evaluate_endpoint", "judge", "judge_collection", "judge_endpoint", "rule_applies"]


def configurable_rules() -> tuple[AnyRule, ...]:
    """The rules that have a [rules.<id>] table: every rule but the gates."""
    return tuple(r for r in REGISTRY if r.configurable)


def evaluate_endpoint(assessment: EndpointAssessment, config: AuditConfig) -> list[Finding]:
    config = assessment.config or config
    endpoint = assessment.endpoint
    if endpoint.skipped_reason and not endpoint.skipped_rules and not endpoint.not_judged_reason:
        return []
    findings: list[Finding] = []
    judged = assessment.variants
    for gate in GATES:
        result = gate.check(replace(assessment, variants=judged), config)
        findings.extend(result.findings)
        if result.judged is None:
            return findings
        judged = result.judged
    view = replace(assessment, variants=judged)
    kind = Judged.of_endpoint(endpoint.kind)

    def applicable(phase: Phase) -> Iterable[AnyRule]:
        return (r for r in REGISTRY if r.phase is phase and kind in r.judges and rule_applies(r, endpoint, config))

    # An exclusive verdict is about the whole endpoint: only when every variant could be judged.
    if len(judged) == len(assessment.variants):
        for rule in applicable(Phase.EXCLUSIVE):
            if isinstance(rule, EndpointRule) and (finding := rule.check(view, config)) is not None:
                return [*findings, finding]
    # A variant with an exclusive verdict (remove it) is judged no further.
    settled: set[str] = set()
    for rule in applicable(Phase.EXCLUSIVE):
        if isinstance(rule, VariantRule):
            for va in _variants_for(rule, judged):
                if va.variant.name not in settled and (finding := rule.check(view, va, config)) is not None:
                    findings.append(finding)
                    settled.add(va.variant.name)
    for rule in applicable(Phase.JUDGE):
        if isinstance(rule, EndpointRule):
            found = [rule.check(view, config)]
        elif isinstance(rule, VariantRule):
            found = [rule.check(view, va, config) for va in _variants_for(rule, judged)
                     if va.variant.name not in settled]
        else:
            continue
        findings.extend(f for f in found if f is not None)
    return findings


def _variants_for(rule: VariantRule[Any], judged: tuple[VariantAssessment, ...]) -> list[VariantAssessment]:
    """Shadow variants are judged by the rules about shadow tests only; production variants by the others."""
    return [va for va in judged if va.variant.shadow == rule.shadow_variants]


def evaluate_collection(assessment: object, catalog: Catalog, config: AuditConfig) -> list[Finding]:
    """Every enabled collection rule whose assessment type is `assessment`'s (a kind's resources in
    a region, as a whole); `skip_endpoints` patterns match the resource's name as findings give it."""
    findings: list[Finding] = []
    for rule in REGISTRY:
        if isinstance(rule, CollectionRule) and isinstance(assessment, rule.assessment) \
                and (settings := settings_of(rule, config)).enabled:
            findings.extend(f for f in rule.check(assessment, catalog, config)
                            if not _matches(f.resource.name, settings.skip_endpoints))
    return findings


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def rule_applies(rule: Rule, endpoint: Endpoint, config: AuditConfig) -> bool:
    """Enabled in the config, and not skipped for this endpoint by its tags or name patterns."""
    return settings_of(rule, config).enabled and rule.id not in endpoint.skipped_rules


def judge_endpoint(assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> list[Finding]:
    """The endpoint's findings, each priced by its rule, without advice another rule supersedes."""
    endpoint_config = assessment.config or config
    priced: list[Finding] = []
    for finding in evaluate_endpoint(assessment, config):
        rule = BY_ID.get(finding.rule)
        result: Finding | None = finding
        if isinstance(rule, EndpointRule | VariantRule) and rule.price is not None:
            result = rule.price(finding, assessment, catalog, endpoint_config)
        if result is not None:
            priced.append(result)
    return _without_superseded(priced)


def judge_collection(assessment: object, catalog: Catalog, config: AuditConfig) -> list[Finding]:
    """A kind's assessment of a region: its findings, each priced by its rule."""
    priced: list[Finding] = []
    for finding in evaluate_collection(assessment, catalog, config):
        rule = BY_ID.get(finding.rule)
        result = (rule.price(finding, assessment, catalog, config) if isinstance(rule, CollectionRule) and rule.price
                  else finding)
        if result is not None:
            priced.append(result)
    return _without_superseded(priced)


def judge(assessment: object, catalog: Catalog, config: AuditConfig) -> list[Finding]:
    """Any kind's assessment: an endpoint's through the gates and variant rules, any other through
    the collection rules that read its type."""
    if isinstance(assessment, EndpointAssessment):
        return judge_endpoint(assessment, catalog, config)
    return judge_collection(assessment, catalog, config)


def _without_superseded(findings: list[Finding]) -> list[Finding]:
    """Drop a finding whose advice a superseding rule's finding on the same variant already gives
    (the same instance type)."""
    advised = {(f.resource.name, f.variant, f.rule): f.recommendation for f in findings if f.recommendation}

    def superseded(finding: Finding) -> bool:
        if finding.recommendation is None:
            return False
        return any(
            finding.rule in rule.supersedes
            and (other := advised.get((finding.resource.name, finding.variant, rule.id))) is not None
            and other.instance_type == finding.recommendation.instance_type
            for rule in REGISTRY
        )

    return [f for f in findings if not superseded(f)]
