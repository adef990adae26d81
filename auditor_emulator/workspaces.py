"""Notebook instances and processing jobs seeded into the emulator (the demo's, the tests', the
bench's). moto 5.2.5 implements notebook instances, their lifecycle configurations and processing
jobs, but not Studio apps or spaces (ListApps, DescribeApp, ListSpaces): Studio is not seeded here
and is tested with botocore's Stubber.

What the API cannot set is adjusted in the emulator's own state: a notebook's status and times
(moto stamps it InService "now"), and a processing job's resources and times (moto keeps no
ProcessingResources and finishes the job at once). Notebook instances publish no metrics, so none
are seeded for them; processing hosts publish to /aws/sagemaker/ProcessingJobs like training hosts.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import numpy as np

from auditor.catalog import Catalog, load_catalog
from auditor_emulator.fleet import Load, _host_datums
from auditor_emulator.server import Emulator

ROLE = "arn:aws:iam::123456789012:role/sagemaker-execution"
# The OnStart of AWS's auto-stop-idle sample, as teams paste it into a lifecycle configuration.
AUTOSTOP_ON_START = """#!/bin/bash
set -e
IDLE_TIME=3600
wget https://raw.githubusercontent.com/aws-samples/amazon-sagemaker-notebook-instance-lifecycle-config-samples/master/scripts/auto-stop-idle/autostop.py
CRON="*/5 * * * * /usr/bin/python $PWD/autostop.py --time $IDLE_TIME --ignore-connections"
(crontab -l 2>/dev/null; echo "$CRON") | crontab -
"""
CONDA_ON_START = """#!/bin/bash
sudo -u ec2-user -i <<'PIP'
pip install --quiet pandas==2.2.2
PIP
"""


@dataclass(frozen=True)
class NotebookSpec:
    name: str
    instance_type: str = "ml.t3.medium"
    status: str = "InService"
    volume_gb: int = 5
    on_start: str | None = None  # a lifecycle configuration with this OnStart script
    age_days: float = 60.0
    modified_days_ago: float = 1.0  # the last start, stop or update
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProcessingSpec:
    name: str
    instance_type: str = "ml.m5.xlarge"
    count: int = 1
    seconds: int = 3600
    ended_hours_ago: float = 24.0
    image: str = "683313688378.dkr.ecr.us-east-1.amazonaws.com/sagemaker-scikit-learn:1.2-1-cpu-py3"
    cpu: Load | None = field(default_factory=lambda: Load(50, 0, 3))
    memory: Load | None = field(default_factory=lambda: Load(40, 0, 2))


def demo_notebooks() -> list[NotebookSpec]:
    team = lambda owner: {"owner": owner}  # noqa: E731
    return [
        # A V100 notebook running for three weeks without a stop, and no auto-stop.
        NotebookSpec("cv-research-gpu", "ml.p3.2xlarge", volume_gb=100, modified_days_ago=23,
                     tags=team("vision@example.com")),
        # Auto-stop from AWS's sample: restarted yesterday, nothing to say.
        NotebookSpec("analytics-scratch", "ml.t3.medium", volume_gb=20, on_start=AUTOSTOP_ON_START,
                     modified_days_ago=0.5, tags=team("finance@example.com")),
        # A lifecycle configuration that installs packages but never stops the instance.
        NotebookSpec("feature-eng-m5", "ml.m5.xlarge", volume_gb=50, on_start=CONDA_ON_START, modified_days_ago=2,
                     tags=team("recsys@example.com")),
        # Stopped: only its volume costs; it still has no auto-stop for when it runs.
        NotebookSpec("old-prototype", "ml.t2.medium", status="Stopped", volume_gb=10, modified_days_ago=40,
                     tags=team("growth@example.com")),
    ]


def demo_processing() -> list[ProcessingSpec]:
    return [
        # A nightly feature build: 4 hours on 2 CPU-bound instances.
        *(ProcessingSpec(f"feature-build-2026-11-{day:02d}", "ml.m5.2xlarge", count=2, seconds=4 * 3600,
                         ended_hours_ago=24 * (6 - i) + 3, cpu=Load(90, 0, 2))
          for i, day in enumerate(range(23, 30))),
        # A weekly evaluation on a 16-vCPU instance that keeps about one and a half of them busy.
        *(ProcessingSpec(f"model-eval-w{week}", "ml.c5.4xlarge", seconds=2 * 3600, ended_hours_ago=24 * 7 * i + 10,
                         cpu=Load(9, 0, 1), memory=Load(12, 0, 1))
          for i, week in enumerate((48, 47))),
    ]


def seed_workspaces(
    emulator: Emulator,
    notebooks: Iterable[NotebookSpec],
    processing: Iterable[ProcessingSpec],
    now: datetime,
    region: str = "us-east-1",
    seed: int = 11,
    catalog: Catalog | None = None,
) -> None:
    catalog = catalog or load_catalog()
    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=region)
    sagemaker = session.client("sagemaker", endpoint_url=emulator.url)
    backend = emulator.backend("sagemaker", region)
    naive_now = now.astimezone(UTC).replace(tzinfo=None)  # the emulator keeps naive UTC times
    configs: set[str] = set()
    for spec in notebooks:
        request: dict[str, Any] = {"NotebookInstanceName": spec.name, "InstanceType": spec.instance_type,
                                   "RoleArn": ROLE, "VolumeSizeInGB": spec.volume_gb,
                                   "Tags": [{"Key": k, "Value": v} for k, v in spec.tags.items()]}
        if spec.on_start is not None:
            # One configuration per script, shared by the notebooks that use it (as teams do).
            config = f"lcc-{hashlib.sha256(spec.on_start.encode()).hexdigest()[:12]}"
            if config not in configs:
                sagemaker.create_notebook_instance_lifecycle_config(
                    NotebookInstanceLifecycleConfigName=config,
                    OnStart=[{"Content": base64.b64encode(spec.on_start.encode()).decode()}])
                configs.add(config)
            request["LifecycleConfigName"] = config
        sagemaker.create_notebook_instance(**request)
        notebook = backend.notebook_instances[spec.name]
        notebook.status = spec.status
        notebook.creation_time = naive_now - timedelta(days=spec.age_days)
        notebook.last_modified_time = naive_now - timedelta(days=spec.modified_days_ago)
    rng = np.random.default_rng(seed)
    datums: list[dict[str, Any]] = []
    for job in processing:
        resources = {"ClusterConfig": {"InstanceType": job.instance_type, "InstanceCount": job.count,
                                       "VolumeSizeInGB": 30}}
        sagemaker.create_processing_job(
            ProcessingJobName=job.name, RoleArn=ROLE, AppSpecification={"ImageUri": job.image},
            ProcessingResources=resources, StoppingCondition={"MaxRuntimeInSeconds": 86400},
        )
        fake = backend.processing_jobs[job.name]
        end = naive_now - timedelta(hours=job.ended_hours_ago)
        start = end - timedelta(seconds=job.seconds)
        fake.creation_time = start - timedelta(minutes=2)
        fake.processing_start_time, fake.processing_end_time, fake.last_modified_time = start, end, end
        fake.processing_resources = resources  # moto keeps none
        shape = catalog.shape(job.instance_type)
        for host in range(1, job.count + 1):
            datums += _host_datums(f"{job.name}/algo-{host}", start, job.seconds, shape, rng,
                                   (("CPUUtilization", job.cpu), ("MemoryUtilization", job.memory)))
    emulator.publish_metrics("/aws/sagemaker/ProcessingJobs", datums, region)


def synthetic_notebooks(count: int, configs: int = 5) -> list[NotebookSpec]:
    """For the bench: `count` notebook instances sharing `configs` lifecycle configurations (a third
    have none), mixed types and states."""
    types = ("ml.t3.medium", "ml.t3.large", "ml.m5.xlarge", "ml.c5.xlarge", "ml.p3.2xlarge")
    return [NotebookSpec(f"nb-{i:04d}", types[i % len(types)], status="Stopped" if i % 4 == 3 else "InService",
                         volume_gb=5 + 5 * (i % 10), modified_days_ago=float(i % 30),
                         on_start=None if i % 3 == 0 else (AUTOSTOP_ON_START if i % 2 else CONDA_ON_START)
                         + f"# variant {i % configs}\n",
                         tags={"owner": f"team-{i % 7}@example.com"})
            for i in range(count)]


def synthetic_processing(count: int) -> list[ProcessingSpec]:
    """For the bench: `count` processing runs, nightly patterns of five runs each."""
    return [ProcessingSpec(f"etl-{i // 5:03d}-run-{i % 5}", "ml.m5.xlarge", seconds=1800 + 60 * (i % 30),
                           ended_hours_ago=24.0 * (i % 5) + 2 + (i // 5) % 20, cpu=Load(30 + (i % 60), 0, 2))
            for i in range(count)]
