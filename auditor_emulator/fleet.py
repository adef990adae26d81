"""Synthetic SageMaker fleets seeded into the emulator: the demo's, the tests', the scenarios' and the bench's.

Published the way AWS publishes, kind by kind (see `auditor_emulator.published`, which every datum
is checked against before it is sent):

- Loads are given as the true utilisation (0-100%) and published as SageMaker does: CPU summed
  over vCPUs, GPU summed over GPUs. Each running instance publishes once a minute, so an hourly
  instance datum has SampleCount = instances x 60; an autoscaled variant's count moves by the hour.
- Real-time and serverless traffic is a random (Poisson) count per hour; an hour without requests
  has no invocation or latency datapoint at all, never a zero.
- Async endpoints publish no Invocations: a queue is simulated hour by hour (arrivals, capacity,
  backlog carried over) and published as TotalProcessingTime, TimeInBacklog, ModelLatency and the
  endpoint-level backlog metrics; instance load follows how busy the instances are.

Everything goes through the AWS API; only what the API cannot set (creation time, status, the
current instance count) is adjusted in the emulator's own state.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import numpy as np

from auditor.catalog import Catalog, load_catalog
from auditor_emulator.published import (
    ASYNC,
    COMPONENT_NS,
    INSTANCE_NS,
    INVOCATION_NS,
    REAL_TIME,
    SERVERLESS,
    check_component_datum,
    check_datums,
)
from auditor_emulator.server import ACCOUNT_ID, Emulator

__all__ = ["DEMO_KMS_KEY", "DEMO_VPC", "INSTANCE_NS", "INVOCATION_NS", "OTHER_KMS_KEY", "OTHER_VPC", "Busy",
           "ComponentSpec", "EndpointSpec", "Load", "VariantSpec", "ab_leftover_and_shadow_test", "async_variant",
           "batch_scoring_async", "consolidation_fleet", "day_night_counts", "demo_fleet", "fleet_datums",
           "llm_components", "reco_tiny",
           "scenario_fleet", "seed_fleet", "serverless_variant", "synthetic_fleet"]

MINUTES_PER_HOUR = 60
UPLOAD_MS = 150.0  # async: writing the result to S3, part of TotalProcessingTime


@dataclass(frozen=True)
class Load:
    """A utilisation pattern in percent: a daily swing around `mean`, noise, and how far the
    busiest minute of an hour rises above the hour's average."""

    mean: float
    swing: float = 0.0
    noise: float = 1.0
    burst: float = 0.15
    rise: float = 0.0  # relative growth of the mean from the first hour to the last
    spike: float = 0.0  # one hour, mid-window, at this multiple of the mean
    ceiling: float = 100.0  # percent loads stop at 100; counts and ages do not
    lag_hours: int = 0  # the daily swing peaks this many hours later (models that peak at different hours)

    def hourly(self, hours: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        daily = np.sin(2 * math.pi * ((hours - self.lag_hours) % 24) / 24)
        growth = 1 + self.rise * hours / max(1, hours.size - 1)
        average = np.clip(self.mean * growth + self.swing * daily + rng.normal(0, self.noise, hours.size),
                          0.0, self.ceiling)
        if self.spike and hours.size:
            average[hours.size // 2] = min(self.ceiling, self.mean * self.spike)
        maximum = np.clip(average * (1 + rng.uniform(0, self.burst, hours.size)), 0.0, self.ceiling)
        return average, maximum


@dataclass(frozen=True)
class Busy:
    """An async variant's load that follows how busy its instances are (requests processed /
    capacity): `idle` percent with nothing to do, `full` with every instance busy all hour."""

    full: float
    idle: float = 1.0
    noise: float = 1.0
    burst: float = 0.1

    def hourly(self, busy: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        average = np.clip(self.idle + (self.full - self.idle) * busy + rng.normal(0, self.noise, busy.size),
                          0.0, 100.0)
        maximum = np.clip(average * (1 + rng.uniform(0, self.burst, busy.size)), 0.0, 100.0)
        return average, maximum


def day_night_counts(night: int, day: int, day_hours: Iterable[int] = range(8, 20)) -> tuple[int, ...]:
    """An instance count per UTC hour of the day: `day` in `day_hours`, `night` otherwise."""
    busy = set(day_hours)
    return tuple(day if h in busy else night for h in range(24))


@dataclass(frozen=True)
class VariantSpec:
    instance_type: str | None = "ml.m5.xlarge"
    count: int = 1  # the configured (initial) instance count
    name: str = "AllTraffic"
    cpu: Load | Busy | None = field(default_factory=lambda: Load(60, 10))
    memory: Load | Busy | None = field(default_factory=lambda: Load(60, 2))
    disk: Load | Busy | None = field(default_factory=lambda: Load(20, 0))
    gpu: Load | Busy | None = None
    gpu_memory: Load | Busy | None = None
    # Real-time and serverless traffic: requests in an hour with traffic (Poisson around it, with a daily swing).
    invocations_per_hour: float = 5000.0
    traffic_hours: tuple[int, ...] | None = None  # UTC hours of the day with traffic; None: all day
    traffic_days: tuple[int, ...] | None = None  # UTC weekdays with traffic (0 = Monday); None: every day
    # CPU percent (per vCPU) in hours without traffic, for instances that idle then; None: `cpu` all day.
    quiet_cpu: float | None = None
    traffic_swing: float = 0.4  # relative daily swing of the request rate
    serverless_memory_mb: int | None = None
    metric_days: float | None = None  # None: the whole window
    latency_ms: float = 20.0
    latency_rise: float = 0.0  # relative growth of ModelLatency over the window
    invocations_rise: float = 0.0
    autoscaling: tuple[int, int] | None = None  # (min, max): a target-tracking policy is registered
    counts: tuple[int, ...] | None = None  # instances running per UTC hour of the day (24): None = `count`
    # Async queue: requests arriving per hour, seconds one instance spends on a request.
    arrivals_per_hour: float = 0.0
    processing_seconds: float = 60.0
    initial_backlog: int = 0
    steady_arrivals: bool = False  # exact arrivals (no Poisson noise): for queues balanced on capacity
    late_arrivals: tuple[float, float] | None = None  # (last days, extra requests per hour in them)
    spike_requests: int = 0  # extra requests arriving in one hour mid-window
    cold_start_ms: float = 2500.0  # serverless ModelSetupTime
    weight: float = 1.0  # InitialVariantWeight: 0 routes it no traffic (requests can still name it)
    # A shadow variant (ShadowProductionVariants): it publishes what a production variant does, under
    # its own VariantName, for the copies of live traffic it is sent.
    shadow: bool = False
    # Each instance's own CPU load (one per instance; None: every instance runs `cpu`). The variant's
    # series is then their mean (Average) and the hottest one's maximum (Maximum).
    instance_cpu: tuple[Load, ...] | None = None
    # With enhanced metrics, each instance's share of the requests (one weight per instance; None:
    # even). Each instance publishes the Invocations it served (InstanceId); the variant's is their sum.
    instance_traffic: tuple[float, ...] | None = None
    # Each GPU's own load on every instance (one per GPU; None: every GPU runs `gpu` / `gpu_memory`).
    # The variant's GPU series is their sum, as SageMaker publishes it.
    gpu_devices: tuple[Load, ...] | None = None
    gpu_memory_devices: tuple[Load, ...] | None = None
    # ManagedInstanceScaling (min, max) on the config's variant: Status ENABLED, no ScaleInPolicy.
    managed_scaling: tuple[int, int] | None = None
    # With `autoscaling`: the target-tracking configuration put instead of invocations per instance.
    scaling_policy: dict[str, Any] | None = None
    # Async: requests arriving in each UTC hour of the day (24; None: `arrivals_per_hour` with its swing).
    arrivals_by_hour: tuple[float, ...] | None = None

    def count_at(self, hour_of_day: int) -> int:
        return self.counts[hour_of_day % 24] if self.counts else self.count


@dataclass(frozen=True)
class ComponentSpec:
    """An inference component on the endpoint's (only) variant: its copies and what each reserves."""

    name: str
    copies: int
    accelerators: int
    cpu_cores: float = 4.0
    memory_mb: int = 16384
    # What the component publishes (None: nothing): its utilisation normalised to what its copies
    # reserve (/aws/sagemaker/InferenceComponents) and its requests (AWS/SageMaker), per
    # InferenceComponentName, as SageMaker publishes them.
    cpu: Load | None = None
    memory: Load | None = None
    gpu: Load | None = None
    invocations_per_hour: float = 0.0


@dataclass(frozen=True)
class EndpointSpec:
    name: str
    variants: tuple[VariantSpec, ...] = (VariantSpec(),)
    kind: str = REAL_TIME  # real-time | async | serverless
    tags: dict[str, str] = field(default_factory=dict)
    age_days: float = 90.0
    status: str = "InService"
    delete_config: bool = False
    stranded_hours: int = 0  # async: hours at the end scaled to zero instances while requests keep arriving
    updated_days_ago: float | None = None  # LastModifiedTime; None: as created
    queue_alarm: bool = False  # async: a CloudWatch alarm on its ApproximateAgeOfOldestRequest
    # MetricsConfig.EnableEnhancedMetrics: each instance (InstanceId) and GPU (AcceleratorId) publishes too.
    enhanced_metrics: bool = False
    # Inference components on its variant (its config then names no model); with
    # EnableDetailedObservability their placement is published (OpenTelemetry, read with PromQL): the
    # copies fill the instances' GPUs in order, and instances left over host none.
    components: tuple[ComponentSpec, ...] = ()
    detailed_observability: bool = False
    # The model's network settings and the config's encryption (what consolidation must keep equal).
    vpc: dict[str, list[str]] | None = None  # the model's VpcConfig
    network_isolation: bool = False  # the model's EnableNetworkIsolation
    kms_key: str | None = None  # the endpoint config's KmsKeyId


def async_variant(instance_type: str, count: int, arrivals_per_hour: float, processing_seconds: float,
                  cpu: Load | Busy | None = None, gpu: Load | Busy | None = None, **kw: Any) -> VariantSpec:
    """An async variant: no invocation traffic; CPU (and GPU on a GPU type) follow the queue."""
    has_gpu = any(k in instance_type for k in ("g4dn", "g5", "p3", "p4", "g6"))
    return VariantSpec(
        instance_type, count, cpu=cpu or Busy(85, 1.5, 1.5), gpu=gpu or (Busy(95, 0.5, 2) if has_gpu else None),
        invocations_per_hour=0.0, arrivals_per_hour=arrivals_per_hour, processing_seconds=processing_seconds, **kw)


def serverless_variant(memory_mb: int, invocations_per_hour: float, memory: Load, **kw: Any) -> VariantSpec:
    """A serverless variant: memory and traffic only, no instance metrics."""
    return VariantSpec(None, 0, cpu=None, memory=memory, disk=None, serverless_memory_mb=memory_mb,
                       invocations_per_hour=invocations_per_hour, **kw)


# The network and encryption the demo's small recommendation models share (consolidation groups only
# endpoints whose models sit in the same VPC, are isolated alike and whose configs use the same key).
DEMO_VPC = {"SecurityGroupIds": ["sg-0c0ffee1234567890"], "Subnets": ["subnet-0a1b2c3d4e5f60718",
                                                                       "subnet-0b2c3d4e5f6071829"]}
DEMO_KMS_KEY = "arn:aws:kms:us-east-1:123456789012:key/0f1e2d3c-4b5a-4969-8a7b-0c1d2e3f4a5b"
OTHER_VPC = {"SecurityGroupIds": ["sg-0fab1e9876543210f"], "Subnets": ["subnet-0f9e8d7c6b5a49382"]}
OTHER_KMS_KEY = "arn:aws:kms:us-east-1:123456789012:key/9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"


def reco_tiny(index: int) -> EndpointSpec:
    """`reco-tiny-<index>` (1-6), one of six small recommendation models, each alone on its own
    endpoint: 2 x ml.m5.large (the availability floor of two), no autoscaling, traffic all day. The
    model's CPU averages 3.5% of the variant and peaks under 8% (its daily swing peaks 4 x (index - 1)
    hours after reco-tiny-1's, so no two peak at the same hour), memory stays under 15%. All six
    models are in DEMO_VPC, not network-isolated, and their configs use DEMO_KMS_KEY.

    Verdict: each on its own can go no lower than 2 x ml.m5.large (or a slightly smaller pair);
    together they consolidate onto one endpoint of 2 shared instances (inference components, one per
    model): the time-aligned sum of their loads stays far below the sum of their peaks."""
    if not 1 <= index <= 6:
        raise ValueError("reco-tiny endpoints are numbered 1 to 6")
    cpu = Load(3.5, 2.5, 0.3, burst=0.1, lag_hours=4 * (index - 1))
    return EndpointSpec(
        f"reco-tiny-{index}", (VariantSpec("ml.m5.large", 2, cpu=cpu, memory=Load(10, 1, 0.3, burst=0.1),
                                           invocations_per_hour=600, latency_ms=15),),
        tags={"owner": "recsys@example.com", "env": "prod"}, vpc=DEMO_VPC, kms_key=DEMO_KMS_KEY)


def llm_components() -> EndpointSpec:
    """`llm-components`: an endpoint hosting three inference components on 4 x ml.g5.12xlarge (4 GPUs
    each) under managed instance scaling (ENABLED, 1-4 instances, no scale-in policy): llm-chat (2
    copies x 2 GPUs), llm-summarize (1 x 2 GPUs), llm-embed (1 x 1 GPU) reserve 7 of the 16 GPUs, which
    2 instances hold. Each component is busy on what it reserves (GPU ~60% normalised) and serves
    requests every hour of every day.

    Verdict: native consolidation (the CONSOLIDATION scale-in policy frees 2 instances); no
    component is under-used and none has hours without traffic (no scale to zero)."""
    return EndpointSpec(
        "llm-components", (VariantSpec("ml.g5.12xlarge", 4, cpu=Load(12, 3), memory=Load(30, 2), gpu=Load(24, 6),
                                       gpu_memory=Load(35, 2), invocations_per_hour=2400, latency_ms=400,
                                       managed_scaling=(1, 4)),),
        components=(
            ComponentSpec("llm-chat", copies=2, accelerators=2, cpu_cores=8.0, memory_mb=32768, cpu=Load(38, 8),
                          memory=Load(64, 2), gpu=Load(60, 12), invocations_per_hour=1500),
            ComponentSpec("llm-summarize", copies=1, accelerators=2, cpu_cores=8.0, memory_mb=32768, cpu=Load(35, 6),
                          memory=Load(61, 2), gpu=Load(58, 10), invocations_per_hour=600),
            ComponentSpec("llm-embed", copies=1, accelerators=1, cpu_cores=4.0, memory_mb=16384, cpu=Load(40, 6),
                          memory=Load(55, 2), gpu=Load(62, 10), invocations_per_hour=300)),
        tags={"owner": "assistant@example.com", "env": "prod"})


def batch_scoring_async() -> EndpointSpec:
    """`batch-scoring-async`: an async endpoint (ml.m5.xlarge) registered with Application Auto
    Scaling at 0-2 instances with only a target-tracking policy on ApproximateBacklogSizePerInstance
    (target 5). A nightly batch (780 requests at 02:00 UTC) lifts the backlog over the target: one
    instance runs 02:00-16:00 and drains it (a minute a request). The other ten hours a request
    trickles in every two and a half hours and waits: 0 instances, HasBacklogWithoutCapacity 1,
    ApproximateBacklogSize 1-4, under the target, so nothing starts an instance until the next
    batch. Its queue has an age alarm. (The instance's 14 hours a day give the variant 8 days of
    instance metrics in 14: enough to be judged.)

    Verdict: stuck at zero: add a step-scaling policy triggered by an alarm on
    HasBacklogWithoutCapacity (PutScalingPolicy + PutMetricAlarm)."""
    policy = {"TargetValue": 5.0, "CustomizedMetricSpecification": {
        "MetricName": "ApproximateBacklogSizePerInstance", "Namespace": "AWS/SageMaker",
        "Dimensions": [{"Name": "EndpointName", "Value": "batch-scoring-async"}], "Statistic": "Average"}}
    return EndpointSpec(
        "batch-scoring-async", (async_variant(
            "ml.m5.xlarge", 1, arrivals_per_hour=0.0, processing_seconds=60, cpu=Busy(85, 1.5, 1.0),
            memory=Load(40, 2), counts=day_night_counts(0, 1, range(2, 16)),
            arrivals_by_hour=tuple(780.0 if h == 2 else 0.4 for h in range(24)), steady_arrivals=True,
            traffic_swing=0.0, autoscaling=(0, 2), scaling_policy=policy),),
        kind=ASYNC, queue_alarm=True, tags={"owner": "risk@example.com", "env": "prod"})


def demo_fleet() -> list[EndpointSpec]:
    """Thirty endpoints that exercise every rule, with busy ones that must not be flagged."""
    team = lambda owner, env="prod": {"owner": owner, "env": env}  # noqa: E731
    return [
        # Busy, and autoscaled where there are several instances: must not be flagged.
        EndpointSpec("fraud-scoring", (VariantSpec("ml.c5.xlarge", 2, cpu=Load(72, 10), memory=Load(61, 2),
                                                   autoscaling=(2, 6)),),
                     tags=team("payments@example.com")),
        EndpointSpec("nlp-summarizer", (VariantSpec("ml.c5.4xlarge", 1, cpu=Load(74, 8), memory=Load(58, 3)),),
                     tags=team("nlp@example.com")),
        EndpointSpec("vision-detector", (VariantSpec("ml.g4dn.12xlarge", 1, cpu=Load(35, 5), memory=Load(55, 2),
                                                     gpu=Load(78, 8), gpu_memory=Load(70, 2)),),
                     tags=team("vision@example.com")),
        # A busy queue that drains: flat, noisy, with one burst mid-window; not a trend.
        EndpointSpec("doc-ocr-async", (async_variant("ml.m5.xlarge", 1, arrivals_per_hour=50, processing_seconds=60,
                                                     cpu=Busy(92, 2), memory=Load(66, 2), traffic_swing=0.1,
                                                     spike_requests=40),),
                     kind=ASYNC, tags=team("docs@example.com"), queue_alarm=True),
        EndpointSpec("intent-classifier", (serverless_variant(1024, 900, Load(52, 3)),),
                     kind=SERVERLESS, tags=team("support@example.com")),
        # Memory-optimised instance using 4% of its memory: moves across families.
        EndpointSpec("recsys-ranker", (VariantSpec("ml.r5.2xlarge", 1, cpu=Load(18, 5), memory=Load(4, 0.5)),),
                     tags=team("recsys@example.com")),
        # Four large instances where fewer, smaller ones hold the load.
        # Its owners opted it in to `audit apply` (the demo applies its plan).
        EndpointSpec("search-embeddings", (VariantSpec("ml.m5.4xlarge", 4, cpu=Load(7, 2), memory=Load(12, 1)),),
                     tags={**team("search@example.com"), "auditor:apply": "allowed"}),
        # Raw CPU 120-190% looks busy; on 8 vCPUs it is 15-24%.
        EndpointSpec("pricing-api", (VariantSpec("ml.c5.2xlarge", 2, cpu=Load(18, 4), memory=Load(30, 2)),),
                     tags=team("pricing@example.com")),
        # A GPU that idles stays on the same GPU model, on a smaller shape.
        EndpointSpec("image-tagger", (VariantSpec("ml.g4dn.4xlarge", 1, cpu=Load(6, 2), memory=Load(10, 1),
                                                  gpu=Load(14, 4), gpu_memory=Load(22, 1)),),
                     tags=team("vision@example.com", "staging")),
        # Idle: instances run, nobody calls.
        EndpointSpec("churn-model-legacy", (VariantSpec("ml.m5.2xlarge", 1, cpu=Load(2, 0.5, 0.2), memory=Load(18, 0.5),
                                                        invocations_per_hour=0),),
                     tags=team("growth@example.com")),
        # Two variants: the busy pair runs without autoscaling, the other is under-used.
        EndpointSpec("ab-ranker", (
            VariantSpec("ml.m5.2xlarge", 2, name="champion", cpu=Load(68, 8), memory=Load(55, 2)),
            VariantSpec("ml.m5.2xlarge", 2, name="challenger", cpu=Load(5, 1), memory=Load(20, 1),
                        invocations_per_hour=200),
        ), tags=team("recsys@example.com")),
        # A queue that keeps growing: arrivals a little above what two instances process.
        EndpointSpec("video-transcode-async", (async_variant(
            "ml.m5.xlarge", 2, arrivals_per_hour=60.08, processing_seconds=120, cpu=Busy(85, 2), memory=Load(60, 2),
            initial_backlog=6, steady_arrivals=True, traffic_swing=0.0),),
                     kind=ASYNC, tags=team("media@example.com")),
        # A latency creep with flat traffic.
        EndpointSpec("checkout-ranker", (VariantSpec("ml.c5.2xlarge", 1, cpu=Load(62, 6), memory=Load(58, 2),
                                                     latency_ms=20, latency_rise=1.5),),
                     tags=team("checkout@example.com")),
        # Serverless with twice the memory it needs; sparse traffic on a dedicated instance.
        EndpointSpec("faq-bot", (serverless_variant(2048, 3000, Load(18, 2), latency_ms=300),),
                     kind=SERVERLESS, tags=team("support@example.com")),
        # Called in office hours only (Mon-Fri 08-18 UTC), idle the rest of the week: stop it then.
        EndpointSpec("internal-reports", (VariantSpec("ml.m5.large", 1, cpu=Load(3, 1), memory=Load(25, 1),
                                                      invocations_per_hour=20, latency_ms=200,
                                                      traffic_hours=tuple(range(8, 18)), traffic_days=(0, 1, 2, 3, 4),
                                                      quiet_cpu=1.0),),
                     tags=team("finance@example.com", "internal")),
        # Too young to judge, too little data to judge.
        EndpointSpec("new-model-canary", (VariantSpec("ml.m5.xlarge", 1, cpu=Load(3, 1), memory=Load(10, 1)),),
                     age_days=3, tags=team("ml-platform@example.com", "canary")),
        EndpointSpec("sentiment-v2", (VariantSpec("ml.c5.xlarge", 1, cpu=Load(4, 1), memory=Load(12, 1),
                                                  metric_days=4),),
                     tags=team("nlp@example.com")),
        # Config deleted while the endpoint runs; and an endpoint that failed.
        EndpointSpec("orphaned-endpoint", (VariantSpec("ml.m5.large", 1),), delete_config=True,
                     tags=team("unknown")),
        EndpointSpec("broken-deploy", (VariantSpec("ml.m5.large", 1, cpu=None, memory=None, disk=None,
                                                   invocations_per_hour=0),),
                     status="Failed", tags={"owner": "<script>alert('x')</script>", "env": "dev"}),
        # Enhanced metrics (per instance, per GPU). One instance of four carries the load (sticky
        # clients: it serves three quarters of the requests): the variant mean (~28%) would advise two
        # instances; the hottest says no, and its requests say the routing is why.
        EndpointSpec("chat-router", (VariantSpec("ml.c5.2xlarge", 4, memory=Load(40, 2),
                                                 instance_cpu=(Load(72, 6), Load(7, 2), Load(8, 2), Load(6, 2)),
                                                 instance_traffic=(0.76, 0.08, 0.08, 0.08)),),
                     enhanced_metrics=True, tags=team("assistant@example.com")),
        # A model on one of the four GPUs of a g4dn.12xlarge: a one-GPU shape holds it.
        EndpointSpec("doc-embedder-gpu", (VariantSpec(
            "ml.g4dn.12xlarge", 1, cpu=Load(10, 3), memory=Load(22, 2),
            gpu_devices=(Load(38, 6), Load(0.5, 0, 0.1), Load(0.5, 0, 0.1), Load(0.5, 0, 0.1)),
            gpu_memory_devices=(Load(45, 1), Load(1, 0, 0.1), Load(1, 0, 0.1), Load(1, 0, 0.1))),),
                     enhanced_metrics=True, tags=team("search@example.com")),
        # Inference components (detailed observability on): two copies of a model that takes all
        # four GPUs of an instance fill two of the three instances; the third hosts no copy.
        EndpointSpec("support-llm", (VariantSpec("ml.g5.12xlarge", 3, cpu=Load(22, 4), memory=Load(40, 2),
                                                 gpu=Load(30, 4), gpu_memory=Load(44, 1)),),
                     components=(ComponentSpec("support-llm-70b", copies=2, accelerators=4, cpu_cores=16.0,
                                               memory_mb=131072),),
                     detailed_observability=True, tags=team("assistant@example.com")),
        # Issue 27 (last, so that the endpoints above keep their random series): six small models
        # that consolidate onto shared instances, a component endpoint that consolidates natively,
        # an async endpoint stuck at zero (each function's docstring says why).
        *(reco_tiny(i) for i in range(1, 7)),
        llm_components(),
        batch_scoring_async(),
    ]


# ---------- Scenarios: realistic endpoints whose correct verdict is known ----------

def async_busy_draining() -> EndpointSpec:
    """Verdict: in use, no finding. Two g4dn.xlarge process ~80% of their capacity (GPU ~80%); at
    the daily peak requests wait, and the queue drains every evening. No Invocations metric at all:
    an audit that reads 'no invocations' as idle is wrong here."""
    return EndpointSpec("async-busy-gpu-draining", (async_variant(
        "ml.g4dn.xlarge", 2, arrivals_per_hour=960, processing_seconds=6, memory=Load(55, 2),
        gpu_memory=Load(60, 2), traffic_swing=0.3),), kind=ASYNC, tags={"owner": "vision@example.com"},
        queue_alarm=True)


def async_idle() -> EndpointSpec:
    """Verdict: idle (delete it, or scale it to zero). No request arrives, the queue stays empty,
    the instance idles at ~1% CPU. Its queue has an alarm (as do the other scenarios' async endpoints:
    their verdicts are about capacity, not about who is told)."""
    return EndpointSpec("async-idle-empty-queue", (async_variant(
        "ml.m5.xlarge", 1, arrivals_per_hour=0, processing_seconds=30, cpu=Busy(80, 1.0, 0.3),
        memory=Load(15, 0.5)),), kind=ASYNC, tags={"owner": "docs@example.com"}, queue_alarm=True)


def async_slowly_growing() -> EndpointSpec:
    """Verdict: rising queue (scale out by one instance). Two g4dn.xlarge process 1,500 requests an
    hour, flat out; in the last week arrivals exceed that by ~1.2 an hour, so the backlog grows from
    ~5 to ~200 requests and the oldest request's age with it. Tiny against the throughput, but it
    never drains."""
    return EndpointSpec("async-queue-growing-slowly", (async_variant(
        "ml.g4dn.xlarge", 2, arrivals_per_hour=1500, processing_seconds=4.8, memory=Load(58, 2),
        gpu_memory=Load(64, 2), initial_backlog=5, steady_arrivals=True, late_arrivals=(7, 1.17),
        traffic_swing=0.0),),
        kind=ASYNC, tags={"owner": "media@example.com"}, queue_alarm=True)


def realtime_steady_busy() -> EndpointSpec:
    """Verdict: busy: not idle, not under-utilised, not a serverless candidate. Traffic around the
    clock on 2 x ml.c5.xlarge at 65-95% CPU; with no scaling policy, advice to add one is fair."""
    return EndpointSpec("realtime-steady-busy", (VariantSpec(
        "ml.c5.xlarge", 2, cpu=Load(80, 8, 2), memory=Load(62, 2), invocations_per_hour=7000,
        traffic_swing=0.2, latency_ms=35),), tags={"owner": "payments@example.com"})


def realtime_bursty_low_traffic() -> EndpointSpec:
    """Verdict: serverless candidate (and under-used where it stays). One ml.m5.large serves ~150
    requests in each of three hours a day (a batch job calling it) and nothing otherwise: no
    invocation datapoints in the other 21 hours; CPU ~4%, memory ~1 GB."""
    return EndpointSpec("realtime-bursty-low-traffic", (VariantSpec(
        "ml.m5.large", 1, cpu=Load(4, 1, 0.5), memory=Load(13, 0.5), invocations_per_hour=150,
        traffic_hours=(6, 12, 18), traffic_swing=0.0, latency_ms=80),), tags={"owner": "finance@example.com"})


def realtime_autoscaled_day_night() -> EndpointSpec:
    """Verdict: no finding (busy and autoscaled). A target-tracking policy runs 2 x ml.c5.xlarge at
    night and 6 by day; CPUUtilization's SampleCount shows the real instance-hours (~4 on average,
    not the 2 configured nor the count DescribeEndpoint shows now)."""
    counts = day_night_counts(2, 6)
    return EndpointSpec("realtime-autoscaled-day-night", (VariantSpec(
        "ml.c5.xlarge", 2, cpu=Load(58, 6, 2), memory=Load(50, 2), invocations_per_hour=9000,
        traffic_swing=0.6, autoscaling=(2, 8), counts=counts),), tags={"owner": "search@example.com"})


def ab_leftover_and_shadow_test() -> EndpointSpec:
    """An A/B test's loser left at weight 0 (it serves nothing, billed in full) and a shadow test
    forgotten for six weeks (the shadow is sent a copy of every request). Not in the demo fleet: its
    email would outgrow the size a mail client shows whole."""
    return EndpointSpec("credit-risk", (
        VariantSpec("ml.c5.xlarge", 1, name="xgb-v4", cpu=Load(58, 8), memory=Load(45, 2),
                    invocations_per_hour=3000),
        VariantSpec("ml.c5.2xlarge", 1, name="xgb-v3", cpu=Load(2, 0.5, 0.2), memory=Load(35, 1),
                    invocations_per_hour=0, weight=0.0),
        VariantSpec("ml.c5.xlarge", 1, name="xgb-v5-shadow", cpu=Load(60, 8), memory=Load(47, 2),
                    invocations_per_hour=3000, shadow=True),
    ), updated_days_ago=42, tags={"owner": "risk@example.com", "env": "prod"})


def consolidation_fleet() -> list[EndpointSpec]:
    """The consolidation scenarios of issue 27, one endpoint per trap, each verdict below. All are
    real-time, single-model, in us-east-1 of the emulator's account, with 14 days of data:

    - `reco-tiny-1` .. `reco-tiny-6` (see `reco_tiny`): consolidate together onto 2 shared instances.
    - `reco-other-vpc`: a reco-tiny twin whose model is in OTHER_VPC: never grouped with them.
    - `reco-other-key`: a reco-tiny twin whose config uses OTHER_KMS_KEY: never grouped with them.
    - `reco-busy`: same network and key, 2 x ml.m5.large at ~72% CPU with heavy traffic, near its
      capacity: never grouped.
    - `vision-small-1`, `vision-small-2`: a one-GPU model each on 1 x ml.g5.xlarge (its only GPU at
      ~15%), same network and key: never grouped (a shape with room for both costs as much as two
      ml.g5.xlarge or more).
    """
    twin = reco_tiny(3)
    small_gpu = [EndpointSpec(f"vision-small-{i}", (VariantSpec(
        "ml.g5.xlarge", 1, cpu=Load(6, 2, lag_hours=12 * (i - 1)), memory=Load(18, 1), gpu=Load(15, 5),
        gpu_memory=Load(30, 1), invocations_per_hour=400, latency_ms=45),),
        tags={"owner": "vision@example.com", "env": "prod"}, vpc=DEMO_VPC, kms_key=DEMO_KMS_KEY) for i in (1, 2)]
    return [
        *(reco_tiny(i) for i in range(1, 7)),
        replace(twin, name="reco-other-vpc", vpc=OTHER_VPC),
        replace(twin, name="reco-other-key", kms_key=OTHER_KMS_KEY),
        EndpointSpec("reco-busy", (VariantSpec("ml.m5.large", 2, cpu=Load(72, 8, 2), memory=Load(55, 2),
                                               invocations_per_hour=9000, latency_ms=25),),
                     tags={"owner": "recsys@example.com", "env": "prod"}, vpc=DEMO_VPC, kms_key=DEMO_KMS_KEY),
        *small_gpu,
    ]


def scenario_fleet() -> list[EndpointSpec]:
    """Realistic endpoints, one per trap an audit can fall into; each function's docstring says the
    verdict a correct audit gives."""
    return [async_busy_draining(), async_idle(), async_slowly_growing(), realtime_steady_busy(),
            realtime_bursty_low_traffic(), realtime_autoscaled_day_night()]


def synthetic_fleet(count: int, seed: int = 7) -> list[EndpointSpec]:
    """`count` endpoints of mixed kinds, shapes and loads, for the benchmark: mostly real-time (some
    with traffic in business hours only, some idle), one in ten async, one in ten serverless."""
    rng = np.random.default_rng(seed)
    shapes = ["ml.m5.xlarge", "ml.m5.2xlarge", "ml.c5.xlarge", "ml.c5.2xlarge", "ml.r5.xlarge", "ml.g4dn.xlarge"]
    fleet = []
    for i in range(count):
        instance_type = shapes[i % len(shapes)]
        tags = {"owner": f"team-{i % 9}@example.com"}
        memory = Load(float(rng.uniform(3, 80)), 2)
        instances = int(rng.integers(1, 4))
        if i % 10 == 7:
            processing = float(rng.uniform(5, 60))
            capacity = instances * 3600 / processing
            fleet.append(EndpointSpec(f"bench-{i:04d}", (async_variant(
                instance_type, instances, arrivals_per_hour=capacity * float(rng.uniform(0, 0.9)),
                processing_seconds=processing, memory=memory),), kind=ASYNC, tags=tags))
            continue
        if i % 10 == 9:
            fleet.append(EndpointSpec(f"bench-{i:04d}", (serverless_variant(
                int(rng.choice([1024, 2048, 3072])), float(rng.uniform(20, 2000)), memory,
                traffic_hours=tuple(range(7, 19)) if i % 20 == 9 else None),), kind=SERVERLESS, tags=tags))
            continue
        cpu = float(rng.uniform(3, 85))
        gpu = Load(float(rng.uniform(5, 90)), 5) if "g4dn" in instance_type else None
        gpu_memory = Load(float(rng.uniform(10, 80)), 2) if gpu else None
        fleet.append(EndpointSpec(
            f"bench-{i:04d}",
            (VariantSpec(instance_type, instances, cpu=Load(cpu, cpu / 5), memory=memory,
                         gpu=gpu, gpu_memory=gpu_memory,
                         invocations_per_hour=0.0 if i % 17 == 0 else 1000.0,
                         traffic_hours=tuple(range(8, 18)) if i % 3 == 1 else None),),
            tags=tags,
        ))
    return fleet


def fleet_datums(fleet: Iterable[EndpointSpec], now: datetime, lookback_days: int = 14, seed: int = 42,
                 catalog: Catalog | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every datum the fleet publishes, by namespace, each checked against what AWS publishes for
    its endpoint's kind (UnpublishedMetricError names the endpoint, kind and metric otherwise)."""
    catalog = catalog or load_catalog()
    rng = np.random.default_rng(seed)
    end = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    datums: dict[str, list[dict[str, Any]]] = {INSTANCE_NS: [], INVOCATION_NS: [], COMPONENT_NS: []}
    for spec in fleet:
        if spec.status != "InService" or spec.delete_config:
            continue
        window_hours = int(min(lookback_days, spec.age_days) * 24)
        if spec.kind == ASYNC and len(spec.variants) != 1:
            raise ValueError(f"endpoint {spec.name!r}: an async endpoint has one variant")
        for variant in spec.variants:
            hours = window_hours if variant.metric_days is None else int(variant.metric_days * 24)
            for namespace, items in _variant_datums(spec, variant, end, hours, rng, catalog):
                check_datums(spec.name, spec.kind, namespace, items, spec.enhanced_metrics)
                datums[namespace].extend(items)
        for component in spec.components:
            for namespace, items in _component_datums(component, end, window_hours, rng):
                for item in items:
                    check_component_datum(spec.name, spec.kind, namespace, item)
                datums[namespace].extend(items)
    return datums


def seed_fleet(
    emulator: Emulator,
    fleet: Iterable[EndpointSpec],
    now: datetime,
    lookback_days: int = 14,
    region: str = "us-east-1",
    seed: int = 42,
    catalog: Catalog | None = None,
    account_id: str | None = None,
) -> None:
    """Create the endpoints through the SageMaker API and publish their metrics to CloudWatch, in
    the emulator's default account or in `account_id` (through credentials acting in it).

    Every datum is checked against what AWS publishes for the endpoint's kind first: a spec that
    would publish anything else raises UnpublishedMetricError before anything is created.
    """
    catalog = catalog or load_catalog()
    session = _session_in(emulator, account_id, region)
    sagemaker = session.client("sagemaker", endpoint_url=emulator.url)
    cloudwatch = session.client("cloudwatch", endpoint_url=emulator.url)
    autoscaling = session.client("application-autoscaling", endpoint_url=emulator.url)
    fleet = list(fleet)
    datums = fleet_datums(fleet, now, lookback_days, seed, catalog)  # checked before anything is created
    for spec in fleet:
        _create_endpoint(sagemaker, spec)
        _adjust_state(emulator, spec, now, region, account_id)
        _register_autoscaling(autoscaling, spec)
        if spec.queue_alarm:
            _put_queue_alarm(cloudwatch, spec)
        _add_components(sagemaker, spec, now, region, account_id or ACCOUNT_ID, catalog)
    for namespace, items in datums.items():
        if items:
            emulator.publish_metrics(namespace, items, region, account_id or ACCOUNT_ID)


def _add_components(sagemaker: Any, spec: EndpointSpec, now: datetime, region: str, account_id: str,
                    catalog: Catalog) -> None:
    """Its inference components through CreateInferenceComponent (each with a model of its own, in the
    endpoint's network), InService since the endpoint was created, and, with detailed observability,
    their placement as OpenTelemetry series over the last two days."""
    if not spec.components:
        return
    from auditor_emulator import components, promql

    variant = spec.variants[0]
    for c in spec.components:
        _create_model(sagemaker, f"{c.name}-model", spec)
        required: dict[str, Any] = {"NumberOfCpuCoresRequired": c.cpu_cores, "MinMemoryRequiredInMb": c.memory_mb}
        if c.accelerators:
            required["NumberOfAcceleratorDevicesRequired"] = c.accelerators
        sagemaker.create_inference_component(
            InferenceComponentName=c.name, EndpointName=spec.name, VariantName=variant.name,
            Specification={"ModelName": f"{c.name}-model", "ComputeResourceRequirements": required},
            RuntimeConfig={"CopyCount": c.copies})
        components.settle_seeded(account_id, region, c.name, now - timedelta(days=spec.age_days))
    if not spec.detailed_observability or variant.instance_type is None:
        return
    shape = catalog.shape(variant.instance_type)
    gpus = shape.gpu_count if shape else 0
    # Copies fill the instances' GPUs in order (first fit); GPUs no copy uses carry no component.
    slots: list[list[str | None]] = [[None] * gpus for _ in range(variant.count)]
    for c in spec.components:
        for _ in range(c.copies):
            target = next((row for row in slots if row.count(None) >= c.accelerators), None)
            if target is None:
                raise ValueError(f"{spec.name}: the copies of {c.name} do not fit on {variant.count} instances")
            for _ in range(c.accelerators):
                target[target.index(None)] = c.name
    end = now.replace(minute=0, second=0, microsecond=0)
    stamps = [(end - timedelta(hours=h, minutes=30)).timestamp() for h in range(47, -1, -1)]
    promql.publish(account_id, region, [
        series for index, row in enumerate(slots)
        for series in promql.instance_series(spec.name, variant.name, variant.instance_type,
                                             _instance_id(spec.name, variant.name, index), row, stamps)])


def _put_queue_alarm(cloudwatch: Any, spec: EndpointSpec) -> None:
    """The alarm a team watching its async queue would have: the oldest request older than 30 minutes."""
    cloudwatch.put_metric_alarm(
        AlarmName=f"{spec.name}-queue-age", Namespace="AWS/SageMaker", MetricName="ApproximateAgeOfOldestRequest",
        Dimensions=[{"Name": "EndpointName", "Value": spec.name}], Statistic="Maximum", Period=300,
        EvaluationPeriods=3, Threshold=1800.0, ComparisonOperator="GreaterThanThreshold",
    )


def _register_autoscaling(autoscaling: Any, spec: EndpointSpec) -> None:
    for v in spec.variants:
        if v.autoscaling is None:
            continue
        resource_id = f"endpoint/{spec.name}/variant/{v.name}"
        dimension = "sagemaker:variant:DesiredInstanceCount"
        autoscaling.register_scalable_target(
            ServiceNamespace="sagemaker", ResourceId=resource_id, ScalableDimension=dimension,
            MinCapacity=v.autoscaling[0], MaxCapacity=v.autoscaling[1],
        )
        policy = v.scaling_policy or {
            "TargetValue": 300.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"},
        }
        metric = (policy.get("CustomizedMetricSpecification") or {}).get("MetricName", "invocations")
        autoscaling.put_scaling_policy(
            PolicyName=f"{spec.name}-{v.name}-{metric if v.scaling_policy else 'invocations'}",
            ServiceNamespace="sagemaker", ResourceId=resource_id, ScalableDimension=dimension,
            PolicyType="TargetTrackingScaling", TargetTrackingScalingPolicyConfiguration=policy,
        )


IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/model:latest"
EXECUTION_ROLE = "arn:aws:iam::123456789012:role/sagemaker-execution"


def _create_model(sagemaker: Any, name: str, spec: EndpointSpec) -> None:
    network: dict[str, Any] = {"VpcConfig": spec.vpc} if spec.vpc else {}
    if spec.network_isolation:
        network["EnableNetworkIsolation"] = True
    sagemaker.create_model(ModelName=name, PrimaryContainer={"Image": IMAGE}, ExecutionRoleArn=EXECUTION_ROLE,
                           **network)


def _create_endpoint(sagemaker: Any, spec: EndpointSpec) -> None:
    model = f"{spec.name}-model"
    _create_model(sagemaker, model, spec)
    variants = []
    for v in spec.variants:
        if v.shadow:
            continue  # the emulator takes no ShadowProductionVariants: _adjust_state sets them
        variant: dict[str, Any] = {"VariantName": v.name, "InitialVariantWeight": v.weight}
        if not spec.components:  # a variant that hosts inference components names no model
            variant["ModelName"] = model
        if v.managed_scaling:
            variant["ManagedInstanceScaling"] = {"Status": "ENABLED", "MinInstanceCount": v.managed_scaling[0],
                                                 "MaxInstanceCount": v.managed_scaling[1]}
        if v.serverless_memory_mb:
            variant["ServerlessConfig"] = {"MemorySizeInMB": v.serverless_memory_mb, "MaxConcurrency": 5}
        else:
            variant.update(InstanceType=v.instance_type, InitialInstanceCount=v.count)
        variants.append(variant)
    config: dict[str, Any] = {"EndpointConfigName": f"{spec.name}-config", "ProductionVariants": variants}
    if spec.kind == ASYNC:
        config["AsyncInferenceConfig"] = {"OutputConfig": {"S3OutputPath": f"s3://demo-bucket/{spec.name}/"}}
    if spec.kms_key:
        config["KmsKeyId"] = spec.kms_key
    sagemaker.create_endpoint_config(**config)
    tags = [{"Key": k, "Value": v} for k, v in spec.tags.items()]
    sagemaker.create_endpoint(EndpointName=spec.name, EndpointConfigName=f"{spec.name}-config", Tags=tags)
    if spec.delete_config:
        sagemaker.delete_endpoint_config(EndpointConfigName=f"{spec.name}-config")


def _session_in(emulator: Emulator, account_id: str | None, region: str) -> boto3.session.Session:
    """The emulator acts in the account of the role a session assumed (as AWS does)."""
    keys = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": region}
    if account_id is None or account_id == ACCOUNT_ID:
        return boto3.session.Session(**keys)
    sts = boto3.session.Session(**keys).client("sts", endpoint_url=emulator.url)
    credentials = sts.assume_role(RoleArn=f"arn:aws:iam::{account_id}:role/fleet-seeder",
                                  RoleSessionName="fleet-seeder")["Credentials"]
    return boto3.session.Session(aws_access_key_id=credentials["AccessKeyId"],
                                 aws_secret_access_key=credentials["SecretAccessKey"],
                                 aws_session_token=credentials["SessionToken"], region_name=region)


# How long before its endpoint (or the update that switched to it) a seeded endpoint config was created.
CONFIG_LEAD_MINUTES = 5


def _adjust_state(emulator: Emulator, spec: EndpointSpec, now: datetime, region: str,
                  account_id: str | None = None) -> None:
    """The emulator stamps endpoints InService, created now, at the initial count: set what the spec says."""
    backend = emulator.backend("sagemaker", region, account_id or ACCOUNT_ID)
    endpoint = backend.endpoints[spec.name]
    endpoint.creation_time = now - timedelta(days=spec.age_days)
    endpoint.last_modified_time = now - timedelta(
        days=spec.age_days if spec.updated_days_ago is None else spec.updated_days_ago)
    if not spec.delete_config:
        # The emulator stamps the config created now; the config an endpoint runs was created just
        # before the endpoint was created or last updated to it (its shape's data begins then).
        # Naive UTC, as moto stamps configs: ListEndpointConfigs sorts them with the ones it creates.
        backend.endpoint_configs[f"{spec.name}-config"].creation_time = (
            endpoint.last_modified_time - timedelta(minutes=CONFIG_LEAD_MINUTES)).replace(tzinfo=None)
    shadows = [v for v in spec.variants if v.shadow]
    if shadows:
        # Attributes the emulator serialises as DescribeEndpointConfig's and Search's ShadowProductionVariants.
        if not spec.delete_config:
            backend.endpoint_configs[f"{spec.name}-config"].shadow_production_variants = [
                {"VariantName": v.name, "ModelName": f"{spec.name}-model", "InstanceType": v.instance_type,
                 "InitialInstanceCount": v.count, "InitialVariantWeight": v.weight} for v in shadows]
        endpoint.shadow_production_variants = [
            {"VariantName": v.name, "CurrentInstanceCount": v.count, "DesiredInstanceCount": v.count,
             "CurrentWeight": v.weight, "DesiredWeight": v.weight} for v in shadows]
    if (spec.enhanced_metrics or spec.detailed_observability) and not spec.delete_config:
        # The emulator's CreateEndpointConfig takes no MetricsConfig: set what DescribeEndpointConfig returns.
        backend.endpoint_configs[f"{spec.name}-config"].metrics_config = {
            "EnableEnhancedMetrics": spec.enhanced_metrics, "EnableDetailedObservability": spec.detailed_observability,
            "MetricPublishFrequencyInSeconds": 60}
    endpoint.endpoint_status = spec.status
    if spec.status == "Failed":
        endpoint.failure_reason = "The primary container did not pass the ping health check."
    hour = now.astimezone(UTC).hour
    production = [v for v in spec.variants if not v.shadow]
    for variant, described in zip(production, endpoint.production_variants, strict=False):
        if variant.counts and "CurrentInstanceCount" in described:
            described["CurrentInstanceCount"] = described["DesiredInstanceCount"] = variant.count_at(hour)


# ---------- What one variant publishes ----------

def _series(name: str, dims: list[dict[str, str]], stamps: list[datetime], stats: list[dict[str, float]],
            unit: str) -> list[dict[str, Any]]:
    return [
        {"MetricName": name, "Dimensions": dims, "Timestamp": ts, "StatisticValues": st, "Unit": unit}
        for ts, st in zip(stamps, stats, strict=True)
    ]


def _stats(samples: np.ndarray, average: np.ndarray, minimum: np.ndarray,
           maximum: np.ndarray) -> list[dict[str, float]]:
    return [{"SampleCount": float(n), "Sum": float(a) * float(n), "Minimum": float(lo), "Maximum": float(hi)}
            for n, a, lo, hi in zip(samples, average, minimum, maximum, strict=True)]


def _pick(mask: np.ndarray, stamps: list[datetime]) -> list[datetime]:
    return [s for s, keep in zip(stamps, mask, strict=True) if keep]


def _requests(rate: np.ndarray, steady: bool, rng: np.random.Generator) -> np.ndarray:
    """Requests per hour: Poisson around the rate, or exactly the rate (carrying the fractions)."""
    if steady:
        return np.diff(np.floor(np.concatenate(([0.0], np.cumsum(rate))))).astype(np.int64)
    return rng.poisson(np.clip(rate, 0, None)).astype(np.int64)


def _traffic_rate(variant: VariantSpec, base: float, hod: np.ndarray, offsets: np.ndarray,
                  weekdays: np.ndarray | None = None) -> np.ndarray:
    hours = offsets.size
    growth = 1 + variant.invocations_rise * offsets / max(1, hours - 1)
    swing = 1 + variant.traffic_swing * np.sin(2 * math.pi * (hod - 9) / 24)  # peaks mid-afternoon UTC
    return base * growth * swing * _traffic_mask(variant, hod, offsets, weekdays)


def _weekdays(stamps: list[datetime]) -> np.ndarray:
    return np.array([s.weekday() for s in stamps], dtype=np.int64)


def _traffic_mask(variant: VariantSpec, hod: np.ndarray, offsets: np.ndarray,
                  weekdays: np.ndarray | None = None) -> np.ndarray:
    """The hours the variant's traffic may come in: its hours of the day, on its weekdays."""
    active = np.isin(hod, variant.traffic_hours) if variant.traffic_hours is not None else np.ones(offsets.size, bool)
    if variant.traffic_days is not None and weekdays is not None:
        active &= np.isin(weekdays, variant.traffic_days)
    return active


def _active_minutes(requests: np.ndarray) -> np.ndarray:
    """Minutes of the hour with at least one request: the SampleCount of a per-minute count metric."""
    return np.clip(np.round(MINUTES_PER_HOUR * (1 - np.exp(-requests / MINUTES_PER_HOUR))), 1, MINUTES_PER_HOUR)


def _count_stats(requests: np.ndarray, divisor: np.ndarray | float = 1.0) -> list[dict[str, float]]:
    minutes = _active_minutes(requests)
    per_minute = requests / minutes
    full = minutes >= MINUTES_PER_HOUR
    minimum = np.where(full, np.maximum(1, np.floor(per_minute * 0.5)), 1)
    maximum = np.maximum(1, np.ceil(per_minute * 1.6))
    return [{"SampleCount": float(m), "Sum": float(n), "Minimum": float(lo), "Maximum": float(hi)}
            for m, n, lo, hi in zip(minutes, requests / divisor, minimum / divisor, maximum / divisor, strict=True)]


def _latency_stats(requests: np.ndarray, average_us: np.ndarray, spread: float = 2.5) -> list[dict[str, float]]:
    return _stats(requests, average_us, average_us * 0.4, average_us * spread)


def _variant_datums(
    spec: EndpointSpec, variant: VariantSpec, end: datetime, hours: int, rng: np.random.Generator, catalog: Catalog
) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    """What AWS would publish for this variant, hour by hour, ending at `end`."""
    if hours <= 0:
        return
    offsets = np.arange(hours)
    stamps = [end - timedelta(hours=int(hours - h)) + timedelta(minutes=30) for h in offsets]
    hod = np.array([s.hour for s in stamps])
    dims = [{"Name": "EndpointName", "Value": spec.name}, {"Name": "VariantName", "Value": variant.name}]
    counts = np.array([variant.count_at(h) for h in hod], dtype=np.int64)
    if spec.stranded_hours:
        counts[max(0, hours - spec.stranded_hours):] = 0
    if spec.kind == SERVERLESS:
        yield from _serverless_datums(variant, dims, stamps, hod, offsets, rng)
        return
    busy: np.ndarray | None = None
    traffic: list[tuple[str, list[dict[str, Any]]]] = []
    if spec.kind == ASYNC:
        busy, traffic = _async_datums(spec, variant, dims, stamps, hod, offsets, counts, rng)
    if variant.invocations_per_hour > 0:  # on an async spec, the check of what AWS publishes refuses it
        traffic += _realtime_datums(variant, dims, stamps, hod, offsets, counts, rng)
        if spec.enhanced_metrics:
            traffic += _instance_invocations(spec, variant, dims, stamps, traffic[-1][1])
    yield from _instance_datums(spec, variant, dims, stamps, offsets, counts, busy, rng, catalog)
    yield from traffic


def _instance_datums(spec: EndpointSpec, variant: VariantSpec, dims: list[dict[str, str]], stamps: list[datetime],
                     offsets: np.ndarray, counts: np.ndarray, busy: np.ndarray | None, rng: np.random.Generator,
                     catalog: Catalog) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    """Each running instance publishes once a minute: SampleCount = instances x 60; no instance, no datum.
    With enhanced metrics each instance also publishes its own CPU, memory and disk (InstanceId) and
    each of its GPUs its own GPU figures (AcceleratorId, 0-100 per device)."""
    shape = catalog.shape(variant.instance_type) if variant.instance_type else None
    gpus = shape.gpu_count if shape else 1
    # SageMaker sums CPU over vCPUs and GPU figures over GPUs: publish them that way.
    scale = {"CPUUtilization": shape.vcpu if shape else 1, "GPUUtilization": gpus, "GPUMemoryUtilization": gpus}
    running = counts > 0
    samples = counts[running] * MINUTES_PER_HOUR
    per_instance = spec.enhanced_metrics or variant.instance_cpu is not None
    if per_instance and variant.counts:
        raise ValueError(f"endpoint {spec.name!r}: per-instance series need a fixed instance count")
    if variant.instance_cpu is not None and len(variant.instance_cpu) != variant.count:
        raise ValueError(f"endpoint {spec.name!r}: instance_cpu needs one load per instance ({variant.count})")
    for devices in (variant.gpu_devices, variant.gpu_memory_devices):
        if devices is not None and len(devices) != gpus:
            raise ValueError(f"endpoint {spec.name!r}: one GPU load per GPU ({gpus}) of {variant.instance_type}")
    ids = [_instance_id(spec.name, variant.name, i) for i in range(variant.count)]
    instance_stamps = _pick(running, stamps)
    for metric, load, devices in (("CPUUtilization", variant.cpu, None), ("MemoryUtilization", variant.memory, None),
                                  ("DiskUtilization", variant.disk, None),
                                  ("GPUUtilization", variant.gpu, variant.gpu_devices),
                                  ("GPUMemoryUtilization", variant.gpu_memory, variant.gpu_memory_devices)):
        if load is None and devices is None:
            continue
        factor = scale.get(metric, 1)
        if devices is not None:
            # Per device, the same on every instance; the variant publishes the sum over devices.
            loads = [[d.hourly(offsets, rng) for d in devices] for _ in ids]
            average = np.mean([np.sum([a for a, _ in inst], axis=0) for inst in loads], axis=0)
            maximum = np.max([np.sum([m for _, m in inst], axis=0) for inst in loads], axis=0)
            if spec.enhanced_metrics:
                for instance, per_device in zip(ids, loads, strict=True):
                    for d, (a, m) in enumerate(per_device):
                        yield INSTANCE_NS, _series(metric, [*dims, {"Name": "InstanceId", "Value": instance},
                                                            {"Name": "AcceleratorId", "Value": f"GPU-{d}"}],
                                                   instance_stamps, _stats(np.full(a.size, MINUTES_PER_HOUR)[running],
                                                                           a[running], a[running] * 0.7, m[running]),
                                                   "Percent")
            yield INSTANCE_NS, _series(metric, dims, instance_stamps,
                                       _stats(samples, average[running], average[running] * 0.7, maximum[running]),
                                       "Percent")
            continue
        assert load is not None
        if isinstance(load, Busy):
            if busy is None:
                raise ValueError(f"endpoint {spec.name!r}: a Busy load follows an async queue; give a Load instead")
            average, maximum = load.hourly(busy, rng)
            instances = [(average, maximum)] * len(ids)
        elif metric == "CPUUtilization" and variant.instance_cpu is not None:
            instances = [each.hourly(offsets, rng) for each in variant.instance_cpu]
            average = np.mean([a for a, _ in instances], axis=0)
            maximum = np.max([m for _, m in instances], axis=0)
        else:
            average, maximum = load.hourly(offsets, rng)
            instances = [load.hourly(offsets, rng) for _ in ids] if spec.enhanced_metrics else []
        if metric == "CPUUtilization" and variant.quiet_cpu is not None:
            # Instances that idle while no request comes: the load is `cpu` only in traffic hours.
            quiet = ~_traffic_mask(variant, np.array([s.hour for s in stamps]), offsets, _weekdays(stamps))
            average = np.where(quiet, variant.quiet_cpu, average)
            maximum = np.where(quiet, variant.quiet_cpu * 1.2, maximum)
        if spec.enhanced_metrics and metric in ("CPUUtilization", "MemoryUtilization", "DiskUtilization"):
            for instance, (a, m) in zip(ids, instances, strict=True):
                yield INSTANCE_NS, _series(metric, [*dims, {"Name": "InstanceId", "Value": instance}], instance_stamps,
                                           _stats(np.full(a.size, MINUTES_PER_HOUR)[running], a[running] * factor,
                                                  a[running] * factor * 0.7, m[running] * factor), "Percent")
        average, maximum = average[running] * factor, maximum[running] * factor
        yield INSTANCE_NS, _series(metric, dims, instance_stamps,
                                   _stats(samples, average, average * 0.7, maximum), "Percent")


def _component_datums(component: ComponentSpec, end: datetime, hours: int, rng: np.random.Generator
                      ) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    """A component's own series, hour by hour to `end`: utilisation normalised to what its copies
    reserve (each copy publishes once a minute) and, in hours with requests, its invocations."""
    loads = (("CPUUtilizationNormalized", component.cpu), ("MemoryUtilizationNormalized", component.memory),
             ("GPUUtilizationNormalized", component.gpu))
    if hours <= 0 or (all(load is None for _, load in loads) and not component.invocations_per_hour):
        return  # nothing published: draws nothing from the fleet's random stream
    offsets = np.arange(hours)
    stamps = [end - timedelta(hours=int(hours - h)) + timedelta(minutes=30) for h in offsets]
    dims = [{"Name": "InferenceComponentName", "Value": component.name}]
    samples = np.full(hours, float(component.copies * MINUTES_PER_HOUR))
    for metric, load in loads:
        if load is not None:
            average, maximum = load.hourly(offsets, rng)
            yield COMPONENT_NS, _series(metric, dims, stamps, _stats(samples, average, average * 0.7, maximum),
                                        "Percent")
    if component.invocations_per_hour:
        hod = np.array([s.hour for s in stamps])
        swing = 1 + 0.4 * np.sin(2 * math.pi * (hod - 9) / 24)
        requests = rng.poisson(component.invocations_per_hour * swing).astype(np.int64)
        served = requests > 0
        n, at = requests[served], _pick(served, stamps)
        latency = np.clip(rng.normal(400_000, 40_000, n.size), 50_000, None)
        yield INVOCATION_NS, (
            _series("Invocations", dims, at, _count_stats(n), "None")
            + _series("InvocationsPerCopy", dims, at, _count_stats(n, float(component.copies)), "None")
            + _series("ModelLatency", dims, at, _latency_stats(n, latency), "Microseconds"))


def _instance_id(endpoint: str, variant: str, index: int) -> str:
    """A stable, made-up EC2 instance id for one instance of a variant."""
    digest = hashlib.sha256(f"{endpoint}/{variant}/{index}".encode()).hexdigest()
    return f"i-{digest[:17]}"


def _instance_invocations(spec: EndpointSpec, variant: VariantSpec, dims: list[dict[str, str]],
                          stamps: list[datetime], variant_datums: list[dict[str, Any]]
                          ) -> list[tuple[str, list[dict[str, Any]]]]:
    """Each instance's Invocations (InstanceId): the variant's requests of each hour split over its
    instances by `instance_traffic` (even when None); an instance with no request in an hour has no
    datapoint. A generator of its own, so the rest of the fleet's series stay as they were."""
    if variant.counts:
        raise ValueError(f"endpoint {spec.name!r}: per-instance series need a fixed instance count")
    weights = np.array(variant.instance_traffic or (1.0,) * variant.count, dtype="float64")
    if weights.size != variant.count or (weights < 0).any() or not weights.sum():
        raise ValueError(f"endpoint {spec.name!r}: instance_traffic needs one weight per instance ({variant.count})")
    seed = int(hashlib.sha256(f"{spec.name}/{variant.name}/requests".encode()).hexdigest()[:8], 16)
    rng = np.random.default_rng(seed)
    ids = [_instance_id(spec.name, variant.name, i) for i in range(variant.count)]
    hourly = [d for d in variant_datums if d["MetricName"] == "Invocations"]
    split = [rng.multinomial(int(d["StatisticValues"]["Sum"]), weights / weights.sum()) for d in hourly]
    out = []
    for i, instance in enumerate(ids):
        served = np.array([int(s[i]) for s in split], dtype=np.int64)
        at = [d["Timestamp"] for d, n in zip(hourly, served, strict=True) if n > 0]
        out.append((INVOCATION_NS, _series("Invocations", [*dims, {"Name": "InstanceId", "Value": instance}], at,
                                           _count_stats(served[served > 0]), "None")))
    return out


def _latency_us(variant: VariantSpec, offsets: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    hours = offsets.size
    latency_us = variant.latency_ms * 1000 * (1 + variant.latency_rise * offsets / max(1, hours - 1))
    return np.clip(latency_us + rng.normal(0, variant.latency_ms * 100, hours), 1_000, None)


def _realtime_datums(variant: VariantSpec, dims: list[dict[str, str]], stamps: list[datetime], hod: np.ndarray,
                     offsets: np.ndarray, counts: np.ndarray, rng: np.random.Generator
                     ) -> list[tuple[str, list[dict[str, Any]]]]:
    """Invocations (split over the instances running for InvocationsPerInstance) and latencies, only
    in hours with at least one request."""
    requests = _requests(_traffic_rate(variant, variant.invocations_per_hour, hod, offsets, _weekdays(stamps)),
                         False, rng)
    latency = _latency_us(variant, offsets, rng)
    served = (requests > 0) & (counts > 0)
    n, at = requests[served], _pick(served, stamps)
    return [(INVOCATION_NS,
             _series("Invocations", dims, at, _count_stats(n), "None")
             + _series("InvocationsPerInstance", dims, at, _count_stats(n, counts[served].astype(float)), "None")
             + _series("ModelLatency", dims, at, _latency_stats(n, latency[served]), "Microseconds")
             + _series("OverheadLatency", dims, at, _latency_stats(n, latency[served] / 20, 6.0), "Microseconds"))]


def _serverless_datums(variant: VariantSpec, dims: list[dict[str, str]], stamps: list[datetime], hod: np.ndarray,
                       offsets: np.ndarray, rng: np.random.Generator) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    """Memory, traffic, latencies, cold starts and concurrency; nothing in an hour without requests."""
    requests = _requests(_traffic_rate(variant, variant.invocations_per_hour, hod, offsets, _weekdays(stamps)),
                         False, rng)
    latency = _latency_us(variant, offsets, rng)
    served = requests > 0
    n, at, minutes = requests[served], _pick(served, stamps), _active_minutes(requests[served])
    for metric, load in (("CPUUtilization", variant.cpu), ("MemoryUtilization", variant.memory),
                         ("DiskUtilization", variant.disk), ("GPUUtilization", variant.gpu),
                         ("GPUMemoryUtilization", variant.gpu_memory)):
        if load is None:
            continue  # anything but memory is caught by the check of what AWS publishes
        if isinstance(load, Busy):
            raise ValueError("a Busy load follows an async queue; give a Load instead")
        average, maximum = load.hourly(offsets, rng)
        yield INSTANCE_NS, _series(metric, dims, at, _stats(minutes, average[served], average[served] * 0.8,
                                                            maximum[served]), "Percent")
    # A cold start on the first request after a silent hour, and now and then as concurrency grows.
    after_silence = np.concatenate(([True], requests[:-1] == 0))[served]
    cold = np.minimum(n, after_silence.astype(np.int64) + rng.poisson(np.minimum(3.0, n / 1500.0)))
    setup_us = variant.cold_start_ms * 1000 * rng.uniform(0.8, 1.2, cold.size)
    has_cold = cold > 0
    concurrency = n * latency[served] / 1e6 / 3600 / 5  # mean concurrent executions / MaxConcurrency (5)
    yield INVOCATION_NS, (
        _series("Invocations", dims, at, _count_stats(n), "None")
        + _series("ModelLatency", dims, at, _latency_stats(n, latency[served]), "Microseconds")
        + _series("OverheadLatency", dims, at, _latency_stats(n, latency[served] / 10, 4.0), "Microseconds")
        + _series("ModelSetupTime", dims, _pick(has_cold, at),
                  _latency_stats(cold[has_cold], setup_us[has_cold], 1.3), "Microseconds")
        + _series("ServerlessConcurrentExecutionsUtilization", dims, at,
                  _stats(minutes, np.clip(concurrency, 0, 1), np.zeros(n.size),
                         np.clip(concurrency * 4 + 0.2, 0, 1)), "None"))


def _async_datums(spec: EndpointSpec, variant: VariantSpec, dims: list[dict[str, str]], stamps: list[datetime],
                  hod: np.ndarray, offsets: np.ndarray, counts: np.ndarray, rng: np.random.Generator
                  ) -> tuple[np.ndarray, list[tuple[str, list[dict[str, Any]]]]]:
    """Simulate the queue hour by hour: capacity = instances x 3600 / processing seconds; processed
    = min(backlog + arrivals, capacity); the rest waits for the next hour. Returns how busy the
    instances were (processed / capacity) and the datums."""
    hours = offsets.size
    if variant.arrivals_by_hour is not None:
        rate = np.array([variant.arrivals_by_hour[h] for h in hod], dtype=float)
    else:
        rate = _traffic_rate(variant, variant.arrivals_per_hour, hod, offsets, _weekdays(stamps))
    if variant.late_arrivals:
        days, extra = variant.late_arrivals
        rate = rate + extra * (offsets >= hours - days * 24)
    arrivals = _requests(rate, variant.steady_arrivals, rng)
    if variant.spike_requests:
        arrivals[hours // 2] += variant.spike_requests
    capacity = np.floor(counts * 3600 / variant.processing_seconds).astype(np.int64)
    processed = np.zeros(hours, np.int64)
    backlog_start, backlog_end = np.zeros(hours), np.zeros(hours)
    backlog = int(variant.initial_backlog)
    for h in range(hours):
        backlog_start[h] = backlog
        processed[h] = min(backlog + int(arrivals[h]), int(capacity[h]))
        backlog = backlog + int(arrivals[h]) - int(processed[h])
        backlog_end[h] = backlog
    busy = np.where(capacity > 0, processed / np.maximum(capacity, 1), 0.0)
    # With no backlog carried over, requests still wait inside an hour when the instances are nearly
    # full (M/D/1: rho^2 / 2(1 - rho) waiting per instance).
    idle_queue = (backlog_start == 0) & (backlog_end == 0)
    transient = np.where(idle_queue, counts * np.minimum(busy**2 / (2 * np.maximum(1 - busy, 1e-6)), 2.0), 0.0)
    backlog_avg = (backlog_start + backlog_end) / 2 + transient
    backlog_max = np.maximum(backlog_start, backlog_end) + np.ceil(2 * transient)
    throughput = counts / variant.processing_seconds  # requests per second
    wait_s = np.where(counts > 0, backlog_avg / np.maximum(throughput, 1e-9), 0.0)
    age_avg = np.zeros(hours)
    for h in range(hours):  # the oldest request: backlog / throughput, or waiting on since capacity went
        if backlog_avg[h] <= 0:
            continue
        age_avg[h] = wait_s[h] if counts[h] > 0 else (age_avg[h - 1] if h else 0.0) + 3600.0
    without_capacity = ((backlog_end > 0) & (counts == 0)).astype(float)

    out: list[tuple[str, list[dict[str, Any]]]] = []
    done = processed > 0
    n, at = processed[done], _pick(done, stamps)
    model_us = variant.processing_seconds * 1e6 * rng.uniform(0.93, 1.07, hours)
    total_ms = wait_s * 1000 + model_us / 1000 + UPLOAD_MS
    out.append((INVOCATION_NS,
                _series("ModelLatency", dims, at, _latency_stats(n, model_us[done], 1.8), "Microseconds")
                + _series("TimeInBacklog", dims, at, _stats(n, wait_s[done] * 1000, np.zeros(n.size),
                                                            wait_s[done] * 2000 + 1), "Milliseconds")
                + _series("TotalProcessingTime", dims, at, _stats(n, total_ms[done], total_ms[done] * 0.5,
                                                                  total_ms[done] * 2), "Milliseconds")))
    # The queue is the endpoint's, published every minute whether or not anything waits.
    queue_dims = dims[:1]
    samples = np.full(hours, float(MINUTES_PER_HOUR))
    running = counts > 0
    per_instance = backlog_avg / np.maximum(counts, 1)
    out.append((INVOCATION_NS,
                _series("ApproximateBacklogSize", queue_dims, stamps,
                        _stats(samples, backlog_avg, np.minimum(backlog_start, backlog_end), backlog_max), "Count")
                + _series("ApproximateBacklogSizePerInstance", queue_dims, _pick(running, stamps),
                          _stats(samples[running], per_instance[running],
                                 np.minimum(backlog_start, backlog_end)[running] / counts[running],
                                 backlog_max[running] / counts[running]), "Count")
                + _series("ApproximateAgeOfOldestRequest", queue_dims, stamps,
                          _stats(samples, age_avg, age_avg * 0.5, age_avg * 1.5), "Seconds")
                + _series("HasBacklogWithoutCapacity", queue_dims, stamps,
                          _stats(samples, without_capacity, without_capacity, without_capacity), "Count")))
    return busy, out


# ---------- Training and batch transform jobs ----------

@dataclass(frozen=True)
class TrainingSpec:
    name: str
    instance_type: str
    count: int = 1
    seconds: int = 3600  # TrainingTimeInSeconds
    spot: bool = False
    billable_ratio: float = 1.0  # BillableTimeInSeconds / TrainingTimeInSeconds (Spot: below 1)
    checkpoint: bool = False
    max_wait_seconds: int | None = None
    hyperparameters: dict[str, str] = field(default_factory=dict)
    image: str = "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.3-gpu-py311"
    final_metrics: dict[str, float] = field(default_factory=dict)
    ended_hours_ago: float = 24.0
    cpu: Load | None = field(default_factory=lambda: Load(40, 0, 3))
    memory: Load | None = field(default_factory=lambda: Load(45, 0, 2))
    gpu: Load | None = None
    gpu_memory: Load | None = None


@dataclass(frozen=True)
class TransformSpec:
    name: str
    instance_type: str = "ml.m5.xlarge"
    count: int = 1
    seconds: int = 3600
    ended_hours_ago: float = 24.0
    cpu: Load | None = field(default_factory=lambda: Load(50, 0, 3))
    memory: Load | None = field(default_factory=lambda: Load(40, 0, 2))


def demo_experiment() -> list[TrainingSpec]:
    """The same training on a V100 and a T4, two batch sizes, two learning rates, some on Spot.
    The T4 is cheaper at batch size 128; at 256 the V100 finishes proportionally sooner and wins."""
    hours = {("ml.p3.2xlarge", "128"): 0.9, ("ml.g4dn.2xlarge", "128"): 3.2,
             ("ml.p3.2xlarge", "256"): 0.6, ("ml.g4dn.2xlarge", "256"): 2.8}
    specs: list[TrainingSpec] = []
    for (instance_type, batch), h in hours.items():
        for lr in ("0.01", "0.1"):
            spot = lr == "0.1" and instance_type == "ml.g4dn.2xlarge"
            short = "p3" if "p3" in instance_type else "g4dn"
            specs.append(TrainingSpec(
                f"resnet50-{short}-bs{batch}-lr{lr.replace('.', '')}", instance_type, seconds=int(h * 3600),
                spot=spot, billable_ratio=0.3 if spot else 1.0, checkpoint=spot,
                max_wait_seconds=int(h * 3600 * 2) if spot else None,
                hyperparameters={"batch_size": batch, "learning_rate": lr, "epochs": "30"},
                final_metrics={"validation:accuracy": 0.76 if lr == "0.01" else 0.71},
                ended_hours_ago=48 + len(specs) * 3,
                gpu=Load(85, 0, 3), gpu_memory=Load(70, 0, 2),
            ))
    return specs


def demo_jobs() -> tuple[list[TrainingSpec], list[TransformSpec]]:
    training = [
        *demo_experiment(),
        # Four V100s for a job that keeps less than one of them busy.
        TrainingSpec("churn-xgb-tuning-0412", "ml.p3.8xlarge", seconds=5400, cpu=Load(10, 0, 1), memory=Load(5, 0, 1),
                     gpu=Load(15, 0, 2), gpu_memory=Load(9, 0, 1), hyperparameters={"max_depth": "8"},
                     image="683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-xgboost:1.7-1",
                     ended_hours_ago=30),
    ]
    # A nightly batch scoring that runs three hours on one CPU-bound instance.
    transform = [
        TransformSpec(f"nightly-scoring-2026-11-{day:02d}", "ml.m5.xlarge", seconds=3 * 3600,
                      ended_hours_ago=24 * (13 - i) + 2, cpu=Load(92, 0, 2))
        for i, day in enumerate(range(16, 30))
    ]
    return training, transform


def seed_jobs(
    emulator: Emulator,
    training: Iterable[TrainingSpec],
    transform: Iterable[TransformSpec],
    now: datetime,
    region: str = "us-east-1",
    seed: int = 7,
    catalog: Catalog | None = None,
) -> None:
    """Create the jobs through the API, give them the times a real run has (the emulator finishes
    them at once with none), and publish their hosts' metrics at 1-minute resolution."""
    catalog = catalog or load_catalog()
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=region)
    sagemaker = session.client("sagemaker", endpoint_url=emulator.url)
    backend = emulator.backend("sagemaker", region)
    rng = np.random.default_rng(seed)
    datums: dict[str, list[dict[str, Any]]] = {"/aws/sagemaker/TrainingJobs": [], "/aws/sagemaker/TransformJobs": []}
    naive_now = now.astimezone(UTC).replace(tzinfo=None)  # the emulator keeps naive UTC times
    for spec in training:
        request: dict[str, Any] = {
            "TrainingJobName": spec.name,
            "AlgorithmSpecification": {"TrainingImage": spec.image, "TrainingInputMode": "File"},
            "RoleArn": "arn:aws:iam::123456789012:role/sagemaker-execution",
            "InputDataConfig": [{"ChannelName": "train", "DataSource": {"S3DataSource": {
                "S3DataType": "S3Prefix", "S3Uri": "s3://demo-bucket/train/"}}}],
            "OutputDataConfig": {"S3OutputPath": "s3://demo-bucket/output/"},
            "ResourceConfig": {"InstanceType": spec.instance_type, "InstanceCount": spec.count, "VolumeSizeInGB": 50},
            "StoppingCondition": {"MaxRuntimeInSeconds": 86400, **({"MaxWaitTimeInSeconds": spec.max_wait_seconds}
                                                                     if spec.max_wait_seconds else {})},
            "HyperParameters": spec.hyperparameters,
            "EnableManagedSpotTraining": spec.spot,
        }
        if spec.checkpoint:
            request["CheckpointConfig"] = {"S3Uri": f"s3://demo-bucket/checkpoints/{spec.name}/"}
        sagemaker.create_training_job(**request)
        job = backend.training_jobs[spec.name]
        end = naive_now - timedelta(hours=spec.ended_hours_ago)
        start = end - timedelta(seconds=spec.seconds)
        job.creation_time = start - timedelta(minutes=3)
        job.training_start_time, job.training_end_time, job.last_modified_time = start, end, end
        job.training_time_in_seconds = spec.seconds
        job.billable_time_in_seconds = int(spec.seconds * spec.billable_ratio)
        job.final_metric_data_list = [{"MetricName": k, "Value": v, "Timestamp": end}
                                      for k, v in spec.final_metrics.items()]
        shape = catalog.shape(spec.instance_type)
        for host in range(1, spec.count + 1):
            datums["/aws/sagemaker/TrainingJobs"] += _host_datums(
                f"{spec.name}/algo-{host}", start, spec.seconds, shape, rng,
                (("CPUUtilization", spec.cpu), ("MemoryUtilization", spec.memory),
                 ("GPUUtilization", spec.gpu), ("GPUMemoryUtilization", spec.gpu_memory)))
    for tspec in transform:
        model = f"{tspec.name}-model"
        sagemaker.create_model(ModelName=model,
                               PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/model:latest"},
                               ExecutionRoleArn="arn:aws:iam::123456789012:role/sagemaker-execution")
        sagemaker.create_transform_job(
            TransformJobName=tspec.name, ModelName=model,
            TransformInput={"DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://demo-bucket/in/"}}},
            TransformOutput={"S3OutputPath": "s3://demo-bucket/out/"},
            TransformResources={"InstanceType": tspec.instance_type, "InstanceCount": tspec.count},
        )
        job = backend.transform_jobs[tspec.name]
        job.tags = job.tags or []  # moto keeps None without Tags (ListTags then fails); AWS has an empty list
        end = naive_now - timedelta(hours=tspec.ended_hours_ago)
        start = end - timedelta(seconds=tspec.seconds)
        job.creation_time = start - timedelta(minutes=2)
        job.transform_start_time, job.transform_end_time, job.last_modified_time = start, end, end
        shape = catalog.shape(tspec.instance_type)
        for host in range(tspec.count):
            datums["/aws/sagemaker/TransformJobs"] += _host_datums(
                f"{tspec.name}/i-0{host:015x}", start, tspec.seconds, shape, rng,
                (("CPUUtilization", tspec.cpu), ("MemoryUtilization", tspec.memory)))
    for namespace, items in datums.items():
        emulator.publish_metrics(namespace, items, region)


def _host_datums(host: str, start: datetime, seconds: int, shape: Any, rng: np.random.Generator,
                 loads: tuple[tuple[str, Load | None], ...]) -> list[dict[str, Any]]:
    minutes = max(1, seconds // 60)
    offsets = np.arange(minutes)
    stamps = [(start + timedelta(minutes=int(m), seconds=30)).replace(tzinfo=UTC) for m in offsets]
    scale = {"CPUUtilization": shape.vcpu if shape else 1, "GPUUtilization": shape.gpu_count if shape else 1,
             "GPUMemoryUtilization": shape.gpu_count if shape else 1}
    out: list[dict[str, Any]] = []
    for metric, load in loads:
        if load is None:
            continue
        average, maximum = load.hourly(offsets, rng)  # one value a minute here
        factor = scale.get(metric, 1)
        out += [{"MetricName": metric, "Dimensions": [{"Name": "Host", "Value": host}], "Timestamp": ts,
                 "StatisticValues": {"SampleCount": 1, "Sum": float(a * factor), "Minimum": float(a * factor),
                                     "Maximum": float(m * factor)}, "Unit": "Percent"}
                for ts, a, m in zip(stamps, average, maximum, strict=True)]
    return out
