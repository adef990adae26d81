"""The history database: one row per run, its endpoints' variants and its findings.

SQLite, one file. The schema version is SQLite's `user_version`; migrations run in order, each in
its own transaction, so an old file is upgraded in place. A run is written in one transaction: a
crash mid-write leaves the earlier runs as they were and no half run.

A damaged file (not SQLite, failing SQLite's quick check, or of a newer schema) is never repaired in
place: `prepare_history`, called before each audit, moves it aside under a timestamped name and
starts a new one. No `sqlite3` exception leaves this module: each becomes a one-line HistoryError
that names the file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import platformdirs

from auditor.config import AuditConfig
from auditor.errors import AuditorError
from auditor.models import AccountInfo, AuditReport, Finding, Resource, VariantUtilization
from auditor.records import plan_to_dict
from auditor.text import one_line_words
from auditor.wording import advice_text

# The resource kind of each resource type a stored plan of schema 8 or earlier can name (the types
# are those of that time: a newer plan states its kind itself).
LEGACY_KINDS = {"endpoint": "endpoints", "endpoint-fleet": "endpoints", "training-job": "jobs",
                "transform-job": "jobs", "processing-job": "jobs", "notebook-instance": "workspaces",
                "studio-app": "workspaces", "studio-domain": "workspaces", "hyperpod-cluster": "hyperpod"}
_LEGACY_KEYS = ("account_id", "region", "endpoint", "resource_type")
# A stored plan of schema 8 or earlier as schema 9 writes it (SQLite's JSON functions).
_RESOURCE_SQL = (
    "json_remove(json_set({column}, '$.resource', json_object("
    "'kind', CASE json_extract({column}, '$.resource_type') "
    + " ".join(f"WHEN '{t}' THEN '{k}'" for t, k in LEGACY_KINDS.items())
    + " ELSE '' END, "
    "'type', COALESCE(json_extract({column}, '$.resource_type'), 'endpoint'), "
    "'name', COALESCE(json_extract({column}, '$.endpoint'), ''), "
    "'account_id', COALESCE(json_extract({column}, '$.account_id'), ''), "
    "'region', COALESCE(json_extract({column}, '$.region'), ''))), "
    "'$.account_id', '$.region', '$.endpoint', '$.resource_type')")


def upgraded_plan(body: dict[str, Any]) -> dict[str, Any]:
    """A stored plan as schema 9 writes it: one of schema 8 or earlier (top-level account_id, region,
    endpoint and resource_type) with those in `resource`, as the migration rewrites it; a newer one
    as it is. For a file opened read-only, which is never migrated."""
    if "resource" in body or "resource_type" not in body:
        return body
    kind = LEGACY_KINDS.get(str(body.get("resource_type")), "")
    resource = {"kind": kind, "type": body.get("resource_type"), "name": body.get("endpoint") or "",
                "account_id": body.get("account_id") or "", "region": body.get("region") or ""}
    rest = {k: v for k, v in body.items() if k not in _LEGACY_KEYS}
    return {**rest, "resource": resource}


# Each entry upgrades the schema by one version.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        started_at TEXT NOT NULL,
        window_start TEXT NOT NULL,
        window_end TEXT NOT NULL,
        period_seconds INTEGER NOT NULL,
        regions TEXT NOT NULL,
        accounts TEXT NOT NULL,
        endpoints INTEGER NOT NULL,
        findings INTEGER NOT NULL,
        monthly_cost_usd REAL NOT NULL,
        monthly_savings_usd REAL NOT NULL,
        errors TEXT NOT NULL,
        fatal INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX runs_started_at ON runs (started_at);
    CREATE TABLE variants (
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        region TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        variant TEXT NOT NULL,
        kind TEXT NOT NULL,
        instance_type TEXT,
        instance_count INTEGER NOT NULL,
        monthly_cost_usd REAL,
        cpu_p95 REAL, memory_p95 REAL, gpu_p95 REAL,
        tags TEXT NOT NULL
    );
    CREATE INDEX variants_run ON variants (run_id);
    CREATE TABLE findings (
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        fingerprint TEXT NOT NULL,
        rule TEXT NOT NULL,
        severity TEXT NOT NULL,
        account_id TEXT NOT NULL,
        region TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        variant TEXT,
        message TEXT NOT NULL,
        advice TEXT,
        monthly_savings_usd REAL NOT NULL
    );
    CREATE INDEX findings_run ON findings (run_id);
    """,
    """
    CREATE TABLE digests (
        week TEXT PRIMARY KEY,
        sent_at TEXT NOT NULL,
        recipients TEXT NOT NULL
    );
    """,
    # How the run ended: ok | failed (a region failed) | partial (the deadline) | interrupted (a signal).
    """
    ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'ok';
    UPDATE runs SET status = 'failed' WHERE fatal = 1;
    """,
    # Endpoint configs never change once created: their descriptions, kept between runs.
    """
    CREATE TABLE endpoint_configs (
        account_id TEXT NOT NULL,
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        PRIMARY KEY (account_id, region, name)
    );
    """,
    # Each run's plans as the JSON report writes them (with id, risk and change): `audit plans`
    # and `audit apply` read them by id.
    """
    CREATE TABLE plans (
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        plan_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (run_id, plan_id)
    );
    CREATE INDEX plans_id ON plans (plan_id);
    """,
    # `audit apply`: who applied which plan's calls, when, how it ended, and the run that saw it done.
    # IF NOT EXISTS: the plans table of another version may come before it in a merged history.
    """
    CREATE TABLE IF NOT EXISTS applied (
        id INTEGER PRIMARY KEY,
        plan_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        region TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        variant TEXT,
        caller TEXT NOT NULL,
        calls TEXT NOT NULL,
        plan TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        outcome TEXT NOT NULL,
        message TEXT NOT NULL,
        previous_config TEXT,
        new_config TEXT,
        monthly_savings_usd REAL NOT NULL,
        verified_run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL,
        verified_at TEXT
    );
    CREATE INDEX IF NOT EXISTS applied_endpoint ON applied (account_id, region, endpoint);
    """,
    # The accounts and regions each run read without an error (account_id '': the caller's own,
    # whose id the run did not need): `audit apply` applies a plan only from the latest run that read
    # its account and region so. Each run recorded since has a ('-', '-') row, even one that read none.
    """
    CREATE TABLE IF NOT EXISTS run_regions (
        run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        region TEXT NOT NULL,
        PRIMARY KEY (run_id, account_id, region)
    );
    """,
    # The apply journal: a row is written (outcome 'in-progress') before the first write call and
    # updated after each; `steps` says what each call did (made | landed | reused | failed | read |
    # restored...) and what it answered; `cleaned_at` when the rollback alarms it made were deleted.
    # Rows from before have no steps ('[]'): they read as they did.
    """
    ALTER TABLE applied ADD COLUMN steps TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE applied ADD COLUMN cleaned_at TEXT;
    """,
    # The JSON document's schema 9: a stored plan names what it is about in `resource` (kind, type,
    # name, account_id, region) in place of its top-level account_id, region, endpoint and
    # resource_type; the plans and the apply journal's copies are rewritten so (see upgraded_plan,
    # which reads a file opened read-only, never migrated, the same way).
    f"""
    UPDATE plans SET body = {_RESOURCE_SQL.format(column="body")}
        WHERE CASE WHEN json_valid(body) THEN json_type(body, '$.resource') IS NULL
                   AND json_type(body, '$.resource_type') IS NOT NULL ELSE 0 END;
    UPDATE applied SET plan = {_RESOURCE_SQL.format(column="plan")}
        WHERE CASE WHEN json_valid(plan) THEN json_type(plan, '$.resource') IS NULL
                   AND json_type(plan, '$.resource_type') IS NOT NULL ELSE 0 END
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
JOURNAL_SCHEMA = 8  # the version that added the apply journal's steps
PLANS_SCHEMA = 5  # the version that added the plans table (a read-only older file has none)
RUN_REGIONS_SCHEMA = 7  # the version that added run_regions


def read_cleanly(report: AuditReport) -> list[tuple[str, str]]:
    """The (account, region) pairs the run read without an error of the region's own ('' for the
    caller's own account when the run did not need its id); none for a partial or interrupted run.
    An error of one endpoint leaves the region read: that endpoint gets no plan from the run, so an
    older plan for it is superseded (refused), never taken as the latest."""
    if report.partial:
        return []
    accounts = report.accounts or (AccountInfo("", "", True, tuple(report.settings.regions)),)
    blind = {(e.account_id or "", e.region) for e in report.errors if not e.endpoint}
    return sorted({(a.id, region) for a in accounts if a.audited for region in a.regions
                   if (a.id, region) not in blind and ("", region) not in blind and (a.id, "-") not in blind})


def run_status(report: AuditReport, fatal: bool) -> str:
    """How a run ended, as the history records it."""
    if report.partial:
        return "interrupted" if report.partial.startswith("interrupted") else "partial"
    return "failed" if fatal else "ok"


class HistoryError(AuditorError):
    """The history database cannot be opened, read or written."""


# SQLite's primary result codes that mean the file itself is bad (not busy, locked or unreadable).
_DAMAGE_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
# Beside the database: moved aside with it, so that a stale journal is never applied to the new file.
_COMPANIONS = ("-wal", "-shm", "-journal")


def _one_line(exc: BaseException) -> str:
    return one_line_words(str(exc)) or type(exc).__name__


def is_damage(exc: sqlite3.Error) -> bool:
    """True when SQLite says the file is not a database or is corrupt."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _DAMAGE_CODES


