"""`audit run` in a terminal: the table fits the terminal's width (COLUMNS) with no word cut, the
summary first and the top plans (the rest counted, `--all` for everything); and the commands'
texts are whole: help, formats in any case, `plans show` of an unknown id, `audit weekly` with
no destination. Run against the demo fleet in the emulator, through the CLI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.report.render import (
    TABLE_PLANS,
    _finding_details,
    _finding_layout,
    _plan_details,
    _plan_layouts,
    plain_document,
    render_table,
)
from auditor_emulator.demo import seed_demo
from auditor_emulator.server import Emulator
from conftest import seeded_emulator, utc_now

runner = CliRunner()
WIDTHS = (80, 120, 200)


@pytest.fixture(scope="module")
def fleet(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo fleet in the emulator, and a config whose history is beside it."""
    home = tmp_path_factory.mktemp("terminal")
    config = home / "fleet.toml"
    config.write_text(f'[history]\npath = "{home / "history.sqlite3"}"\n', encoding="utf-8")
    with seeded_emulator(emulator, home, lambda emu: seed_demo(emu, utc_now(), 14)):
        yield config


def audit(config: Path, *args: str, columns: int | None = None) -> Any:
    result = runner.invoke(app, ["run", "--config", str(config), *args],
                           env={"COLUMNS": str(columns)} if columns else {})
    assert result.exit_code in (0, 1), result.output  # 1: the demo's deleted endpoint config is an error
    assert "Traceback" not in result.output
    return result


@pytest.fixture(scope="module")
def outputs(fleet: Path) -> dict[str, str]:
    """What `audit run` printed: by width with --all, at 80 columns by default, and the JSON report."""
    printed = {f"{width} --all": audit(fleet, "--all", "--no-history", columns=width).stdout for width in WIDTHS}
    printed["80"] = audit(fleet, columns=80).stdout  # recorded: `audit weekly` below reads it
    printed["json"] = audit(fleet, "--format", "JSON", "--no-history").stdout  # the format in any case
    return printed


def reference_words(doc: dict[str, Any]) -> set[str]:
    """Every word the table can show: each layout's text with room for every line (nothing wrapped)."""
    wide = 10**6
    plans, findings = doc["plans"], doc["findings"]
    texts = [render_table(doc, width=wide), render_table(doc, width=wide, limit=TABLE_PLANS),
             *_plan_details(doc, plans, wide), *_finding_details(findings, wide)]
    for layout in (*_plan_layouts(doc, plans), _finding_layout(findings)):
        texts += [" ".join(layout.headers), *(" ".join(row) for row in layout.rows)]
    return {word for text in texts for word in text.split()}


@pytest.mark.parametrize("shown", [*(f"{w} --all" for w in WIDTHS), "80"])
def test_the_table_fits_the_terminal_and_cuts_no_word(outputs: dict[str, str], shown: str) -> None:
    width = int(shown.split()[0])
    lines = outputs[shown].splitlines()
    assert lines, shown
    over = [line for line in lines if len(line) > width]
    assert not over, "\n".join(over)
    known = reference_words(plain_document(json.loads(outputs["json"])))
    rules = {word for line in lines for word in line.split() if set(word) == {"─"}}  # a table's header rule
    cut = [word for line in lines for word in line.split() if word not in known and word not in rules]
    assert not cut, cut
    assert not [line for line in lines if line != line.rstrip()]  # no trailing blanks


