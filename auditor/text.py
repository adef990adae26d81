"""One line of text from a value the auditor did not write (a tag value, a name, AWS's or a server's
message, a setting): the one sanitiser every output and every check uses.

It is the lowest module of the package: it imports nothing of auditor, so that the renderer, delivery,
apply, the config checks and the CLI all share one definition of what may not appear in a line.
"""

from __future__ import annotations

import re

# What can start a line of its own, drive a terminal, or disguise the text around it:
# - C0 controls (LF, CR, VT, FF, tab, ESC, the separators \x1c-\x1f...) and DEL;
# - C1 controls \x80-\x9f: NEL (\x85) is a line break, and CSI (\x9b) starts an escape sequence in
#   terminals that read 8-bit controls;
# - the Unicode line and paragraph separators U+2028 and U+2029;
# - the bidirectional embeddings, overrides and isolates U+202A-202E and U+2066-2069: one in a name
#   reverses what follows it on the line in a terminal, a mail or a chat client, so that a figure or
#   a command reads as something else ("Trojan Source", CVE-2021-42574). Right-to-left text shows
#   without them (the bidi algorithm orders it); the marks U+200E, U+200F and U+061C, which only
#   steer the character beside them, are kept;
# - lone surrogates U+D800-DFFF (an undecodable byte of a file name or an environment variable): no
#   encoder writes them, so printing one would fail.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
ELLIPSIS = "…"


def one_line(value: str, limit: int | None = None) -> str:
    """`value` as one line of plain text: every character of CONTROL becomes a space; with `limit`,
    at most `limit` characters, a cut one ending in an ellipsis."""
    text = CONTROL.sub(" ", value)
    return text if limit is None else clipped(text, limit)


def one_line_words(value: str, limit: int | None = None) -> str:
    """`value` as one_line, with each run of spaces (line breaks, tabs, controls) as one space and none
    at either end: a message shown inside a sentence."""
    text = " ".join(one_line(value).split())
    return text if limit is None else clipped(text, limit)


def clipped(value: str, limit: int) -> str:
    """At most `limit` (at least 1) characters: a longer value cut, its last character an ellipsis."""
    if limit < 1:
        raise ValueError(f"a limit is at least 1 character, got {limit}")
    return value if len(value) <= limit else value[: limit - 1] + ELLIPSIS


def printable(value: str) -> bool:
    """True when `value` holds no character of CONTROL (a setting that must be one line of text)."""
    return CONTROL.search(value) is None
