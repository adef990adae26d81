"""enhanced-metrics-off: one note per account and region listing the endpoints whose aggregate
hides what matters (several instances, or several GPUs an instance) and whose config does not
enable enhanced metrics, with the field to set. Without the per-instance series an instance at
90% among idle ones, or a model on one of four GPUs, cannot be seen; the sizing then reads the
variant's series (sizing_basis "variant mean")."""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatchcase
from typing import Any

from auditor.analyse.assessment import EndpointFleet
from auditor.analyse.rules.base import INSTANCE_KINDS, CollectionRule, RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.collect.enhanced import ACCELERATOR_METRICS, INSTANCE_METRICS
from auditor.config import AuditConfig
from auditor.models import Endpoint, EndpointKind, Finding, Severity

HOW = ("set MetricsConfig.EnableEnhancedMetrics to true in a new endpoint config (CLI: aws sagemaker "
       "create-endpoint-config ... --metrics-config EnableEnhancedMetrics=true, then aws sagemaker update-endpoint; "
       "CloudFormation: AWS::SageMaker::EndpointConfig MetricsConfig: {EnableEnhancedMetrics: true})")
COST = ("each added series is a CloudWatch metric, billed per metric-month at the region's CloudWatch metrics "
        "rate (https://aws.amazon.com/cloudwatch/pricing/); the pages read do not say whether SageMaker's "
        "enhanced metrics are exempt")
SHOWN = 10
HOW_PLACEMENT = ("set MetricsConfig.EnableDetailedObservability to true in a new endpoint config (CloudFormation: "
                 "AWS::SageMaker::EndpointConfig MetricsConfig: {EnableDetailedObservability: true})")


def would_gain_placement(endpoint: Endpoint) -> bool:
    return endpoint.kind is EndpointKind.REAL_TIME and not (
        (endpoint.skipped_reason and not endpoint.skipped_rules) or RULE.id in endpoint.skipped_rules)


def would_gain(endpoint: Endpoint, catalog: Catalog) -> dict[str, Any] | None:
    """Why this endpoint's aggregate hides something, and the series per instance it would add."""
    if endpoint.enhanced_metrics or endpoint.not_judged_reason or endpoint.kind is EndpointKind.SERVERLESS:
        return None
    if (endpoint.skipped_reason and not endpoint.skipped_rules) or RULE.id in endpoint.skipped_rules:
        return None
    reasons, series = [], 0
    for v in endpoint.variants:
        shape = catalog.shape(v.instance_type) if v.instance_type else None
        gpus = shape.gpu_count if shape else 0
        if v.instance_count >= 2:
            reasons.append(f"{v.name}: {v.instance_count} instances")
        if gpus >= 2:
            reasons.append(f"{v.name}: {gpus} GPUs an instance")
        series += v.instance_count * (len(INSTANCE_METRICS) + gpus * len(ACCELERATOR_METRICS))
    return {"why": reasons, "series_read": series} if reasons else None


def check(fleet: EndpointFleet, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    skip = settings_of(RULE, config).skip_endpoints
    gaining = {e.name: found for e in fleet.endpoints
               if not any(fnmatchcase(e.name, p) for p in skip)
               and (found := would_gain(e, catalog)) is not None}
    # Inference-component endpoints whose config turns detailed observability off: no placement data,
    # so component-empty-instances cannot judge them.
    placement_off = sorted(e.name for e in fleet.endpoints
                           if e.inference_components and e.metrics_config is not None
                           and e.metrics_config.detailed_observability is False and not e.not_judged_reason
                           and would_gain_placement(e) and not any(fnmatchcase(e.name, p) for p in skip))
    if not gaining and not placement_off:
        return
    placement_note = (f" Component placement (which instances host no copy) is not published for "
                      f"{', '.join(placement_off[:SHOWN])}{' and more' if len(placement_off) > SHOWN else ''}: "
                      f"{HOW_PLACEMENT}." if placement_off else "")
    if not gaining:
        yield RULE.finding(fleet, None, placement_note.strip(),
                           {"endpoints": {}, "placement_off": placement_off, "how_placement": HOW_PLACEMENT})
        return
    names = sorted(gaining)
    listed = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
    series = sum(g["series_read"] for g in gaining.values())
    yield RULE.finding(
        fleet, None,
        f"{len(names)} endpoint{'s' if len(names) > 1 else ''} sized from the variant mean, where it can hide "
        f"the hottest instance or an idle GPU ({listed}): MetricsConfig.EnableEnhancedMetrics would show each; "
        f"about {series} more series, billed as CloudWatch metrics (https://aws.amazon.com/cloudwatch/pricing/)."
        + placement_note,
        {"endpoints": gaining, "how": HOW, "cost": COST, "series_read": series,
         **({"placement_off": placement_off, "how_placement": HOW_PLACEMENT} if placement_off else {})},
    )


RULE = CollectionRule(
    id="enhanced-metrics-off",
    title="Per-instance metrics not enabled",
    severity=Severity.INFO,
    remediation=HOW[0].upper() + HOW[1:] + ".",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch-enhanced-metrics.html",
    kinds=INSTANCE_KINDS,
    resource_type="endpoint-fleet",
    settings=RuleSettings,
    assessment=EndpointFleet,
    check=check,
)
