"""Send the report by SMTP or Amazon SES (SendRawEmail), as configured in [email].

A message that cannot be sent is never lost: it is saved as an .eml file in the outbox, and
`audit send-outbox` sends it later, to the recipients it was addressed to.
"""

from __future__ import annotations

import os
import smtplib
import ssl
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import getaddresses
from pathlib import Path

import platformdirs

from auditor.config import EmailConfig
from auditor.errors import AuditorError, ConfigError
from auditor.files import write_atomic
from auditor.models import AuditReport
from auditor.report.email_message import build_report_message


class DeliveryError(AuditorError):
    """The mail server or SES refused or could not be reached."""


@dataclass(frozen=True)
class Delivery:
    recipients: tuple[str, ...]
    message: EmailMessage
    owner: str | None = None  # None: the configured recipients


def outbox_path(email: EmailConfig) -> Path:
    if email.outbox_dir:
        return Path(email.outbox_dir).expanduser()
    return Path(platformdirs.user_data_dir("sagemaker-auditor")) / "outbox"


# `--email-to-file` without [email] addresses: the message says who would have sent and received it.
PLACEHOLDER_SENDER = "sagemaker-auditor@localhost"
PLACEHOLDER_RECIPIENT = "recipients-not-configured@localhost"


def for_file(email: EmailConfig) -> EmailConfig:
    """The settings for writing messages to files: no login, placeholders for missing addresses."""
    return replace(email, smtp_username=None, smtp_password_env=None,
                   sender=email.sender or PLACEHOLDER_SENDER,
                   recipients=email.recipients or (PLACEHOLDER_RECIPIENT,))


def check_email_config(email: EmailConfig, to_file: bool = False) -> None:
    """Fail before the audit, not after it, when [email] cannot work. `to_file`: for --email-to-file,
    which needs no server, no login and no addresses (placeholders stand in)."""
    if to_file:
        return
    if not email.sender:
        raise ConfigError("email.sender is required to send the report (--email)")
    if not email.recipients:
        raise ConfigError("email.recipients must name at least one address to send the report (--email)")
    if email.transport == "smtp" and email.smtp_username and not email.smtp_password_env:
        raise ConfigError("email.smtp_password_env must name the environment variable holding the SMTP password")
    if email.smtp_password_env and email.smtp_password_env not in os.environ:
        raise ConfigError(f"environment variable {email.smtp_password_env} (email.smtp_password_env) is not set")


def _owner_address(value: str | None) -> str | None:
    """A tag value that is one plausible email address, else None (then it is not routed)."""
    if not value:
        return None
    value = value.strip()
    local, _, domain = value.partition("@")
    # No whitespace or control character (a CR/LF would forge headers), one @, no display name.
    plain = value.isprintable() and not any(c.isspace() or c in "<>,;\"@" for c in local + domain)
    return value if plain and local and "." in domain else None


def split_by_owner(report: AuditReport, tag: str) -> dict[str | None, AuditReport]:
    """One report per owner address found in `tag`; None: the unrouted rest, and region errors."""
    owners: dict[str, str | None] = {
        e.endpoint.name: _owner_address(e.endpoint.tags.get(tag)) for e in report.endpoints
    }
    reports: dict[str | None, AuditReport] = {}
    for owner in sorted(set(owners.values()), key=lambda o: (o is None, o or "")):
        names = {name for name, o in owners.items() if o == owner}
        reports[owner] = replace(
            report,
            endpoints=tuple(e for e in report.endpoints if e.endpoint.name in names),
            findings=tuple(f for f in report.findings if f.endpoint in names),
            errors=tuple(
                err for err in report.errors
                if err.endpoint in names or (owner is None and err.endpoint is None)
            ),
        )
    if None not in reports and any(err.endpoint is None for err in report.errors):
        reports[None] = replace(report, endpoints=(), findings=(),
                                errors=tuple(err for err in report.errors if err.endpoint is None))
    return reports


def has_something_to_act_on(report: AuditReport) -> bool:
    """A finding above info, or an error on one of the endpoints."""
    return any(f.severity.value != "info" for f in report.findings) or bool(report.errors)


