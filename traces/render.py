"""``trace render``: a trace drawn with graphviz, one box per step, what changed highlighted.

Each step is a node whose HTML-like label holds the step's number and action, and below it
the state: the model's own picture when it offers one (the optional ``picture(vars,
previous)`` member of the model protocol, given the variables as ``describe`` wrote them),
else a table of the variables with the changed ones highlighted.  The last node says what
the trace shows (the violated invariant).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from kraftcheck.checker.config import ConfigError

from .text import escape_label, excerpt, visible
from .trace import Step, Trace, format_value

#: Output formats by file extension.
FORMATS = {".svg": "svg", ".png": "png", ".dot": "dot"}
#: Colours shared by every picture: what changed, what is wrong, headers.
CHANGED = "#ffe27a"
BAD = "#d7301f"
HEADER = "#dde6f3"
#: Widest line of a value in the variables table, in characters.
LINE_WIDTH = 90
#: Largest trace file drawn as a picture, in bytes.  Drawing takes time and memory in
#: proportion (a 60 MB trace made a 140 MB SVG in 30 s): ``check`` draws no SVG beside a larger
#: trace, ``trace html`` shows its tables only and ``trace render`` writes only ``.dot``.
PICTURE_MAX_BYTES = 5_000_000
#: Most states a picture draws (the state style, the sequence chart, the page's pictures).
PICTURE_MAX_STATES = 1_000

Picture = Callable[[dict, "dict | None"], str]


def output_format(path: str) -> str:
    """The format an output file name asks for; bad input when it is none we write."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigError(f"unknown output format {suffix or '(none)'!r} for {path} (expected .svg, .png or .dot)")
    return FORMATS[suffix]


#: Text for a graphviz HTML-like label, escaped (the one rule of :mod:`.text`).
escape = escape_label


def note(message: str) -> None:
    """One line on stderr about how something was drawn; the command still succeeds."""
    print(f"kraftcheck: note: {visible(message)}", file=sys.stderr)


def too_big_to_draw(trace: Trace) -> str | None:
    """Why ``trace`` is too big to draw (``"is 6.1 MB, more than ..."``), or None.

    Drawing is bounded by states as well as bytes: a trace of many tiny states is small on disk
    and still keeps ``dot`` busy for minutes."""
    states = len(trace.steps)
    if states > PICTURE_MAX_STATES:
        return f"holds {states:,} states, more than a picture may take ({PICTURE_MAX_STATES:,})"
    try:
        size = os.stat(trace.path).st_size
    except OSError:
        return None
    if size > PICTURE_MAX_BYTES:
        return f"is {megabytes(size)}, more than a picture may take ({megabytes(PICTURE_MAX_BYTES)})"
    return None


def megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def model_picture(model: Any) -> Picture | None:
    """The model's picture hook, if it has one."""
    picture = getattr(model, "picture", None) if model is not None else None
    return picture if callable(picture) else None


# ------------------------------------------------------------------------- labels


def variables_table(step: Step, previous: Step | None, variables: list[str]) -> str:
    """The generic picture: one row per variable, the changed ones highlighted."""
    rows = []
    for name in variables:
        if name not in step.values:
            continue
        changed = previous is not None and name in step.changed
        bg = f' BGCOLOR="{CHANGED}"' if changed else ""
        lines = _wrap(format_value(step.values[name]), LINE_WIDTH)
        value = '<BR ALIGN="LEFT"/>'.join(escape(line) for line in lines) + '<BR ALIGN="LEFT"/>'
        name_html = f"<B>{escape(name)}</B>" if changed else escape(name)
        rows.append(f'<TR><TD ALIGN="LEFT" VALIGN="TOP"{bg}>{name_html}</TD>'
                    f'<TD ALIGN="LEFT" BALIGN="LEFT"{bg}>{value}</TD></TR>')
    if not rows:
        rows.append('<TR><TD>(no variables)</TD></TR>')
    return f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">{"".join(rows)}</TABLE>'


