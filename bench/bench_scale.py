"""Scale benchmark: an organisation's fleet, audited the way the nightly job runs it.

Seeds N synthetic endpoints across A accounts x R regions into the local AWS emulator (in this
process), then runs `audit run` as a child process twice with one history database, cold (no
endpoint configs known) and warm (the nightly case), and prints per run:
- API calls per endpoint, and GetMetricData calls against the lower bound;
- CPU seconds of the audit process (user + system) per endpoint, wall time, and its peak RSS.
The child's CPU and memory are its own (the emulator runs in this process), read from
getrusage(RUSAGE_CHILDREN) after each run. With several sizes it fits the slopes and estimates
10,000 endpoints.

    .venv/bin/python bench/bench_scale.py [--endpoints 300 600] [--accounts 3] [--regions 2]
        [--audit "python --checkout DIR"]    # another checkout's code, for side-by-side figures
"""

from __future__ import annotations

import argparse
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

from auditor.emulator.fleet import seed_fleet, synthetic_fleet
from auditor.emulator.server import ACCOUNT_ID, Emulator

REGIONS = ("us-east-1", "eu-west-1", "us-west-2", "ap-northeast-1")
PERIODS = 14 * 24  # 14 days of hourly points


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
def peak():
    with open("/proc/self/status") as status, open(os.environ["BENCH_HWM_FILE"], "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM")))
atexit.register(peak)
sys.argv = ["audit", *sys.argv[1:]]
runpy.run_module("auditor.cli", run_name="__main__")
"""


def run_audit(command: list[str], config: Path, out: Path, env: dict[str, str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    hwm = out.with_suffix(".hwm")
    started = time.perf_counter()
    python = command[0]
    result = subprocess.run([python, "-c", WRAPPER, "run", "--config", str(config), "--format", "json",
                             "--output", str(out)],
                            env={**env, "BENCH_HWM_FILE": str(hwm), **_pythonpath(command)},
                            capture_output=True, text=True, cwd=out.parent)  # not this checkout's directory
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 3):
        sys.exit(f"audit failed ({result.returncode}): {result.stderr.strip().splitlines()[-1:]}")
    report = json.loads(out.read_text())
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
    total = report["summary"].get("api_calls") or sum(calls.values())
    job_ops = ("TrainingJob", "TransformJob", "ListMetrics")
    endpoint_calls = sum(c for op, c in calls.items() if not any(j in op for j in job_ops)) if calls else total
    gmd = calls.get("cloudwatch:GetMetricData", 0)
    # Per account and region, as the report gives them; an older checkout's report has no
    # `collection`: then the queries are estimated from its endpoints (8 a variant, 7 serverless).
    units = report["summary"].get("collection") or [
        {"metric_queries": q, "get_metric_data_calls": None} for q in queries_per_unit.values()]
    bound = sum(max(math.ceil(u["metric_queries"] / 500), math.ceil(u["metric_queries"] * PERIODS / 100_800))
                for u in units if u["metric_queries"])
    if all(u["get_metric_data_calls"] is not None for u in units):
        gmd = sum(u["get_metric_data_calls"] for u in units)
    figures = {"endpoints": endpoints, "calls_per_endpoint": endpoint_calls / endpoints,
               "cpu_ms_per_endpoint": run["cpu"] * 1000 / endpoints, "wall_s": run["wall"],
               "peak_rss_mb": run["max_rss_mb"], "gmd_calls": gmd, "gmd_lower_bound": bound}
    efficiency = f"{bound / gmd:.2f}" if gmd else "n/a"
    print(f"  {label:5s} {endpoints:6d} endpoints: {figures['calls_per_endpoint']:.3f} calls/endpoint, "
          f"GetMetricData {gmd} (lower bound {bound}, efficiency {efficiency}), "
          f"{figures['cpu_ms_per_endpoint']:.1f} ms CPU/endpoint, {run['wall']:.1f} s wall, "
          f"peak RSS {run['max_rss_mb']:.0f} MB")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoints", type=int, nargs="+", default=[300, 600])
    parser.add_argument("--accounts", type=int, default=3)
    parser.add_argument("--regions", type=int, default=2)
    parser.add_argument("--audit", default=shlex.quote(sys.executable),
                        help='the Python to run the audit with; "PYTHON --checkout DIR" runs another checkout')
    args = parser.parse_args()
    command = shlex.split(args.audit)
    regions = REGIONS[: args.regions]
    accounts = accounts_for(args.accounts)
    results = []
    for size in args.endpoints:
        now = datetime.now(UTC)
        with Emulator() as emulator, tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            seed(emulator, size, accounts, regions, now)
            print(f"\n{size} endpoints in {len(accounts)} accounts x {len(regions)} regions "
                  f"(seeded in {time.perf_counter() - started:.0f} s, not measured)")
            home = Path(tmp)
            config = home / "auditor.toml"
            extra = [a for a in accounts if a != ACCOUNT_ID]
            config.write_text(
                "[aws]\nregions = [" + ", ".join(f'"{r}"' for r in regions) + "]\n"
                + (("accounts = [" + ", ".join(f'"{a}"' for a in [ACCOUNT_ID, *extra]) + ']\nrole_name = "Audit"\n')
                   if extra else "")
                + "[jobs]\nenabled = false\n"
                + ("" if "--checkout" in command else "[workspaces]\nnotebooks = false\nstudio = false\n")
                + f'[history]\npath = "{home / "history.sqlite3"}"\n')
            env = {**os.environ, **emulator.env(), "XDG_DATA_HOME": str(home / "data")}
            queries = {f"{a}/{r}": 0 for a in accounts for r in regions}
            cold = run_audit(command, config, home / "cold.json", env)
            for e in cold["report"]["endpoints"]:
                if not e.get("not_judged_reason") and not e.get("skipped_reason"):
                    per_variant = 8 if e["kind"] != "serverless" else 7
                    queries[f"{e['account_id']}/{e['region']}"] += per_variant * len(e["variants"])
            warm = run_audit(command, config, home / "warm.json", env)
            results.append((describe("cold", cold, queries), describe("warm", warm, queries)))
    if len(results) >= 2:
        (c1, _), (c2, _) = results[0], results[-1]
        slope = (c2["peak_rss_mb"] - c1["peak_rss_mb"]) / max(1, c2["endpoints"] - c1["endpoints"])
        cpu = c2["cpu_ms_per_endpoint"]
        estimate = c2["peak_rss_mb"] + slope * (10_000 - c2["endpoints"])
        print(f"\nslope: {slope * 1024:.0f} KB RSS per endpoint; estimate for 10,000 endpoints: "
              f"peak RSS ~{estimate:.0f} MB, CPU ~{cpu * 10_000 / 1000:.0f} s")


if __name__ == "__main__":
    main()
