"""Helpers the rules' pricing steps share: attach a recommendation to a finding, grade a saving."""

from __future__ import annotations

from dataclasses import replace

from auditor.models import Finding, Recommendation, Severity


def severity_for_saving(monthly_savings: float) -> Severity:
    if monthly_savings >= 1000:
        return Severity.HIGH
    if monthly_savings >= 100:
        return Severity.MEDIUM
    return Severity.LOW


def priced(finding: Finding, recommendation: Recommendation, message: str | None = None,
           severity: Severity | None = None, **evidence: object) -> Finding:
    """The finding with its recommendation; severity from the saving unless given."""
    return replace(
        finding,
        message=finding.message if message is None else message,
        recommendation=recommendation,
        severity=severity or severity_for_saving(max(recommendation.monthly_savings_usd, 0.0)),
        evidence={**finding.evidence, **evidence},
    )
