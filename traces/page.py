"""``trace html``: one self-contained page to step through a trace (inline CSS, JS and SVG).

Every step is a section holding its action, what changed, the picture (graphviz SVG, drawn
when ``dot`` is installed) and the table of variables with the changed ones highlighted; a
small script shows one section at a time (buttons, arrow keys, the list of steps) and keeps
the step in the address (``page.html#step-12`` opens at step 12).  Without JavaScript every
section shows, one under the other.

All trace content is escaped here, in Python; the script reads nothing from the trace.  A
Content-Security-Policy allows only the page's own script (by hash) and inline styles, so
the page loads nothing from the network and nothing in a trace can run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from pathlib import Path
from typing import Any

from .render import dot_available, model_picture, note, pictures, run_dot, state_graph, too_big_to_draw, write_output
from .text import visible
from .trace import ABSENT, Step, Trace, format_value, listed_changes

VALUE_LIMIT = 2000

STYLE = """
:root { --changed: #ffe27a; --bad: #d7301f; --ink: #1d2430; --muted: #5b6678; --line: #d5dbe5; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--ink);
       margin: 0; background: #f4f6fa; }
header { padding: 12px 20px; background: #1f3b63; color: white; }
header h1 { font-size: 17px; margin: 0 0 2px; }
header p { margin: 0; color: #c9d6ea; }
nav { position: sticky; top: 0; z-index: 2; display: flex; gap: 10px; align-items: center; padding: 8px 20px;
      background: white; border-bottom: 1px solid var(--line); }
nav button { font: inherit; padding: 4px 12px; border: 1px solid #9aa8bd; border-radius: 4px; background: #eef2f8;
             cursor: pointer; }
nav button:disabled { opacity: .4; cursor: default; }
#position { font-weight: 600; min-width: 8em; }
#current-action { color: var(--muted); font-family: ui-monospace, Menlo, Consolas, monospace; }
main { display: flex; gap: 16px; padding: 16px 20px; align-items: flex-start; }
ol.timeline { list-style: none; margin: 0; padding: 0; min-width: 15em; max-width: 22em; position: sticky;
              top: 56px; max-height: calc(100vh - 70px); overflow: auto; }
ol.timeline button { display: block; width: 100%; text-align: left; font: 12px ui-monospace, Menlo, Consolas, monospace;
                     padding: 3px 6px; border: 0; border-left: 3px solid transparent; background: none;
                     cursor: pointer; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
ol.timeline button[aria-current="step"] { background: #dfe8f5; border-left-color: #1f3b63; font-weight: 700; }
ol.timeline li.last button { color: var(--bad); }
.steps { flex: 1; min-width: 0; }
section.step { background: white; border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px;
               margin-bottom: 16px; }
section.step h2 { font-size: 15px; margin: 0 0 6px; }
section.step h2 .index { color: var(--muted); margin-right: .4em; }
section.step h2 code { font-size: 14px; }
ul.changes { margin: 4px 0 10px; padding-left: 18px; font: 12px ui-monospace, Menlo, Consolas, monospace; }
ul.changes .path { font-weight: 700; } ul.changes .old { color: #a33; } ul.changes .new { color: #17702b; }
.picture { overflow: auto; margin: 8px 0; }
.picture svg { max-width: 100%; height: auto; }
table.vars { border-collapse: collapse; width: 100%; font: 12px ui-monospace, Menlo, Consolas, monospace; }
table.vars th, table.vars td { border: 1px solid var(--line); padding: 3px 6px; text-align: left;
                               vertical-align: top; white-space: pre-wrap; word-break: break-word; }
table.vars th { width: 12em; font-weight: normal; }
table.vars tr.changed th, table.vars tr.changed td { background: var(--changed); }
table.vars tr.changed th { font-weight: 700; }
.verdict { margin: 10px 0 0; padding: 8px 12px; background: var(--bad); color: white; font-weight: 700;
           border-radius: 4px; }
.loop { margin: 10px 0 0; font-weight: 700; }
details { margin-top: 8px; } summary { cursor: pointer; color: var(--muted); }
details.sequence { margin: 12px 20px 0; padding: 8px 16px; background: white; border: 1px solid var(--line);
                   border-radius: 6px; }
#sequence-chart g.node.row { cursor: pointer; }
#sequence-chart g.node.current text { font-weight: 700; fill: var(--bad); }
#sequence-chart g.node.current polygon, #sequence-chart g.node.current ellipse { stroke: var(--bad); stroke-width: 2; }
"""

SCRIPT = """
(function () {
  var steps = Array.prototype.slice.call(document.querySelectorAll("section.step"));
  var items = Array.prototype.slice.call(document.querySelectorAll("ol.timeline button"));
  var position = document.getElementById("position");
  var action = document.getElementById("current-action");
  var previous = document.getElementById("previous");
  var next = document.getElementById("next");
  var current = 0;
  // the sequence chart's rows (graphviz nodes titled rN_...): the current step's marked, each a link to its step
  var rows = {};
  Array.prototype.slice.call(document.querySelectorAll("#sequence-chart g.node")).forEach(function (g) {
    var title = g.querySelector("title");
    var m = title ? /^r(\\d+)_/.exec(title.textContent) : null;
    if (!m) { return; }
    var k = Number(m[1]);
    (rows[k] = rows[k] || []).push(g);
    g.classList.add("row");
    g.addEventListener("click", function () { show(k); });
  });
  function show(i) {
    current = Math.max(0, Math.min(steps.length - 1, i));
    steps.forEach(function (s, k) { s.hidden = k !== current; });
    items.forEach(function (b, k) {
      if (k === current) { b.setAttribute("aria-current", "step"); } else { b.removeAttribute("aria-current"); }
    });
    position.textContent = "state " + (current + 1) + " of " + steps.length;  // numbered from 1, as TLC does
    action.textContent = steps[current].getAttribute("data-action");
    previous.disabled = current === 0;
    next.disabled = current === steps.length - 1;
    Object.keys(rows).forEach(function (k) {
      rows[k].forEach(function (g) { g.classList.toggle("current", Number(k) === current); });
    });
    document.body.setAttribute("data-current-step", String(current));
    if (location.hash !== "#step-" + current) { history.replaceState(null, "", "#step-" + current); }
  }
  function fromHash() {
    var m = /^#step-(\\d+)$/.exec(location.hash);
    return m ? Number(m[1]) : 0;
  }
  previous.addEventListener("click", function () { show(current - 1); });
  next.addEventListener("click", function () { show(current + 1); });
  items.forEach(function (b, k) { b.addEventListener("click", function () { show(k); }); });
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) { return; }
    if (e.key === "ArrowRight" || e.key === "ArrowDown" || e.key === "j") { show(current + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft" || e.key === "ArrowUp" || e.key === "k") { show(current - 1); e.preventDefault(); }
    else if (e.key === "Home") { show(0); e.preventDefault(); }
    else if (e.key === "End") { show(steps.length - 1); e.preventDefault(); }
  });
  window.addEventListener("hashchange", function () { show(fromHash()); });
  document.querySelector("nav").hidden = false;
  show(fromHash());  // #step-N opens the page at step N
})();
"""


def _e(text: Any) -> str:
    return html.escape(visible(text), quote=True)


def step_svgs(trace: Trace, model: Any) -> list[str] | None:
    """The model's picture of every step as inline SVG (no XML prologue), or None when ``dot``
    is missing or the model draws no picture of these states.

    One ``dot`` run draws them all: it reads the graphs one after the other and writes one
    SVG document for each."""
    if not dot_available():
        return None
    bodies = pictures(trace, model)
    if bodies is None:
        return None
    source = "\n".join(state_graph(body).source for body in bodies)
    output = run_dot(source, "svg").decode("utf-8")
    documents = [d for d in re.split(r"(?=<\?xml )", output) if d.strip()]
    if len(documents) != len(trace.steps):  # pragma: no cover - dot wrote something unexpected
        raise ValueError(f"dot drew {len(documents)} pictures for {len(trace.steps)} steps")
    return [_inline(d) for d in documents]


def _inline(svg: str) -> str:
    """An SVG document as an element of the page: no prologue, comments or ids (every step's
    picture would repeat graphviz's ``graph0``, ``node1``)."""
    start = svg.find("<svg")
    svg = svg[start:] if start >= 0 else svg
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    return re.sub(r'(<g) id="[^"]*"', r"\1", svg)


def _changes(trace: Trace, step: Step) -> str:
    if step.index == 0:
        return ""
    previous = trace.steps[step.index - 1].values
    lines = []
    for variable in step.changed:
        changes, more = listed_changes(previous.get(variable), step.values[variable])
        for path, before, after in changes:
            where = f'<span class="path">{_e(variable + path)}</span>'
            if before is ABSENT:
                lines.append(f'<li>{where} <span class="new">+ {_e(format_value(after, VALUE_LIMIT))}</span></li>')
            elif after is ABSENT:
                lines.append(f'<li>{where} <span class="old">− {_e(format_value(before, VALUE_LIMIT))}</span></li>')
            else:
                lines.append(f'<li>{where}: <span class="old">{_e(format_value(before, VALUE_LIMIT))}</span> → '
                             f'<span class="new">{_e(format_value(after, VALUE_LIMIT))}</span></li>')
        if more:
            lines.append(f'<li>… {more:,} more changes of <span class="path">{_e(variable)}</span></li>')
    if not lines:
        return '<ul class="changes"><li>nothing changed</li></ul>'
    return f'<ul class="changes">{"".join(lines)}</ul>'


def _variables(trace: Trace, step: Step) -> str:
    rows = []
    for variable in trace.variables:
        if variable not in step.values:
            continue
        changed = step.index > 0 and variable in step.changed
        attributes = ' class="changed"' if changed else ""
        rows.append(f'<tr{attributes} data-variable="{_e(variable)}"><th scope="row">{_e(variable)}</th>'
                    f"<td>{_e(format_value(step.values[variable], VALUE_LIMIT))}</td></tr>")
    return f'<table class="vars">{"".join(rows)}</table>'


def _meaning_title(trace: Trace, step: Step) -> str:
    """A tooltip with what the step's action means, when the trace says."""
    meaning = trace.action_meaning(step.action)
    return f' title="{_e(meaning)}"' if meaning else ""


def _section(trace: Trace, step: Step, svg: str | None) -> str:
    last = step.index == len(trace.steps) - 1
    changed = ", ".join(step.changed) if step.index > 0 else ""
    picture = f'<div class="picture">{svg}</div>' if svg else ""
    variables = _variables(trace, step)
    if svg:  # the picture says it; the table stays one click away
        variables = f"<details><summary>variables</summary>{variables}</details>"
    verdict = f'<p class="verdict">{_e(trace.verdict)}</p>' if last and trace.verdict else ""
    if last and trace.loop_note:
        verdict = f'<p class="loop">{_e(trace.loop_note)}</p>{verdict}'
    return (f'<section class="step" id="step-{step.index}" data-step="{step.index}" '
            f'data-action="{_e(step.label)}" data-changed="{_e(changed)}">'
            f'<h2><span class="index">{step.number}</span><code{_meaning_title(trace, step)}>{_e(step.label)}</code></h2>'
            f"{_changes(trace, step)}{picture}{variables}{verdict}</section>")


def page(trace: Trace, model: Any = None, picture: bool = True) -> str:
    """The whole page as a string; with ``picture`` False, or for a trace larger than
    :data:`~kraftcheck.traces.render.PICTURE_MAX_BYTES` (a note says so), the tables of variables without the model's picture."""
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
    policy = (f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'; "
              "base-uri 'none'; form-action 'none'")
    steps = len(trace.steps)
    summary = trace.verdict or f"{steps} states"
    meaning = f'<p class="meaning">{_e(trace.meaning)}</p>' if trace.meaning else ""
    last = ' class="last"' if trace.verdict else ""
    timeline = "".join(
        f'<li{last if s.index == steps - 1 else ""}>'
        f'<button type="button" data-step="{s.index}">{s.number} {_e(s.label)}</button></li>'
        for s in trace.steps
    )
    # the model's picture as SVG; a model without one is pictured by the table itself
    svgs = None
    if picture and model_picture(model) is not None:
        reason = too_big_to_draw(trace)
        if reason is None:
            svgs = step_svgs(trace, model)
        else:
            note(f"no pictures in the page: {trace.path} {reason}; the tables show every state")
    sections = "".join(_section(trace, s, svgs[s.index] if svgs else None) for s in trace.steps)
    chart = _sequence_chart(trace, model) if picture and size_ok(trace) else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(trace.title)}</title><style>{STYLE}</style></head><body>"
        f"<header><h1>{_e(trace.title)}</h1>{meaning}<p>{_e(summary)} · {steps} states · {_e(Path(trace.path).name)}</p></header>"
        '<nav hidden><button type="button" id="previous" title="previous step (←)">◀ back</button>'
        '<span id="position"></span><button type="button" id="next" title="next step (→)">next ▶</button>'
        '<span id="current-action"></span></nav>'
        f'{chart}<main><ol class="timeline">{timeline}</ol><div class="steps">{sections}</div></main>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def size_ok(trace: Trace) -> bool:
    return too_big_to_draw(trace) is None


def _sequence_chart(trace: Trace, model: Any) -> str:
    """The page's sequence-chart view: the whole trace as a message sequence chart, folded
    above the steps; empty when the model draws no chart or ``dot`` is missing."""
    from kraftcheck.checker.config import ConfigError

    from .sequence import chart_of, model_sequence, sequence_graph

    if model_sequence(model) is None or not dot_available():
        return ""
    try:
        svg = run_dot(sequence_graph(trace, chart_of(trace, model)).source, "svg").decode("utf-8")
    except ConfigError as e:
        note(f"no sequence chart in the page: {e}")
        return ""
    return ('<details class="sequence" id="sequence-chart"><summary>Sequence chart: a lane per participant, '
            f'every message from the step that sent it to the step that received it</summary>'
            f'<div class="picture">{_inline(svg)}</div></details>')


def write_page(trace: Trace, out: str | Path, model: Any = None, picture: bool = True) -> Path:
    return write_output(out, page(trace, model, picture).encode("utf-8"))
