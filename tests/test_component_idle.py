"""An endpoint hosting inference components publishes its requests per component only (AWS/SageMaker,
InferenceComponentName; none per variant): through the CLI against the emulator, one whose
components serve requests on instances that barely work is in use, never idle (a consolidation's
shared endpoint is exactly that); one whose components serve nothing is idle."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from auditor.cli import app
from auditor_emulator.fleet import ComponentSpec, EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import check_report_json, utc_now


def component_endpoint(name: str, requests_per_hour: float) -> EndpointSpec:
    # The variant publishes no Invocations of its own (invocations_per_hour 0), as AWS does for it.
    variant = VariantSpec("ml.m5.xlarge", 2, cpu=Load(1.0, 0.2), memory=Load(20.0, 1.0), invocations_per_hour=0.0,
                          managed_scaling=(2, 4))
    component = ComponentSpec(f"{name}-model", copies=2, accelerators=0, cpu_cores=0.5, memory_mb=1024,
                              cpu=Load(10.0, 1.0), memory=Load(20.0, 1.0), invocations_per_hour=requests_per_hour)
    return EndpointSpec(name, (variant,), components=(component,))


def test_components_serving_requests_keep_their_endpoint_from_idle(aws, tmp_path: Path) -> None:
    seed_fleet(aws, [component_endpoint("shared-serving", 3000.0), component_endpoint("shared-unused", 0.0)],
               now=utc_now())
    out = tmp_path / "report.json"
    result = CliRunner().invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
    assert result.exit_code == 0, result.output
    doc = check_report_json(json.loads(out.read_text()))
    idle = {f["resource"]["name"] for f in doc["findings"] if f["rule"] == "idle"}
    assert idle == {"shared-unused"}
    assert not [p for p in doc["plans"] if p["resource"]["name"] == "shared-serving"
                and p["proposed"]["action"] == "delete"]


def test_a_delete_is_refused_when_its_components_served_requests_since_the_audit(aws, tmp_path: Path) -> None:
    """Apply's fresh evidence before a delete reads the components' Invocations too: an endpoint whose
    components were idle in the window and serve 500 requests after it is not deleted."""
    import boto3
    import time_machine

    from auditor.config_file import load_config
    from auditor.history.store import History
    from auditor.tasks.audit import deliver_outcome, execute_audit
    from conftest import APPLY_ROLE

    seed_fleet(aws, [component_endpoint("shared-unused", 0.0)], now=utc_now())
    config_path, history_path = tmp_path / "auditor.toml", tmp_path / "history.sqlite3"
    config_path.write_text(f'[aws]\nregions = ["us-east-1"]\n[history]\npath = "{history_path}"\n'
                           f'[apply]\nrole_arn = "{APPLY_ROLE}"\nmax_risk = "medium"\nwait_minutes = 1\n'
                           'resources = ["shared-*"]\n')
    config = load_config(config_path)
    outcome = execute_audit(config)
    assert not deliver_outcome(config, outcome).problems
    with History(history_path) as history:
        (plan,) = [p for p in history.latest_plans() if p["resource"]["name"] == "shared-unused"]
        window_end = history.runs(limit=1)[0].window_end
    assert plan["proposed"]["action"] == "delete"
    with time_machine.travel(window_end + timedelta(hours=1, minutes=30), tick=True):
        boto3.client("cloudwatch", region_name="us-east-1").put_metric_data(Namespace="AWS/SageMaker", MetricData=[{
            "MetricName": "Invocations", "Timestamp": window_end + timedelta(hours=1), "Value": 500.0,
            "Dimensions": [{"Name": "InferenceComponentName", "Value": "shared-unused-model"}]}])
        result = CliRunner().invoke(app, ["apply", plan["id"], "--yes", "--config", str(config_path)])
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith("error: endpoint shared-unused's inference component shared-unused-model served 500 "
                           "requests since the audit's window ended")
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    assert sagemaker.describe_endpoint(EndpointName="shared-unused")["EndpointStatus"] == "InService"