def _history_error(path: Path, action: str, exc: BaseException) -> HistoryError:
    """One line naming the file; for a damaged file, what to do about it."""
    if (isinstance(exc, sqlite3.Error) and is_damage(exc)) or isinstance(exc, ValueError | TypeError):
        return HistoryError(
            f"the history database {path} is damaged ({_one_line(exc)}): `audit history --check` lists the "
            "problems; the next `audit run` moves it aside and starts a new one"
        )
    if not _writable_directory(path.parent):  # SQLite says only "unable to open database file"
        return HistoryError(f"cannot {action} the history database {path}: its directory cannot be written "
                            f"({_one_line(exc)})")
    return HistoryError(f"cannot {action} the history database {path}: {_one_line(exc)}")


def _writable_directory(directory: Path) -> bool:
    """False for a read-only directory or file system (root included: access() reports EROFS), and
    for a path whose parent is not a directory; True when the directory does not exist yet."""
    while not directory.exists():
        if directory.parent == directory:
            return True
        directory = directory.parent
    return directory.is_dir() and os.access(directory, os.W_OK)


@dataclass(frozen=True)
class RunSummary:
    id: int
    started_at: datetime
    window_start: datetime
    window_end: datetime
    regions: tuple[str, ...]
    accounts: tuple[str, ...]
    endpoints: int
    findings: int
    monthly_cost_usd: float
    monthly_savings_usd: float
    errors: tuple[str, ...]
    fatal: bool
    status: str = "ok"  # ok | failed | partial | interrupted


