"""The endpoints kind's types: an endpoint as discovered (its variants, scaling, inference
components, alarms, metrics config), its section of the report, and what its plans rest on.
Nothing here talks to AWS; all are frozen."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from auditor.models import ResourceUtilization, VariantUtilization


class EndpointKind(enum.StrEnum):
    REAL_TIME = "real-time"
    ASYNC = "async"
    SERVERLESS = "serverless"


@dataclass(frozen=True)
class ReadScalingPolicy:
    """One scaling policy as DescribeScalingPolicies stated it: what PutScalingPolicy needs to put
    it back after the target is deregistered and registered again (kinds/endpoints/change.py)."""

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
    # Its Application Auto Scaling target (inference-component/<name>, DesiredCopyCount), where the
    # region's targets were read (Endpoint.autoscaling_known); None: not registered, or not read.
    autoscaling: AutoScaling | None = None


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
class ModelNetwork:
    """What DescribeModel says of a model's network (consolidate-onto-components groups models only
    where these match): its VPC subnets and security groups (as sets: their order means nothing),
    whether its containers are isolated, and the role it runs as."""

    subnets: frozenset[str] = frozenset()
    security_groups: frozenset[str] = frozenset()
    network_isolation: bool = False
    execution_role: str | None = None
    # False: an inference pipeline (several Containers) or a multi-model container (Mode MultiModel),
    # which one inference component does not host as it is: such a model is never grouped.
    single_container: bool = True

    @property
    def vpc(self) -> dict[str, list[str]] | None:
        """As a request's VpcConfig (sorted); None: the model runs outside a VPC."""
        if not self.subnets and not self.security_groups:
            return None
        return {"SecurityGroupIds": sorted(self.security_groups), "Subnets": sorted(self.subnets)}


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
    # Async endpoints: the alarms on its HasBacklogWithoutCapacity (what triggers a step-scaling
    # policy that starts an instance from zero); None: not read, as for queue_alarms.
    backlog_alarms: tuple[str, ...] | None = None
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
class PlanBasis:
    """What an endpoint plan was computed from, as the audit saw it: `audit apply` reads the same
    live and refuses when any of it differs (auditor/kinds/endpoints/target.py)."""

    endpoint_config_name: str
    status: str
    variants: tuple[Variant, ...]  # production and shadow, with count, weight, serverless, scaling
    autoscaling_read: bool  # False: Application Auto Scaling was not read (a variant's target unknown)


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
    # The shared endpoint consolidate-onto-components proposes it joins (None: none): that plan goes
    # to the audience its members' common tags name.
    consolidated_into: str | None = None
