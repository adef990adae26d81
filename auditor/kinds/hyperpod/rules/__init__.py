"""The hyperpod kind's rules, one module each defining `RULE`: `RULES` is every module's, found here
(a new rule is a new module); the kind lists them as its `rules`, and the rule registry
(auditor/kinds/registry.py) joins every kind's."""

from auditor.analyse.rules import discover_rules

RULES = discover_rules(__name__)
