"""Price each finding's advice through its rule's pricing step, and keep the candidates that hold up.

`underutilized` and `serverless-candidate` are candidates: they are kept only where the cheaper
option really is cheaper (a resource under its threshold is not waste when nothing cheaper can
carry the others). Advice that costs more (scale out a growing queue) is kept with a negative
saving: it is a risk to fix, not money to save.
"""

from __future__ import annotations

from auditor.analyse.rules import BY_ID, EndpointAssessment, JobsAssessment
from auditor.analyse.rules.base import EndpointRule, JobRule, VariantRule
from auditor.analyse.rules.overprovisioned_count import RULE as OVERPROVISIONED_COUNT
from auditor.analyse.rules.underutilized import RULE as UNDERUTILIZED
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.models import Finding
from auditor.recommend.pricing import variant_of


def attach_recommendations(
    findings: list[Finding],
    assessments: dict[str, EndpointAssessment],
    catalog: Catalog,
    config: AuditConfig,
    jobs: JobsAssessment | None = None,
) -> list[Finding]:
    """Each finding through its rule's pricing step; a step that returns None drops a candidate
    whose advice does not hold up (nothing cheaper, a saving below the minimum)."""
    advised: list[Finding] = []
    for finding in findings:
        rule = BY_ID.get(finding.rule)
        result: Finding | None = finding
        if isinstance(rule, EndpointRule | VariantRule) and rule.price is not None:
            assessment = assessments.get(finding.endpoint)
            if assessment is not None:
                result = rule.price(finding, assessment, catalog, assessment.config or config)
        elif isinstance(rule, JobRule) and rule.price is not None and jobs is not None:
            result = rule.price(finding, jobs, catalog, config)
        if result is not None:
            advised.append(result)
    return _drop_repeated_count_advice(advised, assessments)


def _drop_repeated_count_advice(findings: list[Finding], assessments: dict[str, EndpointAssessment]) -> list[Finding]:
    """Where the cheapest shape is the current type with fewer instances, `overprovisioned-count`
    already says so: the `underutilized` finding would repeat it."""
    counted = {(f.endpoint, f.variant) for f in findings if f.rule == OVERPROVISIONED_COUNT.id and f.recommendation}

    def repeats(f: Finding) -> bool:
        if f.rule != UNDERUTILIZED.id or f.recommendation is None or (f.endpoint, f.variant) not in counted:
            return False
        va = variant_of(f, assessments[f.endpoint])
        return va is not None and f.recommendation.instance_type == va.variant.instance_type

    return [f for f in findings if not repeats(f)]
