"""The accounts a run covers, each with clients acting in it, and the regions to audit there.

Without [aws] accounts or organization, the run covers the caller's own account, as before. With
them, each account is entered by AssumeRole; an account whose role cannot be assumed, or whose
regions cannot be listed, is one error and the run goes on with the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import botocore.exceptions

from auditor.collect.session import AwsClients, describe_client_error
from auditor.config import ALL_REGIONS, AuditConfig
from auditor.discover.accounts import Account, enabled_regions, organization_accounts
from auditor.errors import AwsAccessError

# Global services (STS, Organizations) and DescribeRegions are asked here unless a region is named.
HOME_REGION = "us-east-1"


@dataclass(frozen=True)
class AccountAccess:
    account: Account
    clients: AwsClients | None  # None: not entered (see error)
    regions: tuple[str, ...] = ()
    skipped_regions: tuple[str, ...] = ()  # offered by SageMaker but not enabled for the account
    error: str | None = None
    role_arn: str | None = None


@dataclass(frozen=True)
class Estate:
    """What the run set out to cover."""

    accounts: tuple[AccountAccess, ...] = field(default=())

    @property
    def entered(self) -> tuple[AccountAccess, ...]:
        return tuple(a for a in self.accounts if a.clients is not None)


def open_estate(config: AuditConfig, clients: AwsClients) -> Estate:
    """The accounts and regions to audit. Raises AwsAccessError only when nothing can be audited
    at all (no credentials, an unknown region, an organisation that cannot be listed)."""
    aws = config.aws
    home = aws.regions[0] if aws.regions[0] != ALL_REGIONS else HOME_REGION
    if ALL_REGIONS not in aws.regions:
        for region in aws.regions:
            clients.check_region(region)
    if not (aws.accounts or aws.organization):
        # The caller's own account: its id comes with every resource's ARN, no call needed.
        return Estate((_with_regions(AccountAccess(Account("", ""), clients), config, home),))
    caller = clients.caller_account(home)
    if aws.organization:
        wanted = organization_accounts(clients.client("organizations", HOME_REGION))
        listed = {a.id for a in wanted}
        wanted += [Account(i, i) for i in aws.accounts if i not in listed]
    else:
        wanted = [Account(i, i) for i in aws.accounts]
    excluded = set(aws.exclude_accounts)
    accesses = []
    for account in wanted:
        if account.id in excluded:
            continue
        if account.id == caller:  # the hub's own account: its own credentials, no role to assume
            accesses.append(_with_regions(AccountAccess(account, clients), config, home))
            continue
        role_arn = config.role_arn(account.id)
        try:
            assumed = clients.assume(role_arn, aws.external_id, home)
        except AwsAccessError as exc:
            accesses.append(AccountAccess(account, None, error=str(exc), role_arn=role_arn))
            continue
        accesses.append(_with_regions(AccountAccess(account, assumed, role_arn=role_arn), config, home))
    return Estate(tuple(accesses))


def _with_regions(access: AccountAccess, config: AuditConfig, home: str) -> AccountAccess:
    if ALL_REGIONS not in config.aws.regions:
        return AccountAccess(access.account, access.clients, config.aws.regions, role_arn=access.role_arn)
    assert access.clients is not None
    try:
        regions, skipped = enabled_regions(access.clients.client("ec2", home), access.clients.sagemaker_regions())
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as exc:
        return AccountAccess(access.account, None, role_arn=access.role_arn,
                             error=f"{describe_client_error(exc, 'ec2', 'DescribeRegions', home)} "
                                   "(aws.regions = \"all\" lists the account's enabled regions)")
    return AccountAccess(access.account, access.clients, regions, skipped, role_arn=access.role_arn)
