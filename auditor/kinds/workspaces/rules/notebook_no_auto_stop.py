"""notebook-no-auto-stop: a notebook instance with no lifecycle configuration, or one whose OnStart
script does not stop it when idle (AWS's documented approach: the auto-stop-idle sample of
aws-samples/amazon-sagemaker-notebook-instance-lifecycle-config-samples, run from OnStart)."""

from __future__ import annotations

from collections.abc import Iterator

from auditor.analyse.rules.base import CollectionRule, RuleSettings
from auditor.catalog import Catalog
from auditor.config import AuditConfig
from auditor.kinds.workspaces.assessment import WorkspacesAssessment
from auditor.models import Finding, Judged, Severity

JUDGED = frozenset({"InService", "Pending", "Updating", "Stopping", "Stopped"})


def check(workspaces: WorkspacesAssessment, catalog: Catalog, config: AuditConfig) -> Iterator[Finding]:
    for cost in workspaces.notebooks:
        nb = cost.notebook
        if nb.status not in JUDGED or nb.idle_stop is True:
            continue
        if nb.lifecycle_config and nb.idle_stop is None:
            continue  # the configuration could not be read: an error says so, no verdict
        why = nb.idle_stop_evidence if nb.lifecycle_config else "no lifecycle configuration"
        rate = (f"; it costs ${cost.compute_monthly_usd:,.2f}/month while it runs (hosting rate)"
                if cost.compute_monthly_usd else "")
        yield RULE.finding(
            nb, None, f"{nb.status} {nb.instance_type} with {why}: nothing stops it when idle{rate}",
            {"lifecycle_config": nb.lifecycle_config, "status": nb.status, "instance_type": nb.instance_type,
             "running_monthly_usd": (round(cost.price_per_hour * 730, 2) if cost.price_per_hour else None)},
        )


RULE = CollectionRule(
    assessment=WorkspacesAssessment,
    id="notebook-no-auto-stop",
    title="Notebook instance without idle auto-stop",
    severity=Severity.LOW,
    remediation="Attach a lifecycle configuration whose OnStart runs AWS's auto-stop-idle sample (autostop.py from "
                "aws-samples/amazon-sagemaker-notebook-instance-lifecycle-config-samples) with an IDLE_TIME.",
    docs="https://docs.aws.amazon.com/sagemaker/latest/dg/notebook-lifecycle-config.html",
    judges=frozenset({Judged.NOTEBOOK}),
    settings=RuleSettings,
    check=check,
)
