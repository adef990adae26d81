"""`audit apply` of the async-scale-from-zero plans against the emulator, and the next run's verdict:
the step policy is put, its alarm is made with the policy's real ARN in AlarmActions (the answer
reference filled from PutScalingPolicy's answer, auditor/act/answers.py), the idle endpoint's target
goes to MinCapacity 0 with the backlog target tracking; the next audit verifies both plans and finds
nothing more to do.

Answer references are resolved by apply's executor (design C1, helper `apply`): this module runs once
that is merged (auditor.act.answers importable)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import boto3
import pytest
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import ApplyConfig, AuditConfig, AwsConfig, HistoryConfig
from auditor.history.store import History
from auditor.tasks.audit import deliver_outcome, execute_audit
from auditor_emulator.server import Emulator
from conftest import APPLY_ROLE, seeded_emulator
from test_scale_to_zero import async_spec, day_night_counts, seed

pytestmark = pytest.mark.skipif(importlib.util.find_spec("auditor.act.answers") is None,
                                reason="apply resolves answer references once design C1's executor is merged")
runner = CliRunner()


def test_the_step_policy_and_min_zero_are_applied_and_verified(emulator: Emulator,
                                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("zero-apply")
    specs = [async_spec("batch-stuck", autoscaling=(0, 2), counts=day_night_counts(0, 1, range(8, 24))),
             async_spec("batch-idle", traffic_hours=(8, 9, 10, 11))]
    with seeded_emulator(emulator, home, lambda emu: seed(emu, specs)):
        sagemaker = boto3.client("sagemaker", region_name="us-east-1")
        for name in ("batch-stuck", "batch-idle"):
            arn = sagemaker.describe_endpoint(EndpointName=name)["EndpointArn"]
            sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": "auditor:apply", "Value": "allowed"}])
        config = AuditConfig(aws=AwsConfig(regions=("us-east-1",)),
                             history=HistoryConfig(path=str(home / "history.sqlite3")),
                             apply=ApplyConfig(role_arn=APPLY_ROLE, wait_minutes=1.0, max_risk="medium"))
        outcome = execute_audit(config)
        assert not deliver_outcome(config, outcome).problems
        plans = {p.resource.name: p for p in outcome.report.plans if p.resource.name in ("batch-stuck", "batch-idle")}
        assert {n: p.proposed.action for n, p in plans.items()} == {"batch-stuck": "scale-from-zero",
                                                                   "batch-idle": "scale-to-zero"}
        (home / "auditor.toml").write_text(f'[history]\npath = "{home / "history.sqlite3"}"\n[apply]\n'
                                           f'role_arn = "{APPLY_ROLE}"\nwait_minutes = 1\nmax_risk = "medium"\n')
        for name, plan in plans.items():
            applied = runner.invoke(app, ["apply", plan.id, "--yes"])
            assert applied.exit_code == 0, applied.output
            assert applied.stdout.splitlines()[-1] == f"plan {plan.id} applied: endpoint {name} stays on {name}-config"

        scaling = boto3.client("application-autoscaling", region_name="us-east-1")
        policies = {(p["ResourceId"], p["PolicyName"]): p
                    for p in scaling.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"]}
        alarms = {a["AlarmName"]: a for a in boto3.client("cloudwatch", region_name="us-east-1")
                  .describe_alarms()["MetricAlarms"]}
        for name in plans:
            step = policies[(f"endpoint/{name}/variant/AllTraffic", "HasBacklogWithoutCapacity-ScalingPolicy")]
            alarm = alarms[f"{name}-HasBacklogWithoutCapacity-scale-from-zero"]
            assert alarm["AlarmActions"] == [step["PolicyARN"]]
            assert [a["AlarmName"] for a in step["Alarms"]] == [alarm["AlarmName"]]
        assert ("endpoint/batch-idle/variant/AllTraffic", "ApproximateBacklogSizePerInstance-TargetTracking") \
            in policies
        targets = {t["ResourceId"]: (t["MinCapacity"], t["MaxCapacity"])
                   for t in scaling.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]}
        assert targets["endpoint/batch-idle/variant/AllTraffic"] == (0, 1)

        after = execute_audit(config)
        assert not deliver_outcome(config, after).problems
        assert not [f for f in after.report.findings if f.rule == "async-scale-from-zero"]
        with History(Path(config.history.path)) as history:
            verified = {a.plan_id for a in history.applied() if a.verified_at is not None}
        assert verified == {p.id for p in plans.values()}
