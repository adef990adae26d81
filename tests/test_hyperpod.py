"""HyperPod clusters (issue 18): discovery against the emulator (paged), the emulator's answers
against botocore's output shapes, cost at the HyperPod rate, and rule hyperpod-idle-nodes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.stub import Stubber

from auditor.catalog import load_catalog
from auditor.collect.session import RegionAccessError
from auditor.kinds.hyperpod.cost import cluster_monthly_cost, group_costs, price_lookup_from_table
from auditor.kinds.hyperpod.discover import discover_clusters
from auditor.kinds.hyperpod.idle import (
    ENABLE_EKS,
    ENABLE_GPU,
    ENABLE_SLURM,
    NO_METRIC,
    assess_cluster,
    describe_shrink,
)
from auditor.kinds.hyperpod.metrics import NodeSeries, NodeUtilisation, fetch_node_utilisation, match_node_series
from auditor.kinds.hyperpod.models import Cluster, ClusterNode, InstanceGroup, Orchestrator
from auditor.kinds.hyperpod.report import assessment_json, assessment_lines
from auditor.prices.parse import parse_price_item
from auditor.prices.table import build_table
from auditor_emulator.fleet import Load
from auditor_emulator.hyperpod import ClusterSpec, GroupSpec, demo_clusters, instance_id, seed_hyperpod
from auditor_emulator.server import Emulator
from conftest import seeded_emulator

REGION = "us-east-1"
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
DAYS = 3  # a short window keeps the seeding fast; the rule only needs it covered
PERIODS = DAYS * 24
IDLE = Load(1.5, 0.5, 0.3, burst=0.5)
PRICES = {"ml.g5.8xlarge": 3.06, "ml.g5.12xlarge": 7.09, "ml.c5.4xlarge": 0.816}
CATALOG = load_catalog()


def price(instance_type: str, region: str) -> float | None:
    return PRICES.get(instance_type) if region == REGION else None


def accelerated(instance_type: str) -> bool:
    shape = CATALOG.shape(instance_type)
    return shape is not None and shape.gpu_count > 0


def clusters() -> list[ClusterSpec]:
    return [
        *demo_clusters(),
        # An EKS cluster whose CPU group has one node the agent never reached.
        ClusterSpec("partly-observed", eks_cluster="team-b-eks", groups=(
            GroupSpec("cpu-c5", "ml.c5.4xlarge", 3, cpu=IDLE, memory=Load(10, 1, 1), unobserved=1),)),
        # An EKS cluster without Container Insights.
        ClusterSpec("dark-eks", eks_cluster="team-c-eks", observed=False, groups=(
            GroupSpec("gpu", "ml.g5.8xlarge", 2),)),
    ]


@pytest.fixture(scope="module")
def seeded(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    with seeded_emulator(emulator, tmp_path_factory.mktemp("hyperpod"),
                         lambda emu: seed_hyperpod(emu, clusters(), NOW, lookback_days=DAYS)):
        yield emulator


@pytest.fixture(scope="module")
def discovered(seeded: Emulator) -> dict[str, Cluster]:
    found = discover_clusters(boto3.client("sagemaker", region_name=REGION), REGION)
    assert found.errors == ()
    return {c.name: c for c in found.clusters}


def utilisation(seeded: Emulator, cluster: Cluster) -> dict[str, NodeUtilisation]:
    return fetch_node_utilisation(boto3.client("cloudwatch", region_name=REGION), REGION, cluster,
                                  NOW - timedelta(days=DAYS), NOW, 3600)


# --- discovery ------------------------------------------------------------------------------

def test_discovery_pages_through_clusters_and_nodes(seeded: Emulator) -> None:
    client = boto3.client("sagemaker", region_name=REGION)
    calls: list[str] = []
    client.meta.events.register("before-call.sagemaker.*", lambda model, **_: calls.append(model.name))
    found = discover_clusters(client, REGION, page_size=2)
    assert found.errors == ()
    by_name = {c.name: c for c in found.clusters}
    assert set(by_name) == {"llm-platform", "research-slurm", "partly-observed", "dark-eks"}
    assert calls.count("ListClusters") == 2  # 4 clusters, 2 a page
    platform = by_name["llm-platform"]
    assert len(platform.nodes) == 5  # 3 pages of ListClusterNodes
    assert {g.name: (g.instance_type, g.current_count) for g in platform.groups} == {
        "train-g5-8xl": ("ml.g5.8xlarge", 3), "eval-g5-8xl": ("ml.g5.8xlarge", 2)}
    assert {n.instance_id for n in platform.nodes_of("eval-g5-8xl")} == {
        instance_id("llm-platform", "eval-g5-8xl", i) for i in range(2)}
    assert all(n.status == "Running" and n.launch_time.tzinfo for n in platform.nodes)


def test_orchestrator_and_eks_cluster_name(discovered: dict[str, Cluster]) -> None:
    assert discovered["llm-platform"].orchestrator is Orchestrator.EKS
    assert discovered["llm-platform"].eks_cluster_name == "ml-platform-eks"
    assert discovered["llm-platform"].account_id == "123456789012"
    assert discovered["research-slurm"].orchestrator is Orchestrator.SLURM
    assert discovered["research-slurm"].eks_cluster_name is None


def _stubbed() -> tuple[Any, Stubber]:
    client = boto3.client("sagemaker", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    return client, Stubber(client)


def test_access_denied_is_an_error_line_not_an_empty_list() -> None:
    client, stub = _stubbed()
    stub.add_client_error("list_clusters", "AccessDeniedException", "not authorized", 400)
    with stub, pytest.raises(RegionAccessError, match=r"access denied: sagemaker:ListClusters in us-east-1"):
        discover_clusters(client, REGION)


def test_denied_describe_stops_the_region_but_a_vanished_cluster_is_one_error() -> None:
    summary = {"ClusterArn": "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456", "ClusterName": "gone",
               "CreationTime": NOW, "ClusterStatus": "InService"}
    client, stub = _stubbed()
    stub.add_response("list_clusters", {"ClusterSummaries": [summary]})
    stub.add_client_error("describe_cluster", "ValidationException", "Could not find cluster 'gone'.", 400)
    with stub:
        found = discover_clusters(client, REGION)
    assert found.clusters == ()
    assert [e.message for e in found.errors] == [
        "sagemaker:DescribeCluster in us-east-1 failed: ValidationException: Could not find cluster 'gone'."]
    client, stub = _stubbed()
    stub.add_response("list_clusters", {"ClusterSummaries": [summary]})
    stub.add_client_error("describe_cluster", "AccessDeniedException", "no", 400)
    with stub, pytest.raises(RegionAccessError, match="DescribeCluster"):
        discover_clusters(client, REGION)


# --- the emulator answers as AWS does -------------------------------------------------------

MODEL = botocore.session.get_session().get_service_model("sagemaker")


def _check(value: Any, shape: Any, path: str) -> list[str]:
    """Members, required members, enums and patterns of botocore's output shape."""
    problems: list[str] = []
    if shape.type_name == "structure":
        problems += [f"{path}: unknown member {k}" for k in value if k not in shape.members]
        problems += [f"{path}: missing {k}" for k in shape.required_members if k not in value]
        for key, item in value.items():
            if key in shape.members:
                problems += _check(item, shape.members[key], f"{path}.{key}")
    elif shape.type_name == "list":
        for i, item in enumerate(value):
            problems += _check(item, shape.member, f"{path}[{i}]")
    elif shape.type_name == "string":
        if shape.enum and value not in shape.enum:
            problems.append(f"{path}: {value!r} not in {shape.name}")
        pattern = shape.metadata.get("pattern")
        if pattern and not re.fullmatch(pattern, value):
            problems.append(f"{path}: {value!r} does not match {pattern}")
    elif shape.type_name == "timestamp" and not isinstance(value, datetime):
        problems.append(f"{path}: not a timestamp")
    return problems


