"""The emailed reports against unusual input: no [email] config, owners with nothing to do, hostile
tag values, a large weekly digest, and the help texts that name config sections."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import EmailConfig
from auditor.deliver.mail import PLACEHOLDER_RECIPIENT, PLACEHOLDER_SENDER, plan_deliveries, split_by_owner
from auditor.history.store import History
from auditor.history.weekly import build_digest
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.models import AuditReport
from auditor.report.email_message import HTML_BUDGET_BYTES, build_report_message
from auditor.report.render import OutputFormat, render
from auditor.report.weekly import build_weekly_message, render_weekly_html
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now
from fleet_report import synthetic_report

runner = CliRunner()
MONDAY = datetime(2026, 11, 23, 3, 0, tzinfo=UTC)  # 2026-W48


def _oversized(name: str, tags: dict[str, str] | None = None) -> EndpointSpec:
    return EndpointSpec(name, (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),), tags=tags or {})


def test_email_to_file_without_email_config_uses_placeholders(aws, tmp_path: Path) -> None:
    seed_fleet(aws, [_oversized("oversized")], now=utc_now())
    target = tmp_path / "report.eml"
    result = runner.invoke(app, ["run", "--no-history", "--format", "json", "--output", str(tmp_path / "r.json"),
                                 "--email-to-file", str(target)])
    assert result.exit_code == 0, result.output
    message = message_from_bytes(target.read_bytes(), policy=policy.default)
    assert message["From"] == PLACEHOLDER_SENDER == "sagemaker-auditor@localhost"
    assert message["To"] == PLACEHOLDER_RECIPIENT == "recipients-not-configured@localhost"
    assert "oversized" in message.get_body(("plain",)).get_content()
    # Sending still needs the addresses, and says which.
    sent = runner.invoke(app, ["run", "--no-history", "--email"])
    assert sent.exit_code == 1 and "email.sender" in sent.stderr


def test_weekly_email_to_file_without_email_config(tmp_path: Path) -> None:
    with History(tmp_path / "history.sqlite3") as history:
        history.record_run(replace(synthetic_report(5), generated_at=MONDAY))
    config = tmp_path / "auditor.toml"
    config.write_text(f'[history]\npath = "{tmp_path / "history.sqlite3"}"\n')
    eml = tmp_path / "digest.eml"
    result = runner.invoke(app, ["weekly", "--config", str(config), "--week", "2026-W48", "--email-to-file", str(eml)])
    assert result.exit_code == 0, result.output
    message = message_from_bytes(eml.read_bytes(), policy=policy.default)
    assert message["From"] == PLACEHOLDER_SENDER and message["To"] == PLACEHOLDER_RECIPIENT


def _routed(report: AuditReport, quiet_owner: str) -> AuditReport:
    """The report with one more owner whose endpoint has no finding above info."""
    quiet = {f.resource.name for f in report.findings}
    spare = next(e for e in ENDPOINTS.section(report) if e.endpoint.name not in quiet)
    endpoint = replace(spare.endpoint, tags={"owner": quiet_owner})
    endpoints = tuple(replace(e, endpoint=endpoint) if e is spare else e for e in ENDPOINTS.section(report))
    return ENDPOINTS.with_section(report, endpoints)


def test_owners_with_nothing_to_act_on_get_no_mail_unless_configured() -> None:
    report = _routed(synthetic_report(40), "quiet@example.com")
    email = EmailConfig(sender="a@example.com", recipients=("finops@example.com",), route_by_tag="owner")
    to = [d.recipients for d in plan_deliveries(report, email)]
    assert ("quiet@example.com",) not in to
    assert ("finops@example.com",) in to  # the recipients always get theirs, even with nothing unrouted
    assert all(len(r) == 1 for r in to) and len(to) > 2
    with_empty = [d.recipients for d in plan_deliveries(report, replace(email, send_empty_owner_reports=True))]
    assert ("quiet@example.com",) in with_empty


HOSTILE_OWNER = "x" * 256
INJECTED = "team-a\r\nBcc: everyone@example.com\r\n\x1b[31mred"


def _hostile_report() -> AuditReport:
    """Two endpoints with findings get a 256-character owner and an owner with CR, LF and ESC."""
    report = synthetic_report(12)
    flagged = list(dict.fromkeys(f.resource.name for f in report.findings if f.severity.value != "info"))
    owners = {flagged[0]: HOSTILE_OWNER, flagged[1]: INJECTED}
    endpoints = tuple(replace(e, endpoint=replace(e.endpoint, tags={"owner": owners[e.endpoint.name]}))
                      if e.endpoint.name in owners else e for e in ENDPOINTS.section(report))
    return ENDPOINTS.with_section(report, endpoints)


def test_control_characters_never_start_a_line_in_text_output() -> None:
    report = _hostile_report()
    message = build_report_message(report, "a@example.com", ["b@example.com"])
    text = message.get_body(("plain",)).get_content()
    assert not any(line.startswith("Bcc:") for line in text.splitlines())
    assert "\x1b" not in text and "team-a  Bcc: everyone@example.com" in text
    assert message["Bcc"] is None
    for fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.TABLE):
        out = render(report, fmt)
        assert "\x1b" not in out and not any(line.startswith("Bcc:") for line in out.splitlines()), fmt


def test_an_owner_tag_with_a_line_break_is_not_an_address() -> None:
    report = synthetic_report(3)
    first = ENDPOINTS.section(report)[0]
    forged = replace(first, endpoint=replace(first.endpoint, tags={"owner": "a@example.com\nBcc:all@example.com"}))
    report = ENDPOINTS.with_section(report, (forged, *ENDPOINTS.section(report)[1:]))
    parts = split_by_owner(report, "owner")
    assert first.endpoint.name in {e.endpoint.name for e in ENDPOINTS.section(parts[None])}  # to the recipients
    email = EmailConfig(sender="a@example.com", recipients=("finops@example.com",), route_by_tag="owner")
    for delivery in plan_deliveries(report, email):
        assert delivery.message["Bcc"] is None
        assert all("\n" not in r and "Bcc" not in r for r in delivery.recipients), delivery.recipients


def test_chart_attachments_have_safe_file_names() -> None:
    report = synthetic_report(3)
    first = ENDPOINTS.section(report)[0]
    evil = replace(first, endpoint=replace(first.endpoint, name="../../etc/passwd\r\nX: y"))
    report = ENDPOINTS.with_section(report, (evil, *ENDPOINTS.section(report)[1:]))
    message = build_report_message(report, "a@example.com", ["b@example.com"])
    names = [p.get_filename() for p in message.walk() if p.get_content_type() == "image/png"]
    assert names and all(n.endswith(".png") for n in names)
    for name in names:
        assert set(name) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"), name
        assert not name.startswith(".")


def test_a_long_owner_is_clipped_with_the_full_value_in_a_title() -> None:
    html = render(_hostile_report(), OutputFormat.HTML)
    assert f'title="{HOSTILE_OWNER}"' in html
    assert "x" * 40 not in html.replace(f'title="{HOSTILE_OWNER}"', "")
    assert "overflow-wrap: anywhere" in html or "overflow-wrap:anywhere" in html


@pytest.fixture(scope="module")
def large_digest(tmp_path_factory: pytest.TempPathFactory):
    """A week of a 400-endpoint fleet, half of it deleted since last week: new, still open and resolved
    findings at once."""
    path = tmp_path_factory.mktemp("weekly") / "history.sqlite3"
    report = synthetic_report(400)
    kept = {e.endpoint.name for e in ENDPOINTS.section(report)[::2]}
    with History(path) as history:
        history.record_run(replace(report, generated_at=MONDAY - timedelta(days=7),
                                   findings=tuple(f for f in report.findings if f.resource.name not in kept)))
        kept_endpoints = tuple(e for e in ENDPOINTS.section(report) if e.endpoint.name in kept)
        history.record_run(replace(ENDPOINTS.with_section(report, kept_endpoints), generated_at=MONDAY,
                                   findings=tuple(f for f in report.findings if f.resource.name in kept)))
        digest = build_digest(history, "2026-W48")
    assert digest is not None and digest.new and digest.resolved
    # Five times the rows (a fleet with more findings an endpoint): the size a user met, ~290 KB.
    return replace(digest, new=digest.new * 5, still_open=digest.new * 5, resolved=digest.resolved * 5)


def test_weekly_digest_of_a_large_fleet_stays_under_the_budget(large_digest) -> None:
    digest = large_digest
    total = len(digest.new) + len(digest.still_open) + len(digest.resolved)
    assert len(render_weekly_html(digest, None).encode("utf-8")) > 2 * HTML_BUDGET_BYTES  # unbudgeted
    message = build_weekly_message(digest, "a@example.com", ["b@example.com"])
    html = message.get_body(("html",)).get_content()
    assert len(html.encode("utf-8")) <= HTML_BUDGET_BYTES
    assert "more are in the attached CSV" in html
    text = message.get_body(("plain",)).get_content()
    assert "more are in the attached CSV" in text
    (attachment,) = list(message.iter_attachments())
    assert attachment.get_filename() == "sagemaker-audit-weekly-2026-W48.csv"
    rows = attachment.get_content().splitlines()
    assert len(rows) == total + 1  # every finding, not only those shown
    # The counts in the headline are the whole week's, not the rows shown.
    assert f"New this week ({len(digest.new)})" in html
    assert f"Still open ({len(digest.still_open)})" in html


def test_small_weekly_digest_has_no_attachment() -> None:
    digest_report = synthetic_report(5)
    with History(Path(":memory:")) as history:
        history.record_run(replace(digest_report, generated_at=MONDAY))
        digest = build_digest(history, "2026-W48")
    assert digest is not None
    message = build_weekly_message(digest, "a@example.com", ["b@example.com"])
    assert list(message.iter_attachments()) == []
    assert "more are in the attached CSV" not in message.get_body(("html",)).get_content()


@pytest.mark.parametrize(("command", "section"), [("run", "[email]"), ("weekly", "[email]"),
                                                  ("schedule", "[schedule]")])
def test_help_shows_config_sections_literally(command: str, section: str) -> None:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200", "TERM": "xterm-256color"})
    assert result.exit_code == 0, result.output
    assert section in result.output