@dataclass(frozen=True)
class FindingRecord:
    fingerprint: str
    rule: str
    severity: str
    account_id: str
    region: str
    endpoint: str
    variant: str | None
    message: str
    advice: str | None
    monthly_savings_usd: float


@dataclass(frozen=True)
class AppliedChange:
    """One `audit apply --yes`: the plan, the calls made, who made them (the apply session's
    caller ARN), when, and how it ended (applied | rolled-back | failed | timed-out | interrupted;
    in-progress while it runs, or when the process was killed before it could say)."""

    plan_id: str
    account_id: str
    region: str
    endpoint: str
    variant: str | None
    caller: str
    calls: tuple[dict[str, Any], ...]  # {"service", "operation", "params", "purpose"}, in order
    plan: dict[str, Any]  # the plan as applied (its JSON)
    started_at: datetime
    finished_at: datetime
    outcome: str
    message: str
    previous_config: str | None  # the endpoint config before
    new_config: str | None  # the endpoint config the change deploys
    monthly_savings_usd: float  # the plan's expected saving
    id: int = 0
    verified_run_id: int | None = None  # the run that saw the endpoint on the new config
    verified_at: datetime | None = None
    steps: tuple[dict[str, Any], ...] = ()  # the journal: each call's fate and answer, in order
    cleaned_at: datetime | None = None  # when the rollback alarms the apply made were deleted


def default_history_path() -> Path:
    return Path(platformdirs.user_data_dir("sagemaker-auditor")) / "history.sqlite3"


def history_path(config: AuditConfig) -> Path:
    """The history database [history] path names, or the user's data directory's."""
    return Path(config.history.path).expanduser() if config.history.path else default_history_path()


def fingerprint(rule: str, account_id: str, region: str, endpoint: str, variant: str | None) -> str:
    """The identity of a finding across runs: the same rule on the same variant."""
    return "/".join((rule, account_id, region, endpoint, variant or "*"))


