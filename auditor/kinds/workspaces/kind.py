"""Notebook instances and Studio (domains, spaces, apps), as one resource kind: discovered and
costed per region, judged by the rules over `WorkspacesAssessment`. No CloudWatch: notebook
instances and Studio apps publish no utilisation metrics (see the rules for what they rest on)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from auditor.collect.session import RegionAccessError
from auditor.kinds.base import (
    Audience,
    AudienceOf,
    KindResult,
    Owned,
    RegionScope,
    ResourceKind,
    ResourcePrice,
    ShapeKey,
    shape_key,
    unreachable,
)
from auditor.kinds.workspaces.assessment import WorkspacesAssessment
from auditor.kinds.workspaces.binding import BINDINGS
from auditor.kinds.workspaces.costs import notebook_cost, storage_prices, studio_app_cost
from auditor.kinds.workspaces.discover_notebooks import discover_notebooks
from auditor.kinds.workspaces.discover_studio import discover_studio
from auditor.kinds.workspaces.evidence import EVIDENCE
from auditor.kinds.workspaces.models import NotebookCost, WorkspacesSection
from auditor.kinds.workspaces.rules import RULES
from auditor.kinds.workspaces.settings import WorkspacesConfig
from auditor.kinds.workspaces.target import TARGETS
from auditor.kinds.workspaces.verify import VERIFIERS, seen
from auditor.models import AuditError, Window
from auditor.prices.parse import studio_usage
from auditor.values import iso, iso_or_none


def audit(scope: RegionScope) -> KindResult[WorkspacesSection | None]:
    region, config, catalog = scope.region, scope.config, scope.catalog
    sagemaker = scope.clients.client("sagemaker", region)
    errors: list[AuditError] = []
    fatal: list[AuditError] = []
    notebooks: list[NotebookCost] = []
    if WorkspacesConfig.of(config).notebooks:
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
    if WorkspacesConfig.of(config).studio and not unreachable(tuple(fatal)):
        try:
            studio = discover_studio(sagemaker, region, config.aws.max_workers)
            errors.extend(studio.errors)
            section = WorkspacesSection(tuple(notebooks), studio.domains, studio.spaces,
                                        tuple(studio_app_cost(a, catalog, scope.now) for a in studio.apps))
        except RegionAccessError as exc:
            error = AuditError(region, None, "discover",
                               f"{exc.message} (Studio domains and apps; workspaces.studio = false skips them)")
            errors.append(error)
            fatal.append(error)
    findings = scope.judge(WorkspacesAssessment(scope.now, section.notebooks, section.domains, section.spaces,
                                                section.apps))
    return KindResult(section, tuple(findings), tuple(errors), tuple(fatal))


def merge(sections: Sequence[WorkspacesSection | None]) -> WorkspacesSection | None:
    """The regions' sections as one; None when no region audited notebooks or Studio."""
    present = [s for s in sections if s is not None]
    if not present:
        return None
    source, as_of, _ = storage_prices()
    return WorkspacesSection(
        notebooks=tuple(n for s in present for n in s.notebooks),
        domains=tuple(d for s in present for d in s.domains),
        spaces=tuple(p for s in present for p in s.spaces),
        apps=tuple(a for s in present for a in s.apps),
        storage_price_source=f"{source} (as of {as_of})",
    )


def owned(section: WorkspacesSection | None) -> Iterable[Owned]:
    if section is None:
        return
    for n in section.notebooks:
        yield Owned(n.notebook.account_id, n.notebook.region, "notebook-instance", n.notebook.name, n.notebook.tags)
    for d in section.domains:
        yield Owned(d.account_id, d.region, "studio-domain", d.domain_id, d.tags)
    for a in section.apps:
        yield Owned(a.app.account_id, a.app.region, "studio-app", a.app.name, {})


def only(section: WorkspacesSection | None, audience_of: AudienceOf, audience: Audience) -> WorkspacesSection | None:
    if section is None:
        return None
    return replace(
        section,
        notebooks=tuple(c for c in section.notebooks if audience_of(
            c.notebook.account_id, c.notebook.region, "notebook-instance", c.notebook.name) == audience),
        domains=tuple(d for d in section.domains
                      if audience_of(d.account_id, d.region, "studio-domain", d.domain_id) == audience),
        # Spaces carry no tags in the report: they stay with the default audience.
        spaces=section.spaces if audience is None else (),
        apps=tuple(c for c in section.apps
                   if audience_of(c.app.account_id, c.app.region, "studio-app", c.app.name) == audience),
    )


def price_uses(section: WorkspacesSection | None) -> Iterable[ResourcePrice]:
    if section is None:
        return
    for n in section.notebooks:
        yield ResourcePrice("notebook-instance", n.notebook.name, "notebook", n.notebook.instance_type,
                            n.notebook.region)
    for a in section.apps:
        if a.app.instance_type:
            yield ResourcePrice("studio-app", a.app.name, studio_usage(a.app.app_type), a.app.instance_type,
                                a.app.region)


