"""studio-no-idle-shutdown: a Studio domain whose default JupyterLab or Code Editor settings have
no idle shutdown (AppLifecycleManagement.IdleSettings), and spaces that set none either: their
apps run until someone stops them. Its plan turns idle shutdown on (UpdateDomain, every other
setting copied as described; auditor/kinds/workspaces/change.py); no saving is priced: what it saves
depends on how long apps would have idled, which nothing measures."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from auditor.analyse.rules.base import CollectionRule, RuleSettings, join_words, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.workspaces.assessment import WorkspacesAssessment
from auditor.kinds.workspaces.change import idle_shutdown_details
from auditor.models import Finding, Judged, Recommendation, Severity
from auditor.schema import setting


@dataclass(frozen=True)
class StudioNoIdleShutdownSettings(RuleSettings):
    # IdleTimeoutInMinutes' bounds in botocore's model: 60 to 525,600.
    idle_timeout_minutes: int = setting(120, "the idle shutdown its plan turns on, in minutes", minimum=60,
                                        maximum=525600)


def check(workspaces: WorkspacesAssessment, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    minutes = int(settings_of(RULE, config).idle_timeout_minutes)
    for domain in workspaces.domains:
        missing = sorted(app for app, minutes in domain.idle_timeout_minutes.items() if minutes is None)
        if not missing:
            continue
        bare = sorted(s.name for s in workspaces.spaces
                      if s.domain_id == domain.domain_id and s.app_type in missing and s.idle_timeout_minutes is None)
        running = [c for c in workspaces.apps
                   if c.app.domain_id == domain.domain_id and c.app.app_type in missing and c.app.status == "InService"]
        spaces = f"; spaces without their own: {join_words(bare)}" if bare else ""
        finding = RULE.finding(
            domain, None,
            f"Domain {domain.name} ({domain.domain_id}) sets no idle shutdown for {join_words(missing)} apps"
            f"{spaces}; {len(running)} such app(s) running now",
            {"domain_id": domain.domain_id, "apps_without_idle_shutdown": missing, "spaces_without": bare,
             "running_apps": len(running)},
        )
        # No saving is priced (how long apps would idle is not measured): the plan is the change.
        recommendation = Recommendation("idle-shutdown", None, 0, 0.0, 0.0, details={
            "advice": f"turn on idle shutdown after {minutes} min for {join_words(missing)} apps",
            **idle_shutdown_details(domain, missing, minutes)})
        yield replace(finding, resource=replace(finding.resource, type="studio-domain", name=domain.domain_id),
                      recommendation=recommendation)


RULE = CollectionRule(
    assessment=WorkspacesAssessment,
    id="studio-no-idle-shutdown",
    title="Studio domain without idle shutdown",
    severity=Severity.LOW,
    remediation="Turn on idle shutdown in the domain's JupyterLab and Code Editor settings (UpdateDomain "
                "DefaultUserSettings ...AppSettings.AppLifecycleManagement.IdleSettings: LifecycleManagement "
                "ENABLED, IdleTimeoutInMinutes).",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/studio-updated-idle-shutdown.html",
    judges=frozenset({Judged.STUDIO_APP}),
    settings=StudioNoIdleShutdownSettings,
    check=check,
)
