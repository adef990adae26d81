"""Discover every SageMaker endpoint in a region, joined with its endpoint config and tags.

SageMaker Search returns endpoints 100 a page with their tags and running variants, which spares a
DescribeEndpoint and a ListTags per endpoint. The instance type comes from DescribeEndpointConfig,
which fails when the config was deleted while the endpoint runs: such an endpoint is still listed,
marked not judged. Configs never change once created, so their descriptions are kept between runs;
a kept description carries the format it was written in, and one in an older format (which left out
fields read since) is described again. The config's CreationTime (kept in its description) is when
the shapes the endpoint runs began: the analysis judges only the data measured since.

A config is read whole: production variants with their weights and managed instance scaling, its
MetricsConfig (whether per-instance and per-GPU series are published), and
shadow variants (billed instances that receive a copy of live traffic), which Search lists under
ShadowProductionVariants with their running counts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.config_cache import ConfigCache, MemoryConfigCache
from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region
from auditor.discover.arns import account_of
from auditor.kinds.endpoints.models import (
    Endpoint,
    EndpointKind,
    InferenceComponent,
    ManagedScaling,
    MetricsConfig,
    ModelNetwork,
    Variant,
)
from auditor.models import AuditError

# The layout of a kept config description; bumped whenever _describe_config keeps more, so that a
# description kept by an older version is described again instead of silently lacking the new fields.
CONFIG_FORMAT = 4  # 3: MetricsConfig kept; 4: the whole description and the config's tags kept
# What is kept of each production and shadow variant of a config.
_VARIANT_FIELDS = ("VariantName", "InstanceType", "InitialInstanceCount", "ModelName", "ServerlessConfig",
                   "InitialVariantWeight", "ManagedInstanceScaling")


@dataclass(frozen=True)
class Discovery:
    endpoints: tuple[Endpoint, ...]
    errors: tuple[AuditError, ...]


def discover_endpoints(sagemaker: BaseClient, region: str, max_workers: int = 8,
                       should_stop: Callable[[], bool] = lambda: False,
                       configs: ConfigCache | None = None) -> Discovery:
    """Every endpoint with its tags and running variants from Search (100 a page), joined with its
    endpoint config (DescribeEndpointConfig, once per config ever: `configs` keeps them). One bad
    endpoint never aborts the region; once `should_stop()` says so, configs not yet described are
    left out and their endpoints listed as not judged."""
    configs = configs or MemoryConfigCache()
    try:
        found = [
            result["Endpoint"]
            for page in sagemaker.get_paginator("search").paginate(
                Resource="Endpoint", PaginationConfig={"PageSize": 100}
            )
            for result in page.get("Results", [])
            if "Endpoint" in result
        ]
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "sagemaker", "Search", region)) from exc

    errors: list[AuditError] = []
    errors_lock = threading.Lock()

    def record(error: AuditError) -> None:
        with errors_lock:
            errors.append(error)

    wanted = sorted({(account_of(e["EndpointArn"]), e.get("EndpointConfigName", "")) for e in found})
    missing = [(account, name) for account, name in wanted
               if name and not _current(configs.get(account, region, name))]

    def describe(key: tuple[str, str]) -> None:
        account, name = key
        if should_stop():
            return
        described = _describe_config(sagemaker, region, name, record)
        if described is not None:
            configs.put(account, region, name, described)

    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="discover") as pool:
        list(pool.map(describe, missing))
    endpoints = tuple(_endpoint(sagemaker, region, e, configs, record) for e in found)
    return Discovery(endpoints=endpoints, errors=tuple(errors))


def _describe_config(sagemaker: BaseClient, region: str, name: str, record: Any) -> dict[str, Any] | None:
    """What the audit needs of a config (its variants, whether it is async); None if it is gone."""
    try:
        config = sagemaker.describe_endpoint_config(EndpointConfigName=name)
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        if is_fatal_for_region(exc):
            raise RegionAccessError(
                describe_client_error(exc, "sagemaker", "DescribeEndpointConfig", region)
            ) from exc
        if isinstance(exc, botocore.exceptions.BotoCoreError):  # no answer to read: say so
            record(AuditError(region, None, "discover",
                              f"{describe_client_error(exc, 'sagemaker', 'DescribeEndpointConfig', region)} ({name})"))
        return None  # deleted while its endpoints run: each of them says so
    return {
        "Format": CONFIG_FORMAT,
        # The whole description (JSON-safe): a plan's change copies the config and alters only the
        # variant it resizes. Its tags are not read here (one ListTags a config would be most of a
        # cold run's calls): `audit apply` copies them when it makes the copy.
        "Raw": json_safe({k: v for k, v in config.items() if k != "ResponseMetadata"}),
        "Tags": None,
        "ProductionVariants": [_kept(v) for v in config.get("ProductionVariants", [])],
        "ShadowProductionVariants": [_kept(v) for v in config.get("ShadowProductionVariants", [])],
        "AsyncInferenceConfig": bool(config.get("AsyncInferenceConfig")),
        "MetricsConfig": _kept_metrics_config(config.get("MetricsConfig")),
    }


def _kept_metrics_config(raw: Any) -> dict[str, Any] | None:
    """The MetricsConfig fields read (the raw API names: an older botocore may lack the shape, and
    the answer is read as data), each kept only with the type AWS documents for it."""
    if not isinstance(raw, dict):
        return None
    kept: dict[str, Any] = {k: raw[k] for k in ("EnableEnhancedMetrics", "EnableDetailedObservability")
                            if isinstance(raw.get(k), bool)}
    frequency = raw.get("MetricPublishFrequencyInSeconds")
    if isinstance(frequency, int) and not isinstance(frequency, bool):
        kept["MetricPublishFrequencyInSeconds"] = frequency
    return kept


def _metrics_config(kept: Any) -> MetricsConfig | None:
    if not isinstance(kept, dict):
        return None
    return MetricsConfig(
        enhanced_metrics=kept.get("EnableEnhancedMetrics") is True,
        detailed_observability=kept.get("EnableDetailedObservability"),
        publish_frequency_seconds=kept.get("MetricPublishFrequencyInSeconds"),
    )


def json_safe(value: Any) -> Any:
    """An API answer as JSON can hold it: timestamps as ISO 8601 text, bytes as text."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _kept(variant: dict[str, Any]) -> dict[str, Any]:
    return {k: variant[k] for k in _VARIANT_FIELDS if k in variant}


