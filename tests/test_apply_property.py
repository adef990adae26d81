"""A property of apply's write engine, against the emulator: for random sequences of (audit, drift,
apply with a fault and a signal), the endpoint is never left on a shape that no run proposed (nor a
person set), its scalable target is never lost, and the journal always says what AWS did.

- audit: a plan from the endpoint as it is now (a resize of its autoscaled variant to a drawn
  shape: CreateEndpointConfig, a rollback alarm, DeregisterScalableTarget, UpdateEndpoint, then
  RegisterScalableTarget and PutScalingPolicy as read), as the change builders make it;
- drift: someone sets the variant's count with UpdateEndpointWeightsAndCapacities;
- apply: the newest plan or an older one, with a fault armed on one call (AccessDenied, a throttle,
  a 500 after the change, a deployment that rolls back) and SIGINT at a drawn poll of the wait.

After each apply the endpoint is let settle, and `audit apply --cleanup --yes` run when the journal
left the target to register again after the deployment (what an operator does next).
"""

from __future__ import annotations

import itertools
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.act.apply import apply_plan, cleanup_lines
from auditor.act.plan import ApplyFailed, ApplyRefused
from auditor.config import ApplyConfig, AuditConfig, AwsConfig, HistoryConfig
from auditor.history.store import History
from auditor_emulator.server import Emulator
from conftest import APPLY_ROLE, seeded_emulator
from helpers import resource_json

