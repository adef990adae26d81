"""off-hours on hand-made hourly frames (UTC): fires on an endpoint called in office hours only, never
on one called around the clock, never over an hour with an invocation, never on too few weeks; its
change validates against botocore's service models."""

from __future__ import annotations

import json
from dataclasses import replace

import botocore.session
import numpy as np
import pandas as pd
import pytest
from botocore.validate import ParamValidator

from auditor.config import AuditConfig
from auditor.kinds.endpoints.judge import judge_endpoint
from auditor.kinds.endpoints.models import AutoScaling, InferenceComponent, ManagedScaling, Variant
from auditor.kinds.endpoints.rules.off_hours import RULE, OffHoursSettings, OffPeriod, off_hours_change, off_periods
from helpers import endpoint, hourly_frame
from test_rules_traffic import CATALOG, assessment

VARIANT = Variant("AllTraffic", "ml.c5.xlarge", 1)  # 4 vCPU
ROLE = "arn:aws:iam::{account_id}:role/auditor-off-hours"


def office_hours_raw(days: float = 14, traffic_days: tuple[int, ...] = (0, 1, 2, 3, 4)) -> pd.DataFrame:
    """Invocations Mon-Fri 08-18 UTC only (no datapoint otherwise, as AWS publishes), CPU 40% then
    and 2% (per vCPU) otherwise."""
    raw = hourly_frame(days, CPUUtilization__Average=160.0, CPUUtilization__Maximum=200.0,
                       MemoryUtilization__Average=50.0, MemoryUtilization__Maximum=55.0, Invocations__Sum=3000.0)
    index = pd.DatetimeIndex(raw.index)
    busy = np.isin(index.day_of_week, traffic_days) & (index.hour >= 8) & (index.hour < 18)
    raw.loc[~busy, "Invocations:Sum"] = np.nan
    raw.loc[~busy, "CPUUtilization:Average"] = 8.0
    raw.loc[~busy, "CPUUtilization:Maximum"] = 10.0
    return raw


def config(**settings) -> AuditConfig:
    return replace(AuditConfig(), rules={"off-hours": OffHoursSettings(**settings)})


def judged(raw: pd.DataFrame, cfg: AuditConfig | None = None, ep=None) -> list:
    cfg = cfg or AuditConfig()
    target = ep or endpoint("claims", variants=(VARIANT,))
    return [f for f in judge_endpoint(replace(assessment(target, raw), config=cfg), CATALOG, cfg)
            if f.rule == "off-hours"]


def test_fires_on_an_office_hours_endpoint_with_the_hours_in_utc_and_the_saving() -> None:
    (finding,) = judged(office_hours_raw())
    periods = finding.evidence["off_periods_utc"]
    assert [(p["from"], p["to"], p["hours"]) for p in periods] == [
        ("Mon 18:00", "Tue 08:00", 14), ("Tue 18:00", "Wed 08:00", 14), ("Wed 18:00", "Thu 08:00", 14),
        ("Thu 18:00", "Fri 08:00", 14), ("Fri 18:00", "Mon 08:00", 62)]
    assert finding.evidence["off_hours_per_week"] == 118
    assert finding.evidence["stopped_hours_per_week"] == 113  # each start an hour before traffic
    assert "from 19:00 at UTC+1 (a guessed zone)" in finding.message
    assert "Mon-Thu 18:00 to 08:00 next day (14 h each); Fri 18:00 to Mon 08:00 (62 h)" in finding.message
    price = CATALOG.hourly_price("ml.c5.xlarge", "us-east-1")
    assert price is not None
    rec = finding.recommendation
    assert rec.action == "off-hours"
    assert rec.monthly_savings_usd == pytest.approx(price * 113 * 730 / 168, abs=0.02)
    # No role configured: no calls, and the plan says what is missing.
    assert "change" not in rec.details and "scheduler_role_arn" in rec.details["change_missing"]
    assert "measure it" in rec.details["start_up"]


