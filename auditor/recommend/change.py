"""What every kind's change shares (docs/plans.md): a plan's stable id, and the tags and names of
what `audit apply` makes. Pure: no AWS.

- What apply creates is tagged `auditor:plan` = the plan id; a copy never carries the opt-in tag
  `auditor:apply` (only people set it).
- The names apply gives what it makes: `<resource>-<plan id>[-suffix]` within SageMaker's rules.
Each kind builds its own change from these (the endpoints kind: auditor/kinds/endpoints/change.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from auditor.config import OPT_IN_TAG
from auditor.models import Plan

# The tag on what apply creates (the config, the alarms): the plan's id. IAM conditions creates on
# it (aws:RequestTag), and leftovers are found by it.
PLAN_TAG = "auditor:plan"
_NAME_RE = re.compile(r"[^A-Za-z0-9-]")


def plan_id(plan: Plan) -> str:
    """Stable: a digest of the resource and what the plan proposes (the same in every run)."""
    option = plan.proposed
    key = [plan.resource.account_id, plan.resource.region, plan.resource.type, plan.resource.name, plan.variant or "",
           option.action, option.instance_type or "", option.instance_count, option.autoscaling or {},
           {k: option.details[k] for k in ("memory_size_mb", "max_concurrency") if k in option.details}]
    if option.details.get("idle_nodes"):  # a HyperPod shrink: other nodes idle are another change
        key.append(sorted(option.details["idle_nodes"]))
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]


def settable_tags(tags: Mapping[str, str], keep_opt_in: bool = False) -> list[dict[str, str]]:
    """Tags as a request's `Tags`, without AWS's own `aws:` ones (a request cannot set them) and,
    unless `keep_opt_in` (the same endpoint made again), without the opt-in tag `auditor:apply`:
    only people set it, so nothing the auditor makes from a copy is opted in."""
    return [{"Key": k, "Value": v} for k, v in sorted(tags.items())
            if not k.startswith("aws:") and (keep_opt_in or k != OPT_IN_TAG[0])]


def with_source_tags(planned: Sequence[Mapping[str, Any]], source: Mapping[str, str]) -> list[dict[str, str]]:
    """A copied config's Tags when its source config's tags are read at apply time: those (as
    `settable_tags` keeps them: read now, they supersede the audit's), with the planned
    `auditor:plan` over any the source carries (a copy of an earlier plan's copy)."""
    merged = {t["Key"]: t["Value"] for t in settable_tags(source)}
    merged.update({str(t["Key"]): str(t["Value"]) for t in planned if t.get("Key") == PLAN_TAG})
    return [{"Key": k, "Value": v} for k, v in sorted(merged.items())]


def tagged(tags: Sequence[Mapping[str, Any]], plan: str) -> list[dict[str, str]]:
    """`tags` (a request's Tags) without the opt-in tag, with `auditor:plan` = `plan` last."""
    kept = [{"Key": str(t["Key"]), "Value": str(t["Value"])} for t in tags
            if t.get("Key") not in (OPT_IN_TAG[0], PLAN_TAG) and not str(t.get("Key", "")).startswith("aws:")]
    return [*kept, {"Key": PLAN_TAG, "Value": plan}]


def resource_name(base: str, plan: str, suffix: str = "", limit: int = 63) -> str:
    """`<base>-<plan id>[-suffix]` within SageMaker's name rules (letters, digits, hyphens; 63)."""
    tail = f"-{plan}{f'-{suffix}' if suffix else ''}"
    head = re.sub(r"-+", "-", _NAME_RE.sub("-", base))[: limit - len(tail)].strip("-") or "plan"
    return head + tail