class History:
    def __init__(self, path: Path, *, reading: bool = False) -> None:
        """Open (creating or upgrading) the history. `reading`: for what only reads (`audit history`,
        `audit weekly` without --email, the scheduler's catch-up): a file that cannot be opened for
        writing because it or its directory is read-only is opened read-only instead, as it is."""
        self.path = path
        if not (reading and path.is_file() and not _writable_file(path)):
            self._open_for_writing()
            return
        self._db = _connect_read_only(path)
        try:
            if self.schema_version > SCHEMA_VERSION:
                raise HistoryError(f"the history database {path} has schema {self.schema_version}, newer "
                                   f"than this auditor's {SCHEMA_VERSION}: upgrade sagemaker-auditor")
        except HistoryError:
            self._db.close()
            raise

    def _open_for_writing(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None)  # transactions are explicit
        except (sqlite3.Error, OSError) as exc:
            raise _history_error(self.path, "open", exc) from None
        try:
            with self._guard("open"):
                self._db.execute("PRAGMA foreign_keys = ON")
                self._db.execute("PRAGMA journal_mode = WAL")
                self._migrate()
        except HistoryError:
            self._db.close()
            raise

    def close(self) -> None:
        with self._guard("close"):
            self._db.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """sqlite3 errors (and rows that do not parse) as one-line HistoryErrors naming the file."""
        try:
            yield
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise _history_error(self.path, action, exc) from None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @property
    def schema_version(self) -> int:
        with self._guard("read"):
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        version = self.schema_version
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"the history database {self.path} has schema {version}, newer than this auditor's "
                f"{SCHEMA_VERSION}: upgrade sagemaker-auditor"
            )
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            with self._transaction() as db:
                for statement in script.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {number}")

    def record_run(self, report: AuditReport, fatal: bool = False) -> int:
        """Store the run, its variants and findings in one transaction; returns the run id."""
        # The endpoints kind's section (its variants are the history's rows): read by its key and
        # duck-typed (its EndpointReports), as the history sits below the kinds and imports none of them.
        endpoints: tuple[Any, ...] = tuple(report.sections.get("endpoints", ()))
        try:
            with self._transaction() as db:
                cursor = db.execute(
                    "INSERT INTO runs (started_at, window_start, window_end, period_seconds, regions, accounts,"
                    " endpoints, findings, monthly_cost_usd, monthly_savings_usd, errors, fatal, status)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        report.generated_at.isoformat(), report.window.start.isoformat(),
                        report.window.end.isoformat(), report.window.period_seconds,
                        json.dumps(list(report.settings.regions) or sorted({e.endpoint.region for e in endpoints})),
                        json.dumps(sorted({e.endpoint.account_id for e in endpoints})),
                        len(endpoints), report.finding_count, report.monthly_cost_usd, report.monthly_savings_usd,
                        json.dumps([f"{e.stage} {e.region} {e.endpoint or ''}: {e.message}" for e in report.errors]),
                        int(fatal), run_status(report, fatal),
                    ),
                )
                run_id = int(cursor.lastrowid or 0)
                db.executemany(
                    "INSERT INTO variants VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            run_id, e.endpoint.account_id, e.endpoint.region, e.endpoint.name, v.variant.name,
                            e.endpoint.kind.value, v.variant.instance_type, v.variant.instance_count,
                            v.monthly_cost_usd,
                            *(_p95(v.utilization, r) for r in (Resource.CPU, Resource.MEMORY, Resource.GPU)),
                            json.dumps(e.endpoint.tags),
                        )
                        for e in endpoints for v in e.variants
                    ],
                )
                db.executemany(
                    "INSERT INTO findings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            run_id, fingerprint(f.rule, f.resource.account_id, f.resource.region, f.resource.name,
                                                f.variant), f.rule,
                            f.severity.value, f.resource.account_id, f.resource.region, f.resource.name, f.variant,
                            f.message,
                            _advice(f), f.monthly_savings_usd,
                        )
                        for f in report.findings
                    ],
                )
                db.executemany("INSERT OR IGNORE INTO run_regions VALUES (?, ?, ?)",
                               [(run_id, account, region) for account, region in [("-", "-"), *read_cleanly(report)]])
                db.executemany(
                    "INSERT OR REPLACE INTO plans VALUES (?, ?, ?, ?)",
                    [(run_id, p.id, position, json.dumps(plan_to_dict(p), sort_keys=True))
                     for position, p in enumerate(report.plans) if p.id],
                )
        except sqlite3.Error as exc:
            raise _history_error(self.path, "write the run to", exc) from None
        return run_id

    def runs(self, limit: int | None = None, since: datetime | None = None,
             until: datetime | None = None) -> list[RunSummary]:
        """Runs, newest first."""
        query = "SELECT * FROM runs WHERE 1 = 1"
        params: list[object] = []
        if since is not None:
            query += " AND started_at >= ?"
            params.append(since.isoformat())
        if until is not None:
            query += " AND started_at < ?"
            params.append(until.isoformat())
        query += " ORDER BY started_at DESC, id DESC"
        if limit is not None:
            query += " LIMIT ?"
            params.append(limit)
        with self._guard("read"):
            return [_run(row) for row in self._db.execute(query, params)]

    def findings(self, run_id: int) -> list[FindingRecord]:
        with self._guard("read"):
            rows = self._db.execute(
                "SELECT fingerprint, rule, severity, account_id, region, endpoint, variant, message, advice,"
                " monthly_savings_usd FROM findings WHERE run_id = ? ORDER BY monthly_savings_usd DESC", (run_id,)
            )
            return [FindingRecord(*row) for row in rows]

    def endpoint_costs(self, run_id: int) -> dict[tuple[str, str, str], float]:
        """(account, region, endpoint) -> monthly cost in that run (unknown prices count as 0)."""
        with self._guard("read"):
            rows = self._db.execute(
                "SELECT account_id, region, endpoint, SUM(COALESCE(monthly_cost_usd, 0)) FROM variants"
                " WHERE run_id = ? GROUP BY account_id, region, endpoint", (run_id,)
            )
            return {(a, r, e): float(c) for a, r, e, c in rows}

    def variant_cost(self, run_id: int, account_id: str, region: str, endpoint: str,
                     variant: str | None) -> float | None:
        """A variant's monthly cost in that run (the endpoint's, for None); None when not priced or absent."""
        query = ("SELECT SUM(monthly_cost_usd), COUNT(*), COUNT(monthly_cost_usd) FROM variants"
                 " WHERE run_id = ? AND account_id = ? AND region = ? AND endpoint = ?")
        params: list[object] = [run_id, account_id, region, endpoint]
        if variant is not None:
            query += " AND variant = ?"
            params.append(variant)
        with self._guard("read"):
            total, rows, priced = self._db.execute(query, params).fetchone()
        return float(total) if rows and rows == priced else None

    def plan(self, plan_id: str) -> dict[str, Any] | None:
        """The plan with this id, as the latest run that holds it wrote it (plan_to_dict's JSON)."""
        if self.schema_version < PLANS_SCHEMA:
            return None
        with self._guard("read the plans from"):
            row = self._db.execute(
                "SELECT p.body FROM plans p JOIN runs r ON r.id = p.run_id WHERE p.plan_id = ?"
                " ORDER BY r.started_at DESC, r.id DESC LIMIT 1", (plan_id,)).fetchone()
        return None if row is None else upgraded_plan(dict(json.loads(row[0])))

    def plan_and_run(self, plan_id: str) -> tuple[dict[str, Any], RunSummary] | None:
        """The plan with this id and the newest run that holds it."""
        if self.schema_version < PLANS_SCHEMA:
            return None
        with self._guard("read the plans from"):
            row = self._db.execute(
                "SELECT p.body, r.* FROM plans p JOIN runs r ON r.id = p.run_id WHERE p.plan_id = ?"
                " ORDER BY r.started_at DESC, r.id DESC LIMIT 1", (plan_id,)).fetchone()
            return None if row is None else (upgraded_plan(dict(json.loads(row[0]))), _run(row[1:]))

    def plan_in_run(self, run_id: int, plan_id: str) -> dict[str, Any] | None:
        if self.schema_version < PLANS_SCHEMA:
            return None
        with self._guard("read the plans from"):
            row = self._db.execute("SELECT body FROM plans WHERE run_id = ? AND plan_id = ?",
                                   (run_id, plan_id)).fetchone()
            return None if row is None else upgraded_plan(dict(json.loads(row[0])))

    def latest_clean_run(self, account_id: str, region: str) -> RunSummary | None:
        """The newest run, neither partial nor interrupted, that read this account and region without
        an error. A run recorded before run_regions existed counts when it did not end partial or
        interrupted and its regions name the region (or "all"): what it read is not known finer."""
        with self._guard("read"):
            if self.schema_version < RUN_REGIONS_SCHEMA:
                return None
            row = self._db.execute(
                "SELECT r.* FROM runs r WHERE r.status NOT IN ('partial', 'interrupted') AND ("
                " EXISTS (SELECT 1 FROM run_regions s WHERE s.run_id = r.id AND s.region = ?"
                "  AND s.account_id IN (?, ''))"
                " OR (NOT EXISTS (SELECT 1 FROM run_regions s WHERE s.run_id = r.id)"
                "  AND (r.regions LIKE ? OR r.regions LIKE '%\"all\"%')))"
                " ORDER BY r.started_at DESC, r.id DESC LIMIT 1",
                (region, account_id, f'%"{region}"%')).fetchone()
            return _run(row) if row else None

    def latest_plans(self) -> list[dict[str, Any]]:
        """The latest run's plans, in the report's order ([] when it had none, or no run is recorded)."""
        if self.schema_version < PLANS_SCHEMA:
            return []
        with self._guard("read the plans from"):
            row = self._db.execute("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1").fetchone()
            if row is None:
                return []
            rows = self._db.execute("SELECT body FROM plans WHERE run_id = ? ORDER BY position", (row[0],))
            return [upgraded_plan(dict(json.loads(body))) for (body,) in rows]

    def last_successful_run(self) -> RunSummary | None:
        with self._guard("read"):
            row = self._db.execute("SELECT * FROM runs WHERE fatal = 0"
                                   " ORDER BY started_at DESC, id DESC LIMIT 1").fetchone()
            return _run(row) if row else None

    def digest_sent(self, week: str) -> datetime | None:
        with self._guard("read"):
            row = self._db.execute("SELECT sent_at FROM digests WHERE week = ?", (week,)).fetchone()
            return datetime.fromisoformat(row[0]) if row else None

    def record_digest(self, week: str, sent_at: datetime, recipients: list[str]) -> None:
        with self._guard("write the digest to"), self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO digests VALUES (?, ?, ?)",
                       (week, sent_at.isoformat(), json.dumps(recipients)))

    def endpoint_configs(self) -> dict[tuple[str, str, str], dict[str, Any]]:
        with self._guard("read the endpoint configs from"):
            return {(a, r, n): json.loads(d) for a, r, n, d in
                    self._db.execute("SELECT account_id, region, name, description FROM endpoint_configs")}

    def record_endpoint_configs(self, configs: dict[tuple[str, str, str], dict[str, Any]]) -> None:
        with self._guard("write the endpoint configs to"), self._transaction() as db:
            db.executemany("INSERT OR REPLACE INTO endpoint_configs VALUES (?, ?, ?, ?)",
                           [(a, r, n, json.dumps(d, sort_keys=True)) for (a, r, n), d in configs.items()])


    def record_applied(self, change: AppliedChange) -> int:
        with self._guard("write the applied change to"), self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO applied (plan_id, account_id, region, endpoint, variant, caller, calls, plan, started_at,"
                " finished_at, outcome, message, previous_config, new_config, monthly_savings_usd, steps)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (change.plan_id, change.account_id, change.region, change.endpoint, change.variant, change.caller,
                 _json(list(change.calls)), json.dumps(change.plan, sort_keys=True, default=str),
                 change.started_at.isoformat(), change.finished_at.isoformat(), change.outcome, change.message,
                 change.previous_config, change.new_config, change.monthly_savings_usd, _json(list(change.steps))),
            )
            return int(cursor.lastrowid or 0)

    def update_applied(self, applied_id: int, *, calls: tuple[dict[str, Any], ...], steps: tuple[dict[str, Any], ...],
                       at: datetime, outcome: str | None = None, message: str | None = None) -> None:
        """The journal after a step: the calls made so far, every step, and (at the end) the outcome."""
        with self._guard("write the apply journal to"), self._transaction() as db:
            db.execute("UPDATE applied SET calls = ?, steps = ?, finished_at = ?, outcome = COALESCE(?, outcome),"
                       " message = COALESCE(?, message) WHERE id = ?",
                       (_json(list(calls)), _json(list(steps)), at.isoformat(), outcome, message, applied_id))

    def mark_cleaned(self, applied_id: int, at: datetime) -> None:
        with self._guard("write the apply journal to"), self._transaction() as db:
            db.execute("UPDATE applied SET cleaned_at = ? WHERE id = ?", (at.isoformat(), applied_id))

    def applied(self, limit: int | None = None, outcome: str | None = None,
                unverified: bool = False) -> list[AppliedChange]:
        """Applied changes, newest first."""
        query = f"SELECT {self._applied_columns()} FROM applied WHERE 1 = 1"
        params: list[object] = []
        if outcome is not None:
            query += " AND outcome = ?"
            params.append(outcome)
        if unverified:
            query += " AND verified_run_id IS NULL"
        query += " ORDER BY started_at DESC, id DESC"
        if limit is not None:
            query += " LIMIT ?"
            params.append(limit)
        with self._guard("read the applied changes from"):
            return [_applied(row) for row in self._db.execute(query, params)]

    def verified_applied(self, run_ids: list[int]) -> list[AppliedChange]:
        """Applied changes that one of these runs verified."""
        if not run_ids:
            return []
        marks = ", ".join("?" for _ in run_ids)
        with self._guard("read the applied changes from"):
            return [_applied(row) for row in self._db.execute(
                f"SELECT {self._applied_columns()} FROM applied WHERE verified_run_id IN ({marks})"
                " ORDER BY started_at, id", run_ids)]

    def _applied_columns(self) -> str:
        """A file opened read-only as it is may predate the journal's columns: they read as empty."""
        if self.schema_version >= JOURNAL_SCHEMA:
            return _APPLIED_COLUMNS
        return _APPLIED_COLUMNS.replace("steps, cleaned_at", "'[]', NULL")

    def mark_verified(self, applied_id: int, run_id: int, at: datetime) -> None:
        with self._guard("write the verification to"), self._transaction() as db:
            db.execute("UPDATE applied SET verified_run_id = ?, verified_at = ? WHERE id = ?",
                       (run_id, at.isoformat(), applied_id))

    def run_before(self, moment: datetime) -> RunSummary | None:
        """The latest run that did not fail outright and started before `moment`."""
        with self._guard("read"):
            row = self._db.execute("SELECT * FROM runs WHERE fatal = 0 AND started_at < ?"
                                   " ORDER BY started_at DESC, id DESC LIMIT 1", (moment.isoformat(),)).fetchone()
            return _run(row) if row else None


