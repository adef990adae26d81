"""What AWS publishes to CloudWatch for each kind of SageMaker endpoint, as data.

From /work/shared/reference/sagemaker-cloudwatch-facts.md and the SageMaker developer guide
(monitoring-cloudwatch, async-inference-monitor, serverless-endpoints-monitoring). The emulator
accepts any metric for any endpoint; a real account does not. `seed_fleet` checks every datum it
is about to publish against this table, so no fixture can show a rule data it never sees on AWS.

A shadow variant of a real-time endpoint publishes what a production variant does (Invocations,
InvocationsPerInstance, ModelLatency, the error counts, CPU, memory and disk) under its own
VariantName, for the copies of live traffic it is sent (the SageMaker guide's "Monitor a shadow test").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

INSTANCE_NS = "/aws/sagemaker/Endpoints"
INVOCATION_NS = "AWS/SageMaker"

REAL_TIME, ASYNC, SERVERLESS = "real-time", "async", "serverless"
KINDS = (REAL_TIME, ASYNC, SERVERLESS)

VARIANT_DIMS = ("EndpointName", "VariantName")
ENDPOINT_DIMS = ("EndpointName",)  # the async queue metrics

_VARIANT_INSTANCE = (INSTANCE_NS, VARIANT_DIMS)
_VARIANT = (INVOCATION_NS, VARIANT_DIMS)
_ENDPOINT = (INVOCATION_NS, ENDPOINT_DIMS)
_INSTANCE_METRICS = ("CPUUtilization", "MemoryUtilization", "DiskUtilization", "GPUUtilization",
                     "GPUMemoryUtilization")
_ERROR_METRICS = ("Invocation4XXErrors", "Invocation5XXErrors", "InvocationModelErrors")

# kind -> metric -> (namespace, dimension names in the order SageMaker puts them)
PUBLISHED: Mapping[str, Mapping[str, tuple[str, tuple[str, ...]]]] = {
    REAL_TIME: {
        **dict.fromkeys(_INSTANCE_METRICS, _VARIANT_INSTANCE),
        **dict.fromkeys(("Invocations", "InvocationsPerInstance", "ModelLatency", "OverheadLatency"), _VARIANT),
        **dict.fromkeys(_ERROR_METRICS, _VARIANT),
    },
    # No Invocations, InvocationsPerInstance nor OverheadLatency: requests are counted by
    # TotalProcessingTime's SampleCount; the queue is published per endpoint.
    ASYNC: {
        **dict.fromkeys(_INSTANCE_METRICS, _VARIANT_INSTANCE),
        **dict.fromkeys(("ModelLatency", "TimeInBacklog", "TotalProcessingTime"), _VARIANT),
        **dict.fromkeys(_ERROR_METRICS, _VARIANT),
        **dict.fromkeys(("ApproximateBacklogSize", "ApproximateBacklogSizePerInstance",
                         "ApproximateAgeOfOldestRequest", "HasBacklogWithoutCapacity"), _ENDPOINT),
    },
    # No CPU, disk or GPU: there are no instances of the account's to measure.
    SERVERLESS: {
        "MemoryUtilization": _VARIANT_INSTANCE,
        **dict.fromkeys(("Invocations", "ModelLatency", "OverheadLatency", "ModelSetupTime",
                         "ServerlessConcurrentExecutionsUtilization"), _VARIANT),
        **dict.fromkeys(_ERROR_METRICS, _VARIANT),
    },
}

# With MetricsConfig.EnableEnhancedMetrics (2026), besides the series above: utilisation per
# instance (InstanceId) and GPU figures per device (AcceleratorId), in the same namespace (the
# SageMaker guide's "enhanced metrics for inference endpoints"), and the invocation metrics per
# instance (EndpointName, VariantName, InstanceId in AWS/SageMaker: the guide's "metric name mapping"
# lists Invocations, InvocationsPerInstance, the error counts and both latencies so). Async endpoints
# publish no Invocations at all; the guide lists no per-instance invocation series for them.
INSTANCE_DIMS = ("EndpointName", "VariantName", "InstanceId")
ACCELERATOR_DIMS = ("EndpointName", "VariantName", "InstanceId", "AcceleratorId")
_ENHANCED_INSTANCE = {
    **dict.fromkeys(("CPUUtilization", "MemoryUtilization", "DiskUtilization"),
                    frozenset({(INSTANCE_NS, INSTANCE_DIMS)})),
    **dict.fromkeys(("GPUUtilization", "GPUMemoryUtilization"), frozenset({(INSTANCE_NS, ACCELERATOR_DIMS)})),
}
_ENHANCED_INVOCATIONS = dict.fromkeys(
    ("Invocations", "InvocationsPerInstance", "ModelLatency", "OverheadLatency", *_ERROR_METRICS),
    frozenset({(INVOCATION_NS, INSTANCE_DIMS)}))
ENHANCED: Mapping[str, Mapping[str, frozenset[tuple[str, tuple[str, ...]]]]] = {
    REAL_TIME: {**_ENHANCED_INSTANCE, **_ENHANCED_INVOCATIONS},
    ASYNC: _ENHANCED_INSTANCE,
    SERVERLESS: {},  # no instances of the account's
}

# Inference components (endpoints whose variants name no model) publish, besides their endpoint's
# instance series, their own per InferenceComponentName (the SageMaker guide's "Inference component
# metrics"): utilisation normalised to what the copies reserve, and their requests.
COMPONENT_NS = "/aws/sagemaker/InferenceComponents"
COMPONENT_DIMS = ("InferenceComponentName",)
COMPONENT: Mapping[str, tuple[str, tuple[str, ...]]] = {
    **dict.fromkeys(("CPUUtilizationNormalized", "MemoryUtilizationNormalized", "GPUUtilizationNormalized",
                     "GPUMemoryUtilizationNormalized"), (COMPONENT_NS, COMPONENT_DIMS)),
    **dict.fromkeys(("Invocations", "InvocationsPerCopy", "ModelLatency", "OverheadLatency", *_ERROR_METRICS),
                    (INVOCATION_NS, COMPONENT_DIMS)),
}

# Published only while requests are served: an hour without traffic has no datapoint, not a zero.
TRAFFIC_METRICS = frozenset({"Invocations", "InvocationsPerInstance", "ModelLatency", "OverheadLatency",
                             "ModelSetupTime", "ServerlessConcurrentExecutionsUtilization", "TimeInBacklog",
                             "TotalProcessingTime"})


class UnpublishedMetricError(ValueError):
    """A fixture would publish a datum that AWS does not publish for that kind of endpoint."""


def check_datum(endpoint: str, kind: str, namespace: str, datum: Mapping[str, Any], enhanced: bool = False) -> None:
    """Raise UnpublishedMetricError unless AWS publishes this datum for an endpoint of `kind`
    (`enhanced`: whose config enables enhanced metrics)."""
    metric = datum["MetricName"]
    where = f"endpoint {endpoint!r} ({kind})"
    if kind not in PUBLISHED:
        raise UnpublishedMetricError(f"{where}: unknown endpoint kind; expected one of {', '.join(KINDS)}")
    dims = tuple(d["Name"] for d in datum.get("Dimensions", ()))
    if enhanced and (namespace, dims) in ENHANCED[kind].get(metric, frozenset()):
        return
    if "InstanceId" in dims and not enhanced:
        raise UnpublishedMetricError(f"{where} would publish {metric} per instance (InstanceId), which AWS publishes "
                                     "only when the endpoint config enables enhanced metrics")
    expected = PUBLISHED[kind].get(metric)
    if expected is None:
        raise UnpublishedMetricError(
            f"{where} would publish {namespace} {metric}, which AWS does not publish for {kind} endpoints")
    expected_ns, expected_dims = expected
    if namespace != expected_ns or dims != expected_dims:
        raise UnpublishedMetricError(
            f"{where} would publish {metric} in {namespace} with dimensions {list(dims)}; AWS publishes it in "
            f"{expected_ns} with {list(expected_dims)}")
    values = datum.get("StatisticValues")
    if values is not None:
        if values["SampleCount"] <= 0:
            raise UnpublishedMetricError(f"{where} would publish {metric} with SampleCount 0: CloudWatch has no such "
                                         "datapoint")
        if metric in TRAFFIC_METRICS and metric.startswith("Invocations") and values["Sum"] <= 0:
            raise UnpublishedMetricError(
                f"{where} would publish a zero {metric} datapoint: an hour without traffic has no datapoint at all")


def check_component_datum(endpoint: str, kind: str, namespace: str, datum: Mapping[str, Any]) -> None:
    """Raise UnpublishedMetricError unless an inference component of a real-time endpoint publishes it."""
    metric = datum["MetricName"]
    where = f"inference component of endpoint {endpoint!r} ({kind})"
    if kind != REAL_TIME:
        raise UnpublishedMetricError(f"{where}: only real-time endpoints host inference components")
    dims = tuple(d["Name"] for d in datum.get("Dimensions", ()))
    if COMPONENT.get(metric) != (namespace, dims):
        raise UnpublishedMetricError(f"{where} would publish {namespace} {metric} with dimensions {list(dims)}, "
                                     "which AWS does not publish for inference components")
    values = datum.get("StatisticValues")
    if values is not None and metric.startswith("Invocations") and values["Sum"] <= 0:
        raise UnpublishedMetricError(f"{where} would publish a zero {metric} datapoint")


def check_datums(endpoint: str, kind: str, namespace: str, datums: list[dict[str, Any]],
                 enhanced: bool = False) -> None:
    for datum in datums:
        check_datum(endpoint, kind, namespace, datum, enhanced)


# With MetricsConfig.EnableDetailedObservability: OpenTelemetry metrics, sent to CloudWatch over OTLP and
# read with PromQL, not GetMetricData (the SageMaker guide's "OpenTelemetry metrics reference",
# inference-monitoring). The labels are the ones it documents; the emulator publishes the two series
# the audit reads: each instance's node exporter memory total (one series per running instance) and
# each GPU's DCGM utilisation, attributed to the inference component that uses it (no component
# label on a GPU no copy uses). The dashboard's placement figures (EmptyInstanceCount, IC copies per
# instance) are derived views that AWS says are not queryable metric names: never published here.
OTEL_LABELS = frozenset({"aws.sagemaker.endpoint.name", "aws.sagemaker.variant.name",
                         "aws.sagemaker.inference_component.name", "@resource.host.id", "aws.sagemaker.container.id",
                         "@resource.cloud.availability_zone", "@resource.host.type"})
OTEL: Mapping[str, tuple[frozenset[str], frozenset[str]]] = {  # metric -> (labels required, labels allowed)
    "node_memory_MemTotal_bytes": (frozenset({"aws.sagemaker.endpoint.name", "@resource.host.id"}),
                                   OTEL_LABELS - {"aws.sagemaker.inference_component.name",
                                                  "aws.sagemaker.container.id"}),
    "DCGM_FI_DEV_GPU_UTIL": (frozenset({"aws.sagemaker.endpoint.name", "@resource.host.id"}), OTEL_LABELS),
}
NOT_QUERYABLE = frozenset({"EmptyInstanceCount", "ICCopiesPerInstance", "ICListPerInstance", "InstancesPerAZ",
                           "ICCopyCountPerAZ"})


def check_otel_series(metric: str, labels: Mapping[str, str]) -> None:
    """Raise UnpublishedMetricError unless detailed observability publishes `metric` with `labels`."""
    if metric in NOT_QUERYABLE:
        raise UnpublishedMetricError(f"{metric} is a SageMaker AI Insights dashboard figure, not a queryable metric")
    if metric not in OTEL:
        raise UnpublishedMetricError(f"the emulator publishes no OpenTelemetry metric {metric!r}")
    required, allowed = OTEL[metric]
    missing, extra = required - set(labels), set(labels) - allowed
    if missing or extra:
        raise UnpublishedMetricError(f"{metric} with labels {sorted(labels)}: missing {sorted(missing)}, "
                                     f"not published {sorted(extra)}")
