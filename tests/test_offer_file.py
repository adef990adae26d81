"""`audit prices import FILE`: AWS's bulk offer file for SageMaker, JSON or CSV, read as a stream,
for machines that cannot reach the Price List API."""

from __future__ import annotations

import json
import tracemalloc
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config_file import CONTEXT_PREFIX
from auditor.prices.offer_file import read_offer_file
from auditor.prices.table import read_cache

runner = CliRunner()
DATA = Path(__file__).parent / "data"
JSON_FILE = DATA / "offer-AmazonSageMaker-eu-central-1.json"
CSV_FILE = DATA / "offer-AmazonSageMaker-eu-central-1.csv"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "auditor.toml"
    path.write_text(f'[pricing]\ncache_path = "{tmp_path / "cache" / "prices.json"}"\n')
    return path


@pytest.mark.parametrize("offer", [JSON_FILE, CSV_FILE], ids=["json", "csv"])
def test_offer_file_prices_instance_hours(offer: Path) -> None:
    table = read_offer_file(offer, date(2026, 11, 30))
    (region,) = table.regions
    prices = table.regions["eu-central-1"]
    assert region == "eu-central-1" and prices.fetched_at == "2026-11-01"  # the file's publication date
    assert prices.source == f"offer-file {offer.name}"
    assert prices.prices["hosting"] == {"ml.m5.xlarge": 0.276, "ml.c5.large": 0.12, "ml.m4.xlarge": 0.288,
                                        "ml.g4dn.xlarge": 0.921}
    assert prices.prices["training"] == {"ml.m5.xlarge": 0.277}  # the Reserved upfront fee is not a rate
    # `gpu` is the count, `physicalGpu` ("Physical GPU") the model, `gpuMemory` the total
    g4dn = table.hardware["ml.g4dn.xlarge"]
    assert (g4dn.gpu_count, g4dn.gpu_memory_gib, g4dn.gpu_model) == (1, 16.0, "NVIDIA T4 GPU")
    assert table.hardware["ml.m4.xlarge"].gpu_count == 0 and table.hardware["ml.m4.xlarge"].gpu_model is None


def test_import_command_fills_the_cache(config: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["prices", "import", str(JSON_FILE), "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "eu-central-1: 4 hosting prices" in result.output
    assert "not in the bundled catalog, now auditable: ml.m4.xlarge" in result.output
    cached = read_cache(tmp_path / "cache" / "prices.json")
    assert cached is not None and cached.regions["eu-central-1"].prices["hosting"]["ml.m4.xlarge"] == 0.288


@pytest.mark.parametrize(("content", "problem"), [
    ('{"offerCode": "AmazonSageMaker", "products": {"A": {"attributes": {}}',
     "malformed offer file: the file ends early"),
    ('{"offerCode": "AmazonSageMaker", "products": {"A": {"attributes": }}}',
     "malformed offer file: invalid JSON at character"),
    ('{"offerCode": "AmazonEC2", "products": {}, "terms": {}}', "an offer file for AmazonEC2, not AmazonSageMaker"),
    ('{"offerCode": "AmazonSageMaker", "products": {}, "terms": {}}', "no SageMaker instance prices in the file"),
    ('"FormatVersion","v1.0"\n"a","b","c"\n', "malformed offer file: line 2: expected the SKU header"),
], ids=["truncated", "bad-json", "other-service", "empty", "csv-without-header"])
def test_a_malformed_file_is_one_line_and_leaves_the_cache(config: Path, tmp_path: Path, content: str,
                                                          problem: str) -> None:
    assert runner.invoke(app, ["prices", "import", str(JSON_FILE), "--config", str(config)]).exit_code == 0
    cache = tmp_path / "cache" / "prices.json"
    before = cache.read_bytes()
    bad = tmp_path / ("broken.csv" if content.startswith('"') else "broken.json")
    bad.write_text(content)
    result = runner.invoke(app, ["prices", "import", str(bad), "--config", str(config)])
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if not line.startswith(CONTEXT_PREFIX)]  # the config used
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: ") and problem in lines[0], lines
    assert "Traceback" not in result.output
    assert cache.read_bytes() == before


def test_a_missing_file_is_one_line(config: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["prices", "import", str(tmp_path / "nope.json"), "--config", str(config)])
    errors = [line for line in result.stderr.splitlines() if not line.startswith(CONTEXT_PREFIX)]  # config in use
    assert result.exit_code == 1 and errors == [f"error: offer file not found: {tmp_path / 'nope.json'}"]


def test_import_streams_a_large_file_in_bounded_memory(tmp_path: Path) -> None:
    """About 30 MB of products and Reserved terms that are not instance-hours: the peak stays a
    small fraction of the file."""
    offer = json.loads(JSON_FILE.read_text())
    big = tmp_path / "offer-AmazonSageMaker.json"
    filler_product = {"productFamily": "ML Storage", "attributes": {"regionCode": "eu-central-1",
                                                                    "usagetype": "EUC1-ML:VolumeUsage.gp2"}}
    filler_terms = {"T.1": {"priceDimensions": {"T.1.2": {"unit": "GB-Mo", "pricePerUnit": {"USD": "0.14"},
                                                          "description": "x" * 200}}}}
    with big.open("w") as out:
        out.write('{"formatVersion": "v1.0", "offerCode": "AmazonSageMaker", '
                  '"publicationDate": "2026-11-01T00:00:00Z", "products": {')
        out.write(json.dumps(offer["products"])[1:-1])
        for n in range(60_000):
            out.write(f', "F{n}": {json.dumps({**filler_product, "sku": f"F{n}"})}')
        out.write('}, "terms": {"OnDemand": ')
        out.write(json.dumps(offer["terms"]["OnDemand"]))
        out.write(', "Reserved": {')
        out.write(", ".join(f'"F{n}": {json.dumps(filler_terms)}' for n in range(60_000)))
        out.write("}}}")
    size = big.stat().st_size
    assert size > 25_000_000
    tracemalloc.start()
    try:
        table = read_offer_file(big, date(2026, 11, 30))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert table.regions["eu-central-1"].prices["hosting"]["ml.m5.xlarge"] == 0.276
    assert peak < 2_000_000, (peak, size)  # about 0.4 MB measured
