"""What the next audit run checks after a workspaces plan is applied (auditor.act.verify runs it):
a notebook instance Stopped; a Studio app gone or Deleted; a Studio domain with idle shutdown on for
every app type whose settings the UpdateDomain set."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.history.store import AppliedChange
from auditor.kinds.workspaces.discover_studio import IDLE_SETTING_APPS
from auditor.kinds.workspaces.models import WorkspacesSection
from auditor.write.verify import Evidence, ResourceKey, Verifier, params_of


def notebook_done(change: AppliedChange, evidence: Evidence) -> bool:
    notebook = evidence.found(change, "notebook-instance")
    return notebook is not None and notebook.status == "Stopped"


def app_done(change: AppliedChange, evidence: Evidence) -> bool:
    app = evidence.found(change, "studio-app")
    return bool(app.status == "Deleted") if app is not None else evidence.absent(change, "studio-app")


def idle_shutdown_done(change: AppliedChange, evidence: Evidence) -> bool:
    """The domain the run described has idle shutdown on for each app type the change set."""
    domain = evidence.found(change, "studio-domain")
    if domain is None:
        return False
    keys = {k for p in params_of(change, "sagemaker", "UpdateDomain") for k in p.get("DefaultUserSettings") or {}}
    apps = [app for app, key in IDLE_SETTING_APPS.items() if key in keys]
    return bool(apps) and all(domain.idle_timeout_minutes.get(app) is not None for app in apps)


def seen(section: WorkspacesSection | None) -> Mapping[str, Mapping[ResourceKey, Any] | None]:
    """The notebook instances, Studio apps and domains (by domain id) the run saw; None for each
    when it did not audit workspaces."""
    if section is None:
        return dict.fromkeys(("notebook-instance", "studio-app", "studio-domain"))
    return {
        "notebook-instance": {(c.notebook.account_id, c.notebook.region, c.notebook.name): c.notebook
                              for c in section.notebooks},
        "studio-app": {(c.app.account_id, c.app.region, c.app.name): c.app for c in section.apps},
        "studio-domain": {(d.account_id, d.region, d.domain_id): d for d in section.domains},
    }


VERIFIERS: dict[str, Verifier] = {
    "notebook-instance": notebook_done,
    "studio-app": app_done,
    "studio-domain": idle_shutdown_done,
}
