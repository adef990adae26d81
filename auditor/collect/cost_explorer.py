"""Cost Explorer: what the account really paid for SageMaker, per usage type (ce:GetCostAndUsage).

Cost Explorer's API is served from us-east-1 for every region; usage types carry the region as a
prefix (EUC1-Host:ml.m5.xlarge).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from auditor.prices.effective import UsageCost

SERVICE = "Amazon SageMaker"
CE_REGION = "us-east-1"


def sagemaker_usage(client: Any, start: date, end: date) -> list[UsageCost]:
    """Amortized cost and usage quantity per usage type over [start, end), summed over the months."""
    totals: dict[str, tuple[float, float]] = {}
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {
            "TimePeriod": {"Start": start.isoformat(), "End": end.isoformat()},
            "Granularity": "MONTHLY",
            "Metrics": ["AmortizedCost", "UsageQuantity"],
            "Filter": {"Dimensions": {"Key": "SERVICE", "Values": [SERVICE]}},
            "GroupBy": [{"Type": "DIMENSION", "Key": "USAGE_TYPE"}],
        }
        if token:
            kwargs["NextPageToken"] = token
        page = client.get_cost_and_usage(**kwargs)
        for period in page.get("ResultsByTime", []):
            for group in period.get("Groups", []):
                usage_type = (group.get("Keys") or [""])[0]
                metrics = group.get("Metrics", {})
                cost = float(metrics.get("AmortizedCost", {}).get("Amount", 0) or 0)
                quantity = float(metrics.get("UsageQuantity", {}).get("Amount", 0) or 0)
                old_cost, old_quantity = totals.get(usage_type, (0.0, 0.0))
                totals[usage_type] = (old_cost + cost, old_quantity + quantity)
        token = page.get("NextPageToken")
        if not token:
            break
    return [UsageCost(u, cost, quantity) for u, (cost, quantity) in sorted(totals.items())]
