"""component-underutilized and component-packing, end to end: SageMaker's answers (inference
components cannot be created in the emulator) through botocore's Stubber, the components' metrics
from the emulator's CloudWatch."""

from __future__ import annotations

from datetime import timedelta

import boto3

from auditor.catalog import load_catalog
from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.pipeline import run_audit
from auditor.report.document import report_to_dict
from conftest import utc_now
from test_inference_components import stub_sagemaker

PRICE = load_catalog().hourly_price("ml.g5.12xlarge", "us-east-1")


def publish(now, name: str, cpu: float, gpu: float, memory: float) -> None:
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    end = now.replace(minute=0, second=0, microsecond=0)
    data = []
    for hour in range(14 * 24):
        stamp = end - timedelta(hours=14 * 24 - hour) + timedelta(minutes=30)
        for metric, value in (("CPUUtilizationNormalized", cpu), ("GPUUtilizationNormalized", gpu),
                              ("MemoryUtilizationNormalized", memory)):
            data.append({"MetricName": metric, "Timestamp": stamp, "Value": value,
                         "Dimensions": [{"Name": "InferenceComponentName", "Value": name}]})
    for i in range(0, len(data), 1000):
        cloudwatch.put_metric_data(Namespace="/aws/sagemaker/InferenceComponents", MetricData=data[i : i + 1000])


def publish_instances(now) -> None:
    """The variant's own instance metrics (ml.g5.12xlarge: 48 vCPUs and 4 GPUs, summed): 10% per GPU, as
    few reserved copies would make it (at 60% the packed plan would overload the GPUs it keeps)."""
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    end = now.replace(minute=0, second=0, microsecond=0)
    data = []
    for hour in range(14 * 24):
        stamp = end - timedelta(hours=14 * 24 - hour) + timedelta(minutes=30)
        for metric, value in (("CPUUtilization", 480.0), ("MemoryUtilization", 30.0), ("DiskUtilization", 10.0),
                              ("GPUUtilization", 40.0), ("GPUMemoryUtilization", 240.0)):
            data.append({"MetricName": metric, "Timestamp": stamp, "Value": value,
                         "Dimensions": [{"Name": "EndpointName", "Value": "llm-host"},
                                        {"Name": "VariantName", "Value": "AllTraffic"}]})
    for i in range(0, len(data), 1000):
        cloudwatch.put_metric_data(Namespace="/aws/sagemaker/Endpoints", MetricData=data[i : i + 1000])


def audit(now, instance_count: int, components: dict | None = None) -> dict:
    publish_instances(now)
    clients = AwsClients()
    stubber = stub_sagemaker(clients.client("sagemaker", "us-east-1"), now, instance_count, components)
    outcome = run_audit(AuditConfig(), clients, now=now)
    stubber.assert_no_pending_responses()
    return report_to_dict(outcome.report)


def test_mostly_unreserved_instances_are_packed_and_priced(aws) -> None:
    now = utc_now()
    publish(now, "chat-7b", cpu=12.0, gpu=20.0, memory=40.0)
    doc = audit(now, instance_count=4)
    components = {c["name"]: c for c in doc["endpoints"][0]["inference_components"]}
    assert components["chat-7b"]["copy_count"] == 2
    assert components["chat-7b"]["per_copy"] == {"cpu_cores": 4.0, "accelerators": 1.0, "memory_mb": 16384.0}
    assert components["embed-small"]["per_copy"]["accelerators"] is None
    findings = {f["rule"]: f for f in doc["findings"]}
    packing = findings["component-packing"]
    # 3 copies fit on one 4-GPU instance; two stay for availability (min(current, 2)).
    assert packing["evidence"]["packed_count"] == 1 and packing["evidence"]["needed_count"] == 2
    assert packing["evidence"]["components"]["chat-7b"]["copies_per_instance"] == 4
    assert packing["evidence"]["reserved_percent"]["gpu"] == 12.5
    rec = packing["recommendation"]
    # Managed instance scaling is off: turned on with the consolidating scale-in, down to the two.
    assert rec["action"] == "managed-scaling" and rec["instance_count"] == 2
    assert rec["details"]["managed_instance_scaling"] == {
        "Status": "ENABLED", "MinInstanceCount": 2, "MaxInstanceCount": 4,
        "ScaleInPolicy": {"Strategy": "CONSOLIDATION"}}
    assert rec["monthly_savings_usd"] == round(2 * PRICE * 730, 2)
    # The 7B model holds 40% of its memory: less per copy, but two instances still stay: no saving.
    under = findings["component-underutilized"]
    assert under["severity"] == "info" and under["recommendation"] is None
    assert under["evidence"]["components"]["chat-7b"]["advised_per_copy"]["memory_mb"] == 10240
    assert "embed-small" not in under["evidence"]["components"]  # no metrics: no verdict
    plan = next(p for p in doc["plans"] if p["resource"]["name"] == "llm-host")
    assert "component-packing" in plan["findings"]