def test_emulator_answers_match_botocore_output_shapes(seeded: Emulator) -> None:
    client = boto3.client("sagemaker", region_name=REGION)
    answers: list[tuple[str, dict[str, Any]]] = [("ListClusters", client.list_clusters())]
    for name in ("llm-platform", "research-slurm"):
        answers.append(("DescribeCluster", client.describe_cluster(ClusterName=name)))
        nodes = client.list_cluster_nodes(ClusterName=name)
        answers.append(("ListClusterNodes", nodes))
        node = nodes["ClusterNodeSummaries"][0]["InstanceId"]
        answers.append(("DescribeClusterNode", client.describe_cluster_node(ClusterName=name, NodeId=node)))
    problems = []
    for operation, answer in answers:
        answer.pop("ResponseMetadata", None)
        answer = {k: v for k, v in answer.items() if v is not None}
        problems += _check(answer, MODEL.operation_model(operation).output_shape, operation)
    assert problems == []
    described = client.describe_cluster(ClusterName="llm-platform")
    eks = "arn:aws:eks:us-east-1:123456789012:cluster/ml-platform-eks"
    assert described["Orchestrator"] == {"Eks": {"ClusterArn": eks}}
    assert "Orchestrator" not in client.describe_cluster(ClusterName="research-slurm")


