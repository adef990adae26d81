"""Counts advised for a variant that hosts inference components hold every copy, and managed
instance scaling counts as autoscaling. SageMaker's answers through botocore's Stubber (the
emulator cannot create inference components); the metrics from the emulator's CloudWatch.

The fleet: 3 x ml.g5.12xlarge (48 vCPUs, 4 GPUs, 192 GiB each) hosting ten copies of one
component, each reserving 4 cores, 1 GPU and 16 GiB: no fewer than 3 of these instances hold them."""

from __future__ import annotations

import math
from datetime import timedelta

import boto3
from botocore.stub import Stubber

from auditor.catalog import load_catalog
from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.kinds.endpoints.packing import Placement, Reservation, instances_to_hold
from auditor.pipeline import run_audit
from auditor.report.document import report_to_dict
from conftest import utc_now
from test_inference_components import describe_response

ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm-host"
CATALOG = load_catalog()
COPIES = [Placement("chat-7b", 10, Reservation(4.0, 1.0, 16384.0))]


def stub(client, now, managed_scaling: dict | None, listed: bool = True) -> Stubber:
    stubber = Stubber(client)
    running = {"VariantName": "AllTraffic", "CurrentInstanceCount": 3, "DesiredInstanceCount": 3,
               "CurrentWeight": 1.0, "DesiredWeight": 1.0}
    configured = {"VariantName": "AllTraffic", "InstanceType": "ml.g5.12xlarge", "InitialInstanceCount": 3,
                  "InitialVariantWeight": 1.0}
    if managed_scaling is not None:
        configured["ManagedInstanceScaling"] = managed_scaling
    stubber.add_response("search", {"Results": [{"Endpoint": {
        "EndpointName": "llm-host", "EndpointArn": ARN, "EndpointConfigName": "llm-host-config",
        "EndpointStatus": "InService", "CreationTime": now - timedelta(days=60),
        "LastModifiedTime": now - timedelta(days=60), "ProductionVariants": [running],
    }}]})
    stubber.add_response("describe_endpoint_config", {
        "EndpointConfigName": "llm-host-config", "EndpointConfigArn": ARN + "-config",
        "CreationTime": now - timedelta(days=60), "ProductionVariants": [configured],
    }, {"EndpointConfigName": "llm-host-config"})
    if not listed:
        stubber.add_client_error("list_inference_components", "InternalFailure", "try again", 500,
                                 expected_params={"EndpointNameEquals": "llm-host"})
        stubber.activate()
        return stubber
    stubber.add_response("list_inference_components", {"InferenceComponents": [
        {"InferenceComponentName": "chat-7b", "InferenceComponentArn": f"{ARN}/ic/chat-7b",
         "EndpointName": "llm-host", "EndpointArn": ARN, "VariantName": "AllTraffic",
         "InferenceComponentStatus": "InService", "CreationTime": now, "LastModifiedTime": now}]},
        {"EndpointNameEquals": "llm-host"})
    stubber.add_response("describe_inference_component",
                         describe_response("chat-7b", {"copies": 10, "cpu": 4.0, "gpu": 1.0, "memory": 16384}, now),
                         {"InferenceComponentName": "chat-7b"})
    stubber.activate()
    return stubber


