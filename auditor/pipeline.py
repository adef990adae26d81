"""discover -> collect -> analyse -> recommend, region by region, into one AuditReport.

A failure that stops a region (access denied, unreachable) is recorded as a fatal error and the
other regions carry on; what was collected before it stays in the report.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from auditor.analyse.control import apply_skips, config_for_endpoint
from auditor.analyse.jobs import (
    build_experiments,
    check_spot_candidate,
    check_training_underutilized,
    check_transform_long_running,
    job_utilisation,
    training_cost,
    transform_cost,
)
from auditor.analyse.normalise import normalise_component_utilisation, normalise_utilisation, summarise_utilisation
from auditor.analyse.rules import EndpointAssessment, VariantAssessment, evaluate_endpoint
from auditor.analyse.usage import compute_seconds_per_month
from auditor.catalog import Catalog, load_catalog
from auditor.collect.cloudwatch import CollectedMetrics, collect_metrics
from auditor.collect.job_metrics import (
    TRAINING_NAMESPACE,
    TRANSFORM_NAMESPACE,
    JobSpan,
    collect_job_metrics,
    list_job_hosts,
)
from auditor.collect.plan import align_window, plan_queries
from auditor.collect.session import AwsClients, RegionAccessError
from auditor.config import AuditConfig
from auditor.discover.autoscaling import discover_autoscaling, variant_resource_id
from auditor.discover.endpoints import discover_endpoints, endpoint_age_days
from auditor.discover.jobs import discover_jobs
from auditor.models import (
    AuditError,
    AuditReport,
    CatalogInfo,
    ComponentReport,
    Endpoint,
    EndpointKind,
    EndpointReport,
    Finding,
    JobsSection,
    VariantReport,
    Window,
)
from auditor.recommend.advice import attach_recommendations
from auditor.recommend.jobs import advise_jobs

NOT_BILLED_STATUSES = frozenset({"Failed"})


class Progress:
    """Told how collection goes; the CLI draws a bar from it. The base class ignores it all."""

    def region_started(self, region: str, queries: int) -> None: ...

    def advanced(self, queries: int) -> None: ...


@dataclass(frozen=True)
class AuditOutcome:
    report: AuditReport
    fatal_errors: tuple[AuditError, ...]


def run_audit(
    config: AuditConfig,
    clients: AwsClients,
    now: datetime | None = None,
    progress: Progress | None = None,
) -> AuditOutcome:
    now = now or datetime.now(UTC)
    progress = progress or Progress()
    clients.check_credentials()
    for region in config.aws.regions:
        clients.check_region(region)
    catalog = load_catalog(config.pricing.assume_prices_from)
    window = align_window(now, config.aws.lookback_days, config.aws.period_seconds)

    endpoint_reports: list[EndpointReport] = []
    findings: list[Finding] = []
    errors: list[AuditError] = []
    fatal: list[AuditError] = []
    jobs = JobsSection()
    for region in config.aws.regions:
        region_result = audit_region(region, config, clients, catalog, window, now, progress)
        endpoint_reports.extend(region_result.endpoints)
        findings.extend(region_result.findings)
        errors.extend(region_result.errors)
        fatal.extend(region_result.fatal)
        if config.jobs.enabled:
            job_result = audit_jobs(region, config, clients, catalog, window, now)
            jobs = JobsSection(
                training=jobs.training + job_result.section.training,
                transform=jobs.transform + job_result.section.transform,
                experiments=jobs.experiments + job_result.section.experiments,
            )
            findings.extend(job_result.findings)
            errors.extend(job_result.errors)
            fatal.extend(job_result.fatal)

    # Advice that costs more (a growing queue) is not a saving: it ranks by severity among the zeros.
    findings.sort(key=lambda f: (-max(f.monthly_savings_usd, 0.0), -f.severity.rank, f.region, f.endpoint,
                                 f.variant or "", f.rule))
    report = AuditReport(
        generated_at=now,
        window=window,
        endpoints=tuple(endpoint_reports),
        findings=tuple(findings),
        errors=tuple(errors),
        catalog=CatalogInfo(source=catalog.source, as_of=catalog.as_of, priced_regions=catalog.priced_regions),
        api_calls=clients.counter.as_dict(),
        settings=report_settings(config),
        jobs=jobs,
    )
    return AuditOutcome(report=report, fatal_errors=tuple(fatal))


@dataclass
class JobsResult:
    section: JobsSection
    findings: list[Finding]
    errors: list[AuditError]
    fatal: list[AuditError]


def audit_jobs(
    region: str, config: AuditConfig, clients: AwsClients, catalog: Catalog, window: Window, now: datetime
) -> JobsResult:
    """Training and transform jobs created in the window: cost, Spot, utilisation, experiments."""
    result = JobsResult(JobsSection(), [], [], [])
    sagemaker, cloudwatch = clients.client("sagemaker", region), clients.client("cloudwatch", region)
    try:
        discovery = discover_jobs(sagemaker, region, window.start, config.aws.max_workers)
        result.errors.extend(discovery.errors)
        discount = config.jobs.spot_discount_percent / 100.0
        training = [training_cost(job, catalog, discount) for job in discovery.training]
        transform = [transform_cost(job, catalog) for job in discovery.transform]
        training = _with_utilisation(training, cloudwatch, region, TRAINING_NAMESPACE, catalog, config, now, result.errors)
        transform = _with_utilisation(transform, cloudwatch, region, TRANSFORM_NAMESPACE, catalog, config, now, result.errors)
    except RegionAccessError as exc:
        error = AuditError(region, None, "collect", f"{exc.message} (training and transform jobs; "
                                                   "jobs.enabled = false skips them)")
        result.errors.append(error)
        result.fatal.append(error)
        return result
    candidates: list[Finding] = []
    for cost in training:
        candidates.extend(f for f in (check_spot_candidate(cost, config),
                                      check_training_underutilized(cost, catalog, config)) if f)
    candidates.extend(check_transform_long_running(transform, catalog, config))
    result.findings = advise_jobs(candidates, training, transform, catalog, window, config)
    result.section = JobsSection(tuple(training), tuple(transform),
                                 tuple(build_experiments(training, config.jobs.experiment_prefixes)))
    return result


def _with_utilisation(costs: list, cloudwatch: Any, region: str, namespace: str, catalog: Catalog,
                      config: AuditConfig, now: datetime, errors: list[AuditError]) -> list:
    """The costs with each finished job's host utilisation attached (where CloudWatch has it)."""
    finished = [c for c in costs if c.job.started_at and c.job.ended_at]
    if not finished:
        return costs
    hosts = list_job_hosts(cloudwatch, region, namespace)
    spans = []
    for cost in finished:
        shape = catalog.shape(cost.job.instance_type)
        if cost.job.name in hosts:
            spans.append(JobSpan(cost.job.name, cost.job.started_at, cost.job.ended_at, tuple(hosts[cost.job.name]),
                                 gpu=bool(shape and shape.has_accelerator)))
    metrics = collect_job_metrics(cloudwatch, region, spans, namespace, now)
    errors.extend(metrics.errors)
    by_job: dict[str, dict[str, Any]] = {}
    for (job, host, _), frame in metrics.frames.items():
        by_job.setdefault(job, {})[host or ""] = frame
    period = 60
    return [
        replace(c, utilization=job_utilisation(by_job[c.job.name], c.job.instance_type, catalog, period, config))
        if c.job.name in by_job else c
        for c in costs
    ]