_APPLIED_COLUMNS = ("id, plan_id, account_id, region, endpoint, variant, caller, calls, plan, started_at, finished_at,"
                    " outcome, message, previous_config, new_config, monthly_savings_usd, verified_run_id, verified_at,"
                    " steps, cleaned_at")


def _json(value: object) -> str:
    """Calls and answers as JSON: an answer's timestamps as ISO text."""
    return json.dumps(value, default=lambda v: v.isoformat() if isinstance(v, datetime) else str(v))


def _applied(row: tuple) -> AppliedChange:
    return AppliedChange(
        id=row[0], plan_id=row[1], account_id=row[2], region=row[3], endpoint=row[4], variant=row[5], caller=row[6],
        calls=tuple(json.loads(row[7])), plan=upgraded_plan(json.loads(row[8])),
        started_at=datetime.fromisoformat(row[9]),
        finished_at=datetime.fromisoformat(row[10]), outcome=row[11], message=row[12], previous_config=row[13],
        new_config=row[14], monthly_savings_usd=float(row[15]), verified_run_id=row[16],
        verified_at=datetime.fromisoformat(row[17]) if row[17] else None,
        steps=tuple(json.loads(row[18])), cleaned_at=datetime.fromisoformat(row[19]) if row[19] else None,
    )


