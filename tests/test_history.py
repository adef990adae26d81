"""The history database, `audit history`, and the weekly digest built from it."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.history.store import MIGRATIONS, SCHEMA_VERSION, History, HistoryError
from auditor.history.weekly import build_digest, iso_week, week_bounds
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.models import AuditReport
from fleet_report import synthetic_report

runner = CliRunner()
MONDAY = datetime(2026, 11, 23, 3, 0, tzinfo=UTC)  # 2026-W48


@pytest.fixture(scope="module")
def base_report() -> AuditReport:
    return synthetic_report(30)


def at(report: AuditReport, when: datetime) -> AuditReport:
    return replace(report, generated_at=when)


def without(report: AuditReport, endpoint: str) -> AuditReport:
    """The report after the owners deleted `endpoint`."""
    kept = tuple(e for e in ENDPOINTS.section(report) if e.endpoint.name != endpoint)
    return replace(ENDPOINTS.with_section(report, kept),
                   findings=tuple(f for f in report.findings if f.resource.name != endpoint))


def config_file(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "auditor.toml"
    path.write_text(f'[history]\npath = "{tmp_path / "history.sqlite3"}"\n{extra}')
    return path


def test_runs_are_recorded_and_listed(tmp_path: Path, base_report: AuditReport) -> None:
    with History(tmp_path / "history.sqlite3") as history:
        first = history.record_run(at(base_report, MONDAY))
        second = history.record_run(at(base_report, MONDAY + timedelta(days=1)), fatal=True)
        assert history.schema_version == SCHEMA_VERSION
        runs = history.runs()
        assert [r.id for r in runs] == [second, first]
        assert runs[1].endpoints == 30 and runs[1].findings == base_report.finding_count  # above info
        assert runs[1].monthly_savings_usd == base_report.monthly_savings_usd
        assert history.last_successful_run().id == first
        assert len(history.findings(first)) == len(base_report.findings)
    config = config_file(tmp_path)
    listing = runner.invoke(app, ["history", "--config", str(config), "--format", "json"])
    assert listing.exit_code == 0, listing.output
    rows = json.loads(listing.stdout)
    assert [r["id"] for r in rows] == [second, first] and rows[0]["failed"] is True
    table = runner.invoke(app, ["history", "--config", str(config), "--limit", "1"])
    assert table.exit_code == 0 and "(failed)" in table.stdout and len(table.stdout.splitlines()) == 2


def test_schema_is_upgraded_in_place(tmp_path: Path, base_report: AuditReport) -> None:
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0] + "; PRAGMA user_version = 1;")
    db.execute("INSERT INTO runs (started_at, window_start, window_end, period_seconds, regions, accounts, endpoints,"
               " findings, monthly_cost_usd, monthly_savings_usd, errors) VALUES"
               " ('2026-11-01T00:00:00+00:00', '2026-10-18T00:00:00+00:00', '2026-11-01T00:00:00+00:00',"
               " 3600, '[]', '[]', 1, 0, 10.0, 0.0, '[]')")
    db.commit()
    db.close()
    with History(path) as history:
        assert history.schema_version == SCHEMA_VERSION
        assert len(history.runs()) == 1  # the old run survived the upgrade
        history.record_digest("2026-W48", MONDAY, ["a@example.com"])
        assert history.digest_sent("2026-W48") == MONDAY


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(HistoryError, match="upgrade sagemaker-auditor"):
        History(path)


def test_a_failed_write_leaves_earlier_runs_intact(tmp_path: Path, base_report: AuditReport) -> None:
    with History(tmp_path / "history.sqlite3") as history:
        history.record_run(at(base_report, MONDAY))
        broken = replace(base_report.findings[0], message=object())  # sqlite cannot store it: fails mid-run
        with pytest.raises(HistoryError, match="cannot write the run"):
            history.record_run(replace(at(base_report, MONDAY),
        findings=(*base_report.findings, broken)))
        assert len(history.runs()) == 1
        counts = [history._db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "variants")]
        assert counts == [1, 30]  # no half run


def test_weeks() -> None:
    assert iso_week(MONDAY) == "2026-W48"
    start, end = week_bounds("2026-W48")
    assert start == datetime(2026, 11, 23, tzinfo=UTC) and end - start == timedelta(days=7)


def seed_three_weeks(path: Path, report: AuditReport) -> tuple[str, float]:
    """W46 and W47 with the same findings; in W48 the owners deleted the idle endpoint."""
    idle = next(f for f in report.findings if f.rule == "idle")
    with History(path) as history:
        history.record_run(at(report, MONDAY - timedelta(days=14)))
        history.record_run(at(report, MONDAY - timedelta(days=7)))
        history.record_run(at(report, MONDAY - timedelta(days=6)))  # two runs in W47: the latest counts
        history.record_run(at(without(report, idle.resource.name), MONDAY))
    cost = sum(v.monthly_cost_usd or 0
               for e in ENDPOINTS.section(report) if e.endpoint.name == idle.resource.name for v in e.variants)
    return idle.resource.name, cost


def test_digest_new_resolved_and_open(tmp_path: Path, base_report: AuditReport) -> None:
    path = tmp_path / "history.sqlite3"
    deleted, cost = seed_three_weeks(path, base_report)
    with History(path) as history:
        digest = build_digest(history, "2026-W48")
        assert digest is not None
        assert [r.finding.endpoint for r in digest.resolved] == [deleted]
        assert digest.resolved[0].realised_monthly_usd == pytest.approx(cost)
        assert digest.new == ()
        assert {o.weeks_open for o in digest.still_open} == {3}
        assert [p.week for p in digest.trend][-3:] == ["2026-W46", "2026-W47", "2026-W48"]
        assert digest.trend[0].monthly_cost_usd is None  # no run 8 weeks ago
        first = build_digest(history, "2026-W46")
        # One row per resource and variant: a variant's several findings rest on one plan.
        variants = {(f.resource.account_id, f.resource.region, f.resource.name, f.variant)
                    for f in base_report.findings}
        assert len(variants) < len(base_report.findings)
        assert first is not None and len(first.new) == len(variants) and first.previous_run is None
        assert build_digest(history, "2026-W40") is None


def test_weekly_command_sends_once_a_week(tmp_path: Path, base_report: AuditReport, smtp_server) -> None:
    seed_three_weeks(tmp_path / "history.sqlite3", base_report)
    controller, inbox = smtp_server
    config = config_file(tmp_path, '[email]\nsender = "auditor@example.com"\nrecipients = ["finops@example.com"]\n'
                                   f'smtp_host = "127.0.0.1"\nsmtp_port = {controller.port}\n')
    out = tmp_path / "digest.html"
    result = runner.invoke(app, ["weekly", "--config", str(config), "--week", "2026-W48", "--email",
                                 "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "sent to finops@example.com" in result.output
    (received,) = inbox.messages
    message = message_from_bytes(received.as_bytes(), policy=policy.default)
    assert message["Subject"].startswith("SageMaker audit weekly 2026-W48: 0 new, 1 resolved")
    html = message.get_body(("html",)).get_content()
    assert "Resolved since last week (1)" in html and "cid:" in html
    assert any(p.get_content_type() == "image/png" for p in message.walk())
    assert out.read_text().count("data:image/png;base64,") == 1

    again = runner.invoke(app, ["weekly", "--config", str(config), "--week", "2026-W48", "--email"])
    assert again.exit_code == 0 and "was sent at" in again.output and len(inbox.messages) == 1
    forced = runner.invoke(app, ["weekly", "--config", str(config), "--week", "2026-W48", "--email", "--force"])
    assert forced.exit_code == 0 and len(inbox.messages) == 2


def test_weekly_without_runs_says_so(tmp_path: Path, base_report: AuditReport) -> None:
    seed_three_weeks(tmp_path / "history.sqlite3", base_report)
    result = runner.invoke(app, ["weekly", "--config", str(config_file(tmp_path)), "--week", "2026-W30"])
    assert result.exit_code == 0 and "no audit runs in 2026-W30" in result.output
    bad = runner.invoke(app, ["weekly", "--config", str(config_file(tmp_path)), "--week", "2026-48"])
    assert bad.exit_code == 1 and "--week must look like 2026-W48" in bad.stderr


def test_run_records_history_unless_told_not_to(aws, tmp_path: Path) -> None:
    config = config_file(tmp_path)
    assert runner.invoke(app, ["run", "--config", str(config), "--no-history"]).exit_code == 0
    assert not (tmp_path / "history.sqlite3").exists()
    assert runner.invoke(app, ["run", "--config", str(config)]).exit_code == 0
    with History(tmp_path / "history.sqlite3") as history:
        assert len(history.runs()) == 1


def test_weekly_email_to_file_writes_the_digest_without_smtp(tmp_path: Path, base_report: AuditReport) -> None:
    seed_three_weeks(tmp_path / "history.sqlite3", base_report)
    config = config_file(tmp_path, '[email]\nsender = "auditor@example.com"\nrecipients = ["finops@example.com"]\n'
                                   'smtp_host = "127.0.0.1"\nsmtp_port = 1\n')  # nothing listens there
    eml = tmp_path / "out" / "digest.eml"
    result = runner.invoke(app, ["weekly", "--config", str(config), "--week", "2026-W48",
                                 "--email-to-file", str(eml)])
    assert result.exit_code == 0, result.output
    message = message_from_bytes(eml.read_bytes(), policy=policy.default)
    assert "2026-W48" in message["Subject"] and message["To"] == "finops@example.com"


def _version_8(plan: dict) -> dict:
    """A plan as schema 8 stored it: account_id, region, endpoint and resource_type at its top."""
    old = {k: v for k, v in plan.items() if k != "resource"}
    resource = plan["resource"]
    return {**old, "account_id": resource["account_id"], "region": resource["region"], "endpoint": resource["name"],
            "resource_type": resource["type"]}


def test_migration_9_rewrites_the_stored_plans_and_apply_reads_either_shape(tmp_path: Path,
                                                                             base_report: AuditReport) -> None:
    from auditor.act.plan import parse_plan
    from auditor.history.store import upgraded_plan
    from auditor.records import plan_to_dict

    plans = [plan_to_dict(p) for p in base_report.plans]
    assert plans and all(p["resource"]["kind"] == "endpoints" for p in plans)
    path = tmp_path / "v8.sqlite3"
    with sqlite3.connect(path) as db:
        for number, script in enumerate(MIGRATIONS[:8], start=1):
            db.executescript(script)
            db.execute(f"PRAGMA user_version = {number}")
        db.execute("INSERT INTO runs (id, started_at, window_start, window_end, period_seconds, regions, accounts,"
                   " endpoints, findings, monthly_cost_usd, monthly_savings_usd, errors) VALUES (1,"
                   " '2026-11-30T03:00:00+00:00', '2026-11-16T03:00:00+00:00', '2026-11-30T03:00:00+00:00', 3600,"
                   " '[\"us-east-1\"]', '[]', 1, 1, 10.0, 5.0, '[]')")
        db.executemany("INSERT INTO plans VALUES (1, ?, ?, ?)",
                       [(p["id"], i, json.dumps(_version_8(p), sort_keys=True)) for i, p in enumerate(plans)])
        db.execute("INSERT INTO applied (plan_id, account_id, region, endpoint, variant, caller, calls, plan, "
                   "started_at, finished_at, outcome, message, monthly_savings_usd) VALUES (?, ?, ?, ?, ?, 'arn',"
                   " '[]', ?, '2026-11-30T10:00:00+00:00', '2026-11-30T10:05:00+00:00', 'applied', '', 5.0)",
                   (plans[0]["id"], "123456789012", "us-east-1", plans[0]["resource"]["name"], plans[0]["variant"],
                    json.dumps(_version_8(plans[0]))))
    # What a file opened read-only (never migrated) gives: the same plan in the new shape.
    assert [upgraded_plan(_version_8(p)) for p in plans] == plans
    # `audit apply` reads the old shape too: the same resource, and the id its content gives.
    old, new = parse_plan(_version_8(plans[0])), parse_plan(plans[0])
    assert old.resource == new.resource and old.content_id == new.content_id == plans[0]["id"]
    with History(path) as history:
        assert history.schema_version == SCHEMA_VERSION
        assert history.latest_plans() == plans
        assert history.plan(plans[-1]["id"]) == plans[-1]
        (applied,) = history.applied()
        assert applied.plan["resource"] == plans[0]["resource"] and "endpoint" not in applied.plan
    with sqlite3.connect(path) as db:  # rewritten in the file, not only when read
        stored = [json.loads(body) for (body,) in db.execute("SELECT body FROM plans ORDER BY position")]
    assert stored == plans
