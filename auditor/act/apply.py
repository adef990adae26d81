"""`audit apply ID [--option N]`: the dry run (every call the plan's change would make, and the
guards' verdict) and, with --yes, the change itself with apply's own credentials, the wait its
resource type needs (its kind's target, auditor/kinds/<kind>/target.py: the endpoint InService
again on the new config or rolled back, the notebook Stopped, the app Deleted, the cluster InService
without the nodes), the read-back of what it created (auditor.act.readback), and the record in the history.

Apply's credentials are its own: [apply] profile, or [apply] role_arn assumed from it (or from the
default chain). With neither set, apply refuses: the audit's credentials are read-only by design and
are never borrowed for a write.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import botocore.exceptions

from auditor.act.answers import describe, referred_call
from auditor.act.cleanup import RUNNING_APPLY, clean, to_clean
from auditor.act.evidence import evidence_refusal
from auditor.act.execute import Execution, StopFlag, stop_on_signals
from auditor.act.guards import account_refusal, credentials_refusal, plan_refusal, resource_refusal
from auditor.act.journal import IN_PROGRESS, Journal
from auditor.act.live import read_tags, rollback_alarm_refusal
from auditor.act.plan import ApplyFailed, ApplyInterrupted, ApplyRefused, PlanToApply, parse_plan, plan_noun
from auditor.collect.session import AwsClients, client_config, describe_client_error
from auditor.config import AuditConfig
from auditor.errors import AuditorError
from auditor.history.store import History
from auditor.kinds.registry import target_for
from auditor.models import AnswerReference, parse_reference
from auditor.text import one_line


@dataclass(frozen=True)
class ApplyResult:
    plan_id: str
    outcome: str  # would-apply (dry run, guards pass) | applied
    message: str
    caller: str | None = None
    notes: tuple[str, ...] = ()  # what the cleanup before the change did (auditor.act.cleanup)


def dry_run_lines(plan_json: dict[str, Any], option: int = 0) -> list[str]:
    """What the plan (or its alternative `option`) changes and every call, params as JSON (escaped:
    hostile text stays one line)."""
    plan = parse_plan(plan_json, option)
    current, proposed = plan.current, plan.proposed
    risk = plan.risk.level.value if plan.risk else "not assessed"
    which = f" option {plan.option}" if plan.option else ""
    lines = [f"plan {plan.id}{which}: {plan_noun(plan)} / {one_line(plan.variant or '-')} in "
             f"{plan.resource.account_id} {plan.resource.region}: {_shape(current)} -> {_shape(proposed)} "
             f"({one_line(str(proposed.get('action') or '-'))}), "
             f"saves ${plan.monthly_savings_usd:,.2f}/month, risk {risk}"]
    if plan.change is None:
        return [*lines, "  no change the auditor can make as API calls"]
    for number, call in enumerate(plan.change.calls, start=1):
        lines.append(f"  {number}. {one_line(call.service)} {one_line(call.operation)}: {one_line(call.purpose)}")
        lines.append(f"     {json.dumps(call.params, sort_keys=True, default=str)}")
        for path, reference in _reference_paths(call.params):
            earlier = referred_call(plan.change.calls[:number - 1], reference)
            source = f"call {earlier + 1}'s answer" if earlier is not None else "no earlier call (refused)"
            lines.append(f"     {one_line(path)} = {describe(reference)} ({source}), put in when it is made")
    if plan.change.waits_for:
        lines.append(f"  then waits for: {one_line(plan.change.waits_for)}")
    lines.append(f"  rollback: {one_line(plan.change.rollback or 'not said')}")
    return lines


def _reference_paths(params: Any, path: str = "") -> list[tuple[str, AnswerReference]]:
    """Each answer reference in a call's params with where it stands (AlarmActions[0])."""
    if isinstance(params, dict):
        return [found for key, value in params.items()
                for found in _reference_paths(value, f"{path}.{key}" if path else str(key))]
    if isinstance(params, list):
        return [found for index, value in enumerate(params) for found in _reference_paths(value, f"{path}[{index}]")]
    reference = parse_reference(params)
    return [(path, reference)] if reference else []