def _current(description: dict[str, Any] | None) -> bool:
    """A kept description in this version's format (an older one lacks shadows, weights, scaling)."""
    return description is not None and description.get("Format") == CONFIG_FORMAT


def _endpoint(sagemaker: BaseClient, region: str, found: dict[str, Any], configs: ConfigCache,
              record: Any) -> Endpoint:
    arn = found["EndpointArn"]
    name = found["EndpointName"]
    account = account_of(arn)
    status = found["EndpointStatus"]
    config_name = found.get("EndpointConfigName", "")
    running_variants = {v["VariantName"]: v for v in found.get("ProductionVariants", [])}
    running_shadows = {v["VariantName"]: v for v in found.get("ShadowProductionVariants") or []}
    kept = configs.get(account, region, config_name)
    config: dict[str, Any] = kept if kept is not None and _current(kept) else {}
    not_judged: str | None = None
    if kept is not None and not config:
        # Kept by an older version, and the run stopped before describing it again.
        not_judged = f"endpoint config {config_name!r} was not described in this run: not judged"
        record(AuditError(region, name, "discover", not_judged))
    elif not config:
        not_judged = f"endpoint config {config_name!r} was deleted: instance types unknown, not judged"
        record(AuditError(region, name, "discover", not_judged))
    config_created = _creation_time(config)
    if config and config_created is None and not_judged is None:
        # Which of the window's data its shapes served is unknown: judging all of it may judge an older shape.
        not_judged = f"endpoint config {config_name!r} states no CreationTime: not judged"
        record(AuditError(region, name, "discover", not_judged))
    variants = (_join_variants(config.get("ProductionVariants", []), running_variants)
                + _join_variants(config.get("ShadowProductionVariants", []), running_shadows, shadow=True))
    kind = _endpoint_kind(config, found)
    if not_judged is None and status != "InService":
        reason = found.get("FailureReason")
        not_judged = (f"endpoint status is {status}{f' ({reason})' if reason else ''}: "
                      "only InService endpoints are judged")
    components: tuple[InferenceComponent, ...] | None = ()
    if _hosts_inference_components(config):
        components = _list_inference_components(sagemaker, region, name, record)
    return Endpoint(
        inference_components=components or (),
        inference_components_listed=components is not None,
        account_id=account,
        region=region,
        name=name,
        arn=arn,
        status=status,
        kind=kind,
        created_at=found["CreationTime"],
        config_name=config_name,
        tags={t["Key"]: t["Value"] for t in found.get("Tags", [])},
        variants=variants,
        not_judged_reason=not_judged,
        last_modified_at=found.get("LastModifiedTime"),
        config_created_at=config_created,
        metrics_config=_metrics_config(config.get("MetricsConfig")),
        config_description=_copyable(config),
    )


