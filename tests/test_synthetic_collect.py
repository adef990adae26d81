"""The collector against the bench's synthetic AWS, in both wire protocols CloudWatch offers.

botocore sends CloudWatch JSON today although the model lists Smithy RPC v2 CBOR first; the
collector must take GetMetricData's datapoints whole, as arrays, whichever one it sends."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import botocore.model
import numpy as np
import pytest

from auditor.catalog import load_catalog
from auditor.collect.cloudwatch import CollectedMetrics, collect_metrics
from auditor.collect.plan import align_window
from auditor.collect.session import AwsClients, _CBORParser, _JSONParser
from auditor.kinds.endpoints.discover import discover_endpoints
from auditor.kinds.endpoints.metrics import plan_queries
from conftest import utc_now

sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
import synthetic_aws

CATALOG = load_catalog()
PROTOCOLS = {"json": ("json", "query"), "cbor": ("smithy-rpc-v2-cbor", "json", "query")}


@pytest.fixture
def synthetic(monkeypatch: pytest.MonkeyPatch) -> Iterator[synthetic_aws.SyntheticAws]:
    with synthetic_aws.SyntheticAws(40) as aws:
        for key, value in aws.env().items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("AWS_PROFILE", raising=False)
        yield aws


def _collect(protocol: str, monkeypatch: pytest.MonkeyPatch) -> CollectedMetrics:
    monkeypatch.setattr(botocore.model, "PRIORITY_ORDERED_SUPPORTED_PROTOCOLS", PROTOCOLS[protocol])
    clients = AwsClients()
    found = discover_endpoints(clients.client("sagemaker", "us-east-1"), "us-east-1")
    window = align_window(utc_now(), 14, 3600)
    queries = plan_queries(list(found.endpoints), CATALOG)
    return collect_metrics(clients.client("cloudwatch", "us-east-1"), "us-east-1", queries, window)


def test_both_protocols_give_the_same_series_across_pages(synthetic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(synthetic_aws, "MAX_DATAPOINTS", 5000)  # pages within each batch
    collected = {}
    for protocol in PROTOCOLS:
        metrics = _collect(protocol, monkeypatch)
        assert metrics.calls > 2 and not metrics.errors
        collected[protocol] = metrics
    assert synthetic.requests["json:GetMetricData"] == collected["json"].calls
    assert synthetic.requests["cbor:GetMetricData"] == collected["cbor"].calls
    json_metrics, cbor_metrics = collected["json"], collected["cbor"]
    assert json_metrics.datapoints == cbor_metrics.datapoints > 0
    for key, frame in json_metrics.all_frames().items():
        assert frame.equals(cbor_metrics.frame(*key)), key
    busy = json_metrics.frame("bench-00001", "AllTraffic")
    assert len(busy["CPUUtilization:Average"].dropna()) == 14 * 24
    # No request in an hour, no latency datapoint: missing, not zero.
    assert busy["ModelLatency:Average"].isna().sum() == (busy["Invocations:Sum"] == 0).sum() > 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_get_metric_data_datapoints_arrive_as_arrays(synthetic, protocol, monkeypatch) -> None:
    monkeypatch.setattr(botocore.model, "PRIORITY_ORDERED_SUPPORTED_PROTOCOLS", PROTOCOLS[protocol])
    window = align_window(utc_now(), 1, 60)
    answer = AwsClients().client("cloudwatch", "us-east-1").get_metric_data(
        MetricDataQueries=[{"Id": "cpu", "MetricStat": {"Metric": {
            "Namespace": "/aws/sagemaker/Endpoints", "MetricName": "CPUUtilization",
            "Dimensions": [{"Name": "EndpointName", "Value": "bench-00003"},
                           {"Name": "VariantName", "Value": "AllTraffic"},
                           {"Name": "InstanceId", "Value": "i-0"}]}, "Period": 60, "Stat": "Average"}}],
        StartTime=window.start, EndTime=window.end, ScanBy="TimestampAscending")
    result = answer["MetricDataResults"][0]
    assert isinstance(result["Timestamps"], np.ndarray) and isinstance(result["Values"], np.ndarray)
    assert len(result["Timestamps"]) == len(result["Values"]) == 1440
    assert result["Timestamps"][0] == window.start.timestamp()
    assert (np.diff(result["Timestamps"]) == 60).all()


def test_cbor_arrays_of_mixed_encodings_are_decoded_item_by_item() -> None:
    """The numpy fast path takes only arrays whose items share one encoding; others as botocore does."""
    parser = _CBORParser(timestamp_parser=lambda value: value)
    parser._arrays = True  # as while parsing GetMetricData's answer
    doubles = synthetic_aws.to_cbor([1.5] * 9)
    mixed = bytes([0x89]) + bytes([0x01]) + b"".join(bytes([0xFB]) + np.float64(2.5).byteswap().tobytes()
                                                     for _ in range(8))  # an integer, then eight doubles
    fast = parser.parse_data_item(parser.get_peekable_stream_from_bytes(doubles))
    slow = parser.parse_data_item(parser.get_peekable_stream_from_bytes(mixed))
    assert isinstance(fast, np.ndarray) and fast.tolist() == [1.5] * 9
    assert slow == [1] + [2.5] * 8
    parser._arrays = False  # any other answer: botocore's decoding, item by item
    assert parser.parse_data_item(parser.get_peekable_stream_from_bytes(doubles)) == [1.5] * 9


def test_get_metric_data_json_is_decoded_by_orjson_and_what_it_refuses_by_botocore() -> None:
    """The same body decodes to the same values either way; a NaN (json accepts it, orjson does not)
    falls back to botocore's decoding rather than failing the answer."""
    parser = _JSONParser()
    parser._arrays = True  # as while parsing GetMetricData's answer
    body = b'{"MetricDataResults": [{"Id": "q0", "Timestamps": [1700000000, 1700003600], "Values": [1.5, 2]}]}'
    assert parser._parse_body_as_json(body) == {"MetricDataResults": [
        {"Id": "q0", "Timestamps": [1700000000, 1700003600], "Values": [1.5, 2]}]}
    refused = parser._parse_body_as_json(b'{"Values": [NaN]}')
    assert np.isnan(refused["Values"][0])
    parser._arrays = False
    assert parser._parse_body_as_json(body) == _JSONParser()._parse_body_as_json(body)
