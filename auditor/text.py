"""Text from outside made safe for one line of output (the core's sanitiser: any layer may use it).

Placeholder until the text-sanitiser work lands: the same `one_line` as auditor.report.render's,
which the kinds' write side cannot import (the report sits above the kinds)."""

from __future__ import annotations

import re

# C0 and C1 control characters, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(value: str) -> str:
    """A user-supplied string (tag value, name, message) that cannot start a line of its own in
    plain text or a terminal: every control character (CR, LF, tab, ESC...) becomes a space."""
    return _CONTROL.sub(" ", value)
