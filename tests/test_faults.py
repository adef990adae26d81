"""Faults never cost the night: throttling, server errors, resets, a hung or closed AWS endpoint,
SIGTERM mid-run and an output that fails at the end. A fault-injecting proxy stands between the
CLI and the local AWS emulator; each test checks what the user gets: the exit code, the one-line
message, the files that exist afterwards."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import botocore.exceptions
import pytest
from typer.testing import CliRunner

import auditor.pipeline
from auditor.cli import app
from auditor.collect.session import AwsClients
from auditor.config_file import CONTEXT_PREFIX, parse_config
from auditor.history.store import History
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.pipeline import RunLimits, run_audit
from auditor.report.document import SCHEMA_VERSION
from auditor.tasks.scheduler import nightly_job
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now
from faultproxy import FaultProxy, Faults, closed_port

runner = CliRunner()
FLEET = [
    EndpointSpec("busy", (VariantSpec("ml.c5.xlarge", 1, cpu=Load(70, 5), memory=Load(60, 2)),)),
    EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),)),
    EndpointSpec("idle", (VariantSpec("ml.m5.large", 1, cpu=Load(1, 0.2, 0.1), invocations_per_hour=0),)),
]
# Short timeouts and few attempts, so the faults show within seconds.
FAST = "[aws]\nconnect_timeout_seconds = 1\nread_timeout_seconds = 2\nmax_attempts = 3\n[jobs]\nenabled = false\n"


@pytest.fixture
def fleet(aws, tmp_path: Path) -> Iterator[Path]:
    seed_fleet(aws, FLEET, now=utc_now())
    config = tmp_path / "auditor.toml"
    config.write_text(FAST)
    yield config


def run_json(config: Path, out: Path, *extra: str):
    return runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output", str(out),
                               "--no-history", *extra])


def rules(report: dict) -> set[tuple[str, str]]:
    return {(f["resource"]["name"], f["rule"]) for f in report["findings"]}


@pytest.mark.parametrize("fault", ["throttles", "server_errors", "resets"])
def test_retried_faults_lose_no_finding_and_are_counted(fleet: Path, aws, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    clean = run_json(fleet, tmp_path / "clean.json")
    assert clean.exit_code == 0, clean.output
    expected = rules(json.loads((tmp_path / "clean.json").read_text()))
    with FaultProxy(aws.url, Faults(**{fault: 2})) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        result = run_json(fleet, tmp_path / "faulty.json")
        assert proxy.faults.seen.get(fault) == 2
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "faulty.json").read_text())
    assert rules(report) == expected and report["partial"] is None
    counted = {"throttles": "throttled", "server_errors": "server_errors", "resets": "connection_errors"}[fault]
    assert report["summary"]["call_problems"][counted] >= 2
    log = [line for line in result.stderr.splitlines() if line.startswith("audit: ")]
    assert len(log) == 1 and counted.replace("_", " ") in log[0]


def test_a_call_that_never_succeeds_is_an_error_naming_the_region(fleet: Path, aws, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    with FaultProxy(aws.url, Faults(server_errors=1000)) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        started = time.monotonic()
        result = run_json(fleet, tmp_path / "report.json")
    assert time.monotonic() - started < 60
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "us-east-1" in errors[0]


def audit_process(config: Path, out: Path, endpoint_url: str, *extra: str) -> subprocess.Popen[str]:
    """`audit run` as a user starts it: its own process, its own signals."""
    env = {**os.environ, "AWS_ENDPOINT_URL": endpoint_url}
    return subprocess.Popen(
        [sys.executable, "-m", "auditor.cli", "run", "--config", str(config), "--format", "json",
         "--output", str(out), *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=out.parent,
    )


def test_a_hung_endpoint_costs_seconds_not_minutes(fleet: Path, aws, tmp_path: Path) -> None:
    with FaultProxy(aws.url, Faults(hang=True)) as proxy:
        started = time.monotonic()
        process = audit_process(fleet, tmp_path / "report.json", proxy.url, "--no-history")
        _, stderr = process.communicate(timeout=90)
        elapsed = time.monotonic() - started
    assert elapsed < 45, elapsed  # 1 s connect, 2 s read, 3 attempts per call; was 10+ minutes
    assert process.returncode == 1, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "timed out" in errors[0] and "Traceback" not in stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert any("timed out" in e["message"] for e in report["errors"])


def test_a_call_that_timed_out_on_every_attempt_ends_the_region_and_its_endpoint_is_not_asked_again(
        fleet: Path, aws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs enabled: after Search timed out on its 3 attempts, ListTrainingJobs (and every other call
    to that endpoint) is not made; the region is one error. Was 6 requests and two errors."""
    fleet.write_text(FAST.replace("enabled = false", "enabled = true"))
    with FaultProxy(aws.url, Faults(hang=True)) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        started = time.monotonic()
        result = run_json(fleet, tmp_path / "report.json")
        elapsed = time.monotonic() - started
        requests = proxy.faults.seen.get("requests")
    assert requests == 3, proxy.faults.calls  # max_attempts of the first call, and no more
    assert elapsed < 20, elapsed
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    assert [e["message"] for e in report["errors"]] == [next(e["message"] for e in report["errors"])]
    assert "sagemaker:Search in us-east-1 timed out" in report["errors"][0]["message"]


