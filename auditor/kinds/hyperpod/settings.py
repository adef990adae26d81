"""[hyperpod]: the hyperpod kind's config section (its `ResourceKind.settings`), read by the config
file's reader like every section: each key typed and bounded, one error line naming it."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.config import AuditConfig
from auditor.schema import setting


@dataclass(frozen=True)
class HyperPodConfig:
    enabled: bool = setting(True, "audit SageMaker HyperPod clusters")

    @classmethod
    def of(cls, config: AuditConfig) -> HyperPodConfig:
        """[hyperpod] in `config` (the defaults where the file has none)."""
        return config.kinds.section("hyperpod", cls)
