"""model-unused: a model that no endpoint configuration and no inference component names, older
than `min_age_days`. SageMaker bills nothing for the model itself (its artifacts are S3's), so the
finding saves no money: it names clutter to delete, and is never called unused when a
configuration or component of its region could not be read. Its plan: DeleteModel, undone by
CreateModel with the definition DescribeModel gave (the artifacts in S3 are not touched)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from auditor.analyse.rules.base import CollectionRule, RuleSettings, settings_of
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.models import Finding, Recommendation, Severity
from auditor.schema import setting
from auditor_example_kind.assessment import KEY, RESOURCE_TYPE, ModelsRegion, age_days
from auditor_example_kind.discover import Model


@dataclass(frozen=True)
class ModelUnusedSettings(RuleSettings):
    min_age_days: float = setting(30.0, "a model younger than this is not judged (it may be about to be deployed)",
                                  minimum=0, maximum=3650)


def delete_details(model: Model, age: float) -> dict[str, Any]:
    """The recommendation's details: the change (DeleteModel), its rollback and its risk."""
    return {
        "advice": f"delete model {model.name}",
        # The model the audit saw: apply refuses one made again since (another CreationTime).
        "created": model.created.isoformat() if model.created else None,
        "change": [{"service": "sagemaker", "operation": "DeleteModel", "params": {"ModelName": model.name},
                    "purpose": f"delete model {model.name} (nothing names it)"}],
        "rollback": f"CreateModel {model.definition} makes it again (its artifacts in S3 are not deleted)",
        "risk": {"level": "low", "basis": [
            f"no endpoint configuration or inference component of {model.region} named it at the audit",
            f"created {age:.0f} days ago",
            "a pipeline or transform job that creates from it by name would fail until it is made again"]},
    }


def check(region: ModelsRegion, _catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    min_age = settings_of(RULE, config).min_age_days
    for model in region.models:
        age = age_days(model, region.now)
        if model.used_by or not model.users_known or age is None or age < min_age:
            continue
        finding = RULE.finding(
            model, None,
            f"Model {model.name} is named by no endpoint configuration and no inference component "
            f"({age:.0f} days old).",
            {"model_arn": model.arn, "age_days": round(age, 1), "image": model.image, "min_age_days": min_age})
        # Nothing to save: SageMaker bills nothing for a model itself.
        yield replace(finding, recommendation=Recommendation("delete-model", None, 0, 0.0, 0.0,
                                                             delete_details(model, age)))


RULE = CollectionRule(
    assessment=ModelsRegion,
    id="model-unused",
    title="Model no endpoint uses",
    severity=Severity.INFO,
    remediation="Delete the model (DeleteModel) once no pipeline or transform job creates from it; its artifacts "
                "in S3 stay.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DeleteModel.html",
    judges=frozenset(),
    kind=KEY,
    resource_type=RESOURCE_TYPE,
    settings=ModelUnusedSettings,
    threshold_field="min_age_days",
    check=check,
)
