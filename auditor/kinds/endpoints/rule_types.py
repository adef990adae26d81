"""The endpoint kind's rule types: gates (what may be judged at all), rules over a whole endpoint
and rules over one variant. Each reads an `EndpointAssessment`; the kind's own engine
(auditor/kinds/endpoints/judge.py) runs them. What every kind's rules share (metadata, settings,
phases, collection rules) is in auditor/analyse/rules/base.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from auditor.analyse.rules.base import CollectionRule, Phase, Rule, RuleSettings, S
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.models import Finding, Judged

if TYPE_CHECKING:
    from auditor.catalog import Catalog
    from auditor.config import AuditConfig

ENDPOINT_KINDS = frozenset({Judged.REAL_TIME, Judged.ASYNC, Judged.SERVERLESS})
INSTANCE_KINDS = frozenset({Judged.REAL_TIME, Judged.ASYNC})

EndpointPricer = Callable[[Finding, EndpointAssessment, "Catalog", "AuditConfig"], Finding | None]


@dataclass(frozen=True)
class Gate:
    """A gate's verdict: its notes, and the variants left to judge (None: judge nothing more)."""

    findings: tuple[Finding, ...] = ()
    judged: tuple[VariantAssessment, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class GateRule(Rule[RuleSettings]):
    check: Callable[[EndpointAssessment, AuditConfig], Gate]
    phase: Phase = Phase.GATE
    settings: type[RuleSettings] = RuleSettings  # a gate always runs: it has no [rules.<id>] table


@dataclass(frozen=True, kw_only=True)
class EndpointRule(Rule[S]):
    """Judges a whole endpoint (its judged variants): idle, a growing async queue."""

    check: Callable[[EndpointAssessment, AuditConfig], Finding | None]
    price: EndpointPricer | None = None


@dataclass(frozen=True, kw_only=True)
class VariantRule(Rule[S]):
    """Judges one variant: production variants, or (shadow_variants) shadow variants only. An
    exclusive variant verdict (a variant to remove) makes the judging rules moot for that variant."""

    check: Callable[[EndpointAssessment, VariantAssessment, AuditConfig], Finding | None]
    price: EndpointPricer | None = None
    shadow_variants: bool = False


# A rule of this kind: the endpoint's own types, or a rule over its fleet (EndpointFleet).
EndpointKindRule = GateRule | EndpointRule[Any] | VariantRule[Any] | CollectionRule[Any, Any]