class StoredConfigCache:
    """Endpoint config descriptions from the history database, read once at the start of a run and
    the new ones written at its end (SQLite connections stay in one thread; discovery runs in many)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        with History(path) as history:
            self._items = history.endpoint_configs()
        self._new: dict[tuple[str, str, str], dict[str, Any]] = {}

    def get(self, account_id: str, region: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._items.get((account_id, region, name))

    def put(self, account_id: str, region: str, name: str, description: dict[str, Any]) -> None:
        with self._lock:
            self._items[(account_id, region, name)] = self._new[(account_id, region, name)] = description

    def save(self) -> int:
        """Write the descriptions learnt in this run; returns how many."""
        with self._lock:
            new = dict(self._new)
            self._new.clear()
        if new:
            with History(self.path) as history:
                history.record_endpoint_configs(new)
        return len(new)


def check_history(path: Path, quick: bool = False) -> list[str]:
    """SQLite's integrity check (or its quick check) of the file, read-only: [] when it is sound,
    else the problems, one line each. A schema newer than this auditor's counts as a problem.
    Raises HistoryError when there is no such file or it cannot be opened at all."""
    if not path.is_file():
        raise HistoryError(f"no history database at {path} (history.path): run `audit run` first")
    # Reading a file in WAL mode creates an empty -wal and an -shm beside it: those the check made, it removes.
    made = [path.with_name(path.name + c) for c in ("-wal", "-shm") if not path.with_name(path.name + c).exists()]
    db = _connect_read_only(path)
    try:
        rows = db.execute("PRAGMA quick_check" if quick else "PRAGMA integrity_check").fetchall()
        problems = [one_line_words(str(row[0])) for row in rows if row[0] != "ok"]
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            problems.append(f"schema {version} is newer than this auditor's {SCHEMA_VERSION}: "
                            "upgrade sagemaker-auditor to read it")
    except sqlite3.Error as exc:
        if not is_damage(exc):
            raise _history_error(path, "check", exc) from None
        problems = [_one_line(exc)]
    finally:
        db.close()
        # Only what exists: in a read-only directory even unlinking a missing file fails (EROFS).
        for companion in made:
            if companion.exists() and (companion.name.endswith("-shm") or companion.stat().st_size == 0):
                companion.unlink()
    return problems


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """The file opened read-only. A file in WAL mode needs its -shm beside it, which a read-only
    directory cannot hold: there, where nothing can write either, it is read as it is (immutable)."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise _history_error(path, "open", exc) from None
    try:
        db.execute("PRAGMA user_version").fetchone()
    except sqlite3.Error as exc:
        # A damaged file the caller's first query meets again and says its own way.
        if is_damage(exc) or _writable_directory(path.parent):
            return db
        db.close()
        try:
            return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)
        except sqlite3.Error as again:
            raise _history_error(path, "open", again) from None
    return db


