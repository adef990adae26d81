"""An endpoint hosting inference components publishes its requests per component only (AWS/SageMaker,
InferenceComponentName; none per variant): through the CLI against the emulator, one whose
components serve requests on instances that barely work is in use, never idle (a consolidation's
shared endpoint is exactly that); one whose components serve nothing is idle."""

from __future__ import annotations

import json
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
