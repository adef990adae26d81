"""enhanced-metrics-off: one note per account and region listing the endpoints whose aggregate
hides what matters (several instances, or several GPUs an instance) and whose config does not
enable enhanced metrics, with the field to set. Without the per-instance series an instance at
90% among idle ones, or a model on one of four GPUs, cannot be seen; the sizing then reads the
variant's series (sizing_basis "variant mean").

The note prices what enabling it adds: the series SageMaker would publish for those endpoints, at
CloudWatch's first metric-month tier (the bundled rate, data/cloudwatch.json, with its source and
date), and the GetMetricData the audit would then request each run."""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatchcase
from typing import Any

from auditor.analyse.rules.base import CollectionRule, RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointFleet
from auditor.kinds.endpoints.enhanced import ACCELERATOR_METRICS, INSTANCE_INVOCATION_METRICS, INSTANCE_METRICS
from auditor.kinds.endpoints.models import Endpoint, EndpointKind
from auditor.kinds.endpoints.rule_types import INSTANCE_KINDS
from auditor.models import Finding, Severity
from auditor.prices.cloudwatch import CloudWatchRates, cloudwatch_rates

HOW = ("set MetricsConfig.EnableEnhancedMetrics to true in a new endpoint config (CLI: aws sagemaker "
       "create-endpoint-config ... --metrics-config EnableEnhancedMetrics=true, then aws sagemaker update-endpoint; "
       "CloudFormation: AWS::SageMaker::EndpointConfig MetricsConfig: {EnableEnhancedMetrics: true})")
PRICING_DOCS = "https://aws.amazon.com/cloudwatch/pricing/"
BILLING_BASIS = ("SageMaker's guide: \"Standard CloudWatch pricing applies per metric per unique dimension "
                 "combination\" (https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch-enhanced-"
                 "metrics.html); each added series is a metric, billed per metric-month and prorated by the hours "
                 "it receives data")
TIER_ASSUMPTION = ("every added series at the first tier's rate (the first 10,000 metrics of the account and region): "
                   "an account with more metrics pays a lower tier's rate for them; the free tier is not deducted; "
                   "each series billed for the whole month (an invocation series in an hour without requests "
                   "costs nothing)")
SHOWN = 10
# What SageMaker publishes per instance with enhanced metrics (the billed series): utilisation by
# InstanceId in /aws/sagemaker/Endpoints, GPU figures by AcceleratorId, and for real-time endpoints
# the invocation metrics by InstanceId in AWS/SageMaker (the guide's metric name mapping).
PUBLISHED_PER_INSTANCE = ("CPUUtilization", "MemoryUtilization", "DiskUtilization")
PUBLISHED_PER_GPU = ("GPUUtilization", "GPUMemoryUtilization")
PUBLISHED_INVOCATIONS = ("Invocations", "InvocationsPerInstance", "Invocation4XXErrors", "Invocation5XXErrors",
                         "InvocationModelErrors", "ModelLatency", "OverheadLatency")
STATISTICS_READ = 2  # Average and Maximum per utilisation series; Invocations is read as Sum
HOW_PLACEMENT = ("set MetricsConfig.EnableDetailedObservability to true in a new endpoint config (CloudFormation: "
                 "AWS::SageMaker::EndpointConfig MetricsConfig: {EnableDetailedObservability: true})")


def would_gain_placement(endpoint: Endpoint) -> bool:
    return endpoint.kind is EndpointKind.REAL_TIME and not (
        (endpoint.skipped_reason and not endpoint.skipped_rules) or RULE.id in endpoint.skipped_rules)


