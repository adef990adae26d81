"""What a resource kind is: one object that says how the kind is discovered and judged in a region,
how the regions' parts join, what it contributes to the JSON report and the HTML, email and text
reports, which prices it uses, what its plans rest on, who owns each of its resources, and which read-only IAM actions
all that takes. The pipeline, the report, routing and the IAM policy test iterate over the
registered kinds; a new kind is a new module (or small package) in `auditor.kinds`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

from auditor.analyse.rules.base import Rule
from auditor.models import AuditError, CollectionStats, Finding, Window
from auditor.recommend.plans import SubjectOf, no_subjects

if TYPE_CHECKING:
    from auditor.catalog import Catalog
    from auditor.collect.config_cache import ConfigCache
    from auditor.collect.session import AwsClients
    from auditor.config import AuditConfig
    from auditor.limits import RunLimits
    from auditor.models import AuditReport
    from auditor.progress import Progress
    from auditor.write.binding import CallBinding
    from auditor.write.evidence import EvidenceCheck
    from auditor.write.target import Target
    from auditor.write.verify import ResourceKey, Verifier

SectionT = TypeVar("SectionT")
CsvTable = tuple[tuple[str, ...], list[dict[str, Any]]]  # columns, rows
# (type, account, region, name, variant): a resource as the reports' "now" column finds it (two
# accounts, or two kinds, may each have a resource of the same name).
ShapeKey = tuple[str, str, str, str, str | None]


def shape_key(resource_type: str, item: Mapping[str, Any], name: str, variant: str | None = None) -> ShapeKey:
    """The key of one resource of a kind's JSON section (it holds its account_id and region)."""
    return (resource_type, str(item.get("account_id")), str(item.get("region")), name, variant)


class Judge(Protocol):
    """The rule registry, bound to the run's catalog and config: a kind's assessment in, its priced
    findings out (kinds hand it their assessments; they never import the registry). `rules` is every
    kind's, for what names a rule (a tag that skips rules by id)."""

    @property
    def rules(self) -> tuple[Rule[Any], ...]: ...

    def __call__(self, assessment: object) -> list[Finding]: ...


class RegionBoard(Protocol):
    """Where a kind leaves what the report should say of its resources if the region is stopped
    (deadline, signal) before the kind finishes."""

    def record_partial(self, key: str, section: Callable[[str], object]) -> None: ...


@dataclass(frozen=True)
class RegionScope:
    """What a kind's audit of one account and region is given."""

    account_id: str  # "" : the caller's own account
    region: str
    config: AuditConfig
    clients: AwsClients
    catalog: Catalog
    window: Window
    now: datetime
    limits: RunLimits
    progress: Progress
    judge: Judge
    board: RegionBoard | None = None
    configs: ConfigCache | None = None  # endpoint config descriptions kept between runs


@dataclass(frozen=True)
class KindResult(Generic[SectionT]):
    """One kind in one region: its section of the report, priced findings and errors. `fatal`
    errors (also in `errors`) stopped part of the kind; an unreachable region stops the kinds after."""

    section: SectionT
    findings: tuple[Finding, ...] = ()
    errors: tuple[AuditError, ...] = ()
    fatal: tuple[AuditError, ...] = ()
    collection: CollectionStats | None = None  # the metric queries, datapoints and calls it made


def unreachable(fatal: tuple[AuditError, ...]) -> bool:
    """Whether a kind's fatal errors say its region could not be reached at all (connection
    refused, timed out): the pipeline then stops the kinds after it, and a kind its own later calls."""
    return any(e.message.startswith("cannot reach ") or " timed out " in e.message for e in fatal)


@dataclass(frozen=True)
class Owned:
    """A resource of a kind as routing sees it: its type and name as findings and plans give them,
    and its tags ({} where the report holds none: it goes to the default audience)."""

    account_id: str
    region: str
    resource_type: str
    name: str
    tags: Mapping[str, str]


Audience = str | None  # an owner, or None: the default recipients / channel
# (account id, region, resource type, name) -> the audience of that resource
AudienceOf = Callable[[str, str, str, str], Audience]


@dataclass(frozen=True)
class ResourcePrice:
    """A price a resource's figures rest on: its usage (hosting, async, training, batch, processing,
    notebook, studio-<app>, hyperpod ...) of an instance type in a region. Advice about the
    resource is priced under the same usage."""

    resource_type: str
    name: str
    usage: str
    instance_type: str
    region: str
    # False: the kind never prices this usage at the hosting rate when it has no rate of its own
    # (it says "not priced" instead), so no hosting rate is listed for it either.
    hosting_fallback: bool = True
    # Its monthly cost where the resource is billed as endpoint hosting: the reconciliation with
    # Cost Explorer's hosting bill adds these up per region (None: not on that bill, or not priced).
    hosting_monthly_usd: float | None = None


