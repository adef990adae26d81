"""A large audit report built by the real pure stages from synthetic frames, without AWS:
for size budgets and rendering tests where seeding hundreds of endpoints over HTTP is too slow."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import numpy as np
import pandas as pd

from auditor.catalog import load_catalog
from auditor.collect.cloudwatch import CollectedMetrics
from auditor.collect.plan import align_window
from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import assess_endpoint
from auditor.kinds.endpoints.judge import judge_endpoint
from auditor.kinds.endpoints.models import EndpointReport, Variant, VariantReport
from auditor.kinds.registry import monthly_cost_by_kind, plans_for
from auditor.models import AuditReport, CatalogInfo
from auditor.pipeline import report_settings
from helpers import NOW, endpoint

SHAPES = ["ml.m5.xlarge", "ml.m5.2xlarge", "ml.c5.xlarge", "ml.c5.2xlarge", "ml.r5.xlarge", "ml.g4dn.xlarge"]


def synthetic_report(count: int = 200, seed: int = 3) -> AuditReport:
    rng = np.random.default_rng(seed)
    catalog = load_catalog()
    config = AuditConfig()
    window = align_window(NOW, 14, 3600)
    index = pd.date_range(end=window.end - timedelta(minutes=30), periods=336, freq="h", tz="UTC")
    metrics = CollectedMetrics()
    reports, findings = [], []
    for i in range(count):
        shape = catalog.shape(SHAPES[i % len(SHAPES)])
        ep = replace(endpoint(f"model-{i:03d}", variants=(Variant("AllTraffic", shape.instance_type, 1 + i % 3),)),
                     tags={"owner": f"team-{i % 7}@example.com"})
        quiet = i % 17 == 0  # nobody calls it, and its instances idle
        cpu, memory = (rng.uniform(0.5, 3) if quiet else rng.uniform(3, 85)), rng.uniform(3, 80)
        daily = np.sin(2 * np.pi * np.arange(336) / 24)
        columns = {
            "CPUUtilization:Average": (cpu + cpu / 5 * daily) * shape.vcpu,
            "CPUUtilization:Maximum": (cpu + cpu / 5 * daily) * shape.vcpu * 1.1,
            "MemoryUtilization:Average": np.full(336, memory),
            "MemoryUtilization:Maximum": np.full(336, memory * 1.05),
        }
        if not quiet:  # AWS publishes no Invocations datapoint for an hour without traffic
            columns["Invocations:Sum"] = np.full(336, 3000.0)
        if shape.gpu_count:
            columns["GPUUtilization:Average"] = np.full(336, rng.uniform(5, 90))
            columns["GPUUtilization:Maximum"] = columns["GPUUtilization:Average"] * 1.1
        metrics.frames[(ep.name, "AllTraffic", None)] = pd.DataFrame(columns, index=index)
        assessment = assess_endpoint(ep, metrics, catalog, config, window, NOW)
        findings += judge_endpoint(assessment, catalog, config)
        reports.append(EndpointReport(ep, tuple(VariantReport(va.variant, va.monthly_cost_usd, va.utilization,
                                                               series=va.normalised) for va in assessment.variants)))
    findings.sort(key=lambda f: -max(f.monthly_savings_usd, 0))
    endpoint_reports = tuple(reports)
    sections = {"endpoints": endpoint_reports}
    return AuditReport(
        generated_at=NOW, window=window, sections=sections, findings=tuple(findings), errors=(),
        monthly_cost_by_kind=monthly_cost_by_kind(sections, window),
        plans=plans_for(findings, sections, catalog, config),
        catalog=CatalogInfo(catalog.source, catalog.as_of, catalog.priced_regions), settings=report_settings(config),
    )
