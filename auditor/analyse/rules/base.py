"""What a rule is: its metadata, the resources it judges, its settings, its check and its pricing
step, in one object. Each rule lives in a module of its own in its kind's `rules/` package
(`auditor/kinds/<kind>/rules/<rule_id>.py`), which lists its rules as the kind's `rules`;
`auditor.kinds.registry` joins every kind's. Evaluation, config validation, tag overrides and
pricing are derived from these objects, so a rule id is written once. This module holds what every
kind's rules share; a kind's own rule types (the endpoint kind's gates, endpoint and variant rules)
live in its package.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from auditor import schema
from auditor.models import (
    Finding,
    Judged,
    Proposal,
    Resource,
    ResourceRef,
    Severity,
)
from auditor.schema import setting

if TYPE_CHECKING:
    from auditor.catalog import Catalog
    from auditor.config import AuditConfig

class Phase(enum.IntEnum):
    """When a rule runs. Gates decide whether anything else may judge an endpoint; an exclusive
    verdict (idle) makes the others moot; judging rules each add their own finding."""

    GATE = 0
    EXCLUSIVE = 1
    JUDGE = 2


@dataclass(frozen=True)
class RuleSettings:
    """What every rule has under `[rules.<id>]`; a rule's own settings class extends it, each
    field declared with `setting()` and its bounds (auditor/schema.py), which the config file and
    the `auditor:<rule>:threshold` tags are both checked against."""

    enabled: bool = setting(True, "false: the rule judges nothing")
    skip_endpoints: tuple[str, ...] = setting((), "name patterns (fnmatch) this rule does not judge",
                                              check=schema.PATTERN)

    @classmethod
    def problem(cls, name: str, value: Any) -> str | None:
        """What is wrong with `value` for the setting `name` ("must be ..., got ..."), or None."""
        return schema.problem(schema.key_of(cls, name), value)


S = TypeVar("S", bound=RuleSettings)


@dataclass(frozen=True, kw_only=True)
class Rule(Generic[S]):
    id: str
    title: str
    severity: Severity  # the default; the pricing step may set it from the money at stake
    remediation: str
    docs: str  # the AWS documentation the remediation rests on
    judges: frozenset[Judged]  # what it judges (empty: a kind of its own, named by `kind` and `resource_type`)
    settings: type[S]  # its own RuleSettings subclass, or RuleSettings
    # The one setting an `auditor:<id>:threshold` tag overrides; "thresholds" sets all four
    # resource thresholds of [thresholds]; None: the rule takes no threshold tag.
    threshold_field: str | None = None
    phase: Phase = Phase.JUDGE
    # False: the rule's evidence is circumstantial (no usage metric exists); its advice is listed
    # as a plan, but its saving is not counted in the report's headline.
    measured: bool = True
    # Rules whose priced advice this rule's makes unnecessary: where both advise the same instance
    # type for one variant, the other rule's finding is dropped (this one already says it).
    supersedes: frozenset[str] = frozenset()
    # What its findings are about, where `judges` does not say it: the resource type, and the key of
    # the resource kind (auditor.kinds) its findings belong to (a kind of its own: "hyperpod").
    resource_type: str | None = None
    kind: str | None = None

    @property
    def configurable(self) -> bool:
        """Gates always run: they decide what may be judged, so they have no [rules.<id>] table."""
        return self.phase is not Phase.GATE

    def finding(self, subject: Audited, variant: str | None, message: str, evidence: dict[str, Any],
                proposal: Proposal | None = None) -> Finding:
        return Finding(
            rule=self.id,
            severity=self.severity,
            resource=ResourceRef(kind=self.kind or _kind_key(self.judges),
                                 type=self.resource_type or _resource_type(self.judges),
                                 name=subject.name, account_id=subject.account_id, region=subject.region),
            variant=variant,
            message=message,
            evidence=evidence,
            title=self.title,
            remediation=self.remediation,
            proposal=proposal,
            measured=self.measured,
        )


def _resource_type(judges: frozenset[Judged]) -> str:
    others = [k for k in judges if not k.is_endpoint]
    return others[0].value if len(others) == 1 and len(judges) == 1 else "endpoint"


def _kind_key(judges: frozenset[Judged]) -> str:
    keys = {k.kind_key for k in judges}
    if len(keys) != 1:
        raise ValueError("a rule judging no Judged value, or several kinds', names its `kind`")
    return keys.pop()


Assessment = TypeVar("Assessment")


@dataclass(frozen=True, kw_only=True)
class CollectionRule(Rule[S], Generic[S, Assessment]):
    """Judges one resource kind's assessment of a region as a whole (its jobs; its notebook
    instances and Studio apps; ...): the registry hands it every assessment of type `assessment`.
    `price`, where given, prices each finding; otherwise the check prices what it finds itself."""

    assessment: type[Assessment]
    check: Callable[[Assessment, Catalog, AuditConfig], Iterable[Finding]]
    price: Callable[[Finding, Assessment, Catalog, AuditConfig], Finding | None] | None = None


class Audited(Protocol):
    """What a finding is about (its `resource`'s name and place): an endpoint, a job, a notebook..."""

    @property
    def account_id(self) -> str: ...

    @property
    def region(self) -> str: ...

    @property
    def name(self) -> str: ...


def settings_of(rule: Rule[S], config: AuditConfig) -> S:
    """The rule's settings in `config` (its own class; the defaults where the config has none)."""
    configured = config.rules.get(rule.id)
    return configured if isinstance(configured, rule.settings) else rule.settings()


RESOURCE_LABELS = {
    Resource.CPU: "CPU",
    Resource.MEMORY: "memory",
    Resource.DISK: "disk",
    Resource.GPU: "GPU",
    Resource.GPU_MEMORY: "GPU memory",
}


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
