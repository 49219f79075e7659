"""``kraftcheck graph``: the whole state graph of a tiny config, drawn, with networkx statistics.

Every reachable state (after the model's symmetry reduction, as the engines count them) is
a node; every transition an edge labelled with its action.  Initial states have a double
border, states that violate an invariant are red and name it, so are transitions that
violate a step property; deadlocks are grey.  The
exploration stops with a clear message beyond a node cap: a picture of thousands of states
helps nobody.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from kraftcheck.checker.bfs import check_state_types, initial_states
from kraftcheck.checker.config import ConfigError
from kraftcheck.checker.protocol import action_name, action_params, predicate_holds

from .counterexample import state_variables
from .render import BAD, escape, render_graph
from .trace import format_value

DEFAULT_MAX_NODES = 1000
#: Widest variable shown in a node, in characters.
NODE_VALUE_LIMIT = 48


@dataclass
class StateGraph:
    #: node i -> its state in ``states[i]``; edges keyed by action label
    graph: nx.MultiDiGraph
    states: list[Any]
    label: str
    initial: list[int] = field(default_factory=list)
    #: node -> names of the invariants it violates
    violations: dict[int, list[str]] = field(default_factory=dict)
    #: (source, target, action label) -> names of the step properties the transition violates
    step_violations: dict[tuple[int, int, str], list[str]] = field(default_factory=dict)

    @property
    def deadlocks(self) -> list[int]:
        return [n for n in self.graph if self.graph.out_degree(n) == 0]


def explore_graph(model: Any, max_nodes: int = DEFAULT_MAX_NODES, label: str = "the model") -> StateGraph:
    """Every reachable state and transition of ``model``; bad input beyond ``max_nodes`` states."""
    canonical = getattr(model, "canonical", None) or (lambda s: s)
    invariants = dict(getattr(model, "invariants", {}) or {})
    step_properties = dict(getattr(model, "action_invariants", None) or {})
    graph = nx.MultiDiGraph()
    index: dict[Any, int] = {}
    states: list[Any] = []
    result = StateGraph(graph, states, label)

    def node(state) -> tuple[int, bool]:
        key = canonical(state)
        if key in index:
            return index[key], False
        if len(states) >= max_nodes:
            raise ConfigError(f"the state graph of {label} has more than {max_nodes} states; graph draws tiny "
                              "configs only (shrink the config, or raise --max-nodes)")
        index[key] = len(states)
        states.append(state)
        graph.add_node(index[key])
        broken = [name for name, holds in invariants.items() if not predicate_holds("invariant", name, holds(state))]
        if broken:
            result.violations[index[key]] = broken
        return index[key], True

    frontier: deque[int] = deque()
    for state in initial_states(model):
        n, new = node(state)
        if new:
            frontier.append(n)
        if n not in result.initial:
            result.initial.append(n)
    while frontier:
        source = frontier.popleft()
        for action, successor in model.successors(states[source]):
            # every state, not only the first ones as the engines do: a state graph is tiny
            check_state_types(successor, getattr(model, "canonical", None), f"the state {_action_label(action)} led to")
            target, new = node(successor)
            if new:
                frontier.append(target)
            key = _action_label(action)
            graph.add_edge(source, target, key=key)
            broken = [name for name, holds in step_properties.items()
                      if not predicate_holds("step property", name, holds(states[source], action, successor))]
            if broken:
                result.step_violations[(source, target, key)] = broken
    return result


def _action_label(action: Any) -> str:
    params = action_params(action)
    return action_name(action) + (f"({', '.join(format_value(p) for p in params)})" if params else "")


def graph_statistics(sg: StateGraph) -> dict[str, Any]:
    """Nodes, transitions, distinct edges, depth from the initial states, diameter, SCCs."""
    simple = nx.DiGraph(sg.graph)
    sccs = list(nx.strongly_connected_components(simple))
    # in states, as check and TLC count it: an initial state alone is depth 1
    depth = 0
    for start in sg.initial:
        depth = max(depth, 1 + max(nx.single_source_shortest_path_length(simple, start).values()))
    diameter = nx.diameter(simple) if len(simple) and nx.is_strongly_connected(simple) else None
    return {
        "nodes": sg.graph.number_of_nodes(),
        "transitions": sg.graph.number_of_edges(),
        "edges": simple.number_of_edges(),
        "initial": len(sg.initial),
        "depth": depth,
        "diameter": diameter,
        "strongly_connected_components": len(sccs),
        "largest_component": max((len(c) for c in sccs), default=0),
        "violating": len(sg.violations),
        "violating_steps": len(sg.step_violations),
        "deadlocks": len(sg.deadlocks),
    }


def graph_summary(sg: StateGraph) -> list[str]:
    """The statistics in words, as ``kraftcheck graph`` prints them."""
    s = graph_statistics(sg)
    diameter = str(s["diameter"]) if s["diameter"] is not None else "infinite (not strongly connected)"
    return [
        f"{_n(s['nodes'], 'state')}, {_n(s['transitions'], 'transition')} "
        f"({_n(s['edges'], 'edge')} between distinct pairs of states), {s['initial']} initial",
        f"depth {_n(s['depth'], 'state')} (the longest shortest path from an initial state), diameter {diameter}",
        f"{_n(s['strongly_connected_components'], 'strongly connected component')}, the largest of "
        f"{_n(s['largest_component'], 'state')}",
        f"{_n(s['violating'], 'state')} violating an invariant, {_n(s['violating_steps'], 'transition')} "
        f"violating a step property, {_n(s['deadlocks'], 'deadlock')}",
    ]


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def graph_dot(sg: StateGraph, model: Any):
    """The state graph as a graphviz ``Digraph``: parallel transitions merged into one labelled edge."""
    import graphviz

    dot = graphviz.Digraph("states", graph_attr={
        "rankdir": "LR", "fontname": "Helvetica", "label": "<" + escape(f"{sg.label}: every reachable state") + ">",
        "labelloc": "t"}, node_attr={"shape": "box", "style": "rounded,filled", "fillcolor": "white",
                                     "fontname": "Helvetica", "fontsize": "10"},
        edge_attr={"fontname": "Helvetica", "fontsize": "8", "color": "#667085"})
    deadlocks = set(sg.deadlocks)
    initial = set(sg.initial)
    for n, state in enumerate(sg.states):
        lines = [f"{escape(name)} = {escape(format_value(value, NODE_VALUE_LIMIT))}"
                 for name, value in state_variables(model, state).items()]
        attributes = {}
        if n in sg.violations:
            lines.append(f'<B><FONT COLOR="{BAD}">violates {escape(", ".join(sg.violations[n]))}</FONT></B>')
            attributes.update(fillcolor="#f6c9c3", color=BAD, penwidth="2")
        elif n in deadlocks:
            lines.append("<I>deadlock</I>")
            attributes.update(fillcolor="#dddddd")
        if n in initial:
            attributes.update(peripheries="2")
        dot.node(f"n{n}", "<" + '<BR ALIGN="LEFT"/>'.join(lines) + '<BR ALIGN="LEFT"/>>', **attributes)
    merged: dict[tuple[int, int], list[str]] = {}
    for source, target, action in sg.graph.edges(keys=True):
        merged.setdefault((source, target), []).append(action)
    for (source, target), actions in merged.items():
        broken = sorted({name for a in actions for name in sg.step_violations.get((source, target, a), [])})
        label = escape(", ".join(actions))
        if broken:
            label += f'<BR/><B>violates {escape(", ".join(broken))}</B>'
            dot.edge(f"n{source}", f"n{target}", label=f"<{label}>", color=BAD, fontcolor=BAD, penwidth="2")
        else:
            dot.edge(f"n{source}", f"n{target}", label=f"<{label}>")
    return dot


def write_graph(sg: StateGraph, model: Any, out: str | Path, fmt: str) -> Path:
    return render_graph(graph_dot(sg, model), out, fmt)
