"""What the rules read: each endpoint with its variants' shapes, costs, utilisation and series.

Built from the discovered models and the collected frames; pure (no AWS calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

import pandas as pd

from auditor.analyse.normalise import (
    normalise_accelerator_utilisation,
    normalise_component_utilisation,
    normalise_utilisation,
    summarise_utilisation,
)
from auditor.analyse.usage import compute_seconds_per_month
from auditor.catalog import HOURS_PER_MONTH, Catalog, InstanceShape
from auditor.collect.cloudwatch import CollectedMetrics, FrameKey
from auditor.config import AuditConfig
from auditor.kinds.endpoints.consolidation import CandidateLoad
from auditor.kinds.endpoints.enhanced import ACCELERATOR_PREFIX, INSTANCE_PREFIX
from auditor.kinds.endpoints.models import ComponentReport, Endpoint, InstanceUtilization, Variant, price_usage
from auditor.models import Resource, ResourceUtilization, VariantUtilization, Window

# A Failed endpoint runs no instances: it costs nothing, whatever its config says.
NOT_BILLED_STATUSES = frozenset({"Failed"})


@dataclass(frozen=True)
class VariantAssessment:
    variant: Variant
    shape: InstanceShape | None
    utilization: VariantUtilization | None
    monthly_cost_usd: float | None
    raw: pd.DataFrame = field(default_factory=pd.DataFrame)  # the collected series, as published
    normalised: pd.DataFrame = field(default_factory=pd.DataFrame)  # '<resource>:<stat>', 0-100%
    # Autoscaled variants: the instances that really ran, on average (None: the current count is used).
    average_instances: float | None = None
    price_basis: str | None = None  # whose rate the cost is at (see `price_usage`); None: not priced
    # Enhanced metrics: each instance's utilisation and per-GPU figures, and its normalised series.
    instances: tuple[InstanceUtilization, ...] = ()
    # instance id -> normalised utilisation, and the requests it served ('Invocations:Sum', real-time only)
    instance_series: dict[str, pd.DataFrame] = field(default_factory=dict)
    # What `utilization.sizing` and `.peak` were read from: the hottest instance, or the variant's series.
    sizing_basis: str | None = None
    # What a rule worked out from these series once, for the other rules that read it (instance-imbalance
    # holds back three rules' advice): rule id -> (the config it was worked out with, the result).
    derived: dict[str, tuple[object, object]] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class EndpointAssessment:
    endpoint: Endpoint
    variants: tuple[VariantAssessment, ...]
    age_days: float
    window: Window | None = None  # the part of the audit window measured on the endpoint's current shapes
    queue: pd.DataFrame = field(default_factory=pd.DataFrame)  # endpoint-level series (async)
    config: AuditConfig | None = None  # the config with this endpoint's tag overrides
    components: tuple[ComponentReport, ...] = ()  # inference components, with their utilisation
    # Inference components' requests per period ('Invocations:Sum' of each, by component name), as
    # published: a period without requests has no datapoint (NaN).
    component_calls: pd.DataFrame = field(default_factory=pd.DataFrame)
    # When the config it runs was created, where that cut the audit window short (None: it did not).
    shape_since: datetime | None = None


@dataclass(frozen=True)
class ShapeFrames:
    """An endpoint's collected frames over its shape window: the periods of the audit window that
    began once the endpoint config it runs existed. That config cannot have served before it was
    created, so an older config's instances (another type, another count) measured everything
    before: every frame the assessment reads comes through here, so no rule sees that data."""

    metrics: CollectedMetrics
    window: Window  # the shape window
    cut: bool  # whether it starts later than the audit window

    @classmethod
    def of(cls, endpoint: Endpoint, metrics: CollectedMetrics, window: Window) -> ShapeFrames:
        shaped = window.starting_at(endpoint.config_created_at)
        return cls(metrics, shaped, shaped.start > window.start)

    def frame(self, endpoint: str, variant: str | None, component: str | None = None) -> pd.DataFrame:
        frame = self.metrics.frame(endpoint, variant, component)
        if not self.cut or frame.empty:
            return frame
        return frame[frame.index >= pd.Timestamp(self.window.start)]


def assess_endpoint(
    endpoint: Endpoint,
    metrics: CollectedMetrics,
    catalog: Catalog,
    config: AuditConfig,
    window: Window,
    now: datetime,
) -> EndpointAssessment:
    """The endpoint judged over its shape window (`ShapeFrames`), never on an older shape's data."""
    frames = ShapeFrames.of(endpoint, metrics, window)
    window = frames.window
    variants = []
    owners = metrics.keys_of(endpoint.name) if endpoint.enhanced_metrics else set()
    for variant in endpoint.variants:
        shape = catalog.shape(variant.instance_type) if variant.instance_type else None
        billed = shape is not None and endpoint.status not in NOT_BILLED_STATUSES
        raw = frames.frame(endpoint.name, variant.name)
        average = average_instances(raw, window) if variant.scales else None
        usage = price_usage(endpoint)
        rate = catalog.rate(shape.instance_type, endpoint.region, usage) if shape and billed else None
        cost = None if rate is None else round(rate[0] * (average or variant.instance_count) * HOURS_PER_MONTH, 2)
        price_basis = None if rate is None else rate[1]
        utilization = None
        normalised = normalise_utilisation(raw, shape)
        if not endpoint.not_judged_reason:
            utilization = summarise_utilisation(
                normalised,
                raw,
                window.period_seconds,
                config.thresholds.sizing_statistic,
                config.recommend.peak_statistic,
            )
        if variant.serverless_memory_mb and utilization is not None:
            # Serverless bills compute time: estimate it from the traffic the window saw.
            seconds = compute_seconds_per_month(raw, utilization.invocations, window)
            price = catalog.serverless_price(variant.serverless_memory_mb, endpoint.region)
            cost = None if seconds is None or price is None else round(seconds * price, 2)
            price_basis = None if cost is None else "serverless"
        instances, instance_series = assess_instances(endpoint, variant, frames, shape, config, window, owners)
        basis = None
        if utilization is not None and not variant.serverless_memory_mb:
            utilization, basis = hottest_instance_sizing(utilization, instances)
        variants.append(VariantAssessment(variant, shape, utilization, cost, raw=raw, normalised=normalised,
                                          average_instances=average, price_basis=price_basis,
                                          instances=instances, instance_series=instance_series,
                                          sizing_basis=basis))
    return EndpointAssessment(
        endpoint,
        tuple(variants),
        (now - endpoint.created_at).total_seconds() / 86400,
        window=window,
        queue=frames.frame(endpoint.name, None),
        config=config,
        shape_since=endpoint.config_created_at if frames.cut else None,
    )



