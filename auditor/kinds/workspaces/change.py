"""The changes of the workspaces kind's plans (a notebook instance stopped, an idle Studio app
deleted, a Studio domain's idle shutdown turned on), their rollback and their risk, as data the
rules put in their recommendation's details (recommend/rule_changes.py turns them into the plan's
Change and Risk). Pure.

No replay applies: nothing measures a notebook's or an app's use. The risk rests on the facts the
audit states (docs/plans.md, "Risk levels"):
- stopping a notebook instance is medium: notebook instances publish no usage metric, so whether
  anyone uses it is unknown; a stop ends its kernels and processes and loses files outside
  /home/ec2-user/SageMaker, while its ML storage volume (that folder) is kept (StopNotebookInstance:
  "SageMaker AI preserves the ML storage volume");
- deleting a Studio app is low when no user was active on it for `LOW_RISK_IDLE_DAYS` days or more,
  medium otherwise: apps publish no utilisation, so a kernel running a job with nobody at the
  keyboard looks idle; the space's (or the user's) storage is kept (AWS: "when you stop an
  application, the files in the space persist");
- turning on a domain's idle shutdown is low: it stops no running app (it applies to apps created
  after it), and an app with a kernel or terminal session is not idle.
"""

from __future__ import annotations

import json
from typing import Any

from auditor.kinds.workspaces.models import NotebookInstance, StudioAppCost, StudioDomain

LOW_RISK_IDLE_DAYS = 7.0  # an app without user activity for a week or more: low risk to delete


def stop_notebook_details(notebook: NotebookInstance, days_since_modified: float) -> dict[str, Any]:
    """`change` (StopNotebookInstance), `rollback`, `waits_for` and `risk` of a stop plan."""
    name = notebook.name
    return {
        "change": [{"service": "sagemaker", "operation": "StopNotebookInstance",
                    "params": {"NotebookInstanceName": name},
                    "purpose": f"stop notebook instance {name}: its ML compute instance ends, its ML storage "
                               f"volume ({notebook.volume_size_gb} GB) is kept"}],
        "rollback": (f"by hand: StartNotebookInstance {json.dumps({'NotebookInstanceName': name})} starts it on a new "
                     "ML compute instance with the same ML storage volume (/home/ec2-user/SageMaker); its lifecycle "
                     "configuration's OnStart runs again"),
        "waits_for": f"notebook instance {name} Stopped",
        "risk": {"level": "medium", "basis": [
            f"InService {days_since_modified:.0f} days without a stop, start or update; notebook instances publish no "
            "usage metric, so whether anyone uses it is not known",
            "a stop ends its running kernels and processes; files outside /home/ec2-user/SageMaker are lost, the ML "
            "storage volume is kept",
        ]},
    }


def delete_app_details(cost: StudioAppCost) -> dict[str, Any]:
    """`change` (DeleteApp), `rollback` (CreateApp with the same spec), `waits_for` and `risk` of an
    idle app's plan."""
    app = cost.app
    owner = {app.owner_field: app.owner}
    request = {"DomainId": app.domain_id, **owner, "AppType": app.app_type, "AppName": app.app_name}
    create: dict[str, Any] = dict(request)
    if app.resource_spec:
        create["ResourceSpec"] = dict(sorted(app.resource_spec.items()))
    where = "the space" if app.owner_field == "SpaceName" else "the user profile"
    idle_hours = cost.idle_hours or 0.0
    low = idle_hours >= LOW_RISK_IDLE_DAYS * 24
    since = ("no user activity since it was created" if app.last_user_activity is None
             else "its last activity is only its last health check" if app.user_activity is None
             else f"last user activity {app.last_user_activity:%Y-%m-%d %H:%M} UTC")
    risk = {"level": "low" if low else "medium", "basis": [
        f"no user activity for {idle_hours:.0f} h ({since}): "
        + (f"{LOW_RISK_IDLE_DAYS:g} days or more" if low else f"under {LOW_RISK_IDLE_DAYS:g} days"),
        "apps publish no utilisation metric: a kernel running a job with nobody at the keyboard looks the same",
        f"DeleteApp keeps {where}'s storage; running kernels and unsaved work in them end",
    ]}
    if not app.owner:  # DeleteApp needs the space or the user profile it runs in
        return {"change_missing": "ListApps named neither the app's space nor its user profile", "risk": risk}
    return {
        "change": [{"service": "sagemaker", "operation": "DeleteApp", "params": request,
                    "purpose": f"stop {app.app_type} app {app.app_name} of {where} {app.owner} in domain "
                               f"{app.domain_id}: its instance ({app.instance_type}) ends, {where}'s storage is kept"}],
        "rollback": (f"by hand: CreateApp {json.dumps(create, sort_keys=True)} starts the same app again on the same "
                     f"storage (or open it from Studio); kernels that ran in it are not restored"),
        "waits_for": f"app {app.app_name} Deleted",
        "risk": risk,
    }


