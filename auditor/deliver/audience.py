"""Who reads what, when mail or chat is routed by a tag: a partition of the report.

Every resource of the report belongs to exactly one audience: the owner its tag names, when the
delivery accepts that value (an email address for mail, a configured route for chat), or the
default audience (None: the configured recipients, the default channel). Each audience's report
holds only its resources and their findings, plans and errors, so its totals (the endpoints'
spend, the plans' saving, the finding counts) are its own, and the audiences' totals add up to the
run's.

Each resource kind (auditor/kinds/) lists its resources with their tags and narrows its own section
to one audience. Tags are those discovery reads: endpoints, notebook instances and Studio domains,
and, when a delivery routes by tag, the training, transform and processing jobs that have a finding
(one ListTags each; see kinds.jobs). Other jobs, Studio apps and spaces carry none in the report:
they belong to the default audience, with the training experiments whose runs are not all one
owner's, the Savings Plans advice, the price reconciliation and every error that names no
resource of an owner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from auditor.kinds.registry import monthly_cost_by_kind, owned_resources, sections_of
from auditor.models import AuditError, AuditReport, ResourceRef

# A resource's tags -> its audience (None: the default audience).
AudienceOf = Callable[[Mapping[str, str]], str | None]

# (account_id, region, resource type as findings and plans name it, name)
ResourceKey = tuple[str, str, str, str]


def resource_tags(report: AuditReport) -> dict[ResourceKey, Mapping[str, str]]:
    """Every resource of every kind in the report with its tags ({} where the report holds none)."""
    tagged: dict[ResourceKey, Mapping[str, str]] = {}
    for o in owned_resources(report):
        tagged.setdefault((o.account_id, o.region, o.resource_type, o.name), o.tags)
    return tagged


class Audiences:
    """The audience of each resource, and of anything that names one (a finding, a plan, an error)."""

    def __init__(self, report: AuditReport, audience_of: AudienceOf) -> None:
        self.of_resource = {key: audience_of(tags) for key, tags in resource_tags(report).items()}
        # A finding's account can be "" where the resource's is known (and the other way round),
        # and an error names no resource type: these fall back to the region and the name.
        self._by_name: dict[tuple[str, str], list[tuple[str, str | None]]] = {}
        for (account, region, _, name), audience in self.of_resource.items():
            self._by_name.setdefault((region, name), []).append((account, audience))

    def of(self, account_id: str, region: str, resource_type: str, name: str | None) -> str | None:
        if name is None:
            return None
        exact = self.of_resource.get((account_id, region, resource_type, name), ...)
        if exact is not ...:
            return exact
        for account, audience in self._by_name.get((region, name), ()):
            if not account_id or not account or account == account_id:
                return audience
        return None

    def of_error(self, error: AuditError) -> str | None:
        return self.of(error.account_id, error.region, "", error.endpoint)

    def names(self) -> list[str | None]:
        """The owners (sorted), then None."""
        return [*sorted({a for a in self.of_resource.values() if a is not None}), None]


def has_something_to_act_on(report: AuditReport) -> bool:
    """A finding above info, or an error on one of the audience's resources."""
    return any(f.severity.value != "info" for f in report.findings) or bool(report.errors)


def partition(report: AuditReport, audience_of: AudienceOf) -> dict[str | None, AuditReport]:
    """One report per audience: the owners (sorted), then None, the default audience, always present.
    Every endpoint, job, notebook, Studio domain and app, finding, plan and error is in exactly one."""
    audiences = Audiences(report, audience_of)
    return {key: audience_report(report, audiences, key) for key in audiences.names()}


def delivered_partition(report: AuditReport, audience_of: AudienceOf,
                        delivered: Callable[[AuditReport], bool]) -> dict[str | None, AuditReport]:
    """The partition, with the owners whose report is not `delivered` (nothing to act on) folded
    into the default audience: what no owner receives, the default audience does."""
    parts = partition(report, audience_of)
    folded = {owner for owner, part in parts.items() if owner is not None and not delivered(part)}
    if not folded:
        return parts

    def audience_or_default(tags: Mapping[str, str]) -> str | None:
        audience = audience_of(tags)
        return None if audience in folded else audience

    return partition(report, audience_or_default)


def audience_report(report: AuditReport, audiences: Audiences, audience: str | None) -> AuditReport:
    def keep(resource: ResourceRef) -> bool:
        return audiences.of(resource.account_id, resource.region, resource.type, resource.name) == audience

    # Each resource kind narrows its own section (auditor/kinds/): its resources and what derives
    # from them (an experiment goes with its runs' one audience, else to the default one).
    sections = sections_of(report, audiences.of, audience)
    return replace(
        report,
        sections=sections,
        monthly_cost_by_kind=monthly_cost_by_kind(sections, report.window),
        findings=tuple(f for f in report.findings if keep(f.resource)),
        plans=tuple(p for p in report.plans if keep(p.resource)),
        errors=tuple(e for e in report.errors if audiences.of_error(e) == audience),
        # Account-wide figures: the Savings Plans advice and the bill's reconciliation are the default audience's.
        savings_plans=report.savings_plans if audience is None else (),
        catalog=report.catalog if audience is None else replace(report.catalog, reconciliation=()),
    )
