"""Cost Explorer: what the account really paid for SageMaker, per usage type (ce:GetCostAndUsage).

Cost Explorer's API is served from us-east-1 for every region; usage types carry the region as a
prefix (EUC1-Host:ml.m5.xlarge).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from auditor.models import SavingsPlanAdvice
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


def savings_plan_recommendation(client: Any, term: str, payment: str, lookback: str) -> SavingsPlanAdvice | None:
    """AWS's own SageMaker Savings Plans recommendation for one term and payment option (None when
    Cost Explorer has none: too little usage)."""
    answer = client.get_savings_plans_purchase_recommendation(
        SavingsPlansType="SAGEMAKER_SP", TermInYears=term, PaymentOption=payment, LookbackPeriodInDays=lookback)
    recommendation = answer.get("SavingsPlansPurchaseRecommendation", {})
    summary = recommendation.get("SavingsPlansPurchaseRecommendationSummary")
    if not summary or not summary.get("HourlyCommitmentToPurchase"):
        return None
    details = recommendation.get("SavingsPlansPurchaseRecommendationDetails", [])
    on_demand = sum(_number(d.get("CurrentAverageHourlyOnDemandSpend")) for d in details) * 730
    remaining = sum(_number(d.get("EstimatedOnDemandCost")) for d in details)
    spend = _number(summary.get("CurrentOnDemandSpend"))
    coverage = None if not spend else max(0.0, min(100.0, 100.0 * (1 - remaining / spend)))
    return SavingsPlanAdvice(
        term=term, payment_option=payment, lookback=lookback,
        hourly_commitment_usd=_number(summary.get("HourlyCommitmentToPurchase")),
        estimated_monthly_savings_usd=_number(summary.get("EstimatedMonthlySavingsAmount")),
        estimated_savings_percent=_number(summary.get("EstimatedSavingsPercentage")),
        current_on_demand_spend_usd=spend or on_demand,
        coverage_percent=None if coverage is None else round(coverage, 1),
    )


def _number(value: Any) -> float:
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0
