"""discover -> collect -> analyse -> recommend, region by region, into one AuditReport.

Every registered resource kind (auditor.kinds) is audited in each account and region, in the
kinds' order; each returns its section, findings and errors. A failure that stops a region
(access denied, unreachable) is a fatal error for that region: an unreachable region is not asked
again by the kinds after, and the other regions carry on, keeping what was collected before.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from auditor.analyse.rules import RuleJudge
from auditor.collect.config_cache import ConfigCache, MemoryConfigCache
from auditor.collect.plan import align_window
from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.kinds.base import KindResult, RegionScope, unreachable
from auditor.kinds.registry import KINDS, REGISTRY, monthly_cost_by_kind, plans_for
from auditor.limits import RunLimits, RunStopped, pause_point
from auditor.models import (
    AccountInfo,
    AuditError,
    AuditReport,
    CollectionStats,
    Finding,
    ReportSettings,
    ResourceThresholds,
)
from auditor.pipeline.accounts import AccountAccess, open_estate
from auditor.pipeline.prices import prepare_prices, price_info, savings_plan_advice
from auditor.pipeline.regions import RegionWork, run_regions
from auditor.progress import Progress
from auditor.text import one_line_words

__all__ = ["AuditOutcome", "Progress", "RunLimits", "RunStopped", "report_settings", "run_audit"]


@dataclass(frozen=True)
class AuditOutcome:
    report: AuditReport
    fatal_errors: tuple[AuditError, ...]


RegionResult = dict[str, KindResult[Any]]  # by kind key, in the kinds' order


def run_audit(
    config: AuditConfig,
    clients: AwsClients,
    now: datetime | None = None,
    progress: Progress | None = None,
    limits: RunLimits | None = None,
    notices: tuple[AuditError, ...] = (),
    configs: ConfigCache | None = None,
) -> AuditOutcome:
    """Audit every account and region (in parallel) within `limits`: one not finished when the
    deadline passes or a stop is requested is reported as not audited, with what its kinds had
    discovered, and the report is marked partial; an account that cannot be entered is an error
    and the others go on. `notices`: problems found before the audit (a history file moved
    aside); they lead the report's errors."""
    now = now or datetime.now(UTC)
    progress = progress or Progress()
    limits = limits or RunLimits(config.aws.deadline_minutes * 60)
    configs = configs or MemoryConfigCache()
    clients.check_credentials()
    estate = open_estate(config, clients)
    audited = tuple(sorted({r for a in estate.entered for r in a.regions}))
    prices = prepare_prices(config, clients, now, audited)
    catalog = prices.catalog
    window = align_window(now, config.aws.lookback_days, config.aws.period_seconds)
    entered = {a.account.id: a for a in estate.entered}
    kinds = [k for k in KINDS if k.enabled(config)]

    def audit_region(board: RegionWork[RegionResult]) -> RegionResult:
        account_clients = entered[board.account].clients
        assert account_clients is not None
        scope = RegionScope(board.account, board.region, config, account_clients, catalog, window, now, limits,
                            progress, RuleJudge(REGISTRY, catalog, config), board, configs)
        results: RegionResult = {}
        board.so_far = results  # the kinds finished, kept if the region is stopped before the others
        for kind in kinds:
            limits.check()
            results[kind.key] = result = kind.audit(scope)
            pause_point(f"after-{kind.key}", limits)
            # Once the region's endpoint cannot be reached, the region is one error, not one per kind
            # of resource (and no further call waits out its timeouts).
            if unreachable(result.fatal) or account_clients.unanswered.in_region(board.region):
                break
        return results

    sections: dict[str, list[Any]] = {k.key: [] for k in kinds}
    findings: list[Finding] = []
    errors: list[AuditError] = list(notices)
    fatal: list[AuditError] = []
    stopped: list[str] = []
    for access in estate.accounts:
        if access.error is not None:
            error = AuditError("-", None, "discover", f"account {access.account.id} not audited: {access.error}",
                               access.account.id)
            errors.append(error)
            fatal.append(error)
    collection: list[CollectionStats] = []
    units = [(a.account.id, region) for a in estate.entered for region in a.regions]
    for board in run_regions(units, audit_region, limits):
        result = board.result if board.finished.is_set() else None
        where = f" in account {board.account}" if board.account else ""
        if board.failure is not None:  # a bug: the region's own error, whether or not the deadline passed
            stage, crash = describe_crash(board.failure)
            error = AuditError(board.region, None, stage, f"region not audited{where}: {crash}", board.account)
            errors.append(error)
            fatal.append(error)
            for key, section in board.partial.items():
                sections[key].append(section(crash))
            continue
        done: RegionResult = result if result is not None else dict(board.so_far or {})
        if result is None:
            # Stopped: the kinds it finished are judged; the others' resources are listed as not audited.
            reason = board.stopped or "stopped"
            stopped.append(reason)
            left = [k.key for k in kinds if k.key not in done]
            state = f"audited in part (not audited: {', '.join(left)})" if done else "not audited"
            error = AuditError(board.region, None, "collect", f"region {state}{where}: {reason}", board.account)
            errors.append(error)
            fatal.append(error)
            for key, section in board.partial.items():
                if key not in done:
                    sections[key].append(section(reason))
        mark = _account_marker(board.account)
        for key, part in done.items():
            sections[key].append(part.section)
            if part.collection is not None:
                collection.append(part.collection)
            findings.extend(part.findings)
            errors.extend(mark(e) for e in part.errors)
            fatal.extend(mark(e) for e in part.fatal)

    # Advice that costs more (a growing queue) is not a saving: it ranks by severity among the zeros.
    findings.sort(key=lambda f: (-max(f.monthly_savings_usd, 0.0), -f.severity.rank, f.resource.region, f.resource.name,
                                 f.variant or "", f.rule))
    merged = {k.key: k.merge(sections[k.key]) if sections[k.key] else k.empty for k in kinds}
    savings_plans, plan_problems = savings_plan_advice(config, clients)
    errors.extend(AuditError("-", None, "recommend", problem) for problem in plan_problems)
    uses = [use for k in kinds for use in k.price_uses(merged[k.key])]
    # The caller's own account's id comes with its resources' ARNs (no call asked for it).
    own_account = next((o.account_id for k in kinds for o in k.owned(merged[k.key])), "")
    report = AuditReport(
        generated_at=now,
        window=window,
        sections=merged,
        monthly_cost_by_kind=monthly_cost_by_kind(merged, window),
        findings=tuple(findings),
        errors=tuple(errors),
        catalog=price_info(prices, findings, uses),
        api_calls=clients.counter.as_dict(),
        settings=report_settings(config),
        plans=plans_for(findings, merged, catalog, config, window),
        accounts=tuple(_account_info(a, own_account) for a in estate.accounts),
        collection=tuple(collection),
        savings_plans=savings_plans,
        partial=stopped[0] if stopped else None,
        call_problems=clients.counter.problem_counts(),
        unread=tuple(fatal),
    )
    return AuditOutcome(report=report, fatal_errors=tuple(fatal))


