"""no-queue-alarm: fires on an async endpoint whose queue no alarm watches, not on one with an alarm,
never when the alarms could not be read; its PutMetricAlarm calls validate against botocore's model.
End to end through `audit run` against the emulator (with off-hours on the same small fleet)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import botocore.session
import pytest
from botocore.validate import ParamValidator
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import AuditConfig
from auditor.kinds.endpoints.alarms import queue_alarm_endpoints
from auditor.kinds.endpoints.judge import judge_endpoint
from auditor.kinds.endpoints.models import EndpointKind, Variant
from auditor.kinds.endpoints.rules.no_queue_alarm import alarm_topic, queue_alarm_change
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, async_variant, seed_fleet
from conftest import seeded_emulator, utc_now
from helpers import endpoint, hourly_frame
from test_cli_errors import _user_with_policy
from test_rules_traffic import CATALOG, assessment, busy_raw

runner = CliRunner()
TOPIC = "arn:aws:sns:us-east-1:123456789012:ml-oncall"


def async_endpoint(alarms: tuple[str, ...] | None):
    ep = endpoint("jobs", kind=EndpointKind.ASYNC, variants=(Variant("AllTraffic", "ml.m5.xlarge", 1),))
    return replace(ep, queue_alarms=alarms)


def queue_frame(age: float = 120.0):
    return hourly_frame(ApproximateBacklogSizePerInstance__Average=1.0, ApproximateAgeOfOldestRequest__Average=age,
                        ApproximateAgeOfOldestRequest__Maximum=age * 2, HasBacklogWithoutCapacity__Maximum=0.0)


def judged(alarms: tuple[str, ...] | None, age: float = 120.0) -> list:
    view = assessment(async_endpoint(alarms), busy_raw(), queue_frame(age))
    return [f for f in judge_endpoint(view, CATALOG, AuditConfig()) if f.rule == "no-queue-alarm"]


def test_fires_on_an_async_endpoint_without_a_queue_alarm() -> None:
    (finding,) = judged(())
    assert "nobody is told" in finding.message
    # The goal (600 s) holds: the window's peaks (240 s) x 2 stay under it.
    assert finding.evidence["age_threshold_seconds"] == 600
    # No [apply] alarm_topic_arn: no change to carry, so no plan; the message says what is missing.
    assert finding.recommendation is None and "[apply] alarm_topic_arn" in finding.message


def test_the_threshold_stays_above_the_observed_peaks() -> None:
    (finding,) = judged((), age=900.0)  # hourly maxima of 1,800 s are ordinary here
    assert finding.evidence["age_threshold_seconds"] == 3600
    assert finding.evidence["observed_age_p99_seconds"] == 1800


def test_not_on_an_endpoint_with_a_queue_alarm_nor_when_alarms_were_not_read() -> None:
    assert judged(("jobs-queue-age",)) == []
    assert judged(None) == []  # DescribeAlarms denied: never "no alarm"


def test_alarms_count_for_the_endpoint_they_watch_directly_or_in_metric_math() -> None:
    def dims(name: str) -> list[dict]:
        return [{"Name": "EndpointName", "Value": name}]
    found = queue_alarm_endpoints([
        {"AlarmName": "a", "Namespace": "AWS/SageMaker", "MetricName": "ApproximateAgeOfOldestRequest",
         "Dimensions": dims("one")},
        {"AlarmName": "b", "Metrics": [{"Id": "m1", "MetricStat": {"Metric": {
            "Namespace": "AWS/SageMaker", "MetricName": "HasBacklogWithoutCapacity", "Dimensions": dims("two")}}},
            {"Id": "e1", "Expression": "m1 * 2"}]},
        {"AlarmName": "c", "Namespace": "AWS/SageMaker", "MetricName": "CPUUtilization", "Dimensions": dims("three")},
        {"AlarmName": "d", "Namespace": "Custom", "MetricName": "ApproximateAgeOfOldestRequest",
         "Dimensions": dims("four")},
    ])
    assert found == {"one": ["a"], "two": ["b"]}


def test_the_alarm_calls_validate_and_notify_the_topic() -> None:
    change = queue_alarm_change(async_endpoint(()), 600.0, TOPIC)
    model = botocore.session.get_session().get_service_model("cloudwatch")
    shape = model.operation_model("PutMetricAlarm").input_shape
    for call in change["change"]:
        assert (call["service"], call["operation"]) == ("cloudwatch", "PutMetricAlarm")
        report = ParamValidator().validate(call["params"], shape)
        assert not report.has_errors(), report.generate_report()
        assert call["params"]["AlarmActions"] == [TOPIC]
        assert call["params"]["Dimensions"] == [{"Name": "EndpointName", "Value": "jobs"}]
    age, stranded = (c["params"] for c in change["change"])
    assert (age["MetricName"], age["Threshold"], age["ComparisonOperator"]) == (
        "ApproximateAgeOfOldestRequest", 600.0, "GreaterThanThreshold")
    assert (stranded["MetricName"], stranded["Threshold"], stranded["ComparisonOperator"]) == (
        "HasBacklogWithoutCapacity", 1.0, "GreaterThanOrEqualToThreshold")
    assert "DeleteAlarms" in change["rollback"]


def test_the_topic_is_read_from_apply_where_the_config_has_it() -> None:
    assert alarm_topic(AuditConfig()) is None  # no [apply] alarm_topic_arn (yet): no calls
    with_apply = SimpleNamespace(apply=SimpleNamespace(alarm_topic_arn=TOPIC))
    assert alarm_topic(with_apply) == TOPIC  # type: ignore[arg-type]  # the [apply] section's shape


# --- end to end, against the emulator ---------------------------------------------------------------

def small_fleet() -> list[EndpointSpec]:
    return [
        EndpointSpec("queue-watched", (async_variant("ml.m5.xlarge", 1, arrivals_per_hour=50, processing_seconds=30,
                                                     memory=Load(50, 2)),), kind="async", queue_alarm=True),
        EndpointSpec("queue-unwatched", (async_variant("ml.m5.xlarge", 1, arrivals_per_hour=50, processing_seconds=30,
                                                       memory=Load(50, 2)),), kind="async"),
        EndpointSpec("office-hours", (VariantSpec("ml.c5.2xlarge", 1, cpu=Load(55, 8), memory=Load(50, 2),
                                                  invocations_per_hour=4000, traffic_hours=tuple(range(8, 18)),
                                                  traffic_days=(0, 1, 2, 3, 4), quiet_cpu=1.5),)),
        EndpointSpec("round-the-clock", (VariantSpec("ml.c5.2xlarge", 1, cpu=Load(55, 8), memory=Load(50, 2),
                                                     invocations_per_hour=4000),)),
    ]


@pytest.fixture(scope="module")
def report(emulator, tmp_path_factory) -> Iterator[dict]:
    home = tmp_path_factory.mktemp("home")
    with seeded_emulator(emulator, home, lambda emu: seed_fleet(emu, small_fleet(), now=utc_now())):
        out = home / "report.json"
        result = runner.invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
        assert result.exit_code == 0, result.output
        yield json.loads(out.read_text())


def fired(report: dict, rule: str) -> list[str]:
    return sorted(f["resource"]["name"] for f in report["findings"] if f["rule"] == rule)


def test_end_to_end_the_unwatched_queue_and_the_office_hours_endpoint(report: dict) -> None:
    assert fired(report, "no-queue-alarm") == ["queue-unwatched"]
    assert fired(report, "off-hours") == ["office-hours"]
    assert report["summary"]["api_calls_by_operation"]["cloudwatch:DescribeAlarms"] == 1
    (plan,) = [p for p in report["plans"] if p["resource"]["name"] == "office-hours"]
    assert plan["proposed"]["action"] == "off-hours" and plan["monthly_savings_usd"] > 0


def test_denied_describe_alarms_is_one_error_and_no_verdict(aws, monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    seed_fleet(aws, small_fleet()[1:2], now=utc_now())
    policy = json.loads((Path(__file__).parent.parent / "deploy" / "iam-policy.json").read_text())
    actions = [a for s in policy["Statement"] for a in s["Action"] if a != "cloudwatch:DescribeAlarms"]
    for key, value in _user_with_policy(actions).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    out = tmp_path / "report.json"
    with aws.iam_enforced():
        runner.invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
    report = json.loads(out.read_text())
    denied = [e["message"] for e in report["errors"] if "DescribeAlarms" in e["message"]]
    assert len(denied) == 1
    assert denied[0].startswith("access denied: cloudwatch:DescribeAlarms in us-east-1")
    assert denied[0].endswith(": no-queue-alarm and async-scale-from-zero not judged, and plans define rollback "
                              "alarms of their own")
    assert fired(report, "no-queue-alarm") == []