def test_fewer_copies_are_priced_by_the_instances_they_free(aws) -> None:
    now = utc_now()
    publish(now, "chat-7b", cpu=12.0, gpu=10.0, memory=40.0)
    doc = audit(now, instance_count=6,
                components={"chat-7b": {"copies": 16, "cpu": 4.0, "gpu": 1.0, "memory": 16384}})
    findings = {f["rule"]: f for f in doc["findings"]}
    assert "component-packing" not in findings  # two thirds of the GPUs are reserved
    under = findings["component-underutilized"]
    advice = under["evidence"]["components"]["chat-7b"]
    assert advice["advised_copies"] == 3  # 16 copies x 10% GPU fit in 3 at 70%
    assert under["evidence"]["instances_before"] == 4 and under["evidence"]["instances_after"] == 1
    rec = under["recommendation"]
    assert rec["instance_count"] == 2 and rec["monthly_savings_usd"] == round(4 * PRICE * 730, 2)
    assert "3 copies instead of 16" in rec["advice"]
    assert under["severity"] == "high"


def test_busy_components_are_not_judged(aws) -> None:
    now = utc_now()
    publish(now, "chat-7b", cpu=60.0, gpu=80.0, memory=75.0)
    doc = audit(now, instance_count=1,
                components={"chat-7b": {"copies": 4, "cpu": 4.0, "gpu": 1.0, "memory": 16384}})
    assert not [f for f in doc["findings"] if f["rule"].startswith("component-")]


def test_a_reserved_gpu_without_its_metric_gets_no_verdict(aws) -> None:
    now = utc_now()
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    stamp = now.replace(minute=0, second=0, microsecond=0)
    cloudwatch.put_metric_data(Namespace="/aws/sagemaker/InferenceComponents", MetricData=[
        {"MetricName": metric, "Timestamp": stamp - timedelta(hours=h, minutes=30), "Value": 5.0,
         "Dimensions": [{"Name": "InferenceComponentName", "Value": "chat-7b"}]}
        for h in range(14 * 24) for metric in ("CPUUtilizationNormalized", "MemoryUtilizationNormalized")])
    doc = audit(now, instance_count=6,
                components={"chat-7b": {"copies": 16, "cpu": 4.0, "gpu": 1.0, "memory": 16384}})
    assert "component-underutilized" not in {f["rule"] for f in doc["findings"]}


def test_unread_scaling_targets_never_turn_managed_scaling_on(aws) -> None:
    """DescribeScalableTargets denied: whether Application Auto Scaling scales the variant is
    unknown, so native consolidation never turns managed scaling on (two scalers on one count);
    the error line says what was not judged."""
    now = utc_now()
    publish(now, "chat-7b", cpu=12.0, gpu=20.0, memory=40.0)
    aws.faults.arm("application-autoscaling", "DescribeScalableTargets", "access_denied", times=3)
    doc = audit(now, instance_count=4)
    assert any("DescribeScalableTargets" in e["message"] for e in doc["errors"])
    packing = next(f for f in doc["findings"] if f["rule"] == "component-packing")
    assert "proposed_managed_instance_scaling" not in packing["evidence"]
    assert (packing["recommendation"] or {}).get("action") != "managed-scaling"
