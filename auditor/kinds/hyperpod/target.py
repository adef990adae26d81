"""The HyperPod kind's apply target: DescribeCluster and ListClusterNodes; unchanged = InService
with every named node still there; the answer's Failed list must be empty; waits for InService.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from auditor.collect.session import AwsClients
from auditor.text import one_line
from auditor.write.plan import PlanToApply
from auditor.write.target import Observed, Target, Waiting, poll


class ClusterTarget(Target):
    """HyperPod nodes deleted (BatchDeleteClusterNodes): the group shrinks by those nodes."""

    noun = "HyperPod cluster"
    # its status; the nodes a plan deletes must all still exist
    reads = frozenset({("sagemaker", "DescribeCluster"), ("sagemaker", "ListClusterNodes")})

    @staticmethod
    def _delete(plan: PlanToApply) -> tuple[str, list[str]]:
        calls = plan.calls_of("sagemaker", "BatchDeleteClusterNodes")
        params = calls[0].params if calls else {}
        nodes = params.get("NodeIds")
        return str(params.get("ClusterName") or ""), [str(n) for n in nodes] if isinstance(nodes, list) else []

    def plan_problem(self, plan: PlanToApply) -> str | None:
        cluster, nodes = self._delete(plan)
        if not cluster or not nodes:
            return "its change has no BatchDeleteClusterNodes naming the cluster and the nodes"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        cluster, _ = self._delete(plan)
        described = self.described(plan, "DescribeCluster", lambda: api.describe_cluster(ClusterName=cluster))
        present = self.read(plan, "ListClusterNodes", lambda: sorted({
            str(n.get("InstanceId")) for page in api.get_paginator("list_cluster_nodes").paginate(ClusterName=cluster)
            for n in page.get("ClusterNodeSummaries", [])}))
        return Observed(str(described.get("ClusterArn") or ""), str(described.get("ClusterStatus") or ""),
                        {**described, "NodeIds": present})

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        name = one_line(plan.resource.name)
        if observed.status != "InService":
            return (f"HyperPod cluster {name} is {one_line(observed.status)}, not InService: nothing is changed "
                    "while it is")
        _, nodes = self._delete(plan)
        missing = [n for n in nodes if n not in set(observed.described.get("NodeIds") or ())]
        if missing:
            return (f"HyperPod cluster {name} changed since the audit: node{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(one_line(n) for n in missing)} no longer exist{'' if len(missing) > 1 else 's'}; "
                    "run the audit again")
        return None

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        cluster, nodes = self._delete(plan)
        failed = [f for answer in answers for f in answer.get("Failed") or []]
        if failed:
            said = "; ".join(f"{one_line(str(f.get('NodeId')))}: {one_line(str(f.get('Code')))} "
                             f"{one_line(str(f.get('Message') or ''))}".strip() for f in failed)
            return "failed", (f"plan {plan.id} failed: BatchDeleteClusterNodes did not delete {len(failed)} of "
                              f"{len(nodes)} nodes of {one_line(cluster)}: {said}")
        api = clients.client("sagemaker", plan.resource.region)
        outcome, message, _ = poll(plan, Waiting(
            self.named(plan), "DescribeCluster", lambda: api.describe_cluster(ClusterName=cluster), "ClusterStatus",
            done="InService", in_progress=frozenset({"Updating", "SystemUpdating"})), wait_minutes, sleep, clock)
        if outcome == "applied":
            outages = message[len(f"plan {plan.id} applied: {self.named(plan)} is InService"):]
            message = (f"plan {plan.id} applied: {len(nodes)} node{'s' if len(nodes) > 1 else ''} of "
                       f"{one_line(cluster)} deleted; the cluster is InService{outages}")
        return outcome, message


TARGETS: dict[str, Target] = {"hyperpod-cluster": ClusterTarget()}