# Each instance publishes its instance metrics once a minute.
SAMPLES_PER_INSTANCE_MINUTE = 1


def average_instances(raw: pd.DataFrame, window: Window) -> float | None:
    """The mean instance count over the periods the variant ran: CPUUtilization's sample count is
    instances x minutes in each period, so it tells what autoscaling really ran."""
    if "CPUUtilization:SampleCount" not in raw.columns:
        return None
    samples = raw["CPUUtilization:SampleCount"].dropna()
    if samples.empty:
        return None
    # From the first period that ran to the window's end: a period without a sample ran no instance.
    first = max(pd.Timestamp(samples.index.min()), pd.Timestamp(window.start))
    minutes = max((pd.Timestamp(window.end) - first).total_seconds() / 60, window.period_seconds / 60)
    return round(float(samples.sum()) / SAMPLES_PER_INSTANCE_MINUTE / minutes, 3)


def assess_components(
    endpoint: Endpoint, metrics: CollectedMetrics, config: AuditConfig, window: Window
) -> tuple[ComponentReport, ...]:
    """Inference components publish normalised utilisation of their own: summarise it per component
    (over the endpoint's shape window, as its variants are)."""
    frames = ShapeFrames.of(endpoint, metrics, window)
    window = frames.window
    reports = []
    for component in endpoint.inference_components:
        raw = frames.frame(endpoint.name, component.variant, component.name)
        normalised = normalise_component_utilisation(raw)
        utilization = None if normalised.empty else summarise_utilisation(
            normalised, raw, window.period_seconds, config.thresholds.sizing_statistic, config.recommend.peak_statistic
        )
        reports.append(ComponentReport(component, utilization))
    return tuple(reports)


def component_invocations(endpoint: Endpoint, metrics: CollectedMetrics, window: Window) -> pd.DataFrame:
    """Each inference component's requests per period over the endpoint's shape window (a column
    per component; NaN where none was published)."""
    frames = ShapeFrames.of(endpoint, metrics, window)
    columns = {}
    for component in endpoint.inference_components:
        raw = frames.frame(endpoint.name, component.variant, component.name)
        if "Invocations:Sum" in raw.columns:
            columns[component.name] = raw["Invocations:Sum"]
    return pd.DataFrame(columns)


