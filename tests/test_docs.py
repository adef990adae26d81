"""The docs (docs/*.md and the README) hold to the code, both ways: every config key, command,
option, rule, JSON field and IAM action they name exists, and every one the code has is named.
Durations are quoted only as the output of the command that produced them."""

from __future__ import annotations

import ast
import json
import re
import tomllib
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
import typer.main

from auditor.act import apply_policy_actions
from auditor.analyse.rules.base import RuleSettings
from auditor.cli import app
from auditor.kinds.registry import BY_ID, CONFIG_SECTIONS, KINDS, REGISTRY, audit_actions, configurable_rules
from auditor.report.document import report_to_dict
from test_deploy import denied_actions, scheduler_role_actions

# The config's sections: the core's and the kinds' own.
_SECTIONS: dict[str, type] = CONFIG_SECTIONS
ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
PAGES = {p.relative_to(DOCS).as_posix(): p.read_text(encoding="utf-8") for p in sorted(DOCS.rglob("*.md"))}
README = (ROOT / "README.md").read_text(encoding="utf-8")
EVERYWHERE = {**{f"docs/{k}": v for k, v in PAGES.items()}, "README.md": README}

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)


def blocks(text: str, lang: str) -> list[str]:
    return [m.group(1) for m in re.finditer(rf"^```{lang}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)]


def prose(text: str) -> str:
    """The text outside fenced code."""
    return FENCE.sub("", text)


# --- the site ----------------------------------------------------------------------------------


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    nav = re.findall(r":\s+([\w/-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), flags=re.MULTILINE)
    assert sorted(nav) == sorted(PAGES)


def test_the_readme_is_the_front_door() -> None:
    assert len(README.splitlines()) < 250
    for command in ("make demo", "make test", "audit run", "--email", "audit schedule", "deploy/iam-policy.json"):
        assert command in README, command
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert {"docs/configuration.md", "docs/rules.md", "docs/json-report.md", "docs/deployment.md"} <= set(links)
    for link in links:
        assert (ROOT / link).is_file(), link


def test_the_demo_extra_is_what_the_docs_say() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for name, text in EVERYWHERE.items():
        for extra in re.findall(r"pip install '[^'\[]*\[(\w+)\]'", text):
            assert extra in extras, f"{name}: extra [{extra}]"
        assert "pip install 'sagemaker-auditor[" not in text, f"{name}: the package is not on PyPI"


# --- (a) configuration keys --------------------------------------------------------------------

CONFIG_PAGE = PAGES["configuration.md"]


def _reference_block() -> str:
    found = [b for b in blocks(CONFIG_PAGE, "toml") if b.startswith("[aws]")]
    assert len(found) == 1, "configuration.md has one ```toml block starting with [aws]: the reference"
    return found[0]


def _shown_keys(block: str) -> dict[str, set[str]]:
    """Section -> the keys the block shows, set or commented out (`# key = value`)."""
    shown: dict[str, set[str]] = {}
    section = ""
    for line in block.splitlines():
        if header := re.match(r"^\[([\w.-]+)\]", line):
            section = header.group(1)
            shown.setdefault(section, set())
        elif key := re.match(r"^#?\s*([a-z_]+)\s*=", line):
            shown[section].add(key.group(1))
    return shown


# Keys whose dataclass default is None ("not set") and whose effect is a value the docs show.
EFFECTIVE_DEFAULTS = {"email.ses_region": ("us-east-1", "auditor/deliver/mail.py", 'email.ses_region or "us-east-1"')}


def _same(documented: Any, default: Any) -> bool:
    if isinstance(default, tuple):
        default = list(default)
    if default is None:
        return documented == ""  # shown as "" where the code has None: unset
    return bool(documented == default)


def test_the_config_reference_shows_every_key_of_every_section_with_its_default() -> None:
    block = _reference_block()
    shown = _shown_keys(block)
    values = tomllib.loads(block)
    for name, cls in _SECTIONS.items():
        assert name in shown, f"[{name}] is not in the configuration reference"
        assert shown[name] == {f.name for f in fields(cls)}, f"[{name}]"
        defaults = cls()
        for key, value in values[name].items():
            if f"{name}.{key}" in EFFECTIVE_DEFAULTS:
                shown_default, path, code = EFFECTIVE_DEFAULTS[f"{name}.{key}"]
                assert value in (shown_default, "") and code in (ROOT / path).read_text(), f"{name}.{key}"
                continue
            code_default = getattr(defaults, key)
            assert _same(value, code_default), f"{name}.{key}: docs {value!r}, code {code_default!r}"
    assert set(shown) - {"rules"} - {s for s in shown if s.startswith("rules.")} == set(_SECTIONS)


def test_the_config_reference_shows_every_rule_setting() -> None:
    shown = _shown_keys(_reference_block())
    tables = {s.removeprefix("rules."): keys for s, keys in shown.items() if s.startswith("rules.")}
    assert set(tables) == {r.id for r in configurable_rules()}
    common = {f.name for f in fields(RuleSettings)}
    assert common <= set().union(*tables.values())
    for rule_id, keys in tables.items():
        own = {f.name for f in fields(BY_ID[rule_id].settings)}
        assert keys <= own, f"[rules.{rule_id}] {keys - own} are not settings"
        assert own - common <= keys, f"[rules.{rule_id}] does not show {own - common - keys}"


@pytest.mark.parametrize("name", sorted(EVERYWHERE))
def test_every_config_key_the_docs_show_exists(name: str) -> None:
    for block in blocks(EVERYWHERE[name], "toml"):
        for section, keys in _shown_keys(block).items():
            if section.startswith("rules."):
                rule = BY_ID.get(section.removeprefix("rules."))
                assert rule is not None and rule.settings is not None, f"{name}: [{section}]"
                known = {f.name for f in fields(rule.settings)}
            else:
                assert section in _SECTIONS, f"{name}: [{section}]"
                known = {f.name for f in fields(_SECTIONS[section])}
            assert keys <= known, f"{name}: [{section}] {keys - known}"
    # `section.key` in the prose: the section exists and has the key.
    if name == "docs/json-report.md":
        return  # `jobs.processing` there is a path in the JSON document
    for section, key in re.findall(r"`(?:\[)?([a-z]+)(?:\])?\.([a-z_]+)`", prose(EVERYWHERE[name])):
        if section in _SECTIONS:
            assert key in {f.name for f in fields(_SECTIONS[section])}, f"{name}: {section}.{key}"


# --- (b) commands and options ------------------------------------------------------------------


def _commands() -> dict[tuple[str, ...], set[str]]:
    """Command path (() for `audit` itself) -> its options, the --no- forms included."""
    out: dict[tuple[str, ...], set[str]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:  # typer's own click
        out[path] = {o for p in command.params if p.param_type_name == "option"
                     for o in (*p.opts, *p.secondary_opts) if o.startswith("--")}
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return out


COMMANDS = _commands()
BENCH_FLAGS = set(re.findall(r"\"(--[a-z-]+)\"", "".join(p.read_text() for p in (ROOT / "bench").glob("*.py"))))
OTHER_TOOLS = {"--strict", "--help"}  # mkdocs build --strict; every command's --help
# pytest's options as `make test` passes them (the development page quotes its command).
OTHER_TOOLS |= {flag for line in (ROOT / "Makefile").read_text().splitlines() if "pytest" in line.lower()
                for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", line)}
# The AWS CLI commands apply prints to remove what a failed apply left (auditor.act), and those of a
# plan's CLI text (auditor/report/change_text.py): their options.
OTHER_TOOLS |= {flag for module in ("act/cleanup", "act/execute", "act/restore", "report/change_text")
                for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*",
                                       (ROOT / "auditor" / f"{module}.py").read_text())}


def _snippets(text: str) -> list[str]:
    """The code the page shows: inline code spans outside fences, and the lines of fenced blocks."""
    spans = re.findall(r"`([^`]+)`", prose(text))
    lines = [line for block in FENCE.findall(text) for line in block.splitlines()]
    return spans + lines


def _mentions(text: str) -> list[tuple[tuple[str, ...], list[str]]]:
    """Every `audit <command> ...` in the code a page shows, with the options written after it."""
    found = []
    for snippet in _snippets(text):
        parts = re.split(r"(?<![\w-])(?=audit(?:\s|$))", snippet)
        for part in parts[1:]:
            words = part.split()[1:]
            path: tuple[str, ...] = ()
            while words and (*path, words[0]) in COMMANDS:
                path, words = (*path, words[0]), words[1:]
            command_line = re.match(r"(\S*/)?audit\s", snippet.strip()) is not None
            if command_line and words and re.fullmatch(r"[a-z][a-z-]+", words[0]) and not path:
                found.append(((words[0],), []))  # not a command: the test names it
                continue
            found.append((path, re.findall(r"--[a-z][a-z-]*", " ".join(words))))
    return found


def _documented_options() -> set[tuple[tuple[str, ...], str]]:
    """(command, option) pairs the docs name: after `audit <command>` in code, and in an option
    table (rows starting with an option) under the last `audit <command>` before it."""
    pairs = set()
    for text in EVERYWHERE.values():
        for path, flags in _mentions(text):
            pairs.update((path, f) for f in flags)
        current: tuple[str, ...] | None = None
        for line in prose(text).splitlines():
            mentioned = [p for p, _ in _mentions(line)]
            if mentioned:
                current = mentioned[-1]
            if line.startswith("| `--") and current is not None:
                pairs.update((current, f) for f in re.findall(r"--[a-z][a-z-]*", line.split("|")[1]))
    return pairs


@pytest.mark.parametrize("name", sorted(EVERYWHERE))
def test_every_command_and_option_the_docs_name_exists(name: str) -> None:
    every_option = set().union(*COMMANDS.values())
    for path, flags in _mentions(EVERYWHERE[name]):
        assert path in COMMANDS, f"{name}: `audit {' '.join(path)}` is not a command"
        for flag in flags:
            assert flag in COMMANDS[path] or flag == "--help", f"{name}: `audit {' '.join(path)}` has no {flag}"
    for flag in re.findall(r"(?<![\w-])--[a-z][a-z-]*", "\n".join(_snippets(EVERYWHERE[name]))):
        assert flag in every_option | BENCH_FLAGS | OTHER_TOOLS, f"{name}: {flag} is an option of nothing"


def test_every_command_and_option_is_documented() -> None:
    documented = _documented_options()
    for path, options in COMMANDS.items():
        if path and not options and any(p[:len(path)] == path and p != path for p in COMMANDS):
            continue  # a group (audit prices): its subcommands are documented
        mentioned = any(p == path for text in PAGES.values() for p, _ in _mentions(text))
        assert mentioned, f"`audit {' '.join(path)}` is not on any docs page"
        for option in options:
            assert (path, option) in documented, f"`audit {' '.join(path)} {option}` is not documented"


def test_the_choices_the_docs_give_for_an_option_are_the_codes() -> None:
    from auditor.cli import ChangeFormat, HistoryFormat, OutputFormat
    from auditor.models import RiskLevel

    lists = {(flag, frozenset(values.replace("\\", "").split("|")))
             for text in EVERYWHERE.values()
             for flag, values in re.findall(r"(--[a-z-]+)[ =]([a-z]+(?:\\?\|[a-z]+)+)", text)}
    report, history = frozenset(OutputFormat), frozenset(HistoryFormat)
    assert ("--format", report) in lists and ("--format", history) in lists
    for flag, values in lists:
        if flag == "--format":
            assert values in (report, history), f"--format {'|'.join(sorted(values))}"
        elif flag == "--as":
            assert values == frozenset(ChangeFormat), f"--as {'|'.join(sorted(values))}"
        elif flag == "--max-risk":
            assert values == frozenset(RiskLevel), f"--max-risk {'|'.join(sorted(values))}"
        else:
            assert (flag, values) == ("--file-format", {"json", "csv"}), flag
            assert "must be json or csv" in (ROOT / "auditor" / "cli.py").read_text()


# --- (c) rules ---------------------------------------------------------------------------------


def test_the_rule_table_lists_every_registered_rule() -> None:
    listed = re.findall(r"^\| `([a-z-]+)` \|", PAGES["rules.md"], flags=re.MULTILINE)
    assert sorted(listed) == sorted(r.id for r in REGISTRY)


@pytest.mark.parametrize("name", sorted(EVERYWHERE))
def test_every_rule_id_in_a_threshold_tag_or_rule_table_exists(name: str) -> None:
    text = EVERYWHERE[name]
    for rule_id in re.findall(r"auditor:([a-z-]+):threshold", text) + re.findall(r"\[rules\.([a-z-]+)\]", text):
        assert rule_id in BY_ID, f"{name}: rule {rule_id}"


# --- (d) the JSON report -----------------------------------------------------------------------

JSON_PAGE = PAGES["json-report.md"]
# Maps whose keys are data (tag names, rule evidence, hyperparameters...), not fields of the schema.
FREE_FORM = {"tags", "evidence", "details", "hyperparameters", "final_metrics", "setting", "api_calls_by_operation",
             "cost_per_run_by_instance_type", "policies", "autoscaling", "params"}
# The functions that build the JSON document (auditor/report/document.py, auditor/records.py and each
# kind's to_dict).
JSON_BUILDERS = {
    "auditor/report/document.py": {"prices_to_dict", "settings_to_dict", "_document"},
    "auditor/records.py": {"_option", "plan_to_dict", "finding_to_dict", "call_to_dict", "risk_to_dict",
                           "change_to_dict", "resource_to_dict"},
    "auditor/values.py": {"utilization_summary"},
    "auditor/report/headline.py": {"summary_figures"},
    "auditor/kinds/endpoints/kind.py": {"to_dict", "_autoscaling", "_metrics_config", "_instance"},
    "auditor/kinds/endpoints/plans.py": {"basis_to_dict", "shared_subject"},
    "auditor/kinds/jobs/kind.py": {"to_dict"},
    "auditor/kinds/workspaces/kind.py": {"to_dict"},
    "auditor/kinds/hyperpod/kind.py": {"to_dict"},
    "auditor/kinds/hyperpod/report.py": {"assessment_json"},
}


def _schema_block() -> str:
    found = re.findall(r"^```text\n(\{\n.*?\n\})\n```", JSON_PAGE, flags=re.MULTILINE | re.DOTALL)
    assert len(found) == 1, "json-report.md has one ```text { ... } ``` schema block"
    return found[0]


def _documented_fields(schema: str) -> set[str]:
    """The field names a part of the schema block names: descriptions in parentheses, quoted
    values and <placeholders> left out, and the keys inside free-form maps ({...} after their name)."""
    text = re.sub(r'"[^"\n]*"', "", schema)
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\([^()]*\)", "", text)
    text = re.sub(r"<[^<>]*>", "", text)
    text = re.sub(rf"\b({'|'.join(FREE_FORM)})\s*\{{[^{{}}]*\}}", r"\1", text)
    return set(re.findall(r"\b[a-z][a-z0-9_]*\b", text)) - {"null", "true", "false"}


def _top_level(schema: str) -> dict[str, str]:
    """Top-level key -> its part of the schema block, in the block's order."""
    parts: dict[str, str] = {}
    key = None
    for line in schema.splitlines()[1:-1]:
        if top := re.match(r"^  ([a-z_]+):", line):
            key = top.group(1)
            parts[key] = ""
        assert key is not None, line
        parts[key] += line[len(key) + 3:] if top else "\n" + line
    return parts


def _keys(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            found.add(key)
            if key not in FREE_FORM:
                found |= _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= _keys(inner)
    return found


def _keys_in_code() -> set[str]:
    """The string keys of the dict displays in the functions that build the JSON document."""
    keys: set[str] = set()
    for path, names in JSON_BUILDERS.items():
        tree = ast.parse((ROOT / path).read_text())
        functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in names]
        assert {f.name for f in functions} == names, path
        for function in functions:
            for node in ast.walk(function):
                if isinstance(node, ast.Dict):
                    keys |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
                elif isinstance(node, ast.DictComp) and isinstance(node.value, ast.Dict):
                    keys |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return keys


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    from auditor.collect.session import ApiCallCounter
    from fleet_report import synthetic_report

    # the counts of retried answers, as a run reports them
    report = replace(synthetic_report(count=24), call_problems=ApiCallCounter().problem_counts())
    return json.loads(json.dumps(report_to_dict(report)))


def test_the_schema_lists_the_top_level_keys_in_the_documents_order(document: dict[str, Any]) -> None:
    assert list(_top_level(_schema_block())) == list(document)
    assert {k.key for k in KINDS} <= set(document)


def test_every_field_of_a_real_report_is_documented_in_its_section(document: dict[str, Any]) -> None:
    parts = _top_level(_schema_block())
    for key, value in document.items():
        missing = _keys(value) - _documented_fields(parts[key])
        assert not missing, f"JSON `{key}`: fields not documented: {sorted(missing)}"


def test_every_documented_field_is_in_the_code_and_every_field_of_the_code_is_documented(
        document: dict[str, Any]) -> None:
    documented = _documented_fields(_schema_block())
    in_code = _keys_in_code() | _keys(document) | {k.key for k in KINDS}
    assert not documented - in_code, f"documented, but no such field: {sorted(documented - in_code)}"
    assert not in_code - documented, f"in the report, not documented: {sorted(in_code - documented)}"


def test_every_recommendation_action_is_in_the_schema() -> None:
    """The actions the rules advise (Recommendation's first argument) are the schema's choices; a plan
    can also combine two (recommend/plans.py), which no finding advises."""
    actions, combined = set(), set()
    for path in (ROOT / "auditor").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Recommendation":
                first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "action"), None)
                if isinstance(first, ast.Constant):
                    (combined if path.name == "plans.py" else actions).add(first.value)
    assert {"resize", "delete", "shrink-group"} <= actions and combined
    schema = _top_level(_schema_block())
    for action in actions:
        assert f'"{action}"' in schema["findings"], f"findings: action {action}"
    for action in actions | combined:
        assert f'"{action}"' in schema["plans"], f"plans: action {action}"


# --- (e) IAM actions ---------------------------------------------------------------------------

ACTION = re.compile(r"\b(?:sagemaker|cloudwatch|ec2|eks|pricing|ce|sts|organizations|ses|application-autoscaling|iam"
                    r"|scheduler):[A-Z][A-Za-z]+\b")
# In a policy's Condition: not actions.
CONDITION_KEYS = {"iam:PassedToService", "iam:AWSServiceName", "sagemaker:TaggingAction", "ses:FromAddress"}


def actions_named(text: str) -> set[str]:
    return set(ACTION.findall(text)) - CONDITION_KEYS


def test_the_deployment_page_shows_the_policies_and_they_are_what_the_code_declares() -> None:
    """The audit's read-only policy (what the kinds declare) and apply's (auditor.act)."""
    page = PAGES["deployment.md"]
    policy = json.loads((ROOT / "deploy" / "iam-policy.json").read_text())
    apply_policy = json.loads((ROOT / "deploy" / "iam-apply-policy.json").read_text())
    shown = [json.loads(b) for b in blocks(page, "json") if '"Version"' in b]
    assert shown == [policy, apply_policy], "deployment.md shows both policies as they are"
    assert actions_named(page) == (set(audit_actions()) | apply_policy_actions() | scheduler_role_actions()
                                   | denied_actions())


@pytest.mark.parametrize("name", sorted(EVERYWHERE))
def test_every_iam_action_the_docs_name_is_needed(name: str) -> None:
    needed = set(audit_actions()) | apply_policy_actions() | scheduler_role_actions() | denied_actions()
    assert actions_named(EVERYWHERE[name]) <= needed, name


# --- (f) timings -------------------------------------------------------------------------------

# A duration: a number and a unit of time. Measured ones are quoted only inside a fenced block right
# under `<!-- produced by: COMMAND -->`, COMMAND being what printed them.
DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|secs?|seconds?|minutes?|min|ms)\b")
PRODUCED = re.compile(r"^<!-- produced by: (.+?) -->\n```[^\n]*\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)
# Durations that are settings, limits or an example of wording, not measurements; each is checked
# against what it states.
NOT_MEASURED = {
    "30 minutes + 0.6 s per endpoint": ("auditor/limits.py",
                                        ["BASE_DEADLINE_SECONDS = 30 * 60", "SECONDS_PER_ENDPOINT = 0.6"]),
    "give the process 30 s to finish": ("deploy/systemd/sagemaker-auditor-nightly.service", ["TimeoutStopSec=30"]),
    "the age must end above 60 s": ("auditor/kinds/endpoints/rules/rising_queue_latency.py",
                                    ['"ApproximateAgeOfOldestRequest": 60.0']),
    '("rose from 12 s to 448 s")': ("auditor/kinds/endpoints/rules/rising_queue_latency.py", ["rose from"]),
    "an allowance of 40 minutes": ("auditor/config.py", ["PROVISIONING_ALLOWANCE_SECONDS = 2400"]),
    "in-progress in the last 10 minutes": ("auditor/act/cleanup.py", ["RUNNING_APPLY = timedelta(minutes=10)"]),
    "+1 from the alarm's threshold, cooldown 300 s": ("auditor/kinds/endpoints/rules/async_scale_from_zero.py",
                                                       ['"Cooldown": 300', '"ScalingAdjustment": 1']),
    "Maximum, cooldown 60 s": ("auditor/kinds/endpoints/rules/component_scale_to_zero.py",
                               ['"MetricAggregationType": "Maximum", "Cooldown": 60']),
}


def _produced_command_exists(command: str) -> bool:
    words = command.split()
    if "make" in words:
        target = words[words.index("make") + 1]
        return re.search(rf"^{re.escape(target)}:", (ROOT / "Makefile").read_text(), flags=re.MULTILINE) is not None
    at = [i for i, w in enumerate(words) if w == "audit" or w.endswith("/audit")]
    return bool(at) and len(words) > at[0] + 1 and (words[at[0] + 1],) in COMMANDS


@pytest.mark.parametrize("name", sorted(EVERYWHERE))
def test_durations_are_quoted_from_the_command_that_produced_them(name: str) -> None:
    text = EVERYWHERE[name]
    for produced in PRODUCED.finditer(text):
        assert _produced_command_exists(produced.group(1)), f"{name}: produced by {produced.group(1)!r}"
    rest = PRODUCED.sub("", text)
    # config examples state settings (the reference's comments give ranges and formulas)
    rest = re.sub(r"^```toml\n.*?^```", "", rest, flags=re.MULTILINE | re.DOTALL)
    rest = re.sub(r"\s+", " ", rest)
    for allowed in NOT_MEASURED:
        rest = rest.replace(allowed, "")
    stray = [m.group(0) for m in DURATION.finditer(rest)]
    assert not stray, f"{name}: durations not under a `<!-- produced by: ... -->` block: {stray}"


def test_the_durations_that_are_not_measurements_say_what_the_code_does() -> None:
    everything = "\n".join(EVERYWHERE.values())
    for phrase, (path, facts) in NOT_MEASURED.items():
        assert re.sub(r"\s+", " ", phrase) in re.sub(r"\s+", " ", everything), phrase
        source = (ROOT / path).read_text()
        for fact in facts:
            assert fact in source, f"{phrase!r}: {path} no longer has {fact!r}"
