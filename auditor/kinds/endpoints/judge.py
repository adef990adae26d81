"""The endpoint kind's engine: its rules (auditor/kinds/endpoints/rules/) over one endpoint's
assessment, each finding priced by its rule, without advice another rule supersedes.

Order of evaluation for an endpoint: the gates (not-in-service, then insufficient-data) decide
what may be judged at all; an exclusive verdict (idle) makes the others moot, and an exclusive
variant verdict (variant-unused) those on its variant; then every judging rule whose kinds
include the endpoint's kind adds its finding (variant rules judge production variants; those
marked `shadow_variants` judge shadow variants only). Findings are sorted later, so the order
among judging rules does not matter.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from auditor.analyse.rules import without_superseded
from auditor.analyse.rules.base import Phase, Rule, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.models import Endpoint
from auditor.kinds.endpoints.rule_types import EndpointRule, GateRule, VariantRule
from auditor.kinds.endpoints.rules import RULES
from auditor.models import Finding, Judged

_BY_ID: dict[str, Rule[Any]] = {r.id: r for r in RULES}
# Gates run in this order: a status first (nothing else can be said), then the data.
GATES: tuple[GateRule, ...] = (_BY_ID["not-in-service"], _BY_ID["insufficient-data"])  # type: ignore[assignment]


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

    def applicable(phase: Phase) -> Iterable[Rule[Any]]:
        return (r for r in RULES if r.phase is phase and kind in r.judges and rule_applies(r, endpoint, config))

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


def rule_applies(rule: Rule[Any], endpoint: Endpoint, config: AuditConfig) -> bool:
    """Enabled in the config, and not skipped for this endpoint by its tags or name patterns."""
    return settings_of(rule, config).enabled and rule.id not in endpoint.skipped_rules


def judge_endpoint(assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> list[Finding]:
    """The endpoint's findings, each priced by its rule, without advice another rule supersedes."""
    endpoint_config = assessment.config or config
    priced: list[Finding] = []
    for finding in evaluate_endpoint(assessment, config):
        rule = _BY_ID.get(finding.rule)
        result: Finding | None = finding
        if isinstance(rule, EndpointRule | VariantRule) and rule.price is not None:
            result = rule.price(finding, assessment, catalog, endpoint_config)
        if result is not None:
            priced.append(result)
    return without_superseded(RULES, priced)
