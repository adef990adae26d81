"""Component placement (detailed observability, read with CloudWatch's PromQL API) and the rule
component-empty-instances. The PromQL client talks HTTP to the emulator, which refuses what is not
signed with Signature Version 4 for `monitoring`; inference components (which the emulator cannot
create) are SageMaker answers through botocore's Stubber, as in test_inference_components."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from datetime import timedelta

import boto3
import botocore.auth
import botocore.awsrequest
import botocore.credentials
import pytest
from botocore.stub import Stubber

from auditor.catalog import load_catalog
from auditor.collect.session import AwsClients, client_config
from auditor.config import AuditConfig
from auditor.kinds.endpoints.promql import (
    PLACEMENT_HOURS,
    PromQLClient,
    collect_placement,
    placement_groups,
    placement_query,
)
from auditor.pipeline import run_audit
from auditor.report.document import report_to_dict
from auditor_emulator import promql as emulated
from auditor_emulator.published import UnpublishedMetricError, check_otel_series
from auditor_emulator.server import ACCOUNT_ID
from conftest import utc_now
from test_inference_components import ARN, describe_response

REGION = "us-east-1"
PRICE = load_catalog().hourly_price("ml.g5.12xlarge", REGION)


def hour_stamps(now, hours: int = PLACEMENT_HOURS + 2) -> list[float]:
    end = now.replace(minute=0, second=0, microsecond=0)
    return [(end - timedelta(hours=h, minutes=30)).timestamp() for h in range(hours)]


def publish_hosts(now, endpoint: str, hosts: dict[str, list[str | None]], hours: int = PLACEMENT_HOURS + 2) -> None:
    stamps = hour_stamps(now, hours)
    emulated.publish(ACCOUNT_ID, REGION, [s for host, gpus in hosts.items()
                                          for s in emulated.instance_series(endpoint, "AllTraffic", "ml.g5.12xlarge",
                                                                            host, gpus, stamps)])


def test_placement_is_read_in_one_signed_query_per_region(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-a", {"i-a1": ["chat", None, None, None], "i-a2": [None] * 4, "i-a3": ["chat"] * 4})
    publish_hosts(now, "llm-b", {"i-b1": ["embed", "embed", None, None]})
    publish_hosts(now, "not-asked", {"i-c1": [None] * 4})
    clients = AwsClients()
    end = now.replace(minute=0, second=0, microsecond=0)
    found = collect_placement(PromQLClient(clients, REGION), REGION, {"llm-a": 3, "llm-b": 1}, end)
    assert not found.errors and found.calls == 1
    assert clients.counter.as_dict() == {"cloudwatch:QueryMetrics": 1}
    assert set(found.placements) == {"llm-a", "llm-b"}
    hosts = found.placements["llm-a"].hosts
    assert set(hosts) == {"i-a1", "i-a2", "i-a3"}
    assert all(v == 0 for v in hosts["i-a2"]) and len(hosts["i-a2"]) == PLACEMENT_HOURS
    assert all(v is not None and v >= 1 for v in hosts["i-a1"]) and all(v is not None and v >= 1 for v in hosts["i-a3"])


def test_hours_an_instance_did_not_run_are_not_samples(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-a", {"i-a1": ["chat"]})
    publish_hosts(now, "llm-a", {"i-new": [None]}, hours=5)  # started 5 hours ago
    end = now.replace(minute=0, second=0, microsecond=0)
    found = collect_placement(PromQLClient(AwsClients(), REGION), REGION, {"llm-a": 2}, end)
    new = found.placements["llm-a"].hosts["i-new"]
    assert new[-5:] == (0.0,) * 5 and set(new[:-5]) == {None}


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _signed(url: str, body: bytes, service: str, secret: str = "testing") -> dict[str, str]:
    request = botocore.awsrequest.AWSRequest(method="POST", url=url, data=body,
                                             headers={"Content-Type": "application/x-www-form-urlencoded"})
    credentials = botocore.credentials.Credentials("testing", secret, "testing")
    botocore.auth.SigV4Auth(credentials, service, REGION).add_auth(request)
    return dict(request.headers.items())


def test_the_emulator_answers_only_requests_signed_for_monitoring(aws) -> None:
    url = f"{aws.url}/api/v1/query_range"
    body = urllib.parse.urlencode({"query": placement_query(["x"]), "start": 0, "end": 3600, "step": "1h"}).encode()
    assert _post(url, body, {"Content-Type": "application/x-www-form-urlencoded"})[0] == 403
    status, answer = _post(url, body, _signed(url, body, "cloudwatch"))
    assert status == 403 and "monitoring" in answer["message"]
    assert _post(url, body, _signed(url, body, "monitoring", secret="wrong"))[0] == 403
    status, answer = _post(url, body, _signed(url, body, "monitoring"))
    assert status == 200 and answer == {"status": "success", "data": {"resultType": "matrix", "result": []}}
    # Over the API's 7-day range: refused as CloudWatch refuses it.
    too_long = body.replace(b"end=3600", b"end=700000")
    assert _post(url, too_long, _signed(url, too_long, "monitoring"))[0] == 422


def test_a_refusal_is_an_error_line_not_an_empty_placement(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-a", {"i-a1": [None]})
    emulated.deny("testing")
    end = now.replace(minute=0, second=0, microsecond=0)
    found = collect_placement(PromQLClient(AwsClients(), REGION), REGION, {"llm-a": 1}, end)
    assert found.placements == {}
    (error,) = found.errors
    assert error.message.startswith("access denied: cloudwatch:QueryMetrics in us-east-1 (HTTP 403")
    assert "cloudwatch:GetMetricData and cloudwatch:ListMetrics" in error.message
    assert "component-empty-instances not judged" in error.message


def test_a_throttled_query_is_retried_and_counted(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-a", {"i-a1": ["chat"], "i-a2": [None]})
    emulated.throttle(2)
    clients = AwsClients()
    waits: list[float] = []
    end = now.replace(minute=0, second=0, microsecond=0)
    found = collect_placement(PromQLClient(clients, REGION, sleep=waits.append), REGION, {"llm-a": 2}, end)
    assert not found.errors and set(found.placements["llm-a"].hosts) == {"i-a1", "i-a2"}
    assert clients.counter.as_dict() == {"cloudwatch:QueryMetrics": 3}
    assert clients.counter.problem_counts()["throttled"] == 2
    assert len(waits) == 2 and waits[0] <= 0.5 and waits[1] <= 1.0  # backoff with full jitter


def test_a_truncated_answer_is_asked_again_in_halves(aws) -> None:
    now = utc_now()
    for endpoint in ("big-a", "big-b"):
        publish_hosts(now, endpoint, {f"i-{endpoint}-{n}": [None] for n in range(300)}, hours=2)
    end = now.replace(minute=0, second=0, microsecond=0)
    # Expected at one instance each: one query, 600 series, truncated at 500; then one each.
    found = collect_placement(PromQLClient(AwsClients(), REGION), REGION, {"big-a": 1, "big-b": 1}, end)
    assert not found.errors and found.calls == 3
    assert {e: len(p.hosts) for e, p in found.placements.items()} == {"big-a": 300, "big-b": 300}


def test_endpoints_are_packed_into_as_few_queries_as_the_answer_allows() -> None:
    assert placement_groups({"a": 100, "b": 100, "c": 100}) == [["a", "b"], ["c"]]
    assert placement_groups({"a": 400, "b": 3}) == [["a"], ["b"]]
    assert placement_groups({f"e{i:03}": 1 for i in range(600)}) == [
        [f"e{i:03}" for i in range(250)], [f"e{i:03}" for i in range(250, 500)],
        [f"e{i:03}" for i in range(500, 600)]]


def test_an_endpoint_that_never_answers_is_not_asked_again(aws, monkeypatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    clients = AwsClients(config=client_config(connect_timeout=0.5, read_timeout=0.5, max_attempts=2))
    client = PromQLClient(clients, REGION, sleep=lambda _: None)
    end = utc_now().replace(minute=0, second=0, microsecond=0)
    first = collect_placement(client, REGION, {"llm-a": 1}, end)
    assert "cannot reach cloudwatch in us-east-1" in first.errors[0].message
    assert clients.counter.as_dict() == {"cloudwatch:QueryMetrics": 2}  # both attempts
    assert clients.counter.problem_counts()["connection_errors"] == 2
    again = collect_placement(client, REGION, {"llm-b": 1}, end)
    assert "not asked again" in again.errors[0].message
    assert clients.counter.as_dict() == {"cloudwatch:QueryMetrics": 2}


def test_only_what_detailed_observability_publishes_can_be_seeded() -> None:
    with pytest.raises(UnpublishedMetricError, match="not a queryable metric"):
        check_otel_series("EmptyInstanceCount", {"aws.sagemaker.endpoint.name": "x"})
    with pytest.raises(UnpublishedMetricError, match="missing"):
        check_otel_series("node_memory_MemTotal_bytes", {"aws.sagemaker.endpoint.name": "x"})


# ---------- The rule, end to end ----------

def stub_sagemaker(client, now, instance_count: int, components: dict, detailed: bool = True,
                   managed: tuple[int, int] | None = None) -> Stubber:
    stubber = Stubber(client)
    stubber.add_response("search", {"Results": [{"Endpoint": {
        "EndpointName": "llm-host", "EndpointArn": ARN, "EndpointConfigName": "llm-host-config",
        "EndpointStatus": "InService", "CreationTime": now - timedelta(days=60),
        "LastModifiedTime": now - timedelta(days=60),
        "ProductionVariants": [{"VariantName": "AllTraffic", "CurrentInstanceCount": instance_count,
                                "DesiredInstanceCount": instance_count}],
        "Tags": [{"Key": "owner", "Value": "llm@example.com"}],
    }}]})
    variant = {"VariantName": "AllTraffic", "InstanceType": "ml.g5.12xlarge", "InitialInstanceCount": instance_count}
    if managed:
        variant["ManagedInstanceScaling"] = {"Status": "ENABLED", "MinInstanceCount": managed[0],
                                             "MaxInstanceCount": managed[1]}
    stubber.add_response("describe_endpoint_config", {
        "EndpointConfigName": "llm-host-config", "EndpointConfigArn": ARN + "-config",
        "CreationTime": now - timedelta(days=60), "ProductionVariants": [variant],
        "ExecutionRoleArn": "arn:aws:iam::123456789012:role/sagemaker",
        "MetricsConfig": {"EnableEnhancedMetrics": False, "EnableDetailedObservability": detailed},
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


def publish_instance_metrics(now, instances: int = 4) -> None:
    """The variant's instance metrics, one sample per instance and minute (as SageMaker publishes them:
    the sample count is what a managed-scaling variant's average instance count is read from)."""
    cloudwatch = boto3.client("cloudwatch", region_name=REGION)
    end = now.replace(minute=0, second=0, microsecond=0)
    samples = 60 * instances
    data = [{"MetricName": metric, "Timestamp": end - timedelta(hours=h, minutes=30),
             "StatisticValues": {"SampleCount": samples, "Sum": value * samples, "Minimum": value, "Maximum": value},
             "Dimensions": [{"Name": "EndpointName", "Value": "llm-host"},
                            {"Name": "VariantName", "Value": "AllTraffic"}]}
            for h in range(14 * 24)
            for metric, value in (("CPUUtilization", 900.0), ("MemoryUtilization", 55.0), ("DiskUtilization", 10.0),
                                  ("GPUUtilization", 160.0), ("GPUMemoryUtilization", 240.0))]
    for i in range(0, len(data), 1000):
        cloudwatch.put_metric_data(Namespace="/aws/sagemaker/Endpoints", MetricData=data[i : i + 1000])


