"""A config's own tags are read only for a config a plan copies, once, and kept (Stubber: ListTags
as botocore's service model has it)."""

from __future__ import annotations

import threading
from dataclasses import replace

import boto3
from botocore.stub import Stubber

from auditor.discover.endpoints import MemoryConfigCache, with_config_tags
from auditor.models import AuditError
from helpers import endpoint

ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/ep-config"


def described(tags: object = None) -> dict[str, object]:
    return {"EndpointConfigName": "ep-config", "EndpointConfigArn": ARN, "ProductionVariants": [], "Tags": tags}


def test_tags_are_read_once_and_kept_for_the_next_run() -> None:
    client = boto3.client("sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    configs = MemoryConfigCache()
    configs.put("123456789012", "us-east-1", "ep-config", {"Raw": described()})
    ep = replace(endpoint("ep"), config_description=described())
    errors: list[AuditError] = []
    with Stubber(client) as stubber:
        stubber.add_response("list_tags", {"Tags": [{"Key": "team", "Value": "search"}]}, {"ResourceArn": ARN})
        tagged = with_config_tags(client, ep, configs, errors.append, threading.Event())
        stubber.assert_no_pending_responses()
        again = with_config_tags(client, tagged, configs, errors.append, threading.Event())  # no call: read
    assert tagged.config_description is not None and tagged.config_description["Tags"] == [
        {"Key": "team", "Value": "search"}]
    assert again is tagged and errors == []
    kept = configs.get("123456789012", "us-east-1", "ep-config")
    assert kept is not None and kept["Tags"] == [{"Key": "team", "Value": "search"}]


def test_a_refused_list_tags_is_one_error_and_the_region_is_not_asked_again() -> None:
    client = boto3.client("sagemaker", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    refused = threading.Event()
    errors: list[AuditError] = []
    one = replace(endpoint("one"), config_description=described())
    two = replace(endpoint("two"), config_description=described())
    with Stubber(client) as stubber:
        stubber.add_client_error("list_tags", "AccessDeniedException", "not authorized", 400)
        assert with_config_tags(client, one, MemoryConfigCache(), errors.append, refused) is one
        assert with_config_tags(client, two, MemoryConfigCache(), errors.append, refused) is two  # not asked
        stubber.assert_no_pending_responses()
    (error,) = errors
    assert error.stage == "discover" and "ListTags" in error.message and "\n" not in error.message
