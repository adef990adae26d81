"""A resource kind from outside the auditor: tests/example_kind/ holds a distribution (its package
`auditor_example_kind` and a dist-info whose entry_points.txt registers it in the group
`sagemaker_auditor.kinds`) for SageMaker models no endpoint configuration names. With that
directory on PYTHONPATH, `audit run` finds it through importlib.metadata and audits it end to end
against the emulator; no file of auditor/ names it. Plug-ins that cannot be registered are one
error naming them. And docs/kinds/index.md's list of what adding a kind touches is held to the
built-in kinds here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from datetime import timedelta
from importlib.metadata import EntryPoint
from pathlib import Path

import boto3
import pytest

from auditor.history.store import History
from auditor.kinds.hyperpod.kind import KIND as HYPERPOD
from auditor.kinds.registry import ENTRY_POINT_GROUP, KINDS, KindPluginError, plugin_kinds
from auditor_emulator.components import add_component
from auditor_emulator.server import ACCOUNT_ID, Emulator
from conftest import check_report_json, utc_now

ROOT = Path(__file__).parent.parent
EXAMPLE = Path(__file__).parent / "example_kind"
PACKAGE = "auditor_example_kind"
EXAMPLE_ACTIONS = {"sagemaker:ListModels", "sagemaker:DescribeModel", "sagemaker:ListEndpointConfigs",
                   "sagemaker:DescribeEndpointConfig", "sagemaker:ListInferenceComponents",
                   "sagemaker:DescribeInferenceComponent", "sagemaker:ListTags"}
REGION = "us-east-1"
ROLE = f"arn:aws:iam::{ACCOUNT_ID}:role/sagemaker"
IMAGE = f"{ACCOUNT_ID}.dkr.ecr.{REGION}.amazonaws.com/ranker:1"


def _env(*paths: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, paths), os.environ.get("PYTHONPATH", "")])}


def _cli(home: Path, *args: str, paths: tuple[Path, ...] = (EXAMPLE,)) -> subprocess.CompletedProcess[str]:
    """`audit ARGS` in a subprocess that sees the distributions under `paths`, in `home`."""
    return subprocess.run([sys.executable, "-m", "auditor.cli", *args], env=_env(*paths), cwd=home,
                          capture_output=True, text=True, timeout=300, check=False)


def _audit(home: Path, *args: str, paths: tuple[Path, ...] = (EXAMPLE,)) -> subprocess.CompletedProcess[str]:
    """`audit run` with home/auditor.toml and no history, against the emulator."""
    return _cli(home, "run", "--config", str(home / "auditor.toml"), "--no-history", *args, paths=paths)


def _seed_models(emulator: Emulator) -> None:
    """Four models: one an endpoint configuration names, one an inference component names, one
    named by nothing for 90 days, and one named by nothing but created today."""
    sagemaker = boto3.client("sagemaker", region_name=REGION)
    for name in ("served", "ranker-model", "forgotten", "fresh"):
        sagemaker.create_model(ModelName=name, ExecutionRoleArn=ROLE, PrimaryContainer={"Image": IMAGE},
                               Tags=[{"Key": "owner", "Value": "ml-team"}])
    sagemaker.create_endpoint_config(EndpointConfigName="served-config", ProductionVariants=[
        {"VariantName": "main", "ModelName": "served", "InstanceType": "ml.m5.large", "InitialInstanceCount": 1}])
    now = utc_now()
    add_component(ACCOUNT_ID, REGION, "shared", "main", "ranker", copies=1, cpu_cores=1, accelerators=0,
                  memory_mb=1024, created=now)
    backend = emulator.backend("sagemaker", REGION)
    for name in ("served", "ranker-model", "forgotten"):  # moto stamps them now: the API cannot set it
        backend._models[name].creation_time = (now - timedelta(days=90)).replace(tzinfo=None)


CONFIG = """\
[aws]
regions = ["us-east-1"]

[models]
enabled = true

