"""SageMaker HyperPod clusters as a resource kind: discovered per region (ListClusters,
DescribeCluster, ListClusterNodes), each instance group priced at its HyperPod rate, EKS-orchestrated
clusters' nodes measured through Container Insights (collected by the shared collector), and the
clusters judged by the rules over `HyperPodRegion` (rule hyperpod-idle-nodes)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from auditor.catalog import Catalog
from auditor.collect.cloudwatch import collect_metrics
from auditor.collect.plan import MetricSpec, SeriesQuery
from auditor.collect.session import RegionAccessError
from auditor.kinds.base import Audience, AudienceOf, KindResult, Owned, RegionScope, ResourceKind, ResourcePrice
from auditor.kinds.hyperpod import IAM_ACTIONS
from auditor.kinds.hyperpod.assessment import RESOURCE_TYPE, HyperPodRegion, HyperPodSection
from auditor.kinds.hyperpod.binding import BINDING
from auditor.kinds.hyperpod.cost import PriceLookup
from auditor.kinds.hyperpod.discover import discover_clusters
from auditor.kinds.hyperpod.evidence import EVIDENCE
from auditor.kinds.hyperpod.idle import (
    DEFAULT_IDLE_CEILING_PERCENT,
    DEFAULT_MIN_COVERAGE,
    RULE_ID,
    assess_cluster,
)
from auditor.kinds.hyperpod.metrics import NAMESPACE, STAT, NodeSeries, list_node_metrics, match_node_series, summarise
from auditor.kinds.hyperpod.models import Cluster
from auditor.kinds.hyperpod.report import assessment_json, shapes
from auditor.kinds.hyperpod.rules import RULES
from auditor.kinds.hyperpod.settings import HyperPodConfig
from auditor.kinds.hyperpod.target import TARGETS
from auditor.kinds.hyperpod.verify import VERIFIERS, seen
from auditor.models import AuditError, CollectionStats, Window


def price_lookup(catalog: Catalog) -> PriceLookup:
    """Each node's on-demand HyperPod rate (usage "hyperpod"), never the training or hosting rate."""
    return lambda instance_type, region: catalog.own_rate(instance_type, region, "hyperpod")


def _settings(scope: RegionScope) -> tuple[float, float]:
    """The rule's [rules.hyperpod-idle-nodes] settings the clusters are assessed with (its module,
    auditor/kinds/hyperpod/rules/hyperpod_idle_nodes.py, declares them and their bounds)."""
    settings = scope.config.rules.get(RULE_ID)
    return (float(getattr(settings, "idle_ceiling_percent", DEFAULT_IDLE_CEILING_PERCENT)),
            float(getattr(settings, "min_coverage", DEFAULT_MIN_COVERAGE)))


def _queries(cluster: Cluster, series: Sequence[NodeSeries]) -> list[SeriesQuery]:
    # One query per node series, owned by (cluster, None, instance id): the collector keeps them apart.
    return [SeriesQuery(cluster.name, None, MetricSpec(NAMESPACE, s.metric, STAT), component=s.instance_id,
                        given=s.dimensions) for s in series]


