"""Fresh evidence before a model is deleted: an endpoint configuration made since the audit's
window ended that names it refuses the plan (ListEndpointConfigs CreationTimeAfter,
DescribeEndpointConfig)."""

from __future__ import annotations

from auditor.collect.session import describe_client_error
from auditor.text import one_line
from auditor.write.evidence import EvidenceCheck, Since
from auditor.write.plan import ApplyRefused
from auditor.write.target import ERRORS


def _named_since(since: Since) -> str | None:
    model, region = since.plan.resource.name, since.plan.resource.region
    api = since.clients.client("sagemaker", region)
    operation = "ListEndpointConfigs"
    try:
        names = [c["EndpointConfigName"] for page in api.get_paginator("list_endpoint_configs").paginate(
            CreationTimeAfter=since.start) for c in page.get("EndpointConfigs", [])]
        operation = "DescribeEndpointConfig"
        for name in names:
            variants = api.describe_endpoint_config(EndpointConfigName=name).get("ProductionVariants", [])
            if any(v.get("ModelName") == model for v in variants):
                return f"{since.who} is named by endpoint configuration {one_line(str(name))}, made {since.when}"
    except ERRORS as exc:
        raise ApplyRefused(f"{since.who}: {describe_client_error(exc, 'sagemaker', operation, region)}") from None
    return None


EVIDENCE = {"model": EvidenceCheck(frozenset({"DeleteModel"}), _named_since,
                                   frozenset({("sagemaker", "ListEndpointConfigs"),
                                              ("sagemaker", "DescribeEndpointConfig")}))}
