"""Prices from AWS's Price List: the GetProducts parser (botocore's Stubber on answers in the
documented format), the cache, the run-time lookup order and the offer-file import."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from auditor.analyse.normalise import normalise_utilisation
from auditor.catalog import load_catalog
from auditor.collect.pricing import fetch_price_table
from auditor.config_file import parse_config
from auditor.kinds.endpoints.kind import check_catalog
from auditor.kinds.endpoints.models import Endpoint, EndpointKind, Variant
from auditor.pipeline.prices import prepare_prices
from auditor.prices.merge import apply_price_table
from auditor.prices.parse import hardware_of, normalise_attributes
from auditor.prices.table import PriceCacheError, build_table, read_cache, table_to_dict, write_cache
from pricelist import price_item, stubbed_pricing

TODAY = date(2026, 11, 30)
NOW = datetime(2026, 11, 30, 6, tzinfo=UTC)


def test_get_products_pages_regions_and_types_the_catalog_lacks() -> None:
    frankfurt = [
        price_item("ml.m5.xlarge", "eu-central-1", "hosting", 0.276),
        price_item("ml.m5.xlarge", "eu-central-1", "training", 0.277),
        price_item("ml.m5.xlarge", "eu-central-1", "spot-training", 0.083),
        price_item("ml.m5.xlarge", "eu-central-1", "async", 0.276),
        price_item("ml.m5.xlarge", "eu-central-1", "batch", 0.276),
        price_item("ml.m5.xlarge", "eu-central-1", "processing", 0.276),
        price_item("ml.t3.medium", "eu-central-1", "notebook", 0.06),
        # instanceName "NA": the type is the one in the usage type
        price_item("ml.c5.large", "eu-central-1", "hosting", 0.12, vcpu=2, memory_gib=4, instance_name="NA"),
        # a type introduced after the bundled snapshot, with its hardware
        price_item("ml.m9.2xlarge", "eu-central-1", "hosting", 0.61, vcpu=8, memory_gib=32),
    ]
    storage = {"product": {"attributes": {"regionCode": "eu-central-1", "usagetype": "EUC1-ML:VolumeUsage.gp2"}},
               "terms": {"OnDemand": {}}}
    tokyo = [price_item("ml.m5.xlarge", "ap-northeast-1", "hosting", 0.299)]
    client = stubbed_pricing({"eu-central-1": [frankfurt[:4], [storage, *frankfurt[4:7]], frankfurt[7:]],
                              "ap-northeast-1": [tokyo]})
    table = fetch_price_table(client, ("eu-central-1", "ap-northeast-1"), TODAY)
    client.stubber.assert_no_pending_responses()  # every page was read, NextToken followed

    euc1 = table.regions["eu-central-1"]
    assert euc1.fetched_at == "2026-11-30" and euc1.source == "price-list-api"
    assert {u: euc1.price(u, "ml.m5.xlarge") for u in ("hosting", "training", "spot-training", "async",
                                                      "batch", "processing")} == {
        "hosting": 0.276, "training": 0.277, "spot-training": 0.083, "async": 0.276, "batch": 0.276,
        "processing": 0.276}
    assert euc1.price("notebook", "ml.t3.medium") == 0.06
    assert euc1.price("hosting", "ml.c5.large") == 0.12
    assert table.regions["ap-northeast-1"].price("hosting", "ml.m5.xlarge") == 0.299
    assert table.hardware["ml.m9.2xlarge"].vcpu == 8 and table.hardware["ml.m9.2xlarge"].memory_gib == 32

    catalog = apply_price_table(load_catalog(), table)
    assert catalog.hourly_price("ml.m5.xlarge", "eu-central-1") == 0.276
    assert catalog.training_price("ml.m5.xlarge", "eu-central-1") == 0.277
    assert catalog.hourly_price("ml.m5.xlarge", "us-east-1") == load_catalog().hourly_price("ml.m5.xlarge", "us-east-1")
    new = catalog.shape("ml.m9.2xlarge")
    assert new is not None and new.vcpu == 8 and new.accelerator is None and new.architecture == "x86_64"
    assert catalog.hourly_price("ml.m9.2xlarge", "eu-central-1") == 0.61
    origin = catalog.price_origin("ml.m9.2xlarge", "eu-central-1")
    assert origin is not None and (origin.source, origin.as_of, origin.kind) == ("price-list-api", "2026-11-30", "list")
    bundled = catalog.price_origin("ml.m5.xlarge", "us-east-1")
    assert bundled is not None and bundled.source == "bundled"


# AWS's own attribute values (GetAttributeValues for AmazonSageMaker): `physicalGpu` names the GPU
# model, `gpu` counts the GPUs, `gpuMemory` is the total over them; "N/A" where nothing is stated.
@pytest.mark.parametrize(("attributes", "expected"), [
    ({"physicalGpu": "NVIDIA T4 GPU", "gpu": "1", "gpuMemory": "16"}, (1, 16.0, "NVIDIA T4 GPU")),
    ({"physicalGpu": "NVIDIA Tesla V100 GPU", "gpu": "4", "gpuMemory": "64"}, (4, 64.0, "NVIDIA Tesla V100 GPU")),
    ({"physicalGpu": "NVIDIA H200 GPU", "gpu": "8", "gpuMemory": "1128 GiB"}, (8, 1128.0, "NVIDIA H200 GPU")),
    ({"physicalGpu": "NVIDIA K80 GPU", "gpu": "16", "gpuMemory": "192"}, (16, 192.0, "NVIDIA K80 GPU")),
    ({"physicalGpu": "AWS Inferentia", "gpu": "N/A", "gpuMemory": "N/A"}, (None, None, "AWS Inferentia")),
    ({"physicalGpu": "N/A", "gpu": "N/A", "gpuMemory": "N/A"}, (None, None, None)),
    ({"physicalGpu": "None", "gpu": "0", "gpuMemory": "0"}, (0, 0.0, None)),
    ({"physicalGpu": "N/A", "gpu": "0"}, (0, 0.0, None)),
    ({"physicalGpu": "NVIDIA A10G GPU"}, (None, None, "NVIDIA A10G GPU")),  # no `gpu`: unknown, not 0
])
def test_gpu_count_comes_from_gpu_and_the_model_from_physical_gpu(attributes: dict[str, str],
                                                                  expected: tuple[Any, Any, Any]) -> None:
    """Was: the count was read out of the model's name (T4: 4, V100: 100, H200: 200, Inferentia: 0)."""
    hardware = hardware_of(normalise_attributes({"vCpu": "48", "memory": "768 GiB", **attributes}))
    assert hardware is not None
    assert (hardware.gpu_count, hardware.gpu_memory_gib, hardware.gpu_model) == expected


