"""Turn raw CloudWatch series into 0-100% utilisation per resource, and summarise them.

SageMaker publishes CPUUtilization summed over vCPUs (0-400% on 4 vCPUs) and GPU figures summed
over GPUs; a raw 160% CPU on an 8-vCPU instance is 20% busy. Every rule reads normalised figures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.catalog import InstanceShape
from auditor.models import Resource, ResourceUtilization, VariantUtilization

# Raw metric name for each resource, and what its raw value is summed over.
_RAW_METRIC = {
    Resource.CPU: "CPUUtilization",
    Resource.MEMORY: "MemoryUtilization",
    Resource.DISK: "DiskUtilization",
    Resource.GPU: "GPUUtilization",
    Resource.GPU_MEMORY: "GPUMemoryUtilization",
}
STATS = ("Average", "Maximum")


def divisor_for(resource: Resource, shape: InstanceShape | None) -> float:
    if resource is Resource.CPU:
        return float(shape.vcpu) if shape else 1.0
    if resource in (Resource.GPU, Resource.GPU_MEMORY):
        if shape and not shape.accelerators_known:
            return float("nan")  # a sum over an unknown number of GPUs: unknown, never guessed
        return float(shape.gpu_count) if shape and shape.gpu_count else 1.0
    return 1.0


def normalise_utilisation(raw: pd.DataFrame, shape: InstanceShape | None) -> pd.DataFrame:
    """Columns '<resource>:<Average|Maximum>' in percent, 0-100.

    CPU is divided by vCPUs and GPU / GPU memory by the GPU count; memory and disk are already
    0-100. Values are clipped to 0-100 (a container may briefly report above its share). Missing
    periods stay missing (NaN): they are never read as zero.
    """
    sources, names, divisors = [], [], []
    for resource, metric in _RAW_METRIC.items():
        for stat in STATS:
            column = f"{metric}:{stat}"
            if column in raw.columns:
                sources.append(column)
                names.append(f"{resource.value}:{stat}")
                divisors.append(divisor_for(resource, shape))
    if not sources:
        return pd.DataFrame(index=raw.index)
    # One array operation for the whole frame: this runs for every variant of every endpoint.
    values = np.clip(raw[sources].to_numpy(dtype="float64") / np.array(divisors), 0.0, 100.0)
    return pd.DataFrame(values, index=raw.index, columns=names)


def normalise_component_utilisation(raw: pd.DataFrame) -> pd.DataFrame:
    """Inference components publish CPU/memory/GPU already normalised to 0-100: rename only."""
    names = {
        f"{metric}Normalized:{stat}": f"{resource.value}:{stat}"
        for resource, metric in _RAW_METRIC.items()
        for stat in STATS
    }
    present = {k: v for k, v in names.items() if k in raw.columns}
    return raw[list(present)].rename(columns=present).clip(0.0, 100.0) if present else pd.DataFrame(index=raw.index)


def normalise_accelerator_utilisation(raw: pd.DataFrame) -> pd.DataFrame:
    """One accelerator's GPUUtilization / GPUMemoryUtilization (AcceleratorId): one device, 0-100."""
    names = {f"{_RAW_METRIC[r]}:{stat}": f"{r.value}:{stat}" for r in (Resource.GPU, Resource.GPU_MEMORY)
             for stat in STATS}
    present = {k: v for k, v in names.items() if k in raw.columns}
    if not present:
        return pd.DataFrame(index=raw.index)
    # One array operation, as normalise_utilisation: this runs for every GPU of every instance measured.
    values = np.clip(raw[list(present)].to_numpy(dtype="float64"), 0.0, 100.0)
    return pd.DataFrame(values, index=raw.index, columns=list(present.values()))


def statistic(values: np.ndarray, name: str) -> float:
    """'max', 'avg' or a percentile 'pNN' of the values (linear interpolation)."""
    if name == "max":
        return float(values.max())
    if name == "avg":
        return float(values.mean())
    return float(np.percentile(values, float(name[1:])))


def _column_values(normalised: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each column's values without the missing periods."""
    array = normalised.to_numpy(dtype="float64")
    out = {}
    for i, column in enumerate(normalised.columns):
        values = array[:, i]
        out[column] = values[~np.isnan(values)]
    return out


def _resource_stat(columns: dict[str, np.ndarray], resource: Resource, name: str) -> float | None:
    # 'avg' reads the per-period averages; the percentiles and max read the per-period maxima,
    # falling back to the other statistic where only one was published.
    preferred, other = ("Average", "Maximum") if name == "avg" else ("Maximum", "Average")
    for stat in (preferred, other):
        values = columns.get(f"{resource.value}:{stat}")
        if values is not None and values.size:
            return statistic(values, name)
    return None


def summarise_utilisation(
    normalised: pd.DataFrame,
    raw: pd.DataFrame,
    period_seconds: int,
    sizing_statistic: str,
    peak_statistic: str,
) -> VariantUtilization:
    columns = _column_values(normalised)
    by_resource: dict[Resource, ResourceUtilization] = {}
    sizing: dict[Resource, float] = {}
    peak: dict[Resource, float] = {}
    for resource in Resource:
        avg = _resource_stat(columns, resource, "avg")
        if avg is None:
            continue
        by_resource[resource] = ResourceUtilization(
            avg=round(avg, 2),
            p95=round(_resource_stat(columns, resource, "p95") or 0.0, 2),
            max=round(_resource_stat(columns, resource, "max") or 0.0, 2),
        )
        sizing[resource] = _resource_stat(columns, resource, sizing_statistic) or 0.0
        peak[resource] = _resource_stat(columns, resource, peak_statistic) or 0.0
    return VariantUtilization(
        by_resource=by_resource,
        instance_metric_days=instance_metric_days(columns, period_seconds),
        invocations=request_count(raw),
        sizing=sizing,
        peak=peak,
    )


def instance_metric_days(columns: dict[str, np.ndarray], period_seconds: int) -> float:
    """Days actually covered by instance metrics (CPU, or memory where there is no CPU: serverless)."""
    for column in ("cpu:Maximum", "cpu:Average", "memory:Maximum", "memory:Average"):
        if column in columns:
            return round(columns[column].size * period_seconds / 86400, 2)
    return 0.0


def request_count(raw: pd.DataFrame) -> float | None:
    """Requests over the window; None when no series had a single datapoint.

    No traffic usually means no datapoints at all, so None and 0 both read as idle.
    Async endpoints may publish no Invocations: their processed requests are then counted by
    TotalProcessingTime's sample count.
    """
    totals = []
    for column in ("Invocations:Sum", "TotalProcessingTime:SampleCount"):
        if column in raw.columns:
            values = raw[column].to_numpy(dtype="float64")
            values = values[~np.isnan(values)]
            if values.size:
                totals.append(float(values.sum()))
    return max(totals) if totals else None