def report_settings(config: AuditConfig) -> dict:
    t, r = config.thresholds, config.recommend
    return {
        "regions": list(config.aws.regions),
        "lookback_days": config.aws.lookback_days,
        "thresholds": {"cpu": t.cpu, "memory": t.memory, "gpu": t.gpu, "gpu_memory": t.gpu_memory},
        "sizing_statistic": t.sizing_statistic,
        "peak_statistic": r.peak_statistic,
        "target_utilization": r.target_utilization,
        "min_days": r.min_days,
    }


@dataclass
class RegionResult:
    endpoints: list[EndpointReport]
    findings: list[Finding]
    errors: list[AuditError]
    fatal: list[AuditError]


def audit_region(
    region: str,
    config: AuditConfig,
    clients: AwsClients,
    catalog: Catalog,
    window: Window,
    now: datetime,
    progress: Progress,
) -> RegionResult:
    result = RegionResult([], [], [], [])
    try:
        discovery = discover_endpoints(clients.client("sagemaker", region), region, config.aws.max_workers)
    except RegionAccessError as exc:
        error = AuditError(region, None, "discover", exc.message)
        result.errors.append(error)
        result.fatal.append(error)
        return result
    result.errors.extend(discovery.errors)
    endpoints = [_check_catalog(e, catalog, result.errors) for e in discovery.endpoints]
    endpoints = [_apply_skips(e, config, result.errors) for e in endpoints]
    endpoints = _attach_autoscaling(endpoints, clients, region, result.errors)
    if any(not _region_priced(e, catalog) for e in endpoints):
        result.errors.append(AuditError(
            region, None, "recommend",
            f"the catalog has no list prices for {region} (as of {catalog.as_of}): costs and savings "
            f"omitted; set pricing.assume_prices_from to price it like another region",
        ))

    queries = plan_queries(endpoints, catalog)
    progress.region_started(region, len(queries))
    try:
        metrics = collect_metrics(clients.client("cloudwatch", region), region, queries, window, progress.advanced)
    except RegionAccessError as exc:
        error = AuditError(region, None, "collect", exc.message)
        result.errors.append(error)
        result.fatal.append(error)
        # Keep what discovery found, marked as not judged rather than judged on no data.
        endpoints = [
            e if e.not_judged_reason else replace(e, not_judged_reason=f"metrics not collected: {exc.message}")
            for e in endpoints
        ]
        metrics = CollectedMetrics()
    result.errors.extend(metrics.errors)

    assessments = {}
    for endpoint in endpoints:
        endpoint_config, tag_errors = config_for_endpoint(endpoint, config)
        result.errors.extend(tag_errors)
        assessments[endpoint.name] = assess_endpoint(endpoint, metrics, catalog, endpoint_config, window, now)
    region_findings: list[Finding] = []
    for assessment in assessments.values():
        region_findings.extend(evaluate_endpoint(assessment, config))
    result.findings = attach_recommendations(region_findings, assessments, catalog, config)
    result.endpoints = [
        EndpointReport(
            endpoint=a.endpoint,
            variants=tuple(
                VariantReport(va.variant, va.monthly_cost_usd, va.utilization, series=va.normalised)
                for va in a.variants
            ),
            components=assess_components(a.endpoint, metrics, config, window),
        )
        for a in assessments.values()
    ]
    return result