def publish(now) -> None:
    """Day and night traffic; CPU follows it (10-40% of 48 vCPUs), GPUs at 20%, memory at 30%."""
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    end = now.replace(minute=0, second=0, microsecond=0)
    variant = [{"Name": "EndpointName", "Value": "llm-host"}, {"Name": "VariantName", "Value": "AllTraffic"}]
    instance, invocations = [], []
    for hour in range(14 * 24):
        stamp = end - timedelta(hours=14 * 24 - hour) + timedelta(minutes=30)
        load = 0.5 - 0.5 * math.cos(2 * math.pi * stamp.hour / 24)  # 0 at midnight, 1 at noon
        cpu = 10 + 30 * load
        for metric, value in (("CPUUtilization", cpu * 48), ("MemoryUtilization", 30.0), ("DiskUtilization", 10.0),
                              ("GPUUtilization", 80.0), ("GPUMemoryUtilization", 160.0)):
            instance.append({"MetricName": metric, "Timestamp": stamp, "Dimensions": variant,
                             "StatisticValues": {"SampleCount": 180, "Sum": value * 180, "Minimum": value * 0.8,
                                                 "Maximum": value}})
        count = 600 + 5400 * load
        invocations.append({"MetricName": "Invocations", "Timestamp": stamp, "Dimensions": variant,
                            "StatisticValues": {"SampleCount": count, "Sum": count, "Minimum": 1, "Maximum": 1}})
    for namespace, data in (("/aws/sagemaker/Endpoints", instance), ("AWS/SageMaker", invocations)):
        for i in range(0, len(data), 1000):
            cloudwatch.put_metric_data(Namespace=namespace, MetricData=data[i : i + 1000])


def audit(now, managed_scaling: dict | None = None, listed: bool = True) -> dict:
    clients = AwsClients()
    stubber = stub(clients.client("sagemaker", "us-east-1"), now, managed_scaling, listed)
    outcome = run_audit(AuditConfig(), clients, now=now)
    stubber.assert_no_pending_responses()
    return report_to_dict(outcome.report)


def holds_every_copy(instance_type: str, count: int) -> bool:
    shape = CATALOG.shape(instance_type)
    assert shape is not None
    needed = instances_to_hold(COPIES, shape)
    return needed is not None and count >= needed


def test_every_count_advised_holds_every_copy(aws) -> None:
    now = utc_now()
    publish(now)
    doc = audit(now)
    found = {f["rule"]: f for f in doc["findings"]}
    scaling = found["no-autoscaling"]
    policy = scaling["recommendation"]["details"]["policy"]
    # Before: "autoscale 2-3 x ml.g5.12xlarge", 8 GPUs for ten one-GPU copies, and a saving claimed.
    assert policy["MinCapacity"] == 3 and policy["MaxCapacity"] >= 4
    assert scaling["evidence"]["instances_for_component_copies"] == 3
    assert scaling["recommendation"]["monthly_savings_usd"] <= 0
    assert "copies need 3 instances" in scaling["message"]
    advised = [(f["recommendation"]["instance_type"], f["recommendation"]["instance_count"])
               for f in doc["findings"] if f["recommendation"] and f["recommendation"]["action"] == "resize"]
    for plan in doc["plans"]:
        for option in (plan["proposed"], *plan["alternatives"]):
            count = option["autoscaling"]["MinCapacity"] if option["autoscaling"] else option["instance_count"]
            advised.append((option["instance_type"], count))
    assert advised and all(holds_every_copy(t, n) for t, n in advised), advised
    # Two instances hold the CPU and GPU load, but not the copies: no fewer instances of the same type.
    assert "overprovisioned-count" not in found


def test_managed_instance_scaling_counts_as_autoscaling(aws) -> None:
    now = utc_now()
    publish(now)
    doc = audit(now, {"Status": "ENABLED", "MinInstanceCount": 3, "MaxInstanceCount": 6})
    assert "no-autoscaling" not in {f["rule"] for f in doc["findings"]}
    (variant,) = doc["endpoints"][0]["variants"]
    assert variant["managed_instance_scaling"] == {"min_instances": 3, "max_instances": 6}
    # Disabled is no scaling at all.
    publish(now)
    doc = audit(now, {"Status": "DISABLED", "MinInstanceCount": 3, "MaxInstanceCount": 6})
    assert "no-autoscaling" in {f["rule"] for f in doc["findings"]}


def test_components_that_could_not_be_listed_get_no_count_advice(aws) -> None:
    now = utc_now()
    publish(now)
    doc = audit(now, listed=False)
    assert any("ListInferenceComponents" in e["message"] for e in doc["errors"])
    rules = {f["rule"] for f in doc["findings"]}
    assert not rules & {"no-autoscaling", "overprovisioned-count", "underutilized"}, rules
