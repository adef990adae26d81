"""Renderers, chosen by an enum. All read the JSON document, so every format says the same."""

from __future__ import annotations

import base64
import csv
import enum
import io
import re
import shutil
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, assert_never

import css_inline
import jinja2
from markupsafe import Markup, escape
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from auditor.analyse.rules.base import period_label
from auditor.analyse.usage import format_duration
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.kinds.registry import KINDS
from auditor.models import AuditReport
from auditor.report.chart import utilisation_chart_png
from auditor.report.document import report_to_dict, write_report_json
from auditor.report.headline import doc_headline
from auditor.report.views import ShapeKey, finding_view, included_plans, plan_view, resource_of, shape_key
from auditor.text import one_line


class OutputFormat(enum.StrEnum):
    TABLE = "table"
    JSON = "json"
    HTML = "html"
    CSV = "csv"
    MARKDOWN = "markdown"
    TEXT = "text"


def _kind_packages() -> dict[str, jinja2.BaseLoader]:
    """A loader for each package a kind's "<package>:<file>" template names."""
    packages = {name.partition(":")[0] for k in KINDS for name in k.templates.values() if ":" in name}
    return {package: jinja2.PackageLoader(package, "templates") for package in sorted(packages)}


@cache
def template_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        # The kinds' parts are in templates/ too; a plug-in kind's are in its own package, named
        # "<package>:<file>" (the package's templates/ directory).
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("auditor.templates", "."),
                                    jinja2.PrefixLoader(_kind_packages(), delimiter=":")]),
        # Tag values and endpoint names are user input: escape everything in HTML.
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["usd"] = usd
    env.filters["kind_costs"] = kind_costs
    env.filters["pct"] = pct
    env.filters["md_cell"] = md_cell
    env.filters["duration"] = format_duration
    env.filters["clip"] = clip
    env.filters["address"] = address
    env.filters["saving"] = saving_text
    return env


