"""AWS's bulk offer file for SageMaker (JSON or CSV; the whole file or one region's), read as a
stream: memory holds one product or term at a time plus the ml.* prices found, never the file.

JSON: {"offerCode": "AmazonSageMaker", "publicationDate": ..., "products": {sku: {attributes}},
"terms": {"OnDemand": {sku: {term: {priceDimensions}}}, "Reserved": ...}}.
CSV: a few "Name","value" lines (FormatVersion, Disclaimer, Publication Date, Version, OfferCode),
then a header (SKU, OfferTermCode, RateCode, TermType, ..., Unit, PricePerUnit, Currency, then
the product attributes) and one row per price dimension.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import IO, Any

from auditor.prices.parse import PriceRecord, Product, hourly_usd, normalise_key, on_demand_price, product_of
from auditor.prices.table import PriceCacheError, PriceTable, build_table

OFFER_CODE = "AmazonSageMaker"
CHUNK = 1 << 16
MAX_VALUE_BYTES = 16 << 20  # one product or one SKU's terms: far larger means a broken file


class _Malformed(Exception):
    pass


class _JsonStream:
    """Walks a JSON document incrementally: objects are entered key by key; values that are not
    entered are decoded one at a time with json's raw_decode."""

    def __init__(self, handle: IO[str]) -> None:
        self.handle = handle
        self.buf = ""
        self.pos = 0
        self.offset = 0  # characters dropped before buf
        self.eof = False
        self.decoder = json.JSONDecoder()

    def _fill(self) -> bool:
        if self.eof:
            return False
        chunk = self.handle.read(CHUNK)
        if not chunk:
            self.eof = True
            return False
        if self.pos > CHUNK:
            self.offset += self.pos
            self.buf, self.pos = self.buf[self.pos:], 0
        self.buf += chunk
        return True

    def where(self) -> str:
        return f"character {self.offset + self.pos}"

    def peek(self) -> str:
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._fill():
                raise _Malformed(f"the file ends early (at {self.where()})")

    def expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise _Malformed(f"expected {char!r} at {self.where()}, found {found!r}")
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if len(self.buf) - self.pos > MAX_VALUE_BYTES or not self._fill():
                    raise _Malformed(f"invalid JSON at {self.where()}: {exc.msg}") from None
                continue
            if end == len(self.buf) and not self.eof and self._fill():
                continue  # a number may go on in the next chunk
            self.pos = end
            return value

    def members(self) -> Iterator[str]:
        """The keys of the object at the cursor; the caller reads or enters each value."""
        self.expect("{")
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            key = self.value()
            if not isinstance(key, str):
                raise _Malformed(f"expected a key at {self.where()}")
            self.expect(":")
            yield key
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("}")
            return


def _from_json(handle: IO[str]) -> tuple[dict[str, Product], dict[str, float], dict[str, str]]:
    stream = _JsonStream(handle)
    products: dict[str, Product] = {}
    prices: dict[str, float] = {}
    header: dict[str, str] = {}
    if stream.peek() != "{":
        raise _Malformed("not a JSON object (an offer file starts with '{')")
    for key in stream.members():
        if key == "products":
            for sku in stream.members():
                item = stream.value()
                product = product_of((item or {}).get("attributes") or {}) if isinstance(item, dict) else None
                if product is not None:
                    products[sku] = product
        elif key == "terms":
            for term_type in stream.members():
                for sku in stream.members():
                    terms = stream.value()
                    if term_type == "OnDemand" and isinstance(terms, dict):
                        price = on_demand_price(terms)
                        if price is not None:
                            prices[sku] = price
        else:
            value = stream.value()
            if isinstance(value, str):
                header[key] = value
    return products, prices, header


def _from_csv(handle: IO[str]) -> tuple[dict[str, Product], dict[str, float], dict[str, str]]:
    reader = csv.reader(handle)
    header: dict[str, str] = {}
    columns: list[str] | None = None
    products: dict[str, Product] = {}
    prices: dict[str, float] = {}
    for row in reader:
        if columns is None:
            if row and row[0] == "SKU":
                columns = [normalise_key(c) for c in row]
            elif len(row) == 2:
                header[row[0].replace(" ", "").lower()] = row[1]
            elif row:
                raise _Malformed(f"line {reader.line_num}: expected the SKU header of an offer file")
            continue
        if len(row) != len(columns):
            raise _Malformed(f"line {reader.line_num}: {len(row)} fields where the header has {len(columns)}")
        cells = dict(zip(columns, row, strict=True))
        if cells.get("termtype") != "OnDemand":
            continue
        sku = cells.get("sku", "")
        if sku not in products:
            product = product_of(cells)
            if product is None:
                continue
            products[sku] = product
        price = hourly_usd([{"unit": cells.get("unit", ""),
                             "pricePerUnit": {cells.get("currency", ""): cells.get("priceperunit", "")}}])
        if price is not None:
            prices[sku] = price
    if columns is None:
        raise _Malformed("no SKU header line: not an AWS offer file in CSV")
    return products, prices, {"offercode": header.get("offercode", ""),
                              "publicationdate": header.get("publicationdate", "")}


def _records(products: dict[str, Product], prices: dict[str, float]) -> Iterator[PriceRecord]:
    for sku, product in products.items():
        price = prices.get(sku)
        if price is not None:
            yield PriceRecord(product.instance_type, product.region, product.usage, price, product.hardware)


def read_offer_file(path: Path, today: date) -> PriceTable:
    """The SageMaker instance prices of an offer file; PriceCacheError (one line naming the file
    and the problem) for anything else."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            first = handle.read(1)
            handle.seek(0)
            is_json = path.suffix.lower() == ".json" or (path.suffix.lower() != ".csv" and first in "{ \n\t\r")
            products, prices, header = (_from_json if is_json else _from_csv)(handle)
    except FileNotFoundError:
        raise PriceCacheError(f"offer file not found: {path}") from None
    except OSError as exc:
        raise PriceCacheError(f"cannot read the offer file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PriceCacheError(f"{path}: not a text file (an offer file is JSON or CSV): cache not changed") from None
    except (_Malformed, csv.Error) as exc:
        raise PriceCacheError(f"{path}: malformed offer file: {exc}: cache not changed") from None
    normal = {k.replace(" ", "").lower(): v for k, v in header.items()}
    offer = normal.get("offercode", "")
    if offer and offer != OFFER_CODE:
        raise PriceCacheError(f"{path}: an offer file for {offer}, not {OFFER_CODE}: cache not changed")
    published = normal.get("publicationdate", "")[:10] or today.isoformat()
    table = build_table(_records(products, prices), published, f"offer-file {path.name}")
    if not table.regions:
        raise PriceCacheError(f"{path}: no SageMaker instance prices in the file: cache not changed")
    return table
