"""A `hyperpod-idle-nodes` plan's change: BatchDeleteClusterNodes naming exactly the nodes measured
idle (at most 99 a call), its UpdateCluster rollback and its risk, each request valid against
botocore's service model; end to end on the demo's clusters in the emulator (`audit run`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import botocore.session
import pytest
import yaml
from botocore.validate import ParamValidator
from typer.testing import CliRunner

from auditor.kinds.hyperpod.change import MAX_NODES_PER_CALL, rollback_request, shrink_details
from auditor.kinds.hyperpod.idle import GroupShrink
from auditor.kinds.hyperpod.models import Cluster, ClusterNode, InstanceGroup, Orchestrator
from auditor.report.change_text import render_change
from auditor_emulator.hyperpod import instance_id
from conftest import audit_json

runner = CliRunner()
SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")
ROLE = "arn:aws:iam::123456789012:role/hyperpod-execution"
LIFECYCLE = {"SourceS3Uri": "s3://sagemaker-lifecycle-123456789012/base/", "OnCreate": "on_create.sh"}


def valid(operation: str, params: dict[str, Any]) -> None:
    report = ParamValidator().validate(params, SAGEMAKER.operation_model(operation).input_shape)
    assert not report.has_errors(), report.generate_report()


def cluster(nodes: int, orchestrator: Orchestrator = Orchestrator.EKS, role: str | None = ROLE) -> Cluster:
    ids = [instance_id("c", "eval", i) for i in range(nodes)]
    group = InstanceGroup("eval", "ml.g5.8xlarge", nodes, nodes, "InService", execution_role=role,
                          life_cycle_config=dict(LIFECYCLE), threads_per_core=1)
    return Cluster("arn:aws:sagemaker:us-east-1:123456789012:cluster/abcdefabcdef", "c", "us-east-1", "InService",
                   None, orchestrator, "arn:aws:eks:us-east-1:123456789012:cluster/eks" if orchestrator is
                   Orchestrator.EKS else None, (group,),
                   tuple(ClusterNode(i, "eval", "ml.g5.8xlarge", "Running", datetime(2026, 11, 1, tzinfo=UTC))
                         for i in ids))


def shrink(c: Cluster, idle: int, observed: int = 336, window: int = 336) -> GroupShrink:
    return GroupShrink(c.name, c.arn, c.region, "eval", "ml.g5.8xlarge", len(c.nodes),
                       tuple(n.instance_id for n in c.nodes[:idle]), 3.2, 0.0, 3.06 * idle,
                       observed_periods=observed, window_periods=window)


def test_the_change_names_exactly_the_idle_nodes_and_validates() -> None:
    c = cluster(4)
    s = shrink(c, 3)
    details = shrink_details(c, s, 5.0)
    (call,) = details["change"]
    assert (call["service"], call["operation"]) == ("sagemaker", "BatchDeleteClusterNodes")
    assert call["params"] == {"ClusterName": "c", "NodeIds": list(s.idle_nodes)}
    assert c.nodes[3].instance_id not in call["params"]["NodeIds"]  # the busy node stays
    valid("BatchDeleteClusterNodes", call["params"])


def test_more_than_99_nodes_are_split_into_calls_of_99() -> None:
    c = cluster(150)
    details = shrink_details(c, shrink(c, 150), 5.0)
    chunks = [call["params"]["NodeIds"] for call in details["change"]]
    assert [len(ids) for ids in chunks] == [MAX_NODES_PER_CALL, 150 - MAX_NODES_PER_CALL]
    assert [i for ids in chunks for i in ids] == [n.instance_id for n in c.nodes]
    for call in details["change"]:
        valid("BatchDeleteClusterNodes", call["params"])


def test_the_rollback_is_an_update_cluster_request_with_the_described_group_spec() -> None:
    c = cluster(4)
    request = rollback_request(c, c.groups[0])
    assert request == {"ClusterName": "c", "InstanceGroups": [{
        "InstanceGroupName": "eval", "InstanceType": "ml.g5.8xlarge", "InstanceCount": 4, "ExecutionRole": ROLE,
        "LifeCycleConfig": LIFECYCLE, "ThreadsPerCore": 1}]}
    valid("UpdateCluster", request)
    rollback = shrink_details(c, shrink(c, 2), 5.0)["rollback"]
    assert json.loads(rollback.split("UpdateCluster ", 1)[1].split(" raises ", 1)[0]) == request
    # Without the ExecutionRole DescribeCluster states, no request is composed: the text says what is missing.
    unknown = cluster(4, role=None)
    assert rollback_request(unknown, unknown.groups[0]) is None
    assert "its ExecutionRole" in shrink_details(unknown, shrink(unknown, 2), 5.0)["rollback"]


@pytest.mark.parametrize(("idle", "observed", "level"), [
    (3, 336, "low"),  # observed in every period, the group keeps a node
    (3, 320, "medium"),  # gaps: idle where observed only
    (4, 336, "medium"),  # the group goes to 0
])
def test_risk_levels_rest_on_stated_facts(idle: int, observed: int, level: str) -> None:
    c = cluster(4)
    risk = shrink_details(c, shrink(c, idle, observed), 5.0)["risk"]
    assert risk["level"] == level
    assert any("root volume" in b for b in risk["basis"])
    assert any(f"{observed} of the window's 336" in b for b in risk["basis"]) == (observed < 336)


def test_a_slurm_cluster_or_ids_that_are_not_instance_ids_get_no_calls() -> None:
    slurm = cluster(2, Orchestrator.SLURM)
    details = shrink_details(slurm, shrink(slurm, 1), 5.0)
    assert "change" not in details and "controller nodes" in details["change_missing"]
    eks = cluster(2)
    odd = GroupShrink("c", eks.arn, "us-east-1", "eval", "ml.g5.8xlarge", 2, ("eval-1",), 1.0, None, 3.06,
                      observed_periods=336, window_periods=336)
    assert shrink_details(eks, odd, 5.0)["change_missing"] == "node ids eval-1 are not EC2 instance ids"


# --- the demo's clusters, end to end -------------------------------------------------------------


@pytest.fixture(scope="module")
def report(hyperpod_home: Path) -> dict:
    return audit_json(hyperpod_home)


def test_the_demo_plan_deletes_the_measured_idle_nodes_with_its_risk(report: dict) -> None:
    (finding,) = [f for f in report["findings"] if f["rule"] == "hyperpod-idle-nodes"]
    (plan,) = [p for p in report["plans"] if p["resource"]["type"] == "hyperpod-cluster"]
    idle = finding["evidence"]["idle_nodes"]
    assert idle == [instance_id("llm-platform", "eval-g5-8xl", i) for i in range(2)]
    (call,) = plan["change"]["calls"]
    assert call["params"] == {"ClusterName": "llm-platform", "NodeIds": idle}
    valid(call["operation"], call["params"])
    # Both nodes of the group: it goes to 0, so medium, with the facts it rests on.
    assert plan["risk"]["level"] == "medium" and plan["risk"]["replays"] == []
    assert any("goes to 0" in b for b in plan["risk"]["basis"])
    assert any("observed in all 336 periods" in b for b in plan["risk"]["basis"])
    assert "UpdateCluster" in plan["change"]["rollback"] and '"InstanceCount": 2' in plan["change"]["rollback"]


def test_plans_show_prints_the_cli_exactly_and_no_invented_resource(report: dict) -> None:
    (plan,) = [p for p in report["plans"] if p["resource"]["type"] == "hyperpod-cluster"]
    ids = plan["change"]["calls"][0]["params"]["NodeIds"]
    cli = render_change(plan, "cli")
    body = json.dumps({"ClusterName": "llm-platform", "NodeIds": ids}, sort_keys=True)
    assert f"aws sagemaker batch-delete-cluster-nodes --region us-east-1 --cli-input-json '{body}'" in cli
    assert "# risk: medium" in cli and "# risk rests on: the group goes to 0" in cli
    assert "wait endpoint-in-service" not in cli
    for tool, as_ in (("CloudFormation", "cloudformation"), ("Terraform", "terraform")):
        text = render_change(plan, as_)
        said = [line for line in text.splitlines() if line.startswith("# BatchDeleteClusterNodes:")]
        assert len(said) == 1 and f"no {tool} equivalent" in said[0]
        assert "resource " not in text and "Resources" not in text and "nothing to declare" not in text
        assert yaml.safe_load(text) is None  # comments only: nothing declared
    assert json.loads(render_change(plan, "json"))["change"] == plan["change"]
