"""Every call of a HyperPod plan names the plan's own cluster, and only nodes the audit found idle
(auditor.act.binding runs this check)."""

from __future__ import annotations

from typing import Any

from auditor.text import one_line
from auditor.write.binding import CallBinding, names
from auditor.write.plan import PlanToApply


def _cluster_call(plan: PlanToApply, operation: str, params: dict[str, Any]) -> str | None:
    problem = names(params.get("ClusterName"), plan.resource.name, "cluster")
    if problem:
        return problem
    idle = plan.proposed.get("details", {}).get("idle_nodes") if isinstance(plan.proposed.get("details"), dict) \
        else None
    nodes = params.get("NodeIds")
    outside = sorted(str(n) for n in nodes if n not in (idle or ())) if isinstance(nodes, list) else ["?"]
    if outside:
        return f"names node{'s' if len(outside) > 1 else ''} {', '.join(one_line(n) for n in outside)} the audit did " \
               "not find idle (proposed.details.idle_nodes) in cluster"
    return None


BINDING = CallBinding(frozenset({("sagemaker", "BatchDeleteClusterNodes")}), _cluster_call,
                      {"BatchDeleteClusterNodes": frozenset({"ClusterName", "NodeIds"})})
