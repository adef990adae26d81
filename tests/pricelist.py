"""Price List answers in AWS's documented format (pricing:GetProducts' PriceList entries are JSON
strings of product + terms), and a botocore Stubber that serves them page by page."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import boto3
from botocore.stub import Stubber

from auditor.catalog import load_catalog

PREFIX = {"us-east-1": "USE1", "eu-central-1": "EUC1", "ap-northeast-1": "APN1", "eu-west-1": "EU"}
PLATO = {"hosting": ("Hosting", "Host"), "training": ("Training", "Train"), "async": ("AsyncInf", "AsyncInf"),
         "batch": ("BatchTransform", "Tsform"), "spot-training": ("SpotTraining", "Train-Spot"),
         "processing": ("Processing", "Processing"), "notebook": ("Notebook", "Notebk")}


def price_item(instance_type: str, region: str, usage: str, price: float, *, vcpu: int = 4,
               memory_gib: float = 16, gpus: int | str = 0, gpu_model: str = "N/A", gpu_memory_gib: float | str = 0,
               instance_name: str | None = None) -> dict[str, Any]:
    """As AWS states hardware: `gpu` the count, `physicalGpu` the model (`NVIDIA T4 GPU`, `N/A`),
    `gpuMemory` the total over the GPUs; "N/A" where the list states nothing."""
    plato, component = PLATO[usage]
    sku = f"{region}-{instance_type}-{usage}".upper().replace(".", "")
    attributes = {
        "servicecode": "AmazonSageMaker", "regionCode": region, "location": region,
        "instanceName": instance_type if instance_name is None else instance_name,
        "vCpu": str(vcpu), "memory": f"{memory_gib:g} GiB", "gpu": str(gpus), "physicalGpu": gpu_model,
        "gpuMemory": gpu_memory_gib if isinstance(gpu_memory_gib, str) else f"{gpu_memory_gib:g}",
        "usagetype": f"{PREFIX[region]}-{component}:{instance_type}", "platoinstancetype": plato,
        "operation": "RunInstance", "component": usage,
    }
    term = f"{sku}.JRTCKXETXF"
    return {
        "product": {"productFamily": "ML Instance", "attributes": attributes, "sku": sku},
        "serviceCode": "AmazonSageMaker",
        "terms": {"OnDemand": {term: {
            "priceDimensions": {f"{term}.6YS6EN2CT7": {
                "unit": "Hrs", "endRange": "Inf", "beginRange": "0", "appliesTo": [],
                "description": f"${price} per hour for {instance_type}", "rateCode": f"{term}.6YS6EN2CT7",
                "pricePerUnit": {"USD": f"{price:.10f}"}}},
            "sku": sku, "effectiveDate": "2026-11-01T00:00:00Z", "offerTermCode": "JRTCKXETXF",
            "termAttributes": {}}}},
        "version": "20261101000000", "publicationDate": "2026-11-01T00:00:00Z",
    }


def catalog_items(region: str, factor: float) -> list[dict[str, Any]]:
    """Every bundled type's hosting and training price in us-east-1, times `factor`, in `region`."""
    items = []
    for shape in load_catalog().shapes.values():
        base = shape.hosting_price_per_hour.get("us-east-1")
        hw = {"vcpu": shape.vcpu, "memory_gib": shape.memory_gib, "gpus": shape.gpu_count,
              "gpu_model": f"{shape.accelerator} GPU" if shape.accelerator else "N/A",
              "gpu_memory_gib": shape.accelerator_memory_gib}
        if base is not None:
            items.append(price_item(shape.instance_type, region, "hosting", round(base * factor, 4), **hw))
        train = shape.training_price_per_hour.get("us-east-1")
        if train is not None:
            items.append(price_item(shape.instance_type, region, "training", round(train * factor, 4), **hw))
    return items


def stubbed_pricing(pages_by_region: dict[str, list[list[dict[str, Any]]]], page_size: int = 100) -> Any:
    """A pricing client whose GetProducts answers each region's pages in order, with NextToken."""
    client = boto3.client("pricing", region_name="us-east-1", aws_access_key_id="testing",
                          aws_secret_access_key="testing")
    stubber = Stubber(client)
    for region, pages in pages_by_region.items():
        for number, page in enumerate(pages):
            expected: dict[str, Any] = {
                "ServiceCode": "AmazonSageMaker",
                "Filters": [{"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}],
                "FormatVersion": "aws_v1", "MaxResults": page_size,
            }
            if number:
                expected["NextToken"] = f"{region}-page-{number}"
            answer: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": [json.dumps(i) for i in page]}
            if number + 1 < len(pages):
                answer["NextToken"] = f"{region}-page-{number + 1}"
            stubber.add_response("get_products", answer, expected)
    stubber.activate()
    client.stubber = stubber  # type: ignore[attr-defined]
    return client


def paged(items: Iterable[dict[str, Any]], size: int = 100) -> list[list[dict[str, Any]]]:
    items = list(items)
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]
