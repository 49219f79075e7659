"""The liveness phase: a model's temporal properties checked under its fairness, on the whole
state graph, with a lasso (a path and a loop) for each property that fails.

The graph.  A breadth-first search numbers every reachable state (by its fingerprint, without
symmetry reduction) and keeps every step as an edge labelled by its action, in compact
arrays: for each state the offset of its first step (8 bytes) and the step that first
reached it (8 bytes), and for each step its target (4 bytes) and its action's number
(4 bytes), so 8 bytes per edge and 16 per state, plus the fingerprint table (about 100 bytes
per state in a Python dict) and one byte per state for each predicate the properties name.
States themselves are not kept: a lasso is rebuilt by re-executing its steps, as
counterexamples are (:mod:`.path`).

The algorithm.  A property fails when some fair behaviour breaks it, and a behaviour of a
finite graph ends in a strongly connected set of states that it visits for ever.  So:

- ``[]<>P`` fails iff a fair component lies among the states where P is false;
- ``<>[]P`` fails iff a fair component holds a state where P is false;
- ``P ~> Q`` fails iff a state where P holds and Q does not reaches a fair component, through
  states where Q is false.

Every state may stutter (TLA+'s ``[Next]_vars``), so a single state is a component too.  A
component C, visited for ever in full, is fair when each weak fairness condition is taken on
a step within C or is disabled in some state of C, and each strong one is taken within C or
enabled in none of C's states.  A weak condition that fails on C fails on every part of it,
and C is dropped; where a strong one fails, the states that enable it are removed and what is
left is decomposed again (Emerson and Lei's refinement).  Enabledness counts every step out of
a state, also those that leave the states a property looks at.

Strongly connected components come from networkx below :data:`NETWORKX_EDGES` edges and from
an iterative Tarjan's algorithm on the arrays above it (no recursion, whatever the depth).
"""

from __future__ import annotations

import time
from array import array
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .fingerprint import fingerprint
from .path import NondeterministicModel, replay
from .protocol import ModelProtocolError, predicate_holds
from .temporal import (
    ALWAYS_EVENTUALLY, EVENTUALLY_ALWAYS, FOR_EACH, LEADS_TO, STRONG, WEAK, Fairness, TemporalProperty, predicates_of,
)

#: Below this many edges, networkx decomposes the graph; at and above, this module's own code.
NETWORKX_EDGES = 50_000
#: Expanded states between two progress calls.
_PROGRESS_EVERY = 4096


#: Why a model with symmetry reduction is refused: lassos in the reduced graph need not be the model's.
SYMMETRY_REFUSAL = ("liveness is not checked with symmetry reduction: a loop in the reduced graph need not be one "
                    "of the model's (TLC's reduction is unsound here too); add --no-symmetry, or --no-liveness")


class SymmetryAndLiveness(ValueError):
    """A model with symmetry reduction: lassos in the reduced graph need not be the model's."""


@dataclass
class StateGraph:
    """Every reachable state by number (breadth-first order), every step as an edge."""

    #: state u's steps are edges offsets[u] .. offsets[u + 1] - 1, in successors() order
    offsets: array
    targets: array
    action_ids: array
    #: the action of each action number
    actions: list
    #: the edge that first reached each state (-1 for an initial state)
    parent_edge: array
    #: each initial state's number -> its position in init_states()
    initial: dict[int, int]
    #: predicate -> one byte per state, 1 where it holds
    holds: dict[Callable, bytearray]

    @property
    def states(self) -> int:
        return len(self.offsets) - 1

    @property
    def edges(self) -> int:
        return len(self.targets)

    @property
    def memory_bytes(self) -> int:
        arrays = (self.offsets, self.targets, self.action_ids, self.parent_edge)
        return sum(a.itemsize * len(a) for a in arrays) + sum(map(len, self.holds.values()))

    def source_of(self, edge: int) -> int:
        """The state an edge leaves (a binary search over the offsets)."""
        lo, hi = 0, self.states - 1
        offsets = self.offsets
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if offsets[mid] <= edge:
                lo = mid
            else:
                hi = mid - 1
        return lo


