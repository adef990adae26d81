"""discover -> collect -> analyse -> recommend, region by region, into one AuditReport.

One module per kind of resource: `endpoints` and `jobs` (training and batch transform). Each
returns what it found, with its errors; a failure that stops a region (access denied,
unreachable) is a fatal error for that region and the other regions carry on, keeping what was
collected before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from auditor.catalog import load_catalog
from auditor.collect.plan import align_window
from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.models import (
    AuditError,
    AuditReport,
    CatalogInfo,
    EndpointReport,
    Experiment,
    Finding,
    JobsSection,
    TrainingCost,
    TransformCost,
)
from auditor.pipeline.endpoints import audit_endpoints
from auditor.pipeline.jobs import audit_jobs
from auditor.pipeline.progress import Progress
from auditor.recommend.plans import build_plans

__all__ = ["AuditOutcome", "Progress", "report_settings", "run_audit"]


@dataclass(frozen=True)
class AuditOutcome:
    report: AuditReport
    fatal_errors: tuple[AuditError, ...]


def run_audit(
    config: AuditConfig,
    clients: AwsClients,
    now: datetime | None = None,
    progress: Progress | None = None,
    notices: tuple[AuditError, ...] = (),
) -> AuditOutcome:
    """`notices`: problems found before the audit (a history file moved aside); they lead the report's errors."""
    now = now or datetime.now(UTC)
    progress = progress or Progress()
    clients.check_credentials()
    for region in config.aws.regions:
        clients.check_region(region)
    catalog = load_catalog(config.pricing.assume_prices_from)
    window = align_window(now, config.aws.lookback_days, config.aws.period_seconds)

    endpoints: list[EndpointReport] = []
    findings: list[Finding] = []
    errors: list[AuditError] = list(notices)
    fatal: list[AuditError] = []
    training: list[TrainingCost] = []
    transform: list[TransformCost] = []
    experiments: list[Experiment] = []
    for region in config.aws.regions:
        region_result = audit_endpoints(region, config, clients, catalog, window, now, progress)
        endpoints.extend(region_result.endpoints)
        findings.extend(region_result.findings)
        errors.extend(region_result.errors)
        fatal.extend(region_result.fatal)
        if config.jobs.enabled:
            job_result = audit_jobs(region, config, clients, catalog, window, now)
            training.extend(job_result.section.training)
            transform.extend(job_result.section.transform)
            experiments.extend(job_result.section.experiments)
            findings.extend(job_result.findings)
            errors.extend(job_result.errors)
            fatal.extend(job_result.fatal)

    # Advice that costs more (a growing queue) is not a saving: it ranks by severity among the zeros.
    findings.sort(key=lambda f: (-max(f.monthly_savings_usd, 0.0), -f.severity.rank, f.region, f.endpoint,
                                 f.variant or "", f.rule))
    endpoint_reports = tuple(endpoints)
    report = AuditReport(
        generated_at=now,
        window=window,
        endpoints=endpoint_reports,
        findings=tuple(findings),
        errors=tuple(errors),
        catalog=CatalogInfo(source=catalog.source, as_of=catalog.as_of, priced_regions=catalog.priced_regions),
        api_calls=clients.counter.as_dict(),
        settings=report_settings(config),
        jobs=JobsSection(tuple(training), tuple(transform), tuple(experiments)),
        plans=build_plans(findings, endpoint_reports, catalog, config),
    )
    return AuditOutcome(report=report, fatal_errors=tuple(fatal))


def report_settings(config: AuditConfig) -> dict[str, Any]:
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
