"""What a person sees: the HTML report rendered by headless Chromium, checked on its screenshot.

The screenshot is kept in tests/artifacts/ for a look. Chromium comes from Debian's package
(`.ci/run` installs it); without it the test is skipped on a developer machine and fails in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.report.render import OutputFormat, render
from fleet_report import synthetic_report

ARTIFACTS = Path(__file__).parent / "artifacts"
HEADER = (0x33, 0x33, 0x33)  # the findings table's header row


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run installs Debian's chromium package")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


def screenshot(html_file: Path, png: Path, profile: Path) -> Image.Image:
    subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--hide-scrollbars", "--window-size=1100,1400",
         f"--screenshot={png}", html_file.as_uri()],
        check=True, capture_output=True, timeout=120,
    )
    return Image.open(png).convert("RGB")


def test_report_renders_with_a_visible_findings_table(tmp_path: Path) -> None:
    report = synthetic_report(40)
    html_file = tmp_path / "report.html"
    html_file.write_text(render(report, OutputFormat.HTML), encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    png = ARTIFACTS / "report-chromium.png"
    image = screenshot(html_file, png, tmp_path / "profile")

    width, height = image.size
    assert (width, height) == (1100, 1400)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the page looks blank"
    # The findings table header: a long run of its dark colour on some row of pixels.
    header_rows = [
        y for y in range(0, height, 2)
        if sum(1 for x in range(0, width, 4) if image.getpixel((x, y)) == HEADER) * 4 > 600
    ]
    assert header_rows, "no table header visible"


def test_small_report_shows_its_charts(tmp_path: Path) -> None:
    report = synthetic_report(3)
    html_file = tmp_path / "report.html"
    html_file.write_text(render(report, OutputFormat.HTML), encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    image = screenshot(html_file, ARTIFACTS / "report-small-chromium.png", tmp_path / "profile")
    cpu_line = (49, 112, 191)  # the chart's CPU colour (report/chart.py)
    counts = {colour: n for n, colour in image.getcolors(maxcolors=1 << 20) or []}
    assert counts.get(cpu_line, 0) > 100, "no chart drawn"


def test_a_256_character_owner_tag_keeps_the_table_on_screen(tmp_path: Path) -> None:
    from dataclasses import replace

    report = synthetic_report(12)
    flagged = {f.resource.name for f in report.findings if f.severity.value != "info"}
    long_owner = "o" * 256  # one word: nothing to break at
    endpoints = tuple(replace(e, endpoint=replace(e.endpoint, tags={"owner": long_owner}))
                      if e.endpoint.name in flagged else e for e in ENDPOINTS.section(report))
    html_file = tmp_path / "report.html"
    html_file.write_text(render(ENDPOINTS.with_section(report, endpoints), OutputFormat.HTML), encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    image = screenshot(html_file, ARTIFACTS / "report-long-owner-chromium.png", tmp_path / "profile")
    width, height = image.size
    header_rows = [
        y for y in range(0, height, 2)
        if sum(1 for x in range(0, width, 4) if image.getpixel((x, y)) == HEADER) * 4 > 600
    ]
    assert header_rows, "no table header visible"
    # Every table header ends inside the 980-pixel sheet, centred in the window: nothing runs off-screen.
    right_edge = max(x for y in header_rows for x in range(width) if image.getpixel((x, y)) == HEADER)
    assert right_edge < width - 40, right_edge
