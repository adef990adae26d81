"""SageMaker models as a resource kind registered from outside the auditor: discovered per region
(auditor_example_kind.discover), judged by its rule model-unused, its JSON section `models` and its
parts of the HTML, text and Markdown reports (templates/ in this package)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.collect.session import RegionAccessError
from auditor.kinds.base import Audience, AudienceOf, KindResult, Owned, RegionScope, ResourceKind
from auditor.models import AuditError, Window
from auditor_example_kind import IAM_ACTIONS
from auditor_example_kind.assessment import KEY, RESOURCE_TYPE, ModelsRegion
from auditor_example_kind.binding import BINDINGS
from auditor_example_kind.discover import Model, discover_models
from auditor_example_kind.evidence import EVIDENCE
from auditor_example_kind.rules import RULES
from auditor_example_kind.settings import ModelsConfig
from auditor_example_kind.target import TARGETS
from auditor_example_kind.verify import VERIFIERS, seen


@dataclass(frozen=True)
class ModelsSection:
    """The models of the audited regions."""

    models: tuple[Model, ...] = ()


def audit(scope: RegionScope) -> KindResult[ModelsSection]:
    try:
        found = discover_models(scope.clients.client("sagemaker", scope.region), scope.region)
    except RegionAccessError as exc:
        error = AuditError(scope.region, None, "discover", f"{exc.message} (models)")
        return KindResult(ModelsSection(), errors=(error,), fatal=(error,))
    findings = scope.judge(ModelsRegion(found.models, scope.now)) if found.models else []
    return KindResult(ModelsSection(found.models), tuple(findings), found.errors)


def merge(sections: Sequence[ModelsSection]) -> ModelsSection:
    return ModelsSection(tuple(m for s in sections for m in s.models))


def owned(section: ModelsSection) -> Iterable[Owned]:
    return (Owned(m.account_id, m.region, RESOURCE_TYPE, m.name, dict(m.tags)) for m in section.models)


def only(section: ModelsSection, audience_of: AudienceOf, audience: Audience) -> ModelsSection:
    return ModelsSection(tuple(m for m in section.models
                               if audience_of(m.account_id, m.region, RESOURCE_TYPE, m.name) == audience))


def to_dict(section: ModelsSection) -> dict[str, Any]:
    return {
        "summary": {"models": len(section.models),
                    "unused": sum(1 for m in section.models if m.users_known and not m.used_by),
                    "not_judged": sum(1 for m in section.models if not m.users_known)},
        "models": [{"account_id": m.account_id, "region": m.region, "name": m.name, "arn": m.arn,
                    "created": m.created.isoformat() if m.created else None, "image": m.image,
                    # null: a configuration or component of the region could not be read
                    "used_by": list(m.used_by) if m.users_known else None,
                    "tags": dict(m.tags)}
                   for m in section.models],
    }


def monthly_cost(_section: ModelsSection, _window: Window) -> float:
    """SageMaker bills nothing for a model itself (its artifacts' storage is S3's)."""
    return 0.0


KIND: ResourceKind[ModelsSection] = ResourceKind(
    key=KEY,
    title="Models",
    order=90,
    iam_actions=frozenset(IAM_ACTIONS),
    enabled=lambda config: ModelsConfig.of(config).enabled,
    audit=audit,
    empty=ModelsSection(),
    merge=merge,
    to_dict=to_dict,
    owned=owned,
    only=only,
    monthly_cost=monthly_cost,
    # "<package>:<file>": a template in this package's templates/ directory.
    templates={fmt: f"auditor_example_kind:kind_models.{ext}.j2"
               for fmt, ext in (("html", "html"), ("text", "txt"), ("markdown", "md"))},
    rules=RULES,
    settings={KEY: ModelsConfig},
    # Its write side: apply deletes a model (target, binding, fresh evidence), the next run verifies it.
    targets=TARGETS,
    bindings=BINDINGS,
    evidence=EVIDENCE,
    verifiers=VERIFIERS,
    seen=seen,
)