# The app types with an idle-shutdown setting, and the key of their settings in UserSettings.
IDLE_SETTING_KEYS = {"JupyterLab": "JupyterLabAppSettings", "CodeEditor": "CodeEditorAppSettings"}


def _with_idle_shutdown(described: dict[str, Any], minutes: int) -> dict[str, Any]:
    """The app settings as described, with idle shutdown ENABLED at `minutes` (kept within the
    Min/MaxIdleTimeoutInMinutes the settings already allow users)."""
    idle = dict((described.get("AppLifecycleManagement") or {}).get("IdleSettings") or {})
    low, high = idle.get("MinIdleTimeoutInMinutes"), idle.get("MaxIdleTimeoutInMinutes")
    if isinstance(low, int):
        minutes = max(minutes, low)
    if isinstance(high, int):
        minutes = min(minutes, high)
    idle.update({"LifecycleManagement": "ENABLED", "IdleTimeoutInMinutes": minutes})
    return {**described, "AppLifecycleManagement": {**(described.get("AppLifecycleManagement") or {}),
                                                     "IdleSettings": idle}}


def _as_before(described: dict[str, Any]) -> dict[str, Any]:
    """The app settings as described; with no idle settings then, idle shutdown DISABLED (an
    UpdateDomain without AppLifecycleManagement would leave the new setting in place)."""
    if (described.get("AppLifecycleManagement") or {}).get("IdleSettings"):
        return described
    return {**described, "AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": "DISABLED"}}}


def idle_shutdown_details(domain: StudioDomain, apps: list[str], minutes: int) -> dict[str, Any]:
    """`change` (UpdateDomain: the domain's default settings of each app type in `apps`, copied as
    described, with idle shutdown on), `rollback` (the settings as they were), `risk` of a
    `studio-no-idle-shutdown` plan."""
    keys = [IDLE_SETTING_KEYS[a] for a in apps if a in IDLE_SETTING_KEYS]
    new = {k: _with_idle_shutdown(domain.app_settings.get(k) or {}, minutes) for k in keys}
    old = {k: _as_before(domain.app_settings.get(k) or {}) for k in keys}
    request = {"DomainId": domain.domain_id, "DefaultUserSettings": new}
    undo = {"DomainId": domain.domain_id, "DefaultUserSettings": old}
    names = " and ".join(apps)
    return {
        "change": [{"service": "sagemaker", "operation": "UpdateDomain", "params": request,
                    "purpose": f"turn on idle shutdown after {minutes} min for {names} apps of domain "
                               f"{domain.name} ({domain.domain_id}); every other app setting kept as described"}],
        "rollback": f"by hand: UpdateDomain {json.dumps(undo, sort_keys=True)} puts the settings back as they were",
        "waits_for": f"domain {domain.domain_id} InService",
        "risk": {"level": "low", "basis": [
            "it stops no app now: the domain's setting applies to apps created after it (AWS: \"the idle shutdown "
            "settings apply to all applications created in the domain\")",
            "an app is idle only without kernel or terminal sessions (JupyterLab) or without edits, views, terminal "
            "use, background processes, running kernels and unsaved work (Code Editor): a running job keeps it up",
            "apps on SageMaker Distribution images older than 2.0 (or custom images without the activity monitor "
            "extension) ignore it",
        ]},
    }
