"""Trace content made safe to print, draw or put in a page: the one escaping rule of the readers.

A trace is data from anyone.  Its strings may hold terminal escape sequences (which clear
the screen or retitle the window), carriage returns and newlines (which draw a fake line
of output), bidirectional overrides (which show text in another order than it is read),
NUL (which makes ``dot`` fail) or lone surrogates (which no encoder takes).  :func:`visible`
turns each such character into a visible escape, ``\\x1b`` or ``\\u202e``; everything
else, other scripts included, stays as it is.  :func:`excerpt` also cuts a value an error
line echoes; :func:`escape_label` readies text for a graphviz label.  This module imports
nothing heavy: the Kafka model's picture uses it, and Spark workers import the model.
"""

from __future__ import annotations

import html
import re
from typing import Any

#: Longest piece of trace content an error line echoes.
EXCERPT_LIMIT = 80

# C0 controls and DEL, C1 controls, the bidirectional marks, embeddings, overrides and
# isolates (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), the line and paragraph
# separators (a line break to some terminals) and lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match) -> str:
    c = match.group()
    if c in _NAMED:
        return _NAMED[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def visible(text: Any) -> str:
    """``text`` with every control character, bidirectional control and lone surrogate
    written as a visible escape (``\\x1b``, ``\\n``, ``\\u202e``)."""
    return _UNSAFE.sub(_escape, str(text))


def excerpt(text: Any, limit: int = EXCERPT_LIMIT) -> str:
    """:func:`visible` text cut to ``limit`` characters, the cut marked with an ellipsis."""
    text = str(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = visible(text)
    if len(text) > limit:  # escapes lengthen it
        text = text[: limit - 1] + "…"
    return text


def escape_label(text: Any) -> str:
    """Text for a graphviz HTML-like label: :func:`visible`, then markup characters, quotes and
    brackets as entities."""
    # brackets as entities too: dot misreads a "]" right after a closing tag
    return (html.escape(visible(text), quote=True).replace("&#x27;", "&#39;")
            .replace("[", "&#91;").replace("]", "&#93;"))
