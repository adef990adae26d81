"""Studio domains, spaces and apps. moto 5.2.5 has ListDomains and DescribeDomain but no ListApps,
DescribeApp, ListSpaces or DescribeSpace, so discovery is tested with botocore's Stubber (the
requests are validated against the service model) and the rules on the models it builds."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest
from botocore.stub import Stubber

from auditor.analyse.rules import evaluate_collection
from auditor.catalog import load_catalog
from auditor.collect.session import RegionAccessError
from auditor.config import AuditConfig
from auditor.config_file import parse_config
from auditor.kinds.registry import REGISTRY
from auditor.kinds.workspaces.costs import studio_app_cost
from auditor.kinds.workspaces.discover_studio import discover_studio
from auditor.kinds.workspaces.kind import WorkspacesAssessment
from helpers import NOW

DOMAIN = "d-abc123"
ARN = f"arn:aws:sagemaker:us-east-1:123456789012:domain/{DOMAIN}"


def _idle(minutes: int | None) -> dict:
    if minutes is None:
        return {}
    return {"AppLifecycleManagement": {"IdleSettings": {"LifecycleManagement": "ENABLED",
                                                        "IdleTimeoutInMinutes": minutes}}}


def stubbed(jupyterlab_idle: int | None = None, space_idle: int | None = None) -> tuple[object, Stubber]:
    client = boto3.client("sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    stub.add_response("list_domains",
                      {"Domains": [{"DomainId": DOMAIN, "DomainName": "research", "Status": "InService"}]})
    stub.add_response("describe_domain", {
        "DomainId": DOMAIN, "DomainArn": ARN, "DomainName": "research", "Status": "InService",
        "DefaultUserSettings": {"JupyterLabAppSettings": _idle(jupyterlab_idle), "CodeEditorAppSettings": _idle(60)},
    }, {"DomainId": DOMAIN})
    stub.add_response("list_spaces", {"Spaces": [{"DomainId": DOMAIN, "SpaceName": "alice-lab"}]},
                      {"DomainIdEquals": DOMAIN})
    stub.add_response("describe_space", {
        "DomainId": DOMAIN, "SpaceName": "alice-lab",
        "SpaceSettings": {"AppType": "JupyterLab", "JupyterLabAppSettings": _idle(space_idle)},
    }, {"DomainId": DOMAIN, "SpaceName": "alice-lab"})
    created = NOW - timedelta(days=5)
    apps = [
        # A GPU JupyterLab: the last "activity" is its last health check, i.e. none.
        {"DomainId": DOMAIN, "SpaceName": "alice-lab", "AppType": "JupyterLab", "AppName": "default",
         "Status": "InService", "CreationTime": created, "ResourceSpec": {"InstanceType": "ml.g4dn.xlarge"}},
        # A KernelGateway someone used an hour ago.
        {"DomainId": DOMAIN, "UserProfileName": "bob", "AppType": "KernelGateway", "AppName": "datascience-ml-m5",
         "Status": "InService", "CreationTime": created, "ResourceSpec": {"InstanceType": "ml.m5.xlarge"}},
        # Deleted apps are not described.
        {"DomainId": DOMAIN, "UserProfileName": "bob", "AppType": "KernelGateway", "AppName": "old",
         "Status": "Deleted", "CreationTime": created},
    ]
    stub.add_response("list_apps", {"Apps": apps}, {"DomainIdEquals": DOMAIN})
    health = NOW - timedelta(minutes=5)
    stub.add_response("describe_app", {
        "DomainId": DOMAIN, "SpaceName": "alice-lab", "AppType": "JupyterLab", "AppName": "default",
        "Status": "InService", "CreationTime": created, "LastHealthCheckTimestamp": health,
        "LastUserActivityTimestamp": health, "ResourceSpec": {"InstanceType": "ml.g4dn.xlarge"},
    }, {"DomainId": DOMAIN, "SpaceName": "alice-lab", "AppType": "JupyterLab", "AppName": "default"})
    stub.add_response("describe_app", {
        "DomainId": DOMAIN, "UserProfileName": "bob", "AppType": "KernelGateway", "AppName": "datascience-ml-m5",
        "Status": "InService", "CreationTime": created, "LastHealthCheckTimestamp": health,
        "LastUserActivityTimestamp": NOW - timedelta(hours=1), "ResourceSpec": {"InstanceType": "ml.m5.xlarge"},
    }, {"DomainId": DOMAIN, "UserProfileName": "bob", "AppType": "KernelGateway", "AppName": "datascience-ml-m5"})
    return client, stub


def audit(config: AuditConfig | None = None, **kw: int | None) -> tuple[object, list]:
    client, stub = stubbed(**kw)
    with stub:
        found = discover_studio(client, "us-east-1", max_workers=1)  # type: ignore[arg-type]
        stub.assert_no_pending_responses()
    catalog = load_catalog()
    assessment = WorkspacesAssessment(NOW, (), found.domains, found.spaces,
                                      tuple(studio_app_cost(a, catalog, NOW) for a in found.apps))
    return found, evaluate_collection(REGISTRY, assessment, catalog, config or AuditConfig())


def test_discovery_reads_idle_settings_and_activity() -> None:
    found, _ = audit()
    (domain,) = found.domains
    assert domain.account_id == "123456789012"
    assert domain.idle_timeout_minutes == {"JupyterLab": None, "CodeEditor": 60}
    (space,) = found.spaces
    assert space.app_type == "JupyterLab" and space.idle_timeout_minutes is None
    apps = {a.app_name: a for a in found.apps}
    assert set(apps) == {"default", "datascience-ml-m5"}  # the deleted app is not described
    assert apps["default"].instance_type == "ml.g4dn.xlarge" and apps["default"].owner == "alice-lab"
    assert apps["default"].user_activity is None  # its last activity is its last health check


def test_health_checks_are_not_activity() -> None:
    _, findings = audit()
    idle = {f.resource.name: f for f in findings if f.rule == "studio-app-idle"}
    assert list(idle) == [f"{DOMAIN}/alice-lab/JupyterLab/default"]  # bob's app was used an hour ago
    finding = idle[f"{DOMAIN}/alice-lab/JupyterLab/default"]
    assert finding.resource.type == "studio-app" and finding.evidence["health_check_only"] is True
    assert finding.evidence["idle_hours"] == pytest.approx(5 * 24, abs=0.1)  # idle since it was created
    price = load_catalog().hourly_price("ml.g4dn.xlarge", "us-east-1")
    assert price is not None
    assert finding.recommendation is not None and finding.recommendation.action == "delete-app"
    assert finding.recommendation.monthly_savings_usd == pytest.approx(price * 730, abs=0.01)


def test_a_domain_without_idle_shutdown_names_its_bare_spaces() -> None:
    _, findings = audit()
    (finding,) = [f for f in findings if f.rule == "studio-no-idle-shutdown"]
    assert finding.resource.name == DOMAIN and finding.resource.type == "studio-domain"
    assert finding.evidence["apps_without_idle_shutdown"] == ["JupyterLab"]
    assert finding.evidence["spaces_without"] == ["alice-lab"] and finding.evidence["running_apps"] == 1


def test_idle_shutdown_on_the_domain_silences_the_rule_and_idle_hours_are_tunable() -> None:
    config = parse_config({"rules": {"studio-app-idle": {"idle_hours": 200}}})
    _, findings = audit(config, jupyterlab_idle=120)
    assert findings == []


def test_denied_listing_is_reported_not_swallowed() -> None:
    client = boto3.client("sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stub = Stubber(client)
    stub.add_client_error("list_domains", "AccessDeniedException", "not allowed", 400)
    with stub, pytest.raises(RegionAccessError, match=r"access denied: sagemaker:ListDomains in us-east-1"):
        discover_studio(client, "us-east-1")  # type: ignore[arg-type]
