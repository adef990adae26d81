"""The endpoints kind's CloudWatch series: which metrics each variant, async queue and inference
component is asked for (GetMetricData is billed per metric requested). Pure: no AWS here."""

from __future__ import annotations

from auditor.catalog import Catalog
from auditor.collect.plan import AVERAGE, MAXIMUM, SAMPLE_COUNT, SUM, MetricSpec, SeriesQuery
from auditor.kinds.endpoints.models import Endpoint, EndpointKind, Variant

INSTANCE_NAMESPACE = "/aws/sagemaker/Endpoints"
COMPONENT_NAMESPACE = "/aws/sagemaker/InferenceComponents"
INVOCATION_NAMESPACE = "AWS/SageMaker"


def _specs(namespace: str, metric: str, *stats: str) -> tuple[MetricSpec, ...]:
    return tuple(MetricSpec(namespace, metric, stat) for stat in stats)


CPU_MEMORY_DISK = (
    _specs(INSTANCE_NAMESPACE, "CPUUtilization", AVERAGE, MAXIMUM)
    + _specs(INSTANCE_NAMESPACE, "MemoryUtilization", AVERAGE, MAXIMUM)
    + _specs(INSTANCE_NAMESPACE, "DiskUtilization", AVERAGE, MAXIMUM)
)
INSTANCE_HOURS = _specs(INSTANCE_NAMESPACE, "CPUUtilization", SAMPLE_COUNT)
GPU = _specs(INSTANCE_NAMESPACE, "GPUUtilization", AVERAGE, MAXIMUM) + _specs(
    INSTANCE_NAMESPACE, "GPUMemoryUtilization", AVERAGE, MAXIMUM
)
TRAFFIC = (
    _specs(INVOCATION_NAMESPACE, "Invocations", SUM)
    + _specs(INVOCATION_NAMESPACE, "ModelLatency", AVERAGE, MAXIMUM)
    + _specs(INVOCATION_NAMESPACE, "OverheadLatency", AVERAGE, MAXIMUM)
)
# Async endpoints publish no Invocations (AWS's list of async metrics has none): the requests they
# processed are TotalProcessingTime's sample count.
ASYNC_TRAFFIC = _specs(INVOCATION_NAMESPACE, "TotalProcessingTime", SAMPLE_COUNT, AVERAGE) + _specs(
    INVOCATION_NAMESPACE, "ModelLatency", AVERAGE, MAXIMUM
)
# Queue metrics carry the EndpointName dimension only.
ASYNC_QUEUE = (
    _specs(INVOCATION_NAMESPACE, "ApproximateBacklogSize", AVERAGE, MAXIMUM)
    + _specs(INVOCATION_NAMESPACE, "ApproximateBacklogSizePerInstance", AVERAGE, MAXIMUM)
    + _specs(INVOCATION_NAMESPACE, "ApproximateAgeOfOldestRequest", AVERAGE, MAXIMUM)
    + _specs(INVOCATION_NAMESPACE, "HasBacklogWithoutCapacity", MAXIMUM)
)
SERVERLESS = _specs(INSTANCE_NAMESPACE, "MemoryUtilization", AVERAGE, MAXIMUM) + TRAFFIC
# Inference components publish utilisation already normalised to 0-100, per component, and their
# requests in AWS/SageMaker (InferenceComponentName; the variant publishes none for them): the hours
# without any (component-scale-to-zero).
COMPONENT = (
    _specs(COMPONENT_NAMESPACE, "CPUUtilizationNormalized", AVERAGE, MAXIMUM)
    + _specs(COMPONENT_NAMESPACE, "MemoryUtilizationNormalized", AVERAGE, MAXIMUM)
    + _specs(COMPONENT_NAMESPACE, "GPUUtilizationNormalized", AVERAGE, MAXIMUM)
    + _specs(INVOCATION_NAMESPACE, "Invocations", SUM)
)


def variant_specs(endpoint: Endpoint, variant: Variant, catalog: Catalog) -> tuple[MetricSpec, ...]:
    if endpoint.kind is EndpointKind.SERVERLESS:
        return SERVERLESS
    shape = catalog.shape(variant.instance_type) if variant.instance_type else None
    # GPU series only where there is a GPU: GetMetricData is billed per metric requested.
    gpu = GPU if shape is None or shape.has_accelerator else ()
    traffic = ASYNC_TRAFFIC if endpoint.kind is EndpointKind.ASYNC else TRAFFIC
    # An autoscaled (or managed-scaling) variant's count moves: CPU's sample count (one per instance a minute) tells
    # the instance-hours it really ran.
    hours = INSTANCE_HOURS if variant.scales else ()
    return CPU_MEMORY_DISK + hours + gpu + traffic


def plan_queries(endpoints: list[Endpoint] | tuple[Endpoint, ...], catalog: Catalog) -> list[SeriesQuery]:
    """Every series the analysis needs, for the endpoints that can be judged."""
    queries: list[SeriesQuery] = []
    for endpoint in endpoints:
        if endpoint.not_judged_reason or (endpoint.skipped_reason and not endpoint.skipped_rules):
            continue
        for variant in endpoint.variants:
            queries.extend(SeriesQuery(endpoint.name, variant.name, s)
                           for s in variant_specs(endpoint, variant, catalog))
        if endpoint.kind is EndpointKind.ASYNC:
            queries.extend(SeriesQuery(endpoint.name, None, s) for s in ASYNC_QUEUE)
        for component in endpoint.inference_components:
            queries.extend(SeriesQuery(endpoint.name, component.variant, s, component.name) for s in COMPONENT)
    return queries
