"""Counterexamples rebuilt from recorded steps, the same way for every engine.

An engine does not keep states on its paths.  It keeps, for every distinct state, how it
was first reached: the position of its initial state in ``init_states()``, or the position
of the step among its parent's ``successors()``.  A path is then a list of such positions
(a *chain*), and the states on it are found again by re-executing the model.  The local
engine walks its parent arrays to build a chain, the Spark engine its per-level parent
records; both turn chains into counterexamples here.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from .protocol import Action, Model, ModelProtocolError, State
from .result import DEADLOCK_NAME, Counterexample

Trace = list[tuple[Action | None, State]]


class NondeterministicModel(ModelProtocolError):
    """Re-executing the recorded steps did not lead back to the recorded state."""


def replay(model: Model, chain: Sequence[int]) -> Trace:
    """The trace a chain stands for: ``chain[0]`` picks the initial state, each later item a step."""
    state = list(model.init_states())[chain[0]]
    trace: Trace = [(None, state)]
    for ordinal in chain[1:]:
        trace.append(step(model, state, ordinal))
        state = trace[-1][1]
    return trace


def step(model: Model, state: State, ordinal: int) -> tuple[Action, State]:
    """The ``ordinal``-th successor of ``state``."""
    succ = list(model.successors(state))
    if ordinal >= len(succ):
        raise NondeterministicModel(
            "re-executing a recorded step found fewer successors than during the search: "
            "the model's successors() must be deterministic"
        )
    return succ[ordinal]


def _checked(kind: str, name: str, trace: Trace, still_bad: Callable[[Trace], bool]) -> Counterexample:
    if not still_bad(trace):
        raise NondeterministicModel(
            f"the rebuilt trace for {name} does not end where the search found it: "
            "the model's successors() must be deterministic"
        )
    return Counterexample(kind, name, trace)


def counterexamples(
    model: Model,
    bad_states: Mapping[str, Sequence[int]],
    bad_steps: Mapping[str, Sequence[int]],
    deadlock: Sequence[int] | None,
) -> tuple[list[Counterexample], Counterexample | None]:
    """Rebuild every counterexample a search found, from chains.

    ``bad_states``: invariant name -> chain to a state violating it; ``bad_steps``: step
    property name -> chain whose last step violates it; ``deadlock``: chain to a state
    without successors, or None.  Violations come in the model's declaration order
    (invariants, then step properties), whatever the order they were found in.  Each
    rebuilt trace is checked to end where the search said, which catches models whose
    ``successors()`` order is not deterministic.
    """
    violations = []
    for name, holds in model.invariants.items():
        if name in bad_states:
            trace = replay(model, bad_states[name])
            violations.append(_checked("invariant", name, trace, lambda t, holds=holds: not holds(t[-1][1])))
    for name, holds in (getattr(model, "action_invariants", None) or {}).items():
        if name in bad_steps:
            trace = replay(model, bad_steps[name])
            violations.append(
                _checked("action", name, trace, lambda t, holds=holds: not holds(t[-2][1], t[-1][0], t[-1][1]))
            )
    found_deadlock = None
    if deadlock is not None:
        trace = replay(model, deadlock)
        found_deadlock = _checked(
            "deadlock", DEADLOCK_NAME, trace, lambda t: not any(True for _ in model.successors(t[-1][1]))
        )
    return violations, found_deadlock