def test_only_eks_nodes_publish_and_only_documented_metrics(seeded: Emulator) -> None:
    cloudwatch = boto3.client("cloudwatch", region_name=REGION)
    listed = [m for page in cloudwatch.get_paginator("list_metrics").paginate(Namespace="ContainerInsights")
              for m in page["Metrics"]]
    assert {m["MetricName"] for m in listed} == {"node_cpu_utilization", "node_memory_utilization",
                                                 "node_gpu_utilization", "node_gpu_memory_utilization"}
    assert {d["Value"] for m in listed for d in m["Dimensions"] if d["Name"] == "ClusterName"} == {
        "ml-platform-eks", "team-b-eks"}  # Slurm and the unobserved EKS cluster publish nothing
    for m in listed:
        dims = {d["Name"]: d["Value"] for d in m["Dimensions"]}
        assert set(dims) == {"ClusterName", "InstanceId", "NodeName"}
        assert dims["NodeName"] == f"hyperpod-{dims['InstanceId']}"
    # No GPU metric for a CPU-only node type.
    assert not any(m["MetricName"].startswith("node_gpu") and any(d["Value"] == "team-b-eks" for d in m["Dimensions"])
                   for m in listed)


# --- metrics matching (pure) ----------------------------------------------------------------

EKS_ARN = "arn:aws:eks:us-east-1:123456789012:cluster/eks-1"


def _cluster(orchestrator: Orchestrator = Orchestrator.EKS, nodes: tuple[tuple[str, str, str], ...] = (),
             groups: tuple[tuple[str, str, int], ...] = ()) -> Cluster:
    return Cluster(
        arn="arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456", name="c", region=REGION,
        status="InService", created=NOW, orchestrator=orchestrator,
        eks_cluster_arn=EKS_ARN if orchestrator is Orchestrator.EKS else None,
        groups=tuple(InstanceGroup(g, t, n, n) for g, t, n in groups),
        nodes=tuple(ClusterNode(i, g, t, "Running", NOW) for i, g, t in nodes))


