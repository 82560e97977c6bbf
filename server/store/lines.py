"""What a one-line value (a front-matter value, a MEMORY.md line) may hold (docs/safety.md)."""

from __future__ import annotations

import regex

# Never written into front matter or an index line: NUL and the other C0/C1 controls
# (a NUL makes the file unreadable), and the bidi controls that reorder how a line is
# shown (U+202A-U+202E, U+2066-U+2069, U+200E/F, U+061C: "Trojan Source").
_UNSAFE_IN_A_LINE = regex.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"
)


def plain_line(value: str) -> str:
    """`value` without control and bidi characters (docs/safety.md): what front matter and
    MEMORY.md lines hold."""
    return _UNSAFE_IN_A_LINE.sub("", value)
