"""`audit plans show ID --as cli|cloudformation|terraform` writes the tags of the config a plan copies
into its new config (the audit does not read a config's tags): read with ListTags when the change
is shown, through the CLI against the emulator, each form saying where they came from; a value with
every character SageMaker allows in a tag, and one with what it does not, written safely in each
dialect; a ListTags refused or no credentials said in one line, and the rest printed."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from typer.testing import CliRunner

from auditor.cli import app
from auditor.config import AuditConfig
from auditor.kinds.endpoints.config_tags import read_copied_tags
from auditor.models import CopiedTags
from auditor.report.change_text import render_change
from auditor_emulator.fleet import demo_fleet, seed_fleet
from auditor_emulator.server import Emulator
from cfn_lint_snippets import lint_all
from conftest import utc_now
from faultproxy import FaultProxy, Faults
from helpers import resource_json
from terraform_schema import problems, resources, string_value

runner = CliRunner()
ENDPOINT = "search-embeddings"
SOURCE = "search-embeddings-config"
# Every kind of character SageMaker allows in a tag value (letters, digits, spaces, _ . : / = + - @).
ALLOWED = "owner: a/b @team = x+y_z-1.0"
TAGS = [{"Key": "team", "Value": ALLOWED}, {"Key": "cost-centre", "Value": "ml/42"},
        {"Key": "auditor:apply", "Value": "allowed"},  # the opt-in: people set it on each resource
        {"Key": "aws:cloudformation:stack-name", "Value": "search"}]  # AWS's own: no request can set it
COPIED = [{"Key": "cost-centre", "Value": "ml/42"}, {"Key": "team", "Value": ALLOWED}]


def audited(aws: Emulator, tmp_path: Path) -> tuple[str, str]:
    """The search endpoint's config tagged, audited once: (config path, the resize plan's id)."""
    seed_fleet(aws, [s for s in demo_fleet() if s.name == ENDPOINT], now=utc_now())
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    arn = sagemaker.describe_endpoint_config(EndpointConfigName=SOURCE)["EndpointConfigArn"]
    sagemaker.add_tags(ResourceArn=arn, Tags=TAGS)
    config = tmp_path / "auditor.toml"
    config.write_text(f'[aws]\nregions = ["us-east-1"]\n[history]\npath = {json.dumps(str(tmp_path / "h.db"))}\n')
    result = runner.invoke(app, ["run", "--config", str(config), "--format", "json", "--output",
                                 str(tmp_path / "report.json")])
    assert result.exit_code == 0, result.output
    (plan,) = [p for p in json.loads((tmp_path / "report.json").read_text())["plans"]
               if p["resource"]["name"] == ENDPOINT]
    create = next(c for c in plan["change"]["calls"] if c["operation"] == "CreateEndpointConfig")
    # The audit did not read the source's tags (only the plan's own auditor:plan is set): the forms must
    assert create["params"]["Tags"] == [{"Key": "auditor:plan", "Value": plan["id"]}]
    return str(config), plan["id"]


def show(config: str, plan: str, as_: str) -> str:
    result = runner.invoke(app, ["plans", "show", plan, "--as", as_, "--config", config])
    assert result.exit_code == 0, result.output
    return result.stdout


def cli_tags(text: str) -> Any:
    (command,) = [line for line in text.splitlines() if line.startswith("aws sagemaker create-endpoint-config ")]
    words = shlex.split(command)
    return json.loads(words[words.index("--cli-input-json") + 1]).get("Tags")


def cfn_tags(text: str) -> Any:
    resources_ = yaml.safe_load(text)["Resources"]
    (config,) = [r for r in resources_.values() if r["Type"] == "AWS::SageMaker::EndpointConfig"]
    return config["Properties"].get("Tags")


def tf_tags(text: str) -> Any:
    assert problems(text) == [], text
    (config,) = [body for kind, _, body in resources(text) if kind == "aws_sagemaker_endpoint_configuration"]
    if "tags" not in config:
        return None
    return [{"Key": string_value(k), "Value": string_value(v)} for k, v in config["tags"].items()]


READ = {"cli": cli_tags, "cloudformation": cfn_tags, "terraform": tf_tags}
CONFIG_IN = {"cli": "aws sagemaker create-endpoint-config ", "cloudformation": "AWS::SageMaker::EndpointConfig",
             "terraform": 'resource "aws_sagemaker_endpoint_configuration"'}


def test_every_form_carries_the_copied_configs_tags_and_says_where_they_came_from(aws: Emulator,
                                                                                   tmp_path: Path) -> None:
    config, plan = audited(aws, tmp_path)
    before = datetime.now(UTC).replace(microsecond=0)
    for as_, read in READ.items():
        text = show(config, plan, as_)
        if as_ == "cloudformation":
            assert lint_all({"shown": text}, tmp_path) == {}
        own = {"Key": "auditor:plan", "Value": plan}  # the plan's own tag, set by the request itself
        assert sorted(read(text), key=lambda t: t["Key"]) == sorted([own, *COPIED], key=lambda t: t["Key"]), text
        (note,) = [line for line in text.splitlines() if "ListTags" in line]
        assert note.startswith(f"# tags copied from endpoint config {SOURCE}, read with ListTags at ")
        read_at = datetime.strptime(note.split(" at ")[1].split(" (")[0], "%Y-%m-%d %H:%M:%S UTC")
        assert read_at.replace(tzinfo=UTC) >= before and note.endswith("(2 tags)")
    stored = json.loads(show(config, plan, "json"))["change"]["calls"][0]["params"]
    assert stored["Tags"] == [{"Key": "auditor:plan", "Value": plan}]  # as stored: no copied tag


def test_a_refused_listtags_or_no_credentials_is_one_line_and_the_rest_is_printed(
        aws: Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config, plan = audited(aws, tmp_path)
    with FaultProxy(aws.url, Faults(denied=("SageMaker.ListTags",))) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        for as_, read in READ.items():
            text = show(config, plan, as_)
            assert read(text) == [{"Key": "auditor:plan", "Value": plan}], text  # nothing made up
            (note,) = [line for line in text.splitlines() if "not read" in line]
            assert note == (f"# tags of endpoint config {SOURCE} not read (access denied: sagemaker:ListTags in "
                            "us-east-1 (AccessDeniedException)): only the request's own are written below; "
                            "add them by hand (`audit apply` copies them when it makes the config)")
        assert "SageMaker.ListTags" in proxy.faults.calls
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for as_, read in READ.items():
        text = show(config, plan, as_)
        assert read(text) == [{"Key": "auditor:plan", "Value": plan}]
        (note,) = [line for line in text.splitlines() if "not read" in line]
        assert "(no AWS credentials found: set aws.profile, AWS_PROFILE or AWS_ACCESS_KEY_ID)" in note
        assert CONFIG_IN[as_] in text  # the change itself is printed


def test_the_reader_leaves_out_aws_and_opt_in_tags_and_names_a_missing_config(aws: Emulator,
                                                                                tmp_path: Path) -> None:
    seed_fleet(aws, [s for s in demo_fleet() if s.name == ENDPOINT], now=utc_now())
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    sagemaker.add_tags(ResourceArn=sagemaker.describe_endpoint_config(EndpointConfigName=SOURCE)["EndpointConfigArn"],
                       Tags=TAGS)
    copied = read_copied_tags(AuditConfig(), "123456789012", "us-east-1", SOURCE)
    assert copied.problem is None and sorted(copied.tags) == sorted((t["Key"], t["Value"]) for t in COPIED)
    gone = read_copied_tags(AuditConfig(), "123456789012", "us-east-1", "no-such-config")
    assert gone.tags == () and "DescribeEndpointConfig" in str(gone.problem)


# --- escaping: values SageMaker would refuse, in case one comes from elsewhere ---------------------

HOSTILE = "it's \"$(rm -rf ~)\" ${var} %{if x} $${kept} \\ end"


def plan_with_a_copy(own_tags: list[dict[str, str]] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"EndpointConfigName": "ranker-0123456789", "ProductionVariants": [
        {"VariantName": "AllTraffic", "ModelName": "ranker", "InstanceType": "ml.m5.xlarge",
         "InitialInstanceCount": 2}]}
    if own_tags is not None:
        params["Tags"] = own_tags
    return {"id": "0123456789", "resource": resource_json("ranker"), "variant": "AllTraffic",
            "current": {"endpoint_config_name": "ranker-config"},
            "proposed": {"action": "resize", "advice": "advice"}, "risk": {"level": "low"},
            "change": {"calls": [{"service": "sagemaker", "operation": "CreateEndpointConfig", "params": params,
                                  "purpose": "new endpoint config"}], "rollback": "by hand", "waits_for": None}}


@pytest.mark.parametrize("as_", sorted(READ))
def test_a_hostile_tag_is_data_in_every_dialect(as_: str) -> None:
    copied = CopiedTags("ranker-config\nnext", datetime(2026, 12, 1, 12, 0, tzinfo=UTC),
                        (("team", HOSTILE), ("a=b:c/d", "@x+y")))
    text = render_change(plan_with_a_copy(), as_, copied)
    assert READ[as_](text) == [{"Key": "team", "Value": HOSTILE}, {"Key": "a=b:c/d", "Value": "@x+y"}]
    assert all(line.startswith("#") or not line.startswith(("rm", "next")) for line in text.splitlines())
    assert "# tags copied from endpoint config ranker-config next, read with ListTags at 2026-12-01 12:00:00 UTC" \
        in text


@pytest.mark.parametrize("as_", sorted(READ))
def test_the_calls_own_tags_are_kept_and_win_over_the_copied_ones(as_: str) -> None:
    """Apply's new config carries tags of its own (auditor:plan): a copied tag of the same key yields."""
    copied = CopiedTags("ranker-config", datetime(2026, 12, 1, tzinfo=UTC), (("auditor:plan", "old"), ("team", "a")))
    text = render_change(plan_with_a_copy([{"Key": "auditor:plan", "Value": "0123456789"}]), as_, copied)
    assert READ[as_](text) == [{"Key": "team", "Value": "a"}, {"Key": "auditor:plan", "Value": "0123456789"}]
    shown = render_change(plan_with_a_copy([{"Key": "auditor:plan", "Value": "0123456789"}]), as_)
    assert READ[as_](shown) == [{"Key": "auditor:plan", "Value": "0123456789"}]  # without a read: as stored
    refused = CopiedTags("ranker-config", datetime(2026, 12, 1, tzinfo=UTC), problem="access denied")
    text = render_change(plan_with_a_copy([{"Key": "auditor:plan", "Value": "0123456789"}]), as_, refused)
    assert READ[as_](text) == [{"Key": "auditor:plan", "Value": "0123456789"}]
    assert "# tags of endpoint config ranker-config not read (access denied): only the request's own are written " \
           "below; add them by hand" in text

