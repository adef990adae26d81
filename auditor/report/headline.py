"""The report's headline: one line, the same in every output (the mail's subject, the first line of
the HTML, text and Markdown, the terminal table's title, the chat post, the run's log line).

One definition of each figure: `findings` are the findings above info (each a reason to act);
`not judged` is the info findings (a data gap, metrics off), counted apart and named so everywhere;
the saving is the sum of the counted plans (measured, saving money), and what it leaves out is said
in the same line. A run that could not read a region or an account says so first, and never
states "0 findings" or "$0" for what it did not read.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from auditor.models import AuditError, AuditReport, covered_plans
from auditor.text import one_line

PREFIX = "SageMaker audit"


def _usd(value: float) -> str:
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def unread_places(unread: Iterable[AuditError], read: AbstractSet[tuple[str, str]] = frozenset()) -> list[str]:
    """The accounts and regions a run could not read, each once, in order: "account 111122223333",
    "us-east-1", "us-east-1 of 111122223333"; "(in part)" after a region where something was read
    (`read`: the (account, region) pairs the report holds a resource or a finding of)."""
    places: dict[str, bool] = {}  # place -> read in part
    read_regions = {region for _, region in read}
    for e in unread:
        if e.region == "-":
            places[f"account {e.account_id}" if e.account_id else "every region"] = False
            continue
        place = e.region + (f" of {e.account_id}" if e.account_id else "")
        places[place] = ((e.account_id, e.region) in read) if e.account_id else e.region in read_regions
    return [place + (" (in part)" if part else "") for place, part in places.items()]


def summary_figures(report: AuditReport) -> dict[str, Any]:
    """The figures the headline reads, as the JSON document's summary holds them."""
    covered = covered_plans(report.plans)
    measured = [p for p in report.plans if p.measured and p.id not in covered]
    included = [p for p in report.plans if p.id in covered and p.monthly_savings_usd > 0]
    not_counted = [p for p in report.plans if not p.measured and p.monthly_savings_usd > 0]
    costing_more = [p for p in measured if p.monthly_savings_usd < 0]
    return {
        "findings": report.finding_count,
        "not_judged": report.not_judged_count,
        "monthly_savings_usd": report.monthly_savings_usd,
        "plans_counted": sum(1 for p in measured if p.monthly_savings_usd > 0),
        "plans_not_counted": {"plans": len(not_counted),
                              "monthly_savings_usd": round(sum(p.monthly_savings_usd for p in not_counted), 2)},
        "plans_included": {"plans": len(included),
                           "monthly_savings_usd": round(sum(p.monthly_savings_usd for p in included), 2)},
        "plans_costing_more": {"plans": len(costing_more),
                               "monthly_usd": round(-sum(p.monthly_savings_usd for p in costing_more), 2)},
        "plans_above_max_risk": None if report.max_risk is None else {
            "max_risk": report.max_risk.value, "plans": len(report.plans_above_risk),
            "monthly_savings_usd": round(sum(max(p.monthly_savings_usd, 0.0) for p in report.plans_above_risk
                                             if p.measured), 2)},
        "unread": unread_places(report.unread, _read(report)),
        "partial": report.partial,
    }


def _read(report: AuditReport) -> set[tuple[str, str]]:
    """The (account, region) pairs the report holds a resource or a finding of."""
    from auditor.kinds.registry import owned_resources  # the kinds import the report's modules

    return ({(o.account_id, o.region) for o in owned_resources(report)}
            | {(f.resource.account_id, f.resource.region) for f in report.findings})


def headline(summary: dict[str, Any], prefix: str = PREFIX) -> str:
    """E.g. "SageMaker audit: 39 findings (+4 not judged), $15,159.64/month to save", or
    "SageMaker audit incomplete: 1 region not read (us-east-1)". `summary`: summary_figures' keys.
    Always one line: a control character in a reason or a name becomes a space."""
    return one_line(_headline(summary, prefix))


def _headline(summary: dict[str, Any], prefix: str) -> str:
    findings, not_judged = summary["findings"], summary.get("not_judged", 0)
    counts = _plural(findings, "finding") + (f" (+{not_judged} not judged)" if not_judged else "")
    money = f"{_usd(summary['monthly_savings_usd'])}/month to save"
    left_out = []
    not_counted = summary.get("plans_not_counted") or {}
    if not_counted.get("plans"):
        left_out.append(f"not counted: {_plural(not_counted['plans'], 'plan')} on circumstantial evidence "
                        f"({_usd(not_counted['monthly_savings_usd'])})")
    included = summary.get("plans_included") or {}
    if included.get("plans"):
        left_out.append(f"{_plural(included['plans'], 'plan')} counted in another "
                        f"({_usd(included['monthly_savings_usd'])})")
    costing_more = summary.get("plans_costing_more") or {}
    if costing_more.get("plans"):
        left_out.append(f"{_plural(costing_more['plans'], 'plan')} to fix a risk "
                        f"{'costs' if costing_more['plans'] == 1 else 'cost'} {_usd(costing_more['monthly_usd'])} more")
    above = summary.get("plans_above_max_risk") or {}
    if above.get("plans"):
        left_out.append(f"left out: {_plural(above['plans'], 'plan')} above {above['max_risk']} risk "
                        f"({_usd(above['monthly_savings_usd'])})")
    figures = counts + ", " + money + "".join(f"; {part}" for part in left_out)
    unread = summary.get("unread") or []
    if not unread and not summary.get("partial"):
        return f"{prefix}: {figures}"
    status = f"{prefix} incomplete"
    if summary.get("partial"):
        status += f" ({summary['partial']})"
    where = "; ".join(_unread_groups(unread)) or "not every resource read"
    read_something = findings or not_judged or summary.get("plans_counted") or left_out
    return f"{status}: {where}" + (f"; in what was read: {figures}" if read_something else "")


def _unread_groups(places: list[str]) -> list[str]:
    """"1 account not read (account 1111...)", "2 regions not read (us-east-1, eu-west-1)",
    "1 region read in part (eu-central-1)"."""
    accounts = [p for p in places if p.startswith("account ") or p == "every region"]
    part = [p.removesuffix(" (in part)") for p in places if p.endswith(" (in part)")]
    regions = [p for p in places if p not in accounts and not p.endswith(" (in part)")]
    groups = []
    if accounts:
        groups.append(f"{_plural(len(accounts), 'account')} not read ({', '.join(accounts)})")
    if regions:
        groups.append(f"{_plural(len(regions), 'region')} not read ({', '.join(regions)})")
    if part:
        groups.append(f"{_plural(len(part), 'region')} read in part ({', '.join(part)})")
    return groups


def doc_headline(doc: dict[str, Any], prefix: str = PREFIX) -> str:
    """The headline of a JSON document (its summary and `partial`)."""
    return headline({**doc["summary"], "partial": doc.get("partial")}, prefix)


def report_headline(report: AuditReport, prefix: str = PREFIX) -> str:
    return headline(summary_figures(report), prefix)


def incomplete(summary: dict[str, Any]) -> bool:
    return bool(summary.get("unread") or summary.get("partial"))
