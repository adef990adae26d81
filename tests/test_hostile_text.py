"""Text from AWS and from users is data in every output (issue 17, items 2 and 15).

A FailureReason such as `... [/opt/ml/model] ...` once ended `audit run` with Rich's MarkupError;
Teams cards backslashed every `-`. The end-to-end test runs the CLI against the emulator; the property
tests (Hypothesis) put AWS-legal names and tag values and arbitrary free text into every field a user or
AWS controls, render every format, and check that nothing crashes, the text is there literally (after
the format's own documented transformation) and no markup, mention or link comes from the data.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from dataclasses import replace
from email import message_from_bytes, policy
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import ChatConfig
from auditor.deliver.chat import Line, Summary, _money, report_summary, slack_payload, teams_escape, teams_payload
from auditor.history.store import FindingRecord, RunSummary
from auditor.history.weekly import Digest, OpenFinding, ResolvedFinding, WeekPoint
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.kinds.jobs.kind import KIND as JOBS
from auditor.kinds.jobs.models import Experiment, ExperimentRun, Verdict
from auditor.kinds.registry import monthly_cost_by_kind
from auditor.kinds.workspaces.models import (
    NotebookCost,
    NotebookInstance,
    StudioApp,
    StudioAppCost,
    StudioDomain,
    WorkspacesSection,
)
from auditor.models import AuditError, AuditReport
from auditor.report.document import report_to_dict
from auditor.report.email_message import build_report_message
from auditor.report.render import (
    OutputFormat,
    csv_cell,
    md_cell,
    plain_document,
    render,
    render_table,
    render_tables,
)
from auditor.report.weekly import build_weekly_message, render_weekly_csv
from auditor.text import one_line
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet
from conftest import utc_now
from fleet_report import synthetic_report
from helpers import NOW

runner = CliRunner()

FAILURE_REASON = ("CannotStartContainerError. Please ensure the model container for variant AllTraffic starts "
                  "correctly when invoked with 'docker run <image> serve': [/opt/ml/model] and [bold]x[/bold]")


def test_a_failure_reason_with_brackets_does_not_stop_the_run(aws, tmp_path: Path) -> None:
    """Issue 17 #2: the table (every finding: --all) and the mail show AWS's FailureReason as it is."""
    seed_fleet(aws, [EndpointSpec("broken", status="Failed"),
                     EndpointSpec("oversized", (VariantSpec("ml.m5.4xlarge", 2, cpu=Load(5, 1), memory=Load(8, 1)),))],
               now=utc_now())
    aws.backend("sagemaker", "us-east-1").endpoints["broken"].failure_reason = FAILURE_REASON
    eml = tmp_path / "report.eml"
    result = runner.invoke(app, ["run", "--no-history", "--all", "--email-to-file", str(eml)],
                           env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    flat = " ".join(result.stdout.split())
    assert "[/opt/ml/model]" in flat and "[bold]x[/bold]" in flat and "oversized" in flat
    message = message_from_bytes(eml.read_bytes(), policy=policy.default)
    assert "[/opt/ml/model] and [bold]x[/bold]" in message.get_body(("plain",)).get_content()
    assert "[/opt/ml/model] and [bold]x[/bold]" in html.unescape(message.get_body(("html",)).get_content())


def test_teams_leaves_a_dash_alone() -> None:
    """Issue 15: dates and names keep their dashes; only what a TextBlock reads is backslashed."""
    assert teams_escape("2026-11-16 to 2026-11-30") == "2026-11-16 to 2026-11-30"
    assert teams_escape("scratch-gpu") == "scratch-gpu"
    assert teams_escape("team_ml") == "team_ml"
    assert teams_escape("- not a list") == "\\- not a list"
    assert teams_escape("1. not a list") == "1\\. not a list"
    assert teams_escape("**x** [a](http://evil)") == "\\*\\*x\\*\\* \\[a\\](http://evil)"


# --- the property tests ---------------------------------------------------------------------------

# AWS names: `[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}`, at most 63 characters; tag values: letters, digits,
# spaces and `_ . : / = + - @`, at most 256.
NAMES = st.from_regex(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}", fullmatch=True).filter(lambda name: len(name) <= 63)
TAG_VALUES = st.text(st.one_of(st.characters(categories=("L", "N", "Zs")), st.sampled_from("_.:/=+-@")),
                     max_size=256)
# Pieces every format reads as something: Rich markup, Slack mentions and links, HTML, Markdown, Teams
# date functions, spreadsheet formulas, entities, emoji codes, line breaks and terminal escapes.
HOSTILE = ("[/opt/ml/model]", "[bold]x[/bold]", "[link=http://evil]y[/link]", "<!channel>", "<@U123>",
           "<http://evil|click>", "<script>alert(1)</script>", "<b onmouseover=x>", "\" ' `", "*bold* _it_ ~s~",
           "**b** __u__", "[a](http://evil)", "![i](http://evil/i.png)", "| x | y |",
           "{{DATE(2017-02-14T06:08:39Z, SHORT)}}",
           "=HYPERLINK(\"http://evil\")", "+1", "-2", "@SUM(A1)", "&amp; &lt; &#x41;", ":warning:", "# h", "- item",
           "1. item", "> quote", "---", "\x1b[31mred\r\nBcc: x@example.com", "\\", "\\*", "@here", "$x$", "\t",
           "\u2028", "\x00", "\x85")
FREE_TEXT = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(st.characters(exclude_categories=("Cs",)),
                                                                   max_size=40)), max_size=5).map("".join)