def describe_crash(exc: BaseException) -> tuple[str, str]:
    """The pipeline stage a crash happened in (from the innermost frame of this package) and one
    line naming it: exception type, message and where, so the bug can be reported and found."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f"{os.sep}auditor{os.sep}" in f.filename]
    stage, where = "analyse", ""
    if frames:
        inner = frames[-1]
        path = inner.filename[inner.filename.rindex(f"{os.sep}auditor{os.sep}") + 1:]
        where = f" at {path.replace(os.sep, '/')}:{inner.lineno}"
        stage = next((s for s in ("discover", "collect", "analyse", "recommend", "report")
                      if f"{os.sep}auditor{os.sep}{s}{os.sep}" in inner.filename), stage)
    message = one_line_words(str(exc), 300)
    return stage, f"crashed: {type(exc).__name__}{': ' + message if message else ''}{where} (a bug: please report it)"


def _account_marker(account_id: str) -> Callable[[AuditError], AuditError]:
    """Errors of a region in another account say which account; the caller's own need not."""
    def mark(error: AuditError) -> AuditError:
        if not account_id or error.account_id:
            return error
        return replace(error, account_id=account_id, message=f"{error.message} (account {account_id})")
    return mark


def _account_info(access: AccountAccess, own_account: str) -> AccountInfo:
    return AccountInfo(access.account.id or own_account, access.account.name, access.error is None, access.regions,
                       access.skipped_regions, access.error)


def report_settings(config: AuditConfig) -> ReportSettings:
    t, r = config.thresholds, config.recommend
    return ReportSettings(
        regions=config.aws.regions,
        lookback_days=config.aws.lookback_days,
        thresholds=ResourceThresholds(cpu=t.cpu, memory=t.memory, gpu=t.gpu, gpu_memory=t.gpu_memory),
        sizing_statistic=t.sizing_statistic,
        peak_statistic=r.peak_statistic,
        target_utilization=r.target_utilization,
        min_days=r.min_days,
    )
