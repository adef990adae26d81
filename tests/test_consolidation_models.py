"""consolidate-onto-components reads each candidate's model (DescribeModel): a model that cannot be
read leaves its endpoint out, said in an error line, never read as "no VPC"; a denied DescribeModel
is said once, by name."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor_emulator.fleet import seed_fleet
from conftest import check_report_json, utc_now
from test_consolidation import RULE, TINY, members_of, peaks_at_different_hours, tiny

runner = CliRunner()
ROLE = "arn:aws:iam::123456789012:role/sagemaker-execution"


def run(out: Path) -> tuple[int, dict]:
    result = runner.invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
    return result.exit_code, check_report_json(json.loads(out.read_text()))


def test_an_endpoint_whose_model_cannot_be_described_is_left_out(aws, tmp_path: Path) -> None:
    now = utc_now()
    seed_fleet(aws, [tiny(name) for name in TINY], now=now)
    peaks_at_different_hours(aws, now)
    boto3.client("sagemaker", region_name="us-east-1").delete_model(ModelName="reco-tiny-3-model")
    code, doc = run(tmp_path / "report.json")
    assert code == 0
    errors = [e for e in doc["errors"] if "DescribeModel" in e["message"]]
    assert [e["endpoint"] for e in errors] == ["reco-tiny-3"]
    assert "consolidate-onto-components leaves it out" in errors[0]["message"]
    found = [f for f in doc["findings"] if f["rule"] == RULE]
    assert found and all("reco-tiny-3" not in members_of(f) for f in found)
    assert members_of(found[0]) == set(TINY) - {"reco-tiny-3"}


def test_a_denied_describe_model_is_said_once_and_nothing_is_grouped(aws, tmp_path: Path) -> None:
    now = utc_now()
    seed_fleet(aws, [tiny(name) for name in TINY[:3]], now=now)
    _, allowed = run(tmp_path / "allowed.json")
    assert [members_of(f) for f in allowed["findings"] if f["rule"] == RULE] == [set(TINY[:3])]
    arm = aws.faults.arm("sagemaker", "DescribeModel", "access_denied", times=3)
    _, doc = run(tmp_path / "report.json")
    assert arm.fired == 1  # denied once: the region's other models are not asked
    denied = [e for e in doc["errors"] if "DescribeModel" in e["message"]]
    assert len(denied) == 1 and "sagemaker:DescribeModel" in denied[0]["message"]
    assert "leaves them out" in denied[0]["message"]
    assert not [f for f in doc["findings"] if f["rule"] == RULE]
    assert len(doc["endpoints"]) == 3  # the rest of the audit goes on


def test_a_model_read_once_is_not_asked_again_by_the_next_run(aws, tmp_path: Path) -> None:
    now = utc_now()
    seed_fleet(aws, [tiny(name) for name in TINY[:3]], now=now)
    for run_number in (1, 2):
        out = tmp_path / f"run{run_number}.json"
        result = runner.invoke(app, ["run", "--format", "json", "--output", str(out)])  # with the history
        assert result.exit_code == 0, result.output
        found = [f for f in check_report_json(json.loads(out.read_text()))["findings"] if f["rule"] == RULE]
        assert [members_of(f) for f in found] == [set(TINY[:3])]
    asked = [call for call in aws.faults.calls() if call == ("sagemaker", "DescribeModel")]
    assert len(asked) == 3  # the first run's, one per model; the second run read them from the history


def test_the_emulators_consolidation_scenarios(aws, tmp_path: Path) -> None:
    """auditor_emulator.fleet.consolidation_fleet's traps, through the CLI."""
    from auditor_emulator.fleet import consolidation_fleet

    seed_fleet(aws, consolidation_fleet(), now=utc_now())
    code, doc = run(tmp_path / "report.json")
    assert code == 0
    found = [f for f in doc["findings"] if f["rule"] == RULE]
    assert [members_of(f) for f in found] == [{f"reco-tiny-{i}" for i in range(1, 7)}]
    rec = found[0]["recommendation"]
    assert rec["instance_count"] == 2 and rec["monthly_savings_usd"] > 0
    assert rec["details"]["saving_usd"] > found[0]["evidence"]["own_plans_saving_usd"]
    cpu = rec["details"]["replay"]["resources"]["cpu"]
    assert cpu["peak_percent"] < cpu["sum_of_peaks_percent"]  # their peaks are at different hours