def _writable_file(path: Path) -> bool:
    return _writable_directory(path.parent) and os.access(path, os.W_OK)


def damaged_name(path: Path, now: datetime) -> Path:
    """Where a damaged file goes: beside it, timestamped; never a name that exists."""
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.damaged-{stamp}")
    number = 1
    while any(candidate.with_name(candidate.name + c).exists() for c in ("", *_COMPANIONS)):
        number += 1
        candidate = path.with_name(f"{path.name}.damaged-{stamp}-{number}")
    return candidate


def prepare_history(path: Path, now: datetime | None = None) -> str | None:
    """Make the history at `path` fit to record a run, before the audit starts.

    A sound file (or none) is opened and upgraded; None. A file that is not SQLite, fails SQLite's
    quick check, or has a newer schema is moved aside (with its -wal, -shm or -journal) under a
    timestamped name beside it, and a new database is started; the one-line notice says so and where
    the old file is. Nothing is deleted. Anything else (a locked or unreadable file) raises HistoryError.
    """
    if path.is_file():
        problems = check_history(path, quick=True)
        if problems:
            aside = damaged_name(path, now or datetime.now(UTC))
            try:
                for companion in _COMPANIONS:
                    beside = path.with_name(path.name + companion)
                    if beside.exists():
                        os.replace(beside, aside.with_name(aside.name + companion))
                os.replace(path, aside)
            except OSError as exc:
                raise HistoryError(f"the history database {path} is damaged ({problems[0]}) and cannot be "
                                   f"moved aside: {exc.strerror or exc}") from None
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            notice = (f"the history database {path} could not be used ({problems[0]}{more}): "
                      f"moved aside to {aside}; a new one was started")
        else:
            notice = None
    else:
        notice = None
    History(path).close()  # creates or upgrades it now, so that recording the run only writes
    return notice


def _p95(utilization: VariantUtilization | None, resource: Resource) -> float | None:
    figures = utilization.get(resource) if utilization else None
    return figures.p95 if figures else None


def _advice(finding: Finding) -> str | None:
    return advice_text(finding.recommendation) if finding.recommendation else None


def _run(row: tuple) -> RunSummary:
    return RunSummary(
        id=row[0],
        started_at=datetime.fromisoformat(row[1]),
        window_start=datetime.fromisoformat(row[2]),
        window_end=datetime.fromisoformat(row[3]),
        regions=tuple(json.loads(row[5])),
        accounts=tuple(json.loads(row[6])),
        endpoints=row[7],
        findings=row[8],
        monthly_cost_usd=row[9],
        monthly_savings_usd=row[10],
        errors=tuple(json.loads(row[11])),
        fatal=bool(row[12]),
        status=row[13] if len(row) > 13 else ("failed" if row[12] else "ok"),
    )
