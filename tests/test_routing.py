"""Owner routing is a partition: on the demo fleet (endpoints, training, transform and processing
jobs, notebook instances, through the emulator), every resource, finding, plan and error is in
exactly one audience's mail and chat post, and the audiences' totals add up to the run's. Mail
goes through a real SMTP server (aiosmtpd), posts through a local HTTP server."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace
from email import message_from_bytes, policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import AuditConfig, AwsConfig, ChatConfig, EmailConfig
from auditor.deliver.chat import split_by_tag
from auditor.deliver.mail import message_files, owner_file_part, split_by_owner, write_messages
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.kinds.jobs.kind import KIND as JOBS
from auditor.kinds.workspaces.kind import KIND as WORKSPACES
from auditor.models import AuditReport
from auditor.pipeline import AuditOutcome
from auditor.tasks.audit import deliver_outcome, execute_audit
from auditor_emulator.fleet import demo_fleet, demo_jobs, seed_fleet, seed_jobs
from auditor_emulator.workspaces import demo_notebooks, demo_processing, seed_workspaces
from conftest import seeded_emulator, utc_now
from fleet_report import synthetic_report

SENDER, RECIPIENTS = "auditor@example.com", ("finops@example.com",)
JOB_OWNER = "ml-research@example.com"  # tags a training and a processing job of the demo
TAGGED_JOBS = {"churn-xgb-tuning-0412": "training", "model-eval-w48": "processing", "model-eval-w47": "processing"}


@pytest.fixture(scope="module")
def fleet(emulator, tmp_path_factory) -> Iterator[AuditReport]:
    """The whole demo: endpoints, jobs, notebooks and processing jobs, audited for owner routing
    (which reads the tags of the jobs that have a finding)."""
    now = utc_now()

    def seed(emu: Any) -> None:
        seed_fleet(emu, demo_fleet(), now=now)
        seed_jobs(emu, *demo_jobs(), now=now)
        seed_workspaces(emu, demo_notebooks(), demo_processing(), now=now)
        sagemaker = boto3.client("sagemaker", region_name="us-east-1")
        for name, kind in TAGGED_JOBS.items():
            described = (sagemaker.describe_training_job(TrainingJobName=name) if kind == "training"
                         else sagemaker.describe_processing_job(ProcessingJobName=name))
            arn = described["TrainingJobArn" if kind == "training" else "ProcessingJobArn"]
            sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "owner", "Value": JOB_OWNER}])

    with seeded_emulator(emulator, tmp_path_factory.mktemp("home"), seed):
        config = AuditConfig(aws=AwsConfig(regions=("us-east-1",)), email=EmailConfig(route_by_tag="owner"))
        yield execute_audit(config, now=now).report


def owners(report: AuditReport) -> set[str]:
    tags = [e.endpoint.tags for e in ENDPOINTS.section(report)]
    tags += [n.notebook.tags for n in WORKSPACES.section(report).notebooks] if WORKSPACES.section(report) else []
    tags += [c.job.tags for c in (*JOBS.section(report).training, *JOBS.section(report).processing)]
    return {t["owner"] for t in tags if "@" in t.get("owner", "")}


def items(report: AuditReport) -> dict[str, list[int]]:
    """Everything a report holds that belongs to someone, by kind, as object ids."""
    ws, jobs = WORKSPACES.section(report), JOBS.section(report)
    return {
        "endpoints": [id(e) for e in ENDPOINTS.section(report)], "findings": [id(f) for f in report.findings],
        "plans": [id(p) for p in report.plans], "errors": [id(e) for e in report.errors],
        "training": [id(c) for c in jobs.training], "transform": [id(c) for c in jobs.transform],
        "processing": [id(c) for c in jobs.processing], "experiments": [id(e) for e in jobs.experiments],
        "notebooks": [id(n) for n in ws.notebooks] if ws else [], "apps": [id(a) for a in ws.apps] if ws else [],
    }


def assert_partition(report: AuditReport, parts: dict[str | None, AuditReport]) -> None:
    whole = items(report)
    for kind, ids in whole.items():
        placed = [i for part in parts.values() for i in items(part)[kind]]
        assert sorted(placed) == sorted(ids), f"{kind}: an item in two audiences or in none"
    assert sum(p.monthly_savings_usd for p in parts.values()) == pytest.approx(report.monthly_savings_usd, abs=0.01)
    assert sum(p.monthly_cost_usd for p in parts.values()) == pytest.approx(report.monthly_cost_usd, abs=0.01)


def test_mail_and_chat_routing_partition_the_demo_fleet(fleet: AuditReport) -> None:
    kinds = {f.resource.type for f in fleet.findings}
    assert {"endpoint", "training-job", "transform-job", "processing-job", "notebook-instance"} <= kinds
    mail = split_by_owner(fleet, "owner")
    assert_partition(fleet, mail)
    assert set(mail) == {*owners(fleet), None}
    # The tags of the jobs with a finding are read (model-eval-w47 has none: its tags are not);
    # the other jobs are the default audience's.
    assert {c.job.name for c in JOBS.section(mail[JOB_OWNER]).training} == {"churn-xgb-tuning-0412"}
    assert {c.job.name for c in JOBS.section(mail[JOB_OWNER]).processing} == {"model-eval-w48"}
    assert {p.resource.name for p in mail[JOB_OWNER].plans} == {"churn-xgb-tuning-0412", "model-eval-w48"}
    assert len(JOBS.section(mail[None]).transform) == len(JOBS.section(fleet).transform)
    # One ListTags per notebook (discovery) and one per job with a finding, not one per job;
    assert WORKSPACES.section(fleet) is not None
    job_findings = {(f.resource.type, f.resource.name) for f in fleet.findings if f.resource.type.endswith("-job")}
    # ...and none for the endpoint configs (`audit apply` copies a config's tags when it copies it).
    configs: set[str] = set()
    assert fleet.api_calls["sagemaker:ListTags"] == (len(WORKSPACES.section(fleet).notebooks) + len(job_findings)
                                                     + len(configs))
    chat = split_by_tag(fleet, "owner", {"vision@example.com", "pricing@example.com", "nobody@example.com"})
    assert list(chat) == ["pricing@example.com", "vision@example.com", None]
    assert_partition(fleet, chat)


def subject_figures(subject: str) -> tuple[int, float]:
    match = re.search(r": (\d+) findings?(?: \(\+\d+ not judged\))?, \$([\d,]+\.\d\d)/month to save", subject)
    assert match, subject
    return int(match[1]), float(match[2].replace(",", ""))


def test_each_owner_is_mailed_only_their_part(fleet: AuditReport, smtp_server) -> None:
    controller, inbox = smtp_server
    email = EmailConfig(sender=SENDER, recipients=RECIPIENTS, smtp_host=controller.hostname,
                        smtp_port=controller.port, route_by_tag="owner")
    delivered = deliver_outcome(AuditConfig(email=email), AuditOutcome(fleet, ()), history=False, email=True)
    assert delivered.problems == ()
    messages = {m["To"]: message_from_bytes(m.as_bytes(), policy=policy.default) for m in inbox.messages}
    assert "finops@example.com" in messages and len(messages) == len(delivered.sent_to)
    figures = [subject_figures(m["Subject"]) for m in messages.values()]
    actionable = sum(1 for f in fleet.findings if f.severity.value != "info")
    assert sum(n for n, _ in figures) == actionable  # owners with nothing to act on: in the recipients' mail
    assert sum(usd for _, usd in figures) == pytest.approx(fleet.monthly_savings_usd, abs=0.01 * len(figures))
    # The fleet-wide note on enhanced metrics (a platform decision) goes to the default audience and
    # names the endpoints that would gain: not one of their plans or findings, so left out here.
    texts = {to: "\n".join(line for line in m.get_body(("plain",)).get_content().splitlines()
                           if "enhanced-metrics-off" not in line)
             for to, m in messages.items()}
    names = [e.endpoint.name for e in ENDPOINTS.section(fleet)] + [c.job.name for c in JOBS.section(fleet).training]
    names += [n.notebook.name for n in WORKSPACES.section(fleet).notebooks] if WORKSPACES.section(fleet) else []
    planned = {p.resource.name for p in fleet.plans}
    for name in names:
        if name in planned:
            assert sum(1 for text in texts.values() if name in text) == 1, name
    # An owner of one endpoint: only it, and its own total.
    (mine,) = [e for e in ENDPOINTS.section(fleet) if e.endpoint.tags.get("owner") == "pricing@example.com"]
    assert mine.endpoint.name in texts["pricing@example.com"]
    assert not [n for n in names if n != mine.endpoint.name and n in texts["pricing@example.com"]]
    own = sum(max(p.monthly_savings_usd, 0) for p in fleet.plans if p.resource.name == mine.endpoint.name
              and p.measured)
    assert subject_figures(messages["pricing@example.com"]["Subject"])[1] == pytest.approx(own, abs=0.005)


class Webhooks:
    def __init__(self) -> None:
        self.posts: dict[str, list[dict[str, Any]]] = {}
        self.url = ""


@pytest.fixture
def webhooks() -> Iterator[Webhooks]:
    state = Webhooks()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            state.posts.setdefault(self.path, []).append(body)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def test_each_channel_gets_only_its_part(fleet: AuditReport, webhooks: Webhooks, monkeypatch, tmp_path) -> None:
    routes = []
    for i, owner in enumerate(sorted(owners(fleet))):
        monkeypatch.setenv(f"SLACK_OWNER_{i}", f"{webhooks.url}/slack/{owner}")
        routes.append(f"{owner}=SLACK_OWNER_{i}")
    monkeypatch.setenv("AUDIT_SLACK", f"{webhooks.url}/slack/default")
    chat = ChatConfig(slack_webhook_env="AUDIT_SLACK", route_by_tag="owner", slack_routes=tuple(routes), top_plans=20)
    config = AuditConfig(chat=chat, email=EmailConfig(outbox_dir=str(tmp_path / "outbox")))
    delivered = deliver_outcome(config, AuditOutcome(fleet, ()), history=False, chat=True)
    assert delivered.problems == ()
    posts = [body for bodies in webhooks.posts.values() for body in bodies]
    assert len(posts) == len(delivered.posted) and "/slack/default" in webhooks.posts
    counted = [re.search(r"(\d+) findings?(?: \(\+(\d+) not judged\))?, \$([\d,]+\.\d\d)/month", p["text"])
               for p in posts]
    assert all(counted)
    # The findings (above info) and the not judged add up to the run's, each counted apart.
    assert sum(int(m[1]) for m in counted if m) == fleet.finding_count
    assert sum(int(m[2] or 0) for m in counted if m) == fleet.not_judged_count
    assert sum(float(m[3].replace(",", "")) for m in counted if m) == pytest.approx(fleet.monthly_savings_usd,
                                                                                     abs=0.005 * len(posts))
    # Every plan with a saving is listed in exactly one post (top_plans covers them all here).
    lines = [line for p in posts for b in p["blocks"] if b["type"] == "section"
             for line in b["text"]["text"].splitlines() if line.startswith("• ")]
    saving = [p for p in fleet.plans if p.monthly_savings_usd > 0]
    assert len(lines) == len(saving)
    for plan in saving:
        where = f"• *{plan.resource.label}" + (f" / {plan.variant}*" if plan.variant else "*")
        assert sum(1 for line in lines if line.startswith(where)) == 1, where
    default = json.dumps(webhooks.posts["/slack/default"])
    assert "resnet50-p3-bs128-lr001" in default  # an untagged job's plan: the default channel's
    assert "search-embeddings" not in default and "churn-xgb-tuning-0412" not in default  # owners': not
    assert "churn-xgb-tuning-0412" in json.dumps(webhooks.posts[f"/slack/{JOB_OWNER}"])


# --- file names from tags ---------------------------------------------------------------------------


@pytest.mark.parametrize("owner", ["team/ml@example.com", "a" * 243 + "@example.com", "../../x@example.com",
                                   "A@example.com"])
def test_owner_file_names_are_safe(owner: str) -> None:
    part = owner_file_part(owner)
    assert re.fullmatch(r"[A-Za-z0-9@._+-]{1,64}", part) and not part.startswith("."), part


def test_owner_tags_aws_accepts_write_eml_files(tmp_path: Path) -> None:
    report = synthetic_report(12)
    flagged = list(dict.fromkeys(f.resource.name for f in report.findings if f.severity.value != "info"))
    long_owner = "a" * 243 + "@example.com"  # 255 characters: AWS's longest tag value is 256
    tags = {flagged[0]: "team/ml@example.com", flagged[1]: long_owner, flagged[2]: "Ops@example.com",
            flagged[3]: "ops@example.com"}
    report = ENDPOINTS.with_section(report, tuple(
        replace(e, endpoint=replace(e.endpoint, tags={"owner": tags[e.endpoint.name]})) if e.endpoint.name in tags
        else e for e in ENDPOINTS.section(report)))
    target = tmp_path / "out" / "report.eml"
    written = write_messages(report, EmailConfig(route_by_tag="owner"), target)
    assert written[0] == target and target.is_file()  # the recipients' file first
    assert len(written) == 5 and len({p.name.casefold() for p in written}) == 5
    assert all(p.parent == target.parent and p.is_file() and len(p.name.encode()) <= 255 for p in written)
    to = {message_from_bytes(p.read_bytes(), policy=policy.default)["To"] for p in written}
    assert {"team/ml@example.com", long_owner, "Ops@example.com", "ops@example.com"} <= to
    files = message_files(target, ["team/ml@example.com", "team-ml@example.com"])
    assert len({p.name for p in files.values()}) == 2


# --- one line per failure -----------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_three_failed_messages_are_three_error_lines(aws, tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text(
        '[aws]\nregions = ["us-east-1"]\n'
        f'[email]\nsender = "a@example.com"\nrecipients = ["finops@example.com"]\nsmtp_host = "127.0.0.1"\n'
        f'smtp_port = {_closed_port()}\noutbox_dir = "{tmp_path / "outbox"}"\n'
        'route_by_tag = "owner"\nsend_empty_owner_reports = true\n', encoding="utf-8")
    seed_fleet(aws, [s for s in demo_fleet() if s.tags.get("owner") in ("pricing@example.com",
                                                                         "checkout@example.com")], now=utc_now())
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--email", "--no-history",
                                      "--output", str(tmp_path / "report.txt")])
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 3, result.stderr
    assert {re.search(r"the unsent message to (\S+) saved", line)[1] for line in errors} == {  # type: ignore[index]
        "finops@example.com", "pricing@example.com", "checkout@example.com"}
    assert "more)" not in result.stderr
    assert len(list((tmp_path / "outbox").glob("*.eml"))) == 3
    sent = CliRunner().invoke(app, ["send-outbox", "--config", str(config)])
    assert sent.exit_code == 1
    assert len([line for line in sent.stderr.splitlines() if line.startswith("error: ")]) == 3, sent.stderr


class RefusingInbox:
    """An SMTP peer that refuses one mailbox (550) and keeps what it accepts."""

    def __init__(self, refused: str) -> None:
        self.refused = refused
        self.accepted: list[str] = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options) -> str:
        if address == self.refused:
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:
        self.accepted += envelope.rcpt_tos
        return "250 OK"


def test_one_refused_owner_is_one_line_and_the_others_are_sent(tmp_path: Path) -> None:
    from aiosmtpd.controller import Controller

    report = synthetic_report(30)
    by_owner = split_by_owner(report, "owner")
    acting = [o for o, part in by_owner.items() if o and any(f.severity.value != "info" for f in part.findings)]
    assert len(acting) >= 2
    handler = RefusingInbox(acting[0])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        email = EmailConfig(sender=SENDER, recipients=RECIPIENTS, smtp_host="127.0.0.1", smtp_port=port,
                            route_by_tag="owner", outbox_dir=str(tmp_path / "outbox"))
        delivered = deliver_outcome(AuditConfig(email=email), AuditOutcome(report, ()), history=False, email=True)
    finally:
        controller.stop()
    (line,) = delivered.problems
    assert f"refused the recipients {acting[0]}" in line and f"the unsent message to {acting[0]} saved" in line
    assert set(delivered.sent_to) == {*RECIPIENTS, *acting[1:]} == set(handler.accepted)
    assert len(list((tmp_path / "outbox").glob("*.eml"))) == 1


def test_any_tagging_is_partitioned() -> None:
    """Seeded random owner tags, hostile ones among them, on a synthetic fleet: mail and chat."""
    import random

    base = synthetic_report(40)
    values = ["a@example.com", "b@example.com", "B@example.com", "team/ml@example.com", "x" * 256, "not an address",
              "c@example.com\nBcc: all@example.com", "", "<script>@example.com"]
    for seed in range(8):
        rng = random.Random(seed)
        report = ENDPOINTS.with_section(base, tuple(
            replace(e, endpoint=replace(e.endpoint, tags={"owner": rng.choice(values)} if rng.random() < 0.9 else {}))
            for e in ENDPOINTS.section(base)))
        assert_partition(report, split_by_owner(report, "owner"))
        assert_partition(report, split_by_tag(report, "owner", set(rng.sample(values, 3))))


def test_denied_list_tags_is_one_error_and_no_further_call() -> None:
    """ListTags as botocore's service model has it (Stubber): a job that is gone is named, a denial
    stops the reading with one error, and what was read stands."""
    from botocore.stub import Stubber

    from auditor.kinds.jobs.discover import read_tags

    arn = "arn:aws:sagemaker:us-east-1:123456789012:training-job/{}".format
    client = boto3.client("sagemaker", region_name="us-east-1", aws_access_key_id="k", aws_secret_access_key="s")
    with Stubber(client) as stubber:
        stubber.add_response("list_tags", {"Tags": [{"Key": "owner", "Value": "a@example.com"}]},
                             {"ResourceArn": arn("one"), "MaxResults": 100})
        stubber.add_client_error("list_tags", "ValidationException", "Could not find training-job", 400)
        stubber.add_client_error("list_tags", "AccessDeniedException", "not authorized", 400)
        tags, errors = read_tags(client, "us-east-1", {arn(n): n for n in ("one", "gone", "two", "three")})
        stubber.assert_no_pending_responses()  # "three" was not asked for
    assert tags == {arn("one"): {"owner": "a@example.com"}}
    gone, denied = errors
    assert gone.endpoint == "gone" and "ValidationException" in gone.message
    assert denied.endpoint is None and denied.message.startswith("access denied: sagemaker:ListTags in us-east-1")
