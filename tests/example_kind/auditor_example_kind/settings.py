"""[models]: the example kind's config section (its `ResourceKind.settings`), read by the config
file's reader like every section: each key typed and bounded, one error line naming it."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.config import AuditConfig
from auditor.schema import setting
from auditor_example_kind.assessment import KEY


@dataclass(frozen=True)
class ModelsConfig:
    enabled: bool = setting(True, "audit SageMaker models (the example kind)")

    @classmethod
    def of(cls, config: AuditConfig) -> ModelsConfig:
        """[models] in `config` (the defaults where the file has none)."""
        return config.kinds.section(KEY, cls)
