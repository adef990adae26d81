"""The hyperpod kind's rules, one module each defining `RULE`; the rule registry finds them."""
