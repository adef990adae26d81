"""[jobs]: the jobs kind's config section (its `ResourceKind.settings`), read by the config file's
reader like every section: each key typed and bounded, one error line naming it."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.config import SAVING, AuditConfig
from auditor.schema import PATTERN, setting


@dataclass(frozen=True)
class JobsConfig:
    enabled: bool = setting(True, "audit training and batch transform jobs too")
    spot_discount_percent: float = setting(70.0, "the Spot saving assumed for on-demand training", **SAVING)
    min_savings_usd: float = setting(1.0, "smaller Spot savings per run are not reported", minimum=0)
    experiment_prefixes: tuple[str, ...] = setting((), "job name prefixes that make an experiment", check=PATTERN)
    transform_min_hours: float = setting(1.0, "a recurring transform job this long is judged", minimum=0,
                                         maximum=24 * 365)
    transform_min_runs: int = setting(3, "runs of one name pattern that make it recurring", minimum=2,
                                      maximum=10000)

    @classmethod
    def of(cls, config: AuditConfig) -> JobsConfig:
        """[jobs] in `config` (the defaults where the file has none)."""
        return config.kinds.section("jobs", cls)
