"""The endpoint rules, and the order they are applied in.

Order matters and is explicit: an endpoint that cannot be judged, or is too young or too short
of data, gets no waste verdict; an idle endpoint is not also reported as under-used. Each rule
reads only the assessment models; its metadata is data beside it.
"""

from __future__ import annotations

from auditor.analyse.control import rule_applies
from auditor.analyse.rules.base import EndpointAssessment, RuleMeta, VariantAssessment
from auditor.analyse.rules.capacity import (
    IDLE,
    INSUFFICIENT_DATA,
    NOT_IN_SERVICE,
    OVERPROVISIONED_COUNT,
    UNDERUTILIZED,
    check_endpoint_age,
    check_idle,
    check_not_in_service,
    check_overprovisioned_count,
    check_underutilized,
    check_variant_data,
    is_idle,
)
from auditor.analyse.rules.scaling import NO_AUTOSCALING, check_no_autoscaling
from auditor.analyse.rules.serverless import (
    SERVERLESS_CANDIDATE,
    SERVERLESS_OVERSIZED,
    check_serverless_candidate,
    check_serverless_oversized,
)
from auditor.analyse.rules.traffic import RISING_LATENCY, RISING_QUEUE_LATENCY, check_rising_latency, check_rising_queue
from auditor.config import AuditConfig
from auditor.models import EndpointKind, Finding

RULES: tuple[RuleMeta, ...] = (
    NOT_IN_SERVICE, INSUFFICIENT_DATA, IDLE, UNDERUTILIZED, OVERPROVISIONED_COUNT, NO_AUTOSCALING,
    RISING_LATENCY, RISING_QUEUE_LATENCY, SERVERLESS_OVERSIZED, SERVERLESS_CANDIDATE,
)

__all__ = ["RULES", "EndpointAssessment", "RuleMeta", "VariantAssessment", "evaluate_endpoint"]


def evaluate_endpoint(assessment: EndpointAssessment, config: AuditConfig) -> list[Finding]:
    config = assessment.config or config
    endpoint = assessment.endpoint
    if endpoint.not_judged_reason:
        # A deleted config is reported in errors by discovery; a status is a finding.
        return [check_not_in_service(endpoint)] if endpoint.status != "InService" else []
    if endpoint.skipped_reason and not endpoint.skipped_rules:
        return []

    def applies(rule: RuleMeta) -> bool:
        return rule_applies(rule.id, endpoint, config)

    too_young = check_endpoint_age(assessment, config)
    if too_young is not None:
        return [too_young]
    findings: list[Finding] = []
    judged: list[VariantAssessment] = []
    for va in assessment.variants:
        short = check_variant_data(endpoint, va, config)
        if short is not None:
            # Serverless variants with no traffic publish nothing and cost nothing: no note needed.
            if endpoint.kind is not EndpointKind.SERVERLESS or (va.utilization and va.utilization.invocations):
                findings.append(short)
        else:
            judged.append(va)
    if not judged:
        return findings

    if endpoint.kind is EndpointKind.SERVERLESS:
        # Billed per request: nothing to pay while idle, no instance to resize.
        if applies(SERVERLESS_OVERSIZED):
            findings.extend(f for va in judged if (f := check_serverless_oversized(assessment, va, config)))
        return findings

    if applies(IDLE) and len(judged) == len(assessment.variants) and is_idle(judged, config):
        findings.append(check_idle(assessment, config))
        return findings

    real_time = endpoint.kind is EndpointKind.REAL_TIME
    for va in judged:
        checks = [
            (UNDERUTILIZED, lambda: check_underutilized(endpoint, va, config)),
            (OVERPROVISIONED_COUNT, lambda: check_overprovisioned_count(endpoint, va, config)),
        ]
        if real_time:
            checks += [
                (NO_AUTOSCALING, lambda: check_no_autoscaling(assessment, va, config)),
                (RISING_LATENCY, lambda: check_rising_latency(assessment, va, config)),
                (SERVERLESS_CANDIDATE, lambda: check_serverless_candidate(assessment, va, config)),
            ]
        for rule, check in checks:
            if applies(rule) and (finding := check()) is not None:
                findings.append(finding)
    if endpoint.kind is EndpointKind.ASYNC and applies(RISING_QUEUE_LATENCY):
        if (finding := check_rising_queue(assessment, config)) is not None:
            findings.append(finding)
    return findings
