"""The weekly digest as HTML, text and an email message (with the trend chart inline)."""

from __future__ import annotations

import base64
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

import css_inline

from auditor.history.weekly import Digest, OpenFinding
from auditor.report.chart import weekly_trend_png
from auditor.report.render import template_environment


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
        "realised_monthly_usd": digest.realised_monthly_usd,
        "trend": [{"week": p.week, "monthly_cost_usd": p.monthly_cost_usd, "monthly_savings_usd": p.monthly_savings_usd}
                  for p in digest.trend],
    }


def subject_for_digest(digest: Digest, prefix: str = "SageMaker audit") -> str:
    return (f"{prefix} weekly {digest.week}: {len(digest.new)} new, {len(digest.resolved)} resolved, "
            f"${digest.run.monthly_savings_usd:,.0f}/month still to save")


def render_weekly_html(digest: Digest, chart_src: str | None, prefix: str = "SageMaker audit") -> str:
    html = template_environment().get_template("weekly.html.j2").render(
        d=digest_to_dict(digest), chart_src=chart_src, subject=subject_for_digest(digest, prefix)
    )
    return css_inline.inline(html)


def render_weekly_text(digest: Digest) -> str:
    return template_environment().get_template("weekly.txt.j2").render(d=digest_to_dict(digest))


def trend_chart(digest: Digest) -> bytes | None:
    return weekly_trend_png([(p.week, p.monthly_cost_usd, p.monthly_savings_usd) for p in digest.trend])


def render_weekly_file(digest: Digest) -> str:
    chart = trend_chart(digest)
    chart_uri = None if chart is None else "data:image/png;base64," + base64.b64encode(chart).decode()
    return render_weekly_html(digest, chart_uri)


def build_weekly_message(digest: Digest, sender: str, recipients: list[str] | tuple[str, ...],
                         prefix: str = "SageMaker audit") -> EmailMessage:
    domain = sender.rpartition("@")[2] or None
    chart = trend_chart(digest)
    cid = make_msgid(idstring="trend", domain=domain)
    message = EmailMessage()
    message["Subject"] = subject_for_digest(digest, prefix)
    message["From"] = sender
    message["To"] = ", ".join(recipients)
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = make_msgid(domain=domain)
    message.set_content(render_weekly_text(digest))
    message.add_alternative(render_weekly_html(digest, f"cid:{cid[1:-1]}" if chart else None, prefix), subtype="html")
    html_part = message.get_body(preferencelist=("html",))
    if chart and isinstance(html_part, EmailMessage):
        html_part.add_related(chart, maintype="image", subtype="png", cid=cid, filename="trend.png",
                              disposition="inline")
    return message
