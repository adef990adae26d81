"""The declarative layer under the config: each setting is a dataclass field made by `setting()`,
which records its doc line and its bounds (range, choices, a value check); `read_table` turns a
TOML table into the frozen dataclass, type and bounds checked, and `problem` checks one value
(the tag overrides use it too). Every message names the key; a check marked `echo=False` (an
environment variable's name, where a secret may be pasted by mistake) never repeats the value.

Why not pydantic: the whole code reads frozen dataclasses, and pydantic would be a second model
beside them; its messages repeat the input, which a secret must never be; and the checks here are
a few functions, each saying in the project's words what a key must be.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parseaddr
from typing import Any

from auditor.errors import ConfigError
from auditor.text import printable

MAX_ECHO_CHARS = 80  # a value quoted in an error is cut here


@dataclass(frozen=True)
class Check:
    """A test of a string value, with what the value must be when it fails."""

    must: str  # e.g. "must be a time as HH:MM"
    ok: Callable[[str], bool]
    echo: bool = True  # False: the value may be a secret, never quoted


@dataclass(frozen=True)
class Spec:
    doc: str
    minimum: float | None = None  # inclusive
    maximum: float | None = None  # inclusive
    above: float | None = None  # exclusive minimum
    below: float | None = None  # exclusive maximum
    multiple_of: int | None = None
    choices: tuple[str, ...] | None = None
    ignore_case: bool = False  # choices match in any case; the value is kept in lower case
    check: Check | None = None  # for a string, or each string of a list
    unique: bool = True  # a list keeps the first of repeated items
    non_empty: bool = False  # a list must hold at least one item
    within_lookback: bool = False  # days, at most aws.lookback_days (checked with the whole config)

    @property
    def numeric_bounds(self) -> bool:
        return any(b is not None for b in (self.minimum, self.maximum, self.above, self.below))


def setting(default: Any, doc: str, **bounds: Any) -> Any:
    """A config field: its default, the doc line the README repeats, and its bounds (see Spec)."""
    return dataclasses.field(default=default, metadata={"setting": Spec(doc=doc, **bounds)})


def spec_of(field: dataclasses.Field[Any]) -> Spec:
    spec = field.metadata.get("setting")
    if not isinstance(spec, Spec):
        raise TypeError(f"{field.name} is not declared with setting()")
    return spec


@dataclass(frozen=True)
class Key:
    """One key of a settings class, as the schema knows it."""

    name: str
    kind: type  # bool, int, float, str or tuple (of strings)
    optional: bool  # None allowed (unset)
    default: Any
    spec: Spec


_KEYS: dict[type, tuple[Key, ...]] = {}


def keys(cls: type) -> tuple[Key, ...]:
    """The keys of a settings class, in declaration order."""
    if cls not in _KEYS:
        hints = typing.get_type_hints(cls)
        _KEYS[cls] = tuple(Key(f.name, *_kind(hints[f.name]), f.default, spec_of(f)) for f in dataclasses.fields(cls))
    return _KEYS[cls]


def _kind(hint: Any) -> tuple[type, bool]:
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        (inner,) = [a for a in args if a is not type(None)]
        return _kind(inner)[0], True
    if typing.get_origin(hint) is tuple:
        return tuple, False
    if hint in (bool, int, float, str):
        return typing.cast(type, hint), False
    raise TypeError(f"unsupported setting type {hint!r}")


def key_of(cls: type, name: str) -> Key:
    return next(k for k in keys(cls) if k.name == name)


def quote(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_ECHO_CHARS else text[:MAX_ECHO_CHARS - 3] + "..."


def coerce(key: Key, value: Any, where: str) -> Any:
    """A TOML value as the key's type, or ConfigError naming `where` (e.g. "auditor.toml: aws.regions")."""
    if key.kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {_shown(key, value)}")
        return value
    if key.kind is tuple:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{where} must be a list of non-empty strings, got {_shown(key, value)}")
        return tuple(dict.fromkeys(value)) if key.spec.unique else tuple(value)
    if key.kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{where} must be a number, got {_shown(key, value)}")
        if isinstance(value, int) and abs(value) > 1e308:  # too large for a float: out of every range
            return math.inf if value > 0 else -math.inf
        return float(value)
    if key.kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be a whole number, got {_shown(key, value)}")
        return value
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, got {_shown(key, value)}")
    if key.optional and value == "":
        return None  # `profile = ""`: unset, as the README shows it
    if key.spec.ignore_case:
        return value.lower()
    return value


TOML_TYPES = {bool: "true or false", int: "a number", float: "a number", str: "a string", list: "a list",
              dict: "a table"}


