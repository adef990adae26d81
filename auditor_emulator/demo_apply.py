"""The demo's second half, from advice to action: one plan of the first audit applied in the emulator
the way a user applies it (`audit apply ID`, then `--yes`), the next audit run seeing the new shape,
and the weekly digest counting the saving realised. Each step says a few lines; the history keeps it all.

Apply runs under its own credentials as it must: the demo names a role ([apply] role_arn) that the
emulator's STS lets it assume, never the audit's credentials by default.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from auditor.act.apply import apply_plan
from auditor.act.plan import ApplyFailed, ApplyRefused, load_plan
from auditor.config import OPT_IN_TAG, AuditConfig
from auditor.files import write_atomic
from auditor.history.store import AppliedChange, History
from auditor.history.weekly import build_digest, iso_week
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.models import AuditReport, Plan
from auditor.report.weekly import render_weekly_file
from auditor.tasks.audit import deliver_outcome, execute_audit, history_path
from auditor.text import one_line
from auditor_emulator.fleet import EndpointSpec

# The role apply assumes in the emulator (its STS accepts any role of its account).
DEMO_APPLY_ROLE = "arn:aws:iam::123456789012:role/SageMakerAuditorApply"
DEPLOYMENT_SECONDS = 1.0  # how long the emulator's UpdateEndpoint runs in the demo

Echo = Callable[[str], None]
_ASSUMED_ROLE = re.compile(r"arn:aws:sts::\d{12}:assumed-role/([^/\s;]+)/[^\s;]+")


@dataclass(frozen=True)
class StoryOutcome:
    plan_id: str | None  # the plan applied (None: none could be)
    applied: AppliedChange | None  # its record in the history, after the second run
    realised_monthly_usd: float | None  # what the week's digest counts as realised
    digest_path: Path | None
    problem: str | None = None  # the step that did not go as it must, one line (the demo then exits 1)


def opted_in_endpoints(fleet: list[EndpointSpec]) -> set[str]:
    key, value = OPT_IN_TAG
    return {spec.name for spec in fleet if spec.tags.get(key) == value}


def plan_to_apply(report: AuditReport, fleet: list[EndpointSpec]) -> Plan | None:
    """The first plan (the report's order: saving within risk) on an endpoint the seed opted in."""
    opted_in = opted_in_endpoints(fleet)
    return next((p for p in report.plans
                 if p.resource.type == "endpoint" and p.resource.name in opted_in and p.change is not None), None)


def shape(instance_type: object, count: object) -> str:
    return f"{count} x {one_line(str(instance_type))}"


def dry_run_summary(plan: dict[str, Any]) -> list[str]:
    """The dry run in brief: what changes, and each call (`audit apply ID` prints each call's purpose
    and request too; `audit plans show ID --as json` prints them all)."""
    current, proposed = plan.get("current") or {}, plan.get("proposed") or {}
    risk = (plan.get("risk") or {}).get("level") or "not assessed"
    lines = [f"  {one_line(plan['resource']['name'])} / {one_line(plan.get('variant') or '-')}: "
             f"{shape(current.get('instance_type'), current.get('instance_count'))} -> "
             f"{shape(proposed.get('instance_type'), proposed.get('instance_count'))}, "
             f"saves ${float(plan.get('monthly_savings_usd') or 0):,.2f}/month, risk {one_line(str(risk))}"]
    calls = (plan.get("change") or {}).get("calls") or []
    named = [f"{one_line(str(c.get('service')))} {one_line(str(c.get('operation')))}" for c in calls]
    counted = [f"{call} x{named.count(call)}" if named.count(call) > 1 else call for call in dict.fromkeys(named)]
    lines.append(f"  calls: {', '.join(counted)}")
    return lines


def tell_the_action_story(config: AuditConfig, report: AuditReport, fleet: list[EndpointSpec],
                          output_dir: Path, echo: Echo) -> StoryOutcome:
    """Apply one plan (dry run, then --yes), audit again, build the week's digest. Runs inside the
    emulator's environment, after the first audit was recorded in `config`'s history."""
    plan = plan_to_apply(report, fleet)
    echo("")
    if plan is None:
        return StoryOutcome(None, None, None, None, f"the demo audit made no plan with a change on an endpoint "
                                                   f"tagged {'='.join(OPT_IN_TAG)}: nothing for `audit apply`")
    echo(f"From advice to action: plan {plan.id} on {one_line(plan.resource.name)} (tagged {'='.join(OPT_IN_TAG)}).")
    try:
        stored = load_plan(config, plan.id)  # as `audit apply` reads it: from the history
        echo(f"$ audit apply {plan.id}        # a dry run: nothing is changed")
        for line in dry_run_summary(stored):
            echo(line)
        # The caller's ARN (a word longer than a terminal line) by its role's name.
        # (--yes makes the calls: the next line says so.)
        verdict = apply_plan(config, stored, yes=False).message.removesuffix(" (--yes makes the calls)")
        echo("  " + _ASSUMED_ROLE.sub(r"role \1", verdict))
        echo(f"$ audit apply {plan.id} --yes  # deploys it blue/green, waits")
        started = time.monotonic()
        applied = apply_plan(config, stored, yes=True)
        echo(f"  {applied.message} ({time.monotonic() - started:.1f} s)")
    except (ApplyRefused, ApplyFailed) as exc:
        return StoryOutcome(plan.id, None, None, None, str(exc))

    # The next run: the same audit, a little later; recording it checks the change happened.
    outcome = execute_audit(config, now=datetime.now(UTC))
    delivered = deliver_outcome(config, outcome)
    if delivered.problems:
        return StoryOutcome(plan.id, None, None, None, f"the second run: {delivered.problems[0]}")
    with History(history_path(config), reading=True) as history:
        record = next((c for c in history.applied() if c.plan_id == plan.id), None)
        week = iso_week(outcome.report.generated_at)
        digest = build_digest(history, week)
    echo("$ audit run                    # the next run")
    endpoint = next((e for e in ENDPOINTS.section(outcome.report)
                     if (e.endpoint.account_id, e.endpoint.region, e.endpoint.name)
                     == (plan.resource.account_id, plan.resource.region, plan.resource.name)), None)
    variant = next((v.variant for v in endpoint.variants if v.variant.name == plan.variant), None) if endpoint else None
    now_runs = (f"now runs {shape(variant.instance_type, variant.instance_count)} on "
                f"{one_line(endpoint.endpoint.config_name or '-')}" if endpoint and variant else "was not found")
    verified = (f"verified by run {record.verified_run_id}" if record and record.verified_run_id
                else "NOT verified: the run does not see the new shape")
    echo(f"  {one_line(plan.resource.name)} / {one_line(plan.variant or '-')} {now_runs}: plan {plan.id} {verified}")
    if record is None or record.verified_run_id is None:
        return StoryOutcome(plan.id, record, None, None, f"plan {plan.id} was applied, but the next run did not "
                                                         "see the endpoint on its new shape")

    echo(f"$ audit weekly --output {output_dir / 'weekly.html'}")
    if digest is None:
        return StoryOutcome(plan.id, record, None, None, f"no audit runs in {week}: no digest")
    digest_path = output_dir / "weekly.html"
    write_atomic(digest_path, render_weekly_file(digest))
    counted = next((a for a in digest.applied if a.change.plan_id == plan.id), None)
    if counted is None:
        return StoryOutcome(plan.id, record, None, digest_path, f"the digest of {week} does not count plan "
                                                                f"{plan.id} among the changes applied and verified")
    if counted.realised_monthly_usd is None:
        echo(f"  digest {week}: plan {plan.id} applied and verified; its realised saving could not be priced")
    else:
        echo(f"  digest {week}: applied and verified this week: plan {plan.id}, "
             f"${counted.realised_monthly_usd:,.2f}/month realised (planned ${plan.monthly_savings_usd:,.2f})")
    return StoryOutcome(plan.id, record, counted.realised_monthly_usd, digest_path)
