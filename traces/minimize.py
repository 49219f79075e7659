"""Minimisation: the shortest run that reaches a violation of the same property as a trace.

Two passes, each validated by running the model:

1. A breadth-first search from the initial states through the states within ``radius`` steps
   of the trace's own states (every state a path of at most ``radius`` steps leads to from one
   of them): the trace is one of its paths, so what it finds is never longer, and it is the
   shortest path there is through that neighbourhood.
2. Delta debugging (Zeller's ddmin) over that path's actions: drop chunks of steps, halving
   the chunks, and keep a candidate when its actions, taken one by one from the initial
   state, are each enabled and still reach the violation.  The result is 1-minimal: no single
   step can be dropped.

A wider neighbourhood holds runs that take steps the trace never took (an assignment where the
trace restarted its broker instead): by default the radius starts at 3 and doubles, up to the
trace's length or a neighbourhood of 200,000 states, and the shortest result is kept.  A radius
of the trace's length makes the first pass a whole breadth-first search.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from kraftcheck.checker.protocol import action_name, action_params

#: The neighbourhood's default radius, in steps.
DEFAULT_RADIUS = 3
#: The most states the neighbourhood may hold before the first pass gives up on it.
MAX_NEIGHBOURHOOD = 2_000_000
#: The most it may hold for the radius to be doubled once more.
ESCALATION_LIMIT = 200_000


class TooWide(Exception):
    """The neighbourhood holds more states than the first pass may visit."""


@dataclass
class Minimized:
    start: Any
    #: (action, state) of every step
    steps: list[tuple[Any, Any]]
    original: int
    after_search: int
    #: the neighbourhood's radius that gave it
    radius: int

    @property
    def length(self) -> int:
        """States, as traces count them."""
        return len(self.steps) + 1


def violation_test(model, kind: str, name: str) -> Callable[[Any, Any, Any], bool]:
    """``bad(previous, action, state)``: the step into ``state`` (``previous`` None at the start)
    shows the violation: the invariant false in ``state``, the step property false on the step,
    or ``state`` without successors."""
    if kind == "invariant":
        holds = model.invariants[name]
        return lambda previous, action, state: not holds(state)
    if kind == "action":
        holds = model.action_invariants[name]
        return lambda previous, action, state: previous is not None and not holds(previous, action, state)
    if kind == "deadlock":
        return lambda previous, action, state: next(iter(model.successors(state)), None) is None
    raise ValueError(f"unknown counterexample kind {kind!r}")


def minimize(model, start, steps: list[tuple[Any, Any]], bad: Callable[[Any, Any, Any], bool],
             radius: int | None = None) -> Minimized:
    """The shortest run to ``bad`` found near the run ``start``, ``steps``, made 1-minimal by
    delta debugging.  ``radius`` None: radii from :data:`DEFAULT_RADIUS` up, doubling, while the
    neighbourhood stays within :data:`ESCALATION_LIMIT` states and the radius is shorter than
    the trace, and the shortest result kept (a wider neighbourhood holds runs that take steps
    the trace never took; the passes are greedy, so a wider one is not always shorter)."""
    if radius is not None:
        return _minimize_at(model, start, steps, bad, radius, MAX_NEIGHBOURHOOD)
    best = None
    radius = DEFAULT_RADIUS
    while True:
        try:
            found = _minimize_at(model, start, steps, bad, radius, ESCALATION_LIMIT)
        except TooWide:
            break
        if best is None or found.length < best.length:
            best = found
        if radius >= len(steps):
            break
        radius *= 2
    return best if best is not None else _minimize_at(model, start, steps, bad, DEFAULT_RADIUS, MAX_NEIGHBOURHOOD)


def _minimize_at(model, start, steps, bad, radius: int, limit: int) -> Minimized:
    searched = current = _search(model, start, steps, bad, radius, limit)
    while True:
        kept = _ddmin([a for a, _ in current], lambda candidate: run_actions(model, start, candidate, bad) is not None)
        shorter = run_actions(model, start, kept, bad)
        # a shorter run has a neighbourhood of its own, where the search may find shorter still
        if len(shorter) < len(current):
            shorter = _search(model, start, shorter, bad, radius, limit)
        if len(shorter) >= len(current):
            return Minimized(start, current, len(steps) + 1, len(searched) + 1, radius)
        current = shorter


def _search(model, start, steps, bad, radius: int, limit: int) -> list[tuple[Any, Any]]:
    # states are kept as the model's symmetry reduction has them: a path through brokers
    # renamed is as near as the trace's own
    canonical = getattr(model, "canonical", None) or (lambda state: state)
    on_trace = [start] + [s for _, s in steps]
    near = {canonical(s) for s in on_trace}
    frontier = list(on_trace)
    for _ in range(radius):
        following = []
        for state in frontier:
            for _, successor in model.successors(state):
                key = canonical(successor)
                if key not in near:
                    near.add(key)
                    following.append(successor)
                    if len(near) > limit:
                        raise TooWide(f"the states within {radius} steps of the trace are more than "
                                      f"{limit:,}: give a smaller --radius")
        frontier = following
    if bad(None, None, start):
        return []
    # canonical form -> (the state reached, the state before it, the action between)
    parents: dict[Any, tuple[Any, Any, Any]] = {canonical(start): (start, None, None)}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        for action, successor in model.successors(state):
            key = canonical(successor)
            if key not in near:
                continue
            if bad(state, action, successor):
                path = [(action, successor)]
                while state is not start:
                    _, previous, step_action = parents[canonical(state)]
                    path.append((step_action, state))
                    state = previous
                return path[::-1]
            if key not in parents:
                parents[key] = (successor, state, action)
                queue.append(successor)
    return list(steps)  # not reached: the trace itself is a path through the neighbourhood


def run_actions(model, start, actions: list, bad) -> list[tuple[Any, Any]] | None:
    """The run that takes ``actions`` one by one from ``start``, cut at its first violation;
    None when an action is not enabled or no violation is met.

    Where an action is not enabled as it stands (its parameters name what an earlier, dropped
    step made: a message, a repaired directory), the step of the same name with the same first
    parameter (its broker, its partition) is taken, else the first of the same name: the run
    is still the model's, and the candidate is kept only if it reaches the violation."""
    if bad(None, None, start):
        return []
    state, taken = start, []
    for wanted in actions:
        successor, action = _closest_step(model.successors(state), wanted)
        if successor is None:
            return None
        taken.append((action, successor))
        if bad(state, action, successor):
            return taken
        state = successor
    return None


def _closest_step(successors, wanted) -> tuple[Any, Any]:
    name, first = action_name(wanted), _first_param(wanted)
    same_name = same_first = None
    for action, successor in successors:
        if action == wanted:
            return successor, action
        if action_name(action) == name:
            if same_first is None and _first_param(action) == first:
                same_first = (successor, action)
            if same_name is None:
                same_name = (successor, action)
    return same_first or same_name or (None, None)


def _first_param(action):
    params = action_params(action)
    return params[0] if params else None


def _ddmin(items: list, reaches: Callable[[list], bool]) -> list:
    """Zeller's ddmin: a 1-minimal sublist of ``items`` that still ``reaches``."""
    granularity = 2
    while len(items) >= 2:
        size = len(items) // granularity
        chunks = [items[i:i + size] for i in range(0, len(items), size)] if size else [[x] for x in items]
        reduced = False
        for i in range(len(chunks)):
            complement = [x for j, chunk in enumerate(chunks) if j != i for x in chunk]
            if reaches(complement):
                items, granularity, reduced = complement, max(granularity - 1, 2), True
                break
        if not reduced:
            if granularity >= len(items):
                break
            granularity = min(granularity * 2, len(items))
    if len(items) == 1 and reaches([]):
        return []
    return items
