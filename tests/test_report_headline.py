"""The report's headline through the CLI: one count of findings (and of the not judged) in every
output, and a run that could not read AWS says "incomplete" in the mail's subject and every
headline, never "0 findings" or "$0" for what it did not read."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now
from faultproxy import FaultProxy, Faults, closed_port

runner = CliRunner()
FLEET = [
    EndpointSpec("busy", (VariantSpec("ml.c5.xlarge", 1, cpu=Load(70, 5), memory=Load(60, 2)),),
                 tags={"owner": "busy-team@example.com"}),
    EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),),
                 tags={"owner": "ml-platform@example.com"}),
    EndpointSpec("idle", (VariantSpec("ml.m5.large", 1, cpu=Load(1, 0.2, 0.1), invocations_per_hour=0),),
                 tags={"owner": "ml-platform@example.com"}),
]
FAST = ("[aws]\nconnect_timeout_seconds = 1\nread_timeout_seconds = 2\nmax_attempts = 2\n[jobs]\nenabled = false\n"
        '[email]\nsender = "audit@example.com"\nrecipients = ["ml-platform@example.com"]\n')


@pytest.fixture
def config(aws, tmp_path: Path) -> Iterator[Path]:
    seed_fleet(aws, FLEET, now=utc_now())
    path = tmp_path / "auditor.toml"
    path.write_text(FAST + f'[history]\npath = "{tmp_path / "history.sqlite3"}"\n')
    yield path


def run(config: Path, fmt: str, out: Path, *extra: str):
    return runner.invoke(app, ["run", "--config", str(config), "--format", fmt, "--output", str(out), *extra])


def mail(path: Path):
    """The recipients' message that --email-to-file wrote (each owner's is beside it)."""
    return message_from_bytes(path.read_bytes(), policy=policy.default)


def test_one_count_of_findings_and_not_judged_in_every_output(config: Path, tmp_path: Path) -> None:
    result = run(config, "json", tmp_path / "r.json", "--email-to-file", str(tmp_path / "r.eml"))
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "r.json").read_text())
    findings = sum(1 for f in doc["findings"] if f["severity"] != "info")
    not_judged = len(doc["findings"]) - findings
    assert findings and not_judged, "the fleet must have both for this test to mean something"
    summary = doc["summary"]
    assert (summary["findings"], summary["not_judged"]) == (findings, not_judged)
    counts = f"{findings} findings (+{not_judged} not judged)"
    headline = summary["headline"]
    assert headline.startswith(f"SageMaker audit: {counts}, ${summary['monthly_savings_usd']:,.2f}/month to save")
    # The run's log line, the mail's subject, and the first line of every format say the same.
    log = next(line for line in result.stderr.splitlines() if line.startswith("audit: "))
    assert log.startswith(f"audit: {counts}")
    assert " ".join(mail(tmp_path / "r.eml")["Subject"].split()) == headline
    for fmt, first in (("text", headline), ("markdown", "# " + headline), ("table", headline)):
        out = tmp_path / f"r.{fmt}"
        assert run(config, fmt, out, "--no-history").exit_code == 0
        text = out.read_text()
        assert text.splitlines()[0].replace("\\", "") == first.replace("\\", ""), fmt
    html = (tmp_path / "r.html")
    assert run(config, "html", html, "--no-history").exit_code == 0
    page = html.read_text()
    assert f'<h1 id="headline-text">{headline}</h1>' in page
    # Figures before caveats: the price basis is the footnote, after every table.
    assert page.index("Basis: on-demand list prices") > page.index('id="findings"')
    # No empty cell (a utilisation bar's cells are coloured, not empty), and an owner's address
    # breaks after its separators, not inside a word.
    assert not re.findall(r"<td(?![^>]*bgcolor)[^>]*>\s*</td>", page)
    assert "ml-<wbr>platform@<wbr>example.<wbr>com" in page
    # The history lists the same count.
    listed = json.loads(runner.invoke(app, ["history", "--config", str(config), "--format", "json"]).stdout)
    assert listed[0]["findings"] == findings


def test_plans_biggest_saving_first_and_max_risk(config: Path, tmp_path: Path) -> None:
    assert run(config, "json", tmp_path / "r.json").exit_code == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    savings = [p["monthly_savings_usd"] for p in doc["plans"]]
    assert len(savings) >= 2 and savings == sorted(savings, reverse=True)
    counted = sum(p["monthly_savings_usd"] for p in doc["plans"] if p["measured"] and p["monthly_savings_usd"] > 0)
    assert doc["summary"]["monthly_savings_usd"] == pytest.approx(counted, abs=0.01)
    for plan in doc["plans"]:
        for alternative in plan["alternatives"]:
            assert alternative["advice"] != plan["proposed"]["advice"]
    for fmt in ("text", "markdown", "html"):  # an option that saves nothing is never shown as "$0.00"
        assert run(config, fmt, tmp_path / f"r.{fmt}", "--no-history").exit_code == 0
        assert "($0.00)" not in (tmp_path / f"r.{fmt}").read_text(), fmt
    listed = runner.invoke(app, ["plans", "--config", str(config), "--format", "json", "--max-risk", "LOW"])
    assert listed.exit_code == 0, listed.output
    low = json.loads(listed.stdout)
    assert all((p["risk"] or {}).get("level") == "low" for p in low)
    assert [p["monthly_savings_usd"] for p in low] == sorted((p["monthly_savings_usd"] for p in low), reverse=True)
    # The report of `run --max-risk low` says what it leaves out, in the headline's own line.
    above = [p for p in doc["plans"] if (p["risk"] or {}).get("level") != "low"]
    assert run(config, "json", tmp_path / "low.json", "--no-history", "--max-risk", "low").exit_code == 0
    low_doc = json.loads((tmp_path / "low.json").read_text())
    assert len(low_doc["plans"]) == len(doc["plans"]) - len(above)
    if above:
        assert f"left out: {len(above)} plan" in low_doc["summary"]["headline"]


def _assert_incomplete(tmp_path: Path, result, stem: str) -> None:
    assert result.exit_code == 1
    doc = json.loads((tmp_path / f"{stem}.json").read_text())
    headline = doc["summary"]["headline"]
    assert doc["summary"]["incomplete"] is True
    assert headline.startswith("SageMaker audit incomplete: 1 region not read (us-east-1)"), headline
    assert "0 findings" not in headline and "$0" not in headline
    subject = " ".join(mail(tmp_path / f"{stem}.eml")["Subject"].split())
    assert subject == headline
    message = mail(tmp_path / f"{stem}.eml")
    html = message.get_body(("html",)).get_content()
    text = message.get_body(("plain",)).get_content()
    assert text.splitlines()[0] == headline
    assert "incomplete" in re.sub(r"<[^>]+>", "", html.split("</h1>")[0])
    for claim in ("Nothing to change.", "No waste found.", "$0.00</div>"):
        assert claim not in html and claim not in text


def test_a_closed_port_is_an_incomplete_report_and_mail(config: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", closed_port())
    result = run(config, "json", tmp_path / "closed.json", "--no-history",
                 "--email-to-file", str(tmp_path / "closed.eml"))
    _assert_incomplete(tmp_path, result, "closed")


def test_server_errors_are_an_incomplete_report_and_mail(config: Path, aws, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with FaultProxy(aws.url, Faults(server_errors=10_000)) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        result = run(config, "json", tmp_path / "failing.json", "--no-history",
                     "--email-to-file", str(tmp_path / "failing.eml"))
    _assert_incomplete(tmp_path, result, "failing")
