"""The weekly digest, built from history (not from CloudWatch): what is new this week, what was
resolved since last week and what it saved, what is still open and for how long, and the trend
of spend and potential saving over the last weeks.

A week is an ISO week in UTC; its state is its latest run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta

from auditor.errors import ConfigError
from auditor.history.store import AppliedChange, FindingRecord, History, RunSummary

TREND_WEEKS = 8
_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")


@dataclass(frozen=True)
class OpenFinding:
    finding: FindingRecord
    weeks_open: int  # consecutive weeks, this one included, whose state had it


@dataclass(frozen=True)
class ResolvedFinding:
    finding: FindingRecord
    realised_monthly_usd: float  # the endpoint's cost drop since last week (its full cost if deleted)


@dataclass(frozen=True)
class AppliedSaving:
    """A change `audit apply` made that a run of this week saw done (auditor.act.verify)."""

    change: AppliedChange
    # A deployment: the variant's monthly cost when the plan was made minus its cost in the run that
    # verified it (None: that run could not price it); any other change: its plan's saving.
    realised_monthly_usd: float | None


@dataclass(frozen=True)
class WeekPoint:
    week: str
    monthly_cost_usd: float | None  # None: no run that week
    monthly_savings_usd: float | None


@dataclass(frozen=True)
class Digest:
    week: str
    run: RunSummary
    previous_run: RunSummary | None
    runs_this_week: int
    new: tuple[OpenFinding, ...]
    resolved: tuple[ResolvedFinding, ...]
    still_open: tuple[OpenFinding, ...]
    trend: tuple[WeekPoint, ...]
    applied: tuple[AppliedSaving, ...] = ()

    @property
    def realised_monthly_usd(self) -> float:
        """What the resolved findings and the verified applied changes saved. A finding resolved on
        an endpoint an applied change covers is that change's saving: counted once, as the change's."""
        changed = {(a.change.account_id, a.change.region, a.change.endpoint) for a in self.applied}
        resolved = sum(r.realised_monthly_usd for r in self.resolved
                       if (r.finding.account_id, r.finding.region, r.finding.endpoint) not in changed)
        return round(resolved + sum(a.realised_monthly_usd or 0.0 for a in self.applied), 2)


def iso_week(moment: datetime | date) -> str:
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


def week_bounds(week: str) -> tuple[datetime, datetime]:
    match = _WEEK.match(week)
    if not match:
        raise ConfigError(f"--week must look like 2026-W48, got {week!r}")
    try:
        monday = date.fromisocalendar(int(match[1]), int(match[2]), 1)
    except ValueError:
        raise ConfigError(f"--week {week!r} is not a week of that year") from None
    start = datetime(monday.year, monday.month, monday.day, tzinfo=UTC)
    return start, start + timedelta(days=7)


def previous_week(week: str) -> str:
    start, _ = week_bounds(week)
    return iso_week(start - timedelta(days=7))


def latest_run(history: History, week: str) -> tuple[RunSummary | None, int]:
    """The week's state (its latest run that did not fail outright) and how many runs it had."""
    start, end = week_bounds(week)
    runs = history.runs(since=start, until=end)
    usable = [r for r in runs if not r.fatal] or runs
    return (usable[0] if usable else None), len(runs)


def build_digest(history: History, week: str) -> Digest | None:
    """None when the week had no run."""
    run, count = latest_run(history, week)
    if run is None:
        return None
    previous, _ = latest_run(history, previous_week(week))
    current = {f.fingerprint: f for f in history.findings(run.id)}
    before = {f.fingerprint: f for f in history.findings(previous.id)} if previous else {}

    # Weeks back in a row with the finding, for everything open now.
    weeks_open = dict.fromkeys(current, 1)
    still_counting = set(current)
    cursor = week
    for _ in range(52):
        if not still_counting:
            break
        cursor = previous_week(cursor)
        past, _ = latest_run(history, cursor)
        if past is None:
            break
        present = {f.fingerprint for f in history.findings(past.id)}
        for fp in list(still_counting):
            if fp in present:
                weeks_open[fp] += 1
            else:
                still_counting.discard(fp)

    resolved = []
    if previous is not None:
        costs_before = history.endpoint_costs(previous.id)
        costs_now = history.endpoint_costs(run.id)
        for fp, finding in before.items():
            if fp in current:
                continue
            key = (finding.account_id, finding.region, finding.endpoint)
            drop = costs_before.get(key, 0.0) - costs_now.get(key, 0.0)
            resolved.append(ResolvedFinding(finding, round(max(drop, 0.0), 2)))
    resolved.sort(key=lambda r: -r.realised_monthly_usd)

    def ranked(items: list[OpenFinding], listed: set[tuple[str, str, str, str | None]] | None = None,
               ) -> tuple[OpenFinding, ...]:
        """By saving; one row per resource and variant (its findings rest on one plan: the largest
        saving stands for it, its rules named together), none already `listed`."""
        rows: dict[tuple[str, str, str, str | None], OpenFinding] = {}
        rules: dict[tuple[str, str, str, str | None], list[str]] = {}
        for o in sorted(items, key=lambda o: (-o.finding.monthly_savings_usd, -o.weeks_open, o.finding.rule)):
            f = o.finding
            key = (f.account_id, f.region, f.endpoint, f.variant)
            if listed is not None and key in listed:
                continue
            rows.setdefault(key, o)
            rules.setdefault(key, []).append(f.rule)
        return tuple(replace(o, finding=replace(o.finding, rule=", ".join(dict.fromkeys(rules[key]))))
                     for key, o in rows.items())

    start, end = week_bounds(week)
    applied = tuple(_applied_saving(history, change)
                    for change in history.verified_applied([r.id for r in history.runs(since=start, until=end)]))

    new = [OpenFinding(f, weeks_open[fp]) for fp, f in current.items() if fp not in before]
    still = [OpenFinding(f, weeks_open[fp]) for fp, f in current.items() if fp in before]
    return Digest(
        week=week,
        run=run,
        previous_run=previous,
        runs_this_week=count,
        new=(new_rows := ranked(new)),
        resolved=tuple(resolved),
        still_open=ranked(still, {(o.finding.account_id, o.finding.region, o.finding.endpoint, o.finding.variant)
                                  for o in new_rows}),
        trend=tuple(_trend(history, week)),
        applied=applied,
    )


def _applied_saving(history: History, change: AppliedChange) -> AppliedSaving:
    """A deployment's saving is what the variant's cost dropped by; any other verified change (a
    stopped notebook, a deleted app, removed nodes, off-hours schedules, alarms) saves what its
    plan priced: the run saw it in effect, and the audit prices no off hours or stopped state."""
    if not change.new_config:
        return AppliedSaving(change, round(max(change.monthly_savings_usd, 0.0), 2))
    before = (change.plan.get("current") or {}).get("monthly_cost_usd")
    after = (history.variant_cost(change.verified_run_id, change.account_id, change.region, change.endpoint,
                                  change.variant) if change.verified_run_id is not None else None)
    if not isinstance(before, int | float) or after is None:
        return AppliedSaving(change, None)
    return AppliedSaving(change, round(max(float(before) - after, 0.0), 2))


def _trend(history: History, week: str) -> list[WeekPoint]:
    weeks = [week]
    for _ in range(TREND_WEEKS - 1):
        weeks.append(previous_week(weeks[-1]))
    points = []
    for w in reversed(weeks):
        run, _ = latest_run(history, w)
        points.append(WeekPoint(w, run.monthly_cost_usd if run else None, run.monthly_savings_usd if run else None))
    return points