def _wrap(text: str, width: int) -> list[str]:
    lines = []
    while len(text) > width:
        cut = text.rfind(", ", 0, width)
        cut = cut + 2 if cut > width // 3 else width
        lines.append(text[:cut])
        text = text[cut:]
    lines.append(text)
    return lines


def step_bodies(trace: Trace, model: Any = None) -> list[str]:
    """The state of every step as an HTML-like label fragment (a ``<TABLE>``): the model's
    picture (:func:`pictures`), else the table of variables."""
    return pictures(trace, model) or [
        variables_table(step, trace.steps[step.index - 1] if step.index > 0 else None, trace.variables)
        for step in trace.steps]


def pictures(trace: Trace, model: Any) -> list[str] | None:
    """Every step drawn by the model's picture hook; None without one.

    A picture hook that raises ``ValueError`` says the values are no state of its model (an
    edited or malformed trace): then None too, with a note, and the trace is drawn as tables."""
    picture = model_picture(model)
    if picture is None:
        return None
    drawn = []
    for step in trace.steps:
        previous = trace.steps[step.index - 1] if step.index > 0 else None
        try:
            drawn.append(picture(dict(step.values), dict(previous.values) if previous is not None else None))
        except ValueError as e:
            note(f"drawing the variables only: the model's picture does not take state {step.number} "
                 f"of {trace.path}: {excerpt(e)}")
            return None
    return drawn


def step_label(trace: Trace, step: Step, body: str) -> str:
    """The whole node of one step: header (number, action, changed variables), state, verdict."""
    last = step.index == len(trace.steps) - 1
    changed = ""
    if step.index > 0:
        changed = ", ".join(step.changed) if step.changed else "nothing"
        changed = f'<BR ALIGN="LEFT"/><FONT POINT-SIZE="10">changed: {escape(changed)}</FONT>'
    header = (f'<TR><TD ALIGN="LEFT" BALIGN="LEFT" BGCOLOR="{HEADER}"><B>{step.number}</B>  '
              f'{escape(step.label)}{changed}</TD></TR>')
    body = f'<TR><TD ALIGN="LEFT">{body}</TD></TR>'
    footer = ""
    if last and trace.verdict:
        meaning = f'<BR ALIGN="LEFT"/><I>{escape(trace.meaning)}</I>' if trace.meaning else ""
        footer = (f'<TR><TD ALIGN="LEFT" BALIGN="LEFT" BGCOLOR="{BAD}"><FONT COLOR="white"><B>{escape(trace.verdict)}</B>'
                  f'{meaning}</FONT></TD></TR>')
    color = BAD if last and trace.verdict else "#555555"
    return (f'<<TABLE BORDER="2" COLOR="{color}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="4">'
            f"{header}{body}{footer}</TABLE>>")


# ------------------------------------------------------------------------- the graph


def trace_graph(trace: Trace, model: Any = None, steps: list[int] | None = None):
    """The graphviz ``Digraph`` of a trace (or of some of its steps), top to bottom."""
    import graphviz

    bodies = step_bodies(trace, model)
    graph = graphviz.Digraph("trace", graph_attr={
        "rankdir": "TB", "fontname": "Helvetica", "label": "<" + escape(trace.title) + ">", "labelloc": "t",
        "nodesep": "0.3", "ranksep": "0.3", "bgcolor": "white",
    }, node_attr={"shape": "plain", "fontname": "Helvetica", "fontsize": "11"},
        edge_attr={"color": "#555555", "arrowsize": "0.7"})
    indices = list(range(len(trace.steps))) if steps is None else steps
    for i in indices:
        graph.node(f"s{i}", step_label(trace, trace.steps[i], bodies[i]))
    for a, b in zip(indices, indices[1:]):
        graph.edge(f"s{a}", f"s{b}")
    last = len(trace.steps) - 1
    if trace.loop is not None and last in indices and trace.loop in indices:  # a lasso
        graph.edge(f"s{last}", f"s{trace.loop}", label="<loop>", style="dashed", constraint="false")
    return graph


