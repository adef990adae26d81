"""What an ARN says about its resource."""

from __future__ import annotations


def account_of(arn: str) -> str:
    """The account id in `arn:partition:service:region:account:resource`; "" if `arn` is not one."""
    return arn.split(":")[4] if arn.count(":") >= 5 else ""