def plain_document(value: Any) -> Any:
    """The document with every string made one line, for the text, Markdown and table renderers."""
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, dict):
        return {plain_document(k) if isinstance(k, str) else k: plain_document(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(plain_document(v) for v in value)
    return value


def clip(value: Any, length: int = 40) -> Markup:
    """A long value cut to `length` characters in HTML, the whole of it in a title (shown on hover)."""
    text = "" if value is None else str(value)
    if len(text) <= length:
        return escape(text)
    return Markup('<span title="{}">{}&hellip;</span>').format(text, text[: length - 1])


_SEPARATOR = re.compile(r"([@._/,:-])")


def address(value: Any, length: int = 60) -> Markup:
    """An owner's address or a list of names in HTML: escaped, cut to `length` characters (the whole in
    a title), with a line-break opportunity after each separator (@ . - _ / , :) so that a narrow
    column wraps it there, never inside a word."""
    text = "" if value is None else str(value)
    shown = text if len(text) <= length else text[: length - 1]
    broken = Markup("").join(Markup("{}<wbr>").format(part) if _SEPARATOR.fullmatch(part) else escape(part)
                             for part in _SEPARATOR.split(shown) if part)
    if shown == text:
        return broken
    return Markup('<span title="{}">{}&hellip;</span>').format(text, broken)


def file_slug(value: str, length: int = 60) -> str:
    """A safe file name part: letters, digits, dot, dash and underscore only."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip(".-")[:length]
    return slug or "chart"


def kind_costs(by_kind: dict[str, float | None] | None) -> str:
    """'endpoints $1,234.00, jobs $56.00, workspaces not known whole': the monthly spend by kind."""
    return ", ".join(f"{key} {usd(cost) if cost is not None else 'not known whole'}"
                     for key, cost in (by_kind or {}).items())


def usd(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def saving_text(value: float) -> str:
    """An option's saving in words: "$1,346.12", "costs the same" or "costs $154.80 more" (never "$0.00"
    or a negative amount, which read as a saving)."""
    if value > 0:
        return usd(value)
    return "costs the same" if value == 0 else f"costs {usd(-value)} more"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


# What CommonMark/GFM reads inside a line: backslash escapes, code spans, emphasis (`*` anywhere, `_` at a
# word's edge only), strikethrough, links and images, HTML tags and autolinks, entities, table cell
# pipes, and GitHub's `$` maths.
_MD_INLINE = re.compile(r"[\\`*~\[\]<>&|$]|(?<![^\W_])_|_(?![^\W_])")
# What starts a block when it opens a line, after any spaces (a quote and a `*` bullet are escaped above already).
_MD_BLOCK_START = re.compile(r"^\s*(?:#{1,6}|[-+]|\d{1,9}[.)])(?=\s|$)")


def md_cell(value: Any) -> str:
    """A value shown literally in Markdown, in a table cell or anywhere in a line: on one line, with a
    backslash before each character Markdown would read there (a `-` inside a word stays as it is)."""
    text = _MD_INLINE.sub(r"\\\g<0>", one_line("" if value is None else str(value)))
    block = _MD_BLOCK_START.match(text)
    if block:  # a heading, a bullet or a numbered item: `\#`, `\-`, `1\.`
        text = text[: block.end() - 1] + "\\" + text[block.end() - 1:]
    return text


# A spreadsheet opens a cell that starts with one of these as a formula (CSV injection).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A text cell that a spreadsheet would read as a formula gets a leading apostrophe (shown as text by
    Excel, LibreOffice and Google Sheets); numbers and every other text are written as they are."""
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def write_csv(columns: tuple[str, ...], rows: Any, ignore_extra: bool = False) -> str:
    """The CSV exports, each cell through csv_cell. Rows end in CRLF (RFC 4180): Python's writer quotes a
    field holding a character of the line terminator, so a lone CR in a message cannot split a row."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\r\n",
                            extrasaction="ignore" if ignore_extra else "raise")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: csv_cell(value) for key, value in row.items()})
    return out.getvalue()


ChartKey = tuple[str, str, str]  # (region, endpoint, variant)


def render(report: AuditReport, fmt: OutputFormat, color: bool = False, width: int | None = None,
           limit: int | None = None) -> str:
    """The report in one format. Every format reads the same document; a format added to
    OutputFormat without a branch here fails the type check (assert_never), not a run. `width` and
    `limit` are the terminal table's (render_table)."""
    match fmt:
        case OutputFormat.JSON:
            # Written piece by piece: the document is never held whole as Python objects (a file
            # handle given to write_report_json directly spares the string too).
            text = io.StringIO()
            write_report_json(report, text)
            return text.getvalue()
        case OutputFormat.CSV:
            return render_findings_csv(report_to_dict(report))
        case OutputFormat.TABLE:
            return render_table(plain_document(report_to_dict(report)), color=color, width=width, limit=limit)
        case OutputFormat.HTML:
            # A standalone file: the charts travel inside it as data URIs; its stylesheet stays a
            # <style> block (a browser reads it; only mail clients need it inlined, and inlining
            # 40 MB of HTML at 10,000 endpoints took more memory than the audit).
            doc = report_to_dict(report)
            sources = {key: "data:image/png;base64," + base64.b64encode(png).decode()
                       for key, png in chart_images(report, variant_keys(doc)).items()}
            return render_html(doc, sources, inline=False)
        case OutputFormat.MARKDOWN:
            return _render_template("report.md.j2", plain_document(report_to_dict(report)))
        case OutputFormat.TEXT:
            return _render_template("report.txt.j2", plain_document(report_to_dict(report)))
        case _:
            assert_never(fmt)


def _render_template(name: str, doc: dict[str, Any], limit: int | None = None) -> str:
    return template_environment().get_template(name).render(doc=doc, **report_context(doc, limit))


def render_html(doc: dict[str, Any], chart_sources: dict[ChartKey, str], limit: int | None = None,
                inline: bool = True) -> str:
    """The HTML report; `inline`: its stylesheet inlined into style attributes (mail clients drop
    <style>), else kept as the <style> block a browser reads."""
    html = template_environment().get_template("report.html.j2").render(
        doc=doc, chart_sources=chart_sources, **report_context(doc, limit)
    )
    return css_inline.inline(html) if inline else html


# Once the stylesheet is inlined (and its <style> dropped) the class attributes style nothing; the
# inlined declarations need no spaces. Both cost a mail's HTML budget (Gmail clips above ~102 KB):
# about a seventh of the demo's. User text cannot match: autoescaping writes its quotes as &#34;.
# (Only the mail is compacted: the report file has no budget, and at 10,000 endpoints each copy of
# its 40 MB text costs memory.)
_CLASS_ATTRIBUTE = re.compile(r' class="[^"]*"')
_STYLE_ATTRIBUTE = re.compile(r' style="([^"]*)"')


def compact_inlined(html: str) -> str:
    def compact(match: re.Match[str]) -> str:
        declarations = [d.strip().replace(": ", ":") for d in match.group(1).split(";") if d.strip()]
        return f' style="{";".join(declarations)}"'

    return _STYLE_ATTRIBUTE.sub(compact, _CLASS_ATTRIBUTE.sub("", html))


def render_text(doc: dict[str, Any], limit: int | None = None) -> str:
    return _render_template("report.txt.j2", plain_document(doc), limit)


def ranked_endpoints(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Endpoints by what can be saved on them, then by what they cost."""
    saving: dict[tuple[str, str], float] = {}
    for f in doc["findings"]:
        if f["recommendation"]:
            key = (f["resource"]["region"], f["resource"]["name"])
            saving[key] = max(saving.get(key, 0.0), f["recommendation"]["monthly_savings_usd"])
    def cost(e: dict[str, Any]) -> float:
        return sum(v["monthly_cost_usd"] or 0.0 for v in e["variants"])
    return sorted(doc["endpoints"], key=lambda e: (-saving.get((e["region"], e["name"]), 0.0), -cost(e), e["name"]))


def variant_keys(doc: dict[str, Any], endpoints: list[dict[str, Any]] | None = None) -> list[ChartKey]:
    return [(e["region"], e["name"], v["name"]) for e in (endpoints or doc["endpoints"]) for v in e["variants"]]


def chart_images(report: AuditReport, keys: list[ChartKey]) -> dict[ChartKey, bytes]:
    wanted = set(keys)
    threshold = report.settings.thresholds.cpu
    charts = {}
    for e in ENDPOINTS.section(report):
        for v in e.variants:
            key = (e.endpoint.region, e.endpoint.name, v.variant.name)
            if key in wanted and v.series is not None and not e.endpoint.not_judged_reason:
                png = utilisation_chart_png(v.series, threshold, days=report.settings.lookback_days)
                if png:
                    charts[key] = png
    return charts


def risk_text(risk: dict[str, Any] | None) -> str:
    """A plan's risk in a cell: its level, the projected peak, and whether to load-test first."""
    if not risk:
        return "not assessed"
    peak = max((r["peak"] for r in risk.get("replays") or []), default=None)
    return (risk["level"] + ("" if peak is None else f"\npeak {peak:.0f}%")
            + ("\nload-test first" if risk.get("load_test_first") else ""))


def report_context(doc: dict[str, Any], limit: int | None = None) -> dict[str, Any]:
    """What the templates show beside the document; `limit` keeps the top findings and endpoints."""
    actionable = [f for f in doc["findings"] if f["severity"] != "info"]
    notes = [f for f in doc["findings"] if f["severity"] == "info"]
    shown_notes = notes if limit is None else notes[:limit]
    endpoints = ranked_endpoints(doc)
    shown_findings = actionable if limit is None else actionable[:limit]
    plans = doc.get("plans", [])
    shown_plans = plans if limit is None else plans[:limit]
    included = included_plans(plans)
    several_accounts = len({p["resource"]["account_id"] for p in plans}) > 1
    if several_accounts:  # grouped by account, each group still ranked by saving
        accounts = dict.fromkeys(p["resource"]["account_id"] for p in shown_plans)
        order = {account: i for i, account in enumerate(accounts)}
        shown_plans = sorted(shown_plans, key=lambda p: order[p["resource"]["account_id"]])
    shown_endpoints = endpoints if limit is None else endpoints[:limit]
    # A variant's saving is shown once, on its first finding: the others rest on the same plan.
    seen: set[tuple[str, str, str | None]] = set()
    repeated_findings = set()
    for i, f in enumerate(shown_findings):
        if f["recommendation"]:
            key = (f["resource"]["region"], f["resource"]["name"], f["variant"])
            if key in seen:
                repeated_findings.add(i)
            seen.add(key)
    summary = doc["summary"]
    shapes = current_shapes(doc)
    owners = {(e["account_id"], e["region"], e["name"]):
              next((e["tags"][k] for k in OWNER_TAGS if e["tags"].get(k)), "") for e in doc["endpoints"]}
    return {
        "summary": summary,
        "subject": subject_line(doc),
        "headline": subject_line(doc),
        "incomplete": summary.get("incomplete", False),
        # Endpoints whose data was read and judged (a partial run lists the others as not audited).
        "repeated_findings": repeated_findings,
        # An incomplete run that read nothing states no figure (a $0 or a 0 would read as a verdict).
        "nothing_read": bool(summary.get("incomplete")) and not doc["findings"] and not plans
                        and not any(not e.get("not_judged_reason") for e in doc["endpoints"]),
        "endpoints_judged": sum(1 for e in doc["endpoints"] if not e.get("not_judged_reason")),
        "severity_counts": {s: n for s, n in summary["findings_by_severity"].items() if s != "info"},
        # Findings and plans as typed views (auditor/report/views.py): what the templates read of them.
        "actionable": [finding_view(f, shapes, owners) for f in shown_findings],
        "plans": [plan_view(p, shapes, owners, included) for p in shown_plans],
        "several_accounts": several_accounts,
        "account_names": {a["id"]: a["name"] for a in doc.get("accounts", [])},
        "hidden_plans": len(plans) - len(shown_plans),
        "hidden_findings": len(actionable) - len(shown_findings),
        "shown_endpoints": shown_endpoints,
        "hidden_endpoints": len(endpoints) - len(shown_endpoints),
        # Notes (info findings) count against the email's budget like findings: a large fleet
        # has hundreds (a data gap each).
        "notes": [finding_view(f, shapes, owners) for f in shown_notes],
        "hidden_notes": len(notes) - len(shown_notes),
        "errors": doc["errors"],
        "skipped": doc["skipped"],
        "period_label": period_label(doc["window"]["period_seconds"]),
        "thresholds": doc["settings"]["thresholds"],
        "owners": owners,
        "current_shapes": shapes,
        # Each resource kind's part of the rendered reports, in the kinds' order.
        "kind_templates": {fmt: [k.templates[fmt] for k in KINDS if fmt in k.templates and doc.get(k.key) is not None]
                           for fmt in ("html", "text", "markdown")},
    }


def current_shapes(doc: dict[str, Any]) -> dict[ShapeKey, str]:
    """What each resource runs now, by views.shape_key: what each kind says of its own (its
    `shapes`), else what the resource's plan says."""
    shapes: dict[ShapeKey, str] = {}
    for kind in KINDS:
        if doc.get(kind.key) is not None:
            shapes.update(kind.shapes(doc[kind.key]))
    # Every plan says what runs now: what its resource's section does not say, its plan does.
    for p in doc.get("plans", []):
        current, at = p["current"], shape_key(p["resource"], p["variant"])
        if not shapes.get(at) and current.get("instance_type"):
            shapes[at] = f"{current['instance_count']} x {current['instance_type']}"
        elif not shapes.get(at):
            shapes[at] = f"costs {usd(current['monthly_cost_usd'])}/month"
    return shapes


def subject_line(doc: dict[str, Any], prefix: str = "SageMaker audit") -> str:
    """The mail's subject: the report's headline (auditor/report/headline.py), as every output opens."""
    return doc_headline(doc, prefix)


# Tags read, in order, as the owner of an endpoint.
OWNER_TAGS = ("owner", "Owner", "team", "Team")


CSV_COLUMNS = (
    "severity", "rule", "account_id", "region", "resource_type", "resource", "variant", "action", "advice",
    "current_instance_type", "current_instance_count", "instance_type", "instance_count",
    "current_monthly_usd", "recommended_monthly_usd", "monthly_savings_usd", "message", "title", "remediation",
)


def render_tables(report: AuditReport) -> dict[str, str]:
    """The kinds' own CSV tables (`ResourceKind.csv_tables`), by name, each as CSV: only those with
    rows. Only the sections of kinds that have tables are serialised (not the whole document again:
    the CSV of the findings has just built it)."""
    tables: dict[str, str] = {}
    for kind in KINDS:
        if kind.csv_tables is None:
            continue
        section = kind.to_dict(kind.section(report))
        for name, (columns, rows) in (kind.csv_tables(section) if section is not None else {}).items():
            if rows:
                tables[name] = write_csv(columns, rows)
    return tables


def render_findings_csv(doc: dict[str, Any]) -> str:
    """One row per finding, with the current and the advised shape side by side."""
    current = {
        (e["region"], e["name"], v["name"]): v for e in doc["endpoints"] for v in e["variants"]
    }
    rows = []
    for f in doc["findings"]:
        rec = f["recommendation"] or {}
        resource = f["resource"]
        variant = (current.get((resource["region"], resource["name"], f["variant"]), {})
                   if resource["type"] == "endpoint" else {})
        rows.append({
            "severity": f["severity"], "rule": f["rule"], "account_id": resource["account_id"],
            "region": resource["region"], "resource_type": resource["type"], "resource": resource["name"],
            "variant": f["variant"] or "",
            "action": rec.get("action", ""),
            "advice": rec.get("advice", ""),
            "current_instance_type": variant.get("instance_type") or "",
            "current_instance_count": variant.get("instance_count", ""),
            "instance_type": rec.get("instance_type") or "",
            "instance_count": rec.get("instance_count", ""),
            "current_monthly_usd": rec.get("current_monthly_usd", ""),
            "recommended_monthly_usd": rec.get("recommended_monthly_usd", ""),
            "monthly_savings_usd": rec.get("monthly_savings_usd", ""),
            "message": f["message"],
            "title": f["title"],
            "remediation": f["remediation"],
        })
    return write_csv(CSV_COLUMNS, rows)


def cells(*values: str) -> list[Text]:
    """Table cells that Rich shows as they are (a str cell would be parsed as markup)."""
    return [Text(value) for value in values]


# The plans the terminal shows unless asked for all (`audit run --all`); a file gets every one.
TABLE_PLANS = 10
# The terminal's width when it cannot be asked (a pipe, a file) and COLUMNS is not set.
FALLBACK_COLUMNS = 160
MIN_COLUMNS = 20


def terminal_width() -> int:
    """COLUMNS, else the terminal's own width, else FALLBACK_COLUMNS."""
    return max(MIN_COLUMNS, shutil.get_terminal_size((FALLBACK_COLUMNS, 24)).columns)


def _words(text: str) -> list[str]:
    return text.split()


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in _words(text)), default=0)


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