def _creation_time(config: dict[str, Any]) -> datetime | None:
    """The config's CreationTime, kept as ISO 8601 text in its description; None if absent or unreadable."""
    raw = config.get("Raw")
    text = raw.get("CreationTime") if isinstance(raw, dict) else None
    if not isinstance(text, str):
        return None
    try:
        created = datetime.fromisoformat(text)
    except ValueError:
        return None
    return created if created.tzinfo is not None else created.replace(tzinfo=UTC)


def _copyable(config: dict[str, Any]) -> dict[str, Any] | None:
    """The config's description with its tags, for a plan's change to copy; None if not described."""
    raw = config.get("Raw")
    if not isinstance(raw, dict):
        return None
    return {**raw, "Tags": config.get("Tags")}


def _join_variants(config_variants: list[dict[str, Any]], running: dict[str, dict[str, Any]],
                   shadow: bool = False) -> tuple[Variant, ...]:
    """Instance type from the config; the count, weight and managed scaling that run now from the
    endpoint (the config's where the endpoint does not say)."""
    if not config_variants:
        # Config gone: only what Search says is known.
        return tuple(
            Variant(name=n, instance_type=None, instance_count=int(v.get("CurrentInstanceCount", 0)),
                    weight=_weight(v, {}), shadow=shadow, managed_scaling=_managed_scaling(v, {}))
            for n, v in running.items()
        )
    variants = []
    for cv in config_variants:
        rv = running.get(cv["VariantName"], {})
        serverless = cv.get("ServerlessConfig") or rv.get("CurrentServerlessConfig")
        count = rv.get("CurrentInstanceCount", cv.get("InitialInstanceCount", 0))
        variants.append(
            Variant(
                name=cv["VariantName"],
                instance_type=None if serverless else cv.get("InstanceType"),
                instance_count=0 if serverless else int(count or 0),
                serverless_memory_mb=serverless.get("MemorySizeInMB") if serverless else None,
                serverless_max_concurrency=serverless.get("MaxConcurrency") if serverless else None,
                weight=_weight(rv, cv),
                shadow=shadow,
                managed_scaling=None if serverless else _managed_scaling(rv, cv),
            )
        )
    return tuple(variants)


def _weight(running: dict[str, Any], config: dict[str, Any]) -> float | None:
    value = running.get("CurrentWeight", config.get("InitialVariantWeight"))
    return None if value is None else float(value)


def _managed_scaling(running: dict[str, Any], config: dict[str, Any]) -> ManagedScaling | None:
    """The endpoint's ManagedInstanceScaling (it can be updated after the config), else the config's."""
    scaling = running.get("ManagedInstanceScaling") or config.get("ManagedInstanceScaling") or {}
    if scaling.get("Status") != "ENABLED":
        return None

    def count(key: str) -> int | None:
        return None if scaling.get(key) is None else int(scaling[key])

    return ManagedScaling(count("MinInstanceCount"), count("MaxInstanceCount"))


def _hosts_inference_components(config: dict[str, Any]) -> bool:
    """Variants of an endpoint that hosts inference components name no model of their own."""
    variants = config.get("ProductionVariants", [])
    return bool(variants) and all(
        not v.get("ModelName") and v.get("InstanceType") for v in variants
    )