@cache
def _base() -> AuditReport:
    return synthetic_report(4)


def _hostile(names: list[str], variant: str, owner: str, message: str, reason: str, error: str,
             partial: str, hyperparameter: str = "lr", setting: str = "0.1", metric: str = "loss",
             notebook: str = "nb", profile: str = "alice") -> AuditReport:
    """The synthetic report with every user or AWS controlled field replaced, an experiment of two
    training runs (hyperparameter names and values, and metric names, are the user's own), a notebook
    instance and a Studio app of a user profile."""
    base = _base()
    rename = {e.endpoint.name: n for e, n in zip(ENDPOINTS.section(base), names, strict=True)}
    endpoints = []
    for i, e in enumerate(ENDPOINTS.section(base)):
        ep = replace(e.endpoint, name=rename[e.endpoint.name], tags={"owner": owner, "team": owner},
                     variants=tuple(replace(v, name=variant) for v in e.endpoint.variants),
                     skipped_reason=reason if i == 1 else None,
                     not_judged_reason=f"endpoint status is Failed ({reason})" if i == 3 else None)
        endpoints.append(replace(e, endpoint=ep, variants=tuple(replace(v, variant=replace(v.variant, name=variant))
                                                                   for v in e.variants)))
    findings = tuple(replace(f, resource=replace(f.resource, name=rename[f.resource.name]),
                             variant=variant if f.variant else None, message=message) for f in base.findings)
    plans = tuple(replace(p, resource=replace(p.resource, name=rename[p.resource.name]),
                          variant=variant if p.variant else None) for p in base.plans)
    errors = (AuditError("us-east-1", names[0], "discover", error), AuditError("us-east-1", None, "collect", error))
    runs = tuple(ExperimentRun(f"{names[0]}-{i}", "ml.m5.xlarge", 1, {hyperparameter: setting}, 3600, 0.23, 0.07,
                               True, {metric: 0.5}) for i in (1, 2))
    experiment = Experiment(names[0], reason, (hyperparameter,), runs,
                            (Verdict({hyperparameter: setting}, "ml.m5.xlarge", 0.23, {"ml.m5.xlarge": 0.23}),))
    instance = NotebookInstance("123456789012", "us-east-1", notebook, f"arn:aws:sagemaker:::{notebook}",
                                "InService", "ml.t3.medium", 5, notebook, (), NOW, NOW, {"owner": profile})
    app = StudioApp("123456789012", "us-east-1", "d-abc", "JupyterLab", notebook, profile, "InService",
                    "ml.t3.medium", NOW, NOW, None)
    workspaces = WorkspacesSection(notebooks=(NotebookCost(instance, 0.05, 36.5, 0.7, "hosting"),),
                                   domains=(StudioDomain("123456789012", "us-east-1", "d-abc", notebook, "InService"),),
                                   apps=(StudioAppCost(app, 0.05, 36.5, 3.0),))
    sections = {**base.sections, "endpoints": tuple(endpoints), "workspaces": workspaces,
                "jobs": replace(JOBS.section(base), experiments=(experiment,))}
    return replace(base, sections=sections, monthly_cost_by_kind=monthly_cost_by_kind(sections, base.window),
                   findings=findings, plans=plans, errors=errors, partial=partial or None)


