"""Seeded simulation: random walks that check every invariant and step property on each state
and step they reach, for state spaces too large to exhaust (TLC's ``-simulate``).

Walk ``i`` of seed ``s`` is :func:`.walk.random_walk`'s, each step an enabled action's name
first, uniformly, then one of its steps (``by_action``; without it, uniformly among all enabled
steps, where an action with many parameters crowds out one with few), so the same seed and
index give the same walk in every process and run, and ``--replay-walk i`` runs one again.
A walk ends at its depth bound, at a state with no successor, or at its first violation.  Distinct states are counted by fingerprint (the model's symmetry reduction
applied), as the breadth-first search counts them.

Walks are taken in chunks of consecutive indices (:func:`take_walks`), which
:func:`merge` puts together in any order to the same result: the local engine takes one
chunk, the Spark engine one per task.  With ``stop_on_violation`` the result is that of the
walks up to the first one that met a violation, whatever the chunks; without it, every walk
is taken and the shortest trace of each property kept (the lowest walk index among equals).

What no violation in N walks means is only that: the walks did not meet one.  The verdict is
``incomplete`` then, never ``ok``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from .bfs import check_state_types, initial_states
from .fingerprint import fingerprint_function
from .protocol import Action, State, action_name, predicate_holds
from .result import DEADLOCK_NAME, Counterexample, Result
from .walk import random_walk, walk_rng

#: ``stopped_by`` of a simulation that ended with its walks done, or its time up.
WALKS_DONE, TIME_UP = "walks", "time"


@dataclass
class SimulationProgress:
    walks: int
    steps: int
    distinct_states: int
    elapsed_s: float
    #: the most states on one walk so far
    longest: int = 0


@dataclass
class SimulationResult(Result):
    """A :class:`.result.Result` with what walks have that a search does not."""

    seed: int = 0
    walks: int = 0
    steps: int = 0
    #: (kind, name) of each counterexample kept -> the index of the walk it came from
    walk_of: dict = field(default_factory=dict)
    #: the last walk's path, (action, state) from (None, start), when asked for
    last_walk: list | None = None

    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "seed": self.seed, "walks": self.walks, "steps": self.steps}


@dataclass
class Chunk:
    """What walks ``first`` .. ``first + walks - 1`` met: mergeable with other chunks' in any order."""

    first: int
    walks: int = 0
    steps: int = 0
    #: the most states on one walk
    longest: int = 0
    #: action name -> steps that took it
    taken: dict[str, int] = field(default_factory=dict)
    #: fingerprint -> (walk index, step, action name or None) of the state's first reach here
    reached: dict[int, tuple[int, int, str | None]] = field(default_factory=dict)
    #: (kind, name) -> (walk index, trace) of each property's shortest violation here
    found: dict[tuple[str, str], tuple[int, list]] = field(default_factory=dict)
    #: the first walk here that met a violation
    first_bad_walk: int | None = None
    timed_out: bool = False
    last_walk: list | None = None


def simulate(model, *, walks: int, depth: int, seed: int, time_limit_s: float | None = None,
             first_walk: int = 0, check_deadlock: bool = True, stop_on_violation: bool = True,
             progress: Callable[[SimulationProgress], None] | None = None,
             keep_last_walk: bool = False, by_action: bool = True) -> SimulationResult:
    """Walks ``first_walk`` .. ``first_walk + walks - 1`` of ``seed``, each of at most ``depth``
    states, in this process; stopped early by ``time_limit_s`` (seconds) or, with
    ``stop_on_violation``, after the walk that met the first violation.  ``keep_last_walk``:
    the result holds the last walk's path (``--replay-walk`` prints it)."""
    if walks < 1 or depth < 1:
        raise ValueError("a simulation takes at least one walk of at least one state")
    started = time.perf_counter()
    deadline = None if time_limit_s is None else time.time() + time_limit_s
    chunk = take_walks(model, first_walk, walks, depth=depth, seed=seed, deadline=deadline,
                       check_deadlock=check_deadlock, stop_on_violation=stop_on_violation, progress=progress,
                       keep_last_walk=keep_last_walk, by_action=by_action)
    return merge([chunk], model, seed=seed, stop_on_violation=stop_on_violation,
                 elapsed_s=time.perf_counter() - started)


def take_walks(model, first: int, count: int, *, depth: int, seed: int, deadline: float | None = None,
               check_deadlock: bool = True, stop_on_violation: bool = True,
               progress: Callable[[SimulationProgress], None] | None = None, keep_last_walk: bool = False,
               by_action: bool = True) -> Chunk:
    """Walks ``first`` .. ``first + count - 1``, until ``deadline`` (``time.time()``) if given;
    ``by_action``: each step picks an action's name first (:func:`.walk.random_walk`)."""
    walker = _Walker(model, depth, seed, check_deadlock, keep_last_walk, by_action)
    return walker.run(first, count, deadline, stop_on_violation, progress)


