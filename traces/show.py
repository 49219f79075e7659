"""``trace show``: a trace in the terminal, one block per step, the action and only what changed."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.text import Text

from .text import excerpt, visible
from .trace import ABSENT, LABEL_LIMIT, Trace, format_value, listed_changes

#: Longest value shown on one line; longer ones are cut with an ellipsis.
VALUE_LIMIT = 160


def show_trace(trace: Trace, file: IO[str] | None = None, color: bool | None = None) -> None:
    """Print ``trace``: the first state in full, then for each step the action and the changed fields.

    Trace content goes out as plain ``Text``, never as rich markup, so brackets in it are
    shown, and through :func:`visible`, so that its control characters cannot drive the terminal.
    """
    console = Console(file=file, highlight=False, no_color=color is False, force_terminal=color,
                      soft_wrap=True, emoji=False)
    console.print(Text(visible(trace.title), style="bold"))
    if trace.meaning:
        console.print(Text(visible(trace.meaning), style="italic"))
    total = len(trace.steps)
    explained: set[str] = set()
    for step in trace.steps:
        header = Text()
        header.append(f"── {step.number}/{total} ", style="dim")
        header.append(visible(step.label), style="bold cyan")
        console.print(header)
        meaning = trace.action_meaning(step.action)
        if meaning and step.action not in explained:  # each action's meaning once, where it first occurs
            explained.add(step.action)
            console.print(Text(f"   {visible(meaning)}", style="dim italic"))
        if step.index == 0:
            for variable in trace.variables:
                if variable in step.values:
                    line = Text("   ")
                    line.append(excerpt(variable, LABEL_LIMIT), style="bold")
                    line.append(" = ")
                    line.append(visible(format_value(step.values[variable], VALUE_LIMIT)))
                    console.print(line)
            continue
        previous = trace.steps[step.index - 1].values
        if not step.changed:
            console.print(Text("   nothing changed", style="dim"))
        for variable in step.changed:
            old = previous.get(variable)
            changes, more = listed_changes(old, step.values[variable])
            for path, before, after in changes:
                line = Text("   ")
                line.append(excerpt(variable + path, LABEL_LIMIT), style="bold")
                if before is ABSENT:
                    line.append(" + ", style="green")
                    line.append(visible(format_value(after, VALUE_LIMIT)), style="green")
                elif after is ABSENT:
                    line.append(" - ", style="red")
                    line.append(visible(format_value(before, VALUE_LIMIT)), style="red")
                else:
                    line.append(": ")
                    line.append(visible(format_value(before, VALUE_LIMIT)), style="red")
                    line.append(" → ", style="dim")
                    line.append(visible(format_value(after, VALUE_LIMIT)), style="green")
                console.print(line)
            if more:
                console.print(Text(f"   … {more:,} more changes of {excerpt(variable, LABEL_LIMIT)}", style="dim"))
    if trace.loop_note:
        console.print(Text(trace.loop_note, style="bold"))
    verdict = trace.verdict
    if verdict:
        console.print(Text(visible(verdict), style="bold red"))