def test_a_type_whose_gpus_the_price_list_does_not_state_is_priced_but_never_judged_on_gpus() -> None:
    client = stubbed_pricing({"us-east-1": [[
        price_item("ml.p5e.48xlarge", "us-east-1", "hosting", 40.0, vcpu=192, memory_gib=2048, gpus=8,
                   gpu_model="NVIDIA H200 GPU", gpu_memory_gib=1128),
        price_item("ml.trn9.32xlarge", "us-east-1", "hosting", 20.0, vcpu=128, memory_gib=512, gpus="N/A",
                   gpu_model="AWS Trainium", gpu_memory_gib="N/A"),
    ]]})
    catalog = apply_price_table(load_catalog(), fetch_price_table(client, ("us-east-1",), TODAY))
    h200 = catalog.shape("ml.p5e.48xlarge")
    assert h200 is not None and (h200.gpu_count, h200.accelerator_memory_gib, h200.accelerator) == (
        8, 1128.0, "NVIDIA H200 GPU")
    assert h200.accelerators_known and h200.has_accelerator
    trainium = catalog.shape("ml.trn9.32xlarge")
    assert trainium is not None and not trainium.accelerators_known and trainium.accelerator == "AWS Trainium"
    assert catalog.hourly_price("ml.trn9.32xlarge", "us-east-1") == 20.0

    # An endpoint on it is listed and priced, not judged, and says why.
    endpoint = Endpoint("", "us-east-1", "big", "arn:aws:sagemaker:us-east-1:1:endpoint/big", "InService",
                        EndpointKind.REAL_TIME, NOW, "big", {}, (Variant("all", "ml.trn9.32xlarge", 1),))
    judged, errors = check_catalog(endpoint, catalog)
    assert judged.not_judged_reason == ("the price list does not state the GPU count or GPU memory of "
                                        "ml.trn9.32xlarge: not judged")
    assert [e.message for e in errors] == [judged.not_judged_reason]
    # Its GPU figures are unknown, not a sum read as one GPU's.
    raw = pd.DataFrame({"GPUUtilization:Maximum": [700.0], "CPUUtilization:Maximum": [1280.0]})
    assert normalise_utilisation(raw, trainium).isna().to_dict("records") == [
        {"gpu:Maximum": True, "cpu:Maximum": False}]
    assert check_catalog(replace(endpoint, variants=(Variant("all", "ml.p5e.48xlarge", 1),)), catalog)[1] == []


