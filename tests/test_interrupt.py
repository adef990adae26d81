"""Ctrl-C at any moment of `audit run` leaves a consistent record: a whole report with a normal
history row, or a report marked partial with an interrupted history row that judges what was
read before the signal. `audit run` runs as a user starts it (its own process, its own signals);
AUDITOR_PAUSE_AT holds it at a named point, where the test sends SIGINT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.history.store import History
from auditor.limits import PAUSE_VARIABLE
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now

FLEET = [
    EndpointSpec("busy", (VariantSpec("ml.c5.xlarge", 1, cpu=Load(70, 5), memory=Load(60, 2)),)),
    EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),)),
    EndpointSpec("idle", (VariantSpec("ml.m5.large", 1, cpu=Load(1, 0.2, 0.1), invocations_per_hour=0),)),
]


def interrupted_run(aws, tmp_path: Path, point: str) -> tuple[int, str, dict, list]:
    """`audit run` stopped by SIGINT at `point`: its exit code, stderr, report and history runs."""
    history, report = tmp_path / "history.sqlite3", tmp_path / "report.json"
    config = tmp_path / "auditor.toml"
    config.write_text(f'[history]\npath = "{history}"\n', encoding="utf-8")
    env = {**os.environ, PAUSE_VARIABLE: point}
    process = subprocess.Popen(
        [sys.executable, "-m", "auditor.cli", "run", "--config", str(config), "--format", "json",
         "--output", str(report)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=tmp_path)
    assert process.stderr is not None
    said = []
    while (line := process.stderr.readline()) and line != f"paused at {point}\n":
        said.append(line)
    assert line, "".join(said)  # it paused there
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=60)
    with History(history, reading=True) as store:
        runs = store.runs()
    return process.returncode, "".join(said) + rest, json.loads(report.read_text()), runs


@pytest.mark.parametrize("point", ["audited", "summary", "report-written"])
def test_a_signal_once_the_audit_is_done_leaves_a_whole_report_and_its_row(aws, tmp_path: Path, point: str) -> None:
    seed_fleet(aws, FLEET, now=utc_now())
    code, stderr, report, runs = interrupted_run(aws, tmp_path, point)
    assert code == 130, stderr
    assert "Traceback" not in stderr
    assert report["partial"] is None
    assert {f["resource"]["name"] for f in report["findings"]} >= {"oversized", "idle"}
    (run,) = runs
    assert run.status == "ok"
    assert (run.endpoints, run.findings) == (report["summary"]["endpoints"], report["summary"]["findings"])
    assert "the report is whole (and recorded)" in stderr.splitlines()[-1]


def test_a_signal_after_the_endpoints_were_read_judges_them(aws, tmp_path: Path) -> None:
    """Stopped once the endpoints were read and judged, before the other kinds: the endpoints' findings
    are kept, the report is partial and its history row interrupted."""
    seed_fleet(aws, FLEET, now=utc_now())
    code, stderr, report, runs = interrupted_run(aws, tmp_path, "after-endpoints")
    assert code == 130, stderr
    assert report["partial"] == "interrupted by SIGINT"
    assert {f["resource"]["name"] for f in report["findings"]} >= {"oversized", "idle"}
    assert "not audited: interrupted" not in json.dumps(report["endpoints"])
    (error,) = [e for e in report["errors"] if e["stage"] == "collect"]
    assert error["message"].startswith("region audited in part (not audited: jobs, workspaces, hyperpod)")
    (run,) = runs
    assert run.status == "interrupted"
    assert (run.endpoints, run.findings) == (report["summary"]["endpoints"], report["summary"]["findings"])
    assert stderr.splitlines()[-1] == "error: interrupted by SIGINT: partial report written"
