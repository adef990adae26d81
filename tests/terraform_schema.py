"""Terraform text checked against the provider's own schema, as `terraform validate` would: parsed with
python-hcl2, then every block and argument walked against hashicorp/aws 5.100.0's resource schemas
(tests/data/terraform-aws-5.100.0-schema-subset.json: `terraform providers schema -json` for the
resources a plan can emit).

python-hcl2 keeps a string's quotes and escapes (`"a$${b}"`), marks each block with `__is_block__`,
and writes a bare expression (a reference) as `${...}`; the checks read those forms.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import hcl2

SCHEMA_FILE = Path(__file__).parent / "data" / "terraform-aws-5.100.0-schema-subset.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())["resource_schemas"]
_META = {"__is_block__", "__start_line__", "__end_line__", "__comments__", "__inline_comments__"}
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


def parse(text: str) -> dict[str, Any]:
    return hcl2.loads(text)


def resources(text: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(type, name, body) of each `resource` block."""
    found = []
    for item in parse(text).get("resource", []):
        for kind, named in item.items():
            if kind in _META:
                continue
            for name, body in named.items():
                if name not in _META:
                    found.append((_unquote_name(kind), _unquote_name(name), body))
    return found


def problems(text: str) -> list[str]:
    """What `terraform validate` would refuse in `text`, one line each (empty: valid)."""
    parsed = parse(text)
    found = [f"top-level {key!r}: only resource blocks are emitted" for key in parsed
             if key not in ("resource", *_META)]
    for kind, name, body in resources(text):
        if kind not in SCHEMA:
            found.append(f"{kind}.{name}: not a resource type of the provider's schema subset")
            continue
        found += _check_block(body, SCHEMA[kind]["block"], f"{kind}.{name}")
    return found


def _unquote_name(label: str) -> str:
    return label[1:-1] if label.startswith('"') and label.endswith('"') else label


def string_value(value: Any) -> str:
    """A quoted HCL string's value: escapes decoded, `$${` and `%%{` read as `${` and `%{`."""
    assert isinstance(value, str) and value.startswith('"') and value.endswith('"'), value
    body = value[1:-1]
    out, index = [], 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            code = body[index + 1]
            if code == "u":
                out.append(chr(int(body[index + 2:index + 6], 16)))
                index += 6
                continue
            out.append(_ESCAPES[code])
            index += 2
            continue
        if body.startswith(("$${", "%%{"), index):
            out.append(body[index] + "{")
            index += 3
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _opens_template(quoted: str) -> bool:
    """Whether a quoted string has an unescaped `${` or `%{` (an interpolation or directive), read
    left to right as HCL's scanner does: `$${` and `%%{` are literal, a lone `$` or `%` too."""
    index = 0
    while index < len(quoted):
        if quoted[index] == "\\":
            index += 2
        elif quoted.startswith(("$${", "%%{"), index):
            index += 3
        elif quoted.startswith(("${", "%{"), index):
            return True
        else:
            index += 1
    return False


def _is_block(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and v.get("__is_block__")
                                                           for v in value)


def _check_value(value: Any, kind: Any, where: str) -> list[str]:
    """An attribute's value against its type: maps are objects, lists and sets are lists, a
    primitive is a scalar or a reference; a literal string never opens a template sequence."""
    if isinstance(value, str) and value.startswith("${"):
        return []  # a reference to another resource's attribute: its type is that attribute's
    if isinstance(value, str) and value.startswith('"') and _opens_template(value):
        return [f"{where}: a literal string with an unescaped template sequence: {value}"]
    if isinstance(kind, list) and kind[0] == "map":
        if not isinstance(value, dict) or value.get("__is_block__"):
            return [f"{where}: a map attribute written as a {'block' if _is_block(value) else type(value).__name__}"]
        return [p for v in value.values() for p in _check_value(v, kind[1], f"{where}[]")]
    if isinstance(kind, list) and kind[0] in ("list", "set"):
        if not isinstance(value, list) or _is_block(value):
            return [f"{where}: a {kind[0]} attribute written as {type(value).__name__}"]
        return [p for v in value for p in _check_value(v, kind[1], f"{where}[]")]
    if isinstance(value, dict | list):
        return [f"{where}: a {kind} attribute written as a {'block' if _is_block(value) else type(value).__name__}"]
    if kind == "number" and (isinstance(value, bool) or not isinstance(value, int | float)):
        return [f"{where}: a number attribute written as {value!r}"]
    if kind == "bool" and not isinstance(value, bool):
        return [f"{where}: a bool attribute written as {value!r}"]
    return []


def _check_block(body: dict[str, Any], schema: dict[str, Any], where: str) -> list[str]:
    attributes = schema.get("attributes") or {}
    blocks = schema.get("block_types") or {}
    found = []
    for key, value in body.items():
        if key in _META:
            continue
        path = f"{where}.{key}"
        if key in attributes:
            spec = attributes[key]
            if not (spec.get("required") or spec.get("optional")):
                found.append(f"{path}: computed by the provider, cannot be set")
            if _is_block(value):
                found.append(f"{path}: an attribute written as a block (expected `{key} = ...`)")
                continue
            found += _check_value(value, spec.get("type"), path)
        elif key in blocks:
            spec = blocks[key]
            if not _is_block(value):
                found.append(f"{path}: a nested block written as an attribute (expected `{key} {{ ... }}`)")
                continue
            if spec.get("max_items") and len(value) > spec["max_items"]:
                found.append(f"{path}: {len(value)} blocks, at most {spec['max_items']}")
            for index, item in enumerate(value):
                found += _check_block(item, spec["block"], f"{path}[{index}]")
        else:
            found.append(f"{path}: not an argument or block of this schema")
    for key, spec in attributes.items():
        if spec.get("required") and key not in body:
            found.append(f"{where}: the required argument {key} is missing")
    for key, spec in blocks.items():
        count = len(body[key]) if _is_block(body.get(key)) else 0
        if spec.get("min_items") and count < spec["min_items"]:
            found.append(f"{where}: at least {spec['min_items']} {key} block(s) required, {count} written")
    return found
