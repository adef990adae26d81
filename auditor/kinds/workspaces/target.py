"""The workspaces kind's apply targets.

- notebook-instance: DescribeNotebookInstance; unchanged = InService on the audited instance type;
  waits for Stopped.
- studio-app: DescribeApp (the DeleteApp call's keys); unchanged = InService; waits for Deleted.
- studio-domain: DescribeDomain (the UpdateDomain call's DomainId); unchanged = InService, idle
  shutdown still off for each app type the plan sets, and those app settings still the ones the plan
  copied (apart from the idle switch and timeout it sets): otherwise the update would overwrite a
  change made since; waits for InService with idle shutdown on for those app types.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from auditor.collect.session import AwsClients
from auditor.kinds.workspaces.discover_studio import IDLE_SETTING_APPS, idle_minutes
from auditor.text import one_line
from auditor.write.plan import PlanToApply
from auditor.write.target import Observed, Target, Waiting, poll


class NotebookTarget(Target):
    """A notebook instance stopped (StopNotebookInstance): its volume and files are kept."""

    noun = "notebook instance"
    reads = frozenset({("sagemaker", "DescribeNotebookInstance")})

    @staticmethod
    def audited_type(plan: PlanToApply) -> str | None:
        """The instance type the audit saw: a stop keeps it, so the proposed option names it too
        (a notebook has no variant, so `current` may not)."""
        kind = plan.current.get("instance_type") or plan.proposed.get("instance_type")
        return kind if isinstance(kind, str) and kind else None

    def plan_problem(self, plan: PlanToApply) -> str | None:
        if self.audited_type(plan) is None:
            return "it does not record the instance type it was audited on (current or proposed instance_type)"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        described = self.described(plan, "DescribeNotebookInstance",
                          lambda: api.describe_notebook_instance(NotebookInstanceName=plan.resource.name))
        return Observed(str(described.get("NotebookInstanceArn") or ""),
                        str(described.get("NotebookInstanceStatus") or ""), described)

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        name = one_line(plan.resource.name)
        audited = str(self.audited_type(plan))
        now = str(observed.described.get("InstanceType") or "")
        if observed.status != "InService":
            return f"notebook instance {name} is {one_line(observed.status)}, not InService as the audit saw it"
        if now != audited:
            return (f"notebook instance {name} changed since the audit: it runs {one_line(now)}, the plan was made on "
                    f"{one_line(audited)}; run the audit again")
        return None

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        api = clients.client("sagemaker", plan.resource.region)
        outcome, message, _ = poll(plan, Waiting(
            self.named(plan), "DescribeNotebookInstance",
            lambda: api.describe_notebook_instance(NotebookInstanceName=plan.resource.name), "NotebookInstanceStatus",
            done="Stopped", in_progress=frozenset({"Stopping", "InService"})), wait_minutes, sleep, clock)
        return outcome, message


_APP_KEYS = ("DomainId", "UserProfileName", "SpaceName", "AppType", "AppName")


class StudioAppTarget(Target):
    """A Studio app deleted (DeleteApp): the space (or user profile) and its storage are kept."""

    noun = "Studio app"
    reads = frozenset({("sagemaker", "DescribeApp")})

    @staticmethod
    def _keys(plan: PlanToApply) -> dict[str, Any]:
        calls = plan.calls_of("sagemaker", "DeleteApp")
        return {k: v for k, v in calls[0].params.items() if k in _APP_KEYS} if calls else {}

    def plan_problem(self, plan: PlanToApply) -> str | None:
        keys = self._keys(plan)
        if not {"DomainId", "AppType", "AppName"} <= set(keys) or not ({"UserProfileName", "SpaceName"} & set(keys)):
            return "its change has no DeleteApp naming the domain, the space or user profile, the app type and name"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        keys = self._keys(plan)
        described = self.described(plan, "DescribeApp", lambda: api.describe_app(**keys))
        return Observed(str(described.get("AppArn") or ""), str(described.get("Status") or ""), described)

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        if observed.status != "InService":
            return (f"Studio app {one_line(plan.resource.name)} is {one_line(observed.status)}, not InService as the "
                    "audit saw it")
        return None

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        api = clients.client("sagemaker", plan.resource.region)
        keys = self._keys(plan)
        outcome, message, _ = poll(plan, Waiting(
            self.named(plan), "DescribeApp", lambda: api.describe_app(**keys), "Status", done="Deleted",
            in_progress=frozenset({"Deleting", "InService"}), gone_is_done=True), wait_minutes, sleep, clock)
        return outcome, message


# The keys of IdleSettings an idle-shutdown plan sets (auditor/kinds/workspaces/change.py); every other
# setting of the app type is copied as DescribeDomain answered it for the audit.
_IDLE_SWITCH = ("LifecycleManagement", "IdleTimeoutInMinutes")


def _without_idle_switch(settings: dict[str, Any]) -> dict[str, Any]:
    """App settings without what the plan sets, and without the empty objects that leaves (an
    AppLifecycleManagement with nothing else in it is the same as none)."""
    lifecycle = dict(settings.get("AppLifecycleManagement") or {})
    idle = {k: v for k, v in (lifecycle.get("IdleSettings") or {}).items() if k not in _IDLE_SWITCH}
    lifecycle = {k: v for k, v in lifecycle.items() if k != "IdleSettings"} | ({"IdleSettings": idle} if idle else {})
    rest = {k: v for k, v in settings.items() if k != "AppLifecycleManagement"}
    return rest | ({"AppLifecycleManagement": lifecycle} if lifecycle else {})


class StudioDomainTarget(Target):
    """A Studio domain's idle shutdown turned on (UpdateDomain with the default settings of its
    JupyterLab and Code Editor apps, each copied as the audit described it, idle shutdown ENABLED)."""

    noun = "Studio domain"
    reads = frozenset({("sagemaker", "DescribeDomain")})  # its status and settings, before and after UpdateDomain

    @staticmethod
    def _update(plan: PlanToApply) -> tuple[str, dict[str, dict[str, Any]]]:
        """The domain id, and the app settings the UpdateDomain sets, by their key."""
        calls = plan.calls_of("sagemaker", "UpdateDomain")
        params = calls[0].params if calls else {}
        defaults = params.get("DefaultUserSettings")
        settings = {k: v for k, v in defaults.items() if k in IDLE_SETTING_APPS.values() and isinstance(v, dict)
                    } if isinstance(defaults, dict) else {}
        return str(params.get("DomainId") or ""), settings

    @staticmethod
    def _app(key: str) -> str:
        return next(app for app, setting in IDLE_SETTING_APPS.items() if setting == key)

    def plan_problem(self, plan: PlanToApply) -> str | None:
        domain, settings = self._update(plan)
        if not domain or not settings:
            return ("its change has no UpdateDomain naming the domain and the JupyterLab or Code Editor settings it "
                    "sets")
        if domain != plan.resource.name:
            return f"its UpdateDomain names domain {one_line(domain)}, the plan is for {one_line(plan.resource.name)}"
        return None

    def observe(self, clients: AwsClients, plan: PlanToApply) -> Observed:
        api = clients.client("sagemaker", plan.resource.region)
        domain, _ = self._update(plan)
        described = self.described(plan, "DescribeDomain", lambda: api.describe_domain(DomainId=domain))
        return Observed(str(described.get("DomainArn") or ""), str(described.get("Status") or ""), described)

    def changed(self, plan: PlanToApply, observed: Observed) -> str | None:
        name = one_line(plan.resource.name)
        if observed.status != "InService":
            return f"Studio domain {name} is {one_line(observed.status)}, not InService: nothing is changed while it is"
        _, settings = self._update(plan)
        now = observed.described.get("DefaultUserSettings") or {}
        for key, planned in sorted(settings.items()):
            value = now.get(key)
            current: dict[str, Any] = value if isinstance(value, dict) else {}
            minutes = idle_minutes(current)
            if minutes is not None:
                return (f"Studio domain {name} changed since the audit: idle shutdown of {self._app(key)} apps is on "
                        f"now ({minutes} min); run the audit again")
            if _without_idle_switch(current) != _without_idle_switch(planned):
                return (f"Studio domain {name} changed since the audit: its {key} are not the ones the plan copied "
                        "(the update would overwrite the change); run the audit again")
        return None

    def settle(self, clients: AwsClients, plan: PlanToApply, answers: list[dict[str, Any]], wait_minutes: float,
               sleep: Callable[[float], None], clock: Callable[[], float]) -> tuple[str, str]:
        api = clients.client("sagemaker", plan.resource.region)
        domain, settings = self._update(plan)
        outcome, message, described = poll(plan, Waiting(
            self.named(plan), "DescribeDomain", lambda: api.describe_domain(DomainId=domain), "Status",
            done="InService", in_progress=frozenset({"Updating", "Pending"})), wait_minutes, sleep, clock)
        if outcome != "applied" or described is None:
            return outcome, message
        now = described.get("DefaultUserSettings") or {}
        apps = [self._app(key) for key in sorted(settings)]
        off = [self._app(key) for key in sorted(settings) if idle_minutes(now.get(key)) is None]
        if off:
            return "failed", (f"plan {plan.id} failed: Studio domain {one_line(domain)} is InService, but idle "
                              f"shutdown of {' and '.join(off)} apps is not on")
        return "applied", (f"plan {plan.id} applied: Studio domain {one_line(domain)} is InService with idle shutdown "
                           f"on for {' and '.join(apps)} apps")


TARGETS: dict[str, Target] = {
    "notebook-instance": NotebookTarget(),
    "studio-app": StudioAppTarget(),
    "studio-domain": StudioDomainTarget(),
}
