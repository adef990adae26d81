"""An endpoint is judged only on the data measured on the shape it runs now: the endpoint config it
runs cannot have served before it was created, so the data before its CreationTime (an older
shape's) is cut away, and an endpoint with too little data since is not judged yet. End to end
against the emulator: endpoints resized 9 and 2 days ago (the old shape's metrics before, the new
one's since), one resized just now through UpdateEndpoint (as `audit apply` does), and one whose
config is older than the window."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta

import boto3
import pytest

from auditor.collect.session import AwsClients
from auditor.config import AuditConfig
from auditor.models import Window
from auditor.pipeline import run_audit
from auditor.report.document import report_to_dict
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, demo_fleet, fleet_datums, seed_fleet
from auditor_emulator.server import Emulator
from conftest import seeded_emulator, utc_now

DEMO = {s.name: s for s in demo_fleet()}
# The demo's four large, nearly idle instances: on this shape the audit proposes fewer, smaller ones.
OLD = DEMO["search-embeddings"]
# What the team moved it to: three ml.m5.xlarge, well used, nothing to propose.
NEW_VARIANT = VariantSpec("ml.m5.xlarge", 3, cpu=Load(52, 4), memory=Load(55, 2))


def resized(name: str, days_ago: float) -> tuple[EndpointSpec, EndpointSpec]:
    """The endpoint before (the old shape) and after (the new shape, updated `days_ago`)."""
    return replace(OLD, name=name), replace(OLD, name=name, variants=(NEW_VARIANT,), updated_days_ago=days_ago)


RESIZED = resized("search-resized", 9)
RECENT = resized("search-recent", 2)
JUST_CHANGED = replace(OLD, name="search-just-changed")


def seed(emulator: Emulator, now: datetime) -> None:
    # The settled endpoint (config created 90 days ago) and the one changed at the end of the window.
    seed_fleet(emulator, [OLD, JUST_CHANGED], now=now)
    for before, after in (RESIZED, RECENT):
        # The endpoint on its new shape (its config created when it was updated), and its metrics:
        # the old shape's until the update, the new one's since.
        seed_fleet(emulator, [after], now=now, lookback_days=0)
        change = now - timedelta(days=after.updated_days_ago or 0)
        old, new = fleet_datums([before], now), fleet_datums([after], now)
        cloudwatch = boto3.client("cloudwatch", endpoint_url=emulator.url)
        for namespace in old:
            items = ([d for d in old[namespace] if d["Timestamp"] < change]
                     + [d for d in new[namespace] if d["Timestamp"] >= change])
            for i in range(0, len(items), 1000):
                cloudwatch.put_metric_data(Namespace=namespace, MetricData=items[i:i + 1000])
    # search-just-changed: resized through UpdateEndpoint to a config created now, as `audit apply` does.
    sagemaker = boto3.client("sagemaker", endpoint_url=emulator.url)
    sagemaker.create_endpoint_config(EndpointConfigName="search-just-changed-config-2", ProductionVariants=[
        {"VariantName": "AllTraffic", "ModelName": "search-just-changed-model", "InstanceType": "ml.m5.xlarge",
         "InitialInstanceCount": 3, "InitialVariantWeight": 1.0}])
    sagemaker.update_endpoint(EndpointName="search-just-changed", EndpointConfigName="search-just-changed-config-2")
    deadline = time.monotonic() + 30
    while sagemaker.describe_endpoint(EndpointName="search-just-changed")["EndpointStatus"] != "InService":
        assert time.monotonic() < deadline, "the emulated update did not finish"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def doc(emulator: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    now = utc_now()
    with seeded_emulator(emulator, tmp_path_factory.mktemp("home"), lambda emu: seed(emu, now)):
        yield report_to_dict(run_audit(AuditConfig(), AwsClients(), now=utc_now()).report)


def findings(doc: dict, endpoint: str) -> dict[str, dict]:
    return {f["rule"]: f for f in doc["findings"] if f["resource"]["name"] == endpoint}


def plans(doc: dict, endpoint: str) -> list[dict]:
    return [p for p in doc["plans"] if p["resource"]["name"] == endpoint]


def variant(doc: dict, endpoint: str) -> dict:
    (e,) = [e for e in doc["endpoints"] if e["name"] == endpoint]
    (v,) = e["variants"]
    return v


def test_a_config_older_than_the_window_changes_nothing(doc: dict) -> None:
    v = variant(doc, "search-embeddings")
    assert v["instance_metric_days"] == 14.0
    assert {"underutilized", "overprovisioned-count"} <= set(findings(doc, "search-embeddings"))
    assert plans(doc, "search-embeddings")


def test_a_resized_endpoint_is_judged_on_the_data_since_its_config_only(doc: dict) -> None:
    v = variant(doc, "search-resized")
    assert v["instance_type"] == "ml.m5.xlarge" and v["instance_count"] == 3
    # 9 days measured on this shape (the whole periods since its config), not the window's 14.
    assert 8.9 <= v["instance_metric_days"] <= 9.0
    # The old instances' CPU (7% of 16 vCPUs) read as if 4 vCPUs measured it would be near 28%;
    # only the new shape's own load (52% +- noise) is seen.
    assert v["utilization"]["cpu"]["avg"] > 45 and v["utilization"]["memory"]["avg"] > 50
    assert not {"underutilized", "overprovisioned-count", "insufficient-data"} & set(findings(doc, "search-resized"))
    # What the new shape's own traffic supports (autoscaling on its varying load) may be proposed;
    # nothing the old shape's data would make of it (another type, fewer instances).
    for plan in plans(doc, "search-resized"):
        assert plan["proposed"]["rules"] == ["no-autoscaling"]
        assert plan["proposed"]["instance_type"] == "ml.m5.xlarge"


def test_too_little_data_on_the_new_shape_is_not_judged_yet_with_the_reason(doc: dict) -> None:
    found = findings(doc, "search-recent")
    assert set(found) == {"insufficient-data"}
    message, evidence = found["insufficient-data"]["message"], found["insufficient-data"]["evidence"]
    since = datetime.fromisoformat(evidence["shape_since"])
    # The config was created 5 minutes before the update 2 days ago; the whole hours since are judged.
    assert abs(since - (utc_now() - timedelta(days=2, minutes=5))) < timedelta(minutes=2)
    assert 1.9 <= evidence["shape_days"] <= 2.0 and evidence["min_days"] == 7
    assert evidence["config"] == "search-recent-config"
    assert message == (f"Changed to search-recent-config on {since:%Y-%m-%d}: 2.0 days of data on this shape, "
                       "the rules need 7: no verdict yet.")
    assert plans(doc, "search-recent") == []


def test_an_endpoint_just_changed_gets_no_plan_from_its_old_shape(doc: dict) -> None:
    # The audit after an apply: 14 days of the old shape's data and none of the new one's.
    found = findings(doc, "search-just-changed")
    assert set(found) == {"insufficient-data"}
    assert found["insufficient-data"]["message"].startswith("Changed to search-just-changed-config-2 on ")
    assert "0.0 days of data on this shape, the rules need 7" in found["insufficient-data"]["message"]
    assert plans(doc, "search-just-changed") == []
    assert variant(doc, "search-just-changed")["instance_metric_days"] == 0.0


def test_the_shape_window_starts_at_the_first_whole_period_after_the_config() -> None:
    start = datetime(2026, 11, 1, 0, 0)
    window = Window(start, start + timedelta(days=14), 3600)
    assert window.starting_at(None) is window and window.starting_at(start - timedelta(days=3)) is window
    assert window.starting_at(start + timedelta(hours=5, minutes=1)).start == start + timedelta(hours=6)
    assert window.starting_at(start + timedelta(hours=5)).start == start + timedelta(hours=5)
    assert window.starting_at(start + timedelta(days=20)).start == window.end