class _Walker:
    def __init__(self, model, depth, seed, check_deadlock, keep_last_walk, by_action):
        self.model, self.depth, self.seed, self.check_deadlock = model, depth, seed, check_deadlock
        self.by_action = by_action
        self.keep_last_walk = keep_last_walk
        self.canonical = getattr(model, "canonical", None)
        self.fingerprint = fingerprint_function(self.canonical)
        self.invariants = dict(model.invariants)
        self.action_invariants = dict(getattr(model, "action_invariants", None) or {})

    def run(self, first: int, count: int, deadline, stop_on_violation: bool, progress) -> Chunk:
        chunk = self.chunk = Chunk(first)
        starts = initial_states(self.model, self.canonical)
        started = time.perf_counter()
        for index in range(first, first + count):
            if deadline is not None and time.time() >= deadline:
                chunk.timed_out = True
                break
            self._walk(index, starts)
            chunk.walks += 1
            if chunk.first_bad_walk is not None and stop_on_violation:
                break
            if progress is not None:  # after every walk: a stopping signal reports the walks done
                progress(SimulationProgress(chunk.walks, chunk.steps, len(chunk.reached),
                                            time.perf_counter() - started, chunk.longest))
        return chunk

    def _admit(self, state, index: int, step: int, action) -> None:
        fp = self.fingerprint(state)
        if fp not in self.chunk.reached:
            self.chunk.reached[fp] = (index, step, None if action is None else action_name(action))

    def _walk(self, index: int, starts: list) -> None:
        chunk = self.chunk
        # the start random_walk will take (its random source's first draw), checked before any step
        start = starts[walk_rng(self.seed, index).randrange(len(starts))]
        trace: list[tuple[Action | None, State]] = [(None, start)]
        self._admit(start, index, 0, None)
        chunk.longest = max(chunk.longest, 1)
        if self._bad_state(index, start, trace):
            return

        def step_checked(state, action, successor) -> bool:
            """Count and check one step; True ends the walk (a violation)."""
            check_state_types(successor, self.canonical, f"the state {action_name(action)} led to")
            chunk.steps += 1
            name = action_name(action)
            chunk.taken[name] = chunk.taken.get(name, 0) + 1
            trace.append((action, successor))
            self._admit(successor, index, len(trace) - 1, action)
            bad = False
            for prop, holds in self.action_invariants.items():
                verdict = holds(state, action, successor)
                if not verdict and not predicate_holds("step property", prop, verdict):
                    self._keep(index, "action", prop, trace)
                    bad = True
            return self._bad_state(index, successor, trace) or bad

        walk = random_walk(self.model, self.seed, index, self.depth - 1, until=step_checked, by_action=self.by_action)
        chunk.longest = max(chunk.longest, len(trace))
        if walk.ending == "deadlock" and self.check_deadlock:
            self._keep(index, "deadlock", DEADLOCK_NAME, trace)
        if self.keep_last_walk:
            chunk.last_walk = trace

    def _bad_state(self, index: int, state, trace: list) -> bool:
        bad = False
        for name, holds in self.invariants.items():
            verdict = holds(state)
            if not verdict and not predicate_holds("invariant", name, verdict):
                self._keep(index, "invariant", name, trace)
                bad = True
        return bad

    def _keep(self, index: int, kind: str, name: str, trace: list) -> None:
        chunk = self.chunk
        if chunk.first_bad_walk is None:
            chunk.first_bad_walk = index
        kept = chunk.found.get((kind, name))
        if kept is None or len(trace) < len(kept[1]):
            chunk.found[(kind, name)] = (index, list(trace))


def merge(chunks: Iterable[Chunk], model, *, seed: int, stop_on_violation: bool, elapsed_s: float,
          engine: str = "simulation") -> SimulationResult:
    """The result of the chunks' walks, the same whatever their order or number."""
    chunks = sorted(chunks, key=lambda c: c.first)
    if stop_on_violation:
        bad = [c.first_bad_walk for c in chunks if c.first_bad_walk is not None]
        if bad:
            # the walks up to the first bad one: the chunk holding it stopped there, those after it go
            chunks = [c for c in chunks if c.first <= min(bad)]
    result = SimulationResult(engine=engine, seed=seed)
    taken: dict[str, int] = {}
    first_reach: dict[int, tuple[int, int, str | None]] = {}
    found: dict[tuple[str, str], tuple[int, list]] = {}
    for chunk in chunks:
        result.walks += chunk.walks
        result.steps += chunk.steps
        result.depth = max(result.depth, chunk.longest)
        for name, count in chunk.taken.items():
            taken[name] = taken.get(name, 0) + count
        for fp, reach in chunk.reached.items():
            known = first_reach.get(fp)
            if known is None or reach < known:
                first_reach[fp] = reach
        for key, (index, trace) in chunk.found.items():
            kept = found.get(key)
            if kept is None or (len(trace), index) < (len(kept[1]), kept[0]):
                found[key] = (index, trace)
        if chunk.last_walk is not None:
            result.last_walk = chunk.last_walk
    first_reached: dict[str, int] = {}
    for _, _, name in first_reach.values():
        if name is not None:
            first_reached[name] = first_reached.get(name, 0) + 1
    result.distinct_states = len(first_reach)
    result.generated_states = result.steps + result.walks
    result.elapsed_s = elapsed_s
    for (kind, name), (index, trace) in sorted(found.items(), key=lambda item: (len(item[1][1]), item[1][0])):
        cx = Counterexample(kind, name, trace)
        if kind == "deadlock":
            result.deadlock = cx
        else:
            result.violations.append(cx)
        result.walk_of[(kind, name)] = index
    result.set_coverage(taken, first_reached, getattr(model, "actions", None))
    # nothing found: the walks prove nothing, whatever their number
    if not result.counterexamples:
        result.stopped_by = TIME_UP if any(c.timed_out for c in chunks) else WALKS_DONE
    return result
