"""The local engine: breadth-first, exhaustive, level by level.

Like TLC, it keeps a 64-bit fingerprint of every visited state, not the state, and for
every distinct state a compact parent record: the index of the state it was first reached
from and the position of that step among the parent's successors.  A counterexample is
rebuilt by re-executing those steps from the initial state, so a model must list
successors in a deterministic order.

States are numbered in the order BFS first reaches them, and each invariant's
counterexample ends in the first violating state in that order: a shortest one.  When a
level produces a violation or a deadlock, the engine still finishes that level before it
stops, so its figures are those of complete levels and equal the Spark engine's.
"""

from __future__ import annotations

import gc
import marshal
import reprlib
import time
from array import array
from collections import Counter, _count_elements
from dataclasses import dataclass
from operator import itemgetter
from typing import Callable

from xxhash import xxh3_64_intdigest as _xxh3

from .fingerprint import fingerprint_function, marshals_directly
from .path import NondeterministicModel, counterexamples  # noqa: F401  (NondeterministicModel: re-exported)
from .protocol import (
    STATE_TYPES_HINT,
    Action,
    Model,
    ModelProtocolError,
    State,
    action_name,
    action_params,
    predicate_holds,
    state_problem,
)
from .result import Result
from .signals import Figures, note_figures

_NO_PARENT = -1
_first = itemgetter(0)
_dumps = marshal.dumps
#: Expanded states between two progress reports (a power of two minus one, used as a mask).
_REPORT_EVERY = (1 << 12) - 1
#: New states whose values are checked one by one (the initial states are, all of them).
#: A check costs as much as generating the state, so it is spent where a model's types show:
#: a model that puts a list or a set in its states does so from its first steps on.
TYPE_CHECKED_STATES = 1000


class OutOfMemory(MemoryError):
    """The search ran out of memory after ``distinct_states`` distinct states."""

    def __init__(self, distinct_states: int):
        super().__init__(f"out of memory after {distinct_states:,} distinct states")
        self.distinct_states = distinct_states


def initial_states(model: Model, canonical=None) -> list[State]:
    """The model's initial states, each checked to be made of what states are made of; a model
    without one is an error, as in TLC (a search of nothing would report every invariant held)."""
    states = list(model.init_states())
    if not states:
        raise ModelProtocolError("the model has no initial state: init_states() returned nothing")
    for position, state in enumerate(states, start=1):
        check_state_types(state, canonical, f"initial state {position}")
    return states


def check_state_types(state, canonical, which: str) -> None:
    problem = state_problem(state)
    if problem is None and canonical is not None:
        problem = state_problem(canonical(state))
        which = f"the canonical form of {which}"
    if problem is not None:
        raise ModelProtocolError(f"{which} holds {problem}: {STATE_TYPES_HINT}")


def action_text(action) -> str:
    try:
        params = action_params(action)
        return action_name(action) + (f"({', '.join(map(reprlib.repr, params))})" if params else "")
    except Exception:
        return reprlib.repr(action)


@dataclass
class Progress:
    """A snapshot for progress reporting."""

    distinct_states: int
    generated_states: int
    depth: int
    queued: int
    elapsed_s: float


ProgressCallback = Callable[[Progress], None]


def explore(
    model: Model,
    *,
    max_states: int | None = None,
    max_depth: int | None = None,
    check_deadlock: bool = True,
    stop_on_violation: bool = True,
    progress: ProgressCallback | None = None,
) -> Result:
    """Explore every state of ``model`` reachable within the bounds, breadth first.

    ``max_states`` caps the number of distinct states, ``max_depth`` the number of states
    on a path; when either stops the search early the result says so (verdict
    ``incomplete``).  The level in which ``max_states`` falls is admitted up to the bound,
    checked and not expanded; the level before it is expanded in full.
    ``stop_on_violation`` stops after the level in which the first violation or deadlock was
    found; otherwise the search goes on and keeps the shortest counterexample of each
    invariant.
    """
    return Search(model, max_states, max_depth, check_deadlock, stop_on_violation, progress).run()


