"""Scale benchmark: an organisation's fleet, audited the way the nightly job runs it.

Runs `audit run` as a child process twice with one history database, cold (no endpoint configs
known) and warm (the nightly case), against one of two backends:
- `synthetic` (the default; bench/synthetic_aws.py): a local AWS that computes its answers, so
  10,000 endpoints need no seeding (one in ten real-time endpoints with enhanced metrics on 2-8
  instances); CloudWatch answers in the protocol botocore picks (`--protocol cbor` makes it pick
  Smithy RPC v2 CBOR, which CloudWatch's model lists first);
- `moto`: the emulator, seeded (minutes for a few thousand endpoints).
It prints per run, against the goals:
- non-metric API calls per endpoint (cold <= 1.1, warm <= 0.1);
- GetMetricData calls against the lower bound max(ceil(queries/500), ceil(points/100,800)) per
  account and region (within 5%);
- CPU of the whole audit process (user + system) per endpoint (<= 10 ms), from getrusage;
- its peak RSS (VmHWM; <= 1 GiB, the deploy units' MemoryMax), and wall time.

    .venv/bin/python bench/bench_scale.py [--endpoints 10000] [--accounts 1] [--regions 1]
        [--backend synthetic|moto] [--protocol json|cbor]
        [--audit "python --checkout DIR"]    # another checkout's code, for side-by-side figures
"""

from __future__ import annotations

import argparse
import email
import email.policy
import json
import math
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from synthetic_aws import SyntheticAws

from auditor.report.email_message import HTML_BUDGET_BYTES
from auditor_emulator.fleet import seed_fleet, synthetic_fleet
from auditor_emulator.server import ACCOUNT_ID, Emulator

REGIONS = ("us-east-1", "eu-west-1", "us-west-2", "ap-northeast-1")
PERIODS = 14 * 24  # 14 days of hourly points
# The goals (issue 20), checked on every run.
GOAL_CALLS = {"cold": 1.1, "warm": 0.1}  # non-metric API calls per endpoint
GOAL_GMD_SLACK = 1.05  # GetMetricData calls within 5% of the lower bound
GOAL_CPU_MS = 10.0  # per endpoint, the whole audit process
GOAL_RSS_MB = 1024.0  # the deploy units' MemoryMax


def accounts_for(count: int) -> list[str]:
    return [ACCOUNT_ID] + [f"{111111111111 * (i + 1):012d}"[:12] for i in range(count - 1)]


def seed(emulator: Emulator, endpoints: int, accounts: list[str], regions: tuple[str, ...], now: datetime) -> None:
    fleet = synthetic_fleet(endpoints)
    units = [(a, r) for a in accounts for r in regions]
    for i, (account, region) in enumerate(units):
        part = fleet[i::len(units)]
        seed_fleet(emulator, part, now=now, region=region, account_id=account)


# The child reports its own peak RSS (VmHWM, which starts afresh at exec; getrusage's ru_maxrss of
# a child would include this process's memory, copied at fork).
WRAPPER = """
import atexit, os, runpy, sys
if os.environ.get("BENCH_PROTOCOL") == "cbor":  # what botocore would pick if it ranked CBOR first
    import botocore.model
    botocore.model.PRIORITY_ORDERED_SUPPORTED_PROTOCOLS = ("smithy-rpc-v2-cbor", "json", "query")
def peak():
    with open("/proc/self/status") as status, open(os.environ["BENCH_HWM_FILE"], "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM")))
atexit.register(peak)
sys.argv = ["audit", *sys.argv[1:]]
runpy.run_module("auditor.cli", run_name="__main__")
"""


def run_audit(command: list[str], config: Path, out: Path, env: dict[str, str], fmt: str = "json",
              extra: tuple[str, ...] = ()) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    hwm = out.with_suffix(".hwm")
    started = time.perf_counter()
    python = command[0]
    result = subprocess.run([python, "-c", WRAPPER, "run", "--config", str(config), "--format", fmt,
                             "--output", str(out), *extra],
                            env={**env, "BENCH_HWM_FILE": str(hwm), **_pythonpath(command)},
                            capture_output=True, text=True, cwd=out.parent)  # not this checkout's directory
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 3):
        sys.exit(f"audit failed ({result.returncode}): {result.stderr.strip().splitlines()[-1:]}")
    report = json.loads(out.read_text()) if fmt == "json" else None
    return {
        "report": report,
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "max_rss_mb": int(hwm.read_text()) / 1024 if hwm.exists() else float("nan"),  # KiB -> MiB
    }


