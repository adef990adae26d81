"""The demo's HTML report as a manager opens it: headless Chromium at desktop and at phone width.

The demo fleet (endpoints, jobs, notebooks, HyperPod) is audited through the CLI against the
emulator. Chromium renders the report; a measuring script in a copy of the page reads the laid-out
page (each plan row's saving and where its cell is drawn, the headline's saving) into the DOM,
which Chromium prints (--dump-dom). The screenshots are kept in tests/artifacts/ for a look.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from html import escape
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor_emulator.fleet import demo_fleet, demo_jobs, seed_fleet, seed_jobs
from auditor_emulator.hyperpod import demo_clusters, seed_hyperpod
from auditor_emulator.server import Emulator
from auditor_emulator.workspaces import demo_notebooks, demo_processing, seed_workspaces
from conftest import seeded_emulator
from test_html_in_browser import ARTIFACTS, chromium

runner = CliRunner()
PHONE, DESKTOP = 420, 1100

# Run after layout: what the page shows, as JSON in a <pre id="measured">.
MEASURE = """<script>
window.addEventListener('load', () => {
  const rows = [...document.querySelectorAll('#plans td.saving')].map(cell => {
    const box = cell.getBoundingClientRect();
    return {usd: parseFloat(cell.dataset.usd), counted: cell.dataset.counted === 'yes',
            text: cell.innerText, left: box.left, right: box.right};
  });
  // In a frame (the phone's viewport), the result goes to the page Chromium prints.
  const host = window.parent === window ? document : window.parent.document;
  const out = host.createElement('pre');
  out.id = 'measured';
  out.textContent = JSON.stringify({
    width: window.innerWidth, page_width: document.documentElement.scrollWidth,
    headline: document.querySelector('#headline-text').innerText,
    saving: document.querySelector('#headline-saving').innerText, rows: rows});
  host.body.appendChild(out);
});
</script>"""


def browser(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         *args], check=True, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report_html(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("demo-browser")
    now = datetime.now(UTC)

    def seed(emu: Emulator) -> None:
        seed_fleet(emu, demo_fleet(), now=now, lookback_days=14)
        training, transform = demo_jobs()
        seed_jobs(emu, training, transform, now=now)
        seed_workspaces(emu, demo_notebooks(), demo_processing(), now=now)
        seed_hyperpod(emu, demo_clusters(), now=now, lookback_days=14)

    with seeded_emulator(emulator, home, seed):
        (home / "auditor.toml").write_text('[aws]\nregions = ["us-east-1"]\n')
        result = runner.invoke(app, ["run", "--format", "html", "--output", str(home / "report.html"),
                                     "--no-history"])
        assert result.exit_code == 0, result.output
        yield home / "report.html"


def measured(html: Path, width: int, profile: Path) -> dict:
    """The page laid out `width` CSS pixels wide. Headless Chromium's window is at least 500 pixels
    wide when it prints the DOM, so a phone's width is a frame of that width in a wider page."""
    probe = html.with_name(f"measured-{width}.html")
    page = html.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>")
    if width < 500:
        page = (f'<!DOCTYPE html><html><body style="margin:0"><iframe srcdoc="{escape(page)}" '
                f'style="width:{width}px;height:2000px;border:0"></iframe></body></html>')
    probe.write_text(page, encoding="utf-8")
    window = width if width >= 500 else width + 100
    dom = browser(f"--user-data-dir={profile}", f"--window-size={window},2000", "--virtual-time-budget=10000",
                  "--dump-dom", probe.as_uri()).stdout
    match = re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S)
    assert match, "the measuring script did not run"
    return dict(json.loads(match[1].replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")))


def money(text: str) -> float:
    return float(re.sub(r"[^\d.]", "", text))


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_the_first_rows_are_the_largest_savings_and_the_headline_is_their_sum(
        report_html: Path, tmp_path: Path, width: int) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    png = ARTIFACTS / f"demo-report-{width}px.png"
    browser(f"--user-data-dir={tmp_path / 'shot'}", f"--window-size={width},1600", f"--screenshot={png}",
            report_html.as_uri())
    assert png.stat().st_size > 10_000
    page = measured(report_html, width, tmp_path / "profile")
    rows = page["rows"]
    assert len(rows) >= 10
    savings = [r["usd"] for r in rows]
    assert savings == sorted(savings, reverse=True), savings
    assert savings[0] > 5000  # support-llm's empty instance: the component saving is there, and first
    # The headline saving is the sum of the counted rows; the rows it leaves out it names in its line.
    counted = [r["usd"] for r in rows if r["counted"]]
    assert money(page["saving"]) == pytest.approx(sum(counted), abs=0.01)
    left_out = [r for r in rows if not r["counted"] and r["usd"] != 0]
    # A plan counted in another (a consolidation's members) says which, and the headline how many.
    included = [r for r in left_out if "included in plan" in r["text"]]
    if included:
        assert f"{len(included)} plans counted in another (${sum(r['usd'] for r in included):,.2f})" in page["headline"]
    not_counted = [r for r in left_out if r["usd"] > 0 and r not in included]
    costing_more = [r for r in left_out if r["usd"] < 0]
    headline = page["headline"]
    assert f"${sum(counted):,.2f}/month to save" in headline
    if not_counted:
        assert f"not counted: {len(not_counted)} plan" in headline
        assert f"(${sum(r['usd'] for r in not_counted):,.2f})" in headline
    if costing_more:
        assert f"cost{'s' if len(costing_more) == 1 else ''} ${-sum(r['usd'] for r in costing_more):,.2f} more" \
            in headline
    # Nothing runs off the screen: the page is no wider than its viewport, and every saving is in view.
    assert page["width"] == width
    assert page["page_width"] <= width, page["page_width"]
    for row in rows:
        assert row["left"] >= 0 and row["right"] <= width, row
