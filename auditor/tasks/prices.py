"""`audit prices update` and `audit prices import`: fill the price cache from the Price List API or
from an AWS offer file, and say what was stored."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import botocore.exceptions

from auditor.catalog import load_catalog
from auditor.collect.session import AwsClients, client_config, describe_client_error
from auditor.config import AuditConfig
from auditor.errors import AwsAccessError
from auditor.pipeline.prices import cache_path, read_cache_or_empty
from auditor.prices.offer_file import read_offer_file
from auditor.prices.table import PriceTable, write_cache


@dataclass(frozen=True)
class PricesStored:
    path: Path
    counts: dict[str, int]  # region -> hosting prices stored
    new_types: tuple[str, ...]  # instance types the bundled snapshot does not know
    # of those, the ones whose GPU count or GPU memory the prices do not state: priced, not judged
    unstated_gpus: tuple[str, ...] = ()

    def lines(self, source: str) -> list[str]:
        out = [f"{region}: {count} hosting prices" for region, count in sorted(self.counts.items())]
        auditable = [t for t in self.new_types if t not in self.unstated_gpus]
        if auditable:
            out.append(f"not in the bundled catalog, now auditable: {', '.join(auditable)}")
        if self.unstated_gpus:
            out.append("not in the bundled catalog, priced but not judged (the price list does not state "
                       f"their GPU count or GPU memory): {', '.join(self.unstated_gpus)}")
        out.append(f"prices from {source} written to {self.path}")
        return out


def _stored(path: Path, fresh: PriceTable) -> PricesStored:
    known = set(load_catalog().shapes)
    new_types = tuple(sorted(t for t in fresh.instance_types if t not in known and t in fresh.hardware))
    return PricesStored(
        path=path,
        counts={region: len(r.prices.get("hosting", {})) for region, r in fresh.regions.items()},
        new_types=new_types,
        unstated_gpus=tuple(t for t in new_types
                            if fresh.hardware[t].gpu_count is None or fresh.hardware[t].gpu_memory_gib is None),
    )


def pricing_client(config: AuditConfig) -> Any:
    """The Price List API's client in pricing.api_region (a boto3 client, made here, not at import)."""
    aws = config.aws
    clients = AwsClients(profile=aws.profile, config=client_config(
        aws.connect_timeout_seconds, aws.read_timeout_seconds, aws.max_attempts))
    clients.check_credentials()
    return clients.client("pricing", config.pricing.api_region)


def update_prices(config: AuditConfig, regions: tuple[str, ...], today: date) -> PricesStored:
    """Read `regions` from pricing:GetProducts and merge them into the cache (one-line errors)."""
    from auditor.collect.pricing import fetch_price_table

    api_region = config.pricing.api_region
    client = pricing_client(config)
    try:
        fresh = fetch_price_table(client, regions, today)
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
        raise AwsAccessError(describe_client_error(exc, "pricing", "GetProducts", api_region)) from None
    missing = [r for r in regions if r not in fresh.regions]
    if missing:
        raise AwsAccessError(f"the Price List API has no SageMaker instance prices for {', '.join(missing)}: "
                             "cache not changed")
    return _store(config, fresh)


def import_prices(config: AuditConfig, file: Path, today: date) -> PricesStored:
    """Read an offer file (JSON or CSV, whole or one region) and merge its regions into the cache."""
    fresh = read_offer_file(file, today)
    return _store(config, fresh)


def _store(config: AuditConfig, fresh: PriceTable) -> PricesStored:
    path = cache_path(config)
    write_cache(path, read_cache_or_empty(path).merged(fresh))
    return _stored(path, fresh)
