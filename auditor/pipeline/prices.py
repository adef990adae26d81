"""The prices an audit uses, in this order: the price cache (refreshed first when it is older than
`pricing.refresh_after_days` and the credentials allow pricing:GetProducts), else the bundled
snapshot, else no price (an error per region, as before). A refresh or cache that fails is one
warning line, never a failed audit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

import botocore.exceptions

from auditor.catalog import Catalog, load_catalog
from auditor.collect.cost_explorer import CE_REGION, sagemaker_usage, savings_plan_recommendation
from auditor.collect.pricing import fetch_price_table
from auditor.collect.session import AwsClients, describe_client_error
from auditor.config import AuditConfig
from auditor.kinds.base import ResourcePrice
from auditor.models import (
    CatalogInfo,
    Finding,
    PriceUse,
    Reconciliation,
    SavingsPlanAdvice,
)
from auditor.prices.effective import apply_effective_rates, billed_hosting_monthly, usage_rates
from auditor.prices.merge import apply_price_table
from auditor.prices.table import PriceCacheError, PriceTable, default_cache_path, oldest_fetch, read_cache, write_cache


@dataclass(frozen=True)
class RunPrices:
    catalog: Catalog
    warnings: tuple[str, ...] = ()  # one line each: a refresh, cache or Cost Explorer that failed
    basis: str = "list"
    # basis effective: per region, hosting billed by Cost Explorer scaled to a month; None: not read
    billed_hosting: dict[str, float] | None = None
    regions: tuple[str, ...] = ()
    too_old: tuple[str, ...] = ()  # prices older than pricing.max_price_age_days, one line per region


def cache_path(config: AuditConfig) -> Path:
    return Path(config.pricing.cache_path).expanduser() if config.pricing.cache_path else default_cache_path()


def refresh_prices(config: AuditConfig, clients: AwsClients, regions: tuple[str, ...], today: date) -> PriceTable:
    """Fetch `regions` from the Price List API and merge them into the cache; errors propagate
    (PriceCacheError for the file, botocore's for the API)."""
    path = cache_path(config)
    fresh = fetch_price_table(clients.client("pricing", config.pricing.api_region), regions, today)
    old = read_cache_or_empty(path)
    table = old.merged(fresh)
    write_cache(path, table)
    return table


def read_cache_or_empty(path: Path) -> PriceTable:
    try:
        return read_cache(path) or PriceTable()
    except PriceCacheError:
        return PriceTable()  # a damaged cache is replaced by a good one


def _age_days(fetched_at: str, today: date) -> int:
    try:
        return (today - date.fromisoformat(fetched_at[:10])).days
    except ValueError:
        return 10**6


def prepare_prices(config: AuditConfig, clients: AwsClients, now: datetime,
                   regions: tuple[str, ...] | None = None) -> RunPrices:
    """`regions`: the regions the run audits (default: [aws] regions)."""
    pricing = config.pricing
    regions = regions if regions is not None else config.aws.regions
    today = now.date()
    warnings: list[str] = []
    path = cache_path(config)
    table: PriceTable | None
    try:
        table = read_cache(path)
    except PriceCacheError as exc:
        warnings.append(f"{exc}: prices from the bundled snapshot")
        table = None
    oldest = oldest_fetch(table, regions) if table is not None else None
    stale = oldest is None or _age_days(oldest, today) >= pricing.refresh_after_days
    wanted = table is not None or pricing.fetch_when_missing
    if pricing.refresh_after_days > 0 and wanted and stale:
        try:
            table = refresh_prices(config, clients, regions, today)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            fallback = "the price cache" if table is not None else "the bundled snapshot"
            warnings.append(f"prices not refreshed: "
                            f"{describe_client_error(exc, 'pricing', 'GetProducts', pricing.api_region)}; "
                            f"prices from {fallback}")
        except PriceCacheError as exc:
            warnings.append(f"prices not refreshed: {exc}")
    catalog = load_catalog(pricing.assume_prices_from)
    if table is not None:
        catalog = apply_price_table(catalog, table)
    billed = None
    if pricing.basis == "effective":
        start = today - timedelta(days=EFFECTIVE_DAYS)
        try:
            usages = sagemaker_usage(clients.client("ce", CE_REGION), start, today)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            warnings.append(f"effective rates not read: "
                            f"{describe_client_error(exc, 'ce', 'GetCostAndUsage', CE_REGION)}; list prices used")
        else:
            rates = usage_rates(usages)
            catalog = apply_effective_rates(catalog, rates, today.isoformat())
            billed = billed_hosting_monthly(rates, EFFECTIVE_DAYS)
    return RunPrices(catalog, tuple(warnings), pricing.basis, billed, regions,
                     tuple(age_warnings(catalog, regions, today, pricing.max_price_age_days)))


EFFECTIVE_DAYS = 30  # Cost Explorer's window for effective rates: the last 30 days


def age_warnings(catalog: Catalog, regions: tuple[str, ...], today: date, max_age_days: int) -> list[str]:
    """One line per audited region whose hosting prices include some older than `max_age_days`."""
    if max_age_days <= 0:
        return []
    lines = []
    for region in regions:
        dates = {origin.as_of for t in catalog.shapes
                 if (origin := catalog.price_origin(t, region)) is not None}
        old = sorted(d for d in dates if _age_days(d, today) > max_age_days)
        if old:
            lines.append(f"prices for {region} include some as of {old[0]}, older than "
                         f"pricing.max_price_age_days ({max_age_days} days): refresh with `audit prices update`")
    return lines


def prices_used(catalog: Catalog, uses: Iterable[ResourcePrice], findings: Iterable[Finding]) -> tuple[PriceUse, ...]:
    """Every price behind the report's figures: what each kind's resources use (their usage,
    instance type and region) and the advised shapes, each for its usage, with the rate it was
    priced at (its own, or the hosting rate where the prices have none)."""
    uses = tuple(uses)
    usage_of = {(u.resource_type, u.region, u.name): u.usage for u in uses}
    wanted: set[tuple[str, str, str]] = {(u.usage, u.instance_type, u.region) for u in uses}
    own_only = {u.usage for u in uses if not u.hosting_fallback}
    for finding in findings:
        rec = finding.recommendation
        if rec is not None and rec.instance_type:
            usage = usage_of.get((finding.resource.type, finding.resource.region, finding.resource.name), "hosting")
            wanted.add((usage, rec.instance_type, finding.resource.region))
    used = []
    for usage, instance_type, region in sorted(wanted, key=lambda k: (k[2], k[1], k[0])):
        found = catalog.rate(instance_type, region, usage)
        origin = catalog.price_origin(instance_type, region, usage)
        if found is None or origin is None:
            continue
        price, basis = found
        if usage in own_only and basis != usage:
            continue  # its kind says "not priced" rather than use the hosting rate
        used.append(PriceUse(region, instance_type, usage, price, origin.source, origin.as_of, origin.kind, basis))
    return tuple(used)


def price_info(prices: RunPrices, findings: Iterable[Finding], uses: Iterable[ResourcePrice]) -> CatalogInfo:
    """The prices behind the report: the catalog's, each kind's price uses and the findings' shapes."""
    uses = tuple(uses)
    catalog = prices.catalog
    return CatalogInfo(
        source=catalog.source, as_of=catalog.as_of, priced_regions=catalog.priced_regions,
        basis=prices.basis, used=prices_used(catalog, uses, findings),
        warnings=prices.warnings + prices.too_old, problems=prices.warnings,
        reconciliation=reconcile(prices, uses),
    )


def reconcile(prices: RunPrices, uses: Iterable[ResourcePrice]) -> tuple[Reconciliation, ...]:
    """Per audited region: the audit's monthly hosting estimate (the kinds' resources billed as
    endpoint hosting) against what Cost Explorer billed."""
    if prices.billed_hosting is None:
        return ()
    estimated: dict[str, float] = {}
    for use in uses:
        if use.hosting_monthly_usd is not None:
            estimated[use.region] = estimated.get(use.region, 0.0) + use.hosting_monthly_usd
    out = []
    for region in prices.regions:
        billed = prices.billed_hosting.get(region, 0.0)
        estimate = round(estimated.get(region, 0.0), 2)
        out.append(Reconciliation(region, estimate, billed,
                                  round(100 * estimate / billed, 1) if billed > 0 else None))
    return tuple(out)


def savings_plan_advice(config: AuditConfig, clients: AwsClients) -> tuple[tuple[SavingsPlanAdvice, ...], list[str]]:
    """AWS's SageMaker Savings Plans recommendations for the configured terms; a refusal or a
    failure is one problem line, never a failed run."""
    pricing = config.pricing
    if not pricing.savings_plans:
        return (), []
    advice: list[SavingsPlanAdvice] = []
    problems: list[str] = []
    client = clients.client("ce", CE_REGION)
    for term in pricing.savings_plan_terms:
        try:
            found = savings_plan_recommendation(client, term, pricing.savings_plan_payment,
                                                pricing.savings_plan_lookback)
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            problems.append(f"{describe_client_error(exc, 'ce', 'GetSavingsPlansPurchaseRecommendation', CE_REGION)}"
                            ": no Savings Plans recommendation (pricing.savings_plans = false turns it off)")
            break
        if found is not None:
            advice.append(found)
    return tuple(advice), problems
