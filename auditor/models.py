"""Typed models shared by the pipeline stages.

Each stage reads the models of the stage before it and builds its own; nothing here talks to AWS.
All are frozen: a stage never edits what an earlier stage produced.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any


class Judged(enum.StrEnum):
    """What a rule can judge (its `judges`): the three endpoint kinds, the three kinds of job, a
    notebook instance and a Studio app. Not a resource kind of auditor.kinds: `kind_key` names the
    kind each belongs to."""

    REAL_TIME = "real-time"
    ASYNC = "async"
    SERVERLESS = "serverless"
    TRAINING_JOB = "training-job"
    TRANSFORM_JOB = "transform-job"
    PROCESSING_JOB = "processing-job"
    NOTEBOOK = "notebook-instance"
    STUDIO_APP = "studio-app"

    @classmethod
    def of_endpoint(cls, kind: enum.StrEnum) -> Judged:  # the endpoints kind's EndpointKind
        return cls(kind.value)

    @property
    def is_job(self) -> bool:
        return self in (Judged.TRAINING_JOB, Judged.TRANSFORM_JOB, Judged.PROCESSING_JOB)

    @property
    def is_endpoint(self) -> bool:
        return self in (Judged.REAL_TIME, Judged.ASYNC, Judged.SERVERLESS)

    @property
    def kind_key(self) -> str:
        """The key of the resource kind (auditor.kinds) it belongs to."""
        return "endpoints" if self.is_endpoint else "jobs" if self.is_job else "workspaces"


@dataclass(frozen=True)
class ResourceRef:
    """What a finding or a plan is about: `kind` the key of its resource kind (auditor.kinds:
    endpoints, jobs, workspaces, hyperpod), `type` the resource type (endpoint, endpoint-fleet,
    training-job, transform-job, processing-job, notebook-instance, studio-app, studio-domain,
    hyperpod-cluster), `name` its name (an endpoint's, a job's, a notebook's, a Studio domain's id,
    a cluster's), and where it is."""

    kind: str
    type: str
    name: str
    account_id: str
    region: str

    @property
    def noun(self) -> str:
        """Its type in words: "endpoint", "training job", "notebook instance"."""
        return self.type.replace("-", " ")

    @property
    def label(self) -> str:
        """How a report line names it: an endpoint by its name (the reports are endpoint-first), any
        other resource with its type ("training job churn-xgb", "notebook instance cv-research")."""
        return self.name if self.type in ENDPOINT_TYPES else f"{self.noun} {self.name}"


ENDPOINT_TYPES = ("endpoint", "endpoint-fleet")  # named by their name alone ("all endpoints" for a fleet)


class Severity(enum.StrEnum):
    INFO = "info"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return ["info", "low", "medium", "high"].index(self.value)


class Resource(enum.StrEnum):
    """The utilisation dimensions the auditor judges, each 0-100% after normalisation."""

    CPU = "cpu"
    MEMORY = "memory"
    DISK = "disk"
    GPU = "gpu"
    GPU_MEMORY = "gpu_memory"


@dataclass(frozen=True)
class Window:
    """The metric window, aligned to CloudWatch's period and retention rules."""

    start: datetime
    end: datetime
    period_seconds: int

    @property
    def points_per_series(self) -> int:
        return int((self.end - self.start).total_seconds()) // self.period_seconds

    @property
    def days(self) -> float:
        return (self.end - self.start).total_seconds() / 86400

    def starting_at(self, moment: datetime | None) -> Window:
        """The window's periods that begin at or after `moment` (a period that began before it may
        hold data from before it); the whole window when `moment` is before it or None."""
        if moment is None or moment <= self.start:
            return self
        periods = -(-(moment - self.start).total_seconds() // self.period_seconds)  # rounded up
        start = min(self.start + timedelta(seconds=periods * self.period_seconds), self.end)
        return replace(self, start=start)


@dataclass(frozen=True)
class AuditError:
    """A failure that did not stop the run; reported so that silence never hides it."""

    region: str
    endpoint: str | None
    stage: str  # discover | collect | analyse | recommend | report
    message: str
    account_id: str = ""  # "" : the caller's own account, or not tied to one


@dataclass(frozen=True)
class ResourceUtilization:
    """Percent, 0-100. avg: mean of the per-period averages; p95 and max: of the per-period maxima."""

    avg: float
    p95: float
    max: float


@dataclass(frozen=True)
class VariantUtilization:
    by_resource: dict[Resource, ResourceUtilization]
    instance_metric_days: float  # days of instance metrics actually present
    invocations: float | None  # sum over the window; None when no datapoint at all
    sizing: dict[Resource, float] = field(default_factory=dict)  # the sizing statistic per resource
    peak: dict[Resource, float] = field(default_factory=dict)  # the peak statistic per resource

    def get(self, resource: Resource) -> ResourceUtilization | None:
        return self.by_resource.get(resource)


@dataclass(frozen=True)
class Recommendation:
    action: str  # resize | delete | autoscale | scale-out | resize-memory | serverless | remove-variant
    instance_type: str | None
    instance_count: int
    current_monthly_usd: float
    recommended_monthly_usd: float
    details: dict[str, Any] = field(default_factory=dict)  # e.g. the scaling policy, the memory size

    @property
    def monthly_savings_usd(self) -> float:
        return round(self.current_monthly_usd - self.recommended_monthly_usd, 2)


# What a rule proposes, typed, for the recommend stage to price. `evidence` is for the reader only.


@dataclass(frozen=True)
class CountProposal:
    """The same instance type, this many instances (fewer: a saving; more: a scale-out)."""

    instance_count: int


@dataclass(frozen=True)
class ScalingPolicy:
    """A target-tracking policy for a variant's DesiredInstanceCount."""

    metric: str  # a predefined metric type, e.g. SageMakerVariantInvocationsPerInstance
    target_value: float
    min_capacity: int
    max_capacity: int

    def as_dict(self) -> dict[str, Any]:
        return {"PolicyType": "TargetTrackingScaling", "PredefinedMetricType": self.metric,
                "TargetValue": self.target_value, "MinCapacity": self.min_capacity,
                "MaxCapacity": self.max_capacity}


@dataclass(frozen=True)
class AutoscalingProposal:
    policy: ScalingPolicy
    average_instances: float  # what the policy would have run on average over the window


@dataclass(frozen=True)
class MemoryProposal:
    """A serverless memory size."""

    memory_size_mb: int


@dataclass(frozen=True)
class ServerlessProposal:
    memory_size_mb: int
    compute_seconds_per_month: float
    peak_concurrency: float


@dataclass(frozen=True)
class ShapeProposal:
    """The cheapest shape and count that holds the observed peak: the recommend stage searches it."""


@dataclass(frozen=True)
class SpotProposal:
    per_run_usd: float
    per_run_spot_usd: float


@dataclass(frozen=True)
class TransformProposal:
    """A recurring transform job: more instances when it is bound by them, a smaller size when not."""

    bound: bool
    median_hours: float
    cost_per_run_usd: float


Proposal = (CountProposal | AutoscalingProposal | MemoryProposal | ServerlessProposal | ShapeProposal
            | SpotProposal | TransformProposal)


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    resource: ResourceRef
    variant: str | None  # the endpoint's variant, the HyperPod instance group (None: the whole resource)
    message: str
    evidence: dict[str, Any]
    recommendation: Recommendation | None = None
    title: str = ""
    remediation: str = ""
    proposal: Proposal | None = None
    measured: bool = True  # False: its rule rests on circumstantial evidence (no usage metric exists)

    @property
    def monthly_savings_usd(self) -> float:
        return self.recommendation.monthly_savings_usd if self.recommendation else 0.0


@dataclass(frozen=True)
class PlanOption:
    """One way to change a variant: what it would run and cost a month."""

    rules: tuple[str, ...]  # the findings it rests on
    action: str  # resize | delete | autoscale | scale-out | resize-memory | serverless | spot | resize+autoscale
    instance_type: str | None
    instance_count: int
    autoscaling: dict[str, Any] | None  # a target-tracking policy (as Application Auto Scaling takes it)
    monthly_cost_usd: float
    monthly_savings_usd: float  # negative: it costs more (a risk to fix)
    advice: str
    details: dict[str, Any] = field(default_factory=dict)  # the recommendation's (e.g. serverless memory)
    # An alternative's own verdict and change (`audit apply ID --option N`); the proposed option's
    # are the plan's (Plan.risk, Plan.change, Plan.measured), not repeated here.
    risk: Risk | None = None
    change: Change | None = None
    measured: bool = True


@dataclass(frozen=True)
class ApiCall:
    """One AWS request a plan's change makes, exactly as botocore takes it (the body validates
    against botocore's service model): `service` is botocore's name (sagemaker,
    application-autoscaling, cloudwatch, scheduler), `operation` the API's (CreateEndpointConfig)."""

    service: str
    operation: str
    params: dict[str, Any]
    purpose: str  # one line, for the dry run and the CLI text


# A value one call of a change takes from the answer of an earlier call of the same change: a
# step-scaling policy's ARN (PutScalingPolicy answers it; AWS makes it up) in the AlarmActions of
# the alarm that triggers it. Written in the params as the whole string value
# "${<Operation>:<name>.<AnswerField>}", `name` being the earlier call's own name parameter
# (NAME_PARAMS); apply puts the answer in before it makes the call, and the CLI, CloudFormation
# and Terraform texts write it as a shell variable, a Ref, a resource attribute.
ANSWER_REFERENCE = re.compile(r"^\$\{(?P<operation>[A-Za-z]+):(?P<name>[^}]+)\.(?P<field>[A-Za-z]+)\}$")
NAME_PARAMS = {
    "PutScalingPolicy": "PolicyName",
    "CreateEndpointConfig": "EndpointConfigName",
    "CreateEndpoint": "EndpointName",
    "CreateInferenceComponent": "InferenceComponentName",
    "PutMetricAlarm": "AlarmName",
}


def answer_reference(operation: str, name: str, answer_field: str) -> str:
    """The params value that stands for `answer_field` of the answer to the change's earlier
    `operation` call named `name` (e.g. PutScalingPolicy's PolicyARN)."""
    if operation not in NAME_PARAMS:
        raise ValueError(f"{operation}: no name parameter to refer to its call by")
    return f"${{{operation}:{name}.{answer_field}}}"


@dataclass(frozen=True)
class AnswerReference:
    operation: str
    name: str
    field: str


def parse_reference(value: object) -> AnswerReference | None:
    """The reference a params value is, or None for a plain value."""
    if not isinstance(value, str):
        return None
    matched = ANSWER_REFERENCE.match(value)
    if matched is None or matched["operation"] not in NAME_PARAMS:
        return None
    return AnswerReference(matched["operation"], matched["name"], matched["field"])


def references_in(params: Any) -> list[AnswerReference]:
    """Every answer reference in a call's params, in order."""
    if isinstance(params, dict):
        return [r for v in params.values() for r in references_in(v)]
    if isinstance(params, list):
        return [r for v in params for r in references_in(v)]
    found = parse_reference(params)
    return [found] if found else []


def resolve_references(params: Any, answer_of: Callable[[AnswerReference], Any]) -> Any:
    """`params` with each reference replaced by `answer_of(reference)` (which raises when the
    answer is not there: a call is never made with a reference in it)."""
    if isinstance(params, dict):
        return {k: resolve_references(v, answer_of) for k, v in params.items()}
    if isinstance(params, list):
        return [resolve_references(v, answer_of) for v in params]
    found = parse_reference(params)
    return answer_of(found) if found else params


@dataclass(frozen=True)
class Change:
    """What applying a plan does, in order, and how it is undone."""

    calls: tuple[ApiCall, ...]
    rollback: str  # how the change is rolled back (automatically by alarms, or by hand: which call)
    waits_for: str | None = None  # e.g. "endpoint <name> InService": what apply waits for after the calls
    # What puts back, as the audit read it, the protection a call removes before the change is made
    # (a deregistered scalable target and its policies): for apply to make if a later call fails.
    restore: tuple[ApiCall, ...] = ()


@dataclass(frozen=True)
class CopiedTags:
    """The tags of the endpoint config a plan's new config copies, read when the change is shown:
    settable ones only (no `aws:` tag, no `auditor:apply`: the opt-in is set by people, per resource)."""

    source_config: str
    read_at: datetime
    tags: tuple[tuple[str, str], ...] = ()
    problem: str | None = None  # why they could not be read (then none are written, and the text says so)


class RiskLevel(enum.StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return ["low", "medium", "high"].index(self.value)


@dataclass(frozen=True)
class ResourceReplay:
    """One resource's projected utilisation on the proposed shape, over every period of the window."""

    resource: Resource
    p95: float  # percent of the proposed shape's capacity
    peak: float
    hours_over_target: float
    hours_over_100: float
    headroom_at_peak: float  # 100 - peak: what is left at the observed peak


@dataclass(frozen=True)
class Risk:
    """How the plan would have done on the window's own load, and what a replay cannot predict."""

    level: RiskLevel
    replays: tuple[ResourceReplay, ...] = ()
    load_test_first: tuple[str, ...] = ()  # why a replay cannot predict it (accelerator, architecture...)
    load_test_request: ApiCall | None = None  # Inference Recommender CreateInferenceRecommendationsJob
    # Where no replay applies (a notebook stopped, a Studio app or HyperPod nodes deleted): the
    # stated facts the level rests on, one line each (docs/plans.md, "Risk levels"); and what a
    # change that deregisters an autoscaled variant cannot carry across (kinds/endpoints/change.py).
    basis: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What to change on one variant (or endpoint, or job): the cheapest option its findings
    together support, and the others as alternatives."""

    resource: ResourceRef
    variant: str | None
    current_instance_type: str | None
    current_instance_count: int
    current_monthly_usd: float
    proposed: PlanOption
    alternatives: tuple[PlanOption, ...] = ()
    measured: bool = True  # False: rests on circumstantial evidence; not in the headline saving
    id: str = ""  # stable: the same resource and the same proposal give the same id in every run
    risk: Risk | None = None  # None: not assessed (no replayable data, or not a shape change)
    change: Change | None = None  # None: no change the auditor can express as API calls
    # The endpoint config the audit saw: `audit apply` refuses once the endpoint runs another.
    endpoint_config: str | None = None
    # The kind's record of what the plan was computed from, as JSON-safe data (the endpoints kind's
    # PlanBasis): `audit apply` reads the same live and refuses when any of it differs. None: none.
    basis: dict[str, Any] | None = None
    # The resources whose own plans this one includes (a consolidation: its member endpoints): the
    # run's saving counts this plan's, not theirs too (`covered_plans`).
    covers: tuple[ResourceRef, ...] = ()

    @property
    def monthly_savings_usd(self) -> float:
        return self.proposed.monthly_savings_usd

    @property
    def findings(self) -> tuple[str, ...]:
        return tuple(sorted({r for o in (self.proposed, *self.alternatives) for r in o.rules}))


def covered_plans(plans: Sequence[Plan]) -> dict[str, Plan]:
    """The plans another plan includes, by id, each with the plan that includes it: one whose
    resource a measured plan that saves money `covers` (its saving already holds theirs)."""
    covering = {ref: p for p in plans if p.measured and p.monthly_savings_usd > 0 for ref in p.covers}
    return {p.id: covering[p.resource] for p in plans
            if p.resource in covering and covering[p.resource] is not p}


def plan_risk_rank(plan: Plan) -> int:
    """A plan's risk as a rank (low 0, medium 1, high 2); not assessed counts as medium."""
    return plan.risk.level.rank if plan.risk else RiskLevel.MEDIUM.rank


@dataclass(frozen=True)
class PriceUse:
    """One price a report's figures use, and where it came from (see catalog.PriceOrigin)."""

    region: str
    instance_type: str
    usage: str  # what was priced: hosting | training | async | batch | processing | notebook | studio-<app>
    price_per_hour: float
    source: str  # bundled | price-list-api | offer-file | cost-explorer
    as_of: str
    kind: str  # list | derived | effective
    price_basis: str = ""  # whose rate it is: `usage` (its own) or "hosting" (the prices have none for it)


@dataclass(frozen=True)
class Reconciliation:
    """Per region: the audit's monthly hosting estimate next to what Cost Explorer billed."""

    region: str
    estimated_monthly_usd: float
    billed_monthly_usd: float
    coverage_percent: float | None  # estimate / billed; None when nothing was billed


@dataclass(frozen=True)
class CatalogInfo:
    source: str
    as_of: str
    priced_regions: tuple[str, ...]
    basis: str = "list"  # pricing.basis: list | effective
    used: tuple[PriceUse, ...] = ()  # every price the figures use
    warnings: tuple[str, ...] = ()  # a refresh that failed, prices older than pricing.max_price_age_days
    problems: tuple[str, ...] = ()  # those of the warnings that are failures (also said on stderr)
    reconciliation: tuple[Reconciliation, ...] = ()  # basis effective only


@dataclass(frozen=True)
class SavingsPlanAdvice:
    """AWS's recommendation for a SageMaker Savings Plan (Cost Explorer's own model, computed on the
    usage before the report's plans are applied)."""

    term: str  # ONE_YEAR | THREE_YEARS
    payment_option: str
    lookback: str
    hourly_commitment_usd: float
    estimated_monthly_savings_usd: float
    estimated_savings_percent: float
    current_on_demand_spend_usd: float  # over the lookback period
    coverage_percent: float | None  # share of that on-demand spend the commitment would cover


@dataclass(frozen=True)
class CollectionStats:
    """How one account and region's metrics were fetched: queries, datapoints, GetMetricData calls."""

    account_id: str
    region: str
    queries: int
    datapoints: int
    calls: int


@dataclass(frozen=True)
class AccountInfo:
    """An account the run set out to cover, and whether it could be audited."""

    id: str
    name: str
    audited: bool
    regions: tuple[str, ...]
    skipped_regions: tuple[str, ...] = ()  # offered by SageMaker, not enabled for the account
    error: str | None = None


@dataclass(frozen=True)
class ResourceThresholds:
    """Percent per resource: under it, a resource is under-used ([thresholds])."""

    cpu: float
    memory: float
    gpu: float
    gpu_memory: float


@dataclass(frozen=True)
class ReportSettings:
    """The settings the report's verdicts rested on, as the report states them."""

    regions: tuple[str, ...]
    lookback_days: int
    thresholds: ResourceThresholds
    sizing_statistic: str
    peak_statistic: str
    target_utilization: float
    min_days: int


@dataclass(frozen=True)
class AuditReport:
    generated_at: datetime
    window: Window
    # Each resource kind's section, by its key (auditor.kinds): a kind reads its own with
    # `KIND.section(report)` and replaces it with `KIND.with_section(report, section)`.
    sections: dict[str, Any]
    findings: tuple[Finding, ...]
    errors: tuple[AuditError, ...]
    catalog: CatalogInfo
    api_calls: dict[str, int] = field(default_factory=dict)
    plans: tuple[Plan, ...] = ()
    partial: str | None = None  # why the run stopped before it saw everything (deadline, SIGTERM)
    accounts: tuple[AccountInfo, ...] = ()
    collection: tuple[CollectionStats, ...] = ()
    savings_plans: tuple[SavingsPlanAdvice, ...] = ()
    # Answers that were throttled, server errors or failed connections (botocore retried them).
    call_problems: dict[str, int] = field(default_factory=dict)
    # The failures that left a region or an account (or a kind in a region) unread: the run is
    # incomplete, and every headline says so (auditor/report/headline.py).
    unread: tuple[AuditError, ...] = ()
    # `--max-risk`: the highest risk level shown, and the plans above it (left out of `plans` and of
    # the headline saving, which says so).
    max_risk: RiskLevel | None = None
    plans_above_risk: tuple[Plan, ...] = ()
    settings: ReportSettings = field(kw_only=True)  # the thresholds and targets the verdicts used
    # Each audited kind's monthly cost at the window (None: not known whole), in the kinds' order: the
    # kinds price their own sections when the report is built (auditor.kinds.registry.monthly_cost_by_kind).
    monthly_cost_by_kind: dict[str, float | None] = field(default_factory=dict, kw_only=True)

    @property
    def monthly_cost_usd(self) -> float:
        """Every kind's monthly cost, as the headline saving counts every kind's plans (a kind whose
        cost is not known whole, `None` in `monthly_cost_by_kind`, is not in it)."""
        return round(sum(v for v in self.monthly_cost_by_kind.values() if v is not None), 2)

    @property
    def monthly_savings_usd(self) -> float:
        """The sum of the plans' savings: one plan per variant, so alternatives are never added up;
        a plan that costs more (a growing queue) is a risk to fix, not a negative saving."""
        covered = covered_plans(self.plans)
        return round(sum(max(p.monthly_savings_usd, 0.0) for p in self.plans
                         if p.measured and p.id not in covered), 2)

    @property
    def finding_count(self) -> int:
        """The findings: those above info, each a reason to act. The one count every output shows."""
        return sum(1 for f in self.findings if f.severity is not Severity.INFO)

    @property
    def not_judged_count(self) -> int:
        """The info findings (a data gap, metrics off): resources or rules not judged, counted apart."""
        return len(self.findings) - self.finding_count

    def within_risk(self, max_risk: RiskLevel | None) -> AuditReport:
        """The report with only the plans at `max_risk` or lower (a plan not assessed counts as medium)."""
        if max_risk is None:
            return self
        plans = (*self.plans, *self.plans_above_risk)
        return replace(self, max_risk=max_risk,
                       plans=tuple(p for p in plans if plan_risk_rank(p) <= max_risk.rank),
                       plans_above_risk=tuple(p for p in plans if plan_risk_rank(p) > max_risk.rank))

    def findings_by_severity(self) -> dict[str, int]:
        counts = {s.value: 0 for s in reversed(Severity)}
        for finding in self.findings:
            counts[finding.severity.value] += 1
        return counts
