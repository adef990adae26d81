"""The write core: what every kind's apply side is made of, below the kinds.

- plan: the plan as apply reads it (PlanToApply) and how an apply ends early (ApplyRefused, ApplyFailed);
- target: the Target strategy a kind implements per resource type, Observed, Waiting, the poll;
- binding: CallBinding, how a type's calls are held to the plan's own resource;
- evidence: EvidenceCheck and Since, the fresh evidence read before a destructive plan;
- verify: Evidence and Verifier, what the next run checks after an apply.

Each kind's parts live in auditor/kinds/<kind>/ (target.py, binding.py, evidence.py, verify.py) and
are listed on its ResourceKind; auditor.act (the engine) finds them through auditor.kinds.registry.
Nothing here imports a kind, auditor.act, the report or the tasks.
"""