def test_series_are_matched_by_instance_id_on_the_node_level_dimensions_only() -> None:
    cluster = _cluster(nodes=(("i-0aaaaaaaaaaaaaaaa", "g", "ml.g5.8xlarge"),))
    node = [{"Name": "ClusterName", "Value": "eks-1"}, {"Name": "InstanceId", "Value": "i-0aaaaaaaaaaaaaaaa"},
            {"Name": "NodeName", "Value": "hyperpod-i-0aaaaaaaaaaaaaaaa"}]
    listed = [
        {"Namespace": "ContainerInsights", "MetricName": "node_gpu_utilization", "Dimensions": node},
        {"Namespace": "ContainerInsights", "MetricName": "node_gpu_utilization", "Dimensions": node},  # listed twice
        # Per GPU: InstanceType and GpuDevice too; not the node's series.
        {"Namespace": "ContainerInsights", "MetricName": "node_gpu_utilization",
         "Dimensions": [*node, {"Name": "InstanceType", "Value": "g5.8xlarge"},
                        {"Name": "GpuDevice", "Value": "nvidia0"}]},
        # Another EKS cluster, and a node that is not the HyperPod cluster's.
        {"Namespace": "ContainerInsights", "MetricName": "node_cpu_utilization",
         "Dimensions": [{"Name": "ClusterName", "Value": "eks-2"}, *node[1:]]},
        {"Namespace": "ContainerInsights", "MetricName": "node_cpu_utilization",
         "Dimensions": [node[0], {"Name": "InstanceId", "Value": "i-0bbbbbbbbbbbbbbbb"},
                        {"Name": "NodeName", "Value": "ip-10-0-0-1.ec2.internal"}]},
    ]
    dims = tuple(sorted((d["Name"], d["Value"]) for d in node))
    assert match_node_series(cluster, listed) == (
        NodeSeries(cluster.arn, "g", "i-0aaaaaaaaaaaaaaaa", "node_gpu_utilization", dims),)
    assert match_node_series(_cluster(Orchestrator.SLURM, nodes=(("i-0aaaaaaaaaaaaaaaa", "g", "x"),)), listed) == ()


# --- the rule, end to end through the emulator ----------------------------------------------

def test_idle_group_fires_with_its_saving_and_the_busy_group_does_not(seeded: Emulator,
                                                                      discovered: dict[str, Cluster]) -> None:
    cluster = discovered["llm-platform"]
    verdict = assess_cluster(cluster, utilisation(seeded, cluster), price, window_periods=PERIODS,
                             accelerated=accelerated)
    assert [(s.group, s.shrink_by, s.target_count) for s in verdict.shrinks] == [("eval-g5-8xl", 2, 0)]
    shrink = verdict.shrinks[0]
    assert shrink.monthly_saving == round(2 * 3.06 * 730, 2)
    assert shrink.busiest_idle_cpu < 5 and shrink.busiest_idle_gpu is not None and shrink.busiest_idle_gpu < 5
    assert verdict.not_judged == ()
    assert verdict.monthly_cost == round(5 * 3.06 * 730, 2)
    assert "shrink the group to 0" in describe_shrink(shrink, 5, DAYS)
    # A lower ceiling than the idle nodes' busiest hour: nothing fires.
    strict = assess_cluster(cluster, utilisation(seeded, cluster), price, window_periods=PERIODS,
                            accelerated=accelerated, idle_ceiling_percent=0.5)
    assert strict.shrinks == ()


def test_slurm_cluster_is_listed_with_its_cost_but_not_judged(discovered: dict[str, Cluster]) -> None:
    cluster = discovered["research-slurm"]
    verdict = assess_cluster(cluster, {}, lambda t, r: {"ml.m5.xlarge": 0.23, "ml.p4d.24xlarge": 25.91}.get(t),
                             window_periods=PERIODS, accelerated=accelerated)
    assert verdict.shrinks == ()
    assert verdict.monthly_cost == round((0.23 + 2 * 25.91) * 730, 2)
    [note] = verdict.not_judged
    assert note.reason.startswith(NO_METRIC) and note.how_to_enable == ENABLE_SLURM


def test_nodes_without_metrics_are_not_judged_and_not_counted_idle(seeded: Emulator,
                                                                   discovered: dict[str, Cluster]) -> None:
    cluster = discovered["partly-observed"]
    verdict = assess_cluster(cluster, utilisation(seeded, cluster), price, window_periods=PERIODS,
                             accelerated=accelerated)
    [shrink] = verdict.shrinks
    silent = instance_id("partly-observed", "cpu-c5", 2)
    assert shrink.shrink_by == 2 and silent not in shrink.idle_nodes
    assert [(n.instance_id, n.how_to_enable) for n in verdict.not_judged] == [(silent, ENABLE_EKS)]


