"""no-autoscaling: a real-time variant with two or more instances and no scaling policy (neither
Application Auto Scaling nor managed instance scaling). For a variant that hosts inference
components, the advised minimum holds every copy's reserved cores, accelerators and memory.

SageMakerVariantInvocationsPerInstance is the variant's requests over its instance count (each
request adds 1/instances), a mean: per-instance requests (enhanced metrics) cannot stand in for it.
What they change is the CPU the target is read against: with each instance measured, an hour's CPU
is the hottest instance's, so the target keeps that one at the target utilisation."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from auditor.analyse.rules.base import RuleSettings, settings_of, target_percent
from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import HOTTEST_INSTANCE, VARIANT_MEAN, EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.models import price_usage
from auditor.kinds.endpoints.packing import hosted_copies
from auditor.kinds.endpoints.pricing_steps import variant_of
from auditor.kinds.endpoints.rule_types import VariantRule
from auditor.kinds.endpoints.rules.instance_imbalance import imbalance
from auditor.models import AutoscalingProposal, Finding, Judged, Recommendation, ScalingPolicy, Severity
from auditor.recommend.demand import minimum_instances
from auditor.recommend.pricing import priced, severity_for_saving
from auditor.schema import setting

# Hours busier than this share of CPU tell how invocations map to load; quieter hours are noise.
MIN_CPU_FOR_CAPACITY = 5.0
# Headroom above the busiest hour seen, for the policy's MaxCapacity.
MAX_CAPACITY_HEADROOM = 1.25
INVOCATIONS_METRIC = "SageMakerVariantInvocationsPerInstance"


@dataclass(frozen=True)
class AutoscalingSettings(RuleSettings):
    min_instances: int = setting(2, "variants with fewer instances are not expected to autoscale", minimum=1,
                                 maximum=1000)
    target_utilization: float = setting(0.0, "0: recommend.target_utilization", minimum=0, maximum=100)


def check(assessment: EndpointAssessment, va: VariantAssessment, config: AuditConfig) -> Finding | None:
    settings: AutoscalingSettings = settings_of(RULE, config)
    count = va.variant.instance_count
    scaling = va.variant.autoscaling
    if count < settings.min_instances or not assessment.endpoint.autoscaling_known:
        return None
    if (scaling is not None and scaling.policies) or va.variant.managed_scaling is not None:
        return None
    if imbalance(va, config) is not None:
        return None  # one instance carries the load: scaling in would make it worse (instance-imbalance)
    copies = hosted_copies(assessment.components, va.variant.name, assessment.endpoint.inference_components_listed)
    for_copies = copies.instances(va.shape) if va.shape is not None else None
    if copies.hosts and for_copies is None:
        return None  # reservations unknown: no minimum can be shown to hold the copies
    if "Invocations:Sum" not in va.raw.columns or "cpu:Average" not in va.normalised.columns:
        return None
    cpu_basis = VARIANT_MEAN
    frame = _requests_and_cpu(va.raw["Invocations:Sum"], va.normalised["cpu:Average"])
    hottest = hottest_cpu(va)
    if hottest is not None:
        # The policy tracks the variant's mean invocations per instance; the target must keep the
        # hottest instance at the target CPU, not the mean one.
        frame["cpu:Average"] = np.fmax(frame["cpu:Average"], hottest.reindex(frame.index))
        cpu_basis = HOTTEST_INSTANCE
    if frame.empty or not frame["Invocations:Sum"].sum():
        return None
    period_minutes = (assessment.window.period_seconds if assessment.window else 3600) / 60
    per_minute = frame["Invocations:Sum"].to_numpy(dtype="float64") / period_minutes  # whole variant
    per_instance = per_minute / count
    cpu = frame["cpu:Average"].to_numpy(dtype="float64")
    target = target_percent(settings.target_utilization, config)

    # Invocations one instance takes at the target utilisation, read off the hours with real load.
    busy = cpu >= MIN_CPU_FOR_CAPACITY
    if busy.any():
        target_value = float(np.median(per_instance[busy] * target / cpu[busy]))
    else:
        target_value = float(per_instance.max())
    if target_value <= 0:
        return None
    needed = np.ceil(per_minute / target_value)
    floor = minimum_instances(count, config.recommend)
    min_capacity = int(max(floor, needed.min(), for_copies or 0))
    # Room for at least one more instance than the floor: a policy with min = max does nothing.
    max_capacity = int(max(count, min_capacity + 1, math.ceil(needed.max() * MAX_CAPACITY_HEADROOM)))
    average = float(np.clip(needed, min_capacity, max_capacity).mean())
    policy = ScalingPolicy(INVOCATIONS_METRIC, round(target_value, 1), min_capacity, max_capacity)
    why = "a scalable target with no policy" if scaling is not None else "no autoscaling"
    copies_text = (f"; its inference component copies need {for_copies} instances, the minimum (or enable "
                   f"managed instance scaling with MinInstanceCount {min_capacity} and scale the copies)"
                   if for_copies else "")
    message = (
        f"{count} x {va.variant.instance_type} with {why}; traffic ranges from {per_instance.min():,.1f} to "
        f"{per_instance.max():,.1f} invocations per instance per minute. Target tracking on "
        f"{INVOCATIONS_METRIC} at {target_value:,.1f} (CPU at ~{target:g}%), "
        f"min {min_capacity}, max {max_capacity} would run about {average:.1f} instances on average{copies_text}"
    )
    return RULE.finding(
        assessment.endpoint, va.variant.name, message,
        {
            "policy": policy.as_dict(),
            "current_count": count,
            "estimated_average_instances": round(average, 2),
            "invocations_per_instance_per_minute": {
                "min": round(float(per_instance.min()), 2),
                "median": round(float(np.median(per_instance)), 2),
                "max": round(float(per_instance.max()), 2),
            },
            "target_utilization": target,
            "cpu_basis": cpu_basis,
            "scalable_target_without_policy": scaling is not None,
            "instances_for_component_copies": for_copies or None,
        },
        proposal=AutoscalingProposal(policy, round(average, 2)),
    )


def _requests_and_cpu(requests: pd.Series, cpu: pd.Series) -> pd.DataFrame:
    """The periods with both figures. Both series are usually on the same periods: then a mask on
    their arrays, not a pandas join (a join per variant was a tenth of this rule's time at scale)."""
    if not requests.index.equals(cpu.index):
        return requests.to_frame("Invocations:Sum").join(cpu.to_frame("cpu:Average"), how="inner").dropna()
    calls, load = requests.to_numpy(dtype="float64"), cpu.to_numpy(dtype="float64")
    keep = ~(np.isnan(calls) | np.isnan(load))
    return pd.DataFrame({"Invocations:Sum": calls[keep], "cpu:Average": load[keep]}, index=requests.index[keep])


def hottest_cpu(va: VariantAssessment) -> pd.Series | None:
    """Each period's highest CPU average over the variant's instances (enhanced metrics), or None
    when fewer than two instances were measured."""
    columns = [f["cpu:Average"] for f in va.instance_series.values() if "cpu:Average" in f.columns]
    if len(columns) < 2:
        return None
    return pd.concat(columns, axis=1).max(axis=1)


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding:
    assert isinstance(finding.proposal, AutoscalingProposal)
    proposal = finding.proposal
    va = variant_of(finding, assessment)
    price = (catalog.usage_price(va.variant.instance_type, assessment.endpoint.region,
                                 price_usage(assessment.endpoint))
             if va and va.variant.instance_type else None)
    if va is None or price is None or va.monthly_cost_usd is None:
        return replace(finding, message=f"{finding.message} (no list price: saving unknown).")
    rec = Recommendation("autoscale", va.variant.instance_type, proposal.policy.min_capacity,
                         current_monthly_usd=va.monthly_cost_usd,
                         recommended_monthly_usd=round(price * proposal.average_instances * HOURS_PER_MONTH, 2),
                         details={"policy": proposal.policy.as_dict()})
    saving = rec.monthly_savings_usd
    tail = f": saves about ${saving:,.2f}/month." if saving > 0 else ": no saving, but capacity follows the load."
    return priced(finding, rec, finding.message + tail, severity_for_saving(saving) if saving > 0 else Severity.LOW)


RULE = VariantRule(
    id="no-autoscaling",
    title="Fixed instance count",
    severity=Severity.MEDIUM,
    remediation="Register the variant with Application Auto Scaling and add target tracking on "
                "SageMakerVariantInvocationsPerInstance with the advised target and capacities.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling.html",
    judges=frozenset({Judged.REAL_TIME}),
    settings=AutoscalingSettings,
    threshold_field="target_utilization",
    check=check,
    price=price,
)
