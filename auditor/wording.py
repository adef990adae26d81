"""The advice in words, as tables, subject lines and plans show it."""

from __future__ import annotations

from auditor.models import Recommendation


def advice_text(rec: Recommendation) -> str:
    """The advice in a few words, for tables and subject lines."""
    if "advice" in rec.details:  # a kind's own action says itself (e.g. shrink a HyperPod instance group)
        return str(rec.details["advice"])
    if rec.action == "delete":
        return "delete the endpoint"
    if rec.action == "remove-variant":
        return f"remove the variant ({rec.instance_type})"
    if rec.action == "end-shadow-test":
        return f"end the shadow test ({rec.instance_type})"
    if rec.action in ("autoscale", "resize+autoscale"):
        policy = rec.details.get("policy", {})
        return (f"autoscale {policy.get('MinCapacity')}-{policy.get('MaxCapacity')} x {rec.instance_type} "
                f"at {policy.get('TargetValue')} invocations/instance/min")
    if rec.action == "scale-out":
        return f"scale out to {rec.instance_count} x {rec.instance_type}"
    if rec.action == "resize-memory":
        return f"serverless memory {rec.details.get('memory_size_mb')} MB"
    if rec.action == "serverless":
        return f"serverless, {rec.details.get('memory_size_mb')} MB"
    if rec.action == "stop":
        return f"stop the notebook instance ({rec.instance_type}) when not in use"
    if rec.action == "delete-app":
        return f"stop the idle app ({rec.instance_type})"
    if rec.action == "spot":
        return f"managed Spot training, {rec.instance_count} x {rec.instance_type}"
    if rec.details.get("component_advice"):
        return f"{rec.details['component_advice']}; {rec.instance_count} x {rec.instance_type}"
    return f"{rec.instance_count} x {rec.instance_type}"
