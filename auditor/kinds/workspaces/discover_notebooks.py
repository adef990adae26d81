"""Notebook instances: ListNotebookInstances, then DescribeNotebookInstance (volume, accelerators),
ListTags, and DescribeNotebookInstanceLifecycleConfig once per lifecycle configuration (does its
OnStart script stop the instance when idle?)."""

from __future__ import annotations

import base64
import binascii
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import RegionAccessError, describe_client_error, is_fatal_for_region
from auditor.discover.arns import account_of
from auditor.kinds.workspaces.models import NotebookInstance
from auditor.models import AuditError

# What AWS's auto-stop sample (aws-samples/amazon-sagemaker-notebook-instance-lifecycle-config-samples,
# scripts/auto-stop-idle) and scripts like it contain: the script, or the StopNotebookInstance call.
IDLE_STOP = re.compile(r"autostop|auto-stop|auto_stop|stop[-_]notebook[-_]instance|StopNotebookInstance", re.I)
IDLE_TIME = re.compile(r"IDLE_TIME\s*=\s*(\d+)|--time\s+(\d+)")


@dataclass(frozen=True)
class NotebookDiscovery:
    notebooks: tuple[NotebookInstance, ...]
    errors: tuple[AuditError, ...]


def discover_notebooks(sagemaker: BaseClient, region: str, max_workers: int = 8) -> NotebookDiscovery:
    errors: list[AuditError] = []
    lock = threading.Lock()
    try:
        names = [n["NotebookInstanceName"]
                 for page in sagemaker.get_paginator("list_notebook_instances").paginate(
                     PaginationConfig={"PageSize": 100})
                 for n in page.get("NotebookInstances", [])]
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise RegionAccessError(describe_client_error(exc, "sagemaker", "ListNotebookInstances", region)) from exc

    def record(name: str | None, exc: Exception, operation: str) -> None:
        if is_fatal_for_region(exc):
            raise RegionAccessError(describe_client_error(exc, "sagemaker", operation, region)) from exc
        with lock:
            errors.append(AuditError(region, name, "discover",
                                     describe_client_error(exc, "sagemaker", operation, region)))

    def describe(name: str) -> NotebookInstance | None:
        try:
            d = sagemaker.describe_notebook_instance(NotebookInstanceName=name)
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            record(name, exc, "DescribeNotebookInstance")
            return None
        tags: dict[str, str] = {}
        try:
            tags = {t["Key"]: t.get("Value", "") for t in sagemaker.list_tags(ResourceArn=d["NotebookInstanceArn"])
                    .get("Tags", [])}
        except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
            record(name, exc, "ListTags")
        return _notebook(d, region, tags)

    with ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="notebooks") as pool:
        notebooks = [n for n in pool.map(describe, names) if n]
        configs = sorted({n.lifecycle_config for n in notebooks if n.lifecycle_config})
        scripts = dict(zip(configs, pool.map(lambda c: _lifecycle(sagemaker, c, region, record), configs),
                           strict=True))
    return NotebookDiscovery(
        tuple(replace(n, idle_stop=scripts[n.lifecycle_config][0], idle_stop_evidence=scripts[n.lifecycle_config][1])
              if n.lifecycle_config else n for n in notebooks),
        tuple(errors))


def _lifecycle(sagemaker: BaseClient, config: str, region: str, record: Any) -> tuple[bool | None, str]:
    try:
        d = sagemaker.describe_notebook_instance_lifecycle_config(NotebookInstanceLifecycleConfigName=config)
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        record(None, exc, "DescribeNotebookInstanceLifecycleConfig")
        return None, f"lifecycle configuration {config} could not be read"
    return idle_stop_in(d.get("OnStart", []), config)


def idle_stop_in(on_start: list[dict[str, Any]], config: str) -> tuple[bool, str]:
    """Whether an OnStart script stops the instance when idle, and what it says about it."""
    for hook in on_start:
        try:
            script = base64.b64decode(hook.get("Content", ""), validate=False).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            continue
        if IDLE_STOP.search(script):
            idle = IDLE_TIME.search(script)
            seconds = next((g for g in idle.groups() if g), None) if idle else None
            after = f" after {int(seconds) / 60:g} idle minutes" if seconds else ""
            return True, f"lifecycle configuration {config} stops it when idle{after}"
    return False, f"lifecycle configuration {config} has no idle-stop in its OnStart script"


def _notebook(d: dict[str, Any], region: str, tags: dict[str, str]) -> NotebookInstance:
    arn = d.get("NotebookInstanceArn", "")
    return NotebookInstance(
        account_id=account_of(arn),
        region=region,
        name=d["NotebookInstanceName"],
        arn=arn,
        status=d.get("NotebookInstanceStatus", "Unknown"),
        instance_type=d.get("InstanceType", ""),
        volume_size_gb=int(d.get("VolumeSizeInGB") or 5),
        lifecycle_config=d.get("NotebookInstanceLifecycleConfigName") or None,
        accelerator_types=tuple(d.get("AcceleratorTypes") or ()),
        created_at=d["CreationTime"],
        last_modified_at=d.get("LastModifiedTime") or d["CreationTime"],
        tags=tags,
    )