class Search:
    """One breadth-first search: its visited fingerprints, parent records, counts and findings
    (:mod:`.workers` goes on from a level of it in several processes)."""

    def __init__(self, model, max_states, max_depth, check_deadlock, stop_on_violation, progress):
        if max_states is not None and max_states < 1:
            raise ValueError("max_states must be at least 1")
        if max_depth is not None and max_depth < 1:
            raise ValueError("max_depth must be at least 1")
        self.model = model
        self.max_states = max_states
        self.max_depth = max_depth
        self.check_deadlock = check_deadlock
        self.stop_on_violation = stop_on_violation
        self.progress = progress
        self.canonical = getattr(model, "canonical", None)
        self.fingerprint = fingerprint_function(self.canonical)
        self.invariants = dict(model.invariants)
        self.action_invariants = dict(getattr(model, "action_invariants", None) or {})
        self.result = Result(engine="local")

        # Visited fingerprints; parent records, one per distinct state in BFS order.
        self.visited: set[int] = set()
        self.parents = array("q")
        self.ordinals = array("I")

        self.generated = 0
        self.generated_by_action: Counter = Counter()
        self.distinct_by_action: Counter = Counter()
        # name -> index of the state violating it / (parent index, ordinal) of the bad step
        self.bad_states: dict[str, int] = {}
        self.bad_steps: dict[str, tuple[int, int]] = {}
        self.deadlocked: int | None = None
        self.started = 0.0
        self.depth = 0
        self.type_checks_left = TYPE_CHECKED_STATES

    @property
    def distinct(self) -> int:
        return len(self.parents)

    # ---------------------------------------------------------------- the search

    def run(self) -> Result:
        # States are acyclic tuples, freed by reference counting; the cyclic collector would
        # only walk the millions of live states of the frontier again and again.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._run()
        except KeyboardInterrupt:  # Ctrl-C or another stopping signal: say how far the search got
            elapsed = time.perf_counter() - self.started if self.started else 0.0
            note_figures(Figures(self.distinct, self.generated, self.depth, elapsed, violations=self._found_so_far()))
            raise
        except MemoryError:
            pass  # raised below, once this handler has let go of the frames that hold the frontier
        finally:
            if collecting:
                gc.enable()
        distinct = self.distinct
        self.visited, self.parents, self.ordinals = set(), array("q"), array("I")
        raise OutOfMemory(distinct)

    def _run(self) -> Result:
        self.started = time.perf_counter()
        frontier = self._initial_level()
        level_seconds = [time.perf_counter() - self.started]
        self._levels(frontier, level_seconds)
        return self._finish(level_seconds)

    def _initial_level(self) -> list[State]:
        """Admit and check the initial states; the first level's frontier."""
        inits = initial_states(self.model, self.canonical)
        self.generated = len(inits)
        frontier = []
        for ordinal, state in enumerate(inits):
            if self._admit_init(state, ordinal):
                frontier.append(state)
        self._check_invariants(frontier, 0)
        self.depth = 1 if frontier else 0
        return frontier

    def _levels(self, frontier: list[State], level_seconds: list[float], hand_over=None) -> list[State]:
        """Search level after level from ``frontier`` (its states admitted and checked).

        Stops where the search ends, and returns []; or, when ``hand_over(frontier)`` says so
        before a level is expanded, returns that level for another strategy to go on from."""
        while frontier and not self._must_stop():
            if hand_over is not None and hand_over(frontier):
                return frontier
            level_started = time.perf_counter()
            if self.max_depth is not None and self.depth >= self.max_depth:
                self._probe(frontier)
                break
            first_new = self.distinct
            frontier = self._expand(frontier)
            self._check_invariants(frontier, first_new)
            if frontier:
                self.depth += 1
                level_seconds.append(time.perf_counter() - level_started)
            self._report(len(frontier))
        return []

    def _admit_init(self, state, ordinal) -> bool:
        fp = self.fingerprint(state)
        if fp in self.visited:
            return False
        if self.max_states is not None and self.distinct >= self.max_states:
            self.result.stopped_by = "max_states"
            return False
        self.visited.add(fp)
        self.parents.append(_NO_PARENT)
        self.ordinals.append(ordinal)
        return True

    def _must_stop(self) -> bool:
        if self.result.stopped_by is not None:
            return True
        found = self.bad_states or self.bad_steps or self.deadlocked is not None
        return bool(found) and self.stop_on_violation

    def _expand(self, frontier: list[State]) -> list[State]:
        """Generate the successors of one level; return the next level's new states.

        The inner loop runs once per generated state: it is kept to the bare minimum.
        """
        successors = self.model.successors
        fingerprint = self.fingerprint
        inline = self.canonical is None and bool(frontier) and marshals_directly(frontier[0])
        first_index = self.distinct - len(frontier)
        check_steps = bool(self.action_invariants)
        room = float("inf") if self.max_states is None else self.max_states - self.distinct
        visited = self.visited
        remember, add_parent, add_ordinal = visited.add, self.parents.append, self.ordinals.append
        next_frontier: list[State] = []
        queue = next_frontier.append
        new_actions: list[Action] = []
        note_action = new_actions.append
        generated_by_action = self.generated_by_action
        generated = 0

        for position, state in enumerate(frontier):
            succ = list(successors(state))
            if not succ:
                if self.check_deadlock and self.deadlocked is None:
                    self.deadlocked = first_index + position
                continue
            generated += len(succ)
            _count_elements(generated_by_action, map(_first, succ))
            if check_steps:
                self._check_steps(state, succ, first_index + position)
            parent = first_index + position
            ordinal = 0
            for action, target in succ:
                fp = _xxh3(_dumps(target, 2)) if inline else fingerprint(target)
                if fp not in visited:
                    if room:
                        room -= 1
                        remember(fp)
                        add_parent(parent)
                        add_ordinal(ordinal)
                        queue(target)
                        note_action(action)
                    else:
                        # The level is generated to its end all the same (its transitions
                        # counted, its steps checked), as an engine that expands a level in
                        # parallel does before it can know where the bound falls.
                        self.result.stopped_by = "max_states"
                ordinal += 1
            if not position & _REPORT_EVERY:
                self.generated += generated
                generated = 0
                self._report(len(frontier) - position + len(next_frontier))
        self.generated += generated
        _count_elements(self.distinct_by_action, new_actions)
        if self.type_checks_left > 0:
            checked = next_frontier[: self.type_checks_left]
            self.type_checks_left -= len(checked)
            for state, action in zip(checked, new_actions):
                check_state_types(state, self.canonical, f"the state {action_text(action)} led to")
        # Past those, every new state is hashed (0.3 us a state on the Kafka model): a list, a
        # dict or a set anywhere in it cannot be, and the full check then names it.
        try:
            for state in next_frontier:
                hash(state)
        except TypeError:
            for state, action in zip(next_frontier, new_actions):
                check_state_types(state, self.canonical, f"the state {action_text(action)} led to")
            raise
        return next_frontier

    def _probe(self, frontier: list[State]):
        """At the depth bound: generate the last level's successors without admitting them.

        This still finds deadlocks among the last level's states, counts what was
        generated, and tells whether anything lies beyond the bound.
        """
        first_index = self.distinct - len(frontier)
        for position, state in enumerate(frontier):
            succ = list(self.model.successors(state))
            if not succ and self.check_deadlock and self.deadlocked is None:
                self.deadlocked = first_index + position
            self.generated += len(succ)
            _count_elements(self.generated_by_action, map(_first, succ))
            if any(self.fingerprint(target) not in self.visited for _, target in succ):
                self.result.stopped_by = "max_depth"

    def _check_steps(self, state, succ, parent_index):
        for name, holds in self.action_invariants.items():
            if name in self.bad_steps:
                continue
            for ordinal, (action, target) in enumerate(succ):
                verdict = holds(state, action, target)
                if not verdict and not predicate_holds("step property", name, verdict):
                    self.bad_steps[name] = (parent_index, ordinal)
                    break

    def _check_invariants(self, new_states: list[State], first_index: int):
        """Check every invariant not yet violated on a level's new states, in order."""
        for name, holds in self.invariants.items():
            if name in self.bad_states:
                continue
            verdicts = list(map(holds, new_states))
            if not all(verdicts):
                first_false = next(i for i, v in enumerate(verdicts) if not predicate_holds("invariant", name, v))
                self.bad_states[name] = first_index + first_false

    def _found_so_far(self) -> tuple:
        """(kind, name, shortest trace length) of each violation found, shortest first: BFS
        order makes each the shortest there is."""
        found = [("invariant", name, len(self.chain_to(index))) for name, index in self.bad_states.items()]
        found += [("action", name, len(self.chain_to(parent)) + 1) for name, (parent, _) in self.bad_steps.items()]
        if self.deadlocked is not None:
            found.append(("deadlock", "", len(self.chain_to(self.deadlocked))))
        return tuple(sorted(found, key=lambda f: (f[2], f[1])))

    def memory_bytes(self) -> int:
        """Bytes held for the visited fingerprints and the parent records."""
        fingerprints = self.visited.__sizeof__() + len(self.visited) * (2**63).__sizeof__()
        return fingerprints + self.parents.buffer_info()[1] * self.parents.itemsize + (
            self.ordinals.buffer_info()[1] * self.ordinals.itemsize
        )

    # ---------------------------------------------------------------- traces

    def chain_to(self, index: int) -> list[int]:
        """The recorded steps to state ``index``: its initial state's position, then each step's."""
        chain = []
        while index != _NO_PARENT:
            chain.append(self.ordinals[index])
            index = self.parents[index]
        chain.reverse()
        return chain

    # ---------------------------------------------------------------- result

    def _report(self, queued: int):
        if self.progress is not None:
            self.progress(
                Progress(self.distinct, self.generated, self.depth, queued, time.perf_counter() - self.started)
            )

    def _finish(self, level_seconds) -> Result:
        r = self.result
        r.violations, r.deadlock = counterexamples(
            self.model,
            {name: self.chain_to(index) for name, index in self.bad_states.items()},
            {name: self.chain_to(parent) + [ordinal] for name, (parent, ordinal) in self.bad_steps.items()},
            None if self.deadlocked is None else self.chain_to(self.deadlocked),
        )
        r.distinct_states = self.distinct
        r.generated_states = self.generated
        r.depth = self.depth
        r.set_coverage(self.generated_by_action, self.distinct_by_action, getattr(self.model, "actions", None))
        r.elapsed_s = time.perf_counter() - self.started
        r.level_seconds = level_seconds
        r.memory_bytes = self.memory_bytes()
        return r


class OnlyProperty:
    """``model`` with one of its properties checked, and no other: a search of it stops at that
    property's shortest violation (what a minimised trace is held to)."""

    def __init__(self, model, kind: str, name: str):
        self._model = model
        self.invariants = {name: model.invariants[name]} if kind == "invariant" else {}
        self.action_invariants = {name: model.action_invariants[name]} if kind == "action" else {}

    def __getattr__(self, name: str):
        return getattr(self._model, name)
