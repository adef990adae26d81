"""async-scale-from-zero and component-scale-to-zero, end to end through `audit run` against the emulator:
an async endpoint stuck at zero gets AWS's step policy and its alarm, one that has them gets nothing, an
idle async endpoint that never scales to zero gets MinCapacity 0 with them; a component endpoint idle on
no weekly pattern gets MinInstanceCount 0 with each component's scale-from-zero policy, one idle on a
weekly pattern does not (off-hours' case). Every request body validates against botocore's models; a
denied DescribeAlarms or DescribeScalingPolicies is an error line and no verdict."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import boto3
import botocore.session
import numpy as np
import pytest
from botocore.validate import ParamValidator
from typer.testing import CliRunner

from auditor.act.binding import call_refusal
from auditor.act.plan import parse_plan
from auditor.cli import app
from auditor.config import AuditConfig
from auditor.kinds.endpoints import change as endpoint_change
from auditor.kinds.endpoints.binding import content_problem
from auditor.kinds.endpoints.judge import judge_endpoint
from auditor.kinds.endpoints.models import AutoScaling, EndpointKind, ReadScalingPolicy, Variant
from auditor.models import parse_reference
from auditor_emulator.fleet import (
    INVOCATION_NS,
    ComponentSpec,
    EndpointSpec,
    Load,
    VariantSpec,
    async_variant,
    day_night_counts,
    demo_fleet,
    seed_fleet,
)
from auditor_emulator.server import ACCOUNT_ID, Emulator
from conftest import check_report_json, seeded_emulator, utc_now
from helpers import endpoint, hourly_frame
from test_rules_traffic import CATALOG, assessment

runner = CliRunner()
SESSION = botocore.session.get_session()
# Hours of the 14-day window without any component invocation: three stretches at different hours of
# different weekdays (no weekly pattern).
IRREGULAR_IDLE = ((30, 46), (150, 171), (260, 276))


def validate(service: str, operation: str, params: dict[str, Any]) -> None:
    shape = SESSION.get_service_model(service).operation_model(operation).input_shape
    report = ParamValidator().validate(params, shape)
    assert not report.has_errors(), report.generate_report()


def async_spec(name: str, **variant: Any) -> EndpointSpec:
    return EndpointSpec(name, (async_variant("ml.m5.xlarge", 1, arrivals_per_hour=2, processing_seconds=60,
                                             memory=Load(40, 2), **variant),), kind="async")


def fleet() -> list[EndpointSpec]:
    # At zero instances every night (00:00-07:59 UTC) while requests keep arriving: stuck there.
    night_at_zero = {"autoscaling": (0, 2), "counts": day_night_counts(0, 1, range(8, 24))}
    return [
        async_spec("batch-stuck", **night_at_zero),
        async_spec("batch-has-step", **night_at_zero),
        # Requests 08:00-11:59 UTC only, one instance always: idle 20 h a day, never at zero.
        async_spec("batch-idle", traffic_hours=(8, 9, 10, 11)),
        component_spec("llm-irregular"),
        component_spec("llm-weekly"),
    ]


def component_spec(name: str) -> EndpointSpec:
    # The variant publishes no invocations for its components (each component does, below). Its
    # instances idle (CPU and GPU under off-hours' 5% ceiling) whenever no request comes, so which
    # of off-hours and component-scale-to-zero speaks turns on the pattern of the components' calls.
    return EndpointSpec(name, (VariantSpec("ml.g5.12xlarge", 2, cpu=Load(2, 0, 0.2), memory=Load(30, 1),
                                           gpu=Load(2, 0, 0.2), gpu_memory=Load(40, 1), invocations_per_hour=0),),
                        components=(ComponentSpec(f"{name}-chat", copies=2, accelerators=2, cpu_cores=8.0),))


def hour_stamps(now: datetime) -> list[datetime]:
    end = now.replace(minute=0, second=0, microsecond=0)
    return [end - timedelta(hours=14 * 24 - h) + timedelta(minutes=30) for h in range(14 * 24)]


def publish_component_calls(emulator: Emulator, now: datetime) -> None:
    """Each component's Invocations (AWS/SageMaker, InferenceComponentName): an hour without any has no datum."""
    stamps = hour_stamps(now)
    idle = {h for first, end in IRREGULAR_IDLE for h in range(first, end)}
    for component, busy in (("llm-irregular-chat", lambda h, s: h not in idle),
                            ("llm-weekly-chat", lambda h, s: s.weekday() < 5 and 8 <= s.hour < 18)):
        datums = [{"MetricName": "Invocations", "Timestamp": s, "Value": 120.0, "Unit": "None",
                   "Dimensions": [{"Name": "InferenceComponentName", "Value": component}]}
                  for h, s in enumerate(stamps) if busy(h, s)]
        emulator.publish_metrics(INVOCATION_NS, datums, "us-east-1")


