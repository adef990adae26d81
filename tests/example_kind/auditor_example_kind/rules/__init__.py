"""The kind's rules, one module each."""

from auditor_example_kind.rules.model_unused import RULE as MODEL_UNUSED

RULES = (MODEL_UNUSED,)
