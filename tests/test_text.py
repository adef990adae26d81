"""The one text sanitiser (auditor/text.py): whatever a hostile string holds, what it gives is one line
of printable text within its bound; and the outputs that use it (the headline, chat posts, Markdown
cells, a plan's change as CloudFormation, Terraform or CLI text) keep that property end to end."""

from __future__ import annotations

import ast
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.deliver.chat import slack_escape, teams_escape
from auditor.report.change_text import plan_line, render_change
from auditor.report.headline import headline
from auditor.report.render import md_cell
from auditor.schema import HEADER, HTTP_URL, printable
from auditor.text import CONTROL, ELLIPSIS, clipped, one_line, one_line_words

# The bidirectional embeddings, overrides and isolates: they reorder what follows them on the line.
BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Every character Python (and so a terminal, a mail client or a chat) breaks a line at.
LINE_BREAKS = set("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def unsafe(char: str) -> bool:
    """The sanitiser's set, said independently of its regular expression: controls (C0, DEL, C1), the
    line and paragraph separators, the bidi controls, and lone surrogates."""
    return unicodedata.category(char) in ("Cc", "Zl", "Zp", "Cs") or char in BIDI_CONTROLS


# Any code point, lone surrogates included, with the dangerous ones drawn often.
HOSTILE_CHARS = st.one_of(st.characters(exclude_categories=()),
                          st.sampled_from(sorted(LINE_BREAKS | BIDI_CONTROLS | set("\x00\x1b\x7f\x9b\ud800\t"))))
HOSTILE = st.text(HOSTILE_CHARS, max_size=80)


def assert_one_line(text: str) -> None:
    assert not any(unsafe(c) for c in text), ascii(text)
    assert not LINE_BREAKS & set(text) and len(text.splitlines()) <= 1


@given(HOSTILE)
def test_one_line_replaces_exactly_the_unsafe_characters_each_with_a_space(value: str) -> None:
    assert one_line(value) == "".join(" " if unsafe(c) else c for c in value)
    assert_one_line(one_line(value))
    assert printable(one_line(value))
    assert printable(value) == (one_line(value) == value)


@given(HOSTILE, st.integers(min_value=1, max_value=100))
def test_one_line_with_a_limit_is_within_it_and_says_when_it_cut(value: str, limit: int) -> None:
    shown = one_line(value, limit)
    assert_one_line(shown) and len(shown) <= limit
    whole = one_line(value)
    assert shown == whole if len(whole) <= limit else shown == whole[: limit - 1] + ELLIPSIS


@given(HOSTILE, st.one_of(st.none(), st.integers(min_value=1, max_value=100)))
def test_one_line_words_has_single_spaces_and_no_space_at_either_end(value: str, limit: int | None) -> None:
    shown = one_line_words(value, limit)
    assert_one_line(shown)
    assert "  " not in shown and shown == shown.strip()
    assert limit is None or len(shown) <= limit
    assert shown.split() == one_line(value).split() or shown.endswith(ELLIPSIS)


def test_the_set_is_the_documented_one() -> None:
    assert {chr(c) for c in range(0x110000) if CONTROL.match(chr(c))} == {
        chr(c) for c in range(0x110000) if unsafe(chr(c))}
    # Marks that only steer the character beside them, and right-to-left text, are kept.
    assert one_line("\u200e\u200f\u061c שלום مرحبا") == "\u200e\u200f\u061c שלום مرحبا"


def test_a_limit_below_one_character_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        clipped("abc", 0)


@settings(max_examples=60)
@given(HOSTILE)
def test_the_outputs_that_use_it_are_one_line(value: str) -> None:
    for shown in (slack_escape(value), teams_escape(value), md_cell(value)):
        assert_one_line(shown)
    assert len(slack_escape(value, 20).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")) <= 20
    summary = {"findings": 1, "not_judged": 0, "monthly_savings_usd": 1.0, "unread": [value], "partial": value}
    assert_one_line(headline(summary, prefix=value))


@given(HOSTILE)
def test_a_setting_with_an_unsafe_character_is_refused(value: str) -> None:
    if any(unsafe(c) for c in value):
        assert not printable(value)
        assert not HEADER.ok(value)
        assert not HTTP_URL.ok(f"https://hooks.example.com/{value}")


def _plan(text: str) -> dict[str, Any]:
    """A plan whose every free text is `text`, with calls of each kind the change text declares."""
    target = {"ServiceNamespace": "sagemaker", "ResourceId": f"endpoint/{text}/variant/v",
              "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"}
    calls = [
        ("CreateEndpointConfig", {"EndpointConfigName": text, "Tags": [{"Key": text, "Value": text}],
                                  "ProductionVariants": [{"VariantName": text, "ModelName": text,
                                                          "InstanceType": "ml.m5.large", text: text}]}),
        ("PutMetricAlarm", {"AlarmName": text, "AlarmDescription": text, "ComparisonOperator": "GreaterThanThreshold",
                            "EvaluationPeriods": 1, "Dimensions": [{"Name": text, "Value": text}]}),
        ("UpdateEndpoint", {"EndpointName": text, "EndpointConfigName": text, "DeploymentConfig": {
            "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": text}]}}}),
        ("DeregisterScalableTarget", dict(target)),
        ("RegisterScalableTarget", {**target, "MinCapacity": 1, "MaxCapacity": 2}),
        ("PutScalingPolicy", {**target, "PolicyName": text, "PolicyType": "TargetTrackingScaling"}),
        ("PutScheduledAction", {**target, "ScheduledActionName": text, "Schedule": text}),
        ("StopNotebookInstance", {"NotebookInstanceName": text}),
        ("DeleteEndpoint", {"EndpointName": text}),
        (text or "X", {text: text}),
    ]
    return {"id": text, "endpoint": text, "variant": text, "region": "us-east-1", "resource_type": text,
            "proposed": {"advice": text, "action": text}, "monthly_savings_usd": 1.0,
            "risk": {"level": text, "load_test_first": [text], "basis": [text]},
            "change": {"rollback": text, "waits_for": text,
                       "calls": [{"service": "sagemaker", "operation": op, "params": params, "purpose": text}
                                 for op, params in calls]}}


