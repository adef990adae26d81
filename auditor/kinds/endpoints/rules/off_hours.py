"""off-hours: a real-time endpoint whose traffic stops on a weekly pattern (nights, weekends): hours
of the week (168 slots, UTC) in which no invocation fell in any week of the window and the
instances idled (CPU and GPU hourly maxima at or under a ceiling) in every week they were seen.
Runs of such hours at least `min_off_hours` long are the off hours; the endpoint can be stopped
for them.

The change is data (`details["change"]` of the recommendation: ApiCall dicts in order, with
`details["rollback"]`): for an endpoint that hosts inference components, Application Auto Scaling
scheduled actions that take the copies to zero and back (managed instance scaling with
MinInstanceCount 0 then releases the instances); for any other endpoint, EventBridge Scheduler
schedules whose universal targets call DeleteEndpoint when the quiet hours begin and CreateEndpoint
with the same endpoint config before they end. The endpoint config (and model) stay, so the
morning's endpoint is the evening's.

An hour without a CPU datapoint is an hour the instances were not seen: it is not counted as quiet.
Real-time endpoints publish no Invocations datapoint in an hour without requests, so a missing
Invocations datapoint next to a CPU datapoint is an hour without requests. An endpoint that hosts
inference components publishes no variant Invocations for them: its requests are the sum, hour by
hour, of its components' Invocations (AWS/SageMaker, InferenceComponentName), each likewise absent
in an hour without requests. component-scale-to-zero reads the same hours (`weekly_off_periods`)
and stays silent wherever this rule fires."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from auditor.analyse.rules.base import RuleSettings, settings_of
from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment, VariantAssessment
from auditor.kinds.endpoints.models import Endpoint, price_usage
from auditor.kinds.endpoints.rule_types import EndpointRule
from auditor.models import Finding, Judged, Recommendation, Severity
from auditor.recommend.change import settable_tags
from auditor.recommend.pricing import priced
from auditor.schema import ACCOUNT_ID_PLACEHOLDER, ROLE_ARN_TEMPLATE, setting

HOURS_PER_WEEK = 168
DAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
# The evening hour (local) quiet hours are taken to begin at, for the zone guess.
EVENING_HOUR = 19
UNIVERSAL_TARGET = "arn:aws:scheduler:::aws-sdk:sagemaker:{action}"
COPY_DIMENSION = "sagemaker:inference-component:DesiredCopyCount"
SCALE_TO_ZERO_DOCS = "https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html"


@dataclass(frozen=True)
class OffHoursSettings(RuleSettings):
    min_off_hours: int = setting(6, "a quiet run shorter than this many hours is not worth a stop and start",
                                 minimum=1, maximum=HOURS_PER_WEEK - 1)
    min_weeks: int = setting(2, "each quiet hour of the week must have been seen in at least this many weeks",
                             minimum=1, maximum=52)
    idle_ceiling_percent: float = setting(5.0, "CPU and GPU hourly maxima (per vCPU / GPU) at or under this "
                                          "in every quiet hour", minimum=0, maximum=100)
    start_lead_minutes: int = setting(60, "the endpoint is started this long before traffic resumes (measure "
                                      "how long yours takes to reach InService)", minimum=0, maximum=720)
    scheduler_role_arn: str | None = setting(
        None, "the role EventBridge Scheduler assumes to call DeleteEndpoint and CreateEndpoint, with "
        "{account_id}; unset: the plan carries no schedules", check=ROLE_ARN_TEMPLATE)


@dataclass(frozen=True)
class OffPeriod:
    """A run of quiet hours: from `first` (hour of the week, 0 = Monday 00:00 UTC) for `hours`."""

    first: int
    hours: int

    @property
    def resume(self) -> int:
        """The hour of the week traffic comes back."""
        return (self.first + self.hours) % HOURS_PER_WEEK


def slot_label(slot: int, minute: int = 0) -> str:
    return f"{DAYS[slot // 24 % 7].title()} {slot % 24:02d}:{minute:02d}"


def requests_of(assessment: EndpointAssessment, variant: VariantAssessment) -> pd.Series | None:
    """The endpoint's requests per period as published (NaN: no datapoint): the variant's Invocations,
    or for an endpoint that hosts inference components the sum of its components' (AWS publishes no
    variant figures for them); None when none was collected."""
    if assessment.endpoint.inference_components:
        calls = assessment.component_calls
        return None if calls.empty else calls.sum(axis=1, min_count=1)
    raw = variant.raw
    return raw["Invocations:Sum"] if "Invocations:Sum" in raw.columns else None


def quiet_slots(variant: VariantAssessment, requests: pd.Series | None, ceiling: float,
                min_weeks: int) -> np.ndarray | None:
    """The hours of the week (168 booleans) with no request in any week, instances seen in at least
    `min_weeks` weeks and idle every time; None when the frames cannot tell."""
    normalised = variant.normalised
    if "cpu:Maximum" not in normalised.columns or requests is None:
        return None
    cpu = normalised["cpu:Maximum"].dropna()
    if cpu.empty:
        return None
    invocations = requests.fillna(0.0)
    called_at = pd.DatetimeIndex(invocations.index[invocations.to_numpy() > 0])
    called = np.bincount(called_at.day_of_week * 24 + called_at.hour, minlength=HOURS_PER_WEEK)
    if called.all():
        return called == 0  # an invocation in every hour of the week: none is quiet (most endpoints)
    seen_at = pd.DatetimeIndex(cpu.index)
    seen = np.bincount(seen_at.day_of_week * 24 + seen_at.hour, minlength=HOURS_PER_WEEK)
    busy = cpu > ceiling
    if "gpu:Maximum" in normalised.columns:
        busy = busy | (normalised["gpu:Maximum"].reindex(cpu.index) > ceiling)
    busy_at = pd.DatetimeIndex(cpu.index[busy.to_numpy()])
    busy_slots = np.bincount(busy_at.day_of_week * 24 + busy_at.hour, minlength=HOURS_PER_WEEK)
    return (seen >= min_weeks) & (busy_slots == 0) & (called == 0)


def off_periods(quiet: np.ndarray, min_hours: int) -> tuple[OffPeriod, ...]:
    """The circular runs of quiet hours at least `min_hours` long (none when every hour is quiet:
    that endpoint is idle, not off-hours)."""
    if quiet.all() or not quiet.any():
        return ()
    start = int(np.argmin(quiet))  # a busy hour: runs never wrap past it
    periods = []
    run_first, run_length = 0, 0
    for step in range(1, HOURS_PER_WEEK + 1):
        slot = (start + step) % HOURS_PER_WEEK
        if quiet[slot]:
            if not run_length:
                run_first = slot
            run_length += 1
        elif run_length:
            if run_length >= min_hours:
                periods.append(OffPeriod(run_first, run_length))
            run_length = 0
    return tuple(sorted(periods, key=lambda p: p.first))


def spans_text(periods: tuple[OffPeriod, ...]) -> str:
    """The quiet runs in words, runs of the same hours on consecutive days said once."""
    groups: list[list[OffPeriod]] = []
    for period in periods:
        last = groups[-1][-1] if groups else None
        if last is not None and period.hours == last.hours and period.first == last.first + 24:
            groups[-1].append(period)
        else:
            groups.append([period])
    parts = []
    for group in groups:
        first, last = group[0], group[-1]
        days = DAYS[first.first // 24].title() + (f"-{DAYS[last.first // 24].title()}" if len(group) > 1 else "")
        next_day = first.resume // 24 == (first.first // 24 + 1) % 7
        ends = f"{first.resume % 24:02d}:00 next day" if next_day else slot_label(first.resume)
        parts.append(f"{days} {first.first % 24:02d}:00 to {ends} ({first.hours} h{' each' if len(group) > 1 else ''})")
    return "; ".join(parts)


def zone_guess(periods: tuple[OffPeriod, ...]) -> int:
    """The UTC offset at which the most common stop hour falls nearest EVENING_HOUR local time."""
    stops = [p.first % 24 for p in periods]
    common = max(set(stops), key=lambda h: (stops.count(h), -h))
    return (EVENING_HOUR - common + 12) % 24 - 12


def weekly_off_periods(assessment: EndpointAssessment, config: AuditConfig) -> tuple[OffPeriod, ...]:
    """The quiet runs this rule would stop the endpoint for (none: it does not fire, also where the
    config turns it off or the endpoint's tags skip it)."""
    settings: OffHoursSettings = settings_of(RULE, config)
    endpoint = assessment.endpoint
    window = assessment.window
    if not settings.enabled or RULE.id in endpoint.skipped_rules:
        return ()
    # The endpoint stops as a whole, and its plan is its variant's: endpoints of one variant (the
    # saving of one plan is never added to another's for the same instances), judged hourly.
    if len(endpoint.variants) != 1 or len(assessment.variants) != 1 or window is None \
            or window.period_seconds != 3600:
        return ()
    (variant,) = assessment.variants
    quiet = quiet_slots(variant, requests_of(assessment, variant), settings.idle_ceiling_percent, settings.min_weeks)
    if quiet is None:
        return ()
    # A run the start-up lead eats whole is no stop at all.
    return tuple(p for p in off_periods(quiet, settings.min_off_hours) if p.hours * 60 > settings.start_lead_minutes)


def check(assessment: EndpointAssessment, config: AuditConfig) -> Finding | None:
    settings: OffHoursSettings = settings_of(RULE, config)
    endpoint = assessment.endpoint
    window = assessment.window
    periods = weekly_off_periods(assessment, config)
    if not periods or window is None:
        return None
    (variant,) = assessment.variants
    lead = settings.start_lead_minutes
    stopped_hours = sum(p.hours - lead / 60 for p in periods)
    offset = zone_guess(periods)
    calls = "component call" if endpoint.inference_components else "call"
    message = (f"No {calls} in any week, CPU/GPU <= {settings.idle_ceiling_percent:g}%, "
               f"{sum(p.hours for p in periods)} h a week (UTC): {spans_text(periods)}; "
               f"from {EVENING_HOUR}:00 at UTC{offset:+d} (a guessed zone).")
    return RULE.finding(endpoint, variant.variant.name, message, {
        "off_periods_utc": [{"from": slot_label(p.first), "to": slot_label(p.resume), "hours": p.hours}
                            for p in periods],
        "off_hours_per_week": sum(p.hours for p in periods),
        "stopped_hours_per_week": round(stopped_hours, 2),
        "start_lead_minutes": lead,
        "zone_guess_utc_offset": offset,
        "min_weeks": settings.min_weeks,
        "weeks_in_window": round(window.days / 7, 1),
        "idle_ceiling_percent": settings.idle_ceiling_percent,
        "hosts_inference_components": bool(endpoint.inference_components),
    })


def _periods_of(finding: Finding) -> tuple[OffPeriod, ...]:
    return tuple(OffPeriod(DAYS.index(p["from"][:3].upper()) * 24 + int(p["from"][4:6]), int(p["hours"]))
                 for p in finding.evidence["off_periods_utc"])


def _off_hour_instances(va: VariantAssessment, periods: tuple[OffPeriod, ...]) -> float:
    """Instances running in the quiet hours: CPUUtilization's sample count / 60 where the variant
    scales (what really ran then), else its count."""
    if va.variant.scales and "CPUUtilization:SampleCount" in va.raw.columns:
        samples = va.raw["CPUUtilization:SampleCount"].dropna()
        at = pd.DatetimeIndex(samples.index)
        slots = at.day_of_week * 24 + at.hour
        quiet = {(p.first + i) % HOURS_PER_WEEK for p in periods for i in range(p.hours)}
        picked = samples[np.isin(slots, sorted(quiet))]
        if not picked.empty:
            return float(picked.mean()) / 60
    return float(va.variant.instance_count)


def _released(endpoint: Endpoint, va: VariantAssessment, running: float) -> float:
    """The instances the plan's change releases in the quiet hours: all of them where it deletes the
    endpoint; with inference components, those above the floor managed instance scaling keeps
    (MinInstanceCount; none without managed scaling, or with its floor unknown)."""
    if not endpoint.inference_components:
        return running
    managed = va.variant.managed_scaling
    if managed is None or managed.min_instances is None:
        return 0.0
    return max(running - managed.min_instances, 0.0)


def price(finding: Finding, assessment: EndpointAssessment, catalog: Catalog, config: AuditConfig) -> Finding | None:
    settings: OffHoursSettings = settings_of(RULE, config)
    endpoint = assessment.endpoint
    periods = _periods_of(finding)
    hourly = hourly_at_zero = 0.0
    for va in assessment.variants:
        rate = (catalog.usage_price(va.variant.instance_type, endpoint.region, price_usage(endpoint))
                if va.variant.instance_type else None)
        if rate is None or va.monthly_cost_usd is None:
            return replace(finding, message=f"{finding.message} (no list price: saving unknown).")
        running = _off_hour_instances(va, periods)
        hourly += rate * _released(endpoint, va, running)
        hourly_at_zero += rate * running
    current = round(sum(va.monthly_cost_usd or 0.0 for va in assessment.variants), 2)
    stopped = float(finding.evidence["stopped_hours_per_week"])
    saving = round(min(current, hourly * stopped * HOURS_PER_MONTH / HOURS_PER_WEEK), 2)
    # Components: what the quiet hours would save once MinInstanceCount is 0 (the plan's `requires`).
    at_zero = round(min(current, hourly_at_zero * stopped * HOURS_PER_MONTH / HOURS_PER_WEEK), 2)
    change = off_hours_change(endpoint, periods, settings.start_lead_minutes, settings.scheduler_role_arn)
    details: dict[str, Any] = {
        "advice": f"stop it {stopped:g} h a week",
        "off_periods_utc": finding.evidence["off_periods_utc"],
        **change,
    }
    rec = Recommendation("off-hours", None, 0, current_monthly_usd=current,
                         recommended_monthly_usd=round(current - saving, 2), details=details)
    text = (f"{finding.message} Stopped {stopped:g} h a week (up {settings.start_lead_minutes} min before traffic; "
            f"measure start-up): ${saving:,.2f}/month.")
    if at_zero > saving:
        details["monthly_savings_usd_at_min_instance_count_0"] = at_zero
        text += f" ${at_zero:,.2f}/month with MinInstanceCount 0."
    for caveat in ("requires", "change_missing"):
        if caveat in change:
            text += f" {change[caveat]}"
    return priced(finding, rec, text)


def _name(prefix: str, endpoint: str, index: int) -> str:
    """A schedule or scheduled-action name (at most 64 of [0-9A-Za-z-_.]), unique per endpoint."""
    name = f"{prefix}-{index}-{endpoint}"
    if len(name) <= 64:
        return name
    digest = hashlib.sha256(endpoint.encode()).hexdigest()[:8]
    return f"{prefix}-{index}-{endpoint[:64 - len(prefix) - len(str(index)) - 12]}-{digest}"


def _crons(moments: list[int]) -> list[tuple[str, str]]:
    """Minutes of the week -> (cron expression, label) per distinct time of day, with its days."""
    by_time: dict[int, list[int]] = defaultdict(list)
    for moment in moments:
        moment %= HOURS_PER_WEEK * 60
        by_time[moment % 1440].append(moment // 1440)
    crons = []
    for minute_of_day, days in sorted(by_time.items()):
        listed = ",".join(DAYS[d] for d in sorted(set(days)))
        hour, minute = divmod(minute_of_day, 60)
        crons.append((f"cron({minute} {hour} ? * {listed} *)", f"{hour:02d}:{minute:02d} UTC on {listed}"))
    return crons


def off_hours_change(endpoint: Endpoint, periods: tuple[OffPeriod, ...], lead_minutes: int,
                     role_template: str | None) -> dict[str, Any]:
    """The plan's change as data: `change` (ApiCall dicts: service, operation, params, purpose),
    `rollback`, `waits_for`, `start_up`; `change_missing` says why no calls are carried."""
    stops = _crons([p.first * 60 for p in periods])
    starts = _crons([p.resume * 60 - lead_minutes for p in periods])
    if endpoint.inference_components:
        return _component_change(endpoint, stops, starts)
    start_up = ("After CreateEndpoint the endpoint serves nothing until it is InService again; how long that "
                "takes depends on the instance type and model (measure it, and set start_lead_minutes above it).")
    if role_template is None:
        return {"start_up": start_up,
                "change_missing": "Schedules need [rules.off-hours] scheduler_role_arn."}
    role = role_template.replace(ACCOUNT_ID_PLACEHOLDER, endpoint.account_id)
    tags = settable_tags(endpoint.tags, keep_opt_in=True)  # the same endpoint made again, as it was
    create_input: dict[str, Any] = {"EndpointName": endpoint.name, "EndpointConfigName": endpoint.config_name}
    if tags:
        create_input["Tags"] = tags
    calls = []
    names = []
    for action, crons, body, prefix in (
        ("deleteEndpoint", stops, {"EndpointName": endpoint.name}, "auditor-stop"),
        ("createEndpoint", starts, create_input, "auditor-start"),
    ):
        for index, (expression, label) in enumerate(crons):
            name = _name(prefix, endpoint.name, index)
            names.append(name)
            calls.append({
                "service": "scheduler", "operation": "CreateSchedule",
                "params": {
                    "Name": name, "ScheduleExpression": expression, "ScheduleExpressionTimezone": "UTC",
                    "FlexibleTimeWindow": {"Mode": "OFF"}, "State": "ENABLED",
                    "Description": f"sagemaker-auditor off-hours: {action} {endpoint.name}"[:512],
                    "Target": {"Arn": UNIVERSAL_TARGET.format(action=action), "RoleArn": role,
                               "Input": json.dumps(body, sort_keys=True)},
                },
                "purpose": f"{'delete' if action == 'deleteEndpoint' else 'create'} endpoint {endpoint.name} "
                           f"at {label} (config {endpoint.config_name} is kept)",
            })
    return {
        "change": calls,
        "rollback": (f"DeleteSchedule {', '.join(names)} (scheduler); if the endpoint is down then, CreateEndpoint "
                     f"{endpoint.name} with endpoint config {endpoint.config_name}."),
        "waits_for": None,
        "start_up": start_up,
    }


def _component_change(endpoint: Endpoint, stops: list[tuple[str, str]],
                      starts: list[tuple[str, str]]) -> dict[str, Any]:
    start_up = ("Scaling back from zero provisions instances again, which AWS says takes several minutes "
                f"({SCALE_TO_ZERO_DOCS}); set start_lead_minutes above what yours takes.")
    managed = [v for v in endpoint.variants if not v.shadow]
    to_zero = all(v.managed_scaling is not None and v.managed_scaling.min_instances == 0 for v in managed)
    unknown = sorted(c.name for c in endpoint.inference_components if c.copy_count is None)
    if unknown:
        return {"start_up": start_up,
                "change_missing": f"The copy counts of {', '.join(unknown)} are unknown (not described): no "
                                  "scheduled action can restore them."}
    if not endpoint.autoscaling_known:
        return {"start_up": start_up,
                "change_missing": "The components' scaling targets were not read (Application Auto Scaling): "
                                  "registering them could overwrite their capacities."}
    calls: list[dict[str, Any]] = []
    names = []
    undo = []
    for component in endpoint.inference_components:
        copies = int(component.copy_count or 0)
        resource = f"inference-component/{component.name}"
        scaling = component.autoscaling
        # An autoscaled component gets its own range back in the morning (its policies keep working);
        # any other, its copies.
        low, high = (scaling.min_capacity, scaling.max_capacity) if scaling else (copies, copies)
        calls.append({
            "service": "application-autoscaling", "operation": "RegisterScalableTarget",
            "params": {"ServiceNamespace": "sagemaker", "ResourceId": resource, "ScalableDimension": COPY_DIMENSION,
                       "MinCapacity": 0, "MaxCapacity": max(high, 1)},
            "purpose": f"let {component.name}'s copies scale between 0 and {max(high, 1)}",
        })
        undo.append(f"RegisterScalableTarget {resource} MinCapacity {low} MaxCapacity {high}" if scaling
                    else f"DeregisterScalableTarget {resource}")
        for index, ((expression, label), (least, most), prefix) in enumerate(
                [(s, (0, 0), "auditor-zero") for s in stops] + [(s, (low, high), "auditor-back") for s in starts]):
            name = _name(prefix, component.name, index)
            names.append(name)
            copies_text = f"{least} copies" if least == most else f"{least}-{most} copies"
            calls.append({
                "service": "application-autoscaling", "operation": "PutScheduledAction",
                "params": {"ServiceNamespace": "sagemaker", "ScheduledActionName": name, "ResourceId": resource,
                           "ScalableDimension": COPY_DIMENSION, "Schedule": expression, "Timezone": "UTC",
                           "ScalableTargetAction": {"MinCapacity": least, "MaxCapacity": most}},
                "purpose": f"{component.name}: {copies_text} at {label}",
            })
    change: dict[str, Any] = {
        "change": calls,
        "rollback": (f"DeleteScheduledAction {', '.join(names)} (application-autoscaling); then "
                     f"{'; '.join(undo)}."),
        "waits_for": None,
        "start_up": start_up,
    }
    if not to_zero:
        change["requires"] = ("The instances are released only where the variant's ManagedInstanceScaling has "
                              "MinInstanceCount 0 (a new endpoint config); until then only the copies stop and the "
                              "saving is the instances above its MinInstanceCount.")
    return change


RULE = EndpointRule(
    id="off-hours",
    title="Quiet hours",
    severity=Severity.MEDIUM,
    remediation="Stop it in its quiet hours.",
    docs="https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-targets-universal.html",
    judges=frozenset({Judged.REAL_TIME}),
    settings=OffHoursSettings,
    threshold_field="min_off_hours",
    check=check,
    price=price,
)
