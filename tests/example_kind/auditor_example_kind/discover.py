"""The models of a region and what names them: ListModels (paged) and DescribeModel per model, every
endpoint configuration's variants (ListEndpointConfigs, DescribeEndpointConfig) and every inference
component's specification (ListInferenceComponents, DescribeInferenceComponent), and each model's
tags (ListTags).

A refusal (AccessDenied) stops the kind in the region with one line naming the call: a model whose
users cannot all be read is never called unused. A model or configuration deleted between the
list and its description is an error line of its own; its users are then not known whole, so the
region's models are listed but not judged.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region
from auditor.models import AuditError

PAGE_SIZE = 100  # ListModels, ListEndpointConfigs, ListInferenceComponents: MaxResults 1-100
_CALL_ERRORS = (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError)


@dataclass(frozen=True)
class Model:
    account_id: str
    region: str
    name: str
    arn: str
    created: datetime | None
    image: str | None  # the primary (or first) container's image
    # What names it: endpoint configurations ("config/<name>") and inference components ("component/<name>").
    used_by: tuple[str, ...]
    users_known: bool  # False: a configuration or component of its region could not be read
    tags: tuple[tuple[str, str], ...] = ()
    # The CreateModel request that makes it again (JSON; its rollback), from DescribeModel's answer.
    definition: str = "{}"


@dataclass(frozen=True)
class ModelDiscovery:
    models: tuple[Model, ...]
    errors: tuple[AuditError, ...]


def _account(arn: str) -> str:
    parts = arn.split(":")
    return parts[4] if len(parts) > 5 else ""


def _time(value: object) -> datetime | None:
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _image(described: Mapping[str, Any]) -> str | None:
    containers = [described.get("PrimaryContainer") or {}, *(described.get("Containers") or [])]
    return next((str(c["Image"]) for c in containers if c.get("Image")), None)


# DescribeModel's keys that CreateModel takes back as they are.
_DEFINITION_KEYS = ("ModelName", "PrimaryContainer", "Containers", "InferenceExecutionConfig", "ExecutionRoleArn",
                    "VpcConfig", "EnableNetworkIsolation")


def _definition(described: Mapping[str, Any]) -> str:
    return json.dumps({k: described[k] for k in _DEFINITION_KEYS if described.get(k) not in (None, [], {})},
                      sort_keys=True, default=str)


def _pages(sagemaker: BaseClient, operation: str, key: str, region: str) -> list[Mapping[str, Any]]:
    try:
        return [item for page in sagemaker.get_paginator(operation).paginate(PaginationConfig={"PageSize": PAGE_SIZE})
                for item in page.get(key, [])]
    except _CALL_ERRORS as exc:
        api = "".join(part.title() for part in operation.split("_"))
        raise RegionAccessError(describe_client_error(exc, "sagemaker", api, region)) from exc


def _config_models(sagemaker: BaseClient, name: str) -> list[str]:
    config = sagemaker.describe_endpoint_config(EndpointConfigName=name)
    variants = [*config.get("ProductionVariants", []), *config.get("ShadowProductionVariants", [])]
    return [str(v["ModelName"]) for v in variants if v.get("ModelName")]


def _component_models(sagemaker: BaseClient, name: str) -> list[str]:
    model = (sagemaker.describe_inference_component(InferenceComponentName=name).get("Specification") or {}).get(
        "ModelName")
    return [str(model)] if model else []


# What may name a model: (list call, its list key, its name key, the description, the user's prefix, read).
_USERS = (
    ("list_endpoint_configs", "EndpointConfigs", "EndpointConfigName", "DescribeEndpointConfig", "config",
     _config_models),
    ("list_inference_components", "InferenceComponents", "InferenceComponentName", "DescribeInferenceComponent",
     "component", _component_models),
)


def _users(sagemaker: BaseClient, region: str) -> tuple[dict[str, list[str]], list[AuditError]]:
    """Each model's users, by model name; the errors of descriptions that failed (the users are
    then not known whole)."""
    users: dict[str, list[str]] = defaultdict(list)
    errors: list[AuditError] = []
    for operation, key, name_key, describe, prefix, read in _USERS:
        for summary in _pages(sagemaker, operation, key, region):
            name = str(summary[name_key])
            try:
                named = read(sagemaker, name)
            except _CALL_ERRORS as exc:
                message = describe_client_error(exc, "sagemaker", describe, region)
                if is_fatal_for_region(exc):
                    raise RegionAccessError(message) from exc
                errors.append(AuditError(region, name, "discover", f"{message} (models not judged)"))
                continue
            for model_name in named:
                users[model_name].append(f"{prefix}/{name}")
    return users, errors


def discover_models(sagemaker: BaseClient, region: str) -> ModelDiscovery:
    """Every model of the region with what names it. RegionAccessError when the region refuses a
    list or description."""
    summaries = _pages(sagemaker, "list_models", "Models", region)
    users, errors = _users(sagemaker, region)
    users_known = not errors  # a user that could not be read may name any model
    models: list[Model] = []
    for summary in summaries:
        name, arn = str(summary["ModelName"]), str(summary["ModelArn"])
        operation = "DescribeModel"
        try:
            described = sagemaker.describe_model(ModelName=name)
            operation = "ListTags"
            tags = sagemaker.list_tags(ResourceArn=arn).get("Tags", [])
        except _CALL_ERRORS as exc:
            message = describe_client_error(exc, "sagemaker", operation, region)
            if is_fatal_for_region(exc):
                raise RegionAccessError(message) from exc
            errors.append(AuditError(region, name, "discover", message))
            continue
        models.append(Model(
            account_id=_account(arn), region=region, name=name, arn=arn,
            created=_time(described.get("CreationTime") or summary.get("CreationTime")),
            image=_image(described), used_by=tuple(sorted(users.get(name, ()))), users_known=users_known,
            tags=tuple(sorted((str(t["Key"]), str(t.get("Value", ""))) for t in tags)),
            definition=_definition(described)))
    return ModelDiscovery(tuple(models), tuple(errors))