def state_graph(body: str):
    """The graphviz ``Digraph`` of one step's state alone (the page's picture of a step), from
    its :func:`step_bodies` entry."""
    import graphviz

    graph = graphviz.Digraph("state", graph_attr={"bgcolor": "white", "margin": "0"},
                             node_attr={"shape": "plain", "fontname": "Helvetica", "fontsize": "11"})
    graph.node("state", f"<{body}>")
    return graph


def dot_available() -> bool:
    return shutil.which("dot") is not None


def render_graph(graph, out: str | Path, fmt: str) -> Path:
    """Write a graphviz graph as ``fmt``: the source for ``dot``, else drawn by ``dot``."""
    content = graph.source.encode("utf-8") if fmt == "dot" else pipe(graph, fmt)
    return write_output(out, content)


def write_output(out: str | Path, content: bytes) -> Path:
    """Write an output file; bad input when it cannot be written."""
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(content)
    except OSError as e:
        raise ConfigError(f"cannot write {out}: {e.strerror}") from None
    return out


def pipe(graph, fmt: str) -> bytes:
    """The graph drawn by graphviz's ``dot``; bad input when ``dot`` is missing or fails."""
    return run_dot(graph.source, fmt)


def run_dot(source: str, fmt: str) -> bytes:
    """``dot -Tfmt`` on a graphviz source; bad input when it fails."""
    if not dot_available():
        raise ConfigError(f"drawing .{fmt} needs graphviz's dot, which is not installed "
                          "(apt-get install graphviz); .dot output works without it")
    try:
        return subprocess.run(["dot", f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True,
                              check=True, timeout=600).stdout
    except subprocess.CalledProcessError as e:
        message = e.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ConfigError(f"dot failed: {message[0] if message else f'exit code {e.returncode}'}") from None


def compact_graph(trace: Trace, model: Any = None):
    """The compact picture of a trace, the default: the violation at the top, the first state
    drawn in full (the model's picture, else its table), then each step as its number, action
    and only what it changed, as ``trace show`` lists it."""
    import graphviz

    from .trace import ABSENT, listed_changes

    graph = graphviz.Digraph("trace", graph_attr={
        "rankdir": "TB", "fontname": "Helvetica", "label": "<" + escape(trace.title) + ">", "labelloc": "t",
        "nodesep": "0.2", "ranksep": "0.15", "bgcolor": "white",
    }, node_attr={"shape": "plain", "fontname": "Helvetica", "fontsize": "11"},
        edge_attr={"color": "#555555", "arrowsize": "0.6"})
    names = []
    if trace.verdict:
        meaning = f'<BR ALIGN="LEFT"/><I>{escape(trace.meaning)}</I>' if trace.meaning else ""
        graph.node("verdict", f'<<TABLE BORDER="0" CELLPADDING="6"><TR><TD ALIGN="LEFT" BALIGN="LEFT" BGCOLOR="{BAD}">'
                              f'<FONT COLOR="white"><B>{escape(trace.verdict)}</B>{meaning}</FONT></TD></TR></TABLE>>')
        names.append("verdict")
    first = trace.steps[0]
    drawn = pictures(Trace(trace.path, trace.meta, trace.variables, [first]), model)
    body = drawn[0] if drawn else variables_table(first, None, trace.variables)
    graph.node("s0", f'<<TABLE BORDER="1" COLOR="#555555" CELLBORDER="0" CELLSPACING="0" CELLPADDING="4">'
                     f'<TR><TD ALIGN="LEFT" BGCOLOR="{HEADER}"><B>{first.number}</B>  {escape(first.label)}</TD></TR>'
                     f'<TR><TD ALIGN="LEFT">{body}</TD></TR></TABLE>>')
    names.append("s0")
    last = len(trace.steps) - 1
    for step in trace.steps[1:]:
        previous = trace.steps[step.index - 1].values
        rows = []
        for variable in step.changed:
            changes, more = listed_changes(previous.get(variable), step.values[variable])
            for path, before, after in changes:
                if before is ABSENT:
                    change = f'<FONT COLOR="#1a7f37">+ {escape(format_value(after)[:LINE_WIDTH])}</FONT>'
                elif after is ABSENT:
                    change = f'<FONT COLOR="{BAD}">− {escape(format_value(before)[:LINE_WIDTH])}</FONT>'
                else:
                    change = (f'<FONT COLOR="{BAD}">{escape(format_value(before)[:LINE_WIDTH])}</FONT> → '
                              f'<FONT COLOR="#1a7f37">{escape(format_value(after)[:LINE_WIDTH])}</FONT>')
                rows.append(f'<TR><TD ALIGN="LEFT"><B>{escape(variable + path)}</B></TD><TD ALIGN="LEFT">{change}</TD></TR>')
            if more:
                rows.append(f'<TR><TD ALIGN="LEFT" COLSPAN="2"><I>… {more:,} more changes of {escape(variable)}</I></TD></TR>')
        if not rows:
            rows.append('<TR><TD ALIGN="LEFT" COLSPAN="2"><I>nothing changed</I></TD></TR>')
        color = BAD if step.index == last and trace.verdict else "#555555"
        graph.node(f"s{step.index}", f'<<TABLE BORDER="1" COLOR="{color}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3">'
                                     f'<TR><TD ALIGN="LEFT" COLSPAN="2" BGCOLOR="{HEADER}"><B>{step.number}</B>  '
                                     f'{escape(step.label)}</TD></TR>{"".join(rows)}</TABLE>>')
        names.append(f"s{step.index}")
    for a, b in zip(names, names[1:]):
        graph.edge(a, b, style="invis" if a == "verdict" else "solid")
    if trace.loop is not None:  # a lasso
        graph.edge(f"s{last}", f"s{trace.loop}", label="<loop>", style="dashed", constraint="false")
    return graph


def render_trace(trace: Trace, out: str | Path, fmt: str, model: Any = None, compact: bool = True) -> Path:
    """Draw ``trace`` as ``fmt``.  A trace too big to draw (:func:`too_big_to_draw`) is bad
    input for ``.svg`` and ``.png``; its ``.dot`` source is still written."""
    reason = too_big_to_draw(trace) if fmt != "dot" else None
    if reason is not None:
        raise ConfigError(f"{trace.path} {reason}: write {Path(out).with_suffix('.dot').name} instead, "
                          "or read it with trace show")
    graph = compact_graph(trace, model) if compact else trace_graph(trace, model)
    return render_graph(graph, out, fmt)


def svg_path_for(itf_path: str | Path) -> Path:
    """``X.svg`` for ``X.itf.json``."""
    itf_path = Path(itf_path)
    return itf_path.with_name(itf_path.name.removesuffix(".json").removesuffix(".itf") + ".svg")


def svg_beside(itf_path: str | Path, model: Any, picture: bool = True) -> Path | None:
    """Draw ``X.itf.json`` as ``X.svg`` beside it with ``model``'s picture, for ``check``.

    None when ``picture`` is False (``check --no-picture``), when ``dot`` is missing, when the
    trace is larger than :data:`PICTURE_MAX_BYTES` (a note says so) or when the drawing fails
    (the trace is what matters; a warning says why); an older ``X.svg`` never stays beside a
    newer trace."""
    from .trace import load_trace

    out = svg_path_for(itf_path)
    out.unlink(missing_ok=True)
    if not picture or not dot_available():
        return None
    size = os.stat(itf_path).st_size
    if size > PICTURE_MAX_BYTES:  # not even read
        note(f"no picture of {itf_path}: it is {megabytes(size)}, more than a picture may take "
             f"({megabytes(PICTURE_MAX_BYTES)})")
        return None
    trace = load_trace(itf_path)
    reason = too_big_to_draw(trace)
    if reason is not None:
        note(f"no picture of {itf_path}: it {reason}")
        return None
    try:
        return render_trace(trace, out, "svg", model=model)
    except Exception as e:  # a failing picture hook or dot: keep the check's own result
        out.unlink(missing_ok=True)
        print(f"kraftcheck: warning: could not draw {itf_path}: {type(e).__name__}: {excerpt(e)}", file=sys.stderr)
        return None
