"""Endpoints of one region: discover, collect their metrics, assess, judge and price them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import pandas as pd

from auditor.analyse.assessment import assess_components, assess_endpoint
from auditor.analyse.control import apply_skips, config_for_endpoint
from auditor.analyse.rules import evaluate_endpoint
from auditor.catalog import Catalog
from auditor.collect.cloudwatch import CollectedMetrics, collect_metrics
from auditor.collect.plan import plan_queries
from auditor.collect.session import AwsClients, RegionAccessError
from auditor.config import AuditConfig
from auditor.discover.autoscaling import discover_autoscaling, variant_resource_id
from auditor.discover.endpoints import ConfigCache, discover_endpoints
from auditor.models import AuditError, Endpoint, EndpointKind, EndpointReport, Finding, VariantReport, Window
from auditor.pipeline.limits import RunLimits
from auditor.pipeline.progress import Progress
from auditor.pipeline.regions import RegionWork
from auditor.recommend.advice import attach_recommendations


@dataclass(frozen=True)
class EndpointsResult:
    endpoints: tuple[EndpointReport, ...] = ()
    findings: tuple[Finding, ...] = ()
    errors: tuple[AuditError, ...] = ()
    fatal: tuple[AuditError, ...] = field(default=())  # also in errors: what stopped part of the region
    queries: int = 0  # metric queries, datapoints and GetMetricData calls of the region
    datapoints: int = 0
    calls: int = 0


def audit_endpoints(
    region: str,
    config: AuditConfig,
    clients: AwsClients,
    catalog: Catalog,
    window: Window,
    now: datetime,
    progress: Progress,
    limits: RunLimits | None = None,
    board: RegionWork[Any] | None = None,
    configs: ConfigCache | None = None,
) -> EndpointsResult:
    """`limits` are checked between calls (RunStopped ends the region); `board` is told what was
    discovered, so a region stopped later still lists its endpoints."""
    limits = limits or RunLimits()
    try:
        discovery = discover_endpoints(clients.client("sagemaker", region), region, config.aws.max_workers,
                                       should_stop=lambda: limits.reason() is not None, configs=configs)
    except RegionAccessError as exc:
        error = AuditError(region, None, "discover", exc.message)
        return EndpointsResult(errors=(error,), fatal=(error,))
    limits.add_endpoints(len(discovery.endpoints))
    if board is not None:
        board.record_discovered(discovery.endpoints)
    limits.check()
    errors: list[AuditError] = list(discovery.errors)
    checked = [check_catalog(e, catalog) for e in discovery.endpoints]
    skipped = [apply_skips(e, config) for e, _ in checked]
    endpoints = [e for e, _ in skipped]
    errors += [error for _, step_errors in (*checked, *skipped) for error in step_errors]
    endpoints, scaling_errors = attach_autoscaling(endpoints, clients, region)
    errors += scaling_errors
    if any(not region_priced(e, catalog) for e in endpoints):
        errors.append(AuditError(
            region, None, "recommend",
            f"the catalog has no list prices for {region} (as of {catalog.as_of}): costs and savings "
            f"omitted; set pricing.assume_prices_from to price it like another region",
        ))

    queries = plan_queries(endpoints, catalog)
    progress.region_started(region, len(queries))
    limits.check()

    def on_batch(answered: int) -> None:
        progress.advanced(answered)
        limits.check()  # between GetMetricData calls: a stop or the deadline ends the region here

    fatal: tuple[AuditError, ...] = ()
    try:
        metrics = collect_metrics(clients.client("cloudwatch", region), region, queries, window, on_batch)
    except RegionAccessError as exc:
        error = AuditError(region, None, "collect", exc.message)
        errors.append(error)
        fatal = (error,)
        # Keep what discovery found, marked as not judged rather than judged on no data.
        endpoints = [
            e if e.not_judged_reason else replace(e, not_judged_reason=f"metrics not collected: {exc.message}")
            for e in endpoints
        ]
        metrics = CollectedMetrics()
    errors.extend(metrics.errors)

    # One endpoint at a time: assess, judge, price, keep its report, and let its frames go, so a
    # region of thousands of endpoints never holds every assessment at once.
    reports: list[EndpointReport] = []
    findings: list[Finding] = []
    for endpoint in endpoints:
        endpoint_config, tag_errors = config_for_endpoint(endpoint, config)
        errors.extend(tag_errors)
        assessed = assess_endpoint(endpoint, metrics, catalog, endpoint_config, window, now)
        assessed = replace(assessed, components=assess_components(endpoint, metrics, config, window))
        findings += attach_recommendations(evaluate_endpoint(assessed, config), {endpoint.name: assessed},
                                           catalog, config)
        reports.append(EndpointReport(
            endpoint=assessed.endpoint,
            variants=tuple(
                VariantReport(va.variant, va.monthly_cost_usd, va.utilization, series=chart_series(va.normalised),
                              average_instances=va.average_instances, price_basis=va.price_basis)
                for va in assessed.variants
            ),
            components=assessed.components,
        ))
        metrics.release(endpoint.name)
    return EndpointsResult(endpoints=tuple(reports), findings=tuple(findings), errors=tuple(errors), fatal=fatal,
                           queries=len(queries), datapoints=metrics.datapoints, calls=metrics.calls)


def chart_series(normalised: pd.DataFrame) -> pd.DataFrame:
    """What the report's charts draw (the per-period maxima), in float32: a report of thousands of
    endpoints keeps this for each variant until it is written, not the whole collected frame."""
    return normalised[[c for c in normalised.columns if c.endswith(":Maximum")]].astype("float32")


def attach_autoscaling(
    endpoints: list[Endpoint], clients: AwsClients, region: str
) -> tuple[list[Endpoint], list[AuditError]]:
    """Each variant's scaling target and policies; unknown (and so not judged) if they cannot be read."""
    judged = [e for e in endpoints if e.kind is EndpointKind.REAL_TIME and not e.not_judged_reason
              and not (e.skipped_reason and not e.skipped_rules)]
    if not judged or not any(v.instance_count >= 2 for e in judged for v in e.variants):
        return endpoints, []  # nothing the no-autoscaling rule would judge: spare the calls
    try:
        targets = discover_autoscaling(clients.client("application-autoscaling", region), region)
    except RegionAccessError as exc:
        return endpoints, [AuditError(region, None, "discover", f"{exc.message}: no-autoscaling not judged")]
    return [
        replace(
            e,
            autoscaling_known=True,
            variants=tuple(replace(v, autoscaling=targets.get(variant_resource_id(e.name, v.name)))
                           for v in e.variants),
        )
        for e in endpoints
    ], []


def check_catalog(endpoint: Endpoint, catalog: Catalog) -> tuple[Endpoint, list[AuditError]]:
    """An instance type the catalog does not know cannot be normalised: do not judge it."""
    if endpoint.not_judged_reason:
        return endpoint, []
    unknown = sorted({v.instance_type for v in endpoint.variants
                      if v.instance_type and not catalog.shape(v.instance_type)})
    unstated = sorted({v.instance_type for v in endpoint.variants
                       if v.instance_type and (shape := catalog.shape(v.instance_type))
                       and not shape.accelerators_known})
    if unknown:
        reason = f"instance type {', '.join(unknown)} not in the catalog: not judged"
    elif unstated:
        reason = (f"the price list does not state the GPU count or GPU memory of {', '.join(unstated)}: "
                  "not judged")
    else:
        return endpoint, []
    return (replace(endpoint, not_judged_reason=reason),
            [AuditError(endpoint.region, endpoint.name, "analyse", reason)])


def region_priced(endpoint: Endpoint, catalog: Catalog) -> bool:
    return all(
        catalog.hourly_price(v.instance_type, endpoint.region) is not None
        for v in endpoint.variants
        if v.instance_type and catalog.shape(v.instance_type)
    )