def plan_deliveries(report: AuditReport, email: EmailConfig) -> list[Delivery]:
    """One message for the recipients; with route_by_tag, one per owner too. The recipients always
    get theirs; an owner with nothing to act on gets none unless email.send_empty_owner_reports."""
    assert email.sender is not None
    if not email.route_by_tag:
        message = build_report_message(report, email.sender, email.recipients, email.subject_prefix)
        return [Delivery(tuple(email.recipients), message)]
    deliveries = []
    parts = split_by_owner(report, email.route_by_tag)
    if None not in parts:  # every endpoint is routed: the recipients still hear that the audit ran
        parts[None] = replace(report, endpoints=(), findings=(), errors=())
    for owner, part in parts.items():
        if owner and not email.send_empty_owner_reports and not has_something_to_act_on(part):
            continue
        recipients = (owner,) if owner else tuple(email.recipients)
        message = build_report_message(part, email.sender, recipients, email.subject_prefix)
        deliveries.append(Delivery(recipients, message, owner))
    return deliveries


def send_report(report: AuditReport, email: EmailConfig) -> list[Delivery]:
    """Send every planned message; those that fail go to the outbox, and one error says so."""
    check_email_config(email)
    deliveries = plan_deliveries(report, email)
    failures: list[DeliveryError] = []
    unsaved: list[OSError] = []
    for delivery in deliveries:
        try:
            transmit(delivery.message, email)
        except DeliveryError as exc:
            failures.append(exc)
            try:
                save_to_outbox(delivery.message, email)
            except OSError as save_error:
                unsaved.append(save_error)
    if failures:
        count = f"{len(failures)} unsent messages" if len(failures) > 1 else "the unsent message"
        if unsaved:
            lost = f"{len(unsaved)} of them" if len(failures) > 1 else "it"
            raise DeliveryError(f"{failures[0]}; {lost} could not be saved in {outbox_path(email)}: "
                                f"{unsaved[0].strerror or unsaved[0]}")
        raise DeliveryError(f"{failures[0]}; {count} saved in {outbox_path(email)} (retry: audit send-outbox)")
    return deliveries


def write_messages(report: AuditReport, email: EmailConfig, path: Path) -> list[Path]:
    """`--email-to-file`: the messages that would be sent, as .eml files instead."""
    email = for_file(email)
    written = []
    for delivery in plan_deliveries(report, email):
        target = (path if delivery.owner is None
                  else path.with_name(f"{path.stem}.{delivery.owner}{path.suffix or '.eml'}"))
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, bytes(delivery.message))
        written.append(target)
    return written


def transmit(message: EmailMessage, email: EmailConfig) -> None:
    if email.transport == "ses":
        send_with_ses(message, email)
    else:
        send_with_smtp(message, email)


def save_to_outbox(message: EmailMessage, email: EmailConfig) -> Path:
    """Written atomically: a crash or a full disk never leaves half a message."""
    outbox = outbox_path(email)
    outbox.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    final = outbox / f"{stamp}-{uuid.uuid4().hex[:8]}.eml"
    write_atomic(final, bytes(message))
    return final


def send_outbox(email: EmailConfig) -> tuple[int, list[str]]:
    """Send every saved message; sent ones are removed. Returns (sent, errors)."""
    check_email_config(email)
    outbox = outbox_path(email)
    sent, errors = 0, []
    for path in sorted(outbox.glob("*.eml")) if outbox.is_dir() else []:
        message = message_from_bytes(path.read_bytes(), policy=policy.default)
        try:
            transmit(message, email)
        except DeliveryError as exc:
            errors.append(f"{path.name}: {exc}")
            continue
        path.unlink()
        sent += 1
    return sent, errors


def _recipients(message: EmailMessage) -> list[str]:
    return [address for _, address in getaddresses(message.get_all("To", []) + message.get_all("Cc", []))]


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
                try:
                    server.login(email.smtp_username, os.environ.get(email.smtp_password_env or "", ""))
                except UnicodeError:  # its message quotes a character of the password
                    raise DeliveryError(f"cannot log in to SMTP server {where}: the user name or the password "
                                        f"(${email.smtp_password_env}) holds a character other than ASCII") from None
            server.send_message(message, from_addr=email.sender, to_addrs=_recipients(message))
    except smtplib.SMTPAuthenticationError as exc:
        raise DeliveryError(f"SMTP server {where} refused the login for {email.smtp_username}: "
                            f"{exc.smtp_code}") from None
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
            Source=email.sender, Destinations=_recipients(message), RawMessage={"Data": bytes(message)}
        )
    except botocore.exceptions.ClientError as exc:
        error = exc.response.get("Error", {})
        raise DeliveryError(f"SES in {region} rejected the message: "
                            f"{error.get('Code')}: {error.get('Message')}") from None
    except botocore.exceptions.BotoCoreError as exc:
        raise DeliveryError(f"cannot send with SES in {region}: {exc}") from None