[rules.model-unused]
min_age_days = 30
"""


@pytest.fixture
def models_home(aws: Emulator, tmp_path: Path) -> Path:
    _seed_models(aws)
    (tmp_path / "auditor.toml").write_text(CONFIG, encoding="utf-8")
    return tmp_path


def test_the_example_kind_is_audited_end_to_end(models_home: Path) -> None:
    report = models_home / "report.json"
    done = _audit(models_home, "--format", "json", "--output", str(report))
    assert done.returncode == 0, done.stderr
    # The published JSON Schema takes a plug-in kind's section beside the built-in kinds'.
    doc = check_report_json(json.loads(report.read_text(encoding="utf-8")))
    # Its section, after the built-in kinds' (its order), read through boto3 from the emulator.
    kind_keys = [k.key for k in KINDS]
    assert [k for k in doc if k in {*kind_keys, "models"}] == [*kind_keys, "models"]
    section = doc["models"]
    assert section["summary"] == {"models": 4, "unused": 2, "not_judged": 0}
    by_name = {m["name"]: m for m in section["models"]}
    assert by_name["served"]["used_by"] == ["config/served-config"]
    assert by_name["ranker-model"]["used_by"] == ["component/ranker"]
    assert by_name["forgotten"]["used_by"] == [] and by_name["forgotten"]["image"] == IMAGE
    assert by_name["forgotten"]["tags"] == {"owner": "ml-team"}
    # Its rule's finding: the old unused model only (the fresh one is under min_age_days).
    found = [f for f in doc["findings"] if f["rule"] == "model-unused"]
    assert [f["resource"] for f in found] == [{"kind": "models", "type": "model", "name": "forgotten",
                                               "account_id": ACCOUNT_ID, "region": REGION}], found
    assert doc["summary"]["monthly_cost_by_kind"]["models"] == 0.0
    # Its plan: the DeleteModel call, undone by CreateModel with what DescribeModel said.
    plan = next(p for p in doc["plans"] if p["proposed"]["action"] == "delete-model")
    assert plan["change"]["calls"] == [{"service": "sagemaker", "operation": "DeleteModel",
                                        "params": {"ModelName": "forgotten"},
                                        "purpose": "delete model forgotten (nothing names it)"}]
    assert plan["risk"]["level"] == "low" and f'"Image": "{IMAGE}"' in plan["change"]["rollback"]
    # The config accepted its section and its rule's table, and the document's own keys are the
    # ones a plug-in's key may not take.
    from auditor.kinds.registry import RESERVED_KEYS
    assert set(doc) - {*kind_keys, "models"} == RESERVED_KEYS - {"rules"}

    markdown = models_home / "report.md"
    done = _audit(models_home, "--format", "markdown", "--output", str(markdown))
    assert done.returncode == 0, done.stderr
    text = markdown.read_text(encoding="utf-8")
    assert "## Models" in text and "| forgotten | us-east-1 | unused |" in text
    assert "| served | us-east-1 | config/served-config |" in text
    text_report = models_home / "report.txt"
    done = _audit(models_home, "--format", "text", "--output", str(text_report))
    assert done.returncode == 0, done.stderr
    assert "- forgotten (us-east-1): unused\n" in text_report.read_text(encoding="utf-8")
    html = models_home / "report.html"
    done = _audit(models_home, "--format", "html", "--output", str(html))
    assert done.returncode == 0, done.stderr
    page = html.read_text(encoding="utf-8")
    assert "<h2>Models</h2>" in page and 'id="models"' in page and "component/ranker" in page


@pytest.mark.parametrize(("operation", "fault"), [("DescribeEndpointConfig", "access_denied"),
                                                ("DescribeInferenceComponent", "server_error")])
def test_a_model_whose_users_cannot_all_be_read_is_never_called_unused(models_home: Path, operation: str,
                                                                       fault: str) -> None:
    Emulator.faults.arm("sagemaker", operation, fault, times=10)  # more than botocore's retries
    report = models_home / "report.json"
    done = _audit(models_home, "--format", "json", "--output", str(report))
    doc = json.loads(report.read_text(encoding="utf-8"))
    assert [f for f in doc["findings"] if f["rule"] == "model-unused"] == [], done.stderr
    said = [e["message"] for e in doc["errors"] if operation in e["message"]]
    assert said, doc["errors"]
    if fault == "access_denied":  # a refusal stops the kind in the region: no model is listed
        assert doc["models"]["models"] == [] and "(models)" in said[0]
    else:  # a description that failed: the models are listed, not judged
        assert doc["models"]["summary"] == {"models": 4, "unused": 0, "not_judged": 4}
        assert all(m["used_by"] is None for m in doc["models"]["models"]) and "(models not judged)" in said[0]


@pytest.mark.parametrize(("toml", "error"), [
    ('[models]\nenabled = "yes"\n', "models.enabled must be true or false, got 'yes'"),
    ("[models]\nenabld = true\n", "unknown key models.enabld (known: enabled)"),
    ("[rules.model-unused]\nmin_age_days = -1\n", "rules.model-unused.min_age_days must be from 0 to 3650, got -1"),
], ids=["type", "unknown-key", "rule-bound"])
def test_the_config_reads_the_example_kinds_section_and_rule_like_any(tmp_path: Path, toml: str, error: str) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text(toml, encoding="utf-8")
    done = _audit(tmp_path, "--format", "json")
    assert (done.returncode, done.stderr) == (1, f"error: {config}: {error}\n")


def test_audit_config_shows_the_example_kinds_settings(tmp_path: Path) -> None:
    config = tmp_path / "auditor.toml"
    config.write_text("[models]\nenabled = false\n", encoding="utf-8")
    done = _cli(tmp_path, "config", "--config", str(config))
    assert done.returncode == 0, done.stderr
    shown = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()
             if line.startswith(("models.", "rules.model-unused."))}
    assert shown == {"models.enabled": "false", "rules.model-unused.enabled": "true",
                     "rules.model-unused.skip_endpoints": "[]", "rules.model-unused.min_age_days": "30.0"}


def _granted(policy: str) -> set[str]:
    document = json.loads((ROOT / "deploy" / policy).read_text(encoding="utf-8"))
    return {a for s in document["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}


def test_the_example_kinds_iam_actions_are_the_audits_and_applys_but_not_the_shipped_policies() -> None:
    probe = ("import json; from auditor.kinds.registry import audit_actions; "
             "from auditor.act import apply_policy_actions; "
             "print(json.dumps([sorted(audit_actions()), sorted(apply_policy_actions())]))")
    done = subprocess.run([sys.executable, "-c", probe], env=_env(EXAMPLE), capture_output=True, text=True,
                          timeout=120, check=True)
    audit, apply = (set(actions) for actions in json.loads(done.stdout))
    assert audit >= EXAMPLE_ACTIONS
    # The shipped policies are the built-in kinds' (tests/test_deploy.py, tests/test_apply.py): a
    # plug-in kind's actions are granted by whoever installs it, as its distribution documents.
    assert audit - _granted("iam-policy.json") == EXAMPLE_ACTIONS - _granted("iam-policy.json")
    # (DescribeModel is the endpoints kind's too since consolidate-onto-components reads models, and
    # apply reads them before a consolidation passes their role.)
    assert {"sagemaker:ListModels"} <= audit - _granted("iam-policy.json")
    assert apply - _granted("iam-apply-policy.json") == {"sagemaker:DeleteModel", "sagemaker:ListEndpointConfigs"}


def test_no_file_of_the_auditor_names_the_example_kind() -> None:
    # The example's package is the only code of the kind: the auditor, its templates and its
    # policies never name it, and pytest's own process does not see it.
    assert "models" not in {k.key for k in KINDS}
    named = [str(p.relative_to(ROOT)) for top in ("auditor", "templates", "deploy")
             for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix in {".py", ".j2", ".json", ".yaml"}
             and re.search(r"auditor_example_kind|model-unused|ModelsSection", p.read_text(encoding="utf-8"))]
    assert named == []


def _broken_distribution(where: Path, entry: str) -> Path:
    info = where / "broken_kind-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-kind\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry}\n", encoding="utf-8")
    return where


def test_a_plugin_that_cannot_be_loaded_is_one_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "auditor.toml").write_text("", encoding="utf-8")
    plugins = _broken_distribution(tmp_path / "site", "gpus = broken_kind.kind:KIND")
    done = _audit(tmp_path, "--format", "json", paths=(plugins,))
    assert done.returncode == 1
    assert done.stderr == ('error: plug-in kind "gpus" (broken_kind.kind:KIND, distribution broken-kind 0.1) '
                           "cannot be loaded: ModuleNotFoundError: No module named 'broken_kind'\n")


# What the in-process checks below load (entry points name an importable object).
NOT_A_KIND = object()
SUMMARY = replace(HYPERPOD, key="summary", rules=(), settings={})
GPUS = replace(HYPERPOD, key="gpus", rules=(), settings={}, templates={}, targets={}, bindings={}, evidence={},
               verifiers={})
RULE_TAKEN = replace(GPUS, key="gpus_rules", rules=HYPERPOD.rules)
SECTION_TAKEN = replace(GPUS, key="gpus_email", settings={"email": object})
CORE_TEMPLATES = replace(GPUS, key="gpus_html", templates={"html": "kind_hyperpod.html.j2"})
TYPE_TAKEN = replace(GPUS, key="gpus_nodes", targets=HYPERPOD.targets)


def _entry(name: str, value: str) -> EntryPoint:
    return EntryPoint(name, value, ENTRY_POINT_GROUP)


@pytest.mark.parametrize(("entries", "message"), [
    ([_entry("gpus", "test_example_kind:NOT_A_KIND")],
     'plug-in kind "gpus" (test_example_kind:NOT_A_KIND) is not a ResourceKind (it loads a object)'),
    ([_entry("gpu", "test_example_kind:GPUS")],
     "plug-in kind \"gpu\" (test_example_kind:GPUS) loads the kind 'gpus': the entry point is named after its "
     "kind's key"),
    ([_entry("hyperpod", "auditor.kinds.hyperpod.kind:KIND")],
     "plug-in kind \"hyperpod\" (auditor.kinds.hyperpod.kind:KIND): a kind with the key 'hyperpod' is already "
     "registered"),
    ([_entry("gpus", "test_example_kind:GPUS"), _entry("gpus", "test_example_kind:GPUS_AGAIN")],
     "plug-in kind \"gpus\" (test_example_kind:GPUS_AGAIN): a kind with the key 'gpus' is already registered"),
    ([_entry("summary", "test_example_kind:SUMMARY")],
     "plug-in kind \"summary\" (test_example_kind:SUMMARY): the key 'summary' cannot be a section of the report"),
    ([_entry("gpus_rules", "test_example_kind:RULE_TAKEN")],
     "plug-in kind \"gpus_rules\" (test_example_kind:RULE_TAKEN): rule 'hyperpod-idle-nodes' is already registered"),
    ([_entry("gpus_email", "test_example_kind:SECTION_TAKEN")],
     "plug-in kind \"gpus_email\" (test_example_kind:SECTION_TAKEN): config section [email] is already defined"),
    ([_entry("gpus_html", "test_example_kind:CORE_TEMPLATES")],
     "plug-in kind \"gpus_html\" (test_example_kind:CORE_TEMPLATES): template 'kind_hyperpod.html.j2' is not in "
     "its package"),
    ([_entry("gpus_nodes", "test_example_kind:TYPE_TAKEN")],
     "plug-in kind \"gpus_nodes\" (test_example_kind:TYPE_TAKEN): resource type 'hyperpod-cluster' is another "
     "kind's to apply"),
    ([_entry("gpus", "test_example_kind:MISSING")],
     'plug-in kind "gpus" (test_example_kind:MISSING) cannot be loaded: AttributeError:'),
], ids=["not-a-kind", "named-otherwise", "built-in-key", "twice", "reserved-key", "rule-taken", "section-taken",
         "templates-outside", "type-taken",
         "missing"])
def test_a_plugin_that_cannot_be_registered_is_refused_by_name(entries: list[EntryPoint], message: str) -> None:
    with pytest.raises(KindPluginError) as refused:
        plugin_kinds(entries, KINDS)
    assert str(refused.value).startswith(message)


GPUS_AGAIN = GPUS


def test_plugin_kinds_load_in_name_order() -> None:
    loaded = plugin_kinds([_entry("summary_gpus", "test_example_kind:SUMMARY_GPUS"),
                           _entry("gpus", "test_example_kind:GPUS")], KINDS)
    assert [k.key for k in loaded] == ["gpus", "summary_gpus"]


SUMMARY_GPUS = replace(GPUS, key="summary_gpus")


APPLY_ROLE = f"arn:aws:iam::{ACCOUNT_ID}:role/SageMakerAuditorApply"


def test_audit_apply_deletes_the_unused_model_and_the_next_run_verifies_it(models_home: Path) -> None:
    history, config, report = models_home / "history.sqlite3", models_home / "auditor.toml", models_home / "r.json"
    config.write_text(f'{CONFIG}\n[history]\npath = "{history}"\n\n[apply]\nrole_arn = "{APPLY_ROLE}"\n'
                      'resources = ["forgotten"]\n', encoding="utf-8")
    run = ("run", "--config", str(config), "--format", "json", "--output", str(report))
    done = _cli(models_home, *run)
    assert done.returncode == 0, done.stderr
    (plan_id,) = [p["id"] for p in json.loads(report.read_text(encoding="utf-8"))["plans"]
                  if p["resource"]["name"] == "forgotten"]
    done = _cli(models_home, "apply", plan_id, "--yes", "--config", str(config))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"plan {plan_id} applied: model forgotten deleted" in done.stdout
    sagemaker = boto3.client("sagemaker", region_name=REGION)
    assert sorted(m["ModelName"] for m in sagemaker.list_models()["Models"]) == ["fresh", "ranker-model", "served"]
    # The next run no longer sees it: the change is verified.
    done = _cli(models_home, *run)
    assert done.returncode == 0, done.stderr
    with History(history, reading=True) as store:
        (applied,) = store.applied()
    assert (applied.outcome, applied.verified_run_id is not None) == ("applied", True)


def test_a_model_named_by_a_configuration_made_since_the_audit_is_not_deleted(models_home: Path) -> None:
    history, config, report = models_home / "history.sqlite3", models_home / "auditor.toml", models_home / "r.json"
    config.write_text(f'{CONFIG}\n[history]\npath = "{history}"\n\n[apply]\nrole_arn = "{APPLY_ROLE}"\n'
                      'resources = ["forgotten"]\n', encoding="utf-8")
    done = _cli(models_home, "run", "--config", str(config), "--format", "json", "--output", str(report))
    assert done.returncode == 0, done.stderr
    (plan_id,) = [p["id"] for p in json.loads(report.read_text(encoding="utf-8"))["plans"]
                  if p["resource"]["name"] == "forgotten"]
    sagemaker = boto3.client("sagemaker", region_name=REGION)
    sagemaker.create_endpoint_config(EndpointConfigName="revived", ProductionVariants=[
        {"VariantName": "main", "ModelName": "forgotten", "InstanceType": "ml.m5.large", "InitialInstanceCount": 1}])
    done = _cli(models_home, "apply", plan_id, "--yes", "--config", str(config))
    assert done.returncode != 0
    assert "model forgotten is named by endpoint configuration revived, made since the audit's window ended" \
        in done.stderr, done.stderr
    assert "forgotten" in {m["ModelName"] for m in sagemaker.list_models()["Models"]}