HOTTEST_INSTANCE, VARIANT_MEAN = "hottest instance", "variant mean"
INSTANCE_REQUESTS = "Invocations:Sum"  # an instance's requests in its series


def assess_instances(
    endpoint: Endpoint, variant: Variant, metrics: ShapeFrames, shape: InstanceShape | None,
    config: AuditConfig, window: Window, owners: set[FrameKey],
) -> tuple[tuple[InstanceUtilization, ...], dict[str, pd.DataFrame]]:
    """Each instance's utilisation from its InstanceId series: CPU summed over that instance's
    vCPUs and GPU over its GPUs, normalised as the variant's are; each accelerator's GPU figures
    (AcceleratorId) are one device's, already 0-100. An instance's requests (Invocations:Sum, with
    InstanceId) join its series as published: a period without requests has no datapoint."""
    mine = [key[2] for key in owners if key[1] == variant.name and key[2]]
    ids = sorted({o.removeprefix(INSTANCE_PREFIX) for o in mine if o.startswith(INSTANCE_PREFIX)}
                 | {o.removeprefix(ACCELERATOR_PREFIX).split("/", 1)[0] for o in mine
                    if o.startswith(ACCELERATOR_PREFIX)})
    stat, peak = config.thresholds.sizing_statistic, config.recommend.peak_statistic
    instances, series = [], {}
    for instance in ids:
        raw = metrics.frame(endpoint.name, variant.name, f"{INSTANCE_PREFIX}{instance}")
        normalised = normalise_utilisation(raw, shape)
        gpus: dict[str, ResourceUtilization] = {}
        memory: dict[str, ResourceUtilization] = {}
        prefix = f"{ACCELERATOR_PREFIX}{instance}/"
        for owner in sorted(o for o in mine if o.startswith(prefix)):
            device = normalise_accelerator_utilisation(metrics.frame(endpoint.name, variant.name, owner))
            summary = summarise_utilisation(device, device, window.period_seconds, stat, peak).by_resource
            accelerator = owner.removeprefix(prefix)
            if Resource.GPU in summary:
                gpus[accelerator] = summary[Resource.GPU]
            if Resource.GPU_MEMORY in summary:
                memory[accelerator] = summary[Resource.GPU_MEMORY]
        utilization = summarise_utilisation(normalised, raw, window.period_seconds, stat, peak)
        instances.append(InstanceUtilization(instance, utilization, gpus, memory))
        if INSTANCE_REQUESTS in raw.columns:
            normalised = normalised.join(raw[[INSTANCE_REQUESTS]], how="outer")
        series[instance] = normalised
    return tuple(instances), series


def hottest_instance_sizing(
    utilization: VariantUtilization, instances: tuple[InstanceUtilization, ...]
) -> tuple[VariantUtilization, str]:
    """Where each instance was measured, size from the hottest one: a variant's mean hides an instance
    at 90% among idle ones, and fewer instances would make that one worse. Each resource's sizing and
    peak figure becomes the highest any instance reached (never lower than the variant's own)."""
    measured = [i for i in instances if i.utilization.sizing]
    if not measured:
        return utilization, VARIANT_MEAN
    sizing, peak = dict(utilization.sizing), dict(utilization.peak)
    for resource in list(sizing):
        values = [i.utilization.sizing[resource] for i in measured if resource in i.utilization.sizing]
        if values:
            sizing[resource] = max(sizing[resource], *values)
    for resource in list(peak):
        values = [i.utilization.peak[resource] for i in measured if resource in i.utilization.peak]
        if values:
            peak[resource] = max(peak[resource], *values)
    return replace(utilization, sizing=sizing, peak=peak), HOTTEST_INSTANCE


@dataclass(frozen=True)
class EndpointFleet:
    """An account's endpoints in one region, as a whole (what fleet-wide notes read)."""

    account_id: str
    region: str
    endpoints: tuple[Endpoint, ...]
    # The single-model real-time endpoints consolidate-onto-components reads, with their hourly loads.
    candidates: tuple[CandidateLoad, ...] = ()

    @property
    def name(self) -> str:
        """What a fleet-wide finding is about (its region and account are fields of their own)."""
        return "all endpoints"