def _clean(names: list[str], variant: str, owner: str, message: str, reason: str, error: str,
           partial: str, hyperparameter: str = "lr", setting: str = "0.1", metric: str = "loss",
           notebook: str = "nb", profile: str = "alice") -> AuditReport:
    """The same report with harmless text of the same lengths: the markup every format has of its own."""
    return _hostile([chr(ord("a") + i) * len(n) for i, n in enumerate(names)], "v" * len(variant), "o" * len(owner),
                    "m" * len(message), "r" * len(reason), "e" * len(error), "p" * len(partial),
                    "h" * len(hyperparameter), "s" * len(setting), "x" * len(metric), "n" * len(notebook),
                    "u" * len(profile))


def norm(text: str) -> str:
    """What each format keeps of a value: control characters become spaces, runs of space one."""
    return " ".join(one_line(text).split())


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[str, ...]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "wbr":
            # The report's own line-break opportunity inside an address (after `@`, `.`, `-`, `/`...):
            # no element and no space, the value reads on.
            return
        self.tags.append((tag, tuple(name for name, _ in attrs)))
        self.text.append(" " + " ".join(value or "" for _, value in attrs) + " ")

    def handle_endtag(self, tag: str) -> None:
        self.tags.append(("/" + tag, ()))
        self.text.append(" ")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _html(document: str) -> tuple[list[tuple[str, tuple[str, ...]]], str]:
    parser = _Html()
    parser.feed(document)
    parser.close()
    return parser.tags, norm(_html_kept("".join(parser.text)))


def _html_kept(text: str) -> str:
    """An HTML parser drops NUL characters (or makes them U+FFFD)."""
    return text.replace("\x00", "").replace("\ufffd", "")


MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _markdown(document: str) -> tuple[list[str], list[str]]:
    """Every token but text (the structure), and the plain text of each inline run (a cell, a line)."""
    structure, runs = [], []
    for token in MARKDOWN.parse(document):
        structure.append(token.type)
        if token.type == "inline":
            children = token.children or []
            structure += [c.type for c in children if c.type != "text"]
            runs.append(norm("".join(c.content if c.type == "text" else " " for c in children)))
    return structure, runs