@settings(max_examples=40, deadline=None)
@given(HOSTILE)
def test_a_change_as_text_has_no_line_of_the_datas_own(value: str) -> None:
    plan = _plan(value)
    assert_one_line(plan_line(plan))
    for as_ in ("cloudformation", "terraform", "cli"):
        text = render_change(plan, as_)
        assert text.endswith("\n")
        for line in text[:-1].split("\n"):
            assert_one_line(line)
        if as_ != "cli":  # the comment lines come first, each one line: nothing of the data's opens a line
            assert all(line.startswith(("#", "Resources", '"Resources"', "resource", " ", "}"))
                       for line in text[:-1].split("\n")), text


def test_no_module_defines_a_control_set_of_its_own() -> None:
    """One definition: no other module of the package spells a control-character range."""
    package = Path(__file__).resolve().parent.parent / "auditor"
    spelled = []
    for path in package.rglob("*.py"):
        if path.name == "text.py" and path.parent == package:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                    "\\x00-\\x1f" in node.value or "\x00-\x1f" in node.value or "\u2028" in node.value):
                spelled.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    assert spelled == []


def test_act_does_not_import_the_renderer() -> None:
    package = Path(__file__).resolve().parent.parent / "auditor"
    importing = []
    for path in (package / "act").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("auditor.report"):
                importing.append(f"{path.name}: {node.module}")
    assert importing == []


def test_the_sanitiser_imports_nothing_of_the_auditor() -> None:
    source = (Path(__file__).resolve().parent.parent / "auditor" / "text.py").read_text(encoding="utf-8")
    modules = [n.module or "" for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)]
    modules += [a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in modules if m.startswith("auditor")]
