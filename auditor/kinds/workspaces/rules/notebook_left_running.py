"""notebook-left-running: a notebook instance InService, without a stop, start or update for
`min_days` days.

Notebook instances publish no utilisation metrics to CloudWatch (there is no notebook namespace
beside /aws/sagemaker/Endpoints, TrainingJobs, TransformJobs and ProcessingJobs), so nothing
observable says whether anyone uses it. The rule rests on the status and LastModifiedTime, which a
start, stop or update changes and use never does: it says how long the instance has run without a
stop, not that it is idle, and stays `low` whatever it costs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from auditor.analyse.rules.base import CollectionRule, RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.workspaces.assessment import WorkspacesAssessment
from auditor.kinds.workspaces.change import stop_notebook_details
from auditor.models import Finding, Judged, Recommendation, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting


@dataclass(frozen=True)
class NotebookLeftRunningSettings(RuleSettings):
    min_days: float = setting(7.0, "InService this long without a stop, start or update", minimum=0,
                              maximum=3650)


def check(workspaces: WorkspacesAssessment, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    settings = settings_of(RULE, config)
    for cost in workspaces.notebooks:
        nb = cost.notebook
        if nb.status != "InService":
            continue
        days = (workspaces.now - nb.last_modified_at).total_seconds() / 86400
        if days < settings.min_days:
            continue
        monthly = cost.compute_monthly_usd
        price = (f"{nb.instance_type} at ${cost.price_per_hour:,.3f}/h (hosting rate), ${monthly:,.2f}/month"
                 if cost.price_per_hour is not None and monthly is not None
                 else f"{nb.instance_type} (no price for it in {nb.region})")
        finding = RULE.finding(
            nb, None,
            f"InService for {days:.0f} days without a stop, start or update (last modified "
            f"{nb.last_modified_at:%Y-%m-%d}): {price}. Notebook instances publish no CPU or GPU metrics, so "
            f"whether anyone used it is not known: this is time running, not proof of idleness",
            {"days_since_last_modified": round(days, 1), "last_modified": nb.last_modified_at.isoformat(),
             "min_days": settings.min_days, "instance_type": nb.instance_type, "price_basis": cost.price_basis,
             "evidence_basis": "status and LastModifiedTime (no notebook utilisation metrics exist)"},
        )
        if monthly is None:
            yield finding
            continue
        storage = cost.storage_monthly_usd or 0.0
        yield priced(finding, Recommendation(
            "stop", nb.instance_type, 1, current_monthly_usd=round(monthly + storage, 2),
            recommended_monthly_usd=round(storage, 2),
            details={"basis": "stopped, only its ML storage volume is billed",
                     "price_basis": f"{cost.price_basis} list price of the type",
                     "volume_size_gb": nb.volume_size_gb,
                     # the change (StopNotebookInstance), its rollback and its risk
                     **stop_notebook_details(nb, days)}),
            severity=Severity.LOW)


RULE = CollectionRule(
    assessment=WorkspacesAssessment,
    id="notebook-left-running",
    title="Notebook instance left running",
    severity=Severity.LOW,
    remediation="Ask the owner; stop it (StopNotebookInstance) when not in use: the volume and its files are kept.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/nbi.html",
    judges=frozenset({Judged.NOTEBOOK}),
    settings=NotebookLeftRunningSettings,
    # Notebooks publish no usage metric: "no sign of use" rests on timestamps, not on measurement.
    measured=False,
    check=check,
)