def test_a_version_1_cache_keeps_its_prices_and_drops_its_misread_hardware(tmp_path: Path) -> None:
    table = build_table([], "2026-11-01", "price-list-api")
    data = table_to_dict(table)
    data["cache_version"] = 1
    data["regions"] = {"us-east-1": {"fetched_at": "2026-11-01", "source": "price-list-api",
                                     "prices": {"hosting": {"ml.g4dn.xlarge": 0.7}}}}
    data["hardware"] = {"ml.g4dn.xlarge": {"vcpu": 4, "memory_gib": 16, "gpu_count": 4, "gpu_memory_gib": 16}}
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(data))
    read = read_cache(path)
    assert read is not None and read.regions["us-east-1"].price("hosting", "ml.g4dn.xlarge") == 0.7
    assert read.hardware == {}  # "gpu_count": 4 was the 4 of "NVIDIA T4 GPU"
    write_cache(path, build_table([], "2026-11-01", "x").merged(read))
    again = read_cache(path)
    assert again is not None and again.hardware == {}


def test_a_refresh_replaces_derived_snapshot_prices() -> None:
    catalog = load_catalog()
    derived = next(s for s in catalog.shapes.values() if s.price_source == "derived")
    client = stubbed_pricing({"us-east-1": [[price_item(derived.instance_type, "us-east-1", "hosting", 1.234,
                                                        vcpu=derived.vcpu, memory_gib=derived.memory_gib)]]})
    refreshed = apply_price_table(catalog, fetch_price_table(client, ("us-east-1",), TODAY))
    assert refreshed.hourly_price(derived.instance_type, "us-east-1") == 1.234
    shape = refreshed.shape(derived.instance_type)
    assert shape is not None and shape.price_source == "list"
    origin = refreshed.price_origin(derived.instance_type, "us-east-1")
    assert origin is not None and origin.kind == "list" and origin.source == "price-list-api"


def _config(tmp_path: Path, **pricing: Any) -> Any:
    values = {"cache_path": str(tmp_path / "cache" / "prices.json"), **pricing}
    return parse_config({"aws": {"regions": ["eu-central-1"]}, "pricing": values})


class FakeClients:
    """Hands out one stubbed client, as AwsClients.client would."""

    def __init__(self, client: Any) -> None:
        self.pricing = client
        self.asked: list[tuple[str, str]] = []

    def client(self, service: str, region: str) -> Any:
        self.asked.append((service, region))
        return self.pricing


def test_run_refreshes_a_stale_cache_and_falls_back_when_denied(tmp_path: Path) -> None:
    config = _config(tmp_path, refresh_after_days=7, api_region="eu-central-1")
    path = Path(config.pricing.cache_path)
    first = stubbed_pricing({"eu-central-1": [[price_item("ml.m5.xlarge", "eu-central-1", "hosting", 0.25)]]})
    write_cache(path, fetch_price_table(first, ("eu-central-1",), date(2026, 11, 1)))  # 29 days old

    fresh = stubbed_pricing({"eu-central-1": [[price_item("ml.m5.xlarge", "eu-central-1", "hosting", 0.276)]]})
    clients = FakeClients(fresh)
    prices = prepare_prices(config, clients, NOW)  # type: ignore[arg-type]
    assert clients.asked == [("pricing", "eu-central-1")]
    assert prices.catalog.hourly_price("ml.m5.xlarge", "eu-central-1") == 0.276
    cached = read_cache(path)
    assert cached is not None and cached.regions["eu-central-1"].fetched_at == "2026-11-30"

    # A fresh cache is not fetched again.
    clients = FakeClients(None)
    prepare_prices(config, clients, NOW)  # type: ignore[arg-type]
    assert clients.asked == []

    # Denied: one warning line, the cache's prices, the cache untouched.
    later = datetime(2026, 12, 30, tzinfo=UTC)
    denied = stubbed_pricing({})
    denied.stubber.add_client_error("get_products", "AccessDeniedException", "not allowed", 400)
    before = path.read_bytes()
    prices = prepare_prices(config, FakeClients(denied), later)  # type: ignore[arg-type]
    assert prices.catalog.hourly_price("ml.m5.xlarge", "eu-central-1") == 0.276
    refresh_lines = [w for w in prices.warnings if "not refreshed" in w]
    assert refresh_lines == ["prices not refreshed: access denied: pricing:GetProducts in eu-central-1 "
                             "(AccessDeniedException); prices from the price cache"]
    assert path.read_bytes() == before


