"""Shared fixtures: one local AWS emulator (a moto server over HTTP) for the whole session."""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import jsonschema
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Message
from typer.testing import CliRunner

from auditor.act.plan import ApplyRefused
from auditor.cli import app
from auditor.config import ApplyConfig, AuditConfig, AwsConfig, HistoryConfig
from auditor.models import Plan
from auditor.report import document as document_module
from auditor.report.document import report_schema
from auditor.tasks.audit import deliver_outcome, execute_audit
from auditor_emulator.fleet import demo_fleet, demo_jobs, seed_fleet, seed_jobs
from auditor_emulator.hyperpod import demo_clusters, seed_hyperpod
from auditor_emulator.server import Emulator
from auditor_emulator.workspaces import demo_notebooks, demo_processing, seed_workspaces


@pytest.fixture(scope="session")
def emulator() -> Iterator[Emulator]:
    """One per process: under pytest-xdist each worker has its own, on a free loopback port."""
    with Emulator() as emu:
        untraced_requests(emu)
        yield emu


def untraced_requests(emulator: Emulator) -> None:
    """The emulator answers each connection in a thread of its own, which coverage (`make test`) would
    trace as it traces every thread: moto and the emulator behind the API are not the package under
    measurement (pyproject omits auditor_emulator/), and tracing them made the suite half as slow again."""
    server = emulator._server._server  # moto's ThreadedMotoServer holds werkzeug's threading server
    answer = server.process_request_thread

    def untraced(request: Any, client_address: Any) -> None:
        sys.settrace(None)
        answer(request, client_address)

    server.process_request_thread = untraced


