"""The emulator's UpdateEndpoint (moto has none), through boto3 as SageMaker answers it: Updating
with the pending deployment, then InService on the new config; a failing instance type rolls back
to the old config with a FailureReason; instance types the catalog prices are accepted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import boto3
import botocore.exceptions
import pytest

from auditor_emulator.server import Emulator

ROLE = "arn:aws:iam::123456789012:role/sagemaker-execution"
CANARY = {"BlueGreenUpdatePolicy": {"TrafficRoutingConfiguration": {
    "Type": "CANARY", "WaitIntervalInSeconds": 300, "CanarySize": {"Type": "CAPACITY_PERCENT", "Value": 10}}}}


@pytest.fixture
def sagemaker(aws: Emulator) -> Iterator[Any]:
    Emulator.deployments(seconds=0.2, fail_instance_types=("ml.g5.xlarge",))
    client = boto3.client("sagemaker", region_name="us-east-1")
    client.create_model(ModelName="m", PrimaryContainer={"Image": "img"}, ExecutionRoleArn=ROLE)
    config(client, "old", "ml.m5.4xlarge", 4)
    client.create_endpoint(EndpointName="ep", EndpointConfigName="old")
    yield client
    Emulator.deployments(seconds=2.0, fail_instance_types=())


def config(client: Any, name: str, instance_type: str, count: int) -> None:
    client.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[
        {"VariantName": "AllTraffic", "ModelName": "m", "InstanceType": instance_type, "InitialInstanceCount": count}])


def settled(client: Any) -> dict[str, Any]:
    for _ in range(50):
        described = client.describe_endpoint(EndpointName="ep")
        if described["EndpointStatus"] == "InService":
            return dict(described)
        time.sleep(0.1)
    raise AssertionError(f"still {described['EndpointStatus']}")


def test_an_update_goes_updating_then_in_service_on_the_new_config(sagemaker: Any) -> None:
    config(sagemaker, "new", "ml.m6i.xlarge", 3)  # not on moto's own list of types; the catalog prices it
    arn = sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="new", DeploymentConfig=CANARY)["EndpointArn"]
    assert arn.endswith(":endpoint/ep")
    during = sagemaker.describe_endpoint(EndpointName="ep")
    assert (during["EndpointStatus"], during["EndpointConfigName"]) == ("Updating", "old")
    pending = during["PendingDeploymentSummary"]
    assert pending["EndpointConfigName"] == "new"
    assert pending["ProductionVariants"][0]["InstanceType"] == "ml.m6i.xlarge"
    assert during["LastDeploymentConfig"] == CANARY
    with pytest.raises(botocore.exceptions.ClientError, match="Cannot update in-progress endpoint"):
        sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="new")
    after = settled(sagemaker)
    assert after["EndpointConfigName"] == "new" and "PendingDeploymentSummary" not in after
    assert after["ProductionVariants"][0]["CurrentInstanceCount"] == 3
    found = sagemaker.search(Resource="Endpoint")["Results"][0]["Endpoint"]
    assert found["EndpointConfigName"] == "new"


def test_a_failing_instance_type_rolls_back_to_the_old_config(sagemaker: Any) -> None:
    config(sagemaker, "gpu", "ml.g5.xlarge", 1)
    sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="gpu")
    statuses = {sagemaker.describe_endpoint(EndpointName="ep")["EndpointStatus"]}
    for _ in range(50):
        described = sagemaker.describe_endpoint(EndpointName="ep")
        statuses.add(described["EndpointStatus"])
        if described["EndpointStatus"] == "InService":
            break
        time.sleep(0.05)
    assert statuses == {"Updating", "RollingBack", "InService"}
    assert described["EndpointConfigName"] == "old"
    assert "did not pass the ping health check on ml.g5.xlarge" in described["FailureReason"]


def test_unknown_endpoints_configs_and_instance_types_are_refused(sagemaker: Any) -> None:
    with pytest.raises(botocore.exceptions.ClientError, match="Could not find endpoint configuration"):
        sagemaker.update_endpoint(EndpointName="ep", EndpointConfigName="missing")
    with pytest.raises(botocore.exceptions.ClientError, match="Could not find endpoint "):
        sagemaker.update_endpoint(EndpointName="nope", EndpointConfigName="old")
    with pytest.raises(botocore.exceptions.ClientError, match="instanceType"):
        config(sagemaker, "bogus", "ml.nothing.huge", 1)