ENDPOINT = "prop-endpoint"
RESOURCE = f"endpoint/{ENDPOINT}/variant/AllTraffic"
DIMENSION = "sagemaker:variant:DesiredInstanceCount"
SCALING_KEYS = {"ServiceNamespace": "sagemaker", "ResourceId": RESOURCE, "ScalableDimension": DIMENSION}
POLICY = {"PolicyName": "prop-invocations", "PolicyType": "TargetTrackingScaling",
          "TargetTrackingScalingPolicyConfiguration": {
              "TargetValue": 300.0,
              "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}}}
TYPES = ("ml.m5.xlarge", "ml.m5.2xlarge", "ml.c5.xlarge")
FAULTS: tuple[tuple[str, str, str] | None, ...] = (
    None,
    ("sagemaker", "UpdateEndpoint", "access_denied"),
    ("sagemaker", "UpdateEndpoint", "server_error_after"),
    ("sagemaker", "UpdateEndpoint", "throttle"),
    ("sagemaker", "CreateEndpointConfig", "server_error_after"),
    ("application-autoscaling", "RegisterScalableTarget", "access_denied"),
    ("application-autoscaling", "PutScalingPolicy", "access_denied"),
    ("deployment", "rolls back", ""),
)
_IDS = itertools.count(1)


@pytest.fixture(scope="module")
def world(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = tmp_path_factory.mktemp("property-home")

    def seed(_emu: Emulator) -> None:
        sagemaker = boto3.client("sagemaker", region_name="us-east-1")
        sagemaker.create_model(ModelName="prop-model", ExecutionRoleArn="arn:aws:iam::123456789012:role/m",
                               PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/m:1"})
        sagemaker.create_endpoint_config(EndpointConfigName="prop-config", ProductionVariants=[{
            "VariantName": "AllTraffic", "ModelName": "prop-model", "InstanceType": "ml.m5.4xlarge",
            "InitialInstanceCount": 4, "InitialVariantWeight": 1.0}])
        arn = sagemaker.create_endpoint(EndpointName=ENDPOINT, EndpointConfigName="prop-config")["EndpointArn"]
        sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "auditor:apply", "Value": "allowed"}])

    with seeded_emulator(emulator, home, seed):
        Emulator.deployments(seconds=0.2, fail_instance_types=())
        config = AuditConfig(aws=AwsConfig(regions=("us-east-1",)),
                             history=HistoryConfig(path=str(home / "history.sqlite3")),
                             apply=ApplyConfig(role_arn=APPLY_ROLE, wait_minutes=1.0))
        yield {"config": config, "sagemaker": boto3.client("sagemaker", region_name="us-east-1"),
               "scaling": boto3.client("application-autoscaling", region_name="us-east-1")}
        Emulator.deployments(seconds=2.0, fail_instance_types=())
        Emulator.faults.reset()


@dataclass
class State:
    plans: list[dict[str, Any]] = field(default_factory=list)
    allowed: set[tuple[str, int]] = field(default_factory=set)  # shapes a run proposed or a person set


def settle(sagemaker: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while True:
        described = sagemaker.describe_endpoint(EndpointName=ENDPOINT)
        if described["EndpointStatus"] == "InService" or time.monotonic() > deadline:
            return dict(described)
        time.sleep(0.05)


def shape(sagemaker: Any) -> tuple[str, int]:
    described = settle(sagemaker)
    config = sagemaker.describe_endpoint_config(EndpointConfigName=described["EndpointConfigName"])
    live = described["ProductionVariants"][0]
    return str(config["ProductionVariants"][0]["InstanceType"]), int(live.get("DesiredInstanceCount")
                                                                     or live["CurrentInstanceCount"])


def registered(scaling: Any) -> tuple[tuple[int, int] | None, set[str]]:
    keys = {"ServiceNamespace": "sagemaker", "ScalableDimension": DIMENSION}
    targets = scaling.describe_scalable_targets(**keys, ResourceIds=[RESOURCE])["ScalableTargets"]
    policies = scaling.describe_scaling_policies(**keys, ResourceId=RESOURCE)["ScalingPolicies"]
    target = (targets[0]["MinCapacity"], targets[0]["MaxCapacity"]) if targets else None
    return target, {p["PolicyName"] for p in policies}


def audit(world: dict[str, Any], kind: str, count: int) -> dict[str, Any]:
    """The plan a run would make now: the variant resized to (kind, count), its autoscaling carried."""
    sagemaker = world["sagemaker"]
    described = settle(sagemaker)
    config_name = described["EndpointConfigName"]
    config = sagemaker.describe_endpoint_config(EndpointConfigName=config_name)
    plan_id = f"pp{next(_IDS):04d}"
    variants = [{k: v[k] for k in ("VariantName", "ModelName", "InstanceType", "InitialInstanceCount",
                                   "InitialVariantWeight") if k in v} for v in config["ProductionVariants"]]
    variants[0].update(InstanceType=kind, InitialInstanceCount=count)
    new_config, alarm = f"{ENDPOINT}-{plan_id}", f"{plan_id}-AllTraffic-5xx"
    current_type, current_count = shape(sagemaker)
    calls = [
        {"service": "sagemaker", "operation": "CreateEndpointConfig", "purpose": "the copy",
         "params": {"EndpointConfigName": new_config, "ProductionVariants": variants}},
        {"service": "cloudwatch", "operation": "PutMetricAlarm", "purpose": "rollback alarm",
         "params": {"AlarmName": alarm, "Namespace": "AWS/SageMaker", "MetricName": "Invocation5XXErrors",
                    "Dimensions": [{"Name": "EndpointName", "Value": ENDPOINT}], "Statistic": "Sum", "Period": 60,
                    "EvaluationPeriods": 2, "Threshold": 1.0, "ComparisonOperator": "GreaterThanOrEqualToThreshold"}},
        {"service": "application-autoscaling", "operation": "DeregisterScalableTarget", "purpose": "first",
         "params": dict(SCALING_KEYS)},
        {"service": "sagemaker", "operation": "UpdateEndpoint", "purpose": "blue/green",
         "params": {"EndpointName": ENDPOINT, "EndpointConfigName": new_config, "DeploymentConfig": {
             "BlueGreenUpdatePolicy": {"TrafficRoutingConfiguration": {"Type": "ALL_AT_ONCE",
                                                                       "WaitIntervalInSeconds": 60},
                                       "TerminationWaitInSeconds": 0, "MaximumExecutionTimeoutInSeconds": 600},
             "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": alarm}]}}}},
        {"service": "application-autoscaling", "operation": "RegisterScalableTarget", "purpose": "again",
         "params": {**SCALING_KEYS, "MinCapacity": 2, "MaxCapacity": 6}},
        {"service": "application-autoscaling", "operation": "PutScalingPolicy", "purpose": "as read",
         "params": {**SCALING_KEYS, **POLICY}},
    ]
    return {"id": plan_id, "resource": resource_json(ENDPOINT), "variant": "AllTraffic", "measured": True,
            "risk": {"level": "low", "load_test_first": []}, "monthly_savings_usd": 100.0,
            "current": {"instance_type": current_type, "instance_count": current_count,
                        "endpoint_config_name": config_name},
            "proposed": {"instance_type": kind, "instance_count": count, "action": "resize"},
            "change": {"calls": calls, "rollback": "automatic", "waits_for": f"endpoint {ENDPOINT} InService"}}


