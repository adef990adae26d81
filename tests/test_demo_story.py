"""`audit demo`, run once for this module: its report files, and the story after the audit. One plan
applied in the emulator (dry run, then --yes, under apply's own role), the next run verifying it,
the week's digest counting it realised, and the demo's history and config left for `audit plans`.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from email import message_from_bytes, policy
from pathlib import Path

import pytest
import time_machine
from typer.testing import CliRunner

from auditor.cli import app
from auditor.history.store import History
from auditor.history.weekly import build_digest, iso_week
from auditor.report.email_message import HTML_BUDGET_BYTES
from auditor_emulator.demo import CONFIG_NAME, HISTORY_NAME, move_history
from auditor_emulator.fleet import demo_fleet
from auditor_emulator.server import Emulator
from conftest import check_report_json, seeded_emulator

runner = CliRunner()
DEMO_STDERR: list[str] = []  # what the module's demo said on stderr
APPLY_CALLER = "arn:aws:sts::123456789012:assumed-role/SageMakerAuditorApply/"
OPTED_IN = "search-embeddings"  # the demo fleet's endpoint tagged auditor:apply=allowed
# The demo's figures move a little with the hour it runs (its 14-day window starts at another hour):
# this module runs it at the instant the docs' quotes of it were produced at.
DEMO_CLOCK = datetime(2026, 12, 2, 6, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def demo(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The demo's output directory and what it printed (stdout)."""
    home = tmp_path_factory.mktemp("demo-home")
    with seeded_emulator(emulator, home, lambda emu: None), time_machine.travel(DEMO_CLOCK, tick=True):
        # As `make demo` in an 80-column terminal.
        result = runner.invoke(app, ["demo", "--output-dir", "out"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, result.output
        DEMO_STDERR.append(result.stderr)
        yield home / "out", result.stdout


@pytest.fixture(scope="module")
def report(demo: tuple[Path, str]) -> dict:
    """The demo's JSON document, valid against the published schema (a full run of every kind)."""
    return check_report_json(json.loads((demo[0] / "report.json").read_text()))


@pytest.fixture(scope="module")
def applied_plan(report: dict) -> dict:
    (plan,) = [p for p in report["plans"] if p["resource"]["name"] == OPTED_IN]
    return plan


def cli(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_demo_writes_its_reports(demo: tuple[Path, str], report: dict) -> None:
    out, printed = demo
    for name in ("report.html", "report.json", "report.eml"):
        assert (out / name).stat().st_size > 1000
    message = message_from_bytes((out / "report.eml").read_bytes(), policy=policy.default)
    assert message["Subject"].startswith("SageMaker audit: ")
    assert "/month to save" in message["Subject"]
    # The demo's fleet outgrows the HTML a mail client shows whole (Gmail clips it at about 102 KB):
    # the mail shows what fits and attaches every finding as CSV, as it does for any large fleet.
    assert message.get_content_type() == "multipart/mixed"
    body, attachment = message.iter_parts()
    assert [part.get_content_type() for part in body.iter_parts()] == ["text/plain", "multipart/related"]
    assert attachment.get_filename() == "sagemaker-audit-findings.csv"
    assert len(attachment.get_content().splitlines()) == len(report["findings"]) + 1
    html = message.get_body(("html",))
    assert len(html.get_content().encode("utf-8")) <= HTML_BUDGET_BYTES
    images = [part for part in message.walk() if part.get_content_type() == "image/png"]
    assert images and all(f"cid:{part['Content-ID'][1:-1]}" in html.get_content() for part in images)
    assert "report.html" in printed
    # Every plan with its risk and its change (or why it has none), as AWS CLI commands.
    changes = (out / "plans.txt").read_text()
    for plan in report["plans"]:
        assert f"# plan {plan['id']}" in changes
        assert plan["change"] is None or "aws " in changes.split(f"# plan {plan['id']}")[1].split("\n# plan ")[0]
    # The history is whole in its place: no staging directory, no stray SQLite companion.
    assert sorted(p.name for p in out.iterdir()) == sorted([
        "report.html", "report.json", "report.eml", "plans.txt", "weekly.html", HISTORY_NAME, CONFIG_NAME])


def norm(text: str) -> str:
    """Text as one line of single spaces: the demo wraps its lines to the terminal's width."""
    return " ".join(text.split())


def test_the_demo_tells_the_story_in_a_few_lines(demo: tuple[Path, str], applied_plan: dict) -> None:
    printed = demo[1]
    story = norm(printed[printed.index("From advice to action"):])
    plan_id = applied_plan["id"]
    steps = [
        f"From advice to action: plan {plan_id} on {OPTED_IN} (tagged auditor:apply=allowed).",
        f"$ audit apply {plan_id} # a dry run: nothing is changed",
        f"search-embeddings / AllTraffic: 4 x ml.m5.4xlarge -> 3 x ml.m5.xlarge, "
        f"saves ${applied_plan['monthly_savings_usd']:,.2f}/month, risk low",
        "calls: sagemaker CreateEndpointConfig, cloudwatch PutMetricAlarm x2, sagemaker UpdateEndpoint",
        "guards pass: would apply as role SageMakerAuditorApply; nothing was changed",
        f"$ audit apply {plan_id} --yes # deploys it blue/green, waits",
        f"plan {plan_id} applied: endpoint {OPTED_IN} is InService on {OPTED_IN}-{plan_id} (was {OPTED_IN}-config) (",
        "$ audit run # the next run",
        f"{OPTED_IN} / AllTraffic now runs 3 x ml.m5.xlarge on {OPTED_IN}-{plan_id}: plan {plan_id} verified by run 2",
        f"digest {iso_week_of(demo[0])}: applied and verified this week: plan {plan_id}, $",
        "Open out/report.html (beside it: report.json, report.eml, plans.txt).",
        f"audit plans show {plan_id} --as cli --config ",
    ]
    at = 0
    for step in steps:  # each in the story, in this order
        assert norm(step) in story[at:], step
        at = story.index(norm(step), at)
    assert [call["operation"] for call in applied_plan["change"]["calls"]] == [
        "CreateEndpointConfig", "PutMetricAlarm", "PutMetricAlarm", "UpdateEndpoint"]


def test_the_demo_prints_about_sixty_lines_that_fit_80_columns(demo: tuple[Path, str]) -> None:
    """What `make demo` prints, stdout and stderr, in an 80-column terminal."""
    printed = demo[1].splitlines()
    lines = printed + DEMO_STDERR[-1].splitlines()
    assert len(lines) <= 62, "\n".join(lines)
    assert not [line for line in lines if len(line) > 80]
    # The summary first; it ends with where the report is and what to try next.
    assert printed[0].startswith("SageMaker audit")
    assert any(line.startswith("Open out/report.html") for line in printed[-7:])
    assert "audit emulator" in printed[-1]


def iso_week_of(out: Path) -> str:
    with History(out / HISTORY_NAME, reading=True) as history:
        return iso_week(history.runs(limit=1)[0].started_at)


def test_audit_plans_reads_the_demo_history_through_its_config(demo: tuple[Path, str], report: dict) -> None:
    config = demo[0] / CONFIG_NAME
    assert tomllib.loads(config.read_text()) == {"history": {"path": str((demo[0] / HISTORY_NAME).resolve())}}
    listed = cli("plans", "--config", str(config)).splitlines()
    latest = json.loads(cli("plans", "--config", str(config), "--format", "json"))
    assert listed[0].split() == ["id", "risk", "to", "save/month", "change", "what"]
    assert [line.split()[0] for line in listed[1:]] == [p["id"] for p in latest] and latest
    assert all(re.fullmatch(r"[0-9a-f]{10}", p["id"]) for p in latest)
    # Every plan the demo printed (the first run's) is shown from the history, as AWS CLI commands.
    for plan in report["plans"]:
        shown = cli("plans", "show", plan["id"], "--as", "cli", "--config", str(config))
        assert shown.startswith(f"# plan {plan['id']}: ")
        assert plan["change"] is None or "\naws " in shown


def test_the_applied_plan_is_recorded_verified_and_counted_realised(demo: tuple[Path, str],
                                                                   applied_plan: dict) -> None:
    out = demo[0]
    with History(out / HISTORY_NAME, reading=True) as history:
        runs = history.runs()
        (change,) = history.applied()
        digest = build_digest(history, iso_week(runs[0].started_at))
    assert [r.id for r in runs] == [2, 1]
    assert (change.plan_id, change.endpoint, change.outcome) == (applied_plan["id"], OPTED_IN, "applied")
    # Apply's own role, not the audit's credentials.
    assert change.caller.startswith(APPLY_CALLER)
    assert [c["operation"] for c in change.calls] == [c["operation"] for c in applied_plan["change"]["calls"]]
    assert (change.previous_config, change.new_config) == (f"{OPTED_IN}-config", f"{OPTED_IN}-{applied_plan['id']}")
    assert change.verified_run_id == 2
    assert digest is not None
    (saving,) = digest.applied
    assert saving.change.plan_id == applied_plan["id"]
    # 4 x ml.m5.4xlarge before, 3 x ml.m5.xlarge in the run that verified it: the plan's saving.
    assert saving.realised_monthly_usd == pytest.approx(applied_plan["monthly_savings_usd"], abs=0.01)
    assert saving.realised_monthly_usd > 0 and digest.realised_monthly_usd >= saving.realised_monthly_usd
    assert applied_plan["id"] in (out / "weekly.html").read_text()
    assert "applied" in cli("history", "--applied", "--config", str(out / CONFIG_NAME))


def test_the_seed_opts_in_exactly_the_endpoint_the_demo_applies() -> None:
    assert [s.name for s in demo_fleet() if s.tags.get("auditor:apply") == "allowed"] == [OPTED_IN]


def test_a_new_history_replaces_the_old_with_its_companions(tmp_path: Path) -> None:
    """A stale -wal beside the old file would be applied to the new one: it goes with the old file."""
    target = tmp_path / HISTORY_NAME
    target.write_bytes(b"old")
    (tmp_path / f"{HISTORY_NAME}-wal").write_bytes(b"stale")
    (tmp_path / f"{HISTORY_NAME}-shm").write_bytes(b"stale")
    built = tmp_path / "staging" / HISTORY_NAME
    built.parent.mkdir()
    built.write_bytes(b"new")
    move_history(built, target)
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == [HISTORY_NAME, "staging"]
    assert list(built.parent.iterdir()) == []


def test_without_an_opted_in_endpoint_the_story_says_so_in_one_line(tmp_path: Path) -> None:
    from types import SimpleNamespace
    from typing import cast

    from auditor.config import AuditConfig
    from auditor.models import AuditReport
    from auditor_emulator.demo_apply import tell_the_action_story

    printed: list[str] = []
    untagged = [s for s in demo_fleet() if s.name != OPTED_IN]
    story = tell_the_action_story(AuditConfig(), cast(AuditReport, SimpleNamespace(plans=[])), untagged, tmp_path,
                                  printed.append)
    assert story.plan_id is None and story.applied is None
    assert story.problem == ("the demo audit made no plan with a change on an endpoint tagged "
                             "auditor:apply=allowed: nothing for `audit apply`")


def _masked(text: str) -> list[str]:
    """Words with their digits masked: the demo's dates and metrics move with the day it runs."""
    return re.sub(r"\d", "0", text).split()


def test_the_readme_shows_the_first_lines_the_demo_prints(demo: tuple[Path, str]) -> None:
    """The README's first screen is the demo's output at 80 columns, as `make demo` prints it."""
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- produced by: audit demo \(its first lines, COLUMNS=80\) -->\n```text\n(.*?)^```",
                      readme, re.M | re.S)
    assert block
    shown = block.group(1).splitlines()
    assert all(len(line) <= 80 for line in shown)
    printed = demo[1].splitlines()[: len(shown)]
    assert _masked("\n".join(shown)) == _masked("\n".join(printed))


# The docs quote the demo's plans under `<!-- produced by: audit ... -->` (docs/rules.md: native
# consolidation, scale from zero, consolidating onto inference components): each quoted line is one
# the demo prints now, so a change to the demo's figures fails here until the docs follow.
QUOTED = re.compile(r"^<!-- produced by: (audit (?:plans|demo)[^\n]*?) -->\n```text\n(.*?)^```", re.M | re.S)


def test_the_rules_page_quotes_the_demo_as_it_runs(demo: tuple[Path, str], report: dict) -> None:
    page = (Path(__file__).parent.parent / "docs" / "rules.md").read_text(encoding="utf-8")
    quoted = QUOTED.findall(page)
    assert len(quoted) >= 5, "native consolidation, scale from zero (2), consolidation (2)"
    config = str(demo[0] / CONFIG_NAME)
    for command, text in quoted:
        words = command.split(" (")[0].split()[1:]
        if words[0] == "demo":  # a finding's message, from the demo's report.json
            rule = re.search(r"the ([a-z-]+) finding", command)
            assert rule, command
            messages = [f["message"] for f in report["findings"] if f["rule"] == rule.group(1)]
            assert text.rstrip("\n") in messages, command
            continue
        printed = cli(*[config if w == "audit-demo/auditor.toml" else w for w in words]).splitlines()
        for line in text.splitlines():
            assert line in printed, f"{command}: {line!r} is not what it prints now"