@dataclass(frozen=True)
class Layout:
    """A table's columns: their headers, which align right, and each row's cells."""

    headers: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    right: frozenset[int] = frozenset()


def _column_widths(layout: Layout, available: int) -> list[int] | None:
    """Widths that fit `available` cells with no word cut (each column at least its longest word),
    the room left shared by how much more each column would take; None when the words do not fit."""
    columns = list(zip(layout.headers, *layout.rows, strict=False))
    smallest = [max(_longest_word(cell) for cell in column) for column in columns]
    largest = [max(_longest_line(cell) for cell in column) for column in columns]
    if sum(smallest) > available:
        return None
    if sum(largest) <= available:
        return largest
    room = available - sum(smallest)
    wants = [big - small for small, big in zip(smallest, largest, strict=True)]
    widths = list(smallest)
    # The columns that want least get all they want while an equal share covers it (a risk or a
    # shape on one line); the room left is shared by the others, by how much more each wants.
    pending = sorted(range(len(widths)), key=lambda i: wants[i])
    while pending and wants[pending[0]] <= room // len(pending):
        i = pending.pop(0)
        widths[i] += wants[i]
        room -= wants[i]
    total = sum(wants[i] for i in pending)
    for i in pending:
        widths[i] += room * wants[i] // total
    # What integer division left over goes to the columns that want most.
    for i in sorted(pending, key=lambda i: -wants[i])[: available - sum(widths)]:
        widths[i] += 1
    return widths


