"""Models of notebook instances and Studio domains, spaces and apps. Frozen like `auditor.models`;
nothing here talks to AWS."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class NotebookInstance:
    account_id: str
    region: str
    name: str
    arn: str
    status: str  # Pending | InService | Stopping | Stopped | Failed | Deleting | Updating
    instance_type: str
    volume_size_gb: int
    lifecycle_config: str | None  # NotebookInstanceLifecycleConfigName
    accelerator_types: tuple[str, ...]  # Elastic Inference (retired by AWS), as described
    created_at: datetime
    last_modified_at: datetime  # changes on create, start, stop and update; never on use
    tags: dict[str, str] = field(default_factory=dict)
    # Whether the lifecycle configuration's OnStart script stops the instance when idle;
    # None: no lifecycle configuration, or it could not be read.
    idle_stop: bool | None = None
    idle_stop_evidence: str = ""  # what the script says (the idle time), or why it could not be read


@dataclass(frozen=True)
class NotebookCost:
    notebook: NotebookInstance
    price_per_hour: float | None  # the instance's rate (see `price_basis`)
    compute_monthly_usd: float | None  # while InService: price x 730 h; 0 when stopped
    storage_monthly_usd: float | None  # the ML storage volume, billed whether running or not
    price_basis: str  # whose rate: "notebook" (its own) or "hosting" (the prices have no notebook rate)

    @property
    def monthly_cost_usd(self) -> float | None:
        if self.compute_monthly_usd is None and self.storage_monthly_usd is None:
            return None
        return round((self.compute_monthly_usd or 0.0) + (self.storage_monthly_usd or 0.0), 2)


@dataclass(frozen=True)
class StudioDomain:
    account_id: str
    region: str
    domain_id: str
    name: str
    status: str
    # The domain's default idle shutdown for JupyterLab / Code Editor apps (minutes); None: not set.
    idle_timeout_minutes: dict[str, int | None] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    # DescribeDomain's DefaultUserSettings.JupyterLabAppSettings / CodeEditorAppSettings as described,
    # by that key: an idle-shutdown change copies them and sets only AppLifecycleManagement.
    app_settings: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class StudioSpace:
    account_id: str
    region: str
    domain_id: str
    name: str
    app_type: str | None  # JupyterLab | CodeEditor | ...
    idle_timeout_minutes: int | None  # the space's own idle shutdown; None: not set


@dataclass(frozen=True)
class StudioApp:
    account_id: str
    region: str
    domain_id: str
    app_type: str  # JupyterLab | CodeEditor | KernelGateway | RStudioServerPro | JupyterServer ...
    app_name: str
    owner: str  # the space, or the user profile
    status: str
    instance_type: str | None  # ResourceSpec.InstanceType; system apps run on none that is billed
    created_at: datetime | None
    last_user_activity: datetime | None
    last_health_check: datetime | None
    # Whom the app belongs to, as DeleteApp and CreateApp name it: "SpaceName" (an app of a space)
    # or "UserProfileName" (a user's own app: Studio Classic, KernelGateway).
    owner_field: str = "UserProfileName"
    # DescribeApp's ResourceSpec (InstanceType, SageMakerImageArn, LifecycleConfigArn ...): what
    # CreateApp needs to start the same app again.
    resource_spec: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.domain_id}/{self.owner}/{self.app_type}/{self.app_name}"

    @property
    def user_activity(self) -> datetime | None:
        """The last user activity, unless it is only the last health check (which is no activity)."""
        if self.last_user_activity is None:
            return None
        if self.last_health_check is not None and self.last_user_activity == self.last_health_check:
            return None
        return self.last_user_activity


@dataclass(frozen=True)
class StudioAppCost:
    app: StudioApp
    price_per_hour: float | None
    monthly_usd: float | None  # while it runs: price x 730 h
    idle_hours: float | None  # since the last user activity (or since creation when there was none)
    price_basis: str = ""  # whose rate: "studio-<app type>" (its own) or "hosting" (the prices have none)


@dataclass(frozen=True)
class WorkspacesSection:
    notebooks: tuple[NotebookCost, ...] = ()
    domains: tuple[StudioDomain, ...] = ()
    spaces: tuple[StudioSpace, ...] = ()
    apps: tuple[StudioAppCost, ...] = ()
    storage_price_source: str = ""
