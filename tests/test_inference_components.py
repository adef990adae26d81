"""Inference components: the emulator cannot create them, so SageMaker's answers are recorded
responses through botocore's Stubber; their metrics come from the emulator's CloudWatch."""

from __future__ import annotations

from datetime import timedelta

import boto3
from botocore.stub import Stubber

from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.pipeline import run_audit
from auditor.report.document import report_to_dict
from conftest import utc_now

ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/llm-host"


# Copies and per-copy requirements of each component, as DescribeInferenceComponent answers them.
COMPONENTS = {
    "chat-7b": {"copies": 2, "cpu": 4.0, "gpu": 1.0, "memory": 16384},
    "embed-small": {"copies": 1, "cpu": 2.0, "gpu": 0.0, "memory": 4096},
}


def describe_response(name: str, spec: dict, now) -> dict:
    required = {"NumberOfCpuCoresRequired": spec["cpu"], "MinMemoryRequiredInMb": spec["memory"]}
    if spec["gpu"]:
        required["NumberOfAcceleratorDevicesRequired"] = spec["gpu"]
    return {
        "InferenceComponentName": name, "InferenceComponentArn": f"{ARN}/ic/{name}", "EndpointName": "llm-host",
        "EndpointArn": ARN, "VariantName": "AllTraffic", "InferenceComponentStatus": "InService",
        "CreationTime": now, "LastModifiedTime": now,
        "Specification": {"ModelName": f"{name}-model", "ComputeResourceRequirements": required},
        "RuntimeConfig": {"DesiredCopyCount": spec["copies"], "CurrentCopyCount": spec["copies"]},
    }


def stub_sagemaker(client, now, instance_count: int = 1, components: dict | None = None) -> Stubber:
    components = COMPONENTS if components is None else components
    stubber = Stubber(client)
    stubber.add_response("search", {"Results": [{"Endpoint": {
        "EndpointName": "llm-host", "EndpointArn": ARN, "EndpointConfigName": "llm-host-config",
        "EndpointStatus": "InService", "CreationTime": now - timedelta(days=60),
        "LastModifiedTime": now - timedelta(days=60),
        "ProductionVariants": [{"VariantName": "AllTraffic", "CurrentInstanceCount": instance_count,
                                "DesiredInstanceCount": instance_count}],
        "Tags": [{"Key": "owner", "Value": "llm@example.com"}],
    }}]})
    # Endpoints that host inference components name no model on their variants.
    stubber.add_response("describe_endpoint_config", {
        "EndpointConfigName": "llm-host-config", "EndpointConfigArn": ARN + "-config",
        "CreationTime": now - timedelta(days=60),
        "ProductionVariants": [{"VariantName": "AllTraffic", "InstanceType": "ml.g5.12xlarge",
                                "InitialInstanceCount": instance_count}],
        "ExecutionRoleArn": "arn:aws:iam::123456789012:role/sagemaker",
    })
    stubber.add_response("list_inference_components", {"InferenceComponents": [
        {"InferenceComponentName": name, "InferenceComponentArn": f"{ARN}/ic/{name}", "EndpointName": "llm-host",
         "EndpointArn": ARN, "VariantName": "AllTraffic", "InferenceComponentStatus": "InService",
         "CreationTime": now, "LastModifiedTime": now}
        for name in components
    ]}, {"EndpointNameEquals": "llm-host"})
    for name, spec in components.items():
        stubber.add_response("describe_inference_component", describe_response(name, spec, now),
                             {"InferenceComponentName": name})
    stubber.activate()
    return stubber


def publish_component_metrics(now) -> None:
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    end = now.replace(minute=0, second=0, microsecond=0)
    data = []
    for hour in range(14 * 24):
        stamp = end - timedelta(hours=14 * 24 - hour) + timedelta(minutes=30)
        for metric, value in (("CPUUtilizationNormalized", 12.0), ("GPUUtilizationNormalized", 64.0),
                              ("MemoryUtilizationNormalized", 40.0)):
            data.append({"MetricName": metric, "Timestamp": stamp, "Value": value,
                         "Dimensions": [{"Name": "InferenceComponentName", "Value": "chat-7b"}]})
    for i in range(0, len(data), 1000):
        cloudwatch.put_metric_data(Namespace="/aws/sagemaker/InferenceComponents", MetricData=data[i : i + 1000])


def test_components_are_discovered_and_reported_with_their_own_metrics(aws) -> None:
    now = utc_now()
    publish_component_metrics(now)
    clients = AwsClients()
    stubber = stub_sagemaker(clients.client("sagemaker", "us-east-1"), now)
    outcome = run_audit(AuditConfig(), clients, now=now)
    stubber.assert_no_pending_responses()
    doc = report_to_dict(outcome.report)
    (endpoint,) = doc["endpoints"]
    components = {c["name"]: c for c in endpoint["inference_components"]}
    assert set(components) == {"chat-7b", "embed-small"}
    chat = components["chat-7b"]["utilization"]
    assert chat["gpu"] == {"avg": 64.0, "p95": 64.0, "max": 64.0}
    assert chat["cpu"]["avg"] == 12.0 and chat["memory"]["avg"] == 40.0
    # No datapoints: reported as missing, not as zero.
    assert components["embed-small"]["utilization"]["gpu"] is None
    assert endpoint["tags"] == {"owner": "llm@example.com"}
    # The component series were fetched from CloudWatch with the InferenceComponentName dimension.
    assert outcome.report.api_calls["cloudwatch:GetMetricData"] == 1
    from auditor.report.render import OutputFormat, render

    html = render(outcome.report, OutputFormat.HTML)
    assert "component chat-7b" in html and "component embed-small" in html