def _fitted_table(layout: Layout, width: int, title: str) -> Table | None:
    """The layout as a Rich table no wider than `width` and cutting no word, or None if it cannot be."""
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold",
                  title_justify="left")
    # Between columns: one divider and a space each side (the edges have neither).
    widths = _column_widths(layout, width - 3 * (len(layout.headers) - 1))
    if widths is None:
        return None
    for i, (header, column_width) in enumerate(zip(layout.headers, widths, strict=True)):
        table.add_column(header, width=column_width, overflow="fold",
                         justify="right" if i in layout.right else "left")
    for row in layout.rows:
        table.add_row(*cells(*row))
    return table


def wrap_paragraph(text: str, width: int, indent: str = "") -> list[str]:
    """A paragraph in lines of at most `width` cells, broken between words, its lines after the
    first indented under its text (a word longer than a line is the only thing cut)."""
    more = indent + "   "
    lines = textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=more,
                          break_long_words=False, break_on_hyphens=False)
    if any(cell_len(line) > width for line in lines):
        lines = textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=more, break_on_hyphens=False)
    return lines


def plan_saving_text(plan: dict[str, Any], per: str = "") -> str:
    """"$5,175.70" (with `per` after it), "costs the same", "costs $167.90 more": what a plan saves, in the
    words of every report (saving_text)."""
    saving = plan["monthly_savings_usd"]
    return usd(saving) + per if saving > 0 else saving_text(saving)


