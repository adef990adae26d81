"""The rule registry and the engine that applies it.

Every module in this package (besides `base`) defines one rule as `RULE`; the registry is what
those modules define, found at import, so a new rule is a new module. Nothing else lists rule
ids: the config's [rules.<id>] tables, the tag overrides, evaluation and pricing all read the
registry.

Order of evaluation for an endpoint: the gates (not-in-service, then insufficient-data) decide
what may be judged at all; an exclusive verdict (idle) makes the others moot, and an exclusive
variant verdict (variant-unused) those on its variant; then every judging
rule whose kinds include the endpoint's kind adds its finding (variant rules judge production variants;
those marked `shadow_variants` judge shadow variants only). Findings are sorted later, so the
order among judging rules does not matter.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from dataclasses import replace
from fnmatch import fnmatchcase

from auditor.analyse.assessment import EndpointAssessment, VariantAssessment
from auditor.analyse.rules.base import (
    AnyRule,
    EndpointRule,
    GateRule,
    JobRule,
    JobsAssessment,
    Phase,
    ResourceRule,
    Rule,
    VariantRule,
    WorkspacesAssessment,
)
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.models import Endpoint, Finding, ResourceKind


def _discover() -> tuple[AnyRule, ...]:
    rules: list[AnyRule] = []
    for module in pkgutil.iter_modules(__path__):
        if module.name == "base":
            continue
        rule = getattr(importlib.import_module(f"{__name__}.{module.name}"), "RULE", None)
        if not isinstance(rule, GateRule | EndpointRule | VariantRule | JobRule | ResourceRule):
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

__all__ = ["BY_ID", "REGISTRY", "EndpointAssessment", "JobsAssessment", "Rule", "VariantAssessment",
           "WorkspacesAssessment", "configurable_rules", "evaluate_endpoint", "evaluate_jobs", "evaluate_workspaces",
           "rule_applies"]


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
    kind = ResourceKind.of_endpoint(endpoint.kind)

    def applicable(phase: Phase) -> Iterable[AnyRule]:
        return (r for r in REGISTRY if r.phase is phase and kind in r.kinds and rule_applies(r, endpoint, config))

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


def _variants_for(rule: VariantRule, judged: tuple[VariantAssessment, ...]) -> list[VariantAssessment]:
    """Shadow variants are judged by the rules about shadow tests only; production variants by the others."""
    return [va for va in judged if va.variant.shadow == rule.shadow_variants]


def evaluate_jobs(jobs: JobsAssessment, catalog: Catalog, config: AuditConfig) -> list[Finding]:
    findings: list[Finding] = []
    for rule in REGISTRY:
        settings = config.rules.of(rule.id) if rule.configurable else None
        if isinstance(rule, JobRule) and (settings is None or settings.enabled):
            skip = settings.skip_endpoints if settings else ()
            findings.extend(f for f in rule.check(jobs, catalog, config) if not _matches(f.endpoint, skip))
    return findings


def evaluate_workspaces(workspaces: WorkspacesAssessment, catalog: Catalog, config: AuditConfig) -> list[Finding]:
    """Every enabled resource rule over notebook instances and Studio; `skip_endpoints` patterns
    match the resource's name as findings give it."""
    findings: list[Finding] = []
    for rule in REGISTRY:
        if isinstance(rule, ResourceRule) and (settings := config.rules.of(rule.id)).enabled:
            findings.extend(f for f in rule.check(workspaces, catalog, config)
                            if not _matches(f.endpoint, settings.skip_endpoints))
    return findings


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatchcase(name, p) for p in patterns)


def rule_applies(rule: Rule, endpoint: Endpoint, config: AuditConfig) -> bool:
    """Enabled in the config, and not skipped for this endpoint by its tags or name patterns."""
    return bool(config.rules.of(rule.id).enabled) and rule.id not in endpoint.skipped_rules
