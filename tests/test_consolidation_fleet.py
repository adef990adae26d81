"""The fleets issue 27's rules are designed on hold the numbers they promise: the demo's six small
models, its component endpoint and its async endpoint stuck at zero, and `consolidation_fleet`'s
traps (another VPC, another key, a busy endpoint, one-GPU models); seeded through the emulator's API."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from auditor.catalog import load_catalog
from auditor_emulator.fleet import (
    DEMO_KMS_KEY,
    DEMO_VPC,
    OTHER_KMS_KEY,
    OTHER_VPC,
    batch_scoring_async,
    consolidation_fleet,
    demo_fleet,
    fleet_datums,
    llm_components,
    reco_tiny,
    seed_fleet,
)
from auditor_emulator.published import COMPONENT_NS, INSTANCE_NS, INVOCATION_NS
from auditor_emulator.server import Emulator

NOW = datetime(2026, 12, 2, 5, 0, tzinfo=UTC)


def series(datums: list[dict[str, Any]], metric: str, stat: str, name: str | None = None) -> dict[datetime, float]:
    """metric's hourly `stat` (Average = Sum / SampleCount) by time, for dimension value `name`."""
    found = {}
    for d in datums:
        if d["MetricName"] != metric or (name is not None and d["Dimensions"][0]["Value"] != name):
            continue
        values = d["StatisticValues"]
        found[d["Timestamp"]] = values["Sum"] / values["SampleCount"] if stat == "Average" else values[stat]
    return found


def test_six_small_models_peak_low_at_different_hours_in_one_network() -> None:
    tiny = [reco_tiny(i) for i in range(1, 7)]
    assert {(s.vpc == DEMO_VPC, s.kms_key, s.network_isolation) for s in tiny} == {(True, DEMO_KMS_KEY, False)}
    assert {(v.instance_type, v.count, v.autoscaling) for s in tiny for v in s.variants} == {("ml.m5.large", 2, None)}
    datums = fleet_datums(tiny, NOW)
    vcpus = load_catalog().shape("ml.m5.large").vcpu  # type: ignore[union-attr]
    peak_hours = set()
    for spec in tiny:
        cpu = {t: v / vcpus for t, v in series(datums[INSTANCE_NS], "CPUUtilization", "Maximum", spec.name).items()}
        memory = series(datums[INSTANCE_NS], "MemoryUtilization", "Maximum", spec.name)
        assert max(cpu.values()) < 8 and max(memory.values()) < 15, spec.name
        average = series(datums[INSTANCE_NS], "CPUUtilization", "Average", spec.name)
        by_hour: dict[int, list[float]] = defaultdict(list)
        for stamp, value in average.items():
            by_hour[stamp.hour].append(value)
        peak_hours.add(max(by_hour, key=lambda h: sum(by_hour[h])))
    assert len(peak_hours) == 6  # no two peak at the same hour of the day
    # The time-aligned sum of their loads stays well under the sum of their peaks.
    summed: dict[datetime, float] = defaultdict(float)
    peaks = 0.0
    for spec in tiny:
        average = series(datums[INSTANCE_NS], "CPUUtilization", "Average", spec.name)
        peaks += max(average.values())
        for stamp, value in average.items():
            summed[stamp] += value
    assert max(summed.values()) < 0.75 * peaks


