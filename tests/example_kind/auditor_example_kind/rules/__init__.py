"""The example kind's rules: one module each, found here (its KIND lists them)."""

from auditor.analyse.rules import discover_rules

RULES = discover_rules(__name__)
