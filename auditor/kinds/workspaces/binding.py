"""Every call of a notebook, Studio app or Studio domain plan names the plan's own resource
(auditor.act.binding runs these checks): StopNotebookInstance its notebook instance, DeleteApp its
app (domain/space or user profile/type/name), UpdateDomain its domain and only the app settings the
plan copies (JupyterLab's and Code Editor's)."""

from __future__ import annotations

from typing import Any

from auditor.kinds.workspaces.change import IDLE_SETTING_KEYS
from auditor.text import one_line
from auditor.write.binding import CallBinding, names
from auditor.write.plan import PlanToApply


def _notebook_call(plan: PlanToApply, operation: str, params: dict[str, Any]) -> str | None:
    return names(params.get("NotebookInstanceName"), plan.resource.name, "notebook instance")


def _app_call(plan: PlanToApply, operation: str, params: dict[str, Any]) -> str | None:
    owner = params.get("SpaceName") or params.get("UserProfileName")
    name = f"{params.get('DomainId')}/{owner}/{params.get('AppType')}/{params.get('AppName')}"
    if params.get("SpaceName") and params.get("UserProfileName"):
        return "names both a space and a user profile"
    return names(name, plan.resource.name, "app")


def _domain_call(plan: PlanToApply, operation: str, params: dict[str, Any]) -> str | None:
    return names(params.get("DomainId"), plan.resource.name, "domain")


def _domain_content(plan: PlanToApply, index: int, operation: str, params: dict[str, Any]) -> str | None:
    if operation == "UpdateDomain":
        settings = params.get("DefaultUserSettings")
        keys = set(settings) if isinstance(settings, dict) else {"?"}
        extra = sorted(keys - set(IDLE_SETTING_KEYS.values()))
        if extra:
            return f"sets DefaultUserSettings.{', '.join(one_line(str(k)) for k in extra)}: the plan sets only " \
                   f"{' and '.join(sorted(IDLE_SETTING_KEYS.values()))}"
    return None


BINDINGS: dict[str, CallBinding] = {
    "notebook-instance": CallBinding(frozenset({("sagemaker", "StopNotebookInstance")}), _notebook_call,
                                     {"StopNotebookInstance": frozenset({"NotebookInstanceName"})}),
    "studio-app": CallBinding(frozenset({("sagemaker", "DeleteApp")}), _app_call, {
        "DeleteApp": frozenset({"DomainId", "SpaceName", "UserProfileName", "AppType", "AppName"})}),
    "studio-domain": CallBinding(frozenset({("sagemaker", "UpdateDomain")}), _domain_call,
                                 {"UpdateDomain": frozenset({"DomainId", "DefaultUserSettings"})}, _domain_content),
}