def _unescape_teams(text: str) -> str:
    """What a TextBlock shows: CommonMark backslash escapes undone, the brace breakers dropped."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text).replace("\u200b", "")


def _check_outputs(report: AuditReport, clean: AuditReport, values: dict[str, str]) -> None:
    everywhere = [values[k] for k in ("names0", "names1", "variant", "message", "error")]
    # Text: one line per value, every value there.
    text = render(report, OutputFormat.TEXT)
    for value in [*everywhere, values["owner"], values["reason"], values["partial"], values["notebook"],
                  values["profile"]]:
        assert norm(value) in norm(text)
    # The terminal table: no MarkupError, brackets and colons kept (wide enough not to fold a cell).
    render(report, OutputFormat.TABLE, color=True)  # as on a terminal
    table = render_table(plain_document(report_to_dict(report)), width=20_000)
    for value in [*everywhere, values["reason"], values["partial"]]:
        assert norm(value) in norm(table)
    # JSON: the values exactly.
    doc = json.loads(render(report, OutputFormat.JSON))
    assert {f["message"] for f in doc["findings"]} == {values["message"]}
    assert doc["errors"][0]["message"] == values["error"] and doc["partial"] == (values["partial"] or None)
    # CSV: one row a finding, the values exactly (a formula-like start behind an apostrophe).
    rows = list(csv.DictReader(io.StringIO(render(report, OutputFormat.CSV))))
    assert len(rows) == len(report.findings)
    assert {r["message"] for r in rows} == {csv_cell(values["message"])}
    assert {r["resource"] for r in rows} <= {e.endpoint.name for e in ENDPOINTS.section(report)}
    # Markdown: the same blocks, cells and inline markup as with harmless text; the values in a cell.
    structure, runs = _markdown(render(report, OutputFormat.MARKDOWN))
    assert structure == _markdown(render(clean, OutputFormat.MARKDOWN))[0]
    for value in [*everywhere, values["reason"], values["partial"], values["hyperparameter"], values["setting"],
                  values["metric"], values["notebook"], values["profile"]]:
        assert any(norm(value) in run for run in runs), value
    experiments = list(csv.DictReader(io.StringIO(render_tables(report).get("experiments", ""))))
    assert len(experiments) == 2
    assert {r["setting"] for r in experiments} == {csv_cell(f"{values['hyperparameter']}={values['setting']}")}
    assert {r["final_metrics"] for r in experiments} == {csv_cell(f"{values['metric']}=0.5")}
    # HTML, standalone and in the mail: the same elements and attributes; the values as text.
    tags, html_text = _html(render(report, OutputFormat.HTML))
    assert tags == _html(render(clean, OutputFormat.HTML))[0]
    for value in [*everywhere, values["owner"], values["reason"], values["partial"], values["notebook"],
                  values["profile"]]:
        assert norm(_html_kept(value)) in html_text
    message = message_from_bytes(build_report_message(report, "a@example.com", ["b@example.com"]).as_bytes(),
                                 policy=policy.default)
    mail_text = message.get_body(("plain",)).get_content()
    mail_tags, mail_html = _html(message.get_body(("html",)).get_content())
    assert mail_tags == _html(build_report_message(clean, "a@example.com", ["b@example.com"])
                              .get_body(("html",)).get_content())[0]
    for value in everywhere:
        assert norm(value) in norm(mail_text) and norm(_html_kept(value)) in mail_html
    _check_chat(report, values)


def _check_chat(report: AuditReport, values: dict[str, str]) -> None:
    summary = report_summary(report, ChatConfig(top_plans=20), "Full report: run 1", owner=values["owner"])
    slack = slack_payload(summary)
    mrkdwn = [slack["text"]] + [b["text"]["text"] for b in slack["blocks"] if b["type"] == "section"]
    mrkdwn += [e["text"] for b in slack["blocks"] if b["type"] == "context" for e in b["elements"]]
    assert all(b["text"].get("verbatim") for b in slack["blocks"] if b["type"] == "section")
    for text in mrkdwn:  # no link, mention or entity of the data's own: only &amp; &lt; &gt;
        assert "<" not in text and ">" not in text
        assert not re.search(r"&(?!amp;|lt;|gt;)", text)
    shown = norm(" ".join(mrkdwn).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    for plan in summary.lines:
        assert norm(plan.resource) in shown and norm(plan.variant or "") in shown
    card = teams_payload(summary)["attachments"][0]["content"]
    texts = [b["text"] for b in card["body"] if b["type"] == "TextBlock"]
    texts += [v for b in card["body"] if b["type"] == "FactSet" for f in b["facts"] for v in (f["title"], f["value"])]
    for text in texts:  # what a TextBlock reads (bold, italic, lists, links) never comes from the data
        kinds = {t.type for t in MarkdownIt("commonmark").parse(text)}
        kinds |= {c.type for t in MarkdownIt("commonmark").parse(text) for c in t.children or []}
        assert not kinds & {"link_open", "image", "em_open", "strong_open", "bullet_list_open", "ordered_list_open"}
        assert "{{" not in text
    card_text = norm(" ".join(_unescape_teams(t) for t in texts))
    for plan in summary.lines:
        assert norm(plan.resource) in card_text and norm(plan.variant or "") in card_text
    assert _unescape_teams(texts[0]) == summary.title.strip()[:150] or len(summary.title.strip()) > 150
    if values["partial"].strip():
        assert norm(values["partial"])[:200] in norm(_unescape_teams(texts[1]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(NAMES, min_size=4, max_size=4, unique=True), variant=NAMES, owner=TAG_VALUES,
       message=FREE_TEXT, reason=FREE_TEXT, error=FREE_TEXT, partial=FREE_TEXT, hyperparameter=FREE_TEXT,
       setting=FREE_TEXT, metric=FREE_TEXT, notebook=NAMES, profile=NAMES)
def test_every_output_shows_hostile_text_as_data(names: list[str], variant: str, owner: str, message: str,
                                                  reason: str, error: str, partial: str, hyperparameter: str,
                                                  setting: str, metric: str, notebook: str, profile: str) -> None:
    fields = {"names": names, "variant": variant, "owner": owner, "message": message, "reason": reason,
              "error": error, "partial": partial, "hyperparameter": hyperparameter, "setting": setting,
              "metric": metric, "notebook": notebook, "profile": profile}
    values = {"names0": names[0], "names1": names[2], **{k: v for k, v in fields.items() if k != "names"}}
    _check_outputs(_hostile(**fields), _clean(**fields), values)


def _digest(name: str, variant: str, message: str, advice: str, error: str) -> Digest:
    record = FindingRecord("f1", "idle-endpoint", "high", "123456789012", "us-east-1", name, variant, message,
                           advice, 120.0)
    run = RunSummary(1, NOW, NOW, NOW, ("us-east-1",), ("123456789012",), 3, 1, 500.0, 120.0, (error,), False)
    return Digest("2026-W48", run, None, 1, new=(OpenFinding(record, 1),),
                  resolved=(ResolvedFinding(replace(record, fingerprint="f2"), 40.0),),
                  still_open=(OpenFinding(replace(record, fingerprint="f3"), 3),),
                  trend=(WeekPoint("2026-W47", 600.0, 200.0), WeekPoint("2026-W48", 500.0, 120.0)))


@settings(max_examples=25, deadline=None)
@given(name=NAMES, variant=NAMES, message=FREE_TEXT, advice=FREE_TEXT, error=FREE_TEXT)
def test_the_weekly_digest_shows_hostile_text_as_data(name: str, variant: str, message: str, advice: str,
                                                      error: str) -> None:
    digest = _digest(name, variant, message, advice, error)
    clean = _digest("n" * len(name), "v" * len(variant), "m" * len(message), "a" * len(advice), "e" * len(error))
    mail = build_weekly_message(digest, "a@example.com", ["b@example.com"])
    mail = message_from_bytes(mail.as_bytes(), policy=policy.default)
    text = norm(mail.get_body(("plain",)).get_content())
    tags, html_text = _html(mail.get_body(("html",)).get_content())
    clean_mail = build_weekly_message(clean, "a@example.com", ["b@example.com"])
    assert tags == _html(clean_mail.get_body(("html",)).get_content())[0]
    for value in (name, variant, message, error):
        assert norm(value) in text and norm(_html_kept(value)) in html_text
    rows = list(csv.DictReader(io.StringIO(render_weekly_csv(digest))))
    assert [r["endpoint"] for r in rows] == [name] * 3
    assert {r["message"] for r in rows} == {csv_cell(message)}
    assert {r["advice"] for r in rows} == {csv_cell(advice) if advice else ""}


def test_markdown_and_csv_escapes_are_the_documented_ones() -> None:
    assert md_cell("scratch-gpu a_b") == "scratch-gpu a_b"  # nothing Markdown reads: as it is
    assert md_cell("_x_ *y* [l](u) <b> a|b & $") == "\\_x\\_ \\*y\\* \\[l\\](u) \\<b\\> a\\|b \\& \\$"
    assert md_cell("- item") == "\\- item" and md_cell("2. item") == "2\\. item" and md_cell("# h") == "\\# h"
    assert [csv_cell(v) for v in ("=1+1", "+1", "-x", "@a", "a=b", -2.5, "")] == ["'=1+1", "'+1", "'-x", "'@a",
                                                                                   "a=b", -2.5, ""]


def test_a_long_slack_section_drops_whole_rows() -> None:
    """Escaping makes `&` five characters: the rows that do not fit are counted, never cut mid-entity."""
    lines = tuple(Line(f"endpoint-{i}", "AllTraffic", "&" * 200, 100.0 - i) for i in range(20))
    summary = Summary("SageMaker audit", (("Endpoints", "20"),), "Top plans", lines, more=3, link=None,
                      pointer="Full report: run 1")
    (section,) = [b["text"]["text"] for b in slack_payload(summary)["blocks"]
                  if b["type"] == "section" and "Top plans" in b["text"]["text"]]
    assert len(section) <= 3000
    rows = section.splitlines()[1:]
    assert all(row.endswith(f"({_money(100.0 - i)})") for i, row in enumerate(rows[:-1]))  # each row whole
    assert not re.search(r"&(?!amp;|lt;|gt;)", section)
    shown = len(rows) - 1
    assert 0 < shown < 20 and rows[-1] == f"…and {20 - shown + 3} more"
