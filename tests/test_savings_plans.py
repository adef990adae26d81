"""AWS's SageMaker Savings Plans recommendation in the report. moto has no
GetSavingsPlansPurchaseRecommendation: botocore's Stubber answers it, on the very client the audit
uses (the rest of the audit talks to the moto server)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from botocore.stub import Stubber

from auditor.collect.session import AwsClients
from auditor.config_file import parse_config
from auditor.pipeline import run_audit
from auditor.report.document import report_to_dict
from auditor.report.render import OutputFormat, render
from auditor_emulator.fleet import EndpointSpec, Load, VariantSpec, seed_fleet

SUMMARY = {
    "HourlyCommitmentToPurchase": "2.40", "EstimatedMonthlySavingsAmount": "612.50",
    "EstimatedSavingsPercentage": "26.1", "CurrentOnDemandSpend": "2346.00", "CurrencyCode": "USD",
}
DETAILS = [{"EstimatedOnDemandCost": "469.20", "CurrentAverageHourlyOnDemandSpend": "3.21", "CurrencyCode": "USD"}]


def answer(term: str) -> dict:
    return {"SavingsPlansPurchaseRecommendation": {
        "SavingsPlansType": "SAGEMAKER_SP", "TermInYears": term, "PaymentOption": "NO_UPFRONT",
        "LookbackPeriodInDays": "THIRTY_DAYS",
        "SavingsPlansPurchaseRecommendationSummary": SUMMARY,
        "SavingsPlansPurchaseRecommendationDetails": DETAILS}}


def expected(term: str) -> dict:
    return {"SavingsPlansType": "SAGEMAKER_SP", "TermInYears": term, "PaymentOption": "NO_UPFRONT",
            "LookbackPeriodInDays": "THIRTY_DAYS"}


@pytest.fixture
def audit(aws):
    seed_fleet(aws, [EndpointSpec("steady", (VariantSpec("ml.m5.xlarge", 2, cpu=Load(60, 5)),))],
               now=datetime.now(UTC))

    def run(config_values: dict, stub) -> dict:
        clients = AwsClients()
        ce = clients.client("ce", "us-east-1")
        with Stubber(ce) as stubber:
            stub(stubber)
            outcome = run_audit(parse_config(config_values), clients)
            stubber.assert_no_pending_responses()
        return report_to_dict(outcome.report) | {"_text": render(outcome.report, OutputFormat.TEXT)}
    return run


def test_both_terms_are_reported_as_aws_recommendation(audit) -> None:
    def stub(stubber: Stubber) -> None:
        for term in ("ONE_YEAR", "THREE_YEARS"):
            stubber.add_response("get_savings_plans_purchase_recommendation", answer(term), expected(term))

    report = audit({"pricing": {"savings_plans": True}, "jobs": {"enabled": False}}, stub)
    one, three = report["savings_plans"]
    assert (one["term"], three["term"]) == ("ONE_YEAR", "THREE_YEARS")
    assert one["hourly_commitment_usd"] == 2.40 and one["estimated_monthly_savings_usd"] == 612.50
    assert one["coverage_percent"] == pytest.approx(80.0)  # 469.20 of 2,346 stays on demand
    assert "before the plans" in one["source"]
    assert "SAVINGS PLANS" in report["_text"] and "$2.40/hour" in report["_text"]
    json.dumps(report)


def test_no_permission_is_one_error_line_not_a_failure(audit) -> None:
    def stub(stubber: Stubber) -> None:
        stubber.add_client_error("get_savings_plans_purchase_recommendation", "AccessDeniedException",
                                 "not authorized", 400, expected_params=expected("ONE_YEAR"))

    report = audit({"pricing": {"savings_plans": True}, "jobs": {"enabled": False}}, stub)
    assert report["savings_plans"] == []
    (error,) = [e for e in report["errors"] if "SavingsPlans" in e["message"]]
    assert "access denied: ce:GetSavingsPlansPurchaseRecommendation" in error["message"]
    assert report["endpoints"]  # the audit itself went on


def test_off_by_default(audit) -> None:
    report = audit({"jobs": {"enabled": False}}, lambda stubber: None)
    assert report["savings_plans"] == []
