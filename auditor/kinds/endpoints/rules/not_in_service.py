"""not-in-service: an endpoint that is not InService (or whose config is gone) is listed, not judged."""

from __future__ import annotations

from auditor.config import AuditConfig
from auditor.kinds.endpoints.assessment import EndpointAssessment
from auditor.kinds.endpoints.rule_types import ENDPOINT_KINDS, Gate, GateRule
from auditor.models import Severity


def check(assessment: EndpointAssessment, config: AuditConfig) -> Gate:
    endpoint = assessment.endpoint
    if not endpoint.not_judged_reason:
        return Gate(judged=assessment.variants)
    if endpoint.status == "InService":
        return Gate()  # a deleted config or an unknown type: discovery reports it in errors
    return Gate(findings=(RULE.finding(endpoint, None, f"Not judged: {endpoint.not_judged_reason}.",
                                       {"status": endpoint.status}),))


RULE = GateRule(
    id="not-in-service",
    title="Endpoint is not InService",
    severity=Severity.INFO,
    remediation="Only InService endpoints are judged; look at the endpoint's status and failure reason.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeEndpoint.html",
    judges=ENDPOINT_KINDS,
    check=check,
)