def test_the_deadline_stops_a_slow_run_and_reports_what_it_has(fleet: Path, aws, tmp_path: Path) -> None:
    config = tmp_path / "deadline.toml"
    config.write_text(FAST.replace("read_timeout_seconds = 2\n",
                                   "read_timeout_seconds = 30\ndeadline_minutes = 0.1\n"))
    with FaultProxy(aws.url, Faults(delay_seconds=2.5)) as proxy:
        started = time.monotonic()
        process = audit_process(config, tmp_path / "report.json", proxy.url, "--no-history")
        _, stderr = process.communicate(timeout=90)
        elapsed = time.monotonic() - started
    assert elapsed < 20, elapsed  # a 6-second deadline; every answer takes 2.5 s
    assert process.returncode == 1, stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert "deadline" in report["partial"]
    assert any(e["message"].startswith("region not audited") for e in report["errors"])
    assert "audit incomplete (the run's deadline" in stderr  # the log line: the report's headline


def test_sigterm_stops_the_run_within_5_seconds_with_a_partial_report(fleet: Path, aws, tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite3"
    fleet.write_text(FAST.replace("read_timeout_seconds = 2", "read_timeout_seconds = 30")
                     + f'[history]\npath = "{history}"\n')
    with FaultProxy(aws.url, Faults(delay_seconds=2.0)) as proxy:
        process = audit_process(fleet, tmp_path / "report.json", proxy.url)
        # Once the audit talks to AWS (the process has started and installed its handlers)...
        deadline = time.monotonic() + 60
        while not proxy.faults.seen.get("requests") and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        process.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        _, stderr = process.communicate(timeout=30)
        elapsed = time.monotonic() - stopped
    assert elapsed < 5, elapsed
    assert process.returncode == 143, stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["partial"] == "interrupted by SIGTERM"
    with History(history) as store:
        (run,) = store.runs()
    assert run.status == "interrupted"
    assert "Traceback" not in stderr


def test_regions_that_cannot_be_reached_fail_fast_and_in_parallel(fleet: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", closed_port())
    started = time.monotonic()
    result = runner.invoke(app, ["run", "--config", str(fleet), "--no-history", "--region", "us-east-1",
                                 "--region", "eu-west-1", "--region", "ap-northeast-1"])
    elapsed = time.monotonic() - started
    assert elapsed < 30, elapsed  # was 2 min 12 s for three regions one after another
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "cannot reach" in errors[0] and "(and 2 more)" in errors[0]


def test_an_output_path_that_cannot_be_written_is_found_before_the_audit(fleet: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    result = runner.invoke(app, ["run", "--config", str(fleet), "--output", str(blocker / "report.json")])
    assert result.exit_code == 1
    said = [line for line in result.stderr.splitlines() if not line.startswith(CONTEXT_PREFIX)]  # the config used
    assert said[0].startswith("error: cannot write --output") and "audit:" not in result.stderr


def test_a_full_disk_at_the_end_falls_back_to_the_data_directory_and_still_sends(
        fleet: Path, tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full to fill the disk")
    eml = tmp_path / "mail" / "report.eml"
    fleet.write_text(FAST + '[email]\nsender = "auditor@example.com"\nrecipients = ["finops@example.com"]\n')
    result = runner.invoke(app, ["run", "--config", str(fleet), "--format", "json", "--output", "/dev/full",
                                 "--email-to-file", str(eml)])
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "No space left on device" in errors[0] and "instead" in errors[0]
    fallback = Path(errors[0].split("written to ")[1].split(" instead")[0])
    assert json.loads(fallback.read_text())["schema_version"] == SCHEMA_VERSION
    assert eml.exists()  # the mail did not depend on the report file


def test_a_stop_during_the_nightly_job_ends_it_within_5_seconds_as_interrupted(
        fleet: Path, aws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scheduler's SIGTERM handler sets its stop event; the running nightly audit sees it."""
    history = tmp_path / "history.sqlite3"
    config = parse_config({"aws": {"read_timeout_seconds": 30.0, "connect_timeout_seconds": 1.0},
                           "jobs": {"enabled": False}, "history": {"path": str(history)}})
    stop = threading.Event()
    with FaultProxy(aws.url, Faults(delay_seconds=2.0)) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        timer = threading.Timer(2.5, stop.set)
        timer.start()
        started = time.monotonic()
        fields = nightly_job(config, stop)()
        elapsed = time.monotonic() - started
    assert elapsed < 2.5 + 5, elapsed
    assert fields["status"] == "interrupted" and fields["emailed_to"] == []
    with History(history) as store:
        (run,) = store.runs()
    assert run.status == "interrupted"


def test_demo_into_an_unwritable_directory_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = runner.invoke(app, ["demo", "--output-dir", str(blocker / "out")])
    assert result.exit_code == 1 and result.stderr.startswith("error: cannot write --output-dir")
    assert "Traceback" not in result.output


def crash_in_eu_west_1(monkeypatch: pytest.MonkeyPatch, us_east_1_seconds: float) -> None:
    """A bug in one region: its jobs kind raises; us-east-1's takes `us_east_1_seconds` longer."""
    jobs = next(k for k in auditor.pipeline.KINDS if k.key == "jobs")

    def jobs_with_a_bug(scope):
        if scope.region == "eu-west-1":
            raise RuntimeError("a bug\nin eu-west-1")
        time.sleep(us_east_1_seconds)
        return jobs.audit(scope)

    monkeypatch.setattr(auditor.pipeline, "KINDS", tuple(
        dataclasses.replace(k, audit=jobs_with_a_bug) if k is jobs else k for k in auditor.pipeline.KINDS))


def crash_errors(outcome) -> list[str]:
    return [e.message for e in outcome.fatal_errors if e.region == "eu-west-1"]


def test_a_region_that_crashed_is_its_own_error_and_the_others_keep_their_results(
        fleet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: the crash was re-raised from run_audit and every region's results were lost."""
    crash_in_eu_west_1(monkeypatch, 0.0)
    config = parse_config({"aws": {"regions": ["us-east-1", "eu-west-1"]}})
    outcome = run_audit(config, AwsClients(), now=utc_now())
    (crash,) = crash_errors(outcome)
    assert crash.startswith("region not audited: crashed: RuntimeError: a bug in eu-west-1 at auditor/")
    assert {e.endpoint.name for e in ENDPOINTS.section(outcome.report)} == {s.name for s in FLEET}
    assert [e.region for e in outcome.fatal_errors] == ["eu-west-1"]


def test_a_region_that_crashed_before_the_deadline_keeps_its_error(fleet: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: the deadline passed while us-east-1 still ran, and eu-west-1 was reported as "stopped"."""
    crash_in_eu_west_1(monkeypatch, 4.0)
    config = parse_config({"aws": {"regions": ["us-east-1", "eu-west-1"]}})
    outcome = run_audit(config, AwsClients(), now=utc_now(), limits=RunLimits(deadline_seconds=2.0))
    (crash,) = crash_errors(outcome)
    assert "crashed: RuntimeError: a bug in eu-west-1" in crash
    (stopped,) = [e.message for e in outcome.fatal_errors if e.region == "us-east-1"]
    assert "deadline" in stopped and outcome.report.partial is not None


def test_an_endpoint_that_never_answered_is_not_asked_again_and_a_global_one_does_not_stop_regions(
        aws, monkeypatch: pytest.MonkeyPatch) -> None:
    from auditor.collect.session import EndpointNotAnswering, client_config

    with FaultProxy(aws.url, Faults(hang=True)) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        clients = AwsClients(config=client_config(connect_timeout=1, read_timeout=1, max_attempts=2))
        pricing = clients.client("pricing", "us-east-1")
        with pytest.raises(botocore.exceptions.ReadTimeoutError):
            pricing.describe_services(ServiceCode="AmazonSageMaker")
        assert proxy.faults.seen["requests"] == 2  # max_attempts, the first included
        started = time.monotonic()
        with pytest.raises(EndpointNotAnswering, match="did not answer pricing:DescribeServices in us-east-1"):
            pricing.describe_services(ServiceCode="AmazonSageMaker")
        assert time.monotonic() - started < 0.5 and proxy.faults.seen["requests"] == 2
        # The Price List API's endpoint is not the region's: its audit is not given up for it.
        assert not clients.unanswered.in_region("us-east-1")
        with pytest.raises(botocore.exceptions.ReadTimeoutError):
            clients.client("sagemaker", "eu-west-1").list_endpoints()
        assert clients.unanswered.in_region("eu-west-1") and not clients.unanswered.in_region("us-east-1")
