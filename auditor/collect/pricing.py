"""The Price List API (pricing:GetProducts) for SageMaker instance-hours, region by region.

The `pricing` client exists only in us-east-1, eu-central-1 and ap-south-1 (`pricing.api_region`);
it prices every region. Each PriceList entry is a JSON string of product + terms, parsed by
`auditor.prices.parse`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import date, datetime
from typing import Any

from auditor.prices.parse import PriceRecord, parse_price_item
from auditor.prices.table import PriceTable, build_table

SERVICE_CODE = "AmazonSageMaker"
PAGE_SIZE = 100  # GetProducts' maximum


def _items(price_list: Iterable[Any]) -> Iterator[dict[str, Any]]:
    for entry in price_list:
        yield json.loads(entry) if isinstance(entry, str) else entry


def region_records(client: Any, region: str, on_page: Callable[[], None] | None = None) -> Iterator[PriceRecord]:
    """Every ml.* instance-hour priced in `region` (all pages, NextToken followed)."""
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {
            "ServiceCode": SERVICE_CODE,
            "Filters": [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}],
            "FormatVersion": "aws_v1",
            "MaxResults": PAGE_SIZE,
        }
        if token:
            kwargs["NextToken"] = token
        page = client.get_products(**kwargs)
        if on_page is not None:
            on_page()
        for item in _items(page.get("PriceList", [])):
            record = parse_price_item(item)
            if record is not None and record.region == region:
                yield record
        token = page.get("NextToken")
        if not token:
            return


def fetch_price_table(client: Any, regions: Iterable[str], today: date) -> PriceTable:
    """The prices of `regions` as read today; botocore's errors propagate (the caller names them)."""
    records = [record for region in regions for record in region_records(client, region)]
    table = build_table(records, today.isoformat(), "price-list-api")
    # A region with no ml.* prices at all is left out: its old cache entry (if any) stays.
    return table


def offer_file_urls(client: Any, regions: Iterable[str], when: datetime, file_format: str = "json") -> dict[str, str]:
    """Where AWS's offer file for SageMaker in each region can be downloaded (pricing:ListPriceLists,
    then pricing:GetPriceListFileUrl): for whoever fetches it on a machine with internet access."""
    wanted = set(regions)
    arns: dict[str, str] = {}
    token: str | None = None
    while True:
        request: dict[str, Any] = {"ServiceCode": "AmazonSageMaker", "EffectiveDate": when, "CurrencyCode": "USD"}
        if token:
            request["NextToken"] = token
        page = client.list_price_lists(**request)
        for item in page.get("PriceLists", []):
            if item.get("RegionCode") in wanted:
                arns[item["RegionCode"]] = item["PriceListArn"]
        token = page.get("NextToken")
        if not token:
            break
    return {region: client.get_price_list_file_url(PriceListArn=arn, FileFormat=file_format)["Url"]
            for region, arn in sorted(arns.items())}