def apply(world: dict[str, Any], plan: dict[str, Any], fault: tuple[str, str, str] | None,
          signal_at: int | None) -> None:
    """Apply `plan` with `fault` armed and SIGINT at poll `signal_at`; then check the property."""
    sagemaker, scaling, config = world["sagemaker"], world["scaling"], world["config"]
    before = settle(sagemaker)["EndpointConfigName"]
    rolls_back = fault is not None and fault[0] == "deployment"
    if rolls_back:
        Emulator.deployments(seconds=0.2, fail_instance_types=(plan["proposed"]["instance_type"],))
    elif fault is not None:
        Emulator.faults.arm(fault[0], fault[1], fault[2])  # type: ignore[arg-type]
    now, polls = [0.0], [0]

    def sleep(seconds: float) -> None:
        polls[0] += 1
        if signal_at is not None and polls[0] == signal_at + 1:
            signal.raise_signal(signal.SIGINT)
        time.sleep(min(seconds, 0.05))
        now[0] += seconds

    with History(Path(config.history.path)) as history:
        records_before = len(history.applied())
    refused = False
    try:
        apply_plan(config, plan, yes=True, sleep=sleep, clock=lambda: now[0])
    except ApplyRefused:
        refused = True
    except ApplyFailed:
        pass
    finally:
        Emulator.faults.reset()
        Emulator.deployments(seconds=0.2, fail_instance_types=())
    after = settle(sagemaker)["EndpointConfigName"]
    with History(Path(config.history.path)) as history:
        records = history.applied()
    if refused:
        assert len(records) == records_before and after == before
        return
    record = next(r for r in records if r.plan_id == plan["id"])
    # The journal says what AWS did.
    assert record.outcome != "in-progress"
    update = [s["status"] for s in record.steps if s.get("operation") == "UpdateEndpoint" and s["step"] == "call"]
    deployed = bool(update) and update[-1] in ("made", "landed")
    target = f"{ENDPOINT}-{plan['id']}"
    if record.outcome == "applied" or (deployed and not rolls_back):
        assert after == target, (record.outcome, record.message)
    if not deployed or record.outcome == "rolled-back":
        assert after == before, (record.outcome, record.message)
    # The scalable target is never lost (after the operator's cleanup where the message says so).
    if registered(scaling) != ((2, 6), {"prop-invocations"}):
        assert "audit apply --cleanup --yes" in record.message, record.message
        cleanup_lines(config, yes=True)
    assert registered(scaling) == ((2, 6), {"prop-invocations"}), (record.outcome, record.message)


# A round: maybe an audit (always in the first), maybe a person's change, then an apply of the newest
# plan or an older one, with a fault and a signal drawn.
ROUND = st.tuples(st.none() | st.tuples(st.sampled_from(TYPES), st.integers(1, 3)), st.none() | st.integers(1, 5),
                  st.integers(0, 2), st.sampled_from(FAULTS), st.none() | st.integers(0, 3))
ROUNDS = st.lists(ROUND, min_size=1, max_size=3)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(rounds=ROUNDS)
def test_no_shape_nobody_proposed_no_target_lost_and_the_journal_says_what_aws_did(
        world: dict[str, Any], rounds: list[tuple[Any, ...]]) -> None:
    sagemaker, scaling = world["sagemaker"], world["scaling"]
    if registered(scaling)[0] is None:  # each example starts autoscaled
        scaling.register_scalable_target(**SCALING_KEYS, MinCapacity=2, MaxCapacity=6)
    scaling.put_scaling_policy(**SCALING_KEYS, **POLICY)
    state = State(allowed={shape(sagemaker)})
    for number, (audited, drift, which, fault, signal_at) in enumerate(rounds):
        if audited is not None or number == 0:
            kind, count = audited or (TYPES[0], 2)
            state.plans.append(audit(world, kind, count))
            state.allowed.add((kind, count))
        if drift is not None:
            sagemaker.update_endpoint_weights_and_capacities(EndpointName=ENDPOINT, DesiredWeightsAndCapacities=[
                {"VariantName": "AllTraffic", "DesiredInstanceCount": drift}])
            state.allowed.add(shape(sagemaker))
        apply(world, state.plans[max(0, len(state.plans) - 1 - which)], fault, signal_at)
        assert shape(sagemaker) in state.allowed, (rounds, state.allowed)