def to_dict(section: WorkspacesSection | None) -> dict[str, Any] | None:
    """Notebook instances and Studio, or None when they were not audited."""
    if section is None:
        return None
    notebooks = [
        {
            "account_id": c.notebook.account_id, "region": c.notebook.region, "name": c.notebook.name,
            "status": c.notebook.status, "instance_type": c.notebook.instance_type,
            "volume_size_gb": c.notebook.volume_size_gb, "lifecycle_config": c.notebook.lifecycle_config,
            "idle_stop": c.notebook.idle_stop, "accelerator_types": list(c.notebook.accelerator_types),
            "created_at": iso(c.notebook.created_at), "last_modified_at": iso(c.notebook.last_modified_at),
            "tags": c.notebook.tags, "price_per_hour": c.price_per_hour, "price_basis": c.price_basis,
            "compute_monthly_usd": c.compute_monthly_usd, "storage_monthly_usd": c.storage_monthly_usd,
            "monthly_cost_usd": c.monthly_cost_usd,
        }
        for c in section.notebooks
    ]
    apps = [
        {
            "account_id": c.app.account_id, "region": c.app.region, "domain_id": c.app.domain_id,
            "app_type": c.app.app_type, "app_name": c.app.app_name, "owner": c.app.owner, "status": c.app.status,
            "instance_type": c.app.instance_type, "created_at": iso_or_none(c.app.created_at),
            "last_user_activity": iso_or_none(c.app.last_user_activity),
            "last_health_check": iso_or_none(c.app.last_health_check),
            "idle_hours": None if c.idle_hours is None else round(c.idle_hours, 1),
            "price_per_hour": c.price_per_hour, "price_basis": c.price_basis, "monthly_cost_usd": c.monthly_usd,
        }
        for c in section.apps
    ]
    return {
        "summary": {
            "notebooks": len(notebooks),
            "notebooks_in_service": sum(1 for n in section.notebooks if n.notebook.status == "InService"),
            "notebooks_monthly_cost_usd": round(sum(n.monthly_cost_usd or 0.0 for n in section.notebooks), 2),
            "studio_domains": len(section.domains),
            "studio_apps": len(apps),
            "studio_apps_monthly_cost_usd": round(sum(a.monthly_usd or 0.0 for a in section.apps), 2),
            "price_basis": workspaces_price_basis(section),
            "storage_prices": section.storage_price_source,
        },
        "notebooks": notebooks,
        "studio": {
            "domains": [{"account_id": d.account_id, "region": d.region, "domain_id": d.domain_id, "name": d.name,
                         "status": d.status, "idle_timeout_minutes": d.idle_timeout_minutes}
                        for d in section.domains],
            "spaces": [{"region": s.region, "domain_id": s.domain_id, "name": s.name, "app_type": s.app_type,
                        "idle_timeout_minutes": s.idle_timeout_minutes} for s in section.spaces],
            "apps": apps,
        },
    }



def shapes(section: dict[str, Any] | None) -> dict[ShapeKey, str]:
    """Each notebook instance's one instance, for the reports' "now" column."""
    return {shape_key("notebook-instance", n, n["name"]): f"1 x {n['instance_type']}"
            for n in (section or {}).get("notebooks", [])}


def workspaces_price_basis(section: WorkspacesSection) -> str:
    """Which rates the notebook and Studio figures rest on, in a few words."""
    used = [("notebook", n.price_basis) for n in section.notebooks if n.price_per_hour is not None]
    used += [(studio_usage(a.app.app_type), a.price_basis) for a in section.apps if a.price_per_hour is not None]
    fallback = sorted({usage for usage, basis in used if basis != usage})
    if not fallback:
        return "notebook and Studio compute at their own list rates"
    at_hosting = (f"{', '.join(fallback)} at the hosting list price of the same type (the prices have no "
                  "rate of their own for it)")
    if all(basis != usage for usage, basis in used):
        return at_hosting
    return f"{at_hosting}; the rest at their own list rates"


def monthly_cost(section: WorkspacesSection | None, _window: Window) -> float | None:
    """Notebook instances (with their volumes) and running Studio apps a month; None: not audited."""
    if section is None:
        return None
    return round(sum(n.monthly_cost_usd or 0.0 for n in section.notebooks)
                 + sum(a.monthly_usd or 0.0 for a in section.apps), 2)


KIND: ResourceKind[WorkspacesSection | None] = ResourceKind(
    key="workspaces",
    title="Notebook instances and Studio",
    order=30,
    iam_actions=frozenset({
        "sagemaker:ListNotebookInstances", "sagemaker:DescribeNotebookInstance",
        "sagemaker:DescribeNotebookInstanceLifecycleConfig", "sagemaker:ListTags",
        "sagemaker:ListDomains", "sagemaker:DescribeDomain", "sagemaker:ListSpaces", "sagemaker:DescribeSpace",
        "sagemaker:ListApps", "sagemaker:DescribeApp",
    }),
    # Always: with notebooks and Studio both off it makes no call and reports an empty section.
    enabled=lambda config: True,
    audit=audit,
    empty=None,
    merge=merge,
    to_dict=to_dict,
    owned=owned,
    only=only,
    price_uses=price_uses,
    monthly_cost=monthly_cost,
    templates={"html": "kind_workspaces.html.j2", "text": "kind_workspaces.txt.j2",
               "markdown": "kind_workspaces.md.j2"},
    shapes=shapes,
    rules=RULES,
    targets=TARGETS,
    bindings=BINDINGS,
    evidence=EVIDENCE,
    verifiers=VERIFIERS,
    seen=seen,
    settings={"workspaces": WorkspacesConfig},
)