def _plan_layouts(doc: dict[str, Any], plans: list[dict[str, Any]]) -> tuple[Layout, Layout]:
    """The plans as eight columns (a wide terminal) and as five, the region and the plan's id
    under the endpoint, the current shape above the change."""
    shapes = current_shapes(doc)
    included = included_plans(doc.get("plans", []))
    wide, medium = [], []
    for p in plans:
        target = resource_of(p["resource"]).label + (f" / {p['variant']}" if p["variant"] else "")
        now = shapes.get(shape_key(p["resource"], p["variant"]), "")
        alternatives = "".join(f"\nor {a['advice']} ({saving_text(a['monthly_savings_usd'])})"
                               for a in p["alternatives"])
        saving = plan_saving_text(p) + ("" if p.get("measured", True) else "\n(not counted)") + (
            f"\n(in plan {included[p['id']]})" if p.get("id") in included else "")
        rests_on = ", ".join(p["findings"])
        wide.append((p.get("id", ""), p["resource"]["region"], target, now, p["proposed"]["advice"] + alternatives,
                     risk_text(p.get("risk")), saving, rests_on))
        change = (f"{now}\n-> " if now else "") + p["proposed"]["advice"] + alternatives
        medium.append((saving, f"{target}\n{p['resource']['region']}, plan {p.get('id', '-')}", change,
                       risk_text(p.get("risk")), rests_on))
    return (Layout(("Plan", "Region", "Resource / variant", "Now", "Change to", "Risk", "Saving/month", "Rests on"),
                   wide, frozenset({6})),
            Layout(("Saving/month", "Resource / variant", "Now -> change to", "Risk", "Rests on"), medium,
                   frozenset({0})))


