"""The tags of the endpoint config a plan's new config copies, read when `audit plans show` prints the
change (the audit itself does not read a config's tags: one ListTags a config would be most of a cold
run's calls). Read with the audit's own read-only credentials ([aws] profile, and the member role of
the plan's account where the run enters accounts by AssumeRole), in the plan's region.

A failure is never read as "no tags": it comes back as the problem, in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import botocore.exceptions

from auditor.collect.session import AwsClients, client_config, describe_client_error
from auditor.config import OPT_IN_TAG, AuditConfig
from auditor.errors import AuditorError
from auditor.models import CopiedTags
from auditor.recommend.change import settable_tags


def read_copied_tags(config: AuditConfig, account_id: str, region: str, config_name: str,
                     now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> CopiedTags:
    """DescribeEndpointConfig (for its ARN), then ListTags; the tags a copy may carry: no `aws:`
    tag (AWS's own) and no `auditor:apply` (the opt-in is set by people on each resource)."""
    read_at = now()
    try:
        clients = _audit_clients(config, account_id, region)
        sagemaker = clients.client("sagemaker", region)
    except AuditorError as exc:
        return CopiedTags(config_name, read_at, problem=str(exc))
    operation = "DescribeEndpointConfig"
    try:
        arn = str(sagemaker.describe_endpoint_config(EndpointConfigName=config_name)["EndpointConfigArn"])
        operation = "ListTags"
        pages = sagemaker.get_paginator("list_tags").paginate(ResourceArn=arn)
        tags = {str(t["Key"]): str(t["Value"]) for page in pages for t in page.get("Tags", [])}
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        return CopiedTags(config_name, read_at, problem=describe_client_error(exc, "sagemaker", operation, region))
    kept = [t for t in settable_tags(tags) if t["Key"] != OPT_IN_TAG[0]]
    return CopiedTags(config_name, read_at, tuple((t["Key"], t["Value"]) for t in kept))


def _audit_clients(config: AuditConfig, account_id: str, region: str) -> AwsClients:
    """The audit's clients acting in `account_id`: its own credentials, or, where the run enters
    accounts ([aws] accounts or organization) and the account is not the caller's, its member role."""
    aws = config.aws
    clients = AwsClients(profile=aws.profile, config=client_config(
        aws.connect_timeout_seconds, aws.read_timeout_seconds, aws.max_attempts))
    if not (aws.accounts or aws.organization) or not account_id or clients.caller_account(region) == account_id:
        return clients
    return clients.assume(config.role_arn(account_id), aws.external_id, region)
