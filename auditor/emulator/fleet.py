"""Synthetic SageMaker fleets seeded into the emulator: the demo's, the tests' and the bench's.

Loads are given as the true utilisation (0-100%) and published the way SageMaker publishes them:
CPU summed over vCPUs, GPU summed over GPUs, so the auditor's normalisation is exercised for real.
Everything goes through the AWS API; only what the API cannot set (creation time, status) is
adjusted in the emulator's own state.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import numpy as np

from auditor.catalog import Catalog, load_catalog
from auditor.emulator.server import Emulator

INSTANCE_NS = "/aws/sagemaker/Endpoints"
INVOCATION_NS = "AWS/SageMaker"
SAMPLES_PER_HOUR = 60


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

    def hourly(self, hours: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        daily = np.sin(2 * math.pi * (hours % 24) / 24)
        growth = 1 + self.rise * hours / max(1, hours.size - 1)
        average = np.clip(self.mean * growth + self.swing * daily + rng.normal(0, self.noise, hours.size),
                          0.0, self.ceiling)
        if self.spike and hours.size:
            average[hours.size // 2] = min(self.ceiling, self.mean * self.spike)
        maximum = np.clip(average * (1 + rng.uniform(0, self.burst, hours.size)), 0.0, self.ceiling)
        return average, maximum


@dataclass(frozen=True)
class VariantSpec:
    instance_type: str | None = "ml.m5.xlarge"
    count: int = 1
    name: str = "AllTraffic"
    cpu: Load | None = field(default_factory=lambda: Load(60, 10))
    memory: Load | None = field(default_factory=lambda: Load(60, 2))
    disk: Load | None = field(default_factory=lambda: Load(20, 0))
    gpu: Load | None = None
    gpu_memory: Load | None = None
    invocations_per_hour: float = 5000.0
    serverless_memory_mb: int | None = None
    metric_days: float | None = None  # None: the whole window
    latency_ms: float = 20.0
    latency_rise: float = 0.0  # relative growth of ModelLatency over the window
    invocations_rise: float = 0.0
    autoscaling: tuple[int, int] | None = None  # (min, max): a target-tracking policy is registered


@dataclass(frozen=True)
class EndpointSpec:
    name: str
    variants: tuple[VariantSpec, ...] = (VariantSpec(),)
    kind: str = "real-time"  # real-time | async | serverless
    tags: dict[str, str] = field(default_factory=dict)
    age_days: float = 90.0
    status: str = "InService"
    delete_config: bool = False
    # Async queue: backlog per instance (the oldest request's age follows it, 45 s per request).
    backlog_per_instance: Load | None = None
    stranded_hours: int = 0  # hours at the end with HasBacklogWithoutCapacity = 1


def demo_fleet() -> list[EndpointSpec]:
    """Nineteen endpoints that exercise every rule, with busy ones that must not be flagged."""
    team = lambda owner, env="prod": {"owner": owner, "env": env}  # noqa: E731
    queue = lambda mean, **kw: Load(mean, ceiling=math.inf, **kw)  # noqa: E731
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
        # A flat, noisy queue with one burst: not a trend.
        EndpointSpec("doc-ocr-async", (VariantSpec("ml.m5.xlarge", 1, cpu=Load(81, 6), memory=Load(66, 2),
                                                   invocations_per_hour=0),),
                     kind="async", backlog_per_instance=queue(4, swing=2, noise=1, spike=12), tags=team("docs@example.com")),
        EndpointSpec("intent-classifier", (VariantSpec(None, 0, cpu=None, memory=Load(52, 3), disk=None,
                                                       serverless_memory_mb=1024, invocations_per_hour=900),),
                     kind="serverless", tags=team("support@example.com")),
        # Memory-optimised instance using 4% of its memory: moves across families.
        EndpointSpec("recsys-ranker", (VariantSpec("ml.r5.2xlarge", 1, cpu=Load(18, 5), memory=Load(4, 0.5)),),
                     tags=team("recsys@example.com")),
        # Four large instances where fewer, smaller ones hold the load.
        EndpointSpec("search-embeddings", (VariantSpec("ml.m5.4xlarge", 4, cpu=Load(7, 2), memory=Load(12, 1)),),
                     tags=team("search@example.com")),
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
        # A queue that keeps growing; a latency creep with flat traffic.
        EndpointSpec("video-transcode-async", (VariantSpec("ml.m5.xlarge", 2, cpu=Load(83, 5), memory=Load(60, 2),
                                                           invocations_per_hour=0),),
                     kind="async", backlog_per_instance=queue(3, swing=1, noise=0.5, rise=3.0),
                     tags=team("media@example.com")),
        EndpointSpec("checkout-ranker", (VariantSpec("ml.c5.2xlarge", 1, cpu=Load(62, 6), memory=Load(58, 2),
                                                     latency_ms=20, latency_rise=1.5),),
                     tags=team("checkout@example.com")),
        # Serverless with twice the memory it needs; sparse traffic on a dedicated instance.
        EndpointSpec("faq-bot", (VariantSpec(None, 0, cpu=None, memory=Load(18, 2), disk=None,
                                             serverless_memory_mb=2048, invocations_per_hour=3000, latency_ms=300),),
                     kind="serverless", tags=team("support@example.com")),
        EndpointSpec("internal-reports", (VariantSpec("ml.m5.large", 1, cpu=Load(3, 1), memory=Load(25, 1),
                                                      invocations_per_hour=20, latency_ms=200),),
                     tags=team("finance@example.com", "internal")),
        # Too young to judge, too little data to judge.
        EndpointSpec("new-model-canary", (VariantSpec("ml.m5.xlarge", 1, cpu=Load(3, 1), memory=Load(10, 1)),),
                     age_days=3, tags=team("ml-platform@example.com", "canary")),
        EndpointSpec("sentiment-v2", (VariantSpec("ml.c5.xlarge", 1, cpu=Load(4, 1), memory=Load(12, 1), metric_days=4),),
                     tags=team("nlp@example.com")),
        # Config deleted while the endpoint runs; and an endpoint that failed.
        EndpointSpec("orphaned-endpoint", (VariantSpec("ml.m5.large", 1),), delete_config=True,
                     tags=team("unknown")),
        EndpointSpec("broken-deploy", (VariantSpec("ml.m5.large", 1, cpu=None, memory=None, disk=None,
                                                   invocations_per_hour=0),),
                     status="Failed", tags={"owner": "<script>alert('x')</script>", "env": "dev"}),
    ]


def synthetic_fleet(count: int, seed: int = 7) -> list[EndpointSpec]:
    """`count` endpoints of mixed shapes and loads, for the benchmark."""
    rng = np.random.default_rng(seed)
    shapes = ["ml.m5.xlarge", "ml.m5.2xlarge", "ml.c5.xlarge", "ml.c5.2xlarge", "ml.r5.xlarge", "ml.g4dn.xlarge"]
    fleet = []
    for i in range(count):
        instance_type = shapes[i % len(shapes)]
        cpu, memory = float(rng.uniform(3, 85)), float(rng.uniform(3, 80))
        gpu = Load(float(rng.uniform(5, 90)), 5) if "g4dn" in instance_type else None
        gpu_memory = Load(float(rng.uniform(10, 80)), 2) if gpu else None
        fleet.append(EndpointSpec(
            f"bench-{i:04d}",
            (VariantSpec(instance_type, int(rng.integers(1, 4)), cpu=Load(cpu, cpu / 5), memory=Load(memory, 2),
                         gpu=gpu, gpu_memory=gpu_memory,
                         invocations_per_hour=0.0 if i % 17 == 0 else 1000.0),),
            tags={"owner": f"team-{i % 9}@example.com"},
        ))
    return fleet


def seed_fleet(
    emulator: Emulator,
    fleet: Iterable[EndpointSpec],
    now: datetime,
    lookback_days: int = 14,
    region: str = "us-east-1",
    seed: int = 42,
    catalog: Catalog | None = None,
) -> None:
    """Create the endpoints through the SageMaker API and publish their metrics to CloudWatch."""
    catalog = catalog or load_catalog()
    session = boto3.session.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name=region
    )
    sagemaker = session.client("sagemaker", endpoint_url=emulator.url)
    cloudwatch = session.client("cloudwatch", endpoint_url=emulator.url)
    autoscaling = session.client("application-autoscaling", endpoint_url=emulator.url)
    rng = np.random.default_rng(seed)
    end = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    datums: dict[str, list[dict[str, Any]]] = {INSTANCE_NS: [], INVOCATION_NS: []}
    for spec in fleet:
        _create_endpoint(sagemaker, spec)
        _adjust_state(emulator, spec, now, region)
        _register_autoscaling(autoscaling, spec)
        if spec.status != "InService" or spec.delete_config:
            continue
        window_hours = int(min(lookback_days, spec.age_days) * 24)
        for variant in spec.variants:
            hours = window_hours if variant.metric_days is None else int(variant.metric_days * 24)
            for namespace, items in _variant_datums(spec, variant, end, hours, rng, catalog):
                datums[namespace].extend(items)
        if spec.backlog_per_instance is not None:
            datums[INVOCATION_NS].extend(_queue_datums(spec, end, window_hours, rng))
    for namespace, items in datums.items():
        for i in range(0, len(items), 1000):  # PutMetricData takes 1,000 datums a call
            cloudwatch.put_metric_data(Namespace=namespace, MetricData=items[i : i + 1000])


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
        autoscaling.put_scaling_policy(
            PolicyName=f"{spec.name}-{v.name}-invocations", ServiceNamespace="sagemaker", ResourceId=resource_id,
            ScalableDimension=dimension, PolicyType="TargetTrackingScaling",
            TargetTrackingScalingPolicyConfiguration={
                "TargetValue": 300.0,
                "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"},
            },
        )


def _create_endpoint(sagemaker: Any, spec: EndpointSpec) -> None:
    model = f"{spec.name}-model"
    sagemaker.create_model(
        ModelName=model,
        PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/model:latest"},
        ExecutionRoleArn="arn:aws:iam::123456789012:role/sagemaker-execution",
    )
    variants = []
    for v in spec.variants:
        variant: dict[str, Any] = {"VariantName": v.name, "ModelName": model, "InitialVariantWeight": 1.0}
        if v.serverless_memory_mb:
            variant["ServerlessConfig"] = {"MemorySizeInMB": v.serverless_memory_mb, "MaxConcurrency": 5}
        else:
            variant.update(InstanceType=v.instance_type, InitialInstanceCount=v.count)
        variants.append(variant)
    config: dict[str, Any] = {"EndpointConfigName": f"{spec.name}-config", "ProductionVariants": variants}
    if spec.kind == "async":
        config["AsyncInferenceConfig"] = {"OutputConfig": {"S3OutputPath": f"s3://demo-bucket/{spec.name}/"}}
    sagemaker.create_endpoint_config(**config)
    tags = [{"Key": k, "Value": v} for k, v in spec.tags.items()]
    sagemaker.create_endpoint(EndpointName=spec.name, EndpointConfigName=f"{spec.name}-config", Tags=tags)
    if spec.delete_config:
        sagemaker.delete_endpoint_config(EndpointConfigName=f"{spec.name}-config")


def _adjust_state(emulator: Emulator, spec: EndpointSpec, now: datetime, region: str) -> None:
    """The emulator stamps endpoints InService and created now: set what the spec says."""
    endpoint = emulator.backend("sagemaker", region).endpoints[spec.name]
    endpoint.creation_time = now - timedelta(days=spec.age_days)
    endpoint.endpoint_status = spec.status
    if spec.status == "Failed":
        endpoint.failure_reason = "The primary container did not pass the ping health check."


def _statistic_values(average: np.ndarray, maximum: np.ndarray) -> list[dict[str, float]]:
    return [
        {"SampleCount": SAMPLES_PER_HOUR, "Sum": float(a) * SAMPLES_PER_HOUR, "Minimum": float(a) * 0.7,
         "Maximum": float(m)}
        for a, m in zip(average, maximum)
    ]


def _series(name: str, dims: list[dict[str, str]], stamps: list[datetime], stats: list[dict[str, float]], unit: str) -> list[dict[str, Any]]:
    return [
        {"MetricName": name, "Dimensions": dims, "Timestamp": ts, "StatisticValues": st, "Unit": unit}
        for ts, st in zip(stamps, stats)
    ]


def _variant_datums(
    spec: EndpointSpec, variant: VariantSpec, end: datetime, hours: int, rng: np.random.Generator, catalog: Catalog
) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    if hours <= 0:
        return
    offsets = np.arange(hours)
    stamps = [end - timedelta(hours=int(hours - h)) + timedelta(minutes=30) for h in offsets]
    dims = [{"Name": "EndpointName", "Value": spec.name}, {"Name": "VariantName", "Value": variant.name}]
    shape = catalog.shape(variant.instance_type) if variant.instance_type else None
    # SageMaker sums CPU over vCPUs and GPU figures over GPUs: publish them that way.
    scale = {
        "CPUUtilization": shape.vcpu if shape else 1,
        "GPUUtilization": shape.gpu_count if shape else 1,
        "GPUMemoryUtilization": shape.gpu_count if shape else 1,
    }
    for metric, load in (("CPUUtilization", variant.cpu), ("MemoryUtilization", variant.memory),
                         ("DiskUtilization", variant.disk), ("GPUUtilization", variant.gpu),
                         ("GPUMemoryUtilization", variant.gpu_memory)):
        if load is None:
            continue
        average, maximum = load.hourly(offsets, rng)
        factor = scale.get(metric, 1)
        yield INSTANCE_NS, _series(metric, dims, stamps, _statistic_values(average * factor, maximum * factor), "Percent")
    if variant.invocations_per_hour > 0:
        growth = 1 + variant.invocations_rise * offsets / max(1, hours - 1)
        per_hour = variant.invocations_per_hour * growth * (1 + 0.4 * np.sin(2 * math.pi * (offsets % 24) / 24))
        invocations = [{"SampleCount": SAMPLES_PER_HOUR, "Sum": float(n), "Minimum": 0.0,
                        "Maximum": float(n) / 30} for n in per_hour]
        latency_us = variant.latency_ms * 1000 * (1 + variant.latency_rise * offsets / max(1, hours - 1))
        latency_avg = np.clip(latency_us + rng.normal(0, variant.latency_ms * 100, hours), 1_000, None)
        latency = _statistic_values(latency_avg, latency_avg * 2.5)
        overhead = _statistic_values(latency_avg / 20, latency_avg / 8)
        yield INVOCATION_NS, (
            _series("Invocations", dims, stamps, invocations, "None")
            + _series("ModelLatency", dims, stamps, latency, "Microseconds")
            + _series("OverheadLatency", dims, stamps, overhead, "Microseconds")
        )
    elif spec.kind == "async" and variant.cpu is not None:
        # Async endpoints count processed requests through TotalProcessingTime.
        processed = [{"SampleCount": 120.0, "Sum": 120.0 * 900.0, "Minimum": 300.0, "Maximum": 2_400.0}
                     for _ in offsets]
        yield INVOCATION_NS, _series("TotalProcessingTime", dims, stamps, processed, "Milliseconds")


def _queue_datums(spec: EndpointSpec, end: datetime, hours: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    assert spec.backlog_per_instance is not None
    offsets = np.arange(hours)
    stamps = [end - timedelta(hours=int(hours - h)) + timedelta(minutes=30) for h in offsets]
    dims = [{"Name": "EndpointName", "Value": spec.name}]
    backlog_avg, backlog_max = spec.backlog_per_instance.hourly(offsets, rng)
    age = backlog_avg * 45.0
    stranded = (offsets >= hours - spec.stranded_hours).astype(float)
    return (
        _series("ApproximateBacklogSizePerInstance", dims, stamps, _statistic_values(backlog_avg, backlog_max), "Count")
        + _series("ApproximateAgeOfOldestRequest", dims, stamps, _statistic_values(age, age * 1.5), "Seconds")
        + _series("HasBacklogWithoutCapacity", dims, stamps, _statistic_values(stranded, stranded), "Count")
    )


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
    training = demo_experiment() + [
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
    cloudwatch = session.client("cloudwatch", endpoint_url=emulator.url)
    backend = emulator.backend("sagemaker", region)
    rng = np.random.default_rng(seed)
    datums: dict[str, list[dict[str, Any]]] = {"/aws/sagemaker/TrainingJobs": [], "/aws/sagemaker/TransformJobs": []}
    naive_now = now.astimezone(UTC).replace(tzinfo=None)  # the emulator keeps naive UTC times
    for spec in training:
        request: dict[str, Any] = dict(
            TrainingJobName=spec.name,
            AlgorithmSpecification={"TrainingImage": spec.image, "TrainingInputMode": "File"},
            RoleArn="arn:aws:iam::123456789012:role/sagemaker-execution",
            InputDataConfig=[{"ChannelName": "train", "DataSource": {"S3DataSource": {
                "S3DataType": "S3Prefix", "S3Uri": "s3://demo-bucket/train/"}}}],
            OutputDataConfig={"S3OutputPath": "s3://demo-bucket/output/"},
            ResourceConfig={"InstanceType": spec.instance_type, "InstanceCount": spec.count, "VolumeSizeInGB": 50},
            StoppingCondition={"MaxRuntimeInSeconds": 86400, **({"MaxWaitTimeInSeconds": spec.max_wait_seconds}
                                                                  if spec.max_wait_seconds else {})},
            HyperParameters=spec.hyperparameters,
            EnableManagedSpotTraining=spec.spot,
        )
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
        job.final_metric_data_list = [{"MetricName": k, "Value": v, "Timestamp": end} for k, v in spec.final_metrics.items()]
        shape = catalog.shape(spec.instance_type)
        for host in range(1, spec.count + 1):
            datums["/aws/sagemaker/TrainingJobs"] += _host_datums(
                f"{spec.name}/algo-{host}", start, spec.seconds, shape, rng,
                (("CPUUtilization", spec.cpu), ("MemoryUtilization", spec.memory),
                 ("GPUUtilization", spec.gpu), ("GPUMemoryUtilization", spec.gpu_memory)))
    for tspec in transform:
        model = f"{tspec.name}-model"
        sagemaker.create_model(ModelName=model, PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/model:latest"},
                               ExecutionRoleArn="arn:aws:iam::123456789012:role/sagemaker-execution")
        sagemaker.create_transform_job(
            TransformJobName=tspec.name, ModelName=model,
            TransformInput={"DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://demo-bucket/in/"}}},
            TransformOutput={"S3OutputPath": "s3://demo-bucket/out/"},
            TransformResources={"InstanceType": tspec.instance_type, "InstanceCount": tspec.count},
        )
        job = backend.transform_jobs[tspec.name]
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
        for i in range(0, len(items), 1000):
            cloudwatch.put_metric_data(Namespace=namespace, MetricData=items[i : i + 1000])


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
                for ts, a, m in zip(stamps, average, maximum)]
    return out
