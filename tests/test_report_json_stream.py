"""The JSON report written piece by piece is the document json.dumps would write whole."""

from __future__ import annotations

import io
import json
from dataclasses import replace

from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.report.document import report_to_dict, write_report_json
from auditor.report.render import OutputFormat, render
from fleet_report import synthetic_report


def test_streamed_json_is_byte_for_byte_the_whole_document() -> None:
    report = synthetic_report(40)
    assert report.findings and ENDPOINTS.section(report)
    whole = json.dumps(report_to_dict(report), indent=2, sort_keys=False) + "\n"
    streamed = io.StringIO()
    write_report_json(report, streamed)
    assert streamed.getvalue() == whole
    assert render(report, OutputFormat.JSON) == whole


def test_streamed_json_of_an_empty_report() -> None:
    empty = replace(ENDPOINTS.with_section(synthetic_report(2), ()), findings=(), plans=())
    streamed = io.StringIO()
    write_report_json(empty, streamed)
    assert streamed.getvalue() == json.dumps(report_to_dict(empty), indent=2) + "\n"
    assert json.loads(streamed.getvalue())["endpoints"] == []
