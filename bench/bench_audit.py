"""Benchmark: API calls, GetMetricData batching efficiency and analysis CPU per endpoint.

Seeds N synthetic endpoints (default 200) into the local AWS emulator, runs the audit against it
through AWS_ENDPOINT_URL and prints:
- API calls by operation, and per endpoint (target: at most 4);
- GetMetricData calls against the lower bound max(ceil(queries/500), ceil(datapoints/100800))
  (target efficiency: at least 0.9);
- CPU milliseconds per endpoint for analysis and recommendation after start-up (target: 5 ms).

- extra calls per notebook instance and per processing job (each measured on its own as well).

    .venv/bin/python bench/bench_audit.py [--endpoints 200] [--lookback-days 14] [--period 3600]
                                          [--notebooks 100] [--processing-jobs 50]
"""

from __future__ import annotations

import argparse
import math
import time
from datetime import UTC, datetime

from auditor.catalog import load_catalog
from auditor.collect.cloudwatch import collect_metrics
from auditor.collect.plan import align_window
from auditor.collect.session import AwsClients
from auditor.config import AuditConfig, AwsConfig
from auditor.kinds.endpoints.assessment import assess_endpoint
from auditor.kinds.endpoints.discover import discover_endpoints
from auditor.kinds.endpoints.judge import judge_endpoint
from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.kinds.endpoints.metrics import plan_queries
from auditor.kinds.jobs.analysis import processing_cost
from auditor.kinds.jobs.discover_processing import discover_processing_jobs
from auditor.kinds.jobs.kind import with_utilisation
from auditor.kinds.workspaces.discover_notebooks import discover_notebooks
from auditor.pipeline import run_audit
from auditor_emulator.fleet import demo_jobs, seed_fleet, seed_jobs, synthetic_fleet
from auditor_emulator.server import Emulator
from auditor_emulator.workspaces import seed_workspaces, synthetic_notebooks, synthetic_processing

