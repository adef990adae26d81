"""What the owners of an endpoint asked for: skip it, skip some rules, or move a threshold.

- Config: `[skip] endpoints` name patterns skip whole endpoints; `[rules.<id>] skip_endpoints`
  patterns skip one rule; `[rules.<id>] enabled = false` turns a rule off everywhere.
- Tags: `auditor:ignore` = "true" (or empty, "all") skips the endpoint, or a comma-separated list
  of rule ids skips those rules; `auditor:<rule-id>:threshold` = a number overrides the rule's
  threshold for this endpoint (each rule's `threshold_field` says what it sets).
A tag that cannot be read is reported as an error, never silently ignored.
"""

from __future__ import annotations

from dataclasses import replace
from fnmatch import fnmatchcase

from auditor.analyse.rules import configurable_rules
from auditor.config import AuditConfig, ThresholdsConfig
from auditor.models import AuditError, Endpoint

IGNORE_TAG = "auditor:ignore"
ALL_VALUES = {"", "true", "yes", "all", "*"}


def _matching(name: str, patterns: tuple[str, ...]) -> str | None:
    return next((p for p in patterns if fnmatchcase(name, p)), None)


def apply_skips(endpoint: Endpoint, config: AuditConfig) -> tuple[Endpoint, list[AuditError]]:
    """The endpoint with skipped_reason / skipped_rules set from the config and its tags."""
    errors: list[AuditError] = []
    pattern = _matching(endpoint.name, config.skip.endpoints)
    if pattern:
        return replace(endpoint, skipped_reason=f"name matches {pattern!r} (skip.endpoints)"), errors
    tag = endpoint.tags.get(IGNORE_TAG)
    if tag is not None and tag.strip().lower() in ALL_VALUES:
        return replace(endpoint, skipped_reason=f"tag {IGNORE_TAG}={tag!r}"), errors

    rule_ids = [r.id for r in configurable_rules()]
    skipped: dict[str, str] = {}
    if tag is not None:
        for rule_id in (r.strip() for r in tag.split(",") if r.strip()):
            if rule_id in rule_ids:
                skipped[rule_id] = f"tag {IGNORE_TAG}"
            else:
                errors.append(AuditError(endpoint.region, endpoint.name, "analyse",
                                         f"tag {IGNORE_TAG} names unknown rule {rule_id!r}: not skipped"))
    for rule_id in rule_ids:
        rule_pattern = _matching(endpoint.name, config.rules.of(rule_id).skip_endpoints)
        if rule_pattern and rule_id not in skipped:
            skipped[rule_id] = f"name matches {rule_pattern!r} (rules.{rule_id}.skip_endpoints)"
    if not skipped:
        return endpoint, errors
    reason = "; ".join(f"{rule_id}: {why}" for rule_id, why in sorted(skipped.items()))
    return replace(endpoint, skipped_reason=reason, skipped_rules=frozenset(skipped)), errors


def config_for_endpoint(endpoint: Endpoint, config: AuditConfig) -> tuple[AuditConfig, list[AuditError]]:
    """The config with the endpoint's `auditor:<rule>:threshold` tags applied."""
    errors: list[AuditError] = []
    threshold_fields = {r.id: r.threshold_field for r in configurable_rules() if r.threshold_field}
    for key, value in sorted(endpoint.tags.items()):
        parts = key.split(":")
        if len(parts) != 3 or parts[0] != "auditor" or parts[2] != "threshold":
            continue
        rule_id = parts[1]
        if rule_id not in threshold_fields:
            errors.append(AuditError(endpoint.region, endpoint.name, "analyse",
                                     f"tag {key} names unknown rule {rule_id!r}: ignored"))
            continue
        try:
            number = float(value)
        except ValueError:
            errors.append(AuditError(endpoint.region, endpoint.name, "analyse",
                                     f"tag {key}={value!r} is not a number: the configured threshold applies"))
            continue
        if number < 0 or (threshold_fields[rule_id] == "thresholds" and not 0 < number <= 100):
            errors.append(AuditError(endpoint.region, endpoint.name, "analyse",
                                     f"tag {key}={value!r} is out of range: the configured threshold applies"))
            continue
        field_name = threshold_fields[rule_id]
        if field_name == "thresholds":
            config = replace(config, thresholds=ThresholdsConfig(
                cpu=number, memory=number, gpu=number, gpu_memory=number,
                sizing_statistic=config.thresholds.sizing_statistic,
            ))
        else:
            settings = replace(config.rules.of(rule_id), **{field_name: number})
            config = replace(config, rules=config.rules.replaced(rule_id, settings))
    return config, errors
