"""The HyperPod section of a report, as plain data (JSON) and plain lines (text, email).

Names come from AWS and are passed through as data: each renderer escapes them for its own
format (HTML, Markdown); nothing here is markup.
"""

from __future__ import annotations

from typing import Any

from auditor.kinds.base import ShapeKey, shape_key
from auditor.kinds.hyperpod.idle import RULE_ID, HyperPodAssessment, describe_shrink


def assessment_json(a: HyperPodAssessment, idle_ceiling_percent: float, window_days: float) -> dict[str, Any]:
    c = a.cluster
    return {
        "cluster": c.name,
        "arn": c.arn,
        "region": c.region,
        "account_id": c.account_id,
        "status": c.status,
        "orchestrator": c.orchestrator.value,
        "eks_cluster": c.eks_cluster_name,
        "created": c.created.isoformat() if c.created else None,
        "monthly_cost": a.monthly_cost,
        "instance_groups": [{
            "name": g.group, "instance_type": g.instance_type or None, "count": g.count,
            "hourly_cost": g.hourly_cost, "monthly_cost": g.monthly_cost, "unpriced": g.unpriced,
        } for g in a.costs],
        "nodes": [{
            "instance_id": n.instance_id, "instance_group": n.instance_group, "instance_type": n.instance_type,
            "status": n.status, "launch_time": n.launch_time.isoformat(),
        } for n in c.nodes],
        "findings": [{
            "rule": RULE_ID, "instance_group": s.group, "instance_type": s.instance_type or None,
            "current_count": s.current_count, "target_count": s.target_count, "idle_nodes": list(s.idle_nodes),
            "busiest_idle_cpu_percent": round(s.busiest_idle_cpu, 2),
            "busiest_idle_gpu_percent": None if s.busiest_idle_gpu is None else round(s.busiest_idle_gpu, 2),
            "idle_ceiling_percent": idle_ceiling_percent, "window_days": window_days,
            "monthly_saving": s.monthly_saving, "unpriced": s.unpriced,
            "summary": describe_shrink(s, idle_ceiling_percent, window_days),
        } for s in a.shrinks],
        "not_judged": [{
            "instance_group": n.group, "instance_id": n.instance_id, "reason": n.reason,
            "how_to_enable": n.how_to_enable,
        } for n in a.not_judged],
    }


def assessment_lines(a: HyperPodAssessment, idle_ceiling_percent: float, window_days: float) -> list[str]:
    c = a.cluster
    cost = "cost unknown" if a.monthly_cost is None else f"${a.monthly_cost:,.2f}/month"
    orchestrator = f"EKS {c.eks_cluster_name}" if c.eks_cluster_name else c.orchestrator.value.upper()
    lines = [f"HyperPod cluster {c.name} ({c.region}, {orchestrator}, {len(c.nodes)} nodes): {cost}"]
    for g in a.costs:
        kind = g.instance_type or "mixed types"
        priced = f"${g.monthly_cost:,.2f}/month" if g.monthly_cost is not None else f"not priced: {g.unpriced}"
        lines.append(f"  group {g.group}: {g.count} x {kind}, {priced}")
    lines += [f"  {RULE_ID}: {describe_shrink(s, idle_ceiling_percent, window_days)}" for s in a.shrinks]
    for n in a.not_judged:
        where = n.instance_id or (f"group {n.group}" if n.group else "cluster")
        lines.append(f"  {where}: {n.reason}" + (f"; to enable: {n.how_to_enable}" if n.how_to_enable else ""))
    return lines


def shapes(section: dict[str, Any] | None) -> dict[ShapeKey, str]:
    """Each instance group's nodes (a HyperPod plan is per instance group), for the reports' "now" column."""
    return {shape_key("hyperpod-cluster", c, c["cluster"], g["name"]): f"{g['count']} x {g['instance_type']}"
            for c in (section or {}).get("clusters", []) for g in c.get("instance_groups") or []}