def _plan_details(doc: dict[str, Any], plans: list[dict[str, Any]], width: int) -> list[str]:
    """The plans one after another, each in a few lines (a terminal too narrow for their columns)."""
    shapes = current_shapes(doc)
    included = included_plans(doc.get("plans", []))
    lines = []
    for n, p in enumerate(plans, start=1):
        target = resource_of(p["resource"]).label + (f" / {p['variant']}" if p["variant"] else "")
        now = shapes.get(shape_key(p["resource"], p["variant"]), "")
        saving = plan_saving_text(p, "/month") + ("" if p.get("measured", True) else " (not counted)") + (
            f" (in plan {included[p['id']]})" if p.get("id") in included else "")
        risk = risk_text(p.get("risk")).replace("\n", ", ")
        lines += wrap_paragraph(f"{n}. {saving}  {target}  ({p['resource']['region']}, plan {p.get('id', '-')})", width)
        lines += wrap_paragraph((f"{now} -> " if now else "") + p["proposed"]["advice"], width, "   ")
        for a in p["alternatives"]:
            lines += wrap_paragraph(f"or {a['advice']} ({saving_text(a['monthly_savings_usd'])})", width, "   ")
        lines += wrap_paragraph(f"risk {risk}; rests on {', '.join(p['findings'])}", width, "   ")
    return lines


def _finding_layout(findings: list[dict[str, Any]]) -> Layout:
    rows = []
    for f in findings:
        rec = f["recommendation"]
        target = resource_of(f["resource"]).label + (f" / {f['variant']}" if f["variant"] else "")
        rows.append((f["severity"], f["rule"], f["resource"]["region"], target, rec["advice"] if rec else "-",
                     usd(rec["monthly_savings_usd"]) if rec else "-", f["message"]))
    return Layout(("Severity", "Rule", "Region", "Resource / variant", "Advice", "Saving/month", "Why"), rows,
                  frozenset({5}))


def _finding_details(findings: list[dict[str, Any]], width: int) -> list[str]:
    lines = []
    for f in findings:
        rec = f["recommendation"]
        target = resource_of(f["resource"]).label + (f" / {f['variant']}" if f["variant"] else "")
        saving = f"  {usd(rec['monthly_savings_usd'])}/month" if rec else ""
        lines += wrap_paragraph(f"{f['severity']} {f['rule']}: {target} ({f['resource']['region']}){saving}", width)
        if rec:
            lines += wrap_paragraph(f"advice: {rec['advice']}", width, "   ")
        lines += wrap_paragraph(f["message"], width, "   ")
    return lines


