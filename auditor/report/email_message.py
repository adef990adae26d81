"""The report as an email message: a text and an HTML alternative, the charts as inline images
(Content-ID), and the full findings as a CSV attachment when the fleet is too large to show.

Building the message is pure; sending it (SMTP, SES) belongs to delivery.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from auditor.models import AuditReport
from auditor.report.document import report_to_dict
from auditor.report.render import (
    ChartKey,
    chart_images,
    compact_inlined,
    file_slug,
    ranked_endpoints,
    render_findings_csv,
    render_html,
    render_text,
    subject_line,
)

# Gmail clips an HTML body above about 102 KB (the HTML part, not the images or headers): stay
# under it with 2 KB to spare. (95,000 until the demo fleet, with HyperPod, needed ~98,000.)
HTML_BUDGET_BYTES = 100_000
# How many findings and endpoints to show, tried in turn until the HTML fits the budget.
SHOWN_LIMITS: tuple[int | None, ...] = (None, 150, 100, 75, 60, 50, 40, 30, 20, 10, 5)


def _compact(html: str) -> str:
    """Without the indentation of the template's lines (the report has no <pre>, so leading
    whitespace means nothing: some 4 KB of the budget on the demo's mail), nor the idle class
    attributes and the spaces of the inlined styles (compact_inlined: about 13 KB)."""
    return "\n".join(line.lstrip() for line in compact_inlined(html).splitlines())


# Every row of the mail's HTML (an endpoint, a finding) takes more than this many bytes: a report
# with more rows than the budget can hold cannot fit whole, so the whole is not rendered, nor all
# its charts drawn, to find that out (at 10,000 endpoints that attempt was most of the mail's cost).
MIN_ROW_BYTES = 500


def _limits(doc: dict[str, object], html_budget: int) -> tuple[int | None, ...]:
    endpoints = doc["endpoints"]
    findings = doc["findings"]
    assert isinstance(endpoints, list) and isinstance(findings, list)
    rows = len(endpoints) + sum(1 for f in findings if f["severity"] != "info")
    return SHOWN_LIMITS if rows * MIN_ROW_BYTES <= html_budget else tuple(x for x in SHOWN_LIMITS if x is not None)


def build_report_message(
    report: AuditReport,
    sender: str,
    recipients: list[str] | tuple[str, ...],
    subject_prefix: str = "SageMaker audit",
    html_budget: int = HTML_BUDGET_BYTES,
) -> EmailMessage:
    doc = report_to_dict(report)
    domain = sender.rpartition("@")[2] or None
    ranked = ranked_endpoints(doc)
    drawn: dict[ChartKey, bytes] = {}
    for limit in _limits(doc, html_budget):
        keys = [(e["region"], e["name"], v["name"]) for e in ranked[:limit] for v in e["variants"]]
        drawn.update(chart_images(report, [key for key in keys if key not in drawn]))
        charts = {key: drawn[key] for key in keys if key in drawn}
        content_ids = {key: make_msgid(idstring="chart", domain=domain) for key in charts}
        html = _compact(render_html(doc, {key: f"cid:{cid[1:-1]}" for key, cid in content_ids.items()}, limit))
        if len(html.encode("utf-8")) <= html_budget:
            break
    truncated = limit is not None

    message = EmailMessage()
    message["Subject"] = subject_line(doc, subject_prefix)
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    message["Date"] = formatdate(report.generated_at.timestamp(), usegmt=True)
    message["Message-ID"] = make_msgid(domain=domain)
    message.set_content(render_text(doc, limit))
    message.add_alternative(html, subtype="html")
    html_part = message.get_body(preferencelist=("html",))
    assert isinstance(html_part, EmailMessage)
    for key, png in charts.items():
        html_part.add_related(png, maintype="image", subtype="png", cid=content_ids[key],
                              filename=f"{file_slug(f'{key[1]}-{key[2]}')}.png", disposition="inline")
    if truncated:
        message.add_attachment(render_findings_csv(doc).encode("utf-8"), maintype="text", subtype="csv",
                               filename="sagemaker-audit-findings.csv")
    return message