def _pythonpath(command: list[str]) -> dict[str, str]:
    """`--audit "python -m auditor.cli --checkout DIR"`: run another checkout's code."""
    if "--checkout" in command:
        return {"PYTHONPATH": command[command.index("--checkout") + 1]}
    return {}


def describe(label: str, run: dict, queries_per_unit: dict[str, int]) -> dict[str, float]:
    report = run["report"]
    endpoints = max(1, len(report["endpoints"]))
    calls = report["summary"].get("api_calls_by_operation", {})
    job_ops = ("TrainingJob", "TransformJob", "ListMetrics")
    gmd = calls.get("cloudwatch:GetMetricData", 0)
    other_calls = sum(c for op, c in calls.items()
                      if op != "cloudwatch:GetMetricData" and not any(j in op for j in job_ops))
    # Per account and region, as the report gives them; an older checkout's report has no
    # `collection`: then the queries are estimated from its endpoints (8 a variant, 7 serverless).
    units = report["summary"].get("collection") or [
        {"metric_queries": q, "get_metric_data_calls": None} for q in queries_per_unit.values()]
    queries = sum(u["metric_queries"] for u in units)
    bound = sum(max(math.ceil(u["metric_queries"] / 500), math.ceil(u["metric_queries"] * PERIODS / 100_800))
                for u in units if u["metric_queries"])
    if all(u["get_metric_data_calls"] is not None for u in units):
        gmd = sum(u["get_metric_data_calls"] for u in units)
    points = sum(u.get("datapoints") or 0 for u in units)
    figures = {"endpoints": endpoints, "calls_per_endpoint": other_calls / endpoints,
               "cpu_ms_per_endpoint": run["cpu"] * 1000 / endpoints, "wall_s": run["wall"],
               "peak_rss_mb": run["max_rss_mb"], "gmd_calls": gmd, "gmd_lower_bound": bound}

    def verdict(ok: bool) -> str:
        return "ok" if ok else "OVER"

    rss = run["max_rss_mb"]
    print(f"  {label}: {endpoints} endpoints, {queries} metric queries, {points:,} datapoints, "
          f"{run['wall']:.0f} s wall")
    print(f"    non-metric calls {other_calls} = {figures['calls_per_endpoint']:.3f}/endpoint "
          f"(goal <= {GOAL_CALLS[label]}: {verdict(figures['calls_per_endpoint'] <= GOAL_CALLS[label])}); "
          + ", ".join(f"{op.split(':')[1]} {c}" for op, c in calls.items() if op != "cloudwatch:GetMetricData"))
    print(f"    GetMetricData {gmd}, lower bound {bound} "
          f"(goal within 5%: {verdict(gmd <= bound * GOAL_GMD_SLACK)})")
    print(f"    CPU {run['cpu']:.1f} s = {figures['cpu_ms_per_endpoint']:.2f} ms/endpoint "
          f"(goal <= {GOAL_CPU_MS:g}: {verdict(figures['cpu_ms_per_endpoint'] <= GOAL_CPU_MS)})")
    print(f"    peak RSS {rss:.0f} MiB (goal <= {GOAL_RSS_MB:.0f}: {verdict(rss <= GOAL_RSS_MB)}, "
          f"margin {GOAL_RSS_MB - rss:.0f} MiB)")
    return figures


def write_config(home: Path, accounts: list[str], regions: tuple[str, ...], command: list[str]) -> Path:
    config = home / "auditor.toml"
    extra = [a for a in accounts if a != ACCOUNT_ID]
    config.write_text(
        "[aws]\nregions = [" + ", ".join(f'"{r}"' for r in regions) + "]\n"
        + (("accounts = [" + ", ".join(f'"{a}"' for a in [ACCOUNT_ID, *extra]) + ']\nrole_name = "Audit"\n')
           if extra else "")
        + "[jobs]\nenabled = false\n"
        + ("" if "--checkout" in command else "[workspaces]\nnotebooks = false\nstudio = false\n")
        + f'[history]\npath = "{home / "history.sqlite3"}"\n')
    return config


def cold_and_warm(command: list[str], config: Path, home: Path, env: dict[str, str],
                  accounts: list[str], regions: tuple[str, ...]) -> tuple[dict[str, float], dict[str, float]]:
    queries = {f"{a}/{r}": 0 for a in accounts for r in regions}
    cold = run_audit(command, config, home / "cold.json", env)
    for e in cold["report"]["endpoints"]:
        if not e.get("not_judged_reason") and not e.get("skipped_reason"):
            per_variant = 8 if e["kind"] != "serverless" else 7
            queries[f"{e['account_id']}/{e['region']}"] += per_variant * len(e["variants"])
    figures = describe("cold", cold, queries)
    del cold  # the report document: hundreds of MB at 10,000 endpoints
    warm = run_audit(command, config, home / "warm.json", env)
    return figures, describe("warm", warm, queries)