def build_graph(model, predicates: Iterable[Callable], *, progress: Callable[[int, int, int], None] | None = None
                ) -> StateGraph:
    """Explore the model breadth first and keep its whole graph (see the module's docstring).
    ``progress(states, edges, queued)`` is called now and then."""
    predicates = list(dict.fromkeys(predicates))
    holds = {p: bytearray() for p in predicates}
    number: dict[int, int] = {}
    offsets, targets, action_ids, parent_edge = array("q"), array("I"), array("I"), array("q")
    action_number: dict = {}
    actions: list = []
    initial: dict[int, int] = {}
    queue: deque = deque()

    def admit(state, edge: int) -> int:
        fp = fingerprint(state)
        u = number.get(fp)
        if u is None:
            u = number[fp] = len(number)
            parent_edge.append(edge)
            for p, bits in holds.items():
                bits.append(1 if predicate_holds("predicate", getattr(p, "__name__", repr(p)), p(state)) else 0)
            queue.append(state)
        return u

    for position, state in enumerate(model.init_states()):
        u = admit(state, -1)
        initial.setdefault(u, position)
    if not number:
        raise ModelProtocolError("the model has no initial state: init_states() returned nothing")
    expanded = 0
    while queue:
        state = queue.popleft()
        offsets.append(len(targets))
        for action, successor in model.successors(state):
            a = action_number.get(action)
            if a is None:
                a = action_number[action] = len(actions)
                actions.append(action)
            targets.append(admit(successor, len(targets)))
            action_ids.append(a)
        expanded += 1
        if progress is not None and not expanded & (_PROGRESS_EVERY - 1):
            progress(len(number), len(targets), len(queue))
    offsets.append(len(targets))
    return StateGraph(offsets, targets, action_ids, actions, parent_edge, initial, holds)


# ------------------------------------------------------------------------------------------
# Strongly connected components of a part of the graph
# ------------------------------------------------------------------------------------------

def components(graph: StateGraph, nodes: list[int], inside: bytearray) -> list[list[int]]:
    """The strongly connected components of the subgraph on ``nodes`` (``inside`` marks them),
    each sorted, singletons included (every state may stutter)."""
    if graph.edges < NETWORKX_EDGES:
        return _networkx_components(graph, nodes, inside)
    return tarjan(graph, nodes, inside)


def _networkx_components(graph: StateGraph, nodes: list[int], inside: bytearray) -> list[list[int]]:
    import networkx

    g = networkx.DiGraph()
    g.add_nodes_from(nodes)
    offsets, targets = graph.offsets, graph.targets
    g.add_edges_from((u, targets[e]) for u in nodes for e in range(offsets[u], offsets[u + 1])
                     if inside[targets[e]] and targets[e] != u)
    return [sorted(c) for c in networkx.strongly_connected_components(g)]