def test_does_not_fire_on_an_endpoint_called_around_the_clock() -> None:
    raw = hourly_frame(CPUUtilization__Average=160.0, CPUUtilization__Maximum=200.0,
                       MemoryUtilization__Average=50.0, MemoryUtilization__Maximum=55.0,
                       Invocations__Sum=list(1000 + 800 * np.sin(2 * np.pi * np.arange(14 * 24) / 24)))
    assert judged(raw) == []


def test_an_hour_with_one_invocation_is_never_stopped() -> None:
    raw = office_hours_raw()
    index = pd.DatetimeIndex(raw.index)
    # One request on one Wednesday at 02:00 UTC, in one week of the two.
    wednesday_2am = raw.index[(index.day_of_week == 2) & (index.hour == 2)][0]
    raw.loc[wednesday_2am, "Invocations:Sum"] = 1.0
    (finding,) = judged(raw)
    spans = [(p["from"], p["to"]) for p in finding.evidence["off_periods_utc"]]
    assert ("Tue 18:00", "Wed 02:00") in spans  # the night stops before that hour...
    assert not any(f.startswith("Wed 0") for f, _ in spans)  # ...and 03:00-08:00 is too short to stop
    assert finding.evidence["off_hours_per_week"] == 118 - 14 + 8


def test_a_nightly_call_leaves_no_run_long_enough() -> None:
    raw = office_hours_raw(traffic_days=(0, 1, 2, 3, 4, 5, 6))
    index = pd.DatetimeIndex(raw.index)
    raw.loc[index.hour == 2, "Invocations:Sum"] = 5.0  # a batch job calls it every night at 02:00
    assert judged(raw, config(min_off_hours=10)) == []
    assert judged(raw)  # runs of 8 hours (18:00-02:00) still pass the default of 6


def test_too_few_weeks_is_not_judged() -> None:
    assert judged(office_hours_raw(days=7)) == []
    assert judged(office_hours_raw(days=7), config(min_weeks=1))


def test_busy_instances_without_invocations_are_not_off() -> None:
    raw = office_hours_raw()
    raw["CPUUtilization:Maximum"] = 200.0  # something runs at night: not idle
    assert judged(raw) == []


def test_an_idle_endpoint_is_idle_not_off_hours() -> None:
    assert off_periods(np.ones(168, dtype=bool), 6) == ()


def test_an_endpoint_of_several_variants_is_not_judged() -> None:
    two = endpoint("claims", variants=(VARIANT, Variant("B", "ml.c5.xlarge", 1)))
    assert judged(office_hours_raw(), ep=two) == []  # stopping it stops both: no one variant's plan


# --- an endpoint that hosts inference components: the components' Invocations -----------------------

def judged_components(managed: ManagedScaling | None, calls: bool = True) -> list:
    """A component endpoint of two instances: its variant publishes no Invocations (as AWS), its two
    components office-hours traffic between them (one in the mornings, one in the afternoons)."""
    raw = office_hours_raw()
    hours = pd.DatetimeIndex(raw.index).hour
    component_calls = pd.DataFrame({
        "chat": raw["Invocations:Sum"].where(hours < 13), "embed": raw["Invocations:Sum"].where(hours >= 13)})
    raw = raw.drop(columns=["Invocations:Sum"])
    variant = replace(VARIANT, instance_count=2, managed_scaling=managed)
    ep = replace(endpoint("llm", variants=(variant,)), autoscaling_known=True, inference_components=(
        InferenceComponent("chat", "AllTraffic", "InService", copy_count=1),
        InferenceComponent("embed", "AllTraffic", "InService", copy_count=1)))
    view = replace(assessment(ep, raw), config=AuditConfig(),
                   component_calls=component_calls if calls else pd.DataFrame())
    return [f for f in judge_endpoint(view, CATALOG, AuditConfig()) if f.rule == "off-hours"]


def test_a_component_endpoint_is_judged_on_its_components_calls_summed_hour_by_hour() -> None:
    (finding,) = judged_components(ManagedScaling(0, 4))
    assert [p["hours"] for p in finding.evidence["off_periods_utc"]] == [14, 14, 14, 14, 62]
    assert finding.message.startswith("No component call in any week")
    price = CATALOG.hourly_price("ml.c5.xlarge", "us-east-1")
    assert price is not None
    rec = finding.recommendation
    assert rec.monthly_savings_usd == pytest.approx(2 * price * 113 * 730 / 168, abs=0.02)
    assert "monthly_savings_usd_at_min_instance_count_0" not in rec.details
    assert judged_components(ManagedScaling(0, 4), calls=False) == []  # nothing collected: cannot tell