def check_reports(command: list[str], config: Path, home: Path, env: dict[str, str], endpoints: int) -> None:
    """A third run writes the HTML report and the email (.eml): their sizes against the budgets."""
    html, eml = home / "report.html", home / "report.eml"
    run = run_audit(command, config, html, env, "html", ("--email-to-file", str(eml)))
    if not eml.exists():
        print("  reports: no email written (this checkout has no --email-to-file?)")
        return
    message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
    body = message.get_body(preferencelist=("html",))
    body_bytes = len(body.get_content().encode("utf-8")) if body is not None else 0
    print(f"  reports (warm, HTML report + email in one run): {run['cpu']:.0f} s CPU "
          f"({run['cpu'] * 1000 / endpoints:.1f} ms/endpoint), peak RSS {run['max_rss_mb']:.0f} MiB")
    print(f"    email HTML body {body_bytes:,} bytes (budget {HTML_BUDGET_BYTES:,}: "
          f"{'ok' if body_bytes <= HTML_BUDGET_BYTES else 'OVER'}), whole message {eml.stat().st_size / 1e6:.1f} MB "
          f"with its attachments")
    print(f"    HTML report {html.stat().st_size / 1e6:.1f} MB ({html.stat().st_size / endpoints / 1e3:.1f} KB an "
          "endpoint, every endpoint with its charts inline; no budget is set for the file)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoints", type=int, nargs="+", default=None,
                        help="fleet sizes (default: 10000 synthetic, 300 600 in the emulator)")
    parser.add_argument("--accounts", type=int, default=1)
    parser.add_argument("--regions", type=int, default=1)
    parser.add_argument("--backend", choices=("synthetic", "moto"), default="synthetic")
    parser.add_argument("--protocol", choices=("json", "cbor"), default="json",
                        help="CloudWatch's wire protocol (synthetic backend): botocore picks json today")
    parser.add_argument("--no-reports", dest="reports", action="store_false",
                        help="skip the third run that writes the HTML report and the email")
    parser.add_argument("--audit", default=shlex.quote(sys.executable),
                        help='the Python to run the audit with; "PYTHON --checkout DIR" runs another checkout')
    args = parser.parse_args()
    command = shlex.split(args.audit)
    regions = REGIONS[: args.regions]
    accounts = accounts_for(args.accounts)
    sizes = args.endpoints or ([10_000] if args.backend == "synthetic" else [300, 600])
    results = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            config = write_config(home, accounts, regions, command)
            backend: SyntheticAws | Emulator
            if args.backend == "synthetic":
                backend = SyntheticAws(size, accounts, list(regions))
                print(f"\n{size} endpoints in {len(accounts)} accounts x {len(regions)} regions, synthetic AWS "
                      f"(CloudWatch in {args.protocol})")
            else:
                backend = Emulator()
            with backend:
                if isinstance(backend, Emulator):
                    started = time.perf_counter()
                    seed(backend, size, accounts, regions, datetime.now(UTC))
                    print(f"\n{size} endpoints in {len(accounts)} accounts x {len(regions)} regions "
                          f"(seeded in {time.perf_counter() - started:.0f} s, not measured)")
                env = {**os.environ, **backend.env(), "XDG_DATA_HOME": str(home / "data"),
                       "BENCH_PROTOCOL": args.protocol}
                results.append(cold_and_warm(command, config, home, env, accounts, regions))
                if args.reports:
                    check_reports(command, config, home, env, size)
                if isinstance(backend, SyntheticAws):
                    print(f"  the synthetic AWS answered: {backend.requests}")
    if len(results) >= 2:
        (c1, _), (c2, _) = results[0], results[-1]
        added = max(1, c2["endpoints"] - c1["endpoints"])
        rss_slope = (c2["peak_rss_mb"] - c1["peak_rss_mb"]) / added
        cpu_slope = (c2["cpu_ms_per_endpoint"] * c2["endpoints"] - c1["cpu_ms_per_endpoint"] * c1["endpoints"]) / added
        print(f"\nslope (cold): {rss_slope * 1024:.0f} KB RSS and {cpu_slope:.2f} ms CPU per endpoint")

if __name__ == "__main__":
    main()
