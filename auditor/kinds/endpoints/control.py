"""What the owners of an endpoint asked for: skip it, skip some rules, or move a threshold.

- Config: `[skip] endpoints` name patterns skip whole endpoints; `[rules.<id>] skip_endpoints`
  patterns skip one rule; `[rules.<id>] enabled = false` turns a rule off everywhere.
- Tags: `auditor:ignore` = "true" (or empty, "all") skips the endpoint, or a comma-separated list
  of rule ids skips those rules; `auditor:<rule-id>:threshold` = a number overrides the rule's
  threshold for this endpoint (each rule's `threshold_field` says what it sets).
A tag that cannot be read, or whose value is out of the setting's bounds (the same bounds as the
config file's), is reported as an error and ignored: the configured value applies. The rules a
tag may name are the registry's (every kind's), handed in by the audit (`RegionScope.judge.rules`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

from auditor import schema
from auditor.analyse.rules.base import Rule, RuleSettings, settings_of
from auditor.config import AuditConfig, ThresholdsConfig
from auditor.kinds.endpoints.models import Endpoint
from auditor.models import AuditError

IGNORE_TAG = "auditor:ignore"
ALL_VALUES = {"", "true", "yes", "all", "*"}


def _matching(name: str, patterns: tuple[str, ...]) -> str | None:
    return next((p for p in patterns if fnmatchcase(name, p)), None)


def apply_skips(endpoint: Endpoint, config: AuditConfig,
                rules: Iterable[Rule[Any]]) -> tuple[Endpoint, list[AuditError]]:
    """The endpoint with skipped_reason / skipped_rules set from the config and its tags (naming
    any of `rules`)."""
    errors: list[AuditError] = []
    pattern = _matching(endpoint.name, config.skip.endpoints)
    if pattern:
        return replace(endpoint, skipped_reason=f"name matches {pattern!r} (skip.endpoints)"), errors
    tag = endpoint.tags.get(IGNORE_TAG)
    if tag is not None and tag.strip().lower() in ALL_VALUES:
        return replace(endpoint, skipped_reason=f"tag {IGNORE_TAG}={tag!r}"), errors

    configurable = [r for r in rules if r.configurable]
    rule_ids = [r.id for r in configurable]
    skipped: dict[str, str] = {}
    if tag is not None:
        for rule_id in (r.strip() for r in tag.split(",") if r.strip()):
            if rule_id in rule_ids:
                skipped[rule_id] = f"tag {IGNORE_TAG}"
            else:
                errors.append(AuditError(endpoint.region, endpoint.name, "analyse",
                                         f"tag {IGNORE_TAG} names unknown rule {rule_id!r}: not skipped"))
    for rule in configurable:
        rule_pattern = _matching(endpoint.name, settings_of(rule, config).skip_endpoints)
        if rule_pattern and rule.id not in skipped:
            skipped[rule.id] = f"name matches {rule_pattern!r} (rules.{rule.id}.skip_endpoints)"
    if not skipped:
        return endpoint, errors
    reason = "; ".join(f"{rule_id}: {why}" for rule_id, why in sorted(skipped.items()))
    return replace(endpoint, skipped_reason=reason, skipped_rules=frozenset(skipped)), errors


def config_for_endpoint(endpoint: Endpoint, config: AuditConfig,
                        rules: Iterable[Rule[Any]]) -> tuple[AuditConfig, list[AuditError]]:
    """The config with the endpoint's `auditor:<rule>:threshold` tags applied (naming any of `rules`)."""
    errors: list[AuditError] = []
    thresholds = {r.id: r for r in rules if r.configurable and r.threshold_field}
    for key, value in sorted(endpoint.tags.items()):
        parts = key.split(":")
        if len(parts) != 3 or parts[0] != "auditor" or parts[2] != "threshold":
            continue
        rule = thresholds.get(parts[1])
        if rule is None:
            errors.append(AuditError(endpoint.region, endpoint.name, "analyse",
                                     f"tag {key} names unknown rule {schema.quote(parts[1])}: ignored"))
            continue
        config, wrong = _override(rule, value, config)
        if wrong:
            errors.append(AuditError(endpoint.region, endpoint.name, "analyse",
                                     f"tag {key}={schema.quote(value)} {wrong}: the configured threshold applies"))
    return config, errors


def _override(rule: Rule[RuleSettings], value: str, config: AuditConfig) -> tuple[AuditConfig, str | None]:
    """The config with the rule's threshold set to the tag's value, or why the value is refused."""
    try:
        number = float(value)
    except ValueError:
        return config, "is not a number"
    if not math.isfinite(number):
        return config, "is not a finite number"
    if rule.threshold_field == "thresholds":
        # The same bounds as [thresholds] in the config file; the sizing statistic stays.
        wrong = schema.problem(schema.key_of(ThresholdsConfig, "cpu"), number)
        if wrong:
            return config, f"is out of range: thresholds {_bounds(wrong)}"
        thresholds = ThresholdsConfig(cpu=number, memory=number, gpu=number, gpu_memory=number,
                                      sizing_statistic=config.thresholds.sizing_statistic)
        return replace(config, thresholds=thresholds), None
    name = rule.threshold_field or ""
    typed: dict[str, Any] = {name: number}
    if schema.key_of(rule.settings, name).kind is int:
        if not number.is_integer():
            return config, f"is not a whole number (rules.{rule.id}.{name})"
        typed[name] = int(number)
    wrong = rule.settings.problem(name, typed[name])
    if wrong:
        return config, f"is out of range: rules.{rule.id}.{name} {_bounds(wrong)}"
    settings = replace(settings_of(rule, config), **typed)
    return replace(config, rules=config.rules.replaced(rule.id, settings)), None


def _bounds(problem: str) -> str:
    """"must be from 0 to 100, got -5" without the value (the tag's value is quoted already)."""
    return problem.rsplit(", got ", 1)[0]
