"""Normalisation: CPU is summed over vCPUs, GPU over GPUs; every rule reads 0-100%."""

from __future__ import annotations

import numpy as np
import pytest

from auditor.analyse.normalise import normalise_utilisation, request_count, statistic, summarise_utilisation
from auditor.catalog import load_catalog
from auditor.models import Resource
from helpers import hourly_frame

CATALOG = load_catalog()


def test_cpu_summed_over_vcpus_is_divided_by_vcpu_count() -> None:
    # 160% raw on an 8-vCPU instance is 20% busy, not "over 100%".
    raw = hourly_frame(CPUUtilization__Average=120.0, CPUUtilization__Maximum=160.0)
    normalised = normalise_utilisation(raw, CATALOG.shape("ml.c5.2xlarge"))
    assert normalised["cpu:Maximum"].max() == pytest.approx(20.0)
    assert normalised["cpu:Average"].mean() == pytest.approx(15.0)


def test_gpu_and_gpu_memory_are_divided_by_gpu_count() -> None:
    raw = hourly_frame(GPUUtilization__Maximum=320.0, GPUMemoryUtilization__Maximum=200.0,
                       MemoryUtilization__Maximum=40.0)
    normalised = normalise_utilisation(raw, CATALOG.shape("ml.g4dn.12xlarge"))  # 4 x T4
    assert normalised["gpu:Maximum"].iloc[0] == pytest.approx(80.0)
    assert normalised["gpu_memory:Maximum"].iloc[0] == pytest.approx(50.0)
    assert normalised["memory:Maximum"].iloc[0] == pytest.approx(40.0)  # already 0-100


def test_values_are_clipped_to_100() -> None:
    raw = hourly_frame(CPUUtilization__Maximum=900.0)
    assert normalise_utilisation(raw, CATALOG.shape("ml.m5.xlarge"))["cpu:Maximum"].max() == 100.0


def test_summary_uses_maxima_for_percentiles_and_averages_for_avg() -> None:
    raw = hourly_frame(CPUUtilization__Average=[40.0, 80.0], CPUUtilization__Maximum=[100.0, 200.0])
    normalised = normalise_utilisation(raw, CATALOG.shape("ml.m5.xlarge"))  # 4 vCPU
    summary = summarise_utilisation(normalised, raw, 3600, "p95", "max")
    cpu = summary.get(Resource.CPU)
    assert cpu is not None
    assert cpu.avg == pytest.approx(15.0)
    assert cpu.max == pytest.approx(50.0)
    assert summary.sizing[Resource.CPU] == pytest.approx(50.0)
    assert summary.instance_metric_days == pytest.approx(14.0)


def test_missing_metrics_are_absent_not_zero() -> None:
    raw = hourly_frame(days=3, CPUUtilization__Maximum=10.0)
    summary = summarise_utilisation(normalise_utilisation(raw, CATALOG.shape("ml.m5.xlarge")), raw, 3600, "p95", "max")
    assert summary.get(Resource.MEMORY) is None
    assert Resource.MEMORY not in summary.peak
    assert summary.instance_metric_days == pytest.approx(3.0)
    assert summary.invocations is None


def test_request_count_prefers_what_was_published() -> None:
    assert request_count(hourly_frame(Invocations__Sum=0.0)) == 0.0
    assert request_count(hourly_frame(days=1, Invocations__Sum=2.0)) == 48.0
    # Async endpoints without Invocations count processed requests.
    assert request_count(hourly_frame(days=1, TotalProcessingTime__SampleCount=1.0)) == 24.0


def test_statistic_names() -> None:
    values = np.arange(1.0, 101.0)
    assert statistic(values, "max") == 100.0
    assert statistic(values, "avg") == 50.5
    assert statistic(values, "p95") == pytest.approx(95.05)