def test_the_component_endpoint_reserves_what_two_instances_hold_and_is_busy_on_it() -> None:
    spec = llm_components()
    (variant,) = spec.variants
    assert (variant.instance_type, variant.count, variant.managed_scaling) == ("ml.g5.12xlarge", 4, (1, 4))
    gpus = load_catalog().shape("ml.g5.12xlarge").gpu_count  # type: ignore[union-attr]
    reserved = sum(c.copies * c.accelerators for c in spec.components)
    assert gpus < reserved <= 2 * gpus
    datums = fleet_datums([spec], NOW)
    for component in spec.components:
        gpu = series(datums[COMPONENT_NS], "GPUUtilizationNormalized", "Average", component.name)
        assert len(gpu) == 14 * 24 and sorted(gpu.values())[len(gpu) // 2] > 50  # busy on what it reserves
        invocations = series(datums[INVOCATION_NS], "Invocations", "Sum", component.name)
        assert len(invocations) == 14 * 24  # requests every hour of every day


def test_the_async_endpoint_waits_at_zero_with_a_small_backlog() -> None:
    spec = batch_scoring_async()
    (variant,) = spec.variants
    assert variant.autoscaling == (0, 2) and variant.scaling_policy is not None
    assert variant.scaling_policy["TargetValue"] == 5.0
    assert variant.scaling_policy["CustomizedMetricSpecification"]["MetricName"] == "ApproximateBacklogSizePerInstance"
    datums = fleet_datums([spec], NOW)[INVOCATION_NS]
    stuck = series(datums, "HasBacklogWithoutCapacity", "Maximum")
    backlog = series(datums, "ApproximateBacklogSize", "Maximum")
    waiting = [backlog[t] for t, flag in stuck.items() if flag == 1]
    assert len(waiting) >= 5 * 14  # hours every day
    assert min(waiting) >= 1 and max(waiting) <= 4  # under the target: nothing starts an instance
    assert max(backlog.values()) > 5  # the nightly batch does


def test_the_demo_fleet_has_the_issue_27_endpoints_after_its_others() -> None:
    names = [s.name for s in demo_fleet()]
    assert names[-8:] == [*(f"reco-tiny-{i}" for i in range(1, 7)), "llm-components", "batch-scoring-async"]
    assert len(names) == len(set(names)) == 30


def test_the_consolidation_fleet_differs_only_where_its_docstring_says() -> None:
    fleet = {s.name: s for s in consolidation_fleet()}
    assert set(fleet) == {*(f"reco-tiny-{i}" for i in range(1, 7)), "reco-other-vpc", "reco-other-key", "reco-busy",
                          "vision-small-1", "vision-small-2"}
    assert (fleet["reco-other-vpc"].vpc, fleet["reco-other-vpc"].kms_key) == (OTHER_VPC, DEMO_KMS_KEY)
    assert (fleet["reco-other-key"].vpc, fleet["reco-other-key"].kms_key) == (DEMO_VPC, OTHER_KMS_KEY)
    for name in ("reco-busy", "vision-small-1", "vision-small-2"):
        assert (fleet[name].vpc, fleet[name].kms_key) == (DEMO_VPC, DEMO_KMS_KEY)
    datums = fleet_datums([fleet["reco-busy"]], NOW)[INSTANCE_NS]
    assert sum(series(datums, "CPUUtilization", "Average").values()) / (14 * 24) / 2 > 65  # of 2 vCPUs
    assert {(v.instance_type, v.count) for n in ("vision-small-1", "vision-small-2") for v in fleet[n].variants} == {
        ("ml.g5.xlarge", 1)}


@pytest.fixture
def seeded(aws: Emulator) -> Emulator:
    seed_fleet(aws, [*consolidation_fleet(), llm_components(), batch_scoring_async()], now=NOW)
    return aws


def test_seeded_through_the_api_with_networks_keys_components_and_scaling(seeded: Emulator) -> None:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    model = sagemaker.describe_model(ModelName="reco-other-vpc-model")
    assert (model["VpcConfig"], model["EnableNetworkIsolation"]) == (OTHER_VPC, False)
    assert sagemaker.describe_endpoint_config(EndpointConfigName="reco-other-key-config")["KmsKeyId"] == OTHER_KMS_KEY
    config = sagemaker.describe_endpoint_config(EndpointConfigName="llm-components-config")["ProductionVariants"][0]
    assert "ModelName" not in config
    assert config["ManagedInstanceScaling"] == {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 4}
    running = sagemaker.describe_endpoint(EndpointName="llm-components")["ProductionVariants"][0]
    assert running["ManagedInstanceScaling"]["MaxInstanceCount"] == 4
    listed = sagemaker.list_inference_components(EndpointNameEquals="llm-components", SortBy="Name",
                                                 SortOrder="Ascending")["InferenceComponents"]
    assert [(c["InferenceComponentName"], c["InferenceComponentStatus"]) for c in listed] == [
        ("llm-chat", "InService"), ("llm-embed", "InService"), ("llm-summarize", "InService")]
    chat = sagemaker.describe_inference_component(InferenceComponentName="llm-chat")
    assert chat["RuntimeConfig"] == {"DesiredCopyCount": 2, "CurrentCopyCount": 2}
    assert chat["Specification"]["ComputeResourceRequirements"]["NumberOfAcceleratorDevicesRequired"] == 2
    assert sagemaker.describe_model(ModelName=chat["Specification"]["ModelName"])
    scaling = boto3.client("application-autoscaling", region_name="us-east-1")
    (target,) = scaling.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    assert (target["ResourceId"], target["MinCapacity"]) == ("endpoint/batch-scoring-async/variant/AllTraffic", 0)
    (policy,) = scaling.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"]
    assert policy["PolicyType"] == "TargetTrackingScaling"
    assert sagemaker.describe_endpoint(EndpointName="batch-scoring-async")["ProductionVariants"][0][
        "CurrentInstanceCount"] == (1 if 2 <= NOW.hour < 16 else 0)
