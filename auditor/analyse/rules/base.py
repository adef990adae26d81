"""What every rule reads, and the small helpers they share. Metadata is data beside the rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from auditor.catalog import InstanceShape
from auditor.config import AuditConfig
from auditor.models import Endpoint, Finding, Resource, Severity, Variant, VariantUtilization, Window


@dataclass(frozen=True)
class RuleMeta:
    id: str
    title: str
    severity: Severity  # the default; the recommend stage may raise it with the money at stake
    remediation: str


@dataclass(frozen=True)
class VariantAssessment:
    variant: Variant
    shape: InstanceShape | None
    utilization: VariantUtilization | None
    monthly_cost_usd: float | None
    raw: pd.DataFrame = field(default_factory=pd.DataFrame)  # the collected series, as published
    normalised: pd.DataFrame = field(default_factory=pd.DataFrame)  # '<resource>:<stat>', 0-100%


@dataclass(frozen=True)
class EndpointAssessment:
    endpoint: Endpoint
    variants: tuple[VariantAssessment, ...]
    age_days: float
    window: Window | None = None
    queue: pd.DataFrame = field(default_factory=pd.DataFrame)  # endpoint-level series (async)
    config: AuditConfig | None = None  # the config with this endpoint's tag overrides


RESOURCE_LABELS = {
    Resource.CPU: "CPU",
    Resource.MEMORY: "memory",
    Resource.DISK: "disk",
    Resource.GPU: "GPU",
    Resource.GPU_MEMORY: "GPU memory",
}


class Audited(Protocol):
    """What a finding is about: an endpoint, a training job or a transform job."""

    @property
    def account_id(self) -> str: ...

    @property
    def region(self) -> str: ...

    @property
    def name(self) -> str: ...


def make_finding(rule: RuleMeta, endpoint: Audited, variant: str | None, message: str,
                 evidence: dict[str, Any]) -> Finding:
    return Finding(
        rule=rule.id,
        severity=rule.severity,
        account_id=endpoint.account_id,
        region=endpoint.region,
        endpoint=endpoint.name,
        variant=variant,
        message=message,
        evidence=evidence,
    )


def join_words(words: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def period_label(period_seconds: int) -> str:
    if period_seconds == 3600:
        return "hourly"
    if period_seconds == 86400:
        return "daily"
    return f"{period_seconds // 60}-minute"


def target_percent(rule_value: float, config: AuditConfig) -> float:
    """A rule's own target utilisation, or the [recommend] one where the rule says 0."""
    return rule_value or config.recommend.target_utilization
