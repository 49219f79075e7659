"""What a search found: the verdict, TLC's statistics, coverage and counterexamples."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from .protocol import Action, State, action_name

#: Verdicts, from most to least serious; the first that applies is the search's verdict.
VIOLATION, DEADLOCK, INCOMPLETE, OK = "violation", "deadlock", "incomplete", "ok"

#: The exit code of each verdict (TLC's, so CI scripts that know TLC know ours).
EXIT_CODES = {OK: 0, VIOLATION: 12, DEADLOCK: 11, INCOMPLETE: 3}

#: TLC exits 13, not 12, when what it found violated is an action property (``[][A]_v`` in
#: ``PROPERTIES``): a violation of step properties alone exits so too.
EXIT_STEP_PROPERTY = 13

#: The name under which a deadlock is reported among the counterexamples.
DEADLOCK_NAME = "Deadlock"


@dataclass
class Counterexample:
    """A shortest path from an initial state to a bad state (or a bad step).

    ``kind`` is ``"invariant"`` (the last state violates ``name``), ``"action"`` (the last
    step violates the step property ``name``), ``"deadlock"`` (the last state has no
    successor) or ``"temporal"`` (a lasso, see ``loop``, on which the temporal property
    ``name`` fails).  ``trace`` is a list of ``(action, state)``; the first action is ``None``.
    """

    kind: str
    name: str
    trace: list[tuple[Action | None, State]]
    #: a lasso's (kind ``"temporal"``): the index of the state its loop starts at.  The last
    #: state is that state again, so the steps from it to the end repeat for ever; when it is
    #: the last state, that state stutters for ever
    loop: int | None = None

    @property
    def length(self) -> int:
        """Number of states in the trace, as TLC counts them."""
        return len(self.trace)


@dataclass
class Result:
    """The outcome of one search, as both engines report it."""

    engine: str
    distinct_states: int = 0
    generated_states: int = 0
    depth: int = 0
    violations: list[Counterexample] = field(default_factory=list)
    deadlock: Counterexample | None = None
    #: action name -> {"generated": transitions generated, "distinct": new states first reached by it}
    coverage: dict[str, dict[str, int]] = field(default_factory=dict)
    #: actions the model declares that no transition ever took
    never_enabled: list[str] = field(default_factory=list)
    #: the bound that stopped the search before it was complete ("max_states" or "max_depth"), if any
    stopped_by: str | None = None
    elapsed_s: float = 0.0
    #: seconds spent on each BFS level (level 1 holds the initial states)
    level_seconds: list[float] = field(default_factory=list)
    #: bytes the engine held for visited fingerprints and parent records
    memory_bytes: int = 0
    #: processes that ran the model's code: the local engine's ``--workers``, or 1 when no level was wide
    #: enough to hand over to them
    workers: int = 1
    #: the liveness phase's figures (None: the model has no temporal property, or it was not run)
    liveness: dict[str, Any] | None = None

    def set_coverage(self, generated: Mapping, distinct: Mapping, declared: Iterable[str] | None) -> None:
        """Coverage per action name from per-action counts (actions keyed as the model gave them),
        with every declared action that no transition took listed as never enabled."""
        by_name: dict[str, dict[str, int]] = {}
        for action, count in generated.items():
            entry = by_name.setdefault(action_name(action), {"generated": 0, "distinct": 0})
            entry["generated"] += count
        for action, count in distinct.items():
            by_name[action_name(action)]["distinct"] += count
        self.never_enabled = [a for a in declared or [] if a not in by_name]
        for a in self.never_enabled:
            by_name[a] = {"generated": 0, "distinct": 0}
        self.coverage = dict(sorted(by_name.items()))

    @property
    def verdict(self) -> str:
        if self.violations:
            return VIOLATION
        if self.deadlock is not None:
            return DEADLOCK
        if self.stopped_by is not None:
            return INCOMPLETE
        return OK

    @property
    def exit_code(self) -> int:
        """TLC's exit code: 12 when an invariant is violated, 13 when only step properties or
        temporal properties are (TLC checks a new state's invariants before the step's properties, so where both
        break on one step, it reports the invariant), 11 deadlock, 3 incomplete, 0 ok."""
        if self.violations and all(v.kind in ("action", "temporal") for v in self.violations):
            return EXIT_STEP_PROPERTY
        return EXIT_CODES[self.verdict]

    @property
    def states_per_s(self) -> float:
        return self.distinct_states / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def fingerprint_collision_probability(self) -> float:
        """TLC's optimistic estimate that a 64-bit fingerprint collision hid a state.

        Each of the ``generated - distinct`` successors that matched a visited fingerprint
        could have matched one of ``distinct`` others by chance: ``n * (g - n) / 2**64``.
        """
        n, g = self.distinct_states, self.generated_states
        return n * max(g - n, 0) / 2.0**64

    @property
    def counterexamples(self) -> list[Counterexample]:
        """Every counterexample found, deadlock last."""
        return self.violations + ([self.deadlock] if self.deadlock else [])

    def summary(self) -> dict[str, Any]:
        """The JSON-able summary, without trace paths (the CLI adds them)."""
        return {
            "verdict": self.verdict,
            "engine": self.engine,
            "workers": self.workers,
            "distinct_states": self.distinct_states,
            "generated_states": self.generated_states,
            "depth": self.depth,
            "stopped_by": self.stopped_by,
            "coverage": self.coverage,
            "never_enabled": self.never_enabled,
            "elapsed_s": round(self.elapsed_s, 3),
            "states_per_s": round(self.states_per_s, 1),
            "fingerprint_collision_probability": self.fingerprint_collision_probability,
            "level_seconds": [round(s, 4) for s in self.level_seconds],
            "memory_bytes": self.memory_bytes,
            **({"liveness": self.liveness} if self.liveness is not None else {}),
        }