def _shown(key: Key, value: Any) -> str:
    if key.spec.check is not None and not key.spec.check.echo:
        return TOML_TYPES.get(type(value), "another type")  # the type, never the value
    return quote(value)


def problem(key: Key, value: Any) -> str | None:
    """What is wrong with a value of the key's type, as "must be ..., got ...", or None."""
    if value is None or key.kind is bool:
        return None
    spec = key.spec
    if key.kind is tuple:
        if spec.non_empty and not value:
            return "must not be empty, got []"
        for item in value:
            wrong = _string_problem(spec, item)
            if wrong:
                return wrong
        return None
    if key.kind is str:
        return _string_problem(spec, value)
    return _number_problem(spec, value)


def _string_problem(spec: Spec, value: str) -> str | None:
    if spec.choices is not None and value not in spec.choices:
        if len(spec.choices) == 2:
            return f'must be "{spec.choices[0]}" or "{spec.choices[1]}", got {quote(value)}'
        return f"must be one of {', '.join(spec.choices)}, got {quote(value)}"
    if spec.check is not None and not spec.check.ok(value):
        return spec.check.must + (f", got {quote(value)}" if spec.check.echo else "")
    if spec.check is None and spec.choices is None and not printable(value):
        return f"must not hold control characters (CR, LF, tab...), got {quote(value)}"
    return None


def _number_problem(spec: Spec, value: float) -> str | None:
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value}"
    shown = quote(value) if isinstance(value, int) else f"{value:g}"  # an int may be too large for a float
    low = spec.minimum if spec.minimum is not None else spec.above
    high = spec.maximum if spec.maximum is not None else spec.below
    fails = ((spec.minimum is not None and value < spec.minimum) or (spec.above is not None and value <= spec.above)
             or (spec.maximum is not None and value > spec.maximum)
             or (spec.below is not None and value >= spec.below))
    if spec.multiple_of and value % spec.multiple_of:
        fails = True
    if not fails:
        return None
    return f"{range_words(spec, low, high)}, got {shown}"


def range_words(spec: Spec, low: float | None, high: float | None) -> str:
    if spec.minimum is not None and spec.maximum is not None:
        words = f"must be from {low:g} to {high:g}"
    else:
        lower = None if low is None else (f"at least {low:g}" if spec.minimum is not None else f"above {low:g}")
        upper = None if high is None else (f"at most {high:g}" if spec.maximum is not None else f"below {high:g}")
        words = "must be " + " and ".join(w for w in (lower, upper) if w)
    return words + (f", a multiple of {spec.multiple_of}" if spec.multiple_of else "")


def read_table(cls: type, table: Mapping[str, Any], name: str, source: str) -> Any:
    """The table `[name]` as an instance of `cls`: unknown keys, types and bounds are errors."""
    known = {k.name: k for k in keys(cls)}
    values: dict[str, Any] = {}
    for key_name, value in table.items():
        key = known.get(key_name)
        if key is None:
            raise ConfigError(f"{source}: unknown key {name}.{quote(key_name)[1:-1]} "
                              f"(known: {', '.join(sorted(known))})")
        where = f"{source}: {name}.{key_name}"
        values[key_name] = coerce(key, value, where)
        wrong = problem(key, values[key_name])
        if wrong:
            raise ConfigError(f"{where} {wrong}")
    return cls(**values)


# --- value checks ---------------------------------------------------------------------------------

ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
ENV_NAME = Check("must be the NAME of an environment variable (letters, digits, _), not its value",
                 lambda v: ENV_NAME_RE.fullmatch(v) is not None, echo=False)

HEADER = Check("must be one line of printable text (no CR, LF or other control characters)",
               lambda v: printable(v) and 0 < len(v) <= 200)

ADDRESS_RE = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*")


def _is_address(value: str) -> bool:
    if not printable(value):
        return False
    address = parseaddr(value)[1]
    if ADDRESS_RE.fullmatch(address) is None:
        return False
    return value.strip() == address or value.strip().endswith(f"<{address}>")


EMAIL = Check('must be an email address ("name@example.com" or "Name <name@example.com>")', _is_address)

REGION_RE = re.compile(r"[a-z]{2}(-[a-z]+)+-\d{1,2}")
REGION = Check('must be an AWS region code such as "us-east-1"', lambda v: REGION_RE.fullmatch(v) is not None)
REGION_OR_ALL = Check('must be AWS region codes such as "us-east-1", or "all"',
                      lambda v: v == "all" or REGION_RE.fullmatch(v) is not None)

