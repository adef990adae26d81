"""Studio: every domain (ListDomains, DescribeDomain: the default idle shutdown of JupyterLab and
Code Editor apps), its spaces (ListSpaces, DescribeSpace: a space's own idle shutdown) and its
running apps (ListApps, then DescribeApp for the instance type, LastUserActivityTimestamp and
LastHealthCheckTimestamp)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region
from auditor.discover.arns import account_of
from auditor.kinds.workspaces.models import StudioApp, StudioDomain, StudioSpace
from auditor.models import AuditError

# The app types with an idle-shutdown setting (AppLifecycleManagement.IdleSettings).
IDLE_SETTING_APPS = {"JupyterLab": "JupyterLabAppSettings", "CodeEditor": "CodeEditorAppSettings"}
RUNNING_APPS = frozenset({"InService", "Pending"})


@dataclass(frozen=True)
class StudioDiscovery:
    domains: tuple[StudioDomain, ...]
    spaces: tuple[StudioSpace, ...]
    apps: tuple[StudioApp, ...]
    errors: tuple[AuditError, ...]


def discover_studio(sagemaker: BaseClient, region: str, max_workers: int = 8) -> StudioDiscovery:
    errors: list[AuditError] = []
    lock = threading.Lock()

    def listed(pages: Any, operation: str, key: str) -> list[dict[str, Any]]:
        try:
            return [item for page in pages() for item in page.get(key, [])]
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            raise RegionAccessError(describe_client_error(exc, "sagemaker", operation, region)) from exc

    def described(call: Any, operation: str, what: str) -> dict[str, Any] | None:
        try:
            result: dict[str, Any] = call()
            return result
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            if is_fatal_for_region(exc):
                raise RegionAccessError(describe_client_error(exc, "sagemaker", operation, region)) from exc
            with lock:
                errors.append(AuditError(region, what, "discover",
                                         describe_client_error(exc, "sagemaker", operation, region)))
            return None

    summaries = listed(lambda: sagemaker.get_paginator("list_domains").paginate(), "ListDomains", "Domains")
    domains: list[StudioDomain] = []
    spaces: list[StudioSpace] = []
    apps: list[StudioApp] = []

    def audit_domain(domain_id: str, pool: ThreadPoolExecutor) -> None:
        d = described(lambda: sagemaker.describe_domain(DomainId=domain_id), "DescribeDomain", domain_id)
        if d is None:
            return
        account = account_of(d.get("DomainArn", ""))
        defaults = d.get("DefaultUserSettings") or {}
        domains.append(StudioDomain(
            account, region, domain_id, d.get("DomainName", ""), d.get("Status", "Unknown"),
            {app: idle_minutes(defaults.get(key)) for app, key in IDLE_SETTING_APPS.items()},
            app_settings={key: dict(defaults[key]) for key in IDLE_SETTING_APPS.values()
                          if isinstance(defaults.get(key), dict)}))

        def space(s: dict[str, Any]) -> StudioSpace | None:
            found = described(lambda: sagemaker.describe_space(DomainId=domain_id, SpaceName=s["SpaceName"]),
                              "DescribeSpace", f"{domain_id}/{s['SpaceName']}")
            if found is None:
                return None
            settings = found.get("SpaceSettings") or {}
            app_type = settings.get("AppType")
            key = IDLE_SETTING_APPS.get(app_type or "")
            return StudioSpace(account, region, domain_id, s["SpaceName"], app_type,
                               idle_minutes(settings.get(key)) if key else None)

        def app(a: dict[str, Any]) -> StudioApp | None:
            owner = ({"SpaceName": a["SpaceName"]} if a.get("SpaceName")
                     else {"UserProfileName": a.get("UserProfileName", "")})
            found = described(lambda: sagemaker.describe_app(DomainId=domain_id, AppType=a["AppType"],
                                                             AppName=a["AppName"], **owner),
                              "DescribeApp", f"{domain_id}/{a['AppName']}")
            if found is None:
                return None
            spec = found.get("ResourceSpec") or a.get("ResourceSpec") or {}
            return StudioApp(
                account, region, domain_id, a["AppType"], a["AppName"], next(iter(owner.values())),
                found.get("Status", a.get("Status", "Unknown")), spec.get("InstanceType"),
                found.get("CreationTime") or a.get("CreationTime"),
                found.get("LastUserActivityTimestamp"), found.get("LastHealthCheckTimestamp"),
                owner_field=next(iter(owner)),
                resource_spec={str(k): str(v) for k, v in spec.items() if isinstance(v, str)})

        listed_spaces = listed(lambda: sagemaker.get_paginator("list_spaces").paginate(DomainIdEquals=domain_id),
                               "ListSpaces", "Spaces")
        spaces.extend(s for s in pool.map(space, listed_spaces) if s)
        listed_apps = listed(lambda: sagemaker.get_paginator("list_apps").paginate(DomainIdEquals=domain_id),
                             "ListApps", "Apps")
        apps.extend(a for a in pool.map(app, [a for a in listed_apps if a.get("Status") in RUNNING_APPS]) if a)

    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="studio") as pool:
        for summary in summaries:
            audit_domain(summary["DomainId"], pool)
    return StudioDiscovery(tuple(domains), tuple(spaces), tuple(apps), tuple(errors))


def idle_minutes(app_settings: dict[str, Any] | None) -> int | None:
    """The idle timeout an app's settings set, or None when idle shutdown is not enabled."""
    idle = ((app_settings or {}).get("AppLifecycleManagement") or {}).get("IdleSettings") or {}
    if idle.get("LifecycleManagement") == "DISABLED":
        return None
    minutes = idle.get("IdleTimeoutInMinutes")
    return int(minutes) if minutes else None
