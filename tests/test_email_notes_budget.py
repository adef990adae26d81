"""Notes (info findings) are held to the email's size budget like findings: at 10,000 endpoints the
scale bench's fleet had hundreds of data-gap notes and the email's HTML body reached 194 KB."""

from __future__ import annotations

from dataclasses import replace

from auditor.models import Severity
from auditor.report.email_message import HTML_BUDGET_BYTES, build_report_message
from fleet_report import synthetic_report


def test_hundreds_of_notes_stay_within_the_email_budget() -> None:
    report = synthetic_report(120)
    template = report.findings[0]
    notes = tuple(replace(template, rule="data-gap", severity=Severity.INFO, recommendation=None,
                          resource=replace(template.resource, name=f"gap-{i:04d}"),
                          message="No requests recorded in Invocations (all zero) while the instances were busy "
                                  "(CPU p95 20%): not judged idle. Check that the metric is published.")
                  for i in range(800))
    message = build_report_message(replace(report, findings=report.findings + notes), "a@example.com",
                                   ["b@example.com"])
    html = message.get_body(preferencelist=("html",)).get_content()
    assert len(html.encode("utf-8")) <= HTML_BUDGET_BYTES
    assert "more notes are in the attached CSV" in html
    assert "gap-0000" in html and "gap-0799" not in html
    text = message.get_body(preferencelist=("plain",)).get_content()
    assert "more notes are in the attached CSV" in text