def test_summary_first_then_the_top_plans_and_how_many_are_not_shown(outputs: dict[str, str]) -> None:
    doc = json.loads(outputs["json"])
    plans = doc["plans"]
    assert len(plans) > TABLE_PLANS
    default, everything = outputs["80"], outputs["80 --all"]
    assert default.startswith("SageMaker audit") and everything.startswith("SageMaker audit")
    assert f"What to change: the first {TABLE_PLANS} of {len(plans)} plans" in default
    flat = " ".join(default.split())
    # A plan another covers (a consolidation's members) is counted in that one, not again.
    covered = {(r["type"], r["name"], r["account_id"], r["region"]) for p in plans for r in p["covers"]}
    hidden = sum(p["monthly_savings_usd"] for p in plans[TABLE_PLANS:]
                 if p["measured"] and p["monthly_savings_usd"] > 0 and (
                     p["resource"]["type"], p["resource"]["name"], p["resource"]["account_id"],
                     p["resource"]["region"]) not in covered)
    assert (f"{len(plans) - TABLE_PLANS} more plans (${hidden:,.2f}/month of the saving): `audit run --all` shows "
            "every plan and finding.") in flat
    assert all(f"plan {p['id']}" in flat for p in plans[:TABLE_PLANS])
    assert not any(f"plan {p['id']}" in flat for p in plans[TABLE_PLANS:])
    # --all: every plan, then the findings.
    assert all(f"plan {p['id']}" in " ".join(everything.split()) for p in plans)
    assert "Why: the findings" in everything and "Why: the findings" not in default
    # A wide terminal has the columns; a narrow one each plan in a few lines.
    assert any(line.startswith("Plan ") and line.endswith("Rests on") for line in outputs["200 --all"].splitlines())
    assert re.search(r"^1\. \$[\d,.]+/month  ", default, re.M)


def test_weekly_with_no_destination_prints_the_digest(fleet: Path, outputs: dict[str, str]) -> None:
    assert outputs["80"]  # the recorded run
    result = runner.invoke(app, ["weekly", "--config", str(fleet)])
    assert result.exit_code == 0, result.output
    using, done = result.stderr.splitlines()
    # The config and the history in use, as they are not the defaults.
    assert using == f"using config {fleet}, history {fleet.parent / 'history.sqlite3'}"
    assert re.fullmatch(r"digest for \d{4}-W\d\d printed \(--output FILE writes it as HTML\)", done)
    assert "/month" in result.stdout and len(result.stdout.splitlines()) > 3
    assert not list(fleet.parent.glob("*.html"))  # nothing written


def test_plans_show_of_an_unknown_id_says_so_whole(fleet: Path, outputs: dict[str, str]) -> None:
    assert outputs["80"]
    result = runner.invoke(app, ["plans", "show", "nosuchid", "--as", "CLI", "--config", str(fleet)])
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == ["error: no plan 'nosuchid' in the history database; `audit plans` lists the latest run's plans"]


def test_help_names_every_kind_and_its_options_plainly() -> None:
    shown = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "200"}).stdout
    flat = " ".join(shown.split())
    for kind in ("endpoints", "training", "processing", "transform jobs", "notebook instances",
                 "Studio domains and apps", "HyperPod clusters"):
        assert kind in flat, kind
    assert "--region REGION" in flat and "list[str]" not in flat
    assert "--all" in flat
    for command in (["prices", "update", "--help"], ["prices", "url", "--help"], ["config", "--help"]):
        assert "list[str]" not in runner.invoke(app, command).stdout


@pytest.mark.parametrize("args", [["run", "--format", "HTML"], ["run", "--format", "Markdown"],
                                  ["history", "--format", "JSON"], ["plans", "--format", "Json"]])
def test_formats_are_read_in_any_case(tmp_path: Path, args: list[str]) -> None:
    """The option is accepted: what fails after it is the (missing) history or region, not the format."""
    result = runner.invoke(app, [*args, "--config", str(tmp_path / "none.toml")])
    assert "Invalid value for '--format'" not in result.output
    assert "config file not found" in result.stderr


@pytest.mark.parametrize("width", [40, 80, 120])
def test_a_name_longer_than_the_line_is_the_only_thing_cut(outputs: dict[str, str], width: int) -> None:
    """A hostile name (one word wider than the terminal) is folded; no line is wider than the terminal."""
    doc = plain_document(json.loads(outputs["json"]))
    long_name = "x" * 150
    doc["plans"][0]["resource"]["name"] = long_name
    lines = render_table(doc, width=width, limit=TABLE_PLANS).splitlines()
    assert not [line for line in lines if len(line) > width]
    assert long_name in "".join(line.strip() for line in lines)
