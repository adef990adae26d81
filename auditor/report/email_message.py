"""The report as an email message: text and HTML alternatives, subject with the figures.

Building the message is pure; sending it (SMTP, SES) belongs to delivery.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from auditor.models import AuditReport
from auditor.report.render import OutputFormat, render


def subject_for(report: AuditReport, prefix: str = "SageMaker audit") -> str:
    findings = sum(1 for f in report.findings if f.severity.value != "info")
    noun = "finding" if findings == 1 else "findings"
    return f"{prefix}: {findings} {noun}, ${report.monthly_savings_usd:,.0f}/month to save"


def build_report_message(
    report: AuditReport,
    sender: str,
    recipients: list[str] | tuple[str, ...],
    subject_prefix: str = "SageMaker audit",
) -> EmailMessage:
    message = EmailMessage()
    message["Subject"] = subject_for(report, subject_prefix)
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    message["Date"] = formatdate(report.generated_at.timestamp(), usegmt=True)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or None)
    message.set_content(render(report, OutputFormat.TEXT))
    message.add_alternative(render(report, OutputFormat.HTML), subtype="html")
    return message
