"""The weekly digest as HTML, text and an email message (with the trend chart inline).

The email keeps the nightly report's size budget: on a large fleet it shows the top rows of each
list that fit under HTML_BUDGET_BYTES, says how many more there are, and attaches every row as CSV.
"""

from __future__ import annotations

import base64
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

import css_inline

from auditor.history.weekly import Digest, OpenFinding
from auditor.report.chart import weekly_trend_png
from auditor.report.email_message import HTML_BUDGET_BYTES, SHOWN_LIMITS
from auditor.report.render import plain_document, template_environment, write_csv


def _finding(item: OpenFinding) -> dict[str, Any]:
    f = item.finding
    return {"rule": f.rule, "severity": f.severity, "region": f.region, "endpoint": f.endpoint,
            "variant": f.variant, "message": f.message, "advice": f.advice,
            "monthly_savings_usd": f.monthly_savings_usd, "weeks_open": item.weeks_open}


def digest_to_dict(digest: Digest) -> dict[str, Any]:
    run = digest.run
    return {
        "week": digest.week,
        "run": {"id": run.id, "started_at": run.started_at.isoformat(), "endpoints": run.endpoints,
                "monthly_cost_usd": run.monthly_cost_usd, "monthly_savings_usd": run.monthly_savings_usd,
                "errors": list(run.errors)},
        "previous_week_run": None if digest.previous_run is None else digest.previous_run.started_at.isoformat(),
        "runs_this_week": digest.runs_this_week,
        "new": [_finding(o) for o in digest.new],
        "still_open": [_finding(o) for o in digest.still_open],
        "resolved": [
            {**_finding(OpenFinding(r.finding, 0)), "realised_monthly_usd": r.realised_monthly_usd}
            for r in digest.resolved
        ],
        "applied": [
            {"plan_id": a.change.plan_id, "region": a.change.region, "endpoint": a.change.endpoint,
             "variant": a.change.variant, "applied_at": a.change.started_at.isoformat(), "by": a.change.caller,
             "resource_type": str((a.change.plan.get("resource") or {}).get("type") or "endpoint"),
             "action": str((a.change.plan.get("proposed") or {}).get("action") or ""),
             "new_config": a.change.new_config, "expected_monthly_usd": a.change.monthly_savings_usd,
             "realised_monthly_usd": a.realised_monthly_usd}
            for a in digest.applied
        ],
        "realised_monthly_usd": digest.realised_monthly_usd,
        "trend": [{"week": p.week, "monthly_cost_usd": p.monthly_cost_usd, "monthly_savings_usd": p.monthly_savings_usd}
                  for p in digest.trend],
    }


def subject_for_digest(digest: Digest, prefix: str = "SageMaker audit") -> str:
    return (f"{prefix} weekly {digest.week}: {len(digest.new)} new, {len(digest.resolved)} resolved, "
            f"${digest.run.monthly_savings_usd:,.0f}/month still to save")


LISTS = ("new", "still_open", "resolved")


def _shown(d: dict[str, Any], limit: int | None) -> dict[str, Any]:
    """The top `limit` rows of each list, and how many of each are left out (hidden.<list>)."""
    hidden = {name: 0 if limit is None else max(len(d[name]) - limit, 0) for name in LISTS}
    if limit is None:
        return {**d, "hidden": hidden}
    return {**d, **{name: d[name][:limit] for name in LISTS}, "hidden": hidden}


def render_weekly_html(digest: Digest, chart_src: str | None, prefix: str = "SageMaker audit",
                       limit: int | None = None) -> str:
    html = template_environment().get_template("weekly.html.j2").render(
        d=_shown(digest_to_dict(digest), limit), chart_src=chart_src, subject=subject_for_digest(digest, prefix)
    )
    return css_inline.inline(html)


def render_weekly_text(digest: Digest, limit: int | None = None) -> str:
    d = _shown(plain_document(digest_to_dict(digest)), limit)
    return template_environment().get_template("weekly.txt.j2").render(d=d)


WEEKLY_CSV_COLUMNS = ("status", "weeks_open", "severity", "rule", "region", "endpoint", "variant", "advice",
                      "monthly_savings_usd", "realised_monthly_usd", "message")


def render_weekly_csv(digest: Digest) -> str:
    """Every finding of the digest, one a row: new, still open, then resolved."""
    d = digest_to_dict(digest)
    rows = [{**f, "status": status, "variant": f["variant"] or "", "advice": f["advice"] or "",
             "weeks_open": f["weeks_open"] if name != "resolved" else "",
             "realised_monthly_usd": f.get("realised_monthly_usd", "")}
            for status, name in (("new", "new"), ("still open", "still_open"), ("resolved", "resolved"))
            for f in d[name]]
    return write_csv(WEEKLY_CSV_COLUMNS, rows, ignore_extra=True)


def trend_chart(digest: Digest) -> bytes | None:
    return weekly_trend_png([(p.week, p.monthly_cost_usd, p.monthly_savings_usd) for p in digest.trend])


def render_weekly_file(digest: Digest) -> str:
    chart = trend_chart(digest)
    chart_uri = None if chart is None else "data:image/png;base64," + base64.b64encode(chart).decode()
    return render_weekly_html(digest, chart_uri)


def build_weekly_message(digest: Digest, sender: str, recipients: list[str] | tuple[str, ...],
                         prefix: str = "SageMaker audit", html_budget: int = HTML_BUDGET_BYTES) -> EmailMessage:
    domain = sender.rpartition("@")[2] or None
    chart = trend_chart(digest)
    cid = make_msgid(idstring="trend", domain=domain)
    for limit in SHOWN_LIMITS:
        html = render_weekly_html(digest, f"cid:{cid[1:-1]}" if chart else None, prefix, limit)
        if len(html.encode("utf-8")) <= html_budget:
            break
    message = EmailMessage()
    message["Subject"] = subject_for_digest(digest, prefix)
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = make_msgid(domain=domain)
    message.set_content(render_weekly_text(digest, limit))
    message.add_alternative(html, subtype="html")
    html_part = message.get_body(preferencelist=("html",))
    if chart and isinstance(html_part, EmailMessage):
        html_part.add_related(chart, maintype="image", subtype="png", cid=cid, filename="trend.png",
                              disposition="inline")
    if limit is not None:
        message.add_attachment(render_weekly_csv(digest).encode("utf-8"), maintype="text", subtype="csv",
                               filename=f"sagemaker-audit-weekly-{digest.week}.csv")
    return message
