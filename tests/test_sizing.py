"""Right-sizing: the cheapest compatible shape and count that holds the observed peak."""

from __future__ import annotations

from dataclasses import replace

import pytest

from auditor.catalog import load_catalog
from auditor.config import RecommendConfig
from auditor.models import Resource
from auditor.recommend.sizing import rightsize
from helpers import utilization

CATALOG = load_catalog()
CONFIG = RecommendConfig()


def size(instance_type: str, count: int, peak: dict[Resource, float], config: RecommendConfig = CONFIG):
    return rightsize(utilization(peak), CATALOG.shape(instance_type), count, "us-east-1", CATALOG, config)


def test_idle_memory_on_r5_moves_across_families() -> None:
    # r5.2xlarge: 8 vCPU, 64 GiB. Peak 25% CPU = 2 cores, 4% memory = 2.6 GiB.
    result = size("ml.r5.2xlarge", 1, {Resource.CPU: 25.0, Resource.MEMORY: 4.0})
    assert result is not None
    rec = result.recommendation
    assert rec.instance_type == "ml.c5.xlarge"  # 4 vCPU / 8 GiB at $0.204 is the cheapest that holds it
    assert rec.instance_count == 1
    assert rec.current_monthly_usd == pytest.approx(0.605 * 730)
    assert rec.recommended_monthly_usd == pytest.approx(0.204 * 730)
    assert rec.monthly_savings_usd == pytest.approx((0.605 - 0.204) * 730, abs=0.01)
    # Every resource of the advice is at or below the target.
    assert result.demand.cpu_cores / (result.shape.vcpu * rec.instance_count) <= 0.70
    assert result.demand.memory_gib / result.shape.memory_gib <= 0.70


def test_busy_variant_gets_no_recommendation() -> None:
    assert size("ml.c5.xlarge", 2, {Resource.CPU: 85.0, Resource.MEMORY: 60.0}) is None


def test_never_fewer_than_min_of_current_and_two() -> None:
    result = size("ml.m5.xlarge", 4, {Resource.CPU: 2.0, Resource.MEMORY: 10.0})
    assert result is not None
    assert result.recommendation.instance_count == 2
    single = size("ml.m5.2xlarge", 1, {Resource.CPU: 2.0, Resource.MEMORY: 10.0})
    assert single is not None and single.recommendation.instance_count == 1


def test_configured_minimum_instances() -> None:
    result = size("ml.m5.xlarge", 4, {Resource.CPU: 2.0, Resource.MEMORY: 10.0}, replace(CONFIG, min_instances=1))
    assert result is not None and result.recommendation.instance_count == 1


def test_gpu_model_stays_on_the_same_gpu() -> None:
    result = size("ml.g4dn.4xlarge", 1, {Resource.CPU: 10.0, Resource.MEMORY: 12.0, Resource.GPU: 15.0,
                                         Resource.GPU_MEMORY: 20.0})
    assert result is not None
    assert result.recommendation.instance_type == "ml.g4dn.xlarge"
    assert CATALOG.shape(result.recommendation.instance_type).accelerator == "NVIDIA T4"


def test_gpu_instance_without_gpu_metrics_is_not_resized() -> None:
    assert size("ml.g4dn.4xlarge", 1, {Resource.CPU: 5.0, Resource.MEMORY: 5.0}) is None


def test_busy_gpu_across_four_gpus_is_kept() -> None:
    # Normalised GPU 80% over 4 GPUs = 3.2 GPUs busy: a single-GPU shape cannot hold it.
    result = size("ml.g4dn.12xlarge", 1, {Resource.CPU: 30.0, Resource.MEMORY: 50.0, Resource.GPU: 80.0,
                                          Resource.GPU_MEMORY: 60.0})
    assert result is None


def test_no_move_to_graviton_or_burstable_unless_allowed() -> None:
    peak = {Resource.CPU: 20.0, Resource.MEMORY: 10.0}
    default = size("ml.m5.xlarge", 1, peak)
    assert default is not None
    shape = CATALOG.shape(default.recommendation.instance_type)
    assert shape.architecture == "x86_64" and not shape.burstable
    allowed = size("ml.m5.xlarge", 1, peak, replace(CONFIG, allow_architecture_change=True, allow_burstable=True))
    assert allowed is not None
    assert allowed.recommendation.recommended_monthly_usd <= default.recommendation.recommended_monthly_usd


def test_unmeasured_memory_keeps_current_capacity() -> None:
    result = size("ml.r5.xlarge", 1, {Resource.CPU: 10.0})  # 32 GiB, memory not measured
    assert result is None or CATALOG.shape(result.recommendation.instance_type).memory_gib >= 32


def test_small_saving_below_threshold_is_not_advised() -> None:
    # m5.large is the smallest non-burstable x86 shape with 8 GiB: nothing is cheaper.
    assert size("ml.m5.large", 1, {Resource.CPU: 5.0, Resource.MEMORY: 60.0}) is None


def test_region_without_prices_gets_no_recommendation_unless_assumed() -> None:
    shape = CATALOG.shape("ml.r5.2xlarge")
    util = utilization({Resource.CPU: 25.0, Resource.MEMORY: 4.0})
    assert rightsize(util, shape, 1, "eu-west-1", CATALOG, CONFIG) is None
    assumed = load_catalog(fallback_price_region="us-east-1")
    assert rightsize(util, shape, 1, "eu-west-1", assumed, CONFIG) is not None


def test_catalog_covers_every_hosting_family_with_a_price() -> None:
    families = {s.family for s in CATALOG.shapes.values()}
    for family in ("t2", "t3", "m5", "m5d", "m6i", "m7i", "c5", "c5d", "c6i", "c7i", "r5", "r5d", "r6i", "r7i",
                   "g4dn", "g5", "g6", "g6e", "p3", "p4d", "p5", "inf1", "inf2",
                   "c6g", "c7g", "m6g", "m7g", "r6g", "r7g"):
        assert family in families, family
    for shape in CATALOG.shapes.values():
        assert shape.hosting_price_per_hour["us-east-1"] > 0
        assert shape.vcpu > 0 and shape.memory_gib > 0
        assert (shape.gpu_count > 0) == (shape.accelerator is not None)
    assert CATALOG.as_of and CATALOG.source
