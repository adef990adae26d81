"""Discover every SageMaker endpoint in a region, joined with its endpoint config and tags.

DescribeEndpoint has no instance type: it comes from DescribeEndpointConfig, which fails when the
config was deleted while the endpoint runs. Such an endpoint is still listed, marked not judged.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region
from auditor.models import AuditError, Endpoint, EndpointKind, InferenceComponent, Variant


@dataclass(frozen=True)
class Discovery:
    endpoints: tuple[Endpoint, ...]
    errors: tuple[AuditError, ...]


def discover_endpoints(sagemaker: BaseClient, region: str, max_workers: int = 8,
                       should_stop: Callable[[], bool] = lambda: False) -> Discovery:
    """List and describe every endpoint; one bad endpoint never aborts the region. Once
    `should_stop()` says so, the endpoints not yet described are left out."""
    try:
        names = [
            summary["EndpointName"]
            for page in sagemaker.get_paginator("list_endpoints").paginate(
                PaginationConfig={"PageSize": 100}
            )
            for summary in page.get("Endpoints", [])
        ]
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "sagemaker", "ListEndpoints", region)) from exc

    errors: list[AuditError] = []
    errors_lock = threading.Lock()
    tags_denied = threading.Event()

    def record(error: AuditError) -> None:
        with errors_lock:
            errors.append(error)

    def describe(name: str) -> Endpoint | None:
        if should_stop():
            return None
        return _describe_endpoint(sagemaker, region, name, record, tags_denied)

    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="discover") as pool:
        described = list(pool.map(describe, names))
    endpoints = tuple(e for e in described if e is not None)
    return Discovery(endpoints=endpoints, errors=tuple(errors))


def _describe_endpoint(
    sagemaker: BaseClient,
    region: str,
    name: str,
    record: Any,
    tags_denied: threading.Event,
) -> Endpoint | None:
    try:
        described = sagemaker.describe_endpoint(EndpointName=name)
    except botocore.exceptions.ClientError as exc:
        if is_fatal_for_region(exc):
            raise RegionAccessError(describe_client_error(exc, "sagemaker", "DescribeEndpoint", region)) from exc
        # Deleted between ListEndpoints and now: say so, carry on.
        record(AuditError(region, name, "discover",
                          describe_client_error(exc, "sagemaker", "DescribeEndpoint", region)))
        return None

    arn = described["EndpointArn"]
    status = described["EndpointStatus"]
    config_name = described.get("EndpointConfigName", "")
    running_variants = {v["VariantName"]: v for v in described.get("ProductionVariants", [])}
    not_judged: str | None = None
    config: dict[str, Any] = {}
    try:
        config = sagemaker.describe_endpoint_config(EndpointConfigName=config_name)
    except botocore.exceptions.ClientError as exc:
        if is_fatal_for_region(exc):
            raise RegionAccessError(
                describe_client_error(exc, "sagemaker", "DescribeEndpointConfig", region)
            ) from exc
        not_judged = f"endpoint config {config_name!r} was deleted: instance types unknown, not judged"
        record(AuditError(region, name, "discover", not_judged))

    variants = _join_variants(config.get("ProductionVariants", []), running_variants)
    kind = _endpoint_kind(config, described)
    if not_judged is None and status != "InService":
        reason = described.get("FailureReason")
        not_judged = (f"endpoint status is {status}{f' ({reason})' if reason else ''}: "
                      "only InService endpoints are judged")

    components: tuple[InferenceComponent, ...] = ()
    if _hosts_inference_components(config):
        components = _list_inference_components(sagemaker, region, name, record)

    return Endpoint(
        inference_components=components,
        account_id=arn.split(":")[4],
        region=region,
        name=name,
        arn=arn,
        status=status,
        kind=kind,
        created_at=described["CreationTime"],
        config_name=config_name,
        tags=_list_tags(sagemaker, region, name, arn, record, tags_denied),
        variants=variants,
        not_judged_reason=not_judged,
    )


def _join_variants(config_variants: list[dict[str, Any]], running: dict[str, dict[str, Any]]) -> tuple[Variant, ...]:
    """Instance type from the config; the count that runs now from the endpoint."""
    if not config_variants:
        # Config gone: only what DescribeEndpoint says is known.
        return tuple(
            Variant(name=n, instance_type=None, instance_count=int(v.get("CurrentInstanceCount", 0)))
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
            )
        )
    return tuple(variants)


def _hosts_inference_components(config: dict[str, Any]) -> bool:
    """Variants of an endpoint that hosts inference components name no model of their own."""
    variants = config.get("ProductionVariants", [])
    return bool(variants) and all(
        not v.get("ModelName") and v.get("InstanceType") for v in variants
    )


def _list_inference_components(
    sagemaker: BaseClient, region: str, endpoint: str, record: Any
) -> tuple[InferenceComponent, ...]:
    components = []
    try:
        for page in sagemaker.get_paginator("list_inference_components").paginate(EndpointNameEquals=endpoint):
            for summary in page.get("InferenceComponents", []):
                components.append(InferenceComponent(
                    name=summary["InferenceComponentName"],
                    variant=summary.get("VariantName", ""),
                    status=summary.get("InferenceComponentStatus", "Unknown"),
                ))
    except botocore.exceptions.ClientError as exc:
        if is_fatal_for_region(exc):
            raise RegionAccessError(
                describe_client_error(exc, "sagemaker", "ListInferenceComponents", region)
            ) from exc
        record(AuditError(region, endpoint, "discover",
                          describe_client_error(exc, "sagemaker", "ListInferenceComponents", region)))
    return tuple(_describe_inference_component(sagemaker, region, endpoint, c, record) for c in components)


def _describe_inference_component(
    sagemaker: BaseClient, region: str, endpoint: str, component: InferenceComponent, record: Any
) -> InferenceComponent:
    """Copies and per-copy compute requirements; without them the component is reported, not judged."""
    try:
        described = sagemaker.describe_inference_component(InferenceComponentName=component.name)
    except botocore.exceptions.ClientError as exc:
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


def _list_tags(
    sagemaker: BaseClient, region: str, name: str, arn: str, record: Any, tags_denied: threading.Event
) -> dict[str, str]:
    if tags_denied.is_set():
        return {}
    tags: dict[str, str] = {}
    try:
        for page in sagemaker.get_paginator("list_tags").paginate(ResourceArn=arn):
            tags.update({t["Key"]: t["Value"] for t in page.get("Tags", [])})
    except botocore.exceptions.ClientError as exc:
        message = describe_client_error(exc, "sagemaker", "ListTags", region)
        if is_fatal_for_region(exc):
            # Tags only label the report: report the missing permission once, keep auditing.
            if not tags_denied.is_set():
                tags_denied.set()
                record(AuditError(region, None, "discover", f"{message}: tags are missing from this report"))
        else:
            record(AuditError(region, name, "discover", message))
    return tags


def endpoint_age_days(endpoint: Endpoint, now: datetime) -> float:
    return (now - endpoint.created_at).total_seconds() / 86400
