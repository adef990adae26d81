"""Each single-model endpoint's load as consolidate-onto-components reads it (consolidation.py),
collected in the kind's loop from its assessment before its frames are released."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from auditor.kinds.endpoints.assessment import EndpointAssessment
from auditor.kinds.endpoints.consolidation import CandidateLoad
from auditor.models import Finding, Resource, Window


def _aligned(series: pd.Series | None, index: pd.DatetimeIndex) -> np.ndarray:
    """The series on the window's periods (NaN: no datum; consolidation.py decides what it counts as)."""
    if series is None:
        return np.zeros(len(index))
    return series.reindex(index).to_numpy(dtype="float64")


def candidate_load(assessed: EndpointAssessment, findings: Sequence[Finding], model: str, busy_percent: float,
                   window: Window) -> CandidateLoad | None:
    """What consolidation needs of a single-model endpoint, collected before its frames are
    released; None when it has nothing to read (no shape, no cost, no utilisation). Its series are
    aligned on the audit `window`'s periods, the same for every endpoint of the region (NaN where it
    has no datum, before its shape window too: consolidation.py says what that counts as). One left
    out (busy ...) keeps no series: nothing reads them, and a region may have thousands."""
    endpoint = assessed.endpoint
    if len(assessed.variants) != 1:
        return None
    va = assessed.variants[0]
    shape, utilization = va.shape, va.utilization
    if shape is None or utilization is None or va.monthly_cost_usd is None or va.normalised.empty:
        return None
    count = va.variant.instance_count
    index = pd.date_range(pd.Timestamp(window.start), pd.Timestamp(window.end), freq=f"{window.period_seconds}s",
                          inclusive="left")
    frame = va.normalised
    if getattr(frame.index, "tz", None) is None:
        index = index.tz_convert(None)  # the frame's stamps are naive UTC: compare like with like

    def column(resource: Resource) -> pd.Series | None:
        name = f"{resource.value}:Maximum"
        return frame[name] if name in frame.columns else None

    cpu = _aligned(column(Resource.CPU), index) / 100.0 * shape.vcpu * count
    memory = _aligned(column(Resource.MEMORY), index) / 100.0 * shape.memory_gib * 1024
    gpus = shape.gpu_count
    accelerators = _aligned(column(Resource.GPU), index) / 100.0 * gpus * count if gpus else np.zeros(len(index))
    accelerator_memory = _aligned(column(Resource.GPU_MEMORY), index) / 100.0 * gpus if gpus else np.zeros(len(index))
    peak = {r.value: round(u.max, 2) for r, u in utilization.by_resource.items() if r is not Resource.DISK}
    advised = [f.recommendation for f in findings if f.recommendation is not None]
    saving = [r for r in advised if r.monthly_savings_usd > 0]
    best = min(saving, key=lambda r: r.recommended_monthly_usd) if saving else None
    scales_out = any(r.action == "scale-out" for r in advised)
    described = endpoint.config_description or {}
    excluded = (_excluded(peak, busy_percent, scales_out, va.variant.scales, best.action if best else None)
                or _config_excluded(described))
    if excluded is None and (Resource.CPU.value not in peak or Resource.MEMORY.value not in peak):
        excluded = "its CPU or memory was not measured: what a copy must reserve is unknown"
    if excluded is not None:
        cpu = memory = accelerators = accelerator_memory = np.zeros(0)
    kms = described.get("KmsKeyId")
    return CandidateLoad(
        account_id=endpoint.account_id, region=endpoint.region, endpoint=endpoint.name,
        endpoint_config=endpoint.config_name, status=endpoint.status, variant=va.variant.name, model=model,
        instance_type=shape.instance_type, instance_count=count, monthly_cost_usd=va.monthly_cost_usd,
        own_plan_monthly_usd=best.recommended_monthly_usd if best else va.monthly_cost_usd,
        network=None, kms_key=str(kms) if kms else None, tags=dict(endpoint.tags), peak_percent=peak,
        scales_out=scales_out, excluded=excluded, period_seconds=window.period_seconds,
        cpu_cores=cpu.astype("float32"), memory_mb=memory.astype("float32"),
        accelerators=accelerators.astype("float32"), accelerator_memory=accelerator_memory.astype("float32"),
    )


def _excluded(peak: dict[str, float], busy_percent: float, scales_out: bool, scales: bool,
              own_action: str | None) -> str | None:
    busy = {r: p for r, p in peak.items() if p > busy_percent}
    if busy:
        hottest = max(busy, key=lambda r: busy[r])
        return f"busy: its {hottest} peaked at {busy[hottest]:g}% (over {busy_percent:g}%)"
    if scales_out:
        return "busy: its own plans include a scale-out"
    if scales:
        return "its instance count scales (autoscaling or managed scaling): a fixed share cannot be read from it"
    if own_action == "delete":
        return "its own plan deletes it (idle)"
    return None


def _config_excluded(described: dict[str, object]) -> str | None:
    """What its endpoint config does that the shared endpoint's config (one component-style variant,
    its network and key) would not: once callers switch, that would stop without a word."""
    capture = described.get("DataCaptureConfig")
    if isinstance(capture, dict) and capture and capture.get("EnableCapture", True) is not False:
        return "its config captures requests (DataCaptureConfig), which the shared endpoint's would not"
    if described.get("ExplainerConfig"):
        return "its config explains predictions (ExplainerConfig), which the shared endpoint's would not"
    return None