def would_gain(endpoint: Endpoint, catalog: Catalog) -> dict[str, Any] | None:
    """Why this endpoint's aggregate hides something, the series enabling it would publish (billed)
    and the series the audit would then read."""
    if endpoint.enhanced_metrics or endpoint.not_judged_reason or endpoint.kind is EndpointKind.SERVERLESS:
        return None
    if (endpoint.skipped_reason and not endpoint.skipped_rules) or RULE.id in endpoint.skipped_rules:
        return None
    reasons, published, read, queries = [], 0, 0, 0
    invocations = endpoint.kind is EndpointKind.REAL_TIME
    for v in endpoint.variants:
        shape = catalog.shape(v.instance_type) if v.instance_type else None
        gpus = shape.gpu_count if shape else 0
        if v.instance_count >= 2:
            reasons.append(f"{v.name}: {v.instance_count} instances")
        if gpus >= 2:
            reasons.append(f"{v.name}: {gpus} GPUs an instance")
        published += v.instance_count * (len(PUBLISHED_PER_INSTANCE) + gpus * len(PUBLISHED_PER_GPU)
                                         + (len(PUBLISHED_INVOCATIONS) if invocations else 0))
        series = v.instance_count * (len(INSTANCE_METRICS) + gpus * len(ACCELERATOR_METRICS))
        requests = v.instance_count * len(INSTANCE_INVOCATION_METRICS) if invocations else 0
        read += series + requests
        queries += series * STATISTICS_READ + requests
    if not reasons:
        return None
    return {"why": reasons, "series_published": published, "series_read": read, "queries_per_audit": queries}


def monthly_cost(series: int, queries: int, rates: CloudWatchRates | None) -> dict[str, Any]:
    """The added series' metric-months at the first tier's rate, and the audit's extra GetMetricData
    per run; no dollar figure where the region has no bundled rate."""
    base: dict[str, Any] = {"series_published": series, "billing": BILLING_BASIS, "pricing": PRICING_DOCS}
    if rates is None:
        return {**base, "monthly_usd": None, "rate_usd_per_metric_month": None,
                "reason": "no CloudWatch rate bundled for this region (set pricing.assume_prices_from to price it "
                          "like another region)"}
    tier = rates.first_tier
    return {
        **base,
        "monthly_usd": round(series * tier.usd_per_metric_month, 2),
        "rate_usd_per_metric_month": tier.usd_per_metric_month,
        "rate_region": rates.region,
        "usage_type": rates.metric_usage_type,
        "tier_assumption": TIER_ASSUMPTION,
        "get_metric_data_usd_per_audit": (None if rates.usd_per_metric_requested is None
                                          else round(queries * rates.usd_per_metric_requested, 4)),
        "get_metric_data_usage_type": rates.requests_usage_type,
        "source": rates.source,
        "as_of": rates.as_of,
    }


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
    published = sum(g["series_published"] for g in gaining.values())
    read = sum(g["series_read"] for g in gaining.values())
    queries = sum(g["queries_per_audit"] for g in gaining.values())
    rates = cloudwatch_rates(fleet.region, catalog.fallback_price_region)
    cost = monthly_cost(published, queries, rates)
    if rates is None or cost["monthly_usd"] is None:
        price = f"billed as CloudWatch metrics ({PRICING_DOCS}; no rate bundled for {fleet.region})"
    else:
        where = "" if rates.region == fleet.region else f", {rates.region}'s rate"
        gmd = cost["get_metric_data_usd_per_audit"]
        price = (f"up to ${cost['monthly_usd']:,.2f}/month in CloudWatch metrics at "
                 f"${rates.first_tier.usd_per_metric_month:.2f} per metric-month (the first tier{where}, "
                 f"{rates.metric_usage_type}, list price as of {rates.as_of}; prorated by the hours a series "
                 f"receives data)"
                 + ("" if gmd is None else f", and about ${gmd:,.4f} of GetMetricData per audit run for the "
                    f"{queries} extra queries"))
    yield RULE.finding(
        fleet, None,
        f"{len(names)} endpoint{'s' if len(names) > 1 else ''} sized from the variant mean, where it can hide "
        f"the hottest instance or an idle GPU ({listed}): MetricsConfig.EnableEnhancedMetrics would show each; "
        f"about {published} more series, {price}."
        + placement_note,
        {"endpoints": gaining, "how": HOW, "cost": cost, "series_published": published, "series_read": read,
         **({"placement_off": placement_off, "how_placement": HOW_PLACEMENT} if placement_off else {})},
    )


RULE = CollectionRule(
    id="enhanced-metrics-off",
    title="Per-instance metrics not enabled",
    severity=Severity.INFO,
    remediation=HOW[0].upper() + HOW[1:] + ".",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/monitoring-cloudwatch-enhanced-metrics.html",
    judges=INSTANCE_KINDS,
    resource_type="endpoint-fleet",
    settings=RuleSettings,
    assessment=EndpointFleet,
    check=check,
)