@dataclass(frozen=True, kw_only=True)
class ResourceKind(Generic[SectionT]):
    key: str  # the kind's section in the JSON report, and its key in AuditReport.sections
    title: str
    order: int  # kinds run in this order in a region; an unreachable region stops the kinds after
    # The read-only IAM actions its discovery and collection call (deploy/iam-policy.json holds them all).
    iam_actions: frozenset[str]
    enabled: Callable[[AuditConfig], bool]
    audit: Callable[[RegionScope], KindResult[SectionT]]
    empty: SectionT  # the section when nothing was audited
    merge: Callable[[Sequence[SectionT]], SectionT]  # the regions' sections as one
    to_dict: Callable[[SectionT], Any]  # its JSON section (None: JSON null)
    owned: Callable[[SectionT], Iterable[Owned]]  # every resource, for routing by owner
    # The part of the section one audience reads: its resources (and what derives from them).
    only: Callable[[SectionT, AudienceOf, Audience], SectionT]
    # What its resources cost a month at the report's window (None: not known whole, or not audited);
    # the summary's monthly cost is the kinds' sum.
    monthly_cost: Callable[[SectionT, Window], float | None]
    price_uses: Callable[[SectionT], Iterable[ResourcePrice]] = lambda _section: ()
    # What its plans rest on (recommend/plans.py builds them): from its section and the run's catalog,
    # config and window, the resource each of its findings' plans is for (its shape, the risk of an
    # option, the change). None claimed: the rule's details state the risk and the change.
    plan_subjects: Callable[[SectionT, Catalog, AuditConfig, Window | None], SubjectOf] = (
        lambda _section, _catalog, _config, _window: no_subjects)
    # Templates for its part of the HTML, text and Markdown reports (they read `doc[key]`).
    templates: dict[str, str] = field(default_factory=dict)  # format ("html", "text", "markdown") -> name
    # Its write side, by the plan's resource_type (none: apply changes none of its resources); each
    # in the kind's package (target.py, binding.py, evidence.py, verify.py), read by auditor.act
    # through auditor.kinds.registry:
    # how apply reads the resource, tells it unchanged since the audit, and waits for the change;
    targets: Mapping[str, Target] = field(default_factory=dict)
    # the operations its plans make, what each call must name and may do;
    bindings: Mapping[str, CallBinding] = field(default_factory=dict)
    # which operations make a plan destructive, and how its activity since the audit is read first;
    evidence: Mapping[str, EvidenceCheck] = field(default_factory=dict)
    # what the next run checks to call an applied change done, and what a run saw of each type, from
    # its section as the report holds it (None: the run did not audit the kind), keyed by account,
    # region and name (a type None: not audited).
    verifiers: Mapping[str, Verifier] = field(default_factory=dict)
    seen: Callable[[Any], Mapping[str, Mapping[ResourceKey, Any] | None]] = lambda _section: {}
    # Resource types whose change is the next run's request (a job's settings): apply never makes it.
    next_run_types: frozenset[str] = frozenset()
    # Tables of its own that the CSV output writes beside the findings (`<output>-<name>.csv`), from
    # its JSON section: name -> (columns, rows); a table without rows is not written. None: it has
    # none (its section is then never serialised for them).
    csv_tables: Callable[[Any], Mapping[str, CsvTable]] | None = None
    # What each of its resources runs now ("2 x ml.m5.xlarge"), from its JSON section, for the reports'
    # "now" column (shape_key); a resource it gives none for shows its plan's current shape.
    shapes: Callable[[Any], Mapping[ShapeKey, str]] = lambda _section_json: {}
    # Its rules (one module each in its `rules/` package, found there); the rule registry joins every kind's.
    rules: tuple[Rule[Any], ...] = ()
    # Its own config sections, by section name ({"jobs": JobsConfig}): read, checked and documented
    # like the core's (auditor/config_file.py, through the registry); it reads them through its class.
    settings: Mapping[str, type] = field(default_factory=dict)

    def section(self, report: AuditReport) -> SectionT:
        """This kind's merged section of a report (its empty section when it was not audited)."""
        return cast(SectionT, report.sections.get(self.key, self.empty))

    def with_section(self, report: AuditReport, section: SectionT) -> AuditReport:
        """The report with this kind's section replaced, and its monthly cost with it."""
        return replace(report, sections={**report.sections, self.key: section},
                       monthly_cost_by_kind={**report.monthly_cost_by_kind,
                                             self.key: self.monthly_cost(section, report.window)})
