"""Enhanced metrics (MetricsConfig.EnableEnhancedMetrics), end to end against the emulator: the
config is read, the per-instance (InstanceId) and per-GPU (AcceleratorId) series are found with
one ListMetrics and collected, sizing reads the hottest instance, and instance-imbalance,
gpu-unused-devices and enhanced-metrics-off fire where they should and nowhere else."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from auditor.collect.config_cache import MemoryConfigCache
from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import HOTTEST_INSTANCE, VARIANT_MEAN, hottest_instance_sizing
from auditor.kinds.endpoints.discover import CONFIG_FORMAT
from auditor.kinds.endpoints.models import InstanceUtilization
from auditor.models import Resource, ResourceUtilization, VariantUtilization
from auditor.pipeline import run_audit
from auditor.report.document import report_to_dict
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, demo_fleet, fleet_datums, seed_fleet
from auditor_emulator.published import (
    ASYNC,
    INSTANCE_NS,
    INVOCATION_NS,
    REAL_TIME,
    UnpublishedMetricError,
    check_datum,
)
from auditor_emulator.server import ACCOUNT_ID
from conftest import seeded_emulator, utc_now

NEW_RULES = ("instance-imbalance", "gpu-unused-devices", "enhanced-metrics-off")
DEMO = {s.name: s for s in demo_fleet()}
# Every GPU of a 4-GPU instance busy: a model sharded across them all needs them all.
SHARDED = EndpointSpec("llm-sharded", (VariantSpec(
    "ml.g4dn.12xlarge", 1, cpu=Load(10, 3), memory=Load(30, 2),
    gpu_devices=(Load(45, 5),) * 4, gpu_memory_devices=(Load(60, 1),) * 4),), enhanced_metrics=True)
# Enhanced metrics on a busy, balanced, autoscaled variant: nothing to say.
BALANCED = EndpointSpec("ads-ctr", (VariantSpec("ml.m5.xlarge", 3, cpu=Load(66, 8), memory=Load(58, 2),
                                                autoscaling=(3, 6)),), enhanced_metrics=True)
# One instance of three runs hot on the same share of requests as the others: per-request cost, not routing.
COSTLY = EndpointSpec("ranker-uneven", (VariantSpec("ml.c5.2xlarge", 3, memory=Load(40, 2),
                                                    instance_cpu=(Load(66, 5), Load(12, 2), Load(11, 2))),),
                      enhanced_metrics=True)
# Mildly uneven (no imbalance), no autoscaling: the invocation target must keep the hottest at the target.
MILD = EndpointSpec("mild-skew", (VariantSpec("ml.c5.xlarge", 3, memory=Load(40, 2),
                                              instance_cpu=(Load(48, 3), Load(30, 3), Load(28, 3))),),
                    enhanced_metrics=True)
MILD_BLIND = replace(MILD, name="mild-skew-blind", enhanced_metrics=False)
# The imbalanced endpoint without enhanced metrics: the variant mean is all the audit sees.
BLIND = replace(DEMO["chat-router"], name="chat-router-blind", enhanced_metrics=False)
FLEET = [DEMO["chat-router"], DEMO["doc-embedder-gpu"], BALANCED, DEMO["pricing-api"], SHARDED, BLIND, COSTLY,
         MILD, MILD_BLIND]


@pytest.fixture(scope="module")
def doc(emulator, tmp_path_factory) -> Iterator[dict]:
    now = utc_now()
    with seeded_emulator(emulator, tmp_path_factory.mktemp("home"), lambda emu: seed_fleet(emu, FLEET, now=now)):
        yield report_to_dict(run_audit(AuditConfig(), AwsClients(), now=now).report)


def found(doc: dict, rule: str) -> dict[str, dict]:
    return {f["resource"]["name"]: f for f in doc["findings"] if f["rule"] == rule}


def variant(doc: dict, endpoint: str) -> dict:
    (e,) = [e for e in doc["endpoints"] if e["name"] == endpoint]
    return e["variants"][0]


def test_metrics_config_is_read_and_per_instance_series_collected(doc: dict) -> None:
    configs = {e["name"]: e["metrics_config"] for e in doc["endpoints"]}
    assert configs["chat-router"] == {"enhanced_metrics": True, "detailed_observability": False,
                                      "publish_frequency_seconds": 60}
    assert configs["pricing-api"] is None and configs["chat-router-blind"] is None
    chat = variant(doc, "chat-router")
    assert len(chat["instances"]) == 4 and chat["sizing_basis"] == HOTTEST_INSTANCE
    p95 = sorted(i["utilization"]["cpu"]["p95"] for i in chat["instances"])
    assert p95[-1] > 70 and p95[-2] < 15  # one hot, three idle; the variant's mean is neither
    gpu = variant(doc, "doc-embedder-gpu")
    (instance,) = gpu["instances"]
    assert sorted(instance["accelerators"]) == ["GPU-0", "GPU-1", "GPU-2", "GPU-3"]
    assert instance["accelerators"]["GPU-0"]["gpu"]["p95"] > 30
    assert all(instance["accelerators"][d]["gpu"]["p95"] < 5 for d in ("GPU-1", "GPU-2", "GPU-3"))
    blind = variant(doc, "pricing-api")
    assert blind["sizing_basis"] == VARIANT_MEAN and blind["instances"] is None
    # ListMetrics once per namespace (utilisation, invocations) for the region's endpoints, not per endpoint.
    assert doc["summary"]["api_calls_by_operation"].get("cloudwatch:ListMetrics") == 2


def test_instance_imbalance_fires_on_the_hot_instance_only_and_holds_back_count_reductions(doc: dict) -> None:
    imbalance = found(doc, "instance-imbalance")
    assert set(imbalance) == {"chat-router", "ranker-uneven"}
    finding = imbalance["chat-router"]
    hot = max(variant(doc, "chat-router")["instances"], key=lambda i: i["utilization"]["cpu"]["p95"])
    assert finding["evidence"]["hot_instance"] == hot["instance_id"] and finding["recommendation"] is None
    assert "fix the routing before resizing" in finding["message"]
    for endpoint in ("chat-router", "ranker-uneven"):
        for rule in ("overprovisioned-count", "no-autoscaling", "underutilized"):
            assert endpoint not in found(doc, rule), (endpoint, rule)
    # Blind to the instances, the variant's hourly CPU average (~25%) has autoscaling run fewer of
    # them: what the per-instance series prevent.
    blind = found(doc, "no-autoscaling")["chat-router-blind"]
    assert blind["recommendation"]["monthly_savings_usd"] > 0


def test_instance_imbalance_tells_routing_skew_from_per_request_cost(doc: dict) -> None:
    imbalance = found(doc, "instance-imbalance")
    routing = imbalance["chat-router"]["evidence"]
    assert routing["cause"] == "routing" and routing["hot_requests_multiple"] > 5
    assert routing["instance_request_share"][routing["hot_instance"]] > 0.6
    assert "routing or stickiness imbalance" in imbalance["chat-router"]["message"]
    costly = imbalance["ranker-uneven"]
    assert costly["evidence"]["cause"] == "per-request cost"
    assert 0.85 < costly["evidence"]["hot_requests_multiple"] < 1.2
    assert all(0.28 < v < 0.39 for v in costly["evidence"]["instance_request_share"].values())
    assert "per-request cost imbalance, not routing" in costly["message"]
    assert "routing or stickiness" not in costly["message"]


def test_the_invocation_target_keeps_the_hottest_instance_at_the_target(doc: dict) -> None:
    scaling = found(doc, "no-autoscaling")
    seen, blind = scaling["mild-skew"]["evidence"], scaling["mild-skew-blind"]["evidence"]
    assert seen["cpu_basis"] == "hottest instance" and blind["cpu_basis"] == "variant mean"
    # Same traffic; read against the hottest instance's CPU (~48% vs the mean ~35%), a lower target.
    ratio = seen["policy"]["TargetValue"] / blind["policy"]["TargetValue"]
    assert 0.6 < ratio < 0.85
    assert "mild-skew" not in found(doc, "instance-imbalance")


def test_request_shares_are_per_period_measured_and_none_when_unpublished() -> None:
    import pandas as pd

    from auditor.kinds.endpoints.assessment import VariantAssessment
    from auditor.kinds.endpoints.models import Variant
    from auditor.kinds.endpoints.rules.instance_imbalance import request_shares

    hours = pd.date_range("2026-11-01", periods=48, freq="h", tz="UTC")
    full = pd.DataFrame({"cpu:Maximum": 50.0, "Invocations:Sum": 100.0}, index=hours)
    # Replaced halfway: measured 24 periods at the same rate. No request at all: no Invocations column.
    half = pd.DataFrame({"cpu:Maximum": 10.0, "Invocations:Sum": 100.0}, index=hours[24:])
    idle = pd.DataFrame({"cpu:Maximum": 5.0}, index=hours)
    va = VariantAssessment(Variant("v", "ml.c5.xlarge", 3), None, None, None,
                           instance_series={"i-a": full, "i-b": half, "i-c": idle})
    shares = request_shares(va, {"i-a": 48, "i-b": 24, "i-c": 48})
    assert shares == {"i-a": 0.5, "i-b": 0.5, "i-c": 0.0}
    unpublished = VariantAssessment(Variant("v", "ml.c5.xlarge", 2), None, None, None,
                                    instance_series={"i-a": full[["cpu:Maximum"]], "i-c": idle})
    assert request_shares(unpublished, {"i-a": 48, "i-c": 48}) is None


def test_gpu_unused_devices_fires_on_the_one_gpu_model_only_with_a_one_gpu_shape(doc: dict) -> None:
    gpu = found(doc, "gpu-unused-devices")
    assert set(gpu) == {"doc-embedder-gpu"}
    finding = gpu["doc-embedder-gpu"]
    assert finding["evidence"]["gpus_used"] == 1 and finding["evidence"]["gpus_per_instance"] == 4
    rec = finding["recommendation"]
    assert rec["instance_type"].startswith("ml.g4dn.") and rec["instance_type"] != "ml.g4dn.12xlarge"
    assert rec["monthly_savings_usd"] > 0
    assert "llm-sharded" not in gpu


def test_one_fleet_note_lists_the_endpoints_that_would_gain(doc: dict) -> None:
    notes = [f for f in doc["findings"] if f["rule"] == "enhanced-metrics-off"]
    assert len(notes) == 1
    (note,) = notes
    assert note["severity"] == "info" and note["resource"]["type"] == "endpoint-fleet"
    assert set(note["evidence"]["endpoints"]) == {"pricing-api", "chat-router-blind", "mild-skew-blind"}
    assert "EnableEnhancedMetrics" in note["message"]
    # What enabling it would publish (billed): per instance 3 utilisation + 7 invocation series on
    # these CPU types; 2 + 4 + 3 instances.
    cost = note["evidence"]["cost"]
    assert note["evidence"]["series_published"] == cost["series_published"] == 90
    assert cost["rate_usd_per_metric_month"] == 0.30 and cost["monthly_usd"] == 27.0
    assert cost["usage_type"] == "CW:MetricMonitorUsage" and cost["as_of"] and "cloudwatch/pricing" in cost["source"]
    assert "first tier" in note["message"] and "$27.00/month" in note["message"]
    assert "per metric per unique dimension combination" in cost["billing"]
    assert 0 < cost["get_metric_data_usd_per_audit"] < 0.01
    assert "--metrics-config EnableEnhancedMetrics=true" in note["evidence"]["how"]
    assert "AWS::SageMaker::EndpointConfig" in note["remediation"]


def test_the_cost_of_enabling_is_priced_only_where_a_rate_is_bundled() -> None:
    from auditor.kinds.endpoints.rules.enhanced_metrics_off import monthly_cost
    from auditor.prices.cloudwatch import cloudwatch_rates

    rates = cloudwatch_rates("us-east-1")
    assert rates is not None and rates.first_tier.usd_per_metric_month == 0.30
    assert [t.usd_per_metric_month for t in rates.tiers] == [0.30, 0.10, 0.05, 0.02]
    priced = monthly_cost(1000, 2000, rates)
    assert priced["monthly_usd"] == 300.0 and priced["get_metric_data_usd_per_audit"] == 0.02
    assert cloudwatch_rates("eu-west-1") is None  # no rate of its own, no assumption
    unpriced = monthly_cost(1000, 2000, cloudwatch_rates("eu-west-1"))
    assert unpriced["monthly_usd"] is None and "pricing.assume_prices_from" in unpriced["reason"]
    borrowed = cloudwatch_rates("eu-west-1", fallback_region="us-east-1")
    assert borrowed is not None and borrowed.region == "us-east-1"


def test_a_balanced_endpoint_with_enhanced_metrics_draws_no_new_finding(doc: dict) -> None:
    assert variant(doc, "ads-ctr")["sizing_basis"] == HOTTEST_INSTANCE
    assert len(variant(doc, "ads-ctr")["instances"]) == 3
    assert not [f for f in doc["findings"] if f["resource"]["name"] == "ads-ctr"]


def test_an_older_kept_config_is_described_again_for_its_metrics_config(emulator, tmp_path) -> None:
    now = utc_now()
    with seeded_emulator(emulator, tmp_path, lambda emu: seed_fleet(emu, [DEMO["chat-router"]], now=now)):
        configs = MemoryConfigCache()
        configs.put(ACCOUNT_ID, "us-east-1", "chat-router-config",
                    {"Format": CONFIG_FORMAT - 1, "ProductionVariants": [
                        {"VariantName": "AllTraffic", "InstanceType": "ml.c5.2xlarge", "InitialInstanceCount": 4,
                         "ModelName": "chat-router-model"}], "ShadowProductionVariants": [],
                     "AsyncInferenceConfig": False})
        doc = report_to_dict(run_audit(AuditConfig(), AwsClients(), now=now, configs=configs).report)
    (endpoint,) = doc["endpoints"]
    assert endpoint["metrics_config"]["enhanced_metrics"] is True
    assert configs.get(ACCOUNT_ID, "us-east-1", "chat-router-config")["Format"] == CONFIG_FORMAT


def test_per_instance_series_are_published_only_for_endpoints_that_enable_them() -> None:
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    datums = fleet_datums(FLEET, now)[INSTANCE_NS]
    by_endpoint: dict[str, set[tuple[str, ...]]] = {}
    for d in datums:
        dims = {x["Name"]: x["Value"] for x in d["Dimensions"]}
        by_endpoint.setdefault(dims["EndpointName"], set()).add(tuple(dims))
    with_instances = {e for e, sets in by_endpoint.items() if any("InstanceId" in s for s in sets)}
    assert with_instances == {"chat-router", "doc-embedder-gpu", "ads-ctr", "llm-sharded", "ranker-uneven",
                              "mild-skew"}
    assert ("EndpointName", "VariantName", "InstanceId", "AcceleratorId") in by_endpoint["doc-embedder-gpu"]
    dims = [{"Name": "EndpointName", "Value": "e"}, {"Name": "VariantName", "Value": "v"},
            {"Name": "InstanceId", "Value": "i-0"}]
    datum = {"MetricName": "CPUUtilization", "Dimensions": dims,
             "StatisticValues": {"SampleCount": 60.0, "Sum": 600.0, "Minimum": 5.0, "Maximum": 20.0}}
    check_datum("e", REAL_TIME, INSTANCE_NS, datum, enhanced=True)
    with pytest.raises(UnpublishedMetricError, match="only when the endpoint config enables enhanced metrics"):
        check_datum("e", REAL_TIME, INSTANCE_NS, datum)
    with pytest.raises(UnpublishedMetricError, match="Invocations"):  # not in the enhanced table
        check_datum("e", REAL_TIME, INSTANCE_NS, {**datum, "MetricName": "Invocations"}, enhanced=True)
    invocations = {**datum, "MetricName": "Invocations"}
    check_datum("e", REAL_TIME, INVOCATION_NS, invocations, enhanced=True)
    with pytest.raises(UnpublishedMetricError, match="only when the endpoint config enables enhanced metrics"):
        check_datum("e", REAL_TIME, INVOCATION_NS, invocations)
    with pytest.raises(UnpublishedMetricError):  # async endpoints publish no Invocations, per instance or not
        check_datum("e", ASYNC, INVOCATION_NS, invocations, enhanced=True)


def test_each_instance_publishes_the_requests_it_served_summing_to_the_variants() -> None:
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    datums = fleet_datums([DEMO["chat-router"], BALANCED, DEMO["pricing-api"]], now)[INVOCATION_NS]
    per_instance: dict[tuple[str, str], float] = {}
    variant_total: dict[str, float] = {}
    for d in datums:
        if d["MetricName"] != "Invocations":
            continue
        dims = {x["Name"]: x["Value"] for x in d["Dimensions"]}
        if "InstanceId" in dims:
            key = (dims["EndpointName"], dims["InstanceId"])
            per_instance[key] = per_instance.get(key, 0.0) + d["StatisticValues"]["Sum"]
        else:
            variant_total[dims["EndpointName"]] = variant_total.get(dims["EndpointName"], 0.0) + \
                d["StatisticValues"]["Sum"]
    assert {e for e, _ in per_instance} == {"chat-router", "ads-ctr"}  # pricing-api: enhanced metrics off
    for endpoint in ("chat-router", "ads-ctr"):
        mine = {i: v for (e, i), v in per_instance.items() if e == endpoint}
        assert sum(mine.values()) == variant_total[endpoint]
    chat = sorted(v / variant_total["chat-router"] for (e, _), v in per_instance.items() if e == "chat-router")
    assert chat[-1] > 0.7 and chat[0] < 0.12  # sticky clients: one instance serves three quarters
    ads = [v / variant_total["ads-ctr"] for (e, _), v in per_instance.items() if e == "ads-ctr"]
    assert all(0.3 < v < 0.37 for v in ads)


def _utilization(cpu: float, memory: float) -> VariantUtilization:
    figures = {Resource.CPU: cpu, Resource.MEMORY: memory}
    return VariantUtilization({r: ResourceUtilization(v, v, v) for r, v in figures.items()}, 14.0, None,
                              sizing=dict(figures), peak=dict(figures))


def test_sizing_reads_the_hottest_instance_never_below_the_variant() -> None:
    variant_mean = _utilization(25.0, 40.0)
    instances = (InstanceUtilization("i-hot", _utilization(90.0, 38.0)),
                 InstanceUtilization("i-idle", _utilization(5.0, 39.0)))
    sized, basis = hottest_instance_sizing(variant_mean, instances)
    assert basis == HOTTEST_INSTANCE
    assert sized.peak[Resource.CPU] == 90.0 and sized.sizing[Resource.CPU] == 90.0
    assert sized.peak[Resource.MEMORY] == 40.0  # the variant's own figure was higher
    assert hottest_instance_sizing(variant_mean, ()) == (variant_mean, VARIANT_MEAN)


def test_only_the_enhanced_endpoints_series_become_queries_with_their_listed_dimensions(aws) -> None:
    import boto3

    from auditor.kinds.endpoints.enhanced import enhanced_queries
    from auditor.kinds.endpoints.models import Endpoint, EndpointKind, MetricsConfig, Variant

    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")

    def put(metric: str, **dims: str) -> None:
        cloudwatch.put_metric_data(Namespace=INSTANCE_NS, MetricData=[{
            "MetricName": metric, "Value": 5.0, "Timestamp": utc_now(),
            "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()]}])

    put("CPUUtilization", EndpointName="on", VariantName="v", InstanceId="i-1")
    put("GPUUtilization", EndpointName="on", VariantName="v", InstanceId="i-1", AcceleratorId="GPU-0")
    put("CPUUtilization", EndpointName="on", VariantName="v", InstanceId="i-2/x")  # not an instance id
    put("CPUUtilization", EndpointName="on", VariantName="v", InstanceId="i-3", Extra="?")  # an unknown set
    put("CPUUtilization", EndpointName="off", VariantName="v", InstanceId="i-9")  # enhanced metrics off
    put("CPUUtilization", EndpointName="on", VariantName="v")  # the variant's own series
    for metric in ("Invocations", "ModelLatency"):  # requests per instance are read; latency is not
        cloudwatch.put_metric_data(Namespace=INVOCATION_NS, MetricData=[{
            "MetricName": metric, "Value": 7.0, "Timestamp": utc_now(),
            "Dimensions": [{"Name": "EndpointName", "Value": "on"}, {"Name": "VariantName", "Value": "v"},
                           {"Name": "InstanceId", "Value": "i-1"}]}])

    def endpoint(name: str, enhanced: bool) -> Endpoint:
        return Endpoint(ACCOUNT_ID, "us-east-1", name, f"arn:aws:sagemaker:us-east-1:{ACCOUNT_ID}:endpoint/{name}",
                        "InService", EndpointKind.REAL_TIME, utc_now(), f"{name}-config", {},
                        (Variant("v", "ml.g4dn.12xlarge", 1),), metrics_config=MetricsConfig(enhanced))

    found = enhanced_queries(cloudwatch, "us-east-1", [endpoint("on", True), endpoint("off", False)])
    assert found.calls == 2 and not found.errors  # one listing per namespace
    owners = {(q.endpoint, q.component, q.spec.column) for q in found.queries}
    assert owners == {("on", "instance:i-1", "Invocations:Sum"),
                      ("on", "instance:i-1", "CPUUtilization:Average"),
                      ("on", "instance:i-1", "CPUUtilization:Maximum"),
                      ("on", "accelerator:i-1/GPU-0", "GPUUtilization:Average"),
                      ("on", "accelerator:i-1/GPU-0", "GPUUtilization:Maximum")}
    gpu = next(q for q in found.queries if q.component == "accelerator:i-1/GPU-0")
    assert [d["Name"] for d in gpu.dimensions] == ["EndpointName", "VariantName", "InstanceId", "AcceleratorId"]
    assert enhanced_queries(cloudwatch, "us-east-1", [endpoint("off", False)]).calls == 0  # nobody enabled it