def audit(scope: RegionScope) -> KindResult[HyperPodSection]:
    region, catalog, window = scope.region, scope.catalog, scope.window
    ceiling, coverage = _settings(scope)
    section = HyperPodSection(idle_ceiling_percent=ceiling, window_days=window.days)
    try:
        found = discover_clusters(scope.clients.client("sagemaker", region), region)
    except RegionAccessError as exc:
        error = AuditError(region, None, "discover", f"{exc.message} (HyperPod clusters)")
        return KindResult(section, errors=(error,), fatal=(error,))
    errors: list[AuditError] = list(found.errors)
    if not found.clusters:
        return KindResult(section, errors=tuple(errors))
    cloudwatch = scope.clients.client("cloudwatch", region)
    series: dict[str, tuple[NodeSeries, ...]] = {}
    try:
        for cluster in found.clusters:
            if cluster.eks_cluster_name is not None:
                series[cluster.arn] = match_node_series(
                    cluster, list_node_metrics(cloudwatch, region, cluster.eks_cluster_name))
        queries = [q for c in found.clusters for q in _queries(c, series.get(c.arn, ()))]
        metrics = collect_metrics(cloudwatch, region, queries, window) if queries else None
    except RegionAccessError as exc:
        error = AuditError(region, None, "collect", f"{exc.message} (HyperPod node metrics: clusters not judged)")
        errors.append(error)
        metrics, series = None, {}
    if metrics is not None:
        errors.extend(metrics.errors)
    price = price_lookup(catalog)

    def accelerated(instance_type: str) -> bool:
        shape = catalog.shape(instance_type)
        return bool(shape and shape.has_accelerator)

    assessed = []
    for cluster in found.clusters:
        own = series.get(cluster.arn, ())
        values: dict[int, list[float]] = {}
        if metrics is not None:
            for i, s in enumerate(own):
                frame = metrics.frame(cluster.name, None, s.instance_id)
                column = f"{s.metric}:{STAT}"
                if column in frame.columns:
                    values[i] = frame[column].dropna().tolist()
        assessed.append(assess_cluster(
            cluster, summarise(own, values), price, window_periods=window.points_per_series,
            accelerated=accelerated, idle_ceiling_percent=ceiling, min_coverage=coverage))
    section = replace(section, clusters=tuple(assessed))
    findings = scope.judge(HyperPodRegion(section.clusters, ceiling, window.days))
    stats = (CollectionStats(scope.account_id, region, metrics.queries, metrics.datapoints, metrics.calls)
             if metrics is not None else None)
    return KindResult(section, tuple(findings), tuple(errors), collection=stats)


def merge(sections: Sequence[HyperPodSection]) -> HyperPodSection:
    first = sections[0]
    return replace(first, clusters=tuple(c for s in sections for c in s.clusters))


def owned(section: HyperPodSection) -> Iterable[Owned]:
    # Clusters carry no tags in the report (DescribeCluster has none): the default audience reads them.
    return (Owned(a.cluster.account_id, a.cluster.region, RESOURCE_TYPE, a.cluster.name, {}) for a in section.clusters)


def only(section: HyperPodSection, audience_of: AudienceOf, audience: Audience) -> HyperPodSection:
    return replace(section, clusters=tuple(
        a for a in section.clusters
        if audience_of(a.cluster.account_id, a.cluster.region, RESOURCE_TYPE, a.cluster.name) == audience))


def price_uses(section: HyperPodSection) -> Iterable[ResourcePrice]:
    for a in section.clusters:
        for node in a.cluster.nodes:
            yield ResourcePrice(RESOURCE_TYPE, a.cluster.name, "hyperpod", node.instance_type, a.cluster.region,
                                hosting_fallback=False)


def to_dict(section: HyperPodSection) -> dict[str, Any]:
    clusters = [assessment_json(a, section.idle_ceiling_percent, round(section.window_days, 2))
                for a in section.clusters]
    priced = [a.monthly_cost for a in section.clusters]
    return {
        "summary": {
            "clusters": len(clusters),
            "nodes": sum(len(a.cluster.nodes) for a in section.clusters),
            # null when a cluster could not be priced: a partial sum would understate the bill
            "monthly_cost_usd": None if None in priced else round(sum(p or 0.0 for p in priced), 2),
            "not_judged": sum(1 for a in section.clusters if a.not_judged),
        },
        "clusters": clusters,
    }


def monthly_cost(section: HyperPodSection, _window: Window) -> float | None:
    """The clusters a month; None when one could not be priced (a partial sum would understate it)."""
    priced = [a.monthly_cost for a in section.clusters]
    return None if None in priced else round(sum(p or 0.0 for p in priced), 2)


KIND: ResourceKind[HyperPodSection] = ResourceKind(
    key="hyperpod",
    title="HyperPod clusters",
    order=40,
    iam_actions=frozenset(IAM_ACTIONS),
    enabled=lambda config: HyperPodConfig.of(config).enabled,
    audit=audit,
    empty=HyperPodSection(),
    merge=merge,
    to_dict=to_dict,
    owned=owned,
    only=only,
    price_uses=price_uses,
    monthly_cost=monthly_cost,
    templates={"html": "kind_hyperpod.html.j2", "text": "kind_hyperpod.txt.j2", "markdown": "kind_hyperpod.md.j2"},
    shapes=shapes,
    rules=RULES,
    targets=TARGETS,
    bindings={RESOURCE_TYPE: BINDING},
    evidence=EVIDENCE,
    verifiers=VERIFIERS,
    seen=seen,
    settings={"hyperpod": HyperPodConfig},
)