def _apply_skips(endpoint: Endpoint, config: AuditConfig, errors: list[AuditError]) -> Endpoint:
    skipped, skip_errors = apply_skips(endpoint, config)
    errors.extend(skip_errors)
    return skipped


def _attach_autoscaling(
    endpoints: list[Endpoint], clients: AwsClients, region: str, errors: list[AuditError]
) -> list[Endpoint]:
    """Each variant's scaling target and policies; unknown (and so not judged) if they cannot be read."""
    judged = [e for e in endpoints if e.kind is EndpointKind.REAL_TIME and not e.not_judged_reason
              and not (e.skipped_reason and not e.skipped_rules)]
    if not judged or not any(v.instance_count >= 2 for e in judged for v in e.variants):
        return endpoints  # nothing the no-autoscaling rule would judge: spare the calls
    try:
        targets = discover_autoscaling(clients.client("application-autoscaling", region), region)
    except RegionAccessError as exc:
        errors.append(AuditError(region, None, "discover", f"{exc.message}: no-autoscaling not judged"))
        return endpoints
    return [
        replace(
            e,
            autoscaling_known=True,
            variants=tuple(replace(v, autoscaling=targets.get(variant_resource_id(e.name, v.name))) for v in e.variants),
        )
        for e in endpoints
    ]


def assess_components(
    endpoint: Endpoint, metrics: CollectedMetrics, config: AuditConfig, window: Window
) -> tuple[ComponentReport, ...]:
    """Inference components publish normalised utilisation of their own: summarise it per component."""
    reports = []
    for component in endpoint.inference_components:
        raw = metrics.frame(endpoint.name, component.variant, component.name)
        normalised = normalise_component_utilisation(raw)
        utilization = None if normalised.empty else summarise_utilisation(
            normalised, raw, window.period_seconds, config.thresholds.sizing_statistic, config.recommend.peak_statistic
        )
        reports.append(ComponentReport(component, utilization))
    return tuple(reports)


def assess_endpoint(
    endpoint: Endpoint,
    metrics: CollectedMetrics,
    catalog: Catalog,
    config: AuditConfig,
    window: Window,
    now: datetime,
) -> EndpointAssessment:
    variants = []
    for variant in endpoint.variants:
        shape = catalog.shape(variant.instance_type) if variant.instance_type else None
        # A Failed endpoint runs no instances: it costs nothing, whatever its config says.
        billed = shape is not None and endpoint.status not in NOT_BILLED_STATUSES
        cost = catalog.monthly_cost(shape.instance_type, variant.instance_count, endpoint.region) if shape and billed else None
        utilization = None
        raw = metrics.frame(endpoint.name, variant.name)
        normalised = normalise_utilisation(raw, shape)
        if not endpoint.not_judged_reason:
            utilization = summarise_utilisation(
                normalised,
                raw,
                window.period_seconds,
                config.thresholds.sizing_statistic,
                config.recommend.peak_statistic,
            )
        if variant.serverless_memory_mb and utilization is not None:
            # Serverless bills compute time: estimate it from the traffic the window saw.
            seconds = compute_seconds_per_month(raw, utilization.invocations, window)
            price = catalog.serverless_price(variant.serverless_memory_mb, endpoint.region)
            cost = None if seconds is None or price is None else round(seconds * price, 2)
        variants.append(VariantAssessment(variant, shape, utilization, cost, raw=raw, normalised=normalised))
    return EndpointAssessment(
        endpoint,
        tuple(variants),
        endpoint_age_days(endpoint, now),
        window=window,
        queue=metrics.frame(endpoint.name, None),
        config=config,
    )


def _check_catalog(endpoint: Endpoint, catalog: Catalog, errors: list[AuditError]) -> Endpoint:
    """An instance type the catalog does not know cannot be normalised: do not judge it."""
    if endpoint.not_judged_reason:
        return endpoint
    unknown = sorted({v.instance_type for v in endpoint.variants if v.instance_type and not catalog.shape(v.instance_type)})
    if not unknown:
        return endpoint
    reason = f"instance type {', '.join(unknown)} not in the catalog: not judged"
    errors.append(AuditError(endpoint.region, endpoint.name, "analyse", reason))
    return replace(endpoint, not_judged_reason=reason)


def _region_priced(endpoint: Endpoint, catalog: Catalog) -> bool:
    return all(
        catalog.hourly_price(v.instance_type, endpoint.region) is not None
        for v in endpoint.variants
        if v.instance_type and catalog.shape(v.instance_type)
    )
