"""The workspaces kind's rules, one module each defining `RULE`; the rule registry finds them."""