def _shape(side: dict[str, Any]) -> str:
    kind = side.get("instance_type")
    count = side.get("instance_count")
    return f"{count} x {one_line(str(kind))}" if kind else "-"


def apply_clients(config: AuditConfig, region: str) -> AwsClients:
    """Apply's own session: [apply] profile, and [apply] role_arn assumed from it when set."""
    refusal = credentials_refusal(config.apply)
    if refusal:
        raise ApplyRefused(refusal)
    aws = config.aws
    clients = AwsClients(profile=config.apply.profile, config=client_config(
        aws.connect_timeout_seconds, aws.read_timeout_seconds, aws.max_attempts))
    if config.apply.role_arn:
        clients = clients.assume(config.apply.role_arn, None, region, session_name="sagemaker-auditor-apply")
    return clients


def apply_plan(config: AuditConfig, plan_json: dict[str, Any], *, yes: bool, option: int = 0,
               load_tested: bool = False,
               clients: AwsClients | None = None, sleep: Callable[[float], None] = time.sleep,
               clock: Callable[[], float] = time.monotonic,
               now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> ApplyResult:
    """Check every guard; without `yes` say whether it would apply. With `yes`, make the calls in
    order, wait for what the resource type waits for (its kind's target), read back what the calls
    created (auditor.act.readback), record it in the history. `option`: an alternative of the plan
    instead of its proposed option. `load_tested`: the caller says the load test the plan's risk asks
    for was run and passed (journaled). Raises ApplyRefused (nothing changed) or ApplyFailed (a call
    failed, the deployment rolled back, a read-back found nothing, or the wait ran out)."""
    plan = parse_plan(plan_json, option)
    refusal = plan_refusal(plan, config.apply, load_tested) or credentials_refusal(config.apply)
    if refusal:
        raise ApplyRefused(refusal)
    target = target_for(plan.resource.type)
    if target is None:  # plan_refusal refuses it first
        raise ApplyRefused(f"plan {plan.id}: apply does not change a {one_line(plan.resource.type)}")
    region = plan.resource.region
    clients = clients or apply_clients(config, region)
    caller_arn, caller_account = _whoami(clients, region)
    sagemaker = clients.client("sagemaker", region)
    refusal = account_refusal(plan, caller_account)
    if refusal:
        raise ApplyRefused(refusal)
    observed = target.observe(clients, plan)
    refusal = (resource_refusal(plan, config.apply, observed, lambda arn: read_tags(sagemaker, arn, region))
               or rollback_alarm_refusal(clients, plan)
               or evidence_refusal(clients, plan, observed, config, now()))
    if refusal:
        raise ApplyRefused(refusal)
    if not yes:
        return ApplyResult(plan.id, "would-apply", f"guards pass: would apply as {caller_arn}; nothing was changed "
                                                   "(--yes makes the calls)", caller_arn)
    from auditor.history.store import history_path

    try:  # opened first: a change that cannot be journaled is not made
        history = History(history_path(config))
    except AuditorError as exc:
        raise ApplyRefused(f"{exc}: nothing was changed") from None
    with history:
        flag = StopFlag()
        with stop_on_signals(flag):  # the cleanup before the change writes too: a signal waits for it
            notes = tuple(_cleanup_first(history, clients, plan, caller_account, now, _patterns(config)))
            if flag.signal_name:
                raise ApplyInterrupted(one_line(f"plan {plan.id} interrupted by {flag.signal_name} before its first "
                                                f"call: nothing of it was made{''.join(f'; {n}' for n in notes)}"),
                                       flag.signal_name)
            running = _running_apply(history, plan, now(), RUNNING_APPLY + timedelta(minutes=config.apply.wait_minutes))
            if running:
                raise ApplyRefused(running)
            journal = Journal.begin(history, plan, caller_arn, now)
            if load_tested and plan.risk is not None and plan.risk.load_test_first:
                journal.record({"step": "note", "note": "the caller said the load test was run and passed "
                                f"(--load-tested): {'; '.join(plan.risk.load_test_first)}"})
            outcome, message = Execution(clients, plan, target, journal, config.apply.wait_minutes, sleep, clock,
                                         flag).run()
    if outcome == "interrupted":
        raise ApplyInterrupted(message, flag.signal_name or "SIGINT")
    if outcome != "applied":
        raise ApplyFailed(message)
    return ApplyResult(plan.id, outcome, message, caller_arn, notes)


def cleanup_lines(config: AuditConfig, *, yes: bool, now: Callable[[], datetime] = lambda: datetime.now(UTC),
                  clients: AwsClients | None = None) -> list[str]:
    """`audit apply --cleanup`: what the journal says apply left to clean (auditor.act.cleanup), in
    the account apply's credentials act in; deleted and registered with `yes`, else listed."""
    from auditor.history.store import history_path

    path = history_path(config)
    if not path.exists():
        raise ApplyRefused(f"no history database at {path} (history.path): nothing was applied")
    sessions: dict[str, AwsClients] = {}

    def clients_for(region: str) -> AwsClients:
        if region not in sessions:
            sessions[region] = clients or apply_clients(config, region)
        return sessions[region]

    with History(path) as history:
        pending = to_clean(history, now())
        accounts = {c.change.account_id for c in pending}
        lines: list[str] = []
        for region in sorted({c.change.region for c in pending}):
            _, account = _whoami(clients_for(region), region)
            mine = [c for c in pending if c.change.region == region and c.change.account_id == account]
            lines += [f"{region}: skipped {len(accounts - {account})} other account(s): apply's credentials act in "
                      f"{account}"] if accounts - {account} else []
            lines += clean(history, clients_for, mine, yes=yes, now=now, patterns=_patterns(config))
    if not lines:
        return ["nothing to clean up"]
    return lines if yes else [*lines, "nothing was changed (--yes does it)"]


def _patterns(config: AuditConfig) -> tuple[str, ...]:
    """The endpoint name patterns [apply] opts in besides the tag."""
    return (*config.apply.resources, *config.apply.endpoints)


def _cleanup_first(history: History, clients: AwsClients, plan: PlanToApply, account: str,
                   now: Callable[[], datetime], patterns: tuple[str, ...]) -> list[str]:
    """Before the change, with apply's credentials: the rollback alarms of verified changes in the
    plan's region deleted, targets an unfinished apply left deregistered registered again
    (auditor.act.cleanup). What it cannot do is said, and the apply goes on."""
    try:
        items = to_clean(history, now(), account_id=account, region=plan.resource.region)
        return clean(history, lambda _region: clients, items, yes=True, now=now, patterns=patterns)
    except AuditorError as exc:
        return [f"cleanup: {exc}"]


def _running_apply(history: History, plan: PlanToApply, at: datetime, bound: timedelta) -> str | None:
    """Another apply on the same resource journaled in-progress in the last minutes may be running
    now: two applies on one resource would undo each other's steps."""
    for change in history.applied():
        if (change.outcome == IN_PROGRESS and at - change.finished_at < bound
                and (change.account_id, change.region, change.endpoint)
                == (plan.resource.account_id, plan.resource.region, plan.resource.name)):
            return (f"plan {plan.id}: another apply on {plan_noun(plan)} (plan {one_line(change.plan_id)}, started "
                    f"{change.started_at.isoformat(timespec='seconds')}) is in progress: nothing was changed; if no "
                    f"apply runs, it is read as stopped {int(bound.total_seconds() // 60)} minutes after its last "
                    "step")
    return None


def _whoami(clients: AwsClients, region: str) -> tuple[str, str]:
    identity_api = clients.client("sts", region)
    try:
        identity = identity_api.get_caller_identity()
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        problem = describe_client_error(exc, "sts", "GetCallerIdentity", region)
        raise ApplyRefused(f"apply credentials: {problem}") from None
    return str(identity["Arn"]), str(identity["Account"])
