"""The emailed report: structure, inline charts, size budget, owner routing, outbox, file output."""

from __future__ import annotations

import socket
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import EmailConfig
from auditor.deliver.mail import plan_deliveries, split_by_owner
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.report.email_message import HTML_BUDGET_BYTES, build_report_message
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now
from fleet_report import synthetic_report
from test_email_delivery import write_config

runner = CliRunner()


@pytest.fixture(scope="module")
def large_report():
    return synthetic_report(200)


def test_large_fleet_stays_under_gmails_clipping_limit(large_report) -> None:
    message = build_report_message(large_report, "auditor@example.com", ["finops@example.com"])
    html = message.get_body(("html",)).get_content()
    assert len(html.encode("utf-8")) <= HTML_BUDGET_BYTES
    assert "more findings are in the attached CSV" in html
    (attachment,) = list(message.iter_attachments())
    assert attachment.get_filename() == "sagemaker-audit-findings.csv"
    rows = attachment.get_content().splitlines()
    assert len(rows) == len(large_report.findings) + 1  # every finding, not only those shown
    # Inline charts belong to the endpoints shown, each referenced by its Content-ID.
    images = [p for p in message.walk() if p.get_content_type() == "image/png"]
    assert 0 < len(images) < 200
    for image in images:
        assert f"cid:{image['Content-ID'][1:-1]}" in html
        assert image.get_content().startswith(b"\x89PNG")
    # The headline still counts the whole fleet.
    assert "200" in html and message["Subject"].startswith("SageMaker audit: ")


def test_small_fleet_shows_everything_without_attachment(large_report) -> None:
    from dataclasses import replace

    small = replace(ENDPOINTS.with_section(large_report, ENDPOINTS.section(large_report)[:5]),
        findings=tuple(f for f in large_report.findings if f.resource.name in
                                   {e.endpoint.name for e in ENDPOINTS.section(large_report)[:5]}))
    message = build_report_message(small, "auditor@example.com", ["a@example.com"])
    assert list(message.iter_attachments()) == []
    assert message.get_content_type() == "multipart/alternative"
    html = message.get_body(("html",)).get_content()
    assert "<style" not in html  # the stylesheet was inlined into style attributes
    assert 'style="' in html


def test_owner_routing_sends_each_owner_their_endpoints(large_report) -> None:
    parts = split_by_owner(large_report, "owner")
    # Every endpoint is routed: the default audience (None) is there, with nothing.
    assert set(parts) == {*(f"team-{i}@example.com" for i in range(7)), None}
    assert ENDPOINTS.section(parts[None]) == () and parts[None].findings == () and parts[None].plans == ()
    for owner, part in parts.items():
        assert all(e.endpoint.tags["owner"] == owner for e in ENDPOINTS.section(part))
        assert {f.resource.name for f in part.findings} <= {e.endpoint.name for e in ENDPOINTS.section(part)}
        assert {p.resource.name for p in part.plans} <= {e.endpoint.name for e in ENDPOINTS.section(part)}
    deliveries = plan_deliveries(large_report, EmailConfig(sender="a@example.com", recipients=("finops@example.com",),
                                                           route_by_tag="owner", send_empty_owner_reports=True))
    # The recipients still get theirs (saying so), first.
    assert [d.recipients[0] for d in deliveries] == ["finops@example.com", *sorted(p for p in parts if p)]


def test_unrouted_endpoints_go_to_the_recipients(large_report) -> None:
    parts = split_by_owner(large_report, "team")  # no endpoint has a team tag
    assert list(parts) == [None]
    assert len(ENDPOINTS.section(parts[None])) == 200


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unsent_mail_goes_to_the_outbox_and_send_outbox_retries_it(aws, smtp_server, tmp_path: Path) -> None:
    seed_fleet(aws, [EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),))],
               now=utc_now())
    outbox = tmp_path / "outbox"
    down = write_config(tmp_path / "down.toml",
                        f'smtp_host = "127.0.0.1"\nsmtp_port = {_closed_port()}\noutbox_dir = "{outbox}"\n')
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["run", "--config", str(down), "--email", "--format", "json", "--output", str(out)])
    assert result.exit_code == 1
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("error: cannot reach SMTP server 127.0.0.1:")
    assert str(outbox) in error and "audit send-outbox" in error
    assert out.exists()
    (saved,) = outbox.glob("*.eml")
    assert message_from_bytes(saved.read_bytes(), policy=policy.default)["Subject"].startswith("SageMaker audit")

    controller, inbox = smtp_server
    up = write_config(tmp_path / "up.toml",
                      f'smtp_host = "127.0.0.1"\nsmtp_port = {controller.port}\noutbox_dir = "{outbox}"\n')
    result = runner.invoke(app, ["send-outbox", "--config", str(up)])
    assert result.exit_code == 0, result.output
    assert "sent 1 message" in result.stderr
    assert list(outbox.glob("*.eml")) == []
    (received,) = inbox.messages
    assert received["X-RcptTo"].replace(" ", "") == "ml-platform@example.com,finops@example.com"


def test_send_outbox_failure_keeps_the_message(tmp_path: Path) -> None:
    outbox = tmp_path / "outbox"
    outbox.mkdir()
    (outbox / "20261130T000000Z-abcd.eml").write_bytes(
        b"From: a@example.com\r\nTo: b@example.com\r\nSubject: x\r\n\r\nbody\r\n")
    config = write_config(tmp_path / "c.toml", f'smtp_host = "127.0.0.1"\nsmtp_port = {_closed_port()}\n'
                                               f'outbox_dir = "{outbox}"\n')
    result = runner.invoke(app, ["send-outbox", "--config", str(config)])
    assert result.exit_code == 1 and "left in the outbox" in result.stderr
    assert len(list(outbox.glob("*.eml"))) == 1


def test_email_to_file_writes_the_message_per_owner(aws, tmp_path: Path) -> None:
    seed_fleet(aws, [
        EndpointSpec("a", (VariantSpec("ml.m5.4xlarge", 1, cpu=Load(5, 1), memory=Load(8, 1)),),
                     tags={"owner": "a@example.com"}),
        EndpointSpec("b", (VariantSpec("ml.m5.4xlarge", 1, cpu=Load(5, 1), memory=Load(8, 1)),)),
    ], now=utc_now())
    config = write_config(tmp_path / "c.toml", 'route_by_tag = "owner"\n')
    target = tmp_path / "mail" / "report.eml"
    result = runner.invoke(app, ["run", "--config", str(config), "--email-to-file", str(target), "--format", "csv"])
    assert result.exit_code == 0, result.output
    routed = tmp_path / "mail" / "report.a@example.com.eml"
    assert target.exists() and routed.exists()
    to_owner = message_from_bytes(routed.read_bytes(), policy=policy.default)
    assert to_owner["To"] == "a@example.com"
    assert "a" in to_owner.get_body(("plain",)).get_content()
    rest = message_from_bytes(target.read_bytes(), policy=policy.default)
    assert rest["To"] == "ml-platform@example.com, finops@example.com"
    text = rest.get_body(("plain",)).get_content()
    assert ": b /" in text and ": a /" not in text
