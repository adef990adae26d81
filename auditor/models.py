"""Typed models shared by the pipeline stages.

Each stage reads the models of the stage before it and builds its own; nothing here talks to AWS.
All are frozen: a stage never edits what an earlier stage produced.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import pandas as pd


class EndpointKind(enum.StrEnum):
    REAL_TIME = "real-time"
    ASYNC = "async"
    SERVERLESS = "serverless"


class ResourceKind(enum.StrEnum):
    """What a rule can judge: the three endpoint kinds and the two kinds of job."""

    REAL_TIME = "real-time"
    ASYNC = "async"
    SERVERLESS = "serverless"
    TRAINING_JOB = "training-job"
    TRANSFORM_JOB = "transform-job"
    PROCESSING_JOB = "processing-job"
    NOTEBOOK = "notebook-instance"
    STUDIO_APP = "studio-app"

    @classmethod
    def of_endpoint(cls, kind: EndpointKind) -> ResourceKind:
        return cls(kind.value)

    @property
    def is_job(self) -> bool:
        return self in (ResourceKind.TRAINING_JOB, ResourceKind.TRANSFORM_JOB, ResourceKind.PROCESSING_JOB)

    @property
    def is_endpoint(self) -> bool:
        return self in (ResourceKind.REAL_TIME, ResourceKind.ASYNC, ResourceKind.SERVERLESS)


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
class ReadScalingPolicy:
    """One scaling policy as DescribeScalingPolicies stated it: what PutScalingPolicy needs to put
    it back after the target is deregistered and registered again (recommend/change.py)."""

    name: str
    policy_type: str  # TargetTrackingScaling | StepScaling | PredictiveScaling, as read
    # The type's configuration as read (TargetTrackingScalingPolicyConfiguration ...; JSON-safe);
    # None: the answer did not state it.
    configuration: dict[str, Any] | None
    # The CloudWatch alarms that trigger it (a step-scaling policy is an alarm's action, by ARN).
    alarms: tuple[str, ...] = ()


@dataclass(frozen=True)
class AutoScaling:
    """A variant's Application Auto Scaling target: its capacities, its policies' names ("name
    (type)", for the reader) and, where they were read, each policy's settings and the target's
    SuspendedState (what a change that deregisters the target puts back)."""

    min_capacity: int
    max_capacity: int
    policies: tuple[str, ...] = ()
    read_policies: tuple[ReadScalingPolicy, ...] = ()
    suspended_state: dict[str, bool] | None = None


@dataclass(frozen=True)
class ManagedScaling:
    """A variant's ManagedInstanceScaling (endpoints that host inference components): SageMaker
    itself adds and removes instances between these counts as component copies need them."""

    min_instances: int | None
    max_instances: int | None


@dataclass(frozen=True)
class Variant:
    name: str
    instance_type: str | None  # None: serverless, or unknown because the endpoint config is gone
    instance_count: int
    serverless_memory_mb: int | None = None
    serverless_max_concurrency: int | None = None
    autoscaling: AutoScaling | None = None
    # The share of traffic it is routed: CurrentWeight, else the config's InitialVariantWeight (None: not said).
    weight: float | None = None
    # A shadow variant: billed instances that receive a copy of a production variant's traffic.
    shadow: bool = False
    managed_scaling: ManagedScaling | None = None  # only when its Status is ENABLED

    @property
    def scales(self) -> bool:
        """Its instance count moves: Application Auto Scaling or managed instance scaling."""
        return self.autoscaling is not None or self.managed_scaling is not None


@dataclass(frozen=True)
class MetricsConfig:
    """An endpoint config's MetricsConfig (CreateEndpointConfig, 2026). Enhanced metrics add an
    InstanceId dimension to utilisation and invocation metrics and AcceleratorId to GPU metrics;
    detailed observability publishes OpenTelemetry metrics (host, per-GPU, placement)."""

    enhanced_metrics: bool = False  # EnableEnhancedMetrics (default false)
    # EnableDetailedObservability; None: the config does not say (AWS: true for configs created since
    # the feature, false for older ones, so an unstated value is not read as either).
    detailed_observability: bool | None = None
    publish_frequency_seconds: int | None = None  # MetricPublishFrequencyInSeconds (AWS default 60)


@dataclass(frozen=True)
class InferenceComponent:
    name: str
    variant: str
    status: str
    # From DescribeInferenceComponent (None: not described): copies running now and what each
    # copy reserves on its instance.
    copy_count: int | None = None
    cpu_cores: float | None = None  # NumberOfCpuCoresRequired
    accelerators: float | None = None  # NumberOfAcceleratorDevicesRequired
    memory_mb: float | None = None  # MinMemoryRequiredInMb


# The metrics an existing alarm may watch for a plan's deployment to roll back on it: the new
# fleet's server-side errors and its model's latency, what a new shape or count can make worse.
# Not Invocation4XXErrors (the callers' mistakes: a burst of bad requests would roll back a sound
# change), OverheadLatency (SageMaker's own time, not the model's), nor utilisation (a rightsizing
# raises it by design; autoscaling's target-tracking alarms fire on it in ordinary operation).
ROLLBACK_METRICS = {"Invocation5XXErrors": "errors", "InvocationModelErrors": "errors", "ModelLatency": "latency"}


@dataclass(frozen=True)
class RollbackAlarm:
    """An existing CloudWatch alarm on one variant's errors or latency (AWS/SageMaker, dimensions
    EndpointName and VariantName)."""

    name: str
    variant: str
    metric: str  # one of ROLLBACK_METRICS

    @property
    def watches(self) -> str:
        """"errors" or "latency"."""
        return ROLLBACK_METRICS[self.metric]


@dataclass(frozen=True)
class ComponentPlacement:
    """Which of an endpoint's instances hosted an inference-component copy, hour by hour (detailed
    observability, read with PromQL): per instance id, at each hour, the instance's GPU series
    attributed to a component (0: it ran hosting none; None: no sample, it did not run then)."""

    hours: tuple[datetime, ...]
    hosts: dict[str, tuple[float | None, ...]]


@dataclass(frozen=True)
class Endpoint:
    account_id: str
    region: str
    name: str
    arn: str
    status: str
    kind: EndpointKind
    created_at: datetime
    config_name: str
    tags: dict[str, str]
    variants: tuple[Variant, ...]
    # Why the endpoint cannot be judged at all (config deleted, not InService); None when it can.
    not_judged_reason: str | None = None
    # Why the owners asked for it, or some of its rules, not to be judged (tags, name patterns).
    skipped_reason: str | None = None
    skipped_rules: frozenset[str] = frozenset()  # empty with a skipped_reason: every rule
    # Whether Application Auto Scaling was read for this endpoint's region (else autoscaling is unknown).
    autoscaling_known: bool = False
    inference_components: tuple[InferenceComponent, ...] = ()
    # False when ListInferenceComponents failed for an endpoint that hosts them: no count can be
    # shown to hold its copies.
    inference_components_listed: bool = True
    # When the endpoint was last created or updated (Search's LastModifiedTime): its shadow variants
    # have run at least since then.
    last_modified_at: datetime | None = None
    # When the endpoint config it runs was created (DescribeEndpointConfig's CreationTime): its
    # variants' shapes served nothing before then. None: not described (or not read, in tests).
    config_created_at: datetime | None = None
    # Async endpoints: the CloudWatch alarms on its queue (ApproximateAgeOfOldestRequest or
    # HasBacklogWithoutCapacity); None: not read (DescribeAlarms denied, or not an async endpoint).
    queue_alarms: tuple[str, ...] | None = None
    # The CloudWatch alarms on its variants' errors and latency (ROLLBACK_METRICS); None: not read
    # (DescribeAlarms denied, or nothing in the region a plan could deploy to).
    rollback_alarms: tuple[RollbackAlarm, ...] | None = None
    # The config's MetricsConfig; None: the config has none (or is gone).
    metrics_config: MetricsConfig | None = None
    # Its instances' component placement (detailed observability); None: not read, or none published.
    placement: ComponentPlacement | None = None

    @property
    def enhanced_metrics(self) -> bool:
        return self.metrics_config is not None and self.metrics_config.enhanced_metrics
    # DescribeEndpointConfig's answer (JSON-safe) with the config's tags under "Tags" (None: unread):
    # a plan's change copies it. None when the config was not described.
    config_description: dict[str, Any] | None = None


def price_usage(endpoint: Endpoint) -> str:
    """The usage an endpoint's instance-hours are billed under: Asynchronous Inference has a rate
    of its own ("async"; the hosting rate where the prices have none), real-time is "hosting"."""
    return "async" if endpoint.kind is EndpointKind.ASYNC else "hosting"


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
    account_id: str
    region: str
    endpoint: str  # the endpoint, or the job's name
    variant: str | None
    message: str
    evidence: dict[str, Any]
    recommendation: Recommendation | None = None
    title: str = ""
    remediation: str = ""
    # endpoint | training-job | transform-job | processing-job | notebook-instance | studio-app | studio-domain
    resource_type: str = "endpoint"
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
    # change that deregisters an autoscaled variant cannot carry across (recommend/change.py).
    basis: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlanBasis:
    """What an endpoint plan was computed from, as the audit saw it: `audit apply` reads the same
    live and refuses when any of it differs (auditor/act/targets.py)."""

    endpoint_config_name: str
    status: str
    variants: tuple[Variant, ...]  # production and shadow, with count, weight, serverless, scaling
    autoscaling_read: bool  # False: Application Auto Scaling was not read (a variant's target unknown)


@dataclass(frozen=True)
class Plan:
    """What to change on one variant (or endpoint, or job): the cheapest option its findings
    together support, and the others as alternatives."""

    account_id: str
    region: str
    endpoint: str
    variant: str | None
    resource_type: str
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
    basis: PlanBasis | None = None  # an endpoint plan's: what it was computed from

    @property
    def monthly_savings_usd(self) -> float:
        return self.proposed.monthly_savings_usd

    @property
    def findings(self) -> tuple[str, ...]:
        return tuple(sorted({r for o in (self.proposed, *self.alternatives) for r in o.rules}))


def plan_risk_rank(plan: Plan) -> int:
    """A plan's risk as a rank (low 0, medium 1, high 2); not assessed counts as medium."""
    return plan.risk.level.rank if plan.risk else RiskLevel.MEDIUM.rank


