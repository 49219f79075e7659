"""``trace show``: a trace in the terminal, one block per step, the action and only what changed."""

from __future__ import annotations

import os
import sys
from typing import IO, Iterator

from .text import excerpt, visible
from .trace import ABSENT, LABEL_LIMIT, Trace, format_value, listed_changes

#: Longest value shown on one line; longer ones are cut with an ellipsis.
VALUE_LIMIT = 160

#: A line as segments of text, each with a rich style ("" for none).
Line = list[tuple[str, str]]


def show_trace(trace: Trace, file: IO[str] | None = None, color: bool | None = None) -> None:
    """Print ``trace``: the first state in full, then for each step the action and the changed fields.

    Trace content goes out as plain text, never as rich markup, so brackets in it are shown,
    and through :func:`visible`, so that its control characters cannot drive the terminal.
    Colours go to a terminal (or where ``color`` asks); anything else gets the plain lines
    written directly, which keeps a trace of 200,000 states to seconds."""
    out = file if file is not None else sys.stdout
    if color is None:
        color = _is_terminal(out)
    if not color:
        write = out.write
        for line in _lines(trace):
            write("".join(text for text, _ in line) + "\n")
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=out, highlight=False, force_terminal=True, soft_wrap=True, emoji=False)
    for line in _lines(trace):
        text = Text()
        for segment, style in line:
            text.append(segment, style=style or None)
        console.print(text)


def _is_terminal(out: IO[str]) -> bool:
    """Whether colours go to ``out``: a terminal, unless ``NO_COLOR`` says otherwise (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return out.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _lines(trace: Trace) -> Iterator[Line]:
    yield [(visible(trace.title), "bold")]
    if trace.meaning:
        yield [(visible(trace.meaning), "italic")]
    total = len(trace.steps)
    explained: set[str] = set()
    for step in trace.steps:
        yield [(f"── {step.number}/{total} ", "dim"), (visible(step.label), "bold cyan")]
        meaning = trace.action_meaning(step.action)
        if meaning and step.action not in explained:  # each action's meaning once, where it first occurs
            explained.add(step.action)
            yield [(f"   {visible(meaning)}", "dim italic")]
        if step.index == 0:
            for variable in trace.variables:
                if variable in step.values:
                    yield [("   ", ""), (excerpt(variable, LABEL_LIMIT), "bold"), (" = ", ""),
                           (visible(format_value(step.values[variable], VALUE_LIMIT)), "")]
            continue
        previous = trace.steps[step.index - 1].values
        if not step.changed:
            yield [("   nothing changed", "dim")]
        for variable in step.changed:
            changes, more = listed_changes(previous.get(variable), step.values[variable])
            for path, before, after in changes:
                where = ("   ", ""), (excerpt(variable + path, LABEL_LIMIT), "bold")
                if before is ABSENT:
                    yield [*where, (" + ", "green"), (visible(format_value(after, VALUE_LIMIT)), "green")]
                elif after is ABSENT:
                    yield [*where, (" - ", "red"), (visible(format_value(before, VALUE_LIMIT)), "red")]
                else:
                    yield [*where, (": ", ""), (visible(format_value(before, VALUE_LIMIT)), "red"), (" → ", "dim"),
                           (visible(format_value(after, VALUE_LIMIT)), "green")]
            if more:
                yield [(f"   … {more:,} more changes of {excerpt(variable, LABEL_LIMIT)}", "dim")]
    if trace.loop_note:
        yield [(trace.loop_note, "bold")]
    if trace.verdict:
        yield [(visible(trace.verdict), "bold red")]
