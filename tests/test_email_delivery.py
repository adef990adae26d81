"""`audit run --email` through a real SMTP server on loopback (aiosmtpd), and SES in the emulator."""

from __future__ import annotations

import re
import socket
from email import message_from_bytes, policy
from pathlib import Path

import boto3
from typer.testing import CliRunner

from auditor.cli import app
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now

runner = CliRunner()


def write_config(path: Path, extra: str) -> Path:
    path.write_text(
        '[email]\nsender = "auditor@example.com"\n'
        'recipients = ["ml-platform@example.com", "finops@example.com"]\n' + extra
    )
    return path


def test_report_is_mailed_over_smtp(aws, smtp_server, tmp_path: Path) -> None:
    seed_fleet(aws, [EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),),
                                  tags={"owner": "<b>team</b>"})], now=utc_now())
    controller, inbox = smtp_server
    config = write_config(tmp_path / "auditor.toml", f'smtp_host = "127.0.0.1"\nsmtp_port = {controller.port}\n')
    result = runner.invoke(app, ["run", "--config", str(config), "--email", "--format", "json",
                                 "--output", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    (received,) = inbox.messages
    assert received["X-RcptTo"].replace(" ", "") == "ml-platform@example.com,finops@example.com"
    message = message_from_bytes(received.as_bytes(), policy=policy.default)
    assert re.fullmatch(r"SageMaker audit: \d+ findings?( \(\+\d+ not judged\))?, \$[\d,]+\.\d\d/month to save",
                        message["Subject"])
    html = message.get_body(("html",)).get_content()
    text = message.get_body(("plain",)).get_content()
    assert "oversized" in html and "oversized" in text
    # Escaped (an owner's address may break after its separators: <wbr> is the report's own).
    assert "&lt;b&gt;team&lt;/b&gt;" in html.replace("<wbr>", "") and "<b>team</b>" not in html
    # multipart/alternative: the text, then the HTML with its chart inline (multipart/related, by cid).
    assert message.get_content_type() == "multipart/alternative"
    (chart,) = [part for part in message.walk() if part.get_content_type() == "image/png"]
    assert f'src="cid:{chart["Content-ID"][1:-1]}"' in html


def test_unreachable_smtp_server_is_one_line_error_after_the_report(aws, tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]
    config = write_config(tmp_path / "auditor.toml", f'smtp_host = "127.0.0.1"\nsmtp_port = {closed_port}\n')
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["run", "--config", str(config), "--email", "--format", "json", "--output", str(out)])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1].startswith(f"error: cannot reach SMTP server 127.0.0.1:{closed_port}")
    assert out.exists()  # the report was written before sending


def test_email_without_recipients_fails_before_the_audit(aws, tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text('[email]\nsender = "a@example.com"\n')
    result = runner.invoke(app, ["run", "--config", str(config), "--email"])
    assert result.exit_code == 1 and "email.recipients" in result.stderr


def test_report_is_sent_with_ses(aws, tmp_path: Path) -> None:
    boto3.client("ses", region_name="us-east-1").verify_email_identity(EmailAddress="auditor@example.com")
    config = write_config(tmp_path / "auditor.toml", 'transport = "ses"\nses_region = "us-east-1"\n')
    result = runner.invoke(app, ["run", "--config", str(config), "--email"])
    assert result.exit_code == 0, result.output
    sent = aws.backend("ses", "us-east-1").sent_messages
    assert len(sent) == 1 and "SageMaker audit" in sent[0].raw_data


def test_ses_rejecting_an_unverified_sender(aws, tmp_path: Path) -> None:
    config = write_config(tmp_path / "auditor.toml", 'transport = "ses"\n')
    result = runner.invoke(app, ["run", "--config", str(config), "--email"])
    assert result.exit_code == 1
    assert "SES in us-east-1 rejected the message" in result.stderr