@pytest.fixture(autouse=True)
def isolated_data_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """History and outbox default to the user's data directory: never the real one in tests."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data-home")))


def point_boto3_at(emulator: Emulator, mp: pytest.MonkeyPatch, tmp_home: str) -> None:
    for key, value in emulator.env().items():
        mp.setenv(key, value)
    mp.delenv("AWS_PROFILE", raising=False)
    # No user config or credentials files may leak into the tests.
    mp.setenv("AWS_CONFIG_FILE", f"{tmp_home}/aws-config")
    mp.setenv("AWS_SHARED_CREDENTIALS_FILE", f"{tmp_home}/aws-credentials")
    mp.setenv("XDG_DATA_HOME", f"{tmp_home}/data")


@contextlib.contextmanager
def seeded_emulator(emulator: Emulator, home: Path, seed: Callable[[Emulator], None]) -> Iterator[Path]:
    """For module-scoped fixtures: the emptied emulator, seeded once, with boto3 pointed at it and
    `home` as the working directory (no ./auditor.toml of the repository is read)."""
    with pytest.MonkeyPatch.context() as mp:
        emulator.reset()
        point_boto3_at(emulator, mp, str(home))
        mp.chdir(home)
        seed(emulator)
        yield home


def audit_json(home: Path) -> dict:
    """What `audit run --format json --no-history` reports, run in `home` against the emulator."""
    out = home / "report.json"
    result = CliRunner().invoke(app, ["run", "--format", "json", "--output", str(out), "--no-history"])
    assert result.exit_code == 0, result.output
    return check_report_json(json.loads(out.read_text()))


# The demo's fleets of each kind, seeded once for a module that asks (see `seeded_emulator`).

@pytest.fixture(scope="module")
def jobs_home(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    training, transform = demo_jobs()
    with seeded_emulator(emulator, tmp_path_factory.mktemp("jobs"),
                         lambda emu: seed_jobs(emu, training, transform, now=utc_now())) as home:
        yield home


@pytest.fixture(scope="module")
def workspaces_home(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with seeded_emulator(emulator, tmp_path_factory.mktemp("workspaces"),
                         lambda emu: seed_workspaces(emu, demo_notebooks(), demo_processing(), now=utc_now())) as home:
        yield home


@pytest.fixture(scope="module")
def hyperpod_home(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with seeded_emulator(emulator, tmp_path_factory.mktemp("hyperpod"),
                         lambda emu: seed_hyperpod(emu, demo_clusters(), utc_now())) as home:
        yield home


@pytest.fixture
def aws(emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path) -> Emulator:
    """An emptied emulator that boto3 reaches through AWS_ENDPOINT_URL."""
    emulator.reset()
    point_boto3_at(emulator, monkeypatch, str(tmp_path))
    return emulator


def utc_now() -> datetime:
    return datetime.now(UTC)


class Inbox(Message):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list = []

    def handle_message(self, message) -> None:
        self.messages.append(message)


@pytest.fixture
def smtp_server() -> Iterator[tuple[Controller, Inbox]]:
    inbox = Inbox()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield controller, inbox
    controller.stop()


# --- `audit apply` against copies of a demo endpoint (test_apply*.py) -------------------------------

APPLY_ROLE = "arn:aws:iam::123456789012:role/SageMakerAuditorApply"
SCALABLE_DIMENSION = "sagemaker:variant:DesiredInstanceCount"


@contextlib.contextmanager
def apply_fleet(emulator: Emulator, home: Path, names: Sequence[str], *, untagged: Sequence[str] = (),
                scaled: Sequence[str] = (), prepare: Callable[[Any], None] | None = None) -> Iterator[dict[str, Any]]:
    """For module-scoped fixtures: a copy of the demo's search-embeddings (4 x ml.m5.4xlarge, idle: a
    resize plan) per name, tagged auditor:apply=allowed but `untagged`, `scaled` ones under autoscaling
    (`register_scaling`), `prepare(scaling client)` for more, audited once (the run recorded in
    home/history.sqlite3, home/auditor.toml naming it). Yields the config, the plans by endpoint, the
    home and the clients; deployments take 0.2 s meanwhile."""
    base = next(s for s in demo_fleet() if s.name == "search-embeddings")
    specs = [replace(base, name=name) for name in names]
    with seeded_emulator(emulator, home, lambda emu: seed_fleet(emu, specs, now=utc_now())):
        Emulator.deployments(seconds=0.2, fail_instance_types=())
        sagemaker = boto3.client("sagemaker", region_name="us-east-1")
        for name in names:
            arn = sagemaker.describe_endpoint(EndpointName=name)["EndpointArn"]
            if name in untagged:  # the demo's search-embeddings is opted in
                sagemaker.delete_tags(ResourceArn=arn, TagKeys=["auditor:apply"])
            else:
                sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "auditor:apply", "Value": "allowed"}])
        scaling = boto3.client("application-autoscaling", region_name="us-east-1")
        for name in scaled:
            register_scaling(scaling, name)
        if prepare is not None:
            prepare(scaling)
        config = AuditConfig(aws=AwsConfig(regions=("us-east-1",)),
                             history=HistoryConfig(path=str(home / "history.sqlite3")),
                             apply=ApplyConfig(role_arn=APPLY_ROLE, wait_minutes=1.0))
        outcome = execute_audit(config)
        assert not deliver_outcome(config, outcome).problems
        plans = {p.resource.name: p for p in outcome.report.plans
                 if p.resource.name in names and p.proposed.instance_type}
        assert set(plans) == set(names), [p.resource.name for p in outcome.report.plans]
        (home / "auditor.toml").write_text(
            f'[history]\npath = "{home / "history.sqlite3"}"\n[apply]\nrole_arn = "{APPLY_ROLE}"\nwait_minutes = 1\n')
        yield {"config": config, "plans": plans, "home": home, "sagemaker": sagemaker, "scaling": scaling,
               "cloudwatch": boto3.client("cloudwatch", region_name="us-east-1")}
        Emulator.deployments(seconds=2.0, fail_instance_types=())


def register_scaling(scaling: Any, endpoint: str) -> None:
    """2-6 instances, a target-tracking policy, a scheduled action at night."""
    resource = f"endpoint/{endpoint}/variant/AllTraffic"
    scaling.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=resource,
                                     ScalableDimension=SCALABLE_DIMENSION, MinCapacity=2, MaxCapacity=6)
    scaling.put_scaling_policy(
        PolicyName=f"{endpoint}-invocations", ServiceNamespace="sagemaker", ResourceId=resource,
        ScalableDimension=SCALABLE_DIMENSION, PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 300.0, "ScaleInCooldown": 600, "ScaleOutCooldown": 120,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}})
    scaling.put_scheduled_action(
        ServiceNamespace="sagemaker", ScheduledActionName=f"{endpoint}-nights", ResourceId=resource,
        ScalableDimension=SCALABLE_DIMENSION, Schedule="cron(0 22 * * ? *)",
        ScalableTargetAction={"MinCapacity": 2, "MaxCapacity": 3})


@pytest.fixture
def quick_deployments(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Deployments of 0.2 s that fail on no instance type, and no fault armed, before and after; apply
    reads the status after 0.1 s, doubling to 1 s (the emulator's deployments take seconds, not
    AWS's minutes: the 0.5 s first wait was most of each apply's time)."""
    monkeypatch.setattr("auditor.write.target.FIRST_POLL_SECONDS", 0.1)
    monkeypatch.setattr("auditor.write.target.MAX_POLL_SECONDS", 1.0)
    Emulator.deployments(seconds=0.2, fail_instance_types=())
    yield
    Emulator.deployments(seconds=0.2, fail_instance_types=())
    faults = getattr(Emulator, "faults", None)
    if faults is not None:
        faults.reset()


