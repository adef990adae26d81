"""Is an endpoint in use? What each kind of endpoint publishes that shows work being done.

Real-time and serverless endpoints count Invocations (and publish nothing at all in an hour
without traffic); an endpoint hosting inference components publishes them per component
(InferenceComponentName), never per variant. Async endpoints publish no Invocations: the requests they processed are
TotalProcessingTime's sample count, and requests waiting show in the queue metrics. For every
kind with instances, busy instances (CPU or GPU above a small ceiling) are work too, whatever
the request metrics say.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from auditor.kinds.endpoints.assessment import EndpointAssessment
from auditor.kinds.endpoints.models import EndpointKind
from auditor.models import Resource

# Endpoint-level series of an async endpoint that show requests waiting.
QUEUE_METRICS = ("ApproximateBacklogSize", "ApproximateBacklogSizePerInstance", "ApproximateAgeOfOldestRequest",
                 "HasBacklogWithoutCapacity")


@dataclass(frozen=True)
class Activity:
    requests: float | None  # invocations or processed requests over the window; None: no datapoint
    requests_metric: str  # the metric they were read from
    queue: dict[str, float]  # async: queue metric -> its largest value in the window (published ones only)
    busy: dict[str, float]  # "CPU" / "GPU" -> p95 of the per-period maxima, where above the idle ceiling

    @property
    def queue_waiting(self) -> bool:
        return any(value > 0 for value in self.queue.values())


def endpoint_activity(assessment: EndpointAssessment, idle_ceiling_percent: float) -> Activity:
    endpoint = assessment.endpoint
    is_async = endpoint.kind is EndpointKind.ASYNC
    counts = [va.utilization.invocations for va in assessment.variants if va.utilization is not None]
    known = [c for c in counts if c is not None]
    # An endpoint that hosts inference components publishes its requests per component only (the
    # variant publishes none for them): theirs are its requests.
    calls = assessment.component_calls.to_numpy(dtype="float64")
    if calls.size and not np.isnan(calls).all():
        known.append(float(np.nansum(calls)))
    busy: dict[str, float] = {}
    for va in assessment.variants:
        if va.utilization is None:
            continue
        for resource, label in ((Resource.CPU, "CPU"), (Resource.GPU, "GPU")):
            figures = va.utilization.get(resource)
            if figures is not None and figures.p95 > idle_ceiling_percent:
                busy[label] = max(busy.get(label, 0.0), figures.p95)
    queue: dict[str, float] = {}
    if is_async:
        for metric in QUEUE_METRICS:
            for stat in ("Maximum", "Average"):
                column = f"{metric}:{stat}"
                if column in assessment.queue.columns:
                    values = assessment.queue[column].to_numpy(dtype="float64")
                    values = values[~np.isnan(values)]
                    if values.size:
                        queue[metric] = max(queue.get(metric, 0.0), float(values.max()))
    return Activity(
        requests=sum(known) if known else None,
        requests_metric="TotalProcessingTime" if is_async else "Invocations",
        queue=queue,
        busy=busy,
    )