def tarjan(graph: StateGraph, nodes: list[int], inside: bytearray) -> list[list[int]]:
    """Tarjan's algorithm with an explicit stack: each frame is a state and its next edge."""
    offsets, targets = graph.offsets, graph.targets
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    found: list[list[int]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        frames = [[root, offsets[root]]]
        while frames:
            frame = frames[-1]
            v, e = frame
            end = offsets[v + 1]
            descended = False
            while e < end:
                w = targets[e]
                e += 1
                if w == v or not inside[w]:
                    continue
                if w not in index:
                    frame[1] = e
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    frames.append([w, offsets[w]])
                    descended = True
                    break
                if w in on_stack and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            frames.pop()
            if frames:
                parent = frames[-1][0]
                if low[v] < low[parent]:
                    low[parent] = low[v]
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                found.append(sorted(component))
    return found


# ------------------------------------------------------------------------------------------
# Fairness
# ------------------------------------------------------------------------------------------

@dataclass
class FairComponent:
    """A component a fair behaviour may visit for ever, with what a loop through it must do."""

    nodes: list[int]
    #: fairness instances taken on some step within the component
    taken: set
    #: weak instances enabled somewhere in it but not taken: a loop must pass where each is disabled
    weak_untaken: set
    enabled_at: dict[int, set] = field(repr=False, default_factory=dict)


class FairnessIndex:
    """Which fairness instance each action's steps belong to, per fairness condition."""

    def __init__(self, graph: StateGraph, fairness: list[Fairness]):
        self.graph = graph
        self.kinds = [f.kind for f in fairness]
        # per action number: the (condition, instance) pairs its steps belong to
        self.instances: list[tuple] = [
            tuple((i, key) for i, f in enumerate(fairness) if (key := f.instance(action)) is not None)
            for action in graph.actions]

    def enabled(self, u: int) -> set:
        g = self.graph
        found: set = set()
        for e in range(g.offsets[u], g.offsets[u + 1]):
            if g.targets[e] != u:
                found.update(self.instances[g.action_ids[e]])
        return found

    def judge(self, nodes: list[int]) -> FairComponent | list[int] | None:
        """The component, fair; or the states left once those enabling an unmet strong
        condition are removed (to decompose again); or None when a weak condition fails."""
        g = self.graph
        members = set(nodes)
        taken: set = set()
        enabled_any: set = set()
        always: set | None = None
        enabled_at = {}
        for u in nodes:
            here = self.enabled(u)
            enabled_at[u] = here
            enabled_any |= here
            always = set(here) if always is None else always & here
            for e in range(g.offsets[u], g.offsets[u + 1]):
                v = g.targets[e]
                if v != u and v in members:
                    taken.update(self.instances[g.action_ids[e]])
        if any(self.kinds[i] == WEAK for i, _ in (always or set()) - taken):
            return None
        strong_unmet = {inst for inst in enabled_any - taken if self.kinds[inst[0]] == STRONG}
        if strong_unmet:
            return [u for u in nodes if not enabled_at[u] & strong_unmet]
        weak_untaken = {inst for inst in enabled_any - taken if self.kinds[inst[0]] == WEAK}
        return FairComponent(nodes, taken, weak_untaken, enabled_at)


def fair_components(graph: StateGraph, index: FairnessIndex, allowed: bytearray) -> list[FairComponent]:
    """Every maximal fair component among the states ``allowed`` marks."""
    nodes = [u for u in range(graph.states) if allowed[u]]
    inside = bytearray(allowed)
    work = components(graph, nodes, inside)
    fair: list[FairComponent] = []
    inside = bytearray(graph.states)
    while work:
        verdict = index.judge(work.pop())
        if verdict is None or verdict == []:
            continue
        if isinstance(verdict, FairComponent):
            fair.append(verdict)
            continue
        for u in verdict:
            inside[u] = 1
        work.extend(components(graph, verdict, inside))
        for u in verdict:
            inside[u] = 0
    fair.sort(key=lambda c: c.nodes[0])
    return fair


# ------------------------------------------------------------------------------------------
# Properties and lassos
# ------------------------------------------------------------------------------------------

@dataclass
class Lasso:
    """Edges from an initial state to the loop's first state, then the loop's edges (none: the
    state stutters for ever)."""

    start: int
    prefix: list[int]
    loop: list[int]


def prefix_to(graph: StateGraph, u: int) -> tuple[int, list[int]]:
    """The initial state and the edges of the breadth-first path to ``u`` (a shortest one)."""
    edges = []
    while graph.parent_edge[u] >= 0:
        e = graph.parent_edge[u]
        edges.append(e)
        u = graph.source_of(e)
    return u, edges[::-1]


def _path_within(graph: StateGraph, start: int, members: set, goal: Callable[[int], bool]) -> list[int] | None:
    """The edges of a shortest path from ``start`` to a state ``goal`` accepts, within ``members``."""
    if goal(start):
        return []
    came: dict[int, int] = {start: -1}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        for e in range(graph.offsets[u], graph.offsets[u + 1]):
            v = graph.targets[e]
            if v in came or v not in members:
                continue
            came[v] = e
            if goal(v):
                path = []
                while came[v] >= 0:
                    path.append(came[v])
                    v = graph.source_of(came[v])
                return path[::-1]
            queue.append(v)
    return None


def loop_through(graph: StateGraph, index: FairnessIndex, component: FairComponent, entry: int,
                 must_visit: set[int] = frozenset()) -> list[int]:
    """A loop from ``entry`` back to it within the component that keeps its fairness: it takes
    one step of each instance taken within it, passes a state where each weak instance it does
    not take is disabled, and visits a state of ``must_visit`` when there is one."""
    members = set(component.nodes)
    steps_needed = set(component.taken)
    disabled_needed = set(component.weak_untaken)
    visit_needed = bool(must_visit)
    loop: list[int] = []
    here = entry

    def visit(u: int) -> None:
        nonlocal visit_needed
        if u in must_visit:
            visit_needed = False
        disabled_needed.difference_update({inst for inst in disabled_needed if inst not in component.enabled_at[u]})

    def walk(path: list[int]) -> None:
        nonlocal here
        for e in path:
            steps_needed.difference_update(index.instances[graph.action_ids[e]])
            here = graph.targets[e]
            visit(here)
        loop.extend(path)

    visit(entry)
    while steps_needed or disabled_needed or visit_needed:
        def goal(u: int) -> bool:
            if visit_needed and u in must_visit:
                return True
            if any(inst not in component.enabled_at[u] for inst in disabled_needed):
                return True
            return any(graph.targets[e] in members and graph.targets[e] != u
                       and steps_needed.intersection(index.instances[graph.action_ids[e]])
                       for e in range(graph.offsets[u], graph.offsets[u + 1]))
        path = _path_within(graph, here, members, goal)
        if path is None:  # cannot happen in a strongly connected component
            raise AssertionError("a fair component's loop could not be closed")
        walk(path)
        step = next((e for e in range(graph.offsets[here], graph.offsets[here + 1])
                     if graph.targets[e] in members and graph.targets[e] != here
                     and steps_needed.intersection(index.instances[graph.action_ids[e]])), None)
        if step is not None:
            walk([step])
    if here != entry:
        walk(_path_within(graph, here, members, lambda u: u == entry))
    return loop


def check_property(graph: StateGraph, index: FairnessIndex, prop: TemporalProperty) -> Lasso | None:
    """A lasso on which ``prop`` fails, or None when it holds (a for-each: its first part that
    fails, in the order of its values)."""
    if prop.kind == FOR_EACH:
        return next((lasso for _, part in prop.parts if (lasso := check_property(graph, index, part)) is not None), None)
    p = graph.holds[prop.p]
    if prop.kind == ALWAYS_EVENTUALLY:
        fair = fair_components(graph, index, bytearray(1 - b for b in p))
        if not fair:
            return None
        component = fair[0]  # the one whose first state BFS reached first: the shortest prefix
        start, prefix = prefix_to(graph, component.nodes[0])
        return Lasso(start, prefix, loop_through(graph, index, component, component.nodes[0]))
    if prop.kind == EVENTUALLY_ALWAYS:
        fair = [c for c in fair_components(graph, index, bytearray(b"\x01" * graph.states))
                if any(not p[u] for u in c.nodes)]
        if not fair:
            return None
        component = fair[0]
        start, prefix = prefix_to(graph, component.nodes[0])
        must = {u for u in component.nodes if not p[u]}
        return Lasso(start, prefix, loop_through(graph, index, component, component.nodes[0], must))
    assert prop.kind == LEADS_TO
    q = graph.holds[prop.q]
    not_q = bytearray(1 - b for b in q)
    fair = fair_components(graph, index, not_q)
    if not fair:
        return None
    owner = {u: c for c in fair for u in c.nodes}
    # from the triggering states, in BFS order, through states where Q is false
    came: dict[int, int] = {}
    queue: deque = deque()
    for u in range(graph.states):
        if p[u] and not q[u]:
            came[u] = -1
            queue.append(u)
    while queue:
        u = queue.popleft()
        if u in owner:
            path = []
            v = u
            while came[v] >= 0:
                path.append(came[v])
                v = graph.source_of(came[v])
            start, prefix = prefix_to(graph, v)
            return Lasso(start, prefix + path[::-1], loop_through(graph, index, owner[u], u))
        for e in range(graph.offsets[u], graph.offsets[u + 1]):
            v = graph.targets[e]
            if not_q[v] and v not in came:
                came[v] = e
                queue.append(v)
    return None


@dataclass
class LivenessResult:
    """The liveness phase's outcome: each failing property's lasso, the graph's size, the time."""

    graph_states: int
    graph_edges: int
    memory_bytes: int
    elapsed_s: float
    #: name -> (chain, loop start): a chain as :func:`.path.replay` takes it
    lassos: dict[str, tuple[list[int], int]]
    checked: list[str]


def check_liveness(model, properties: dict[str, TemporalProperty], fairness: list[Fairness], *,
                   progress: Callable[[int, int, int], None] | None = None) -> LivenessResult:
    """Build the graph and check every property on it."""
    if getattr(model, "canonical", None) is not None:
        raise SymmetryAndLiveness(SYMMETRY_REFUSAL)
    started = time.perf_counter()
    predicates = [p for prop in properties.values() for p in predicates_of(prop)]
    graph = build_graph(model, predicates, progress=progress)
    index = FairnessIndex(graph, fairness)
    lassos = {}
    for name, prop in properties.items():
        lasso = check_property(graph, index, prop)
        if lasso is not None:
            ordinal = [e - graph.offsets[graph.source_of(e)] for e in lasso.prefix + lasso.loop]
            lassos[name] = ([graph.initial[lasso.start], *ordinal], len(lasso.prefix))
    return LivenessResult(graph.states, graph.edges, graph.memory_bytes, time.perf_counter() - started, lassos,
                          list(properties))


def lasso_trace(model, chain: list[int], loop: int) -> list:
    """The lasso's states, re-executed; its last state is the loop's first again (unless the
    loop is a state stuttering for ever, the last)."""
    trace = replay(model, chain)
    if loop < len(trace) - 1 and trace[-1][1] != trace[loop][1]:
        raise NondeterministicModel("the rebuilt lasso does not close its loop: the model's successors() must be "
                                    "deterministic")
    return trace