@dataclass(frozen=True)
class VariantReport:
    variant: Variant
    monthly_cost_usd: float | None
    utilization: VariantUtilization | None
    # Normalised per-period series ('<resource>:<stat>', 0-100%), for charts; not in the JSON.
    series: pd.DataFrame | None = None
    average_instances: float | None = None  # autoscaled: what ran on average (the cost rests on it)
    price_basis: str | None = None  # whose rate the cost is at: "hosting", "async" (its own); None: not priced
    # Enhanced metrics: each instance's utilisation (InstanceId), and what the sizing read.
    instances: tuple[InstanceUtilization, ...] = ()
    sizing_basis: str | None = None  # "hottest instance" | "variant mean"; None: not sized
    # The highest ModelLatency maximum of the window, in milliseconds (None: not published): an upper
    # bound of its p99, which CloudWatch is not asked for.
    model_latency_max_ms: float | None = None


@dataclass(frozen=True)
class InstanceUtilization:
    """One instance of a variant, from its InstanceId series (enhanced metrics); `accelerators`:
    each GPU's utilisation (AcceleratorId, 0-100 per device), by accelerator id."""

    instance_id: str
    utilization: VariantUtilization
    accelerators: dict[str, ResourceUtilization] = field(default_factory=dict)
    accelerator_memory: dict[str, ResourceUtilization] = field(default_factory=dict)


@dataclass(frozen=True)
class ComponentReport:
    component: InferenceComponent
    utilization: VariantUtilization | None


@dataclass(frozen=True)
class EndpointReport:
    endpoint: Endpoint
    variants: tuple[VariantReport, ...]
    components: tuple[ComponentReport, ...] = ()


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
        return round(sum(max(p.monthly_savings_usd, 0.0) for p in self.plans if p.measured), 2)

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