def test_without_a_cache_the_bundled_snapshot_prices_and_nothing_is_fetched(tmp_path: Path) -> None:
    config = _config(tmp_path)
    clients = FakeClients(None)
    prices = prepare_prices(config, clients, NOW)  # type: ignore[arg-type]
    assert clients.asked == []
    assert prices.catalog.hourly_price("ml.m5.xlarge", "eu-central-1") is None
    assert prices.catalog.hourly_price("ml.m5.xlarge", "us-east-1") is not None
    # The snapshot is older than pricing.max_price_age_days: said in every report.
    us = prepare_prices(parse_config({"pricing": {"cache_path": config.pricing.cache_path}}), clients, NOW)  # type: ignore[arg-type]
    assert any("as of 2025-06-01, older than pricing.max_price_age_days (365 days)" in w for w in us.too_old)


def test_fetch_when_missing(tmp_path: Path) -> None:
    config = _config(tmp_path, fetch_when_missing=True)
    client = stubbed_pricing({"eu-central-1": [[price_item("ml.m5.xlarge", "eu-central-1", "hosting", 0.276)]]})
    prices = prepare_prices(config, FakeClients(client), NOW)  # type: ignore[arg-type]
    assert prices.catalog.hourly_price("ml.m5.xlarge", "eu-central-1") == 0.276


def test_a_damaged_cache_is_one_line_and_the_snapshot_prices(tmp_path: Path) -> None:
    config = _config(tmp_path)
    path = Path(config.pricing.cache_path)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(PriceCacheError, match="damaged price cache"):
        read_cache(path)
    prices = prepare_prices(config, FakeClients(None), NOW)  # type: ignore[arg-type]
    assert any(w.startswith(f"{path}: damaged price cache") for w in prices.warnings)


def test_pricing_config_is_checked() -> None:
    from auditor.errors import ConfigError

    with pytest.raises(ConfigError, match=r"pricing.api_region must be one of us-east-1, eu-central-1, ap-south-1"):
        parse_config({"pricing": {"api_region": "eu-west-1"}})
    with pytest.raises(ConfigError, match=r'pricing.basis must be "list" or "effective"'):
        parse_config({"pricing": {"basis": "negotiated"}})



def test_prices_url_names_each_regions_offer_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """For air-gapped machines: where to download the offer file that `prices import` reads."""
    import boto3
    from botocore.stub import ANY, Stubber
    from typer.testing import CliRunner

    from auditor.cli import app

    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
    stubber = Stubber(client)
    arn = "arn:aws:pricing:::price-list/aws/AmazonSageMaker/USD/20261101000000/{}"
    stubber.add_response("list_price_lists", {
        "PriceLists": [{"PriceListArn": arn.format("eu-central-1"), "RegionCode": "eu-central-1",
                        "CurrencyCode": "USD", "FileFormats": ["json", "csv"]}],
        "NextToken": "page-2"},
        {"ServiceCode": "AmazonSageMaker", "EffectiveDate": ANY, "CurrencyCode": "USD"})
    stubber.add_response("list_price_lists", {
        "PriceLists": [{"PriceListArn": arn.format("ap-northeast-1"), "RegionCode": "ap-northeast-1",
                        "CurrencyCode": "USD", "FileFormats": ["json", "csv"]}]},
        {"ServiceCode": "AmazonSageMaker", "EffectiveDate": ANY, "CurrencyCode": "USD", "NextToken": "page-2"})
    stubber.add_response("get_price_list_file_url", {"Url": "https://example.com/sagemaker-euc1.csv"},
                         {"PriceListArn": arn.format("eu-central-1"), "FileFormat": "csv"})
    stubber.activate()
    monkeypatch.setattr("auditor.tasks.prices.pricing_client", lambda config: client)
    config = tmp_path / "auditor.toml"
    config.write_text("")
    result = CliRunner().invoke(app, ["prices", "url", "--config", str(config), "--region", "eu-central-1",
                                      "--region", "sa-east-1", "--file-format", "csv"])
    assert result.exit_code == 0, result.output
    assert "eu-central-1: https://example.com/sagemaker-euc1.csv" in result.output
    assert "sa-east-1: no SageMaker offer file listed" in result.output
    stubber.assert_no_pending_responses()
