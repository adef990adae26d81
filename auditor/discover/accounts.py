"""Which accounts and regions to audit: the organisation's ACTIVE accounts, and the regions each
account has enabled where SageMaker is offered."""

from __future__ import annotations

from dataclasses import dataclass

import botocore.exceptions
from botocore.client import BaseClient

from auditor.collect.session import describe_client_error
from auditor.errors import AwsAccessError


@dataclass(frozen=True)
class Account:
    id: str
    name: str


def organization_accounts(organizations: BaseClient) -> list[Account]:
    """The ACTIVE accounts of the organisation (from its management or a delegated administrator
    account), with their names."""
    accounts = []
    try:
        for page in organizations.get_paginator("list_accounts").paginate():
            for item in page.get("Accounts", []):
                # `State` replaces `Status` in newer API versions; either says ACTIVE.
                if (item.get("State") or item.get("Status")) == "ACTIVE":
                    accounts.append(Account(item["Id"], item.get("Name") or item["Id"]))
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        raise AwsAccessError(f"{describe_client_error(exc, 'organizations', 'ListAccounts', 'us-east-1')} "
                             "(aws.organization needs the management or a delegated administrator account)") from None
    return sorted(accounts, key=lambda a: a.id)


def enabled_regions(ec2: BaseClient, offered: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(regions enabled for the account where SageMaker is offered, offered regions not enabled)."""
    regions = ec2.describe_regions(AllRegions=True).get("Regions", [])
    enabled = {r["RegionName"] for r in regions if r.get("OptInStatus") != "not-opted-in"}
    known = {r["RegionName"] for r in regions}
    return tuple(sorted(enabled & offered)), tuple(sorted((known - enabled) & offered))