def test_component_scale_to_zero_defers_only_where_off_hours_would_fire() -> None:
    """weekly_off_periods is what component-scale-to-zero reads: none where off-hours is turned off or
    skipped, so the weekly pattern is then that rule's to judge."""
    from auditor.kinds.endpoints.rules.off_hours import weekly_off_periods

    ep = endpoint("claims", variants=(VARIANT,))
    view = assessment(ep, office_hours_raw())
    assert len(weekly_off_periods(view, AuditConfig())) == 5
    assert weekly_off_periods(view, config(enabled=False)) == ()
    skipped = replace(view, endpoint=replace(ep, skipped_rules=frozenset({"off-hours"})))
    assert weekly_off_periods(skipped, AuditConfig()) == ()


def test_the_saving_is_what_the_copies_schedule_frees_above_managed_scalings_floor() -> None:
    price = CATALOG.hourly_price("ml.c5.xlarge", "us-east-1")
    assert price is not None
    full = round(2 * price * 113 * 730 / 168, 2)
    (floor_one,) = judged_components(ManagedScaling(1, 4))
    assert floor_one.recommendation.monthly_savings_usd == pytest.approx(full / 2, abs=0.02)
    assert floor_one.recommendation.details["monthly_savings_usd_at_min_instance_count_0"] == pytest.approx(full)
    (unmanaged,) = judged_components(None)  # no managed scaling: the instances stay
    assert unmanaged.recommendation.monthly_savings_usd == 0
    assert f"${full:,.2f}/month with MinInstanceCount 0." in unmanaged.message


# --- the change, against botocore's service models -------------------------------------------------

SESSION = botocore.session.get_session()


def validate(call: dict) -> None:
    model = SESSION.get_service_model(call["service"])
    shape = model.operation_model(call["operation"]).input_shape
    report = ParamValidator().validate(call["params"], shape)
    assert not report.has_errors(), report.generate_report()


def validate_input(operation: str, body: dict) -> None:
    shape = SESSION.get_service_model("sagemaker").operation_model(operation).input_shape
    report = ParamValidator().validate(body, shape)
    assert not report.has_errors(), report.generate_report()


def test_schedules_delete_and_create_the_endpoint_with_universal_targets() -> None:
    (finding,) = judged(office_hours_raw(), config(scheduler_role_arn=ROLE))
    details = finding.recommendation.details
    calls = details["change"]
    for call in calls:
        validate(call)
    assert {c["operation"] for c in calls} == {"CreateSchedule"}
    stop, start = calls
    assert stop["params"]["Target"]["Arn"] == "arn:aws:scheduler:::aws-sdk:sagemaker:deleteEndpoint"
    assert start["params"]["Target"]["Arn"] == "arn:aws:scheduler:::aws-sdk:sagemaker:createEndpoint"
    assert stop["params"]["ScheduleExpression"] == "cron(0 18 ? * MON,TUE,WED,THU,FRI *)"
    assert start["params"]["ScheduleExpression"] == "cron(0 7 ? * MON,TUE,WED,THU,FRI *)"
    assert stop["params"]["Target"]["RoleArn"] == "arn:aws:iam::123456789012:role/auditor-off-hours"
    delete_body = json.loads(stop["params"]["Target"]["Input"])
    create_body = json.loads(start["params"]["Target"]["Input"])
    validate_input("DeleteEndpoint", delete_body)
    validate_input("CreateEndpoint", create_body)
    assert create_body == {"EndpointName": "claims", "EndpointConfigName": "claims-config"}
    assert "DeleteSchedule" in details["rollback"]


