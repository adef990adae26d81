"""[workspaces]: the workspaces kind's config section (its `ResourceKind.settings`), read by the
config file's reader like every section: each key typed and bounded, one error line naming it."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.config import AuditConfig
from auditor.schema import setting


@dataclass(frozen=True)
class WorkspacesConfig:
    notebooks: bool = setting(True, "audit notebook instances")
    studio: bool = setting(True, "audit Studio domains, spaces and apps")

    @classmethod
    def of(cls, config: AuditConfig) -> WorkspacesConfig:
        """[workspaces] in `config` (the defaults where the file has none)."""
        return config.kinds.section("workspaces", cls)