def _list_inference_components(
    sagemaker: BaseClient, region: str, endpoint: str, record: Any
) -> tuple[InferenceComponent, ...] | None:
    """None when they could not be listed (the error is recorded)."""
    components = []
    try:
        for page in sagemaker.get_paginator("list_inference_components").paginate(EndpointNameEquals=endpoint):
            for summary in page.get("InferenceComponents", []):
                components.append(InferenceComponent(
                    name=summary["InferenceComponentName"],
                    variant=summary.get("VariantName", ""),
                    status=summary.get("InferenceComponentStatus", "Unknown"),
                ))
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        if is_fatal_for_region(exc):
            raise RegionAccessError(
                describe_client_error(exc, "sagemaker", "ListInferenceComponents", region)
            ) from exc
        record(AuditError(region, endpoint, "discover",
                          describe_client_error(exc, "sagemaker", "ListInferenceComponents", region)))
        return None
    return tuple(_describe_inference_component(sagemaker, region, endpoint, c, record) for c in components)


def _describe_inference_component(
    sagemaker: BaseClient, region: str, endpoint: str, component: InferenceComponent, record: Any
) -> InferenceComponent:
    """Copies and per-copy compute requirements; without them the component is reported, not judged."""
    try:
        described = sagemaker.describe_inference_component(InferenceComponentName=component.name)
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        if is_fatal_for_region(exc):
            raise RegionAccessError(
                describe_client_error(exc, "sagemaker", "DescribeInferenceComponent", region)
            ) from exc
        record(AuditError(region, endpoint, "discover",
                          f"{describe_client_error(exc, 'sagemaker', 'DescribeInferenceComponent', region)}: "
                          f"component {component.name} not judged"))
        return component
    required = (described.get("Specification") or {}).get("ComputeResourceRequirements") or {}
    copies = (described.get("RuntimeConfig") or {}).get("CurrentCopyCount")

    def number(key: str) -> float | None:
        value = required.get(key)
        return None if value is None else float(value)

    return replace(
        component,
        copy_count=None if copies is None else int(copies),
        cpu_cores=number("NumberOfCpuCoresRequired"),
        accelerators=number("NumberOfAcceleratorDevicesRequired"),
        memory_mb=number("MinMemoryRequiredInMb"),
    )


def _endpoint_kind(config: dict[str, Any], described: dict[str, Any]) -> EndpointKind:
    variants = config.get("ProductionVariants") or described.get("ProductionVariants", [])
    if any(v.get("ServerlessConfig") or v.get("CurrentServerlessConfig") for v in variants):
        return EndpointKind.SERVERLESS
    if config.get("AsyncInferenceConfig"):
        return EndpointKind.ASYNC
    return EndpointKind.REAL_TIME


def single_model(endpoint: Endpoint) -> str | None:
    """The model of a single-model real-time endpoint on instances (one production variant, no
    shadow, no inference components, InService and judged); None for any other endpoint."""
    if (endpoint.kind is not EndpointKind.REAL_TIME or endpoint.status != "InService" or endpoint.not_judged_reason
            or endpoint.inference_components or len(endpoint.variants) != 1):
        return None
    variant = endpoint.variants[0]
    if variant.shadow or not variant.instance_type or variant.serverless_memory_mb:
        return None
    described = (endpoint.config_description or {}).get("ProductionVariants") or []
    models = [v.get("ModelName") for v in described if isinstance(v, dict)]
    return str(models[0]) if len(models) == 1 and isinstance(models[0], str) and models[0] else None