CHAT = {"chat-7b": {"copies": 3, "cpu": 8.0, "gpu": 4.0, "memory": 65536}}


def audit(now, instance_count: int, components: dict = CHAT, **stub) -> tuple[dict, dict]:
    publish_instance_metrics(now, instance_count)
    clients = AwsClients()
    stubber = stub_sagemaker(clients.client("sagemaker", REGION), now, instance_count, components, **stub)
    outcome = run_audit(AuditConfig(), clients, now=now)
    stubber.assert_no_pending_responses()
    return report_to_dict(outcome.report), clients.counter.as_dict()


def test_an_instance_hosting_no_copy_all_day_is_priced_and_consolidated_natively(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-host", {"i-1": ["chat-7b"] * 4, "i-2": ["chat-7b"] * 4, "i-3": ["chat-7b"] * 4,
                                    "i-4": [None] * 4})
    doc, calls = audit(now, instance_count=4)
    assert calls["cloudwatch:QueryMetrics"] == 1
    (finding,) = [f for f in doc["findings"] if f["rule"] == "component-empty-instances"]
    assert finding["evidence"]["empty_instances"] == 1 and finding["evidence"]["needed_count"] == 3
    assert finding["evidence"]["hours_measured"] == PLACEMENT_HOURS
    rec = finding["recommendation"]
    # Managed instance scaling is off: turned on down to the three that host copies, consolidating.
    assert rec["action"] == "managed-scaling" and rec["instance_count"] == 3
    assert rec["details"]["managed_instance_scaling"] == {
        "Status": "ENABLED", "MinInstanceCount": 3, "MaxInstanceCount": 4,
        "ScaleInPolicy": {"Strategy": "CONSOLIDATION"}}
    assert rec["monthly_savings_usd"] == round(PRICE * 730, 2)
    assert "1 of the 4 x ml.g5.12xlarge hosted no inference-component copy" in finding["message"]


