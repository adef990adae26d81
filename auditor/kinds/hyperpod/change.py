"""A `hyperpod-idle-nodes` plan's change, risk and rollback, as data the rule puts in its
recommendation's details (recommend/rule_changes.py turns them into the plan's Change and Risk).

The change deletes exactly the nodes the audit measured idle: `BatchDeleteClusterNodes` with their
instance ids, at most 99 a call (AWS: "you can only terminate a maximum of 99 instances at a time";
botocore's model allows more, AWS Support must raise it). Lowering the group's InstanceCount with
`UpdateCluster` would also shrink the group, but SageMaker then chooses which nodes to end (AWS's
scale-down guide: it "handles the termination of nodes in a way that reaches the new target
instance counts"): it could end a busy node and keep an idle one. Deleting nodes by id is what the
guide calls scaling down at the instance level: the nodes named are terminated.

Slurm controller nodes cannot be deleted this way; the rule judges no Slurm cluster (they publish
no node metrics), and a Slurm cluster gets no change here either. The rollback raises the group's
InstanceCount back with `UpdateCluster`, the group's ExecutionRole, type and lifecycle scripts taken
from the DescribeCluster answer discovery already read: new nodes, not the deleted ones. Pure.
"""

from __future__ import annotations

import json
import re
from typing import Any

from auditor.kinds.hyperpod.idle import GroupShrink
from auditor.kinds.hyperpod.models import Cluster, InstanceGroup, Orchestrator

MAX_NODES_PER_CALL = 99  # AWS's documented limit per BatchDeleteClusterNodes (the model says 3000)
# NodeIds as botocore's model and the API reference take them: EC2 instance ids.
NODE_ID = re.compile(r"^i-[a-f0-9]{8}(?:[a-f0-9]{9})?$")


def rollback_request(cluster: Cluster, group: InstanceGroup) -> dict[str, Any] | None:
    """The UpdateCluster request that raises the group back to its count at the audit; None when
    DescribeCluster did not state what the group spec needs (its ExecutionRole, or one instance
    type: a flexible group's InstanceRequirements are not kept)."""
    if not group.execution_role or not group.instance_type:
        return None
    spec: dict[str, Any] = {"InstanceGroupName": group.name, "InstanceType": group.instance_type,
                            "InstanceCount": group.current_count, "ExecutionRole": group.execution_role}
    if group.life_cycle_config.get("SourceS3Uri") and group.life_cycle_config.get("OnCreate"):
        spec["LifeCycleConfig"] = {"SourceS3Uri": group.life_cycle_config["SourceS3Uri"],
                                   "OnCreate": group.life_cycle_config["OnCreate"]}
    if group.threads_per_core:
        spec["ThreadsPerCore"] = group.threads_per_core
    return {"ClusterName": cluster.name, "InstanceGroups": [spec]}


def shrink_risk(shrink: GroupShrink, ceiling: float) -> dict[str, Any]:
    """Low: every deleted node was observed under the ceiling in every period of the window and the
    group keeps a node; medium otherwise (docs/plans.md)."""
    gpu = "" if shrink.busiest_idle_gpu is None else f", GPU at most {shrink.busiest_idle_gpu:.1f}%"
    basis = [f"each of the {shrink.shrink_by} nodes stayed under {ceiling:g}% in every period it was observed "
             f"(CPU Maximum at most {shrink.busiest_idle_cpu:.1f}%{gpu})"]
    whole = shrink.window_periods > 0 and shrink.observed_periods >= shrink.window_periods
    if whole:
        basis.append(f"observed in all {shrink.window_periods} periods of the window")
    else:
        basis.append(f"observed in {shrink.observed_periods} of the window's {shrink.window_periods} periods at "
                     "least: idle where observed, unknown in the gaps")
    keeps = shrink.target_count > 0
    basis.append(f"the group keeps {shrink.target_count} node(s)" if keeps else
                 "the group goes to 0: no node of its type is left, and nodes added back need on-demand capacity "
                 "of that type at that moment")
    basis.append("a deleted node's root volume is lost (AWS: back up to Amazon S3 or FSx for Lustre first)")
    return {"level": "low" if whole and keeps else "medium", "basis": basis}


def shrink_details(cluster: Cluster, shrink: GroupShrink, ceiling: float) -> dict[str, Any]:
    """The recommendation's details for a group shrink: `change` (the calls), `rollback`, `risk`; or
    `change_missing` saying why no call can be composed."""
    group = next((g for g in cluster.groups if g.name == shrink.group), None)
    risk = shrink_risk(shrink, ceiling)
    if cluster.orchestrator is Orchestrator.SLURM:
        return {"change_missing": "a Slurm cluster: its controller nodes cannot be deleted with "
                                  "BatchDeleteClusterNodes, and the audit does not know which node is one",
                "risk": risk}
    bad = [n for n in shrink.idle_nodes if not NODE_ID.match(n)]
    if group is None or bad or not shrink.idle_nodes:
        why = (f"node ids {', '.join(bad)} are not EC2 instance ids" if bad
               else f"group {shrink.group} is not in DescribeCluster's answer")
        return {"change_missing": why, "risk": risk}
    chunks = [shrink.idle_nodes[i:i + MAX_NODES_PER_CALL] for i in range(0, len(shrink.idle_nodes),
                                                                          MAX_NODES_PER_CALL)]
    calls = [{
        "service": "sagemaker", "operation": "BatchDeleteClusterNodes",
        "params": {"ClusterName": cluster.name, "NodeIds": list(chunk)},
        "purpose": (f"delete {len(chunk)} idle node(s) of group {shrink.group} of HyperPod cluster {cluster.name} "
                    f"({shrink.current_count} -> {shrink.target_count})"),
    } for chunk in chunks]
    request = rollback_request(cluster, group)
    undo = (f"UpdateCluster {json.dumps(request, sort_keys=True)}" if request is not None else
            f"UpdateCluster with group {shrink.group}'s spec (its ExecutionRole"
            f"{'' if group.instance_type else ' and InstanceRequirements'} as DescribeCluster states them) "
            f"and InstanceCount {shrink.current_count}")
    rollback = (f"by hand: {undo} raises group {shrink.group} back to {shrink.current_count} node(s); they are new "
                "nodes (new instance ids, the group's lifecycle scripts run again), not the deleted ones")
    return {"change": calls, "rollback": rollback, "risk": risk,
            "waits_for": f"HyperPod cluster {cluster.name} InService, group {shrink.group} at {shrink.target_count}"}