def test_eks_cluster_without_container_insights_is_not_judged(seeded: Emulator,
                                                             discovered: dict[str, Cluster]) -> None:
    cluster = discovered["dark-eks"]
    verdict = assess_cluster(cluster, utilisation(seeded, cluster), price, window_periods=PERIODS,
                             accelerated=accelerated)
    assert verdict.shrinks == ()
    [note] = verdict.not_judged
    assert note.group is None and "team-c-eks" in note.reason and note.how_to_enable == ENABLE_EKS
    assert verdict.monthly_cost == round(2 * 3.06 * 730, 2)


# --- the rule's edges (pure) ----------------------------------------------------------------

GPU_NODE = ("i-0aaaaaaaaaaaaaaaa", "g", "ml.g5.8xlarge")


def test_gpu_node_without_gpu_metric_is_not_judged_even_with_idle_cpu() -> None:
    cluster = _cluster(nodes=(GPU_NODE,), groups=(("g", "ml.g5.8xlarge", 1),))
    use = {GPU_NODE[0]: NodeUtilisation(GPU_NODE[0], 1.0, 10.0, None, None, PERIODS)}
    verdict = assess_cluster(cluster, use, price, window_periods=PERIODS, accelerated=accelerated)
    assert verdict.shrinks == ()
    assert [(n.instance_id, n.how_to_enable) for n in verdict.not_judged] == [(GPU_NODE[0], ENABLE_GPU)]


def test_busy_gpu_keeps_a_node_with_idle_cpu() -> None:
    cluster = _cluster(nodes=(GPU_NODE,), groups=(("g", "ml.g5.8xlarge", 1),))
    use = {GPU_NODE[0]: NodeUtilisation(GPU_NODE[0], 1.0, 10.0, 90.0, 40.0, PERIODS)}
    verdict = assess_cluster(cluster, use, price, window_periods=PERIODS, accelerated=accelerated)
    assert verdict.shrinks == () and verdict.not_judged == ()


