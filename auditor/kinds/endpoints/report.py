"""The endpoints kind's part of the reports' "now" column: each variant's shape, and an endpoint's
variants joined."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.kinds.base import ShapeKey, shape_key

RESOURCE_TYPE = "endpoint"


def shapes(section: list[dict[str, Any]]) -> Mapping[ShapeKey, str]:
    """'2 x ml.c5.xlarge' per (endpoint, variant), and all variants joined per (endpoint, None)."""
    found: dict[ShapeKey, str] = {}
    for e in section:
        for v in e["variants"]:
            if v["instance_type"]:
                # A shadow variant is billed like the others but answers nobody: say which it is.
                found[shape_key(RESOURCE_TYPE, e, e["name"], v["name"])] = (
                    f"{v['instance_count']} x {v['instance_type']}" + (" (shadow)" if v.get("shadow") else ""))
            elif v["serverless_memory_mb"]:
                found[shape_key(RESOURCE_TYPE, e, e["name"], v["name"])] = f"serverless {v['serverless_memory_mb']} MB"
        found[shape_key(RESOURCE_TYPE, e, e["name"])] = ", ".join(
            found[k] for v in e["variants"] if (k := shape_key(RESOURCE_TYPE, e, e["name"], v["name"])) in found)
    return found
