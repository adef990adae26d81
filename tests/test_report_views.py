"""What the report templates read of findings and plans (auditor/report/views.py; ResourceRef.label): a resource that
is no endpoint is named with its type in every rendered format, and an endpoint's owner tag is
never shown for another kind's resource of the same name."""

from __future__ import annotations

from dataclasses import replace

from auditor.kinds.endpoints.kind import KIND as ENDPOINTS
from auditor.models import AuditReport, ResourceRef
from auditor.report.render import OutputFormat, render
from fleet_report import synthetic_report


def _as_training_job(report: AuditReport) -> tuple[AuditReport, str]:
    """The report with its first plan and that plan's findings about a training job of the same name
    (an endpoint of that name, with its owner tag, stays in the report)."""
    plan = report.plans[0]
    job = replace(plan.resource, kind="jobs", type="training-job")
    findings = tuple(replace(f, resource=job) if (f.resource, f.variant) == (plan.resource, plan.variant) else f
                     for f in report.findings)
    changed = replace(report, plans=(replace(plan, resource=job), *report.plans[1:]), findings=findings)
    return changed, plan.resource.name


def test_a_resource_that_is_no_endpoint_is_named_with_its_type() -> None:
    assert ResourceRef("jobs", "training-job", "nightly", "1", "r").label == "training job nightly"
    assert ResourceRef("endpoints", "endpoint", "ranker", "1", "r").label == "ranker"
    assert ResourceRef("endpoints", "endpoint-fleet", "all endpoints", "1", "r").label == "all endpoints"
    report, name = _as_training_job(synthetic_report(count=12))
    owner = next(e.endpoint.tags["owner"] for e in ENDPOINTS.section(report) if e.endpoint.name == name)
    text = render(report, OutputFormat.TEXT)
    plan_line = next(line for line in text.splitlines() if line.startswith("1. "))
    assert plan_line.startswith(f"1. training job {name} / AllTraffic (us-east-1): ")
    finding = next(line for line in text.splitlines() if f"training job {name}" in line and "[" in line)
    assert owner not in finding  # the endpoint's owner is not the job's
    assert f"| training job {name} |" in render(report, OutputFormat.MARKDOWN)
    assert f"<td>training job {name}<br>" in render(report, OutputFormat.HTML)
    assert f"training job {name}" in render(report, OutputFormat.TABLE, width=200)
