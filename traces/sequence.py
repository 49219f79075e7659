"""``trace render --style sequence``: a trace as a message sequence chart.

A lane (a vertical line) per participant, one row per step: the step's number and action at
the left, each lane's notes (what changed there) at the row, and every message as an arrow
from the row of the step that sent it, in the sender's lane, to the row of the step that
received it, in the receiver's lane.  A lost message ends in a cross at the row where it was
lost; one still in flight at the end runs to the last row.

The model draws nothing itself: it answers the optional protocol member ``sequence(steps)``
(``steps`` the ``(action name, variables as describe wrote them)`` of every state) with lanes,
messages and notes, which this module checks and lays out.  Without that member, a sequence
chart cannot be drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from kraftcheck.checker.config import ConfigError

from .render import BAD, HEADER, escape, render_graph, too_big_to_draw
from .text import excerpt
from .trace import Trace

#: Colours: messages, lost ones, notes.
MESSAGE = "#1f5fa8"
LOST = "#b03a2e"
NOTE = "#fff7d6"


@dataclass(frozen=True)
class Message:
    label: str
    sender: str
    receiver: str
    sent: int
    delivered: int | None
    lost: bool


@dataclass(frozen=True)
class Chart:
    lanes: list[str]
    messages: list[Message]
    #: (step, lane) -> the notes of that lane at that step, in order
    notes: dict[tuple[int, str], list[str]]


class ChartStep(NamedTuple):
    """One state of a trace as the model's ``sequence(steps)`` gets it."""

    #: the action that led to the state (``Init`` for the first), or None when the trace does not say
    action: str | None
    #: the variables, as the model's ``describe`` names them
    values: dict
    #: the action's parameters, decoded
    params: list
    #: the step as the trace shows it: the model's label, else ``Name(p1, p2)``
    label: str


def model_sequence(model: Any):
    """The model's ``sequence`` member, if it has one."""
    member = getattr(model, "sequence", None) if model is not None else None
    return member if callable(member) else None


def chart_of(trace: Trace, model: Any) -> Chart:
    """The model's chart of ``trace``, checked; bad input when the model draws none or when it
    does not take the trace's states (``ValueError`` from the model: an edited trace)."""
    member = model_sequence(model)
    if member is None:
        raise ConfigError("a sequence chart needs a model that draws one (the model's sequence member); "
                          "this trace's model does not, or none was given (--model MODULE:FACTORY)")
    steps = [ChartStep(step.action, dict(step.values), list(step.params), step.label) for step in trace.steps]
    try:
        drawn = member(steps)
    except ValueError as e:
        raise ConfigError(f"the model's sequence chart does not take {trace.path}: {excerpt(e)}") from None
    return _checked(drawn, len(trace.steps))


def _checked(drawn: Any, steps: int) -> Chart:
    """The model's answer as a :class:`Chart`; ``ModelProtocolError`` when it is malformed."""
    from kraftcheck.checker.protocol import ModelProtocolError

    def bad(what: str):
        return ModelProtocolError(f"the model's sequence() returned {what}")

    if not isinstance(drawn, dict):
        raise bad(f"a {type(drawn).__name__}, not a dict of lanes, messages and notes")
    lanes = drawn.get("lanes")
    if not isinstance(lanes, list) or not lanes or not all(isinstance(lane, str) for lane in lanes) \
            or len(set(lanes)) != len(lanes):
        raise bad("no list of distinct lane names")
    messages = []
    for m in drawn.get("messages", []):
        if not isinstance(m, dict) or m.get("sender") not in lanes or m.get("receiver") not in lanes \
                or not isinstance(m.get("label"), str) or not _step(m.get("sent"), steps) \
                or not (m.get("delivered") is None or _step(m.get("delivered"), steps)):
            raise bad(f"a message it cannot draw: {excerpt(repr(m))}")
        messages.append(Message(m["label"], m["sender"], m["receiver"], m["sent"], m["delivered"], bool(m.get("lost"))))
    notes: dict[tuple[int, str], list[str]] = {}
    for n in drawn.get("notes", []):
        if not isinstance(n, dict) or n.get("lane") not in lanes or not _step(n.get("step"), steps) \
                or not isinstance(n.get("text"), str):
            raise bad(f"a note it cannot draw: {excerpt(repr(n))}")
        notes.setdefault((n["step"], n["lane"]), []).append(n["text"])
    return Chart(lanes, messages, notes)


def _step(value: Any, steps: int) -> bool:
    return type(value) is int and 0 <= value < steps