def describe_models(sagemaker: BaseClient, region: str, endpoints: list[Endpoint], max_workers: int = 8,
                    configs: ConfigCache | None = None
                    ) -> tuple[dict[tuple[str, str], ModelNetwork | str], list[AuditError]]:
    """Each single-model endpoint's model network (DescribeModel, once per model, `max_workers` at a
    time), by (account, endpoint name): its VPC config, network isolation and role, or why it could
    not be read. A model cannot be changed once created, so what was read is kept with its endpoint
    config's description in `configs` and not asked again. A model that cannot be described is never
    read as "no VPC": its reason comes back (with an error line), and consolidate-onto-components
    leaves its endpoint out. A denied call (or one AWS cannot be reached for) is said once for the
    region, and the models not yet read are not asked."""
    configs = configs or MemoryConfigCache()
    # (account, model) -> the first endpoint that runs it (its config keeps the answer)
    wanted: dict[tuple[str, str], Endpoint] = {}
    answers: dict[tuple[str, str], ModelNetwork | str] = {}
    for endpoint in endpoints:
        model = single_model(endpoint)
        if model is None or (endpoint.account_id, model) in wanted:
            continue
        wanted[(endpoint.account_id, model)] = endpoint
        kept = _kept_network(configs.get(endpoint.account_id, region, endpoint.config_name), model)
        if kept is not None:
            answers[(endpoint.account_id, model)] = kept
    errors: list[AuditError] = []
    lock = threading.Lock()
    stopped: list[str] = []

    def describe(key: tuple[str, str]) -> None:
        if stopped:
            return
        endpoint, model = wanted[key], key[1]
        answer, fatal = _describe_model(sagemaker, region, model)
        with lock:
            if isinstance(answer, str):
                if fatal and stopped:
                    return  # said once for the region
                errors.append(AuditError(region, None if fatal else endpoint.name, "discover", answer))
                if fatal:
                    stopped.append(answer)
            answers[key] = answer
        if isinstance(answer, ModelNetwork):
            _keep_network(configs, endpoint, region, model, answer)

    asked = sorted(k for k in wanted if k not in answers)
    if asked:
        describe(asked[0])  # alone first: a denied call is then made once, not once per worker
    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="models") as pool:
        list(pool.map(describe, asked[1:]))
    result: dict[tuple[str, str], ModelNetwork | str] = {}
    for endpoint in endpoints:
        model = single_model(endpoint)
        if model is not None:
            unread = stopped[0] if stopped else "DescribeModel was not called"
            result[(endpoint.account_id, endpoint.name)] = answers.get((endpoint.account_id, model)) or unread
    return result, errors


def _kept_network(description: dict[str, Any] | None, model: str) -> ModelNetwork | None:
    """The model network kept with a config's description (None: not kept, or for another model)."""
    kept = (description or {}).get("ModelNetwork")
    if not isinstance(kept, dict) or kept.get("ModelName") != model or "SingleContainer" not in kept:
        return None  # kept by a version that did not note its containers: described again
    return ModelNetwork(subnets=frozenset(kept.get("Subnets") or ()),
                        security_groups=frozenset(kept.get("SecurityGroupIds") or ()),
                        network_isolation=kept.get("EnableNetworkIsolation") is True,
                        execution_role=kept.get("ExecutionRoleArn"),
                        single_container=kept.get("SingleContainer") is True)


def _keep_network(configs: ConfigCache, endpoint: Endpoint, region: str, model: str, network: ModelNetwork) -> None:
    description = configs.get(endpoint.account_id, region, endpoint.config_name)
    if description is None or not _current(description):
        return
    configs.put(endpoint.account_id, region, endpoint.config_name, {**description, "ModelNetwork": {
        "ModelName": model, "Subnets": sorted(network.subnets), "SecurityGroupIds": sorted(network.security_groups),
        "EnableNetworkIsolation": network.network_isolation, "ExecutionRoleArn": network.execution_role,
        "SingleContainer": network.single_container}})


def _describe_model(sagemaker: BaseClient, region: str, model: str) -> tuple[ModelNetwork | str, bool]:
    """The model's network settings, or why they could not be read and whether the same call would
    fail for every model of the region (denied, AWS not answering)."""
    try:
        described = sagemaker.describe_model(ModelName=model)
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        fatal = is_fatal_for_region(exc)
        what = "the region's models" if fatal else f"model {model}"
        return (f"{describe_client_error(exc, 'sagemaker', 'DescribeModel', region)}: the network settings of "
                f"{what} are unknown, so consolidate-onto-components leaves {'them' if fatal else 'it'} out"), fatal
    vpc = described.get("VpcConfig") or {}
    role = described.get("ExecutionRoleArn")
    containers = [c for c in [described.get("PrimaryContainer"), *(described.get("Containers") or [])]
                  if isinstance(c, dict)]
    return ModelNetwork(
        subnets=frozenset(str(s) for s in vpc.get("Subnets") or ()),
        security_groups=frozenset(str(g) for g in vpc.get("SecurityGroupIds") or ()),
        network_isolation=described.get("EnableNetworkIsolation") is True,
        execution_role=str(role) if role else None,
        single_container=len(containers) == 1 and containers[0].get("Mode") != "MultiModel",
    ), False