def managed_scaling(emulator: Emulator, endpoint: str) -> None:
    """ManagedInstanceScaling on the component endpoints' config (min 1, max 4), as DescribeEndpointConfig answers."""
    backend = emulator.backend("sagemaker", "us-east-1", ACCOUNT_ID)
    for variant in backend.endpoint_configs[f"{endpoint}-config"].production_variants:
        variant["ManagedInstanceScaling"] = {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 4}


def add_step_policy(endpoint: str) -> None:
    """What AWS's guide sets up: a step policy, and an alarm on HasBacklogWithoutCapacity that triggers it."""
    scaling = boto3.client("application-autoscaling", region_name="us-east-1")
    arn = scaling.put_scaling_policy(
        PolicyName="from-zero", ServiceNamespace="sagemaker", ResourceId=f"endpoint/{endpoint}/variant/AllTraffic",
        ScalableDimension="sagemaker:variant:DesiredInstanceCount", PolicyType="StepScaling",
        StepScalingPolicyConfiguration={"AdjustmentType": "ChangeInCapacity", "Cooldown": 300,
                                        "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]},
    )["PolicyARN"]
    boto3.client("cloudwatch", region_name="us-east-1").put_metric_alarm(
        AlarmName=f"{endpoint}-wake", Namespace="AWS/SageMaker", MetricName="HasBacklogWithoutCapacity",
        Dimensions=[{"Name": "EndpointName", "Value": endpoint}], Statistic="Average", Period=60,
        EvaluationPeriods=2, Threshold=1.0, ComparisonOperator="GreaterThanOrEqualToThreshold", AlarmActions=[arn])


def seed(emulator: Emulator, specs: list[EndpointSpec]) -> None:
    now = utc_now()
    seed_fleet(emulator, specs, now=now)
    names = {s.name for s in specs}
    for name in ("llm-irregular", "llm-weekly"):
        if name in names:
            managed_scaling(emulator, name)
    if names & {"llm-irregular", "llm-weekly"}:
        publish_component_calls(emulator, now)
    if "batch-has-step" in names:
        add_step_policy("batch-has-step")


@pytest.fixture(scope="module")
def report(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    home = tmp_path_factory.mktemp("zero")
    with seeded_emulator(emulator, home, lambda emu: seed(emu, fleet())):
        out = home / "report.json"
        result = runner.invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
        assert result.exit_code == 0, result.output
        yield check_report_json(json.loads(out.read_text()))


def findings(report: dict, rule: str) -> dict[str, dict]:
    return {f["resource"]["name"]: f for f in report["findings"] if f["rule"] == rule}


def plan_of(report: dict, endpoint: str) -> dict:
    (plan,) = [p for p in report["plans"] if p["resource"]["name"] == endpoint]
    return plan


def test_the_endpoint_stuck_at_zero_gets_the_step_policy_and_its_alarm(report: dict) -> None:
    found = findings(report, "async-scale-from-zero")
    assert set(found) == {"batch-stuck", "batch-idle"}  # batch-has-step has AWS's fix already
    stuck = found["batch-stuck"]
    assert stuck["evidence"]["hours_with_backlog_without_capacity"] >= 7 * 8
    assert stuck["evidence"]["max_wait_seconds"] > 0
    assert "waited up to" in stuck["message"]
    plan = plan_of(report, "batch-stuck")
    assert plan["proposed"]["action"] == "scale-from-zero" and plan["monthly_savings_usd"] == 0
    assert plan["risk"]["level"] == "low" and any("the oldest" in b for b in plan["risk"]["basis"])
    calls = plan["change"]["calls"]
    assert [(c["service"], c["operation"]) for c in calls] == [
        ("application-autoscaling", "PutScalingPolicy"), ("cloudwatch", "PutMetricAlarm")]
    policy, alarm = (c["params"] for c in calls)
    for call in calls:
        validate(call["service"], call["operation"], call["params"])
    assert policy["PolicyType"] == "StepScaling" and policy["ResourceId"] == "endpoint/batch-stuck/variant/AllTraffic"
    assert policy["StepScalingPolicyConfiguration"]["StepAdjustments"] == [
        {"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]
    assert alarm["MetricName"] == "HasBacklogWithoutCapacity"
    assert alarm["Dimensions"] == [{"Name": "EndpointName", "Value": "batch-stuck"}]
    (reference,) = alarm["AlarmActions"]
    parsed = parse_reference(reference)
    assert parsed is not None and (parsed.operation, parsed.name, parsed.field) == (
        "PutScalingPolicy", policy["PolicyName"], "PolicyARN")


def test_the_idle_async_endpoint_gets_min_zero_with_the_policy_and_the_idle_hours_saving(report: dict) -> None:
    idle = findings(report, "async-scale-from-zero")["batch-idle"]
    assert idle["evidence"]["case"] == "never-at-zero"
    assert idle["evidence"]["idle_hours"] >= 13 * 20  # 20 idle hours a day
    plan = plan_of(report, "batch-idle")
    assert plan["proposed"]["action"] == "scale-to-zero" and plan["monthly_savings_usd"] > 0
    assert plan["risk"]["level"] == "medium"
    assert any("waits in the queue until an instance has started" in b for b in plan["risk"]["basis"])
    calls = plan["change"]["calls"]
    assert [c["operation"] for c in calls] == ["RegisterScalableTarget", "PutScalingPolicy", "PutScalingPolicy",
                                               "PutMetricAlarm"]
    for call in calls:
        validate(call["service"], call["operation"], call["params"])
    register, tracking = calls[0]["params"], calls[1]["params"]
    assert (register["MinCapacity"], register["MaxCapacity"]) == (0, 1)
    spec = tracking["TargetTrackingScalingPolicyConfiguration"]["CustomizedMetricSpecification"]
    assert spec["MetricName"] == "ApproximateBacklogSizePerInstance"
    # The saving: the idle instance-hours (less an hour of each stretch) at the async rate, per month.
    assert plan["monthly_savings_usd"] < idle["recommendation"]["current_monthly_usd"]


def test_the_component_endpoint_idle_on_no_weekly_pattern_scales_to_zero(report: dict) -> None:
    found = findings(report, "component-scale-to-zero")
    assert set(found) == {"llm-irregular"}  # llm-weekly's quiet hours are off-hours' case
    finding = found["llm-irregular"]
    assert finding["evidence"]["idle_hours"] == sum(end - first for first, end in IRREGULAR_IDLE)
    assert "provisioning an instance again takes several minutes" in finding["message"]
    rec = finding["recommendation"]
    assert rec["action"] == "managed-scaling" and rec["monthly_savings_usd"] > 0
    details = rec["details"]
    scaling = details["managed_instance_scaling"]
    assert scaling == {"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": 4}
    model = SESSION.get_service_model("sagemaker")
    report_ = ParamValidator().validate(scaling, model.shape_for("ProductionVariantManagedInstanceScaling"))
    assert not report_.has_errors(), report_.generate_report()
    then = details["then"]
    assert [c["operation"] for c in then] == ["RegisterScalableTarget", "PutScalingPolicy", "PutScalingPolicy",
                                              "PutMetricAlarm"]
    for call in then:
        validate(call["service"], call["operation"], call["params"])
    register, _tracking, step, alarm = (c["params"] for c in then)
    assert register["ResourceId"] == "inference-component/llm-irregular-chat"
    assert register["ScalableDimension"] == "sagemaker:inference-component:DesiredCopyCount"
    assert register["MinCapacity"] == 0
    assert step["PolicyType"] == "StepScaling"
    assert alarm["MetricName"] == "NoCapacityInvocationFailures"
    assert alarm["Dimensions"] == [{"Name": "InferenceComponentName", "Value": "llm-irregular-chat"}]
    assert alarm["AlarmActions"] == [f"${{PutScalingPolicy:{step['PolicyName']}.PolicyARN}}"]
    assert details["risk"]["level"] == "medium"


def test_exactly_one_rule_speaks_for_each_component_endpoint(report: dict) -> None:
    """off-hours reads the components' Invocations summed hour by hour (the variant publishes none for
    them): llm-weekly, called Mon-Fri 08-18 UTC only, gets off-hours and its scheduled copies to zero and
    back; llm-irregular, idle at irregular times, gets component-scale-to-zero and not off-hours."""
    off = findings(report, "off-hours")
    assert set(off) & {"llm-weekly", "llm-irregular"} == {"llm-weekly"}
    assert "llm-weekly" not in findings(report, "component-scale-to-zero")
    weekly = off["llm-weekly"]
    assert weekly["message"].startswith("No component call in any week")
    assert weekly["evidence"]["hosts_inference_components"] is True
    periods = weekly["evidence"]["off_periods_utc"]
    assert [(p["from"], p["to"], p["hours"]) for p in periods] == [
        ("Mon 18:00", "Tue 08:00", 14), ("Tue 18:00", "Wed 08:00", 14), ("Wed 18:00", "Thu 08:00", 14),
        ("Thu 18:00", "Fri 08:00", 14), ("Fri 18:00", "Mon 08:00", 62)]
    rec = weekly["recommendation"]
    assert rec["action"] == "off-hours" and rec["monthly_savings_usd"] > 0
    # Managed scaling keeps MinInstanceCount 1 of the 2 instances: the copies' schedule frees the other;
    # both once a new config sets MinInstanceCount 0 (the plan's `requires`).
    assert "MinInstanceCount 0" in rec["details"]["requires"]
    assert rec["details"]["monthly_savings_usd_at_min_instance_count_0"] == pytest.approx(
        2 * rec["monthly_savings_usd"], abs=0.02)
    calls = plan_of(report, "llm-weekly")["change"]["calls"]
    for call in calls:
        validate(call["service"], call["operation"], call["params"])
    actions = [c["params"] for c in calls if c["operation"] == "PutScheduledAction"]
    assert {a["ResourceId"] for a in actions} == {"inference-component/llm-weekly-chat"}
    assert {(a["Schedule"], a["ScalableTargetAction"]["MaxCapacity"]) for a in actions} == {
        ("cron(0 18 ? * MON,TUE,WED,THU,FRI *)", 0), ("cron(0 7 ? * MON,TUE,WED,THU,FRI *)", 2)}


def test_component_invocations_come_in_the_same_metric_batches(report: dict) -> None:
    calls = report["summary"]["api_calls_by_operation"]
    assert calls["cloudwatch:DescribeAlarms"] == 1
    assert calls["application-auto-scaling:DescribeScalingPolicies"] == 1
    assert calls["cloudwatch:GetMetricData"] == 1  # five endpoints' series, their components' Invocations too


# --- what was not read is never "no policy" ---------------------------------------------------------------

@pytest.mark.parametrize("denied", ["cloudwatch:DescribeAlarms", "application-autoscaling:DescribeScalingPolicies"])
def test_a_denied_read_is_an_error_line_and_no_verdict(aws, tmp_path: Path, denied: str) -> None:
    """Only that call denied (the emulator answers it AccessDenied as AWS does), everything else read."""
    seed(aws, [async_spec("batch-stuck", autoscaling=(0, 2), counts=day_night_counts(0, 1, range(8, 24))),
               component_spec("llm-irregular")])
    service, operation = denied.split(":")
    arm = aws.faults.arm(service, operation, "access_denied", times=None, for_seconds=600)
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert arm.fired >= 1
    errors = [e["message"] for e in report["errors"] if operation in e["message"]]
    assert len(errors) == 1 and errors[0].startswith(f"access denied: {denied} in us-east-1")
    assert "async-scale-from-zero" in errors[0] and "not judged" in errors[0]
    assert findings(report, "async-scale-from-zero") == {}
    # The component rule reads the scaling targets and their policies, not the alarms.
    judged = set() if operation == "DescribeScalingPolicies" else {"llm-irregular"}
    assert set(findings(report, "component-scale-to-zero")) == judged


# --- the verdicts on the rule's own facts (pure) ------------------------------------------------------------

def _stuck_view(policies: tuple, backlog_alarms: tuple[str, ...] | None, min_capacity: int = 0):
    hours = 14 * 24
    waiting = np.zeros(hours)
    waiting[100:104] = 1
    queue = hourly_frame(HasBacklogWithoutCapacity__Maximum=list(waiting),
                         ApproximateBacklogSize__Maximum=list(waiting * 3),
                         ApproximateAgeOfOldestRequest__Maximum=list(waiting * 900))
    raw = hourly_frame(CPUUtilization__Average=50.0, CPUUtilization__Maximum=80.0, MemoryUtilization__Average=40.0,
                       MemoryUtilization__Maximum=45.0, TotalProcessingTime__SampleCount=30.0)
    scaling = AutoScaling(min_capacity, 2, tuple(f"{p.name} ({p.policy_type})" for p in policies), policies)
    ep = endpoint("jobs", kind=EndpointKind.ASYNC, variants=(Variant("AllTraffic", "ml.m5.xlarge", 1,
                                                                     autoscaling=scaling),))
    return assessment(replace(ep, autoscaling_known=True, backlog_alarms=backlog_alarms, queue_alarms=()), raw, queue)


def _judged(view) -> list:
    return [f for f in judge_endpoint(view, CATALOG, AuditConfig()) if f.rule == "async-scale-from-zero"]


def test_a_step_policy_counts_only_when_its_alarm_watches_the_backlog_without_capacity() -> None:
    step = ReadScalingPolicy("wake", "StepScaling", {"AdjustmentType": "ChangeInCapacity"}, ("jobs-wake",))
    assert _judged(_stuck_view((step,), ("jobs-wake",))) == []  # AWS's fix is there
    (finding,) = _judged(_stuck_view((step,), ("another-alarm",)))  # its alarm watches something else
    assert finding.recommendation is not None and finding.recommendation.action == "scale-from-zero"
    assert _judged(_stuck_view((step,), None)) == []  # the alarms were not read: never "no policy"


def test_an_idle_endpoint_tracking_its_backlog_keeps_its_policy_and_gets_min_zero_and_the_step() -> None:
    import numpy as np

    tracking = ReadScalingPolicy("backlog", "TargetTrackingScaling", {
        "TargetValue": 5.0, "CustomizedMetricSpecification": {"MetricName": "ApproximateBacklogSizePerInstance"}})
    view = _stuck_view((tracking,), (), min_capacity=1)
    idle = np.ones(14 * 24)
    idle[40:70] = 0  # 30 hours with nothing waiting and nothing processed
    view.queue["ApproximateBacklogSize:Maximum"] = idle
    view.queue["HasBacklogWithoutCapacity:Maximum"] = 0.0
    view.variants[0].raw["TotalProcessingTime:SampleCount"] = idle * 30
    (finding,) = _judged(view)
    rec = finding.recommendation
    assert rec is not None and rec.action == "scale-to-zero" and rec.monthly_savings_usd > 0
    assert [c["operation"] for c in rec.details["change"]] == ["RegisterScalableTarget", "PutScalingPolicy",
                                                               "PutMetricAlarm"]
    register = rec.details["change"][0]["params"]
    assert (register["MinCapacity"], register["MaxCapacity"]) == (0, 2)
    assert "MinCapacity 1 MaxCapacity 2" in rec.details["rollback"]


def test_apply_reads_the_async_plans_calls_as_the_plans_own(report: dict) -> None:
    """The binding's checks, read from the plans alone: every call names the endpoint (or a name its rule
    derives from it), and what each scaling call does is what the rule builds (MinCapacity 0 keeping the
    audited maximum; AWS's step policy; the backlog target tracking). A policy set otherwise is refused."""
    for name in ("batch-stuck", "batch-idle"):
        plan = parse_plan(plan_of(report, name))
        assert call_refusal(plan) is None, name
        for index, call in enumerate(plan.change.calls if plan.change else ()):
            assert content_problem(plan, index, call.operation, call.params) is None, (name, call.operation)
    idle = parse_plan(plan_of(report, "batch-idle"))
    assert idle.change is not None
    register = idle.change.calls[0]
    assert content_problem(idle, 0, register.operation, {**register.params, "MaxCapacity": 9}) is not None
    tracking = idle.change.calls[1]
    louder = {**tracking.params, "TargetTrackingScalingPolicyConfiguration": {
        **tracking.params["TargetTrackingScalingPolicyConfiguration"], "ScaleOutCooldown": 0}}
    assert content_problem(idle, 1, tracking.operation, louder) is not None


def test_rising_queue_latency_does_not_advise_the_step_policy_an_endpoint_has(report: dict) -> None:
    rising = findings(report, "rising-queue-latency")
    assert "add a step-scaling policy" in rising["batch-stuck"]["message"]
    assert "add a step-scaling policy" not in rising["batch-has-step"]["message"]
    assert "did not keep them from waiting" in rising["batch-has-step"]["message"]


def test_apply_may_put_the_alarms_these_plans_name(report: dict) -> None:
    """The apply role's PutMetricAlarm resources (deploy/iam-apply-policy.json) cover every alarm these
    rules name (IAM's * and ? match as fnmatch's do here: no [ in the names)."""
    policy = json.loads((Path(__file__).parent.parent / "deploy" / "iam-apply-policy.json").read_text())
    (allowed,) = [s["Resource"] for s in policy["Statement"] if s.get("Sid") == "PutOnlyTheAlarmsPlansName"]
    stuck = plan_of(report, "batch-stuck")["change"]["calls"]
    component = findings(report, "component-scale-to-zero")["llm-irregular"]["recommendation"]["details"]["then"]
    names = [c["params"]["AlarmName"] for c in [*stuck, *component] if c["operation"] == "PutMetricAlarm"]
    assert len(names) == 2
    for name in names:
        arn = f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{name}"
        assert any(fnmatchcase(arn, pattern) for pattern in allowed), name


def test_the_demos_async_endpoint_stuck_at_zero_gets_the_plan_and_its_component_endpoint_none(
        emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The demo's batch-scoring-async (MinCapacity 0, target tracking on its backlog only, requests waiting
    with no instance) and llm-components (traffic every day: no stretch to scale to zero in)."""
    specs = [s for s in demo_fleet() if s.name in ("batch-scoring-async", "llm-components")]
    assert len(specs) == 2
    with seeded_emulator(emulator, tmp_path_factory.mktemp("demo-zero"),
                         lambda emu: seed_fleet(emu, specs, now=utc_now())) as home:
        out = home / "report.json"
        result = runner.invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
        assert result.exit_code == 0, result.output
        demo = check_report_json(json.loads(out.read_text()))
    assert set(findings(demo, "async-scale-from-zero")) == {"batch-scoring-async"}
    assert findings(demo, "component-scale-to-zero") == {}
    plan = plan_of(demo, "batch-scoring-async")
    assert plan["proposed"]["action"] == "scale-from-zero" and plan["risk"]["level"] == "low"
    assert [c["operation"] for c in plan["change"]["calls"]] == ["PutScalingPolicy", "PutMetricAlarm"]


@pytest.mark.skipif(not hasattr(endpoint_change, "MANAGED_SCALING"),
                    reason="the managed-scaling change (design C3) is built once helper native's change.py is merged")
def test_the_component_plan_makes_the_new_config_then_each_components_calls(report: dict) -> None:
    plan = plan_of(report, "llm-irregular")
    calls = plan["change"]["calls"]
    operations = [c["operation"] for c in calls]
    update = operations.index("UpdateEndpoint")
    assert operations[0] == "CreateEndpointConfig" and operations[update + 1:] == [
        "RegisterScalableTarget", "PutScalingPolicy", "PutScalingPolicy", "PutMetricAlarm"]
    (variant,) = calls[0]["params"]["ProductionVariants"]
    assert variant["ManagedInstanceScaling"] == {"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": 4}
    for call in calls:
        validate(call["service"], call["operation"], call["params"])
    parsed = parse_plan(plan)
    assert call_refusal(parsed) is None
    assert parsed.change is not None
    for index, call in enumerate(parsed.change.calls):
        assert content_problem(parsed, index, call.operation, call.params) is None, call.operation


def test_a_components_step_policy_on_another_alarm_does_not_stand_for_the_wake_from_zero() -> None:
    """A step policy the component has (scaling out on its GPU, say) is triggered by an alarm that
    sees no datapoint at zero copies: the plan still adds AWS's step policy on
    NoCapacityInvocationFailures and its alarm; the rule's own policy, once there, is not put twice."""
    from auditor.kinds.endpoints.models import InferenceComponent
    from auditor.kinds.endpoints.rules.component_scale_to_zero import component_calls, policy_name

    def calls_with(policy: ReadScalingPolicy) -> list[str]:
        scaling = AutoScaling(1, 4, read_policies=(policy,))
        component = InferenceComponent("chat", "AllTraffic", "InService", copy_count=2, autoscaling=scaling)
        calls, _ = component_calls(component, 600.0)
        return [c["operation"] for c in calls]

    gpu_step = ReadScalingPolicy("chat-gpu-step", "StepScaling", {"AdjustmentType": "ChangeInCapacity"},
                                 ("chat-gpu-high",))
    assert calls_with(gpu_step) == ["RegisterScalableTarget", "PutScalingPolicy", "PutScalingPolicy",
                                    "PutMetricAlarm"]
    own = ReadScalingPolicy(policy_name("chat", "scale-from-zero"), "StepScaling",
                            {"AdjustmentType": "ChangeInCapacity"}, ("chat-wake",))
    assert calls_with(own) == ["RegisterScalableTarget", "PutScalingPolicy"]
