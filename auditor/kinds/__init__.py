"""Resource kinds: each module here (endpoints, jobs, workspaces, ...) declares one kind behind the
interface of `auditor.kinds.base`; `auditor.kinds.registry` finds them. This package's own import
loads nothing, so a rule can read a kind's assessment without loading every kind."""