def resized_variants(sagemaker: Any, config_name: str, plan: Plan) -> list[dict[str, Any]]:
    """The variants of `config_name` as CreateEndpointConfig takes them again, the plan's variant on
    its proposed shape (as change.py copies them)."""
    variants = []
    for variant in sagemaker.describe_endpoint_config(EndpointConfigName=config_name)["ProductionVariants"]:
        copied = copy.deepcopy(variant)
        if copied["VariantName"] == plan.variant:
            copied.update(InstanceType=plan.proposed.instance_type, InitialInstanceCount=plan.proposed.instance_count)
        variants.append(copied)
    return variants


def load_plans_from(monkeypatch: pytest.MonkeyPatch, stored: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """`audit apply` reads its plans from `stored` (by id; a copy each time), as it reads the history's."""
    def load(config: AuditConfig, plan_id: str) -> dict[str, Any]:
        if plan_id not in stored:
            raise ApplyRefused(f"no plan {plan_id} in the history")
        return copy.deepcopy(stored[plan_id])

    monkeypatch.setattr("auditor.act.plan.load_plan", load)
    return stored


def error_lines(result: Any) -> list[str]:
    """The lines of a CliRunner result's stderr that start with "error:"."""
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


# Every JSON document a test makes is checked against the published JSON Schema
# (auditor/data/audit-report.schema.json): `audit_json` checks what `audit run` wrote, and
# `validated_documents` each document the report module builds in this process (report_to_dict,
# write_report_json), up to a size the check takes milliseconds for.
VALIDATE_UP_TO_ENDPOINTS = 500


def check_report_json(document: dict) -> dict:
    """`document`, after jsonschema found it valid against the published schema (else the errors)."""
    errors = sorted(_report_validator().iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
                                 for e in errors[:10])
    return document


@functools.cache
def _report_validator() -> jsonschema.protocols.Validator:
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(autouse=True, scope="session")
def validated_documents() -> Iterator[None]:
    """Wraps the report module's document builder (its one seam, `_document`) so that each document
    it makes is checked whole; the long lists are made before the check, so only documents of at
    most VALIDATE_UP_TO_ENDPOINTS endpoints (a streamed 10,000-endpoint one stays streamed)."""
    made = document_module._document

    def checked(report: Any) -> dict[str, Any]:
        parts = made(report)
        if len(report.sections.get("endpoints", ())) > VALIDATE_UP_TO_ENDPOINTS:
            return parts
        whole = {key: list(value) if isinstance(value, Iterator) else value for key, value in parts.items()}
        check_report_json(json.loads(json.dumps(whole)))
        return whole

    document_module._document = checked
    yield
    document_module._document = made
