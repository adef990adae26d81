"""hyperpod-idle-nodes: HyperPod instance groups whose nodes stayed under an idle ceiling for the
whole window (EKS-orchestrated clusters with Container Insights node metrics): shrink the group.
The kind assesses each cluster with these settings (auditor/kinds/hyperpod/idle.py); this rule
turns each idle group into a finding with its saving at the group's own HyperPod rate, and its
change, rollback and risk (auditor/kinds/hyperpod/change.py) as the recommendation's details."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from auditor.analyse.rules.base import CollectionRule, RuleSettings
from auditor.catalog import HOURS_PER_MONTH, Catalog
from auditor.config import AuditConfig
from auditor.kinds.hyperpod.assessment import RESOURCE_TYPE, HyperPodRegion
from auditor.kinds.hyperpod.change import shrink_details
from auditor.kinds.hyperpod.idle import (
    DEFAULT_IDLE_CEILING_PERCENT,
    DEFAULT_MIN_COVERAGE,
    DOCS,
    RULE_ID,
    TITLE,
    describe_shrink,
)
from auditor.models import Finding, Recommendation, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting


@dataclass(frozen=True)
class HyperPodIdleSettings(RuleSettings):
    idle_ceiling_percent: float = setting(DEFAULT_IDLE_CEILING_PERCENT,
                                          "a node is idle when its CPU (and GPU) Maximum stays under this all window",
                                          minimum=0, maximum=100)
    min_coverage: float = setting(DEFAULT_MIN_COVERAGE,
                                  "share of the window's periods a node needs metrics for to be judged",
                                  above=0, maximum=1)


def check(region: HyperPodRegion, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    needed = config.recommend.min_idle_days
    for assessment in region.clusters:
        costs = {c.group: c for c in assessment.costs}
        for shrink in assessment.shrinks:
            # The days the idle nodes were observed (the fewest of them): a delete needs min_idle_days.
            days = (region.window_days * shrink.observed_periods / shrink.window_periods
                    if shrink.window_periods else 0.0)
            if days < needed:
                yield replace(RULE.finding(
                    assessment.cluster, shrink.group,
                    f"{shrink.shrink_by} of {shrink.current_count} nodes in group {shrink.group} of "
                    f"{assessment.cluster.name} idle in {days:.1f} days of data; the {RULE.id} verdict needs "
                    f"{needed} (recommend.min_idle_days): no verdict yet.",
                    {"idle_nodes": list(shrink.idle_nodes), "data_days": round(days, 2), "min_idle_days": needed,
                     "withheld_rule": RULE.id}), severity=Severity.INFO)
                continue
            finding = RULE.finding(
                assessment.cluster, shrink.group, describe_shrink(shrink, region.idle_ceiling_percent,
                                                                   region.window_days),
                {"idle_nodes": list(shrink.idle_nodes), "current_count": shrink.current_count,
                 "target_count": shrink.target_count, "busiest_idle_cpu_percent": round(shrink.busiest_idle_cpu, 2),
                 "busiest_idle_gpu_percent": (None if shrink.busiest_idle_gpu is None
                                              else round(shrink.busiest_idle_gpu, 2)),
                 "idle_ceiling_percent": region.idle_ceiling_percent, "unpriced": shrink.unpriced},
            )
            group = costs.get(shrink.group)
            if shrink.hourly_saving is None or group is None or group.monthly_cost is None:
                yield finding  # idle, but the saving cannot be priced: said in the message
                continue
            saving = round(shrink.hourly_saving * HOURS_PER_MONTH, 2)
            kind = shrink.instance_type or "nodes"
            yield priced(finding, Recommendation(
                "shrink-group", shrink.instance_type or None, shrink.target_count,
                current_monthly_usd=group.monthly_cost,
                recommended_monthly_usd=round(group.monthly_cost - saving, 2),
                details={"advice": f"shrink instance group {shrink.group} to {shrink.target_count} x {kind}",
                         "cluster_arn": shrink.cluster_arn, "idle_nodes": list(shrink.idle_nodes),
                         # the change (the idle nodes deleted by id), its rollback and its risk
                         **shrink_details(assessment.cluster, shrink, region.idle_ceiling_percent)},
            ))


RULE = CollectionRule(
    assessment=HyperPodRegion,
    id=RULE_ID,
    title=TITLE,
    severity=Severity.LOW,
    remediation="Delete the idle nodes by id (BatchDeleteClusterNodes, AWS's instance-level scale-down; a lower "
                "InstanceCount in UpdateCluster would let SageMaker choose which nodes end); HyperPod bills every "
                "allocated node.",
    docs=DOCS,
    judges=frozenset(),
    kind="hyperpod",
    resource_type=RESOURCE_TYPE,
    settings=HyperPodIdleSettings,
    threshold_field="idle_ceiling_percent",
    check=check,
)