def test_placement_that_contradicts_the_copies_reservations_is_not_trusted(aws) -> None:
    """Four copies of four GPUs each need all four 4-GPU instances: an instance whose GPUs carry no
    component label then says more about the labels than about the placement, and no instance goes."""
    now = utc_now()
    publish_hosts(now, "llm-host", {"i-1": ["chat-7b"] * 4, "i-2": ["chat-7b"] * 4, "i-3": ["chat-7b"] * 4,
                                    "i-4": [None] * 4})
    doc, _ = audit(now, instance_count=4, components={"chat-7b": {**CHAT["chat-7b"], "copies": 4}})
    assert "component-empty-instances" not in {f["rule"] for f in doc["findings"]}


def test_every_instance_hosting_a_copy_is_no_finding(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-host", {f"i-{n}": ["chat-7b", None, None, None] for n in range(3)})
    doc, _ = audit(now, instance_count=3)
    assert "component-empty-instances" not in {f["rule"] for f in doc["findings"]}


def test_an_instance_empty_only_a_few_hours_is_no_finding(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-host", {"i-1": ["chat-7b"] * 4, "i-2": ["chat-7b"] * 4, "i-3": ["chat-7b"] * 4})
    publish_hosts(now, "llm-host", {"i-4": [None] * 4}, hours=4)  # a scale-out whose copy is not placed yet
    doc, _ = audit(now, instance_count=4)
    assert "component-empty-instances" not in {f["rule"] for f in doc["findings"]}


def test_without_placement_data_the_rule_never_fires(aws) -> None:
    now = utc_now()  # detailed observability on, but nothing published: no verdict
    doc, calls = audit(now, instance_count=4)
    assert calls["cloudwatch:QueryMetrics"] == 1
    assert "component-empty-instances" not in {f["rule"] for f in doc["findings"]}


def test_detailed_observability_off_is_not_queried(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-host", {"i-1": ["chat-7b"] * 4, "i-4": [None] * 4})
    doc, calls = audit(now, instance_count=4, detailed=False)
    assert "cloudwatch:QueryMetrics" not in calls
    assert "component-empty-instances" not in {f["rule"] for f in doc["findings"]}
    # The fleet note says which endpoints would gain placement data, and how.
    (note,) = [f for f in doc["findings"] if f["rule"] == "enhanced-metrics-off"]
    assert note["evidence"]["placement_off"] == ["llm-host"]
    assert "EnableDetailedObservability" in note["message"]


def test_a_copy_that_reserves_no_gpu_leaves_its_instance_unjudged(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-host", {"i-1": ["chat-7b"] * 4, "i-2": ["chat-7b"] * 4, "i-3": ["chat-7b"] * 4,
                                    "i-4": [None] * 4})
    components = {**CHAT, "cpu-only": {"copies": 1, "cpu": 2.0, "gpu": 0.0, "memory": 2048}}
    doc, _ = audit(now, instance_count=4, components=components)
    assert "component-empty-instances" not in {f["rule"] for f in doc["findings"]}


def test_managed_scaling_removes_empty_instances_itself_above_its_minimum(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-host", {"i-1": ["chat-7b"] * 4, "i-2": ["chat-7b"] * 4, "i-3": ["chat-7b"] * 4,
                                    "i-4": [None] * 4})
    doc, _ = audit(now, instance_count=4, managed=(1, 6))
    assert "component-empty-instances" not in {f["rule"] for f in doc["findings"]}


def test_managed_scaling_minimum_that_keeps_an_empty_instance_is_lowered(aws) -> None:
    now = utc_now()
    publish_hosts(now, "llm-host", {"i-1": ["chat-7b"] * 4, "i-2": ["chat-7b"] * 4, "i-3": ["chat-7b"] * 4,
                                    "i-4": [None] * 4})
    doc, _ = audit(now, instance_count=4, managed=(4, 6))
    (finding,) = [f for f in doc["findings"] if f["rule"] == "component-empty-instances"]
    assert finding["evidence"]["proposed_min_instances"] == 3 and finding["evidence"]["removable"] == 1
    rec = finding["recommendation"]
    assert rec["action"] == "managed-scaling" and rec["monthly_savings_usd"] == round(PRICE * 730, 2)
    assert rec["details"]["managed_instance_scaling"] == {
        "Status": "ENABLED", "MinInstanceCount": 3, "MaxInstanceCount": 6,
        "ScaleInPolicy": {"Strategy": "CONSOLIDATION"}}
    assert rec["advice"] == "3 x ml.g5.12xlarge: managed instance scaling, 3-6 instances, scale-in CONSOLIDATION"


def test_the_minimum_is_never_lowered_below_the_availability_floor(aws) -> None:
    """Two copies fill two of four instances; two stay empty under MinInstanceCount 4: lowered to
    two (the floor: min(current, 2)), freeing two, and never to the one instance the placement
    alone would allow."""
    now = utc_now()
    publish_hosts(now, "llm-host", {"i-1": ["chat-7b"] * 4, "i-2": ["chat-7b"] * 4, "i-3": [None] * 4,
                                    "i-4": [None] * 4})
    doc, _ = audit(now, instance_count=4, managed=(4, 4), components={"chat-7b": {**CHAT["chat-7b"], "copies": 2}})
    (finding,) = [f for f in doc["findings"] if f["rule"] == "component-empty-instances"]
    assert finding["evidence"]["proposed_min_instances"] == 2 and finding["evidence"]["removable"] == 2
    assert finding["recommendation"]["monthly_savings_usd"] == round(2 * PRICE * 730, 2)


# ---------- The demo's endpoint, seeded as the demo seeds it ----------

def test_in_the_demo_fleet_the_rule_fires_on_the_endpoint_with_an_empty_instance_only(aws) -> None:
    from dataclasses import replace

    from auditor_emulator.fleet import ComponentSpec, demo_fleet, seed_fleet

    demo = {s.name: s for s in demo_fleet()}
    llm = demo["support-llm"]
    full = replace(llm, name="support-llm-full",
                   components=(ComponentSpec("support-llm-full-70b", copies=3, accelerators=4, cpu_cores=16.0,
                                             memory_mb=131072),))
    blind = replace(llm, name="support-llm-blind", detailed_observability=False,
                    components=(replace(llm.components[0], name="support-llm-blind-70b"),))
    now = utc_now()
    seed_fleet(aws, [llm, full, blind, demo["pricing-api"]], now=now)
    clients = AwsClients()
    doc = report_to_dict(run_audit(AuditConfig(), clients, now=now).report)
    assert clients.counter.as_dict()["cloudwatch:QueryMetrics"] == 1  # one query for the region
    fired = {f["resource"]["name"]: f for f in doc["findings"] if f["rule"] == "component-empty-instances"}
    assert set(fired) == {"support-llm"}
    assert fired["support-llm"]["evidence"]["empty_instances"] == 1
    assert fired["support-llm"]["evidence"]["hours_measured"] == PLACEMENT_HOURS
    assert fired["support-llm"]["recommendation"]["monthly_savings_usd"] == round(PRICE * 730, 2)
    components = {e["name"]: e["inference_components"] for e in doc["endpoints"]}
    assert components["support-llm"][0]["copy_count"] == 2
    assert components["support-llm"][0]["per_copy"]["accelerators"] == 4.0


def test_empty_instances_are_those_empty_on_most_hours_and_at_the_last() -> None:
    from datetime import UTC, datetime

    from auditor.kinds.endpoints.models import ComponentPlacement
    from auditor.kinds.endpoints.rules.component_empty_instances import empty_hours

    hours = tuple(datetime(2026, 11, 30, h, tzinfo=UTC) for h in range(24))
    busy, empty = (2.0,) * 24, (0.0,) * 24
    # Two empty for 18 of 24 hours, then one of them gone: one is empty now.
    gone = ComponentPlacement(hours, {"i-1": busy, "i-2": (0.0,) * 18 + (None,) * 6, "i-3": empty})
    found = empty_hours(gone, 0.75)
    assert found is not None and found.hours == 24 and found.empty_last == 1 and found.empty == 1
    # One empty all day, a second one only the last 4 hours (a scale-out whose copy is not placed yet).
    new = ComponentPlacement(hours, {"i-1": busy, "i-3": empty, "i-4": (None,) * 20 + (0.0,) * 4})
    found = empty_hours(new, 0.75)
    assert found is not None and found.empty_last == 2 and found.empty == 1
    # Instance ids replaced during the day still count: two empty every hour, whichever they are.
    replaced = ComponentPlacement(hours, {"i-1": busy, "i-3": empty, "i-5": (0.0,) * 12 + (None,) * 12,
                                          "i-6": (None,) * 12 + (0.0,) * 12})
    assert empty_hours(replaced, 0.75).empty == 2  # type: ignore[union-attr]
    assert empty_hours(ComponentPlacement(hours, {"i-1": (None,) * 24}), 0.75) is None