def render_table(doc: dict[str, Any], color: bool = False, width: int | None = None,
                 limit: int | None = None) -> str:
    """The report for a terminal `width` columns wide (default: the terminal's): the summary, then the
    plans in as many columns as fit without cutting a word (else each plan in a few lines), then the
    findings, the problems and the price basis. With `limit`, the first `limit` plans and no findings,
    each left out counted (`audit run --all` shows them)."""
    width = width or terminal_width()
    # Names, tags and AWS's messages are data: `[/opt/ml/model]` is no markup tag, `:warning:` no emoji
    # code. The console reads no markup, emoji or highlighting, and every cell is a Text (never parsed).
    console = Console(file=io.StringIO(), width=width, force_terminal=color, color_system="standard" if color else None,
                      markup=False, emoji=False, highlight=False)

    def say(line: str) -> None:
        console.print(Text(line), overflow="fold")

    summary = doc["summary"]
    window = doc["window"]
    # The headline every output opens with (counts, saving, what was not read), then the scope.
    say(doc_headline(doc))
    say(f"{window['start'][:10]} to {window['end'][:10]}: {summary['endpoints']} endpoints, "
        f"{usd(summary['monthly_cost_usd'])}/month (all kinds)")
    if summary.get("monthly_cost_by_kind"):
        say(f"Monthly spend by kind: {kind_costs(summary['monthly_cost_by_kind'])}")
    all_plans = doc.get("plans") or []
    plans = all_plans if limit is None else all_plans[:limit]
    if plans:
        title = "What to change" + ("" if len(plans) == len(all_plans) else
                                    f": the first {len(plans)} of {len(all_plans)} plans")
        say("")
        for layout in _plan_layouts(doc, plans):
            table = _fitted_table(layout, width, title)
            if table is not None:
                console.print(table)
                break
        else:
            say(title)
            for line in _plan_details(doc, plans, width):
                say(line)
        if len(plans) < len(all_plans):
            hidden = len(all_plans) - len(plans)
            # Their part of the headline's saving, so that the rows shown and these add up to it.
            included = included_plans(all_plans)
            saving = sum(p["monthly_savings_usd"] for p in all_plans[len(plans):]
                         if p.get("measured", True) and p["monthly_savings_usd"] > 0 and p.get("id") not in included)
            say(f"{hidden} more plan{'s' if hidden != 1 else ''} ({usd(saving)}/month of the saving): "
                "`audit run --all` shows every plan and finding.")
    if limit is None and doc["findings"]:
        say("")
        table = _fitted_table(_finding_layout(doc["findings"]), width, "Why: the findings")
        if table is not None:
            console.print(table)
        else:
            say("Why: the findings")
            for line in _finding_details(doc["findings"], width):
                say(line)
    elif not doc["findings"]:
        say("No findings.")
    if limit is None:
        for s in doc["skipped"]:
            rules = f" ({', '.join(s['rules'])})" if s["rules"] else ""
            say(f"skipped{rules} {s['region']} {s['endpoint']}: {s['reason']}")
    elif doc["skipped"]:
        say(f"{len(doc['skipped'])} skipped (not judged): `audit run --all` says why.")
    for e in doc["errors"]:
        where = f"{e['region']}" + (f" {e['endpoint']}" if e["endpoint"] else "")
        say(f"error [{e['stage']}] {where}: {e['message']}")
    for warning in doc["prices"]["warnings"]:
        say(f"warning: {warning}")
    for r in doc["prices"]["reconciliation"]:
        coverage = "" if r["coverage_percent"] is None else f": {r['coverage_percent']:.0f}% coverage"
        say(f"reconciliation {r['region']}: estimated hosting {usd(r['estimated_monthly_usd'])}/month "
            f"against {usd(r['billed_monthly_usd'])}/month billed (Cost Explorer, last 30 days){coverage}")
    say(doc["prices"]["statement"])
    text: str = console.file.getvalue()  # type: ignore[attr-defined]
    # A table pads each line to its width: no trailing blanks on a terminal or in a copied block.
    return "".join(line.rstrip() + "\n" for line in text.splitlines())
