"""Notebook instances and Studio of one region: discover, cost, rules. No CloudWatch: notebook
instances and Studio apps publish no utilisation metrics (see the rules for what they rest on)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from auditor.analyse.rules import WorkspacesAssessment, evaluate_workspaces
from auditor.analyse.workspaces import notebook_cost, studio_app_cost
from auditor.catalog import Catalog
from auditor.collect.session import AwsClients, RegionAccessError
from auditor.config import AuditConfig
from auditor.discover.notebooks import discover_notebooks
from auditor.discover.studio import discover_studio
from auditor.models import AuditError, Finding
from auditor.workspaces import WorkspacesSection


@dataclass(frozen=True)
class WorkspacesResult:
    section: WorkspacesSection = field(default_factory=WorkspacesSection)
    findings: tuple[Finding, ...] = ()
    errors: tuple[AuditError, ...] = ()
    fatal: tuple[AuditError, ...] = ()


def audit_workspaces(region: str, config: AuditConfig, clients: AwsClients, catalog: Catalog,
                     now: datetime) -> WorkspacesResult:
    sagemaker = clients.client("sagemaker", region)
    errors: list[AuditError] = []
    fatal: list[AuditError] = []
    notebooks = []
    if config.workspaces.notebooks:
        try:
            found = discover_notebooks(sagemaker, region, config.aws.max_workers)
            errors.extend(found.errors)
            notebooks = [notebook_cost(n, catalog) for n in found.notebooks]
        except RegionAccessError as exc:
            error = AuditError(region, None, "discover",
                               f"{exc.message} (notebook instances; workspaces.notebooks = false skips them)")
            errors.append(error)
            fatal.append(error)
    section = WorkspacesSection(notebooks=tuple(notebooks))
    if config.workspaces.studio and not unreachable(tuple(fatal)):
        try:
            studio = discover_studio(sagemaker, region, config.aws.max_workers)
            errors.extend(studio.errors)
            section = WorkspacesSection(tuple(notebooks), studio.domains, studio.spaces,
                                        tuple(studio_app_cost(a, catalog, now) for a in studio.apps))
        except RegionAccessError as exc:
            error = AuditError(region, None, "discover",
                               f"{exc.message} (Studio domains and apps; workspaces.studio = false skips them)")
            errors.append(error)
            fatal.append(error)
    assessment = WorkspacesAssessment(now, section.notebooks, section.domains, section.spaces, section.apps)
    findings = evaluate_workspaces(assessment, catalog, config)
    return WorkspacesResult(section, tuple(findings), tuple(errors), tuple(fatal))


def unreachable(fatal: tuple[AuditError, ...]) -> bool:
    """Whether a region could not be reached at all (connection refused, timed out)."""
    return any(e.message.startswith("cannot reach ") or " timed out " in e.message for e in fatal)


def merge_workspaces(results: list[WorkspacesResult]) -> WorkspacesSection | None:
    """The regions' sections as one; None when no region audited notebooks or Studio."""
    if not results:
        return None
    from auditor.analyse.workspaces import storage_prices

    return WorkspacesSection(
        notebooks=tuple(n for r in results for n in r.section.notebooks),
        domains=tuple(d for r in results for d in r.section.domains),
        spaces=tuple(s for r in results for s in r.section.spaces),
        apps=tuple(a for r in results for a in r.section.apps),
        storage_price_source=f"{storage_prices()[0]} (as of {storage_prices()[1]})",
    )
