"""Fresh evidence before HyperPod nodes are deleted: the nodes to delete, as the hyperpod kind reads
them (Container Insights' node_cpu_utilization and node_gpu_utilization, Maximum, found with
ListMetrics by InstanceId): ONE GetMetricData call; a node over the hyperpod-idle-nodes ceiling refuses.
"""

from __future__ import annotations

from auditor.analyse.rules.base import settings_of
from auditor.collect.session import describe_client_error
from auditor.kinds.hyperpod.metrics import CPU, GPU, NAMESPACE
from auditor.kinds.hyperpod.rules.hyperpod_idle_nodes import RULE as HYPERPOD_IDLE
from auditor.text import one_line
from auditor.write.evidence import PERIOD_SECONDS, EvidenceCheck, Since, metric_data
from auditor.write.plan import ApplyRefused
from auditor.write.target import ERRORS


def cluster_since(since: Since) -> str | None:
    plan = since.plan
    calls = plan.calls_of("sagemaker", "BatchDeleteClusterNodes")
    nodes = {str(n) for c in calls for n in c.params.get("NodeIds") or []}
    eks = ((since.observed.described.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn")
    if not eks or not nodes:
        return None  # a Slurm cluster gets no delete plan; its nodes publish nothing to read
    api = since.clients.client("cloudwatch", plan.resource.region)
    try:
        listed = [m for page in api.get_paginator("list_metrics").paginate(
            Namespace=NAMESPACE, Dimensions=[{"Name": "ClusterName", "Value": str(eks).rsplit("/", 1)[-1]}])
            for m in page.get("Metrics", []) if m.get("MetricName") in (CPU, GPU)]
    except ERRORS as exc:
        raise ApplyRefused(f"{since.who}: "
                           f"{describe_client_error(exc, 'cloudwatch', 'ListMetrics', plan.resource.region)}") from None
    series = [(m, {d["Name"]: d["Value"] for d in m.get("Dimensions", [])}.get("InstanceId")) for m in listed]
    series = [(m, node) for m, node in series if node in nodes]
    if not series:
        return None
    queries = [{"Id": f"n{i}", "ReturnData": True, "MetricStat": {
        "Metric": {"Namespace": NAMESPACE, "MetricName": m["MetricName"], "Dimensions": m["Dimensions"]},
        "Period": PERIOD_SECONDS, "Stat": "Maximum"}} for i, (m, _) in enumerate(series)]
    found = metric_data(since, queries)
    ceiling = settings_of(HYPERPOD_IDLE, since.config).idle_ceiling_percent
    for index, (metric, node) in enumerate(series):
        busiest = max((v for _, v in found.get(f"n{index}", [])), default=None)
        if busiest is not None and busiest > ceiling:
            what = "GPU" if metric["MetricName"] == GPU else "CPU"
            return (f"HyperPod cluster {one_line(plan.resource.name)}'s node {one_line(str(node))} ran up to "
                    f"{busiest:.1f}% {what} {since.when} (idle: at most {ceiling:g}%); run the audit again")
    return None


EVIDENCE: dict[str, EvidenceCheck] = {
    # a node's series (Container Insights names them by NodeName: ListMetrics finds them by InstanceId)
    "hyperpod-cluster": EvidenceCheck(
        frozenset({"BatchDeleteClusterNodes"}), cluster_since,
        reads=frozenset({("cloudwatch", "ListMetrics"), ("cloudwatch", "GetMetricData")})),
}