REGION = "us-east-1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--endpoints", type=int, default=200)
    parser.add_argument("--lookback-days", type=int, default=14)
    parser.add_argument("--period", type=int, default=3600)
    parser.add_argument("--notebooks", type=int, default=100)
    parser.add_argument("--processing-jobs", type=int, default=50)
    args = parser.parse_args()

    now = datetime.now(UTC)
    config = AuditConfig(aws=AwsConfig(regions=(REGION,), lookback_days=args.lookback_days,
                                       period_seconds=args.period))
    with Emulator() as emulator:
        started = time.perf_counter()
        seed_fleet(emulator, synthetic_fleet(args.endpoints), now=now, lookback_days=args.lookback_days)
        training, transform = demo_jobs()
        seed_jobs(emulator, training, transform, now=now)
        seed_workspaces(emulator, synthetic_notebooks(args.notebooks), synthetic_processing(args.processing_jobs),
                        now=now)
        print(f"seeded {args.endpoints} endpoints, {len(training)} training and {len(transform)} transform jobs, "
              f"{args.notebooks} notebook instances, {args.processing_jobs} processing jobs "
              f"in {time.perf_counter() - started:.1f} s (not part of the audit)")
        with emulator.environment():
            # 1. The whole audit, as `audit run` does it: API calls and wall time.
            clients = AwsClients()
            started = time.perf_counter()
            outcome = run_audit(config, clients, now=now)
            wall = time.perf_counter() - started
            calls = outcome.report.api_calls

            # 2. The same stages by hand, to count queries and time analysis on its own.
            catalog = load_catalog()
            probe = AwsClients()
            window = align_window(now, config.aws.lookback_days, config.aws.period_seconds)
            started = time.perf_counter()
            endpoints = list(discover_endpoints(probe.client("sagemaker", REGION), REGION).endpoints)
            discover_seconds = time.perf_counter() - started
            queries = plan_queries(endpoints, catalog)
            started = time.perf_counter()
            metrics = collect_metrics(probe.client("cloudwatch", REGION), REGION, queries, window)
            collect_seconds = time.perf_counter() - started

            # 3. Notebook instances and processing jobs on their own: their calls per resource.
            notebook_probe = AwsClients()
            notebooks = discover_notebooks(notebook_probe.client("sagemaker", REGION), REGION).notebooks
            processing_probe = AwsClients()
            found = discover_processing_jobs(processing_probe.client("sagemaker", REGION), REGION, window.start).jobs
            with_utilisation([processing_cost(j, catalog) for j in found],
                             processing_probe.client("cloudwatch", REGION), REGION, "/aws/sagemaker/ProcessingJobs",
                             catalog, config, now)

    n = len(ENDPOINTS.section(outcome.report))
    total_calls = sum(calls.values())
    print(f"\naudit of {n} endpoints: {wall:.2f} s wall, {len(outcome.report.findings)} findings, "
          f"{outcome.report.monthly_savings_usd:,.2f} USD/month to save")
    print(f"  discovery {discover_seconds:.2f} s, collection {collect_seconds:.2f} s wall "
          "(the emulator runs in this process and shares its CPU)")
    print("\nAPI calls by operation:")
    for operation, count in sorted(calls.items()):
        print(f"  {operation:36s} {count:6d}")
    job_operations = ("TrainingJob", "TransformJob", "ListMetrics", "ProcessingJob", "NotebookInstance", "Domain",
                      "Space", "App")
    # GetMetricData serves both: the endpoint series took metrics.calls of them, the job hosts the rest.
    job_series_calls = calls.get("cloudwatch:GetMetricData", 0) - metrics.calls
    endpoint_calls = (sum(c for op, c in calls.items() if not any(j in op for j in job_operations))
                      - job_series_calls - len(notebooks))  # one ListTags per notebook instance
    print(f"  {'total':36s} {total_calls:6d}")
    print(f"  endpoint calls {endpoint_calls} = {endpoint_calls / n:.2f} per endpoint (target <= 4); "
          f"other calls {total_calls - endpoint_calls} for {len(training) + len(transform)} training and "
          f"transform jobs, {len(found)} processing jobs, {len(notebooks)} notebook instances and Studio")

    for label, probe_clients, count in (("notebook instance", notebook_probe, len(notebooks)),
                                        ("processing job", processing_probe, len(found))):
        used = probe_clients.counter.as_dict()
        total = sum(used.values())
        detail = ", ".join(f"{op.split(':')[1]} {c}" for op, c in used.items())
        print(f"  {count} {label}s alone: {total} calls = {total / max(count, 1):.2f} per {label} ({detail})")

    datapoints_requested = len(queries) * window.points_per_series
    lower_bound = max(math.ceil(len(queries) / 500), math.ceil(datapoints_requested / 100_800))
    gmd_calls = metrics.calls  # the endpoint series alone (job hosts are fetched separately)
    print(f"\nGetMetricData: {len(queries)} queries x {window.points_per_series} periods = "
          f"{datapoints_requested} datapoints requested, {metrics.datapoints} returned")
    print(f"  calls {gmd_calls}, lower bound {lower_bound}, efficiency {lower_bound / gmd_calls:.2f} (target >= 0.9)")

    # Warm up once (imports, caches), then time analysis and recommendation on CPU.
    def analyse_all() -> int:
        count = 0
        for endpoint in endpoints:
            assessment = assess_endpoint(endpoint, metrics, catalog, config, window, now)
            count += len(judge_endpoint(assessment, catalog, config))
        return count

    analyse_all()
    rounds = 3
    cpu_started = time.process_time()
    for _ in range(rounds):
        analyse_all()
    cpu_ms = (time.process_time() - cpu_started) * 1000 / rounds / len(endpoints)
    print(f"\nanalysis + recommendation: {cpu_ms:.2f} ms CPU per endpoint (target <= 5)")


if __name__ == "__main__":
    main()