ACCOUNT_RE = re.compile(r"[0-9]{12}")
ACCOUNT_ID = Check("must hold 12-digit AWS account ids", lambda v: ACCOUNT_RE.fullmatch(v) is not None)

IAM_NAME_RE = re.compile(r"[A-Za-z0-9+=,.@_/-]{1,512}")
ROLE_NAME = Check("must be an IAM role name (letters, digits and +=,.@_-/)",
                  lambda v: IAM_NAME_RE.fullmatch(v) is not None)
ROLE_ARN_RE = re.compile(r"arn:aws[-a-z]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}")
ACCOUNT_ID_PLACEHOLDER = "{account_id}"
ROLE_ARN = Check("must be an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>)",
                 lambda v: ROLE_ARN_RE.fullmatch(v) is not None)
SNS_TOPIC_ARN_RE = re.compile(r"arn:aws[-a-z]*:sns:[a-z]{2}(-[a-z]+)+-\d{1,2}:[0-9]{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?")
SNS_TOPIC_ARN = Check("must be an SNS topic ARN (arn:aws:sns:<region>:<12-digit account>:<topic>)",
                      lambda v: SNS_TOPIC_ARN_RE.fullmatch(v) is not None)
ROLE_ARN_TEMPLATE = Check(
    'must be a role ARN with {account_id}, e.g. "arn:aws:iam::{account_id}:role/SageMakerAuditorReadOnly"',
    lambda v: ACCOUNT_ID_PLACEHOLDER in v
    and ROLE_ARN_RE.fullmatch(v.replace(ACCOUNT_ID_PLACEHOLDER, "123456789012")) is not None)
ROLE_ARN_MAYBE_TEMPLATE = Check(
    'must be a role ARN, {account_id} allowed, e.g. "arn:aws:iam::{account_id}:role/InferenceRecommender"',
    lambda v: ROLE_ARN_RE.fullmatch(v.replace(ACCOUNT_ID_PLACEHOLDER, "123456789012")) is not None)
EXTERNAL_ID = Check("must be 2 to 1224 characters of letters, digits and +=,.@:/-",
                    lambda v: re.fullmatch(r"[\w+=,.@:/-]{2,1224}", v, flags=re.ASCII) is not None, echo=False)

HOSTNAME = Check("must be a host name or address",
                 lambda v: re.fullmatch(r"[A-Za-z0-9.:_\[\]-]{1,253}", v) is not None)
# AWS tag keys: letters, digits, spaces and _.:/=+-@, at most 128 characters.
TAG_KEY = Check("must be a tag key (at most 128 letters, digits, spaces and _.:/=+-@)",
                lambda v: re.fullmatch(r"[\w .:/=+@-]{1,128}", v) is not None)
HTTP_URL = Check("must be an http(s) URL without spaces",
                 lambda v: re.fullmatch(r"https?://\S+", v) is not None and printable(v))
PATTERN = Check("must be a name pattern of printable characters", lambda v: printable(v) and len(v) <= 256)
PATH = Check("must be a path without control characters", printable)


def _is_route(entry: str) -> bool:
    value, sep, env = entry.rpartition("=")
    return bool(sep and value.strip() and printable(value) and ENV_NAME_RE.fullmatch(env.strip()))


ROUTE = Check('entries must be "<tag value>=<ENVIRONMENT_VARIABLE>" (the NAME of the variable, not the URL)',
              _is_route, echo=False)


def route_table(entries: tuple[str, ...]) -> dict[str, str]:
    """Checked route entries as {tag value: environment variable name}."""
    return {value.strip(): env.strip() for value, _, env in (e.rpartition("=") for e in entries)}


def _schedule_time(value: str) -> bool:
    import schedule

    try:
        schedule.Scheduler().every().day.at(value)
    except (schedule.ScheduleValueError, ValueError):
        return False
    return True


def _schedule_zone(value: str) -> bool:
    import pytz

    # As `schedule` reads it (pytz): "posixrules" is a zoneinfo file but no zone pytz knows.
    try:
        pytz.timezone(value)
    except (pytz.UnknownTimeZoneError, ValueError):
        return False
    return True


SCHEDULE_TIME = Check("must be a time as HH:MM (two digits each, 00:00 to 23:59)",
                      lambda v: printable(v) and _schedule_time(v))
TIME_ZONE = Check('must be a time zone name, e.g. "Europe/Berlin"', _schedule_zone)


def check_instance(instance: Any, name: str, source: str) -> None:
    """Every field of a settings instance within its bounds, else ConfigError naming the first."""
    for key in keys(type(instance)):
        wrong = problem(key, getattr(instance, key.name))
        if wrong:
            raise ConfigError(f"{source}: {name}.{key.name} {wrong}")