def sequence_graph(trace: Trace, chart: Chart):
    """The graphviz ``Digraph`` of the chart: rows of steps, columns of lanes."""
    import graphviz

    graph = graphviz.Digraph("sequence", graph_attr={
        "rankdir": "TB", "fontname": "Helvetica", "label": "<" + escape(trace.title) + ">", "labelloc": "t",
        "nodesep": "0.5", "ranksep": "0.25", "bgcolor": "white", "newrank": "true",
    }, node_attr={"fontname": "Helvetica", "fontsize": "10"}, edge_attr={"fontname": "Helvetica", "fontsize": "9"})
    rows = len(trace.steps)
    columns = ["step"] + [f"lane{k}" for k in range(len(chart.lanes))]
    # the heads of the columns
    with graph.subgraph() as head:
        head.attr(rank="same")
        head.node("head_step", "", shape="plaintext")
        for k, lane in enumerate(chart.lanes):
            head.node(f"head_lane{k}", f"<<B>{escape(lane)}</B>>", shape="box", style="filled", fillcolor=HEADER)
    for i, step in enumerate(trace.steps):
        with graph.subgraph() as row:
            row.attr(rank="same")
            last = i == rows - 1 and trace.verdict
            text = f"<B>{step.number}</B>  {escape(step.label)}"
            if i == rows - 1 and trace.loop_note:  # a lasso: where the behaviour goes on for ever
                text += f'<BR ALIGN="LEFT"/><I>{escape(trace.loop_note)}</I>'
            if i == trace.loop and rows > 1:
                text += '<BR ALIGN="LEFT"/><I>(the loop starts here)</I>'
            if last:
                text += f'<BR ALIGN="LEFT"/><FONT COLOR="{BAD}"><B>{escape(trace.verdict)}</B></FONT>'
            row.node(f"r{i}_step", f"<{text}<BR ALIGN=\"LEFT\"/>>", shape="plaintext")
            for k, lane in enumerate(chart.lanes):
                said = chart.notes.get((i, lane))
                if said:
                    label = "<" + "<BR/>".join(escape(n) for n in said) + ">"
                    row.node(f"r{i}_lane{k}", label, shape="note", style="filled", fillcolor=NOTE, margin="0.05,0.02")
                else:
                    row.node(f"r{i}_lane{k}", "", shape="point", width="0.06")
            for a, b in zip(columns, columns[1:]):  # keep the columns in order
                row.edge(f"r{i}_{a}", f"r{i}_{b}", style="invis")
    for column in columns:  # the lifelines
        top = "head_step" if column == "step" else f"head_{column}"
        previous = top
        for i in range(rows):
            style = "invis" if column == "step" else "dashed"
            graph.edge(previous, f"r{i}_{column}", style=style, arrowhead="none", weight="100", color="#9aa8bd")
            previous = f"r{i}_{column}"
    lane_column = {lane: f"lane{k}" for k, lane in enumerate(chart.lanes)}
    for number, m in enumerate(chart.messages):
        start = f"r{m.sent}_{lane_column[m.sender]}"
        label = f"<{escape(m.label)}>"
        if m.delivered is not None and not m.lost:
            graph.edge(start, f"r{m.delivered}_{lane_column[m.receiver]}", xlabel=label, color=MESSAGE,
                       fontcolor=MESSAGE, constraint="false")
            continue
        # lost, or still in flight at the end: the arrow ends in a mark of its own at that row
        end_row = m.delivered if m.delivered is not None else rows - 1
        mark = f"m{number}"
        with graph.subgraph() as row:
            row.attr(rank="same")
            if m.lost:
                row.node(mark, f'<<FONT COLOR="{LOST}"><B>✕ lost</B></FONT>>', shape="plaintext")
            else:
                row.node(mark, "<<I>in flight</I>>", shape="plaintext")
            row.node(f"r{end_row}_step")
        graph.edge(start, mark, xlabel=label, color=LOST if m.lost else MESSAGE, fontcolor=LOST if m.lost else MESSAGE,
                   style="dashed" if m.lost else "solid", constraint="false")
    return graph


def render_sequence(trace: Trace, out, fmt: str, model: Any = None):
    """Draw ``trace`` as a sequence chart in ``fmt`` (``.svg``, ``.png`` or ``.dot``); a trace too
    big to draw is bad input for ``.svg`` and ``.png``, as for the state style."""
    reason = too_big_to_draw(trace) if fmt != "dot" else None
    if reason is not None:
        raise ConfigError(f"{trace.path} {reason}: write {Path(out).with_suffix('.dot').name} instead")
    return render_graph(sequence_graph(trace, chart_of(trace, model)), out, fmt)