def test_a_node_seen_for_part_of_the_window_is_not_judged() -> None:
    cluster = _cluster(nodes=(GPU_NODE,), groups=(("g", "ml.g5.8xlarge", 1),))
    use = {GPU_NODE[0]: NodeUtilisation(GPU_NODE[0], 1.0, 10.0, 0.0, 0.0, PERIODS // 2)}
    verdict = assess_cluster(cluster, use, price, window_periods=PERIODS, accelerated=accelerated)
    assert verdict.shrinks == ()
    assert "periods" in verdict.not_judged[0].reason


def test_unpriced_type_fires_without_a_saving_and_the_total_is_unknown() -> None:
    cluster = _cluster(nodes=(("i-0ccccccccccccccc1", "g", "ml.p5.48xlarge"),), groups=(("g", "ml.p5.48xlarge", 1),))
    use = {"i-0ccccccccccccccc1": NodeUtilisation("i-0ccccccccccccccc1", 1.0, 5.0, 0.0, 0.0, PERIODS)}
    verdict = assess_cluster(cluster, use, price, window_periods=PERIODS, accelerated=lambda t: True)
    assert verdict.shrinks[0].monthly_saving is None and verdict.monthly_cost is None
    assert "saving not priced: no HyperPod price for ml.p5.48xlarge in us-east-1" in describe_shrink(
        verdict.shrinks[0], 5, DAYS)


# --- cost at the HyperPod rate --------------------------------------------------------------

def _item(usage_type: str, instance_type: str, usd: str, plato: str | None = None) -> dict[str, Any]:
    attributes = {"servicecode": "AmazonSageMaker", "regionCode": REGION, "instanceType": instance_type,
                  "usagetype": usage_type, "component": "Cluster", "vCpu": "32", "memory": "128 GiB"}
    if plato:
        attributes["platoinstancetype"] = plato
    return {"product": {"productFamily": "ML Instance", "attributes": attributes},
            "terms": {"OnDemand": {"t": {"priceDimensions": {"d": {"unit": "Hrs", "pricePerUnit": {"USD": usd}}}}}}}


def test_price_list_files_hyperpod_nodes_under_their_own_usage() -> None:
    record = parse_price_item(_item("USE1-Cluster:ml.g5.8xlarge", "ml.g5.8xlarge-Cluster", "3.06"))
    assert record is not None
    assert (record.instance_type, record.region, record.usage, record.price_per_hour) == (
        "ml.g5.8xlarge", REGION, "hyperpod", 3.06)
    # Never the training rate of the same type, whatever platoinstancetype says.
    tagged = parse_price_item(_item("USE1-Cluster:ml.g5.8xlarge", "ml.g5.8xlarge-Cluster", "3.06", plato="Training"))
    assert tagged is not None and tagged.usage == "hyperpod"
    # Reserved capacity is not an on-demand rate.
    assert parse_price_item(_item("USE1-ReservedCluster:ml.g5.8xlarge", "ml.g5.8xlarge-Cluster", "2.00")) is None
    # The training product of the same type keeps its usage.
    training = parse_price_item(_item("USE1-Train:ml.g5.8xlarge", "ml.g5.8xlarge", "3.50"))
    assert training is not None and training.usage == "training"


def test_group_cost_uses_the_running_count_and_the_table_lookup() -> None:
    records = [r for r in (parse_price_item(_item("USE1-Cluster:ml.g5.8xlarge", "ml.g5.8xlarge-Cluster", "3.06")),
                           parse_price_item(_item("USE1-Train:ml.g5.8xlarge", "ml.g5.8xlarge", "3.50"))) if r]
    lookup = price_lookup_from_table(build_table(records, "2026-11-30", "price-list-api"))
    assert lookup("ml.g5.8xlarge", REGION) == 3.06 and lookup("ml.g5.8xlarge", "eu-west-1") is None
    cluster = _cluster(groups=(("g", "ml.g5.8xlarge", 4), ("empty", "ml.p5.48xlarge", 0)))
    costs = group_costs(cluster, lookup)
    assert [(c.group, c.count, c.monthly_cost, c.unpriced) for c in costs] == [
        ("g", 4, round(4 * 3.06 * 730, 2), None),
        ("empty", 0, None, "no HyperPod price for ml.p5.48xlarge in us-east-1")]
    assert cluster_monthly_cost(costs) == round(4 * 3.06 * 730, 2)  # an empty unpriced group costs nothing


def test_volume_usage_of_a_cluster_is_not_an_instance_price() -> None:
    assert parse_price_item(_item("USE1-Cluster:VolumeUsage.gp2", "NA", "0.14")) is None


# --- how a group is paid for (Stubber: the answers are validated against botocore's model) ----

ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdef123456"


def _node(instance: str, group: str, instance_type: str) -> dict[str, Any]:
    return {"InstanceGroupName": group, "InstanceId": instance, "InstanceType": instance_type, "LaunchTime": NOW,
            "InstanceStatus": {"Status": "Running"}}


def test_training_plan_spot_and_flexible_groups_are_priced_as_they_are_paid() -> None:
    described = {
        "ClusterArn": ARN, "ClusterName": "mixed", "ClusterStatus": "InService", "CreationTime": NOW,
        "Orchestrator": {"Eks": {"ClusterArn": EKS_ARN}},
        "InstanceGroups": [
            {"InstanceGroupName": "reserved", "InstanceType": "ml.g5.8xlarge", "CurrentCount": 1, "TargetCount": 1,
             "TrainingPlanArn": "arn:aws:sagemaker:us-east-1:123456789012:training-plan/plan-1"},
            {"InstanceGroupName": "spot", "InstanceType": "ml.g5.8xlarge", "CurrentCount": 1, "TargetCount": 1,
             "CapacityRequirements": {"Spot": {}}},
            {"InstanceGroupName": "flex", "CurrentCount": 2, "TargetCount": 2,
             "InstanceRequirements": {"CurrentInstanceTypes": ["ml.g5.8xlarge", "ml.g5.12xlarge"]}},
        ],
    }
    nodes = [_node("i-0aaaaaaaaaaaaaaa1", "reserved", "ml.g5.8xlarge"),
             _node("i-0aaaaaaaaaaaaaaa2", "spot", "ml.g5.8xlarge"),
             _node("i-0aaaaaaaaaaaaaaa3", "flex", "ml.g5.8xlarge"),
             _node("i-0aaaaaaaaaaaaaaa4", "flex", "ml.g5.12xlarge")]
    client, stub = _stubbed()
    stub.add_response("list_clusters", {"ClusterSummaries": [
        {"ClusterArn": ARN, "ClusterName": "mixed", "CreationTime": NOW, "ClusterStatus": "InService"}]})
    stub.add_response("describe_cluster", described, {"ClusterName": "mixed"})
    stub.add_response("list_cluster_nodes", {"ClusterNodeSummaries": nodes},
                      {"ClusterName": "mixed", "MaxResults": 100})
    with stub:
        [cluster] = discover_clusters(client, REGION).clusters
    costs = {c.group: c for c in group_costs(cluster, price)}
    assert costs["reserved"].monthly_cost is None and "training-plan/plan-1" in (costs["reserved"].unpriced or "")
    assert costs["spot"].monthly_cost is None and "Spot" in (costs["spot"].unpriced or "")
    assert costs["flex"].instance_type == "" and costs["flex"].monthly_cost == round((3.06 + 7.09) * 730, 2)
    # All four nodes idle: each group shrinks, but only the on-demand one has a saving.
    idle = {n["InstanceId"]: NodeUtilisation(n["InstanceId"], 1.0, 5.0, 0.0, 0.0, PERIODS) for n in nodes}
    verdict = assess_cluster(cluster, idle, price, window_periods=PERIODS, accelerated=accelerated)
    savings = {s.group: (s.shrink_by, s.monthly_saving) for s in verdict.shrinks}
    assert savings == {"reserved": (1, None), "spot": (1, None), "flex": (2, round((3.06 + 7.09) * 730, 2))}
    assert verdict.monthly_cost is None  # the reserved and Spot groups' cost is not known


def test_a_node_that_is_not_running_is_listed_not_judged() -> None:
    cluster = _cluster(nodes=(GPU_NODE,), groups=(("g", "ml.g5.8xlarge", 1),))
    cluster = replace(cluster, nodes=(ClusterNode(GPU_NODE[0], "g", GPU_NODE[2], "Pending", NOW),))
    use = {GPU_NODE[0]: NodeUtilisation(GPU_NODE[0], 1.0, 10.0, 0.0, 0.0, PERIODS)}
    verdict = assess_cluster(cluster, use, price, window_periods=PERIODS, accelerated=accelerated)
    assert verdict.shrinks == ()
    assert [n.reason for n in verdict.not_judged] == ["not judged: node status Pending"]


def test_report_section_states_cost_findings_and_what_was_not_judged(seeded: Emulator,
                                                                     discovered: dict[str, Cluster]) -> None:
    cluster = discovered["llm-platform"]
    verdict = assess_cluster(cluster, utilisation(seeded, cluster), price, window_periods=PERIODS,
                             accelerated=accelerated)
    data = json.loads(json.dumps(assessment_json(verdict, 5.0, DAYS)))  # JSON-serialisable as is
    assert data["orchestrator"] == "eks" and data["eks_cluster"] == "ml-platform-eks"
    assert [f["instance_group"] for f in data["findings"]] == ["eval-g5-8xl"]
    assert data["findings"][0]["monthly_saving"] == round(2 * 3.06 * 730, 2)
    assert len(data["nodes"]) == 5
    slurm = assess_cluster(discovered["research-slurm"], {}, price, window_periods=PERIODS, accelerated=accelerated)
    lines = assessment_lines(slurm, 5.0, DAYS)
    assert lines[0].startswith("HyperPod cluster research-slurm (us-east-1, SLURM, 3 nodes): cost unknown")
    assert any("not judged: no utilisation metric" in line and "to enable:" in line for line in lines)
    assert ("  group workers-p4d: 2 x ml.p4d.24xlarge, not priced: no HyperPod price for ml.p4d.24xlarge "
            "in us-east-1") in lines
