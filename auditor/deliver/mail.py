"""Send the report by SMTP or Amazon SES (SendRawEmail), as configured in [email]."""

from __future__ import annotations

import os
import smtplib
import ssl
from email.message import EmailMessage

from auditor.config import EmailConfig
from auditor.errors import AuditorError, ConfigError
from auditor.models import AuditReport
from auditor.report.email_message import build_report_message


class DeliveryError(AuditorError):
    """The mail server or SES refused or could not be reached."""


def check_email_config(email: EmailConfig) -> None:
    """Fail before the audit, not after it, when [email] cannot work."""
    if not email.sender:
        raise ConfigError("email.sender is required to send the report (--email)")
    if not email.recipients:
        raise ConfigError("email.recipients must name at least one address to send the report (--email)")
    if email.transport == "smtp" and email.smtp_username and not email.smtp_password_env:
        raise ConfigError("email.smtp_password_env must name the environment variable holding the SMTP password")
    if email.smtp_password_env and email.smtp_password_env not in os.environ:
        raise ConfigError(f"environment variable {email.smtp_password_env} (email.smtp_password_env) is not set")
    if email.smtp_ssl and email.smtp_starttls:
        raise ConfigError("email.smtp_ssl and email.smtp_starttls cannot both be true")


def send_report(report: AuditReport, email: EmailConfig) -> EmailMessage:
    check_email_config(email)
    assert email.sender is not None
    message = build_report_message(report, email.sender, email.recipients, email.subject_prefix)
    if email.transport == "ses":
        send_with_ses(message, email)
    else:
        send_with_smtp(message, email)
    return message


def send_with_smtp(message: EmailMessage, email: EmailConfig) -> None:
    where = f"{email.smtp_host}:{email.smtp_port}"
    try:
        if email.smtp_ssl:
            server: smtplib.SMTP = smtplib.SMTP_SSL(email.smtp_host, email.smtp_port, timeout=30,
                                                    context=ssl.create_default_context())
        else:
            server = smtplib.SMTP(email.smtp_host, email.smtp_port, timeout=30)
        with server:
            if email.smtp_starttls:
                server.starttls(context=ssl.create_default_context())
            if email.smtp_username:
                server.login(email.smtp_username, os.environ[email.smtp_password_env or ""])
            server.send_message(message)
    except smtplib.SMTPAuthenticationError as exc:
        raise DeliveryError(f"SMTP server {where} refused the login for {email.smtp_username}: {exc.smtp_code}") from None
    except smtplib.SMTPRecipientsRefused as exc:
        raise DeliveryError(f"SMTP server {where} refused the recipients {', '.join(exc.recipients)}") from None
    except smtplib.SMTPException as exc:
        raise DeliveryError(f"SMTP server {where} failed: {exc}") from None
    except OSError as exc:
        raise DeliveryError(f"cannot reach SMTP server {where}: {exc.strerror or exc}") from None


def send_with_ses(message: EmailMessage, email: EmailConfig) -> None:
    import boto3
    import botocore.exceptions

    region = email.ses_region or "us-east-1"
    try:
        client = boto3.session.Session().client("ses", region_name=region)
        client.send_raw_email(
            Source=email.sender, Destinations=list(email.recipients), RawMessage={"Data": bytes(message)}
        )
    except botocore.exceptions.ClientError as exc:
        error = exc.response.get("Error", {})
        raise DeliveryError(f"SES in {region} rejected the message: {error.get('Code')}: {error.get('Message')}") from None
    except botocore.exceptions.BotoCoreError as exc:
        raise DeliveryError(f"cannot send with SES in {region}: {exc}") from None
