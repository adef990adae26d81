"""Shared fixtures: one local AWS emulator (a moto server over HTTP) for the whole session."""

from __future__ import annotations

import contextlib
import functools
import json
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Message
from typer.testing import CliRunner

from auditor.cli import app
from auditor.emulator.fleet import demo_jobs, seed_jobs
from auditor.emulator.hyperpod import demo_clusters, seed_hyperpod
from auditor.emulator.server import Emulator
from auditor.emulator.workspaces import demo_notebooks, demo_processing, seed_workspaces
from auditor.report import document as document_module
from auditor.report.document import report_schema


@pytest.fixture(scope="session")
def emulator() -> Iterator[Emulator]:
    """One per process: under pytest-xdist each worker has its own, on a free loopback port."""
    with Emulator() as emu:
        yield emu


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
        if len(report.endpoints) > VALIDATE_UP_TO_ENDPOINTS:
            return parts
        whole = {key: list(value) if isinstance(value, Iterator) else value for key, value in parts.items()}
        check_report_json(json.loads(json.dumps(whole)))
        return whole

    document_module._document = checked
    yield
    document_module._document = made
