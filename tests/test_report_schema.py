"""The JSON document's published JSON Schema (auditor/data/audit-report.schema.json, the same file
in docs/): a valid draft 2020-12 schema of the document's version, which a real report passes and a
misspelled key fails wherever the document is closed. Every document the suite makes is checked
against it as well (tests/conftest.py: `validated_documents`, `audit_json`); the demo's is checked
in tests/test_demo_story.py."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from auditor.report.document import SCHEMA_FILE, SCHEMA_VERSION, report_schema, report_to_dict
from conftest import check_report_json
from fleet_report import synthetic_report

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return json.loads(json.dumps(report_to_dict(synthetic_report(count=12))))


def test_the_package_and_the_docs_publish_one_schema_of_the_documents_version() -> None:
    packaged = (ROOT / "auditor" / "data" / SCHEMA_FILE).read_text()
    assert (ROOT / "docs" / SCHEMA_FILE).read_text() == packaged
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    assert f"({SCHEMA_FILE})" in (ROOT / "docs" / "json-report.md").read_text()


def test_a_finding_and_a_plan_name_their_resource(document: dict[str, Any]) -> None:
    check_report_json(document)
    for item in (*document["findings"], *document["plans"]):
        assert set(item["resource"]) == {"kind", "type", "name", "account_id", "region"}
        assert not {"account_id", "region", "endpoint", "resource_type"} & set(item), item
    endpoint_plan = next(p for p in document["plans"] if p["resource"]["type"] == "endpoint")
    assert endpoint_plan["resource"]["kind"] == "endpoints"


def _invalid(document: dict[str, Any]) -> list[str]:
    return [e.message for e in jsonschema.Draft202012Validator(report_schema()).iter_errors(document)]


@pytest.mark.parametrize(("where", "key", "misspelled"), [
    ((), "schema_version", "schema_versoin"),
    (("findings", 0, "resource"), "name", "nmae"),
    (("findings", 0), "message", "mesage"),
    (("plans", 0, "resource"), "account_id", "acount_id"),
    (("plans", 0, "proposed"), "advice", "advise"),
    (("plans", 0, "current"), "instance_type", "instance_typ"),
    (("endpoints", 0, "variants", 0), "instance_count", "instance_cont"),
    (("summary",), "monthly_savings_usd", "monthly_saving_usd"),
    (("prices",), "statement", "statment"),
])
def test_a_misspelled_key_fails(document: dict[str, Any], where: tuple[str | int, ...], key: str,
                                misspelled: str) -> None:
    broken = copy.deepcopy(document)
    node: Any = broken
    for step in where:
        node = node[step]
    node[misspelled] = node.pop(key)
    assert _invalid(broken), (where, misspelled)
    assert not _invalid(document)


def test_the_version_8_shape_of_a_finding_fails(document: dict[str, Any]) -> None:
    """A reader that validates knows the document moved: the old keys are not the new shape."""
    broken = copy.deepcopy(document)
    finding = broken["findings"][0]
    resource = finding.pop("resource")
    finding.update(account_id=resource["account_id"], region=resource["region"], endpoint=resource["name"],
                   resource_type=resource["type"])
    broken["schema_version"] = 8
    assert len(_invalid(broken)) >= 2
