"""studio-app-idle: a running Studio app (JupyterLab, Code Editor, KernelGateway, RStudio...) on a
billed instance with no user activity for `idle_hours` hours.

The evidence is DescribeApp's LastUserActivityTimestamp. A last activity equal to the last health
check is the health check, not a user, and counts as none; an app with no activity at all is idle
since it was created. Apps publish no utilisation metrics, so a kernel busy with a long job and no
user looks idle here: the message says so."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from auditor.analyse.rules.base import CollectionRule, RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.workspaces.assessment import WorkspacesAssessment
from auditor.kinds.workspaces.change import delete_app_details
from auditor.models import Finding, Judged, Recommendation, Severity
from auditor.recommend.pricing import priced
from auditor.schema import setting


@dataclass(frozen=True)
class StudioAppIdleSettings(RuleSettings):
    idle_hours: float = setting(24.0, "no user activity for this long", above=0, maximum=24 * 365)


def check(workspaces: WorkspacesAssessment, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    settings = settings_of(RULE, config)
    for cost in workspaces.apps:
        app = cost.app
        if app.status != "InService" or not app.instance_type or app.instance_type == "system":
            continue
        if cost.idle_hours is None or cost.idle_hours < settings.idle_hours:
            continue
        health_only = app.last_user_activity is not None and app.user_activity is None
        since = ("no user activity since it was created" if app.last_user_activity is None
                 else "its last activity is only its last health check" if health_only
                 else f"last user activity {app.last_user_activity:%Y-%m-%d %H:%M} UTC")
        rate = (f"{app.instance_type} at ${cost.price_per_hour:,.3f}/h (hosting rate)" if cost.price_per_hour
                else f"{app.instance_type} (no price for it in {app.region})")
        finding = RULE.finding(
            app, None,
            f"{app.app_type} app of {app.owner} idle {cost.idle_hours:.0f} h ({since}) on {rate}. Apps publish no "
            f"utilisation metrics: a kernel running a job with no user at the keyboard looks the same",
            {"idle_hours": round(cost.idle_hours, 1), "idle_hours_threshold": settings.idle_hours,
             "last_user_activity": app.last_user_activity.isoformat() if app.last_user_activity else None,
             "last_health_check": app.last_health_check.isoformat() if app.last_health_check else None,
             "health_check_only": health_only, "instance_type": app.instance_type, "domain_id": app.domain_id},
        )
        if cost.monthly_usd is None:
            yield finding
            continue
        yield priced(finding, Recommendation(
            "delete-app", app.instance_type, 1, current_monthly_usd=cost.monthly_usd, recommended_monthly_usd=0.0,
            details={"basis": "the app's instance for 730 hours at the hosting list price of its type; the space's "
                              "storage is kept",
                     # the change (DeleteApp), its rollback (CreateApp) and its risk
                     **delete_app_details(cost)}))


RULE = CollectionRule(
    assessment=WorkspacesAssessment,
    id="studio-app-idle",
    title="Studio app idle",
    severity=Severity.LOW,
    remediation="Stop the app (DeleteApp keeps the space and its storage), and set idle shutdown on the domain.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/studio-updated-idle-shutdown.html",
    judges=frozenset({Judged.STUDIO_APP}),
    settings=StudioAppIdleSettings,
    check=check,
)
