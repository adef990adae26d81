"""The endpoints kind's rules, one module each defining `RULE`: `RULES` is every module's, found
here (a new rule is a new module); the kind lists them as its `rules`, and its engine
(auditor/kinds/endpoints/judge.py) runs them."""

from auditor.analyse.rules import discover_rules

RULES = discover_rules(__name__)
