"""The risk of a plan: every period of the window replayed on the proposed shape (docs/plans.md).

The replay reads the variant's normalised per-period maxima (the busiest instance, 0-100%) and
projects them onto the proposed shape and count with the same model the sizing uses
(recommend/demand.py):
- CPU and GPU compute are divisible load: value x (capacity x count now) / (capacity x count then);
- memory and accelerator memory are needed on every instance: value x per-instance now / then.
An autoscaled variant's current count is the average it ran (what its cost rests on); a proposed
scaling policy is replayed at its MaxCapacity (what target tracking runs under the peak), so the
replay assumes the policy scales out in time: such plans are at least medium risk.

What a replay cannot predict is marked load-test first: another accelerator (CPU <-> GPU, a GPU
generation, Inferentia), another architecture (Graviton), a per-instance memory peak within 20% of
the new instance's memory, a ModelLatency that may near the latency objective. Pure: no AWS here.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from auditor.catalog import InstanceShape
from auditor.config import RecommendConfig
from auditor.models import ApiCall, PlanOption, Resource, ResourceReplay, Risk, RiskLevel

# A projected per-instance memory peak at or above this share of the new instance's memory: a
# replay cannot say the model and its working set still fit (the 20% margin of the brief).
MEMORY_MARGIN_PERCENT = 80.0
# ModelLatency's window maximum at or above this share of the objective: its p99 may be near it.
LATENCY_MARGIN = 0.8
# Low risk: the projected peak stays at or below this, and never over the target in any period.
LOW_PEAK_PERCENT = 90.0
# Medium risk at most: the projection is over the target for no more than this share of the hours.
MEDIUM_HOURS_OVER_TARGET = 0.05

SHAPE_ACTIONS = ("resize", "scale-out", "resize+autoscale", "autoscale")
_REPLAYED = (Resource.CPU, Resource.MEMORY, Resource.GPU, Resource.GPU_MEMORY)


def replay(series: pd.DataFrame, period_seconds: int, current: InstanceShape, current_count: float,
           new: InstanceShape, new_count: float, target: float) -> tuple[ResourceReplay, ...]:
    """Each measured resource's projected utilisation on `new_count` x `new` (percent of its
    capacity; above 100: more than it holds), over every period with a datapoint."""
    replays = []
    for resource in _REPLAYED:
        column = f"{resource.value}:Maximum"
        if column not in series.columns:
            continue
        factor = _factor(resource, current, current_count, new, new_count)
        if factor is None:
            continue
        values = series[column].to_numpy(dtype="float64")
        values = values[~np.isnan(values)] * factor
        if values.size == 0:
            continue
        replays.append(percent_replay(resource, values, period_seconds, target))
    return tuple(replays)


def percent_replay(resource: Resource, percents: np.ndarray, period_seconds: float, target: float) -> ResourceReplay:
    """One resource's replay figures from its projected utilisation in each period (percent of the
    new capacity; at least one period)."""
    hours = period_seconds / 3600.0
    peak = float(percents.max())
    return ResourceReplay(
        resource=resource,
        p95=round(float(np.percentile(percents, 95)), 1),
        peak=round(peak, 1),
        hours_over_target=round(float((percents > target).sum()) * hours, 1),
        hours_over_100=round(float((percents > 100.0).sum()) * hours, 1),
        headroom_at_peak=round(100.0 - peak, 1),
    )


def _factor(resource: Resource, current: InstanceShape, current_count: float, new: InstanceShape,
            new_count: float) -> float | None:
    """What one percent now is on the new shape; None when the resource has no counterpart there."""
    if resource is Resource.CPU:
        return (current.vcpu * current_count) / (new.vcpu * new_count) if new.vcpu and new_count else None
    if resource is Resource.MEMORY:
        return current.memory_gib / new.memory_gib if new.memory_gib else None
    if not current.gpu_count or not new.gpu_count or current.accelerator != new.accelerator:
        return None  # GPU load on another accelerator (or none) is not the same load: load-test first
    if resource is Resource.GPU:
        return (current.gpu_count * current_count) / (new.gpu_count * new_count) if new_count else None
    return current.accelerator_memory_gib / new.accelerator_memory_gib if new.accelerator_memory_gib else None


def exceeds_capacity(replays: tuple[ResourceReplay, ...]) -> bool:
    """The replay goes over 100% of a resource in some period: such an option is never proposed."""
    return any(r.hours_over_100 > 0 or r.peak > 100.0 for r in replays)


def load_test_reasons(current: InstanceShape, new: InstanceShape, replays: tuple[ResourceReplay, ...],
                      latency_max_ms: float | None, config: RecommendConfig) -> tuple[str, ...]:
    """Why a replay cannot predict this change (empty: it can)."""
    reasons = []
    if current.accelerator != new.accelerator:
        reasons.append(f"another accelerator: {current.accelerator or 'CPU'} to {new.accelerator or 'CPU'}")
    if current.architecture != new.architecture:
        reasons.append(f"another architecture: {current.architecture} to {new.architecture} "
                       "(the image must be built for it)")
    memory = next((r for r in replays if r.resource is Resource.MEMORY), None)
    if memory is not None and memory.peak >= MEMORY_MARGIN_PERCENT:
        reasons.append(f"per-instance memory peak {memory.peak:.0f}% of {new.instance_type}'s "
                       f"{new.memory_gib:g} GiB: within 20%")
    objective = config.latency_objective_ms
    if objective > 0:
        if latency_max_ms is None:
            reasons.append(f"ModelLatency not published: whether its p99 nears the {objective:g} ms "
                           "objective is unknown")
        elif latency_max_ms >= objective * LATENCY_MARGIN:
            reasons.append(f"ModelLatency peaked at {latency_max_ms:g} ms, within 20% of the {objective:g} ms "
                           "objective or over it (its p99 is at most that; CloudWatch p99 not collected)")
    return tuple(reasons)


def level_of(replays: tuple[ResourceReplay, ...], target: float, load_test_first: tuple[str, ...],
             window_hours: float, scales: bool, accelerator_change: bool) -> RiskLevel:
    """The first case that holds (docs/plans.md, "Risk levels": one row each, no overlap):
    high: another accelerator (the replay says nothing of its main resource), a peak over 100%,
    or over the target for more than 5% of the window's hours; medium: over the target in any
    period (a replay over the target in any hour is never low), a peak over 90%, something to
    load-test first, a policy to trust, or no replay; low: otherwise."""
    if accelerator_change or exceeds_capacity(replays):
        return RiskLevel.HIGH
    if any(r.hours_over_target > window_hours * MEDIUM_HOURS_OVER_TARGET for r in replays):
        return RiskLevel.HIGH
    if (not replays or load_test_first or scales
            or any(r.hours_over_target > 0 or r.peak > min(target, LOW_PEAK_PERCENT) for r in replays)):
        return RiskLevel.MEDIUM
    return RiskLevel.LOW


def load_test_request(account_id: str, endpoint: str, plan_id: str, model_name: str | None,
                      option: PlanOption, config: RecommendConfig) -> ApiCall | None:
    """Inference Recommender's own load test (a Default job) limited to the proposed instance type;
    None without a role to run it as ([recommend] load_test_role_arn) or a model to test."""
    role = config.load_test_role_arn
    if not role or not model_name:
        return None
    target: dict[str, Any]
    if option.instance_type:
        target = {"InstanceType": option.instance_type}
    elif "memory_size_mb" in option.details:
        target = {"ServerlessConfig": {"MemorySizeInMB": int(option.details["memory_size_mb"]),
                                       "MaxConcurrency": int(option.details.get("max_concurrency", 1))}}
    else:
        return None
    return ApiCall(
        "sagemaker", "CreateInferenceRecommendationsJob",
        {"JobName": job_name(endpoint, plan_id), "JobType": "Default",
         "RoleArn": role.replace("{account_id}", account_id),
         "JobDescription": f"Load test for plan {plan_id} of endpoint {endpoint}"[:128],
         "InputConfig": {"ModelName": model_name, "EndpointConfigurations": [target]}},
        f"load-test model {model_name} on the proposed shape before applying plan {plan_id}",
    )


def job_name(endpoint: str, plan_id: str) -> str:
    """An Inference Recommender job name (64 characters, letters, digits and hyphens)."""
    head = re.sub(r"[^A-Za-z0-9-]", "-", endpoint)[: 64 - len(plan_id) - 4].strip("-") or "endpoint"
    return f"{head}-lt-{plan_id}"


def assess(option: PlanOption, series: pd.DataFrame | None, period_seconds: int, window_hours: float,
           current: InstanceShape | None, current_count: float, new: InstanceShape | None,
           latency_max_ms: float | None, config: RecommendConfig) -> Risk | None:
    """The risk of one option on an instance-backed variant; None when it cannot be replayed at all
    (no shape known, a serverless move or a delete: see `unreplayed_risk`)."""
    if current is None or new is None or option.action not in SHAPE_ACTIONS:
        return None
    policy = option.autoscaling
    new_count = float(policy["MaxCapacity"]) if policy else float(option.instance_count)
    if new_count <= 0 or current_count <= 0:
        return None
    target = config.target_utilization
    replays = (replay(series, period_seconds, current, current_count, new, new_count, target)
               if series is not None and not series.empty else ())
    reasons = load_test_reasons(current, new, replays, latency_max_ms, config)
    accelerator_change = current.accelerator != new.accelerator
    level = level_of(replays, target, reasons, window_hours, policy is not None, accelerator_change)
    return Risk(level=level, replays=replays, load_test_first=reasons)


def unreplayed_risk(option: PlanOption) -> Risk | None:
    """Changes without a shape to replay on: a delete (nothing left to overload), serverless (cold
    starts and concurrency are not in an instance's metrics), removing a variant (its traffic
    moves to the others), and UNREPLAYED_LEVELS (alarms, off-hours, workspaces, HyperPod nodes)."""
    if option.action == "delete":
        return Risk(RiskLevel.LOW)
    if option.action in ("serverless", "resize-memory"):
        return Risk(RiskLevel.MEDIUM, load_test_first=("serverless: cold starts and the memory size are not "
                                                       "in the instances' metrics",))
    if option.action in ("remove-variant", "end-shadow-test"):
        return Risk(RiskLevel.MEDIUM if option.action == "remove-variant" else RiskLevel.LOW)
    return UNREPLAYED_LEVELS.get(option.action)


# Changes that leave no shape to replay, and why each is at its level (docs/plans.md).
UNREPLAYED_LEVELS: dict[str, Risk] = {
    "queue-alarm": Risk(RiskLevel.LOW),  # alarms only: nothing that serves changes
    # Nothing serves the quiet hours: the window had no request in them, but one would fail.
    "off-hours": Risk(RiskLevel.MEDIUM),
    "stop": Risk(RiskLevel.LOW),  # a notebook instance: StartNotebookInstance brings it back, volume and files kept
    "delete-app": Risk(RiskLevel.LOW),  # a Studio app: the space and its storage are kept
    # HyperPod nodes: the group grows back only by UpdateCluster and the nodes' start-up.
    "shrink-group": Risk(RiskLevel.MEDIUM),
}