def test_the_plans_calls_are_accepted_and_a_done_consolidation_is_not_proposed_again(aws, tmp_path: Path) -> None:
    now = utc_now()
    seed_fleet(aws, [tiny(name) for name in TINY[:3]], now=now)
    peaks_at_different_hours(aws, now)
    _, before = run(tmp_path / "before.json")
    plan = next(p for p in before["plans"] if p["resource"]["type"] == "shared-endpoint")
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    for call in plan["change"]["calls"]:  # as `audit apply` would make them (the emulator checks each as AWS does)
        getattr(sagemaker, {"CreateEndpointConfig": "create_endpoint_config", "CreateEndpoint": "create_endpoint",
                            "CreateInferenceComponent": "create_inference_component"}[call["operation"]])(
            **call["params"])
    hosted = sagemaker.list_inference_components(EndpointNameEquals=plan["resource"]["name"])["InferenceComponents"]
    assert sorted(c["InferenceComponentName"] for c in hosted) == sorted(TINY[:3])
    _, after = run(tmp_path / "after.json")
    assert plan["resource"]["name"] in {e["name"] for e in after["endpoints"]}
    assert not [f for f in after["findings"] if f["rule"] == RULE]  # done: the old endpoints' idle verdicts follow


def test_an_endpoint_whose_name_another_endpoints_component_has_is_left_out(aws, tmp_path: Path) -> None:
    now = utc_now()
    seed_fleet(aws, [tiny(name) for name in TINY[:3]], now=now)
    peaks_at_different_hours(aws, now)
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    sagemaker.create_endpoint_config(EndpointConfigName="platform-config", ExecutionRoleArn=ROLE, ProductionVariants=[
        {"VariantName": "AllTraffic", "InstanceType": "ml.m5.large", "InitialInstanceCount": 1}])
    sagemaker.create_endpoint(EndpointName="platform", EndpointConfigName="platform-config")
    # A component of another endpoint already has reco-tiny-1's name (names are unique in a region).
    sagemaker.create_inference_component(
        InferenceComponentName="reco-tiny-1", EndpointName="platform", VariantName="AllTraffic",
        Specification={"ModelName": "reco-tiny-1-model",
                       "ComputeResourceRequirements": {"NumberOfCpuCoresRequired": 0.5, "MinMemoryRequiredInMb": 512}},
        RuntimeConfig={"CopyCount": 1})
    _, doc = run(tmp_path / "report.json")
    assert [members_of(f) for f in doc["findings"] if f["rule"] == RULE] == [set(TINY[1:3])]


def test_an_endpoint_that_captures_its_requests_is_left_out(aws, tmp_path: Path) -> None:
    """The shared endpoint's config carries no DataCaptureConfig: a member whose config captures
    requests (for Model Monitor) would stop capturing once its callers switch, so it is not grouped."""
    now = utc_now()
    seed_fleet(aws, [tiny(name) for name in TINY[:3]], now=now)
    peaks_at_different_hours(aws, now)
    aws.backend("sagemaker", "us-east-1").endpoint_configs["reco-tiny-1-config"].data_capture_config = {
        "EnableCapture": True, "InitialSamplingPercentage": 10, "DestinationS3Uri": "s3://capture/reco",
        "CaptureOptions": [{"CaptureMode": "Input"}, {"CaptureMode": "Output"}]}
    _, doc = run(tmp_path / "report.json")
    assert [members_of(f) for f in doc["findings"] if f["rule"] == RULE] == [set(TINY[1:3])]


@pytest.mark.parametrize("container", ["multi-model", "pipeline"])
def test_a_multi_model_or_pipeline_model_is_left_out(aws, tmp_path: Path, container: str) -> None:
    """One inference component hosts one model's single container: a multi-model container (Mode
    MultiModel) or an inference pipeline (several Containers) is never grouped."""
    now = utc_now()
    seed_fleet(aws, [tiny(name) for name in TINY[:3]], now=now)
    peaks_at_different_hours(aws, now)
    model = aws.backend("sagemaker", "us-east-1")._models["reco-tiny-1-model"]
    if container == "multi-model":
        model.primary_container = {**model.primary_container, "Mode": "MultiModel"}
    else:
        model.containers = [{"Image": "img-a"}, {"Image": "img-b"}]
        model.primary_container = None
    _, doc = run(tmp_path / "report.json")
    assert [members_of(f) for f in doc["findings"] if f["rule"] == RULE] == [set(TINY[1:3])]