def test_a_long_endpoint_name_gives_valid_schedule_names() -> None:
    ep = replace(endpoint("e" * 63), tags={"owner": "x@example.com", "aws:cloudformation:stack-name": "s"})
    change = off_hours_change(ep, (OffPeriod(18, 14),), 60, ROLE)
    for call in change["change"]:
        validate(call)
        assert len(call["params"]["Name"]) <= 64
    body = json.loads(change["change"][1]["params"]["Target"]["Input"])
    assert body["Tags"] == [{"Key": "owner", "Value": "x@example.com"}]  # aws: tags are AWS's to set


def test_inference_components_get_scheduled_actions_on_their_copies() -> None:
    ep = replace(endpoint("llm"), autoscaling_known=True, inference_components=(
        InferenceComponent("llm-ic", "AllTraffic", "InService", copy_count=2),))
    change = off_hours_change(ep, (OffPeriod(18, 14), OffPeriod(42, 14)), 60, None)
    for call in change["change"]:
        validate(call)
    actions = [c["params"] for c in change["change"] if c["operation"] == "PutScheduledAction"]
    assert {a["ScalableDimension"] for a in actions} == {"sagemaker:inference-component:DesiredCopyCount"}
    assert [a["ScalableTargetAction"] for a in actions] == [{"MinCapacity": 0, "MaxCapacity": 0},
                                                           {"MinCapacity": 2, "MaxCapacity": 2}]
    assert "MinInstanceCount 0" in change["requires"]  # no managed instance scaling to zero yet
    assert "several minutes" in change["start_up"]
    assert "DeregisterScalableTarget inference-component/llm-ic." in change["rollback"]  # it had no target
    scaled = replace(ep, variants=(replace(ep.variants[0], managed_scaling=ManagedScaling(0, 4)),))
    assert "requires" not in off_hours_change(scaled, (OffPeriod(18, 14),), 60, None)


def test_an_autoscaled_component_gets_its_own_range_back_not_a_pinned_count() -> None:
    """Pinning MinCapacity = MaxCapacity = today's copies each morning would switch its autoscaling off."""
    component = InferenceComponent("llm-ic", "AllTraffic", "InService", copy_count=2, autoscaling=AutoScaling(1, 6))
    ep = replace(endpoint("llm"), autoscaling_known=True, inference_components=(component,))
    change = off_hours_change(ep, (OffPeriod(18, 14),), 60, None)
    for call in change["change"]:
        validate(call)
    register, *actions = (c["params"] for c in change["change"])
    assert (register["MinCapacity"], register["MaxCapacity"]) == (0, 6)
    assert [a["ScalableTargetAction"] for a in actions] == [{"MinCapacity": 0, "MaxCapacity": 0},
                                                           {"MinCapacity": 1, "MaxCapacity": 6}]
    assert "RegisterScalableTarget inference-component/llm-ic MinCapacity 1 MaxCapacity 6" in change["rollback"]


def test_components_whose_targets_were_not_read_carry_no_calls() -> None:
    ep = replace(endpoint("llm"), inference_components=(
        InferenceComponent("llm-ic", "AllTraffic", "InService", copy_count=2),))
    change = off_hours_change(ep, (OffPeriod(18, 14),), 60, None)
    assert "change" not in change and "were not read" in change["change_missing"]


def test_copies_of_unknown_count_carry_no_calls() -> None:
    ep = replace(endpoint("llm"), inference_components=(InferenceComponent("llm-ic", "AllTraffic", "InService"),))
    change = off_hours_change(ep, (OffPeriod(18, 14),), 60, None)
    assert "change" not in change and "llm-ic" in change["change_missing"]


def test_the_rule_is_registered_for_real_time_only() -> None:
    assert {k.value for k in RULE.judges} == {"real-time"}


def test_the_change_in_the_details_becomes_the_plans_change() -> None:
    from auditor.recommend.rule_changes import change_from_details
    (finding,) = judged(office_hours_raw(), config(scheduler_role_arn=ROLE))
    change = change_from_details(finding.recommendation.details)
    assert change is not None and [c.operation for c in change.calls] == ["CreateSchedule", "CreateSchedule"]
    assert change.rollback.startswith("DeleteSchedule")
    (without_role,) = judged(office_hours_raw())
    assert change_from_details(without_role.recommendation.details) is None
