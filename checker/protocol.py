"""The seam between the engines and a model: what a model must offer to be checked.

The engines see a model only through this protocol (TLA+'s ``Init``/``Next``/``INVARIANT``,
Stateright's ``Model`` trait).  A model is made by a factory ``FACTORY(config: dict)`` from
plain data, so that another process (a Spark executor) can rebuild the same model.
"""

from __future__ import annotations

import reprlib
from typing import Any, Callable, Hashable, Iterable, Mapping, Protocol, runtime_checkable

State = Hashable
#: A ``str``, or a tuple whose first item is the action's name and the rest its parameters.
Action = Any


@runtime_checkable
class Model(Protocol):
    #: INVARIANT: name -> predicate over one state (True when the invariant holds).
    invariants: Mapping[str, Callable[[State], bool]]

    def init_states(self) -> Iterable[State]:
        """Init: every initial state."""

    def successors(self, state: State) -> Iterable[tuple[Action, State]]:
        """Next, as named actions: every ``(action, next_state)``, in a deterministic order."""


# Optional members, looked up with getattr:
#   canonical(state) -> state        symmetry reduction (identity when absent)
#   describe(state) -> dict          readable form of a state for traces
#   describe_action(action) -> str   readable label of an action for reports and traces
#                                    (recorded as "label" in each trace state's #meta)
#   actions -> list[str]             every action name the model can take (for coverage)
#   locality -> tuple[int, ...]      positions, in tuple states, of the components that few steps
#                                    change: the Spark engine puts states that agree on them in one
#                                    partition, so that most steps stay within their partition
#                                    (ignored with symmetry reduction)
#   mutants -> dict[str, str]        name -> one-line description of each known-bug switch
#   sequence(steps) -> dict          a trace as a message sequence chart (kraftcheck.traces.sequence):
#                                    ``steps`` the (action name, described variables) of every state;
#                                    lanes, messages (sender and receiver lane, sent and delivered
#                                    step, lost) and notes (step, lane, text)
#   action_invariants -> dict[str, Callable[[state, action, next_state], bool]]
#                                    step properties ([][P]_vars), checked on every transition
#   temporal_properties -> dict[str, TemporalProperty]
#                                    PROPERTY: P ~> Q, []<>P, <>[]P (kraftcheck.checker.temporal),
#                                    checked by the liveness phase under ``fairness``
#   fairness -> list[Fairness]       WF_vars/SF_vars of an action (per parameter, optionally)
#   picture(vars, previous) -> str   how traces draw a state: ``vars`` and ``previous`` (the step
#                                    before, or None) are describe() outputs as read back from a
#                                    trace; returns a graphviz HTML-like label, one <TABLE>, with
#                                    what changed highlighted.  Without it, traces draw a table of
#                                    the variables.  The engines never call it.


def action_name(action: Action) -> str:
    """The name of an action: the action itself when a string, else its first item."""
    if isinstance(action, str):
        return action
    return str(action[0])


def action_params(action: Action) -> tuple:
    """The parameters of an action (empty for a plain string action)."""
    if isinstance(action, str):
        return ()
    return tuple(action[1:])


class ModelProtocolError(RuntimeError):
    """The model does not keep to the protocol: no initial state, a state of values the engines
    cannot fingerprint, a predicate that answers neither true nor false, steps that differ from
    one call to the next.  The CLI prints the message, one line, and exits 1."""


#: What states are made of, besides tuples (``NamedTuple`` included); ``bool`` is an ``int``.
STATE_LEAF_TYPES = (int, str, bytes, type(None))
#: What to write instead, for the error message.
STATE_TYPES_HINT = ("states are made of ints, bools, None, strings, bytes, tuples and frozensets "
                    "(a set goes in as a frozenset, a map as a sorted tuple of pairs)")

_brief = reprlib.Repr()
_brief.maxstring = _brief.maxother = 60


def state_problem(state: Any) -> str | None:
    """The first value in ``state`` that states cannot hold and where it is, as
    ``"a list at [1][0] ([2, 3])"``, or None when the state is made of the types states are made of.

    A list, a dict or a set would make equal states differ as soon as they were mutated; a
    frozenset is fingerprinted canonically, whatever its iteration order."""
    if _made_of_state_types(state):
        return None
    stack: list[tuple[str, Any]] = [("", state)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, tuple):
            names = getattr(type(value), "_fields", None)
            if names is not None and len(names) == len(value):
                parts = [(f"{where}.{name}", item) for name, item in zip(names, value)]
            else:
                parts = [(f"{where}[{i}]", item) for i, item in enumerate(value)]
            stack.extend(reversed(parts))
        elif isinstance(value, frozenset):
            stack.extend((f"{where}{{...}}", item) for item in value)
        elif not isinstance(value, STATE_LEAF_TYPES):
            at = f" at {where}" if where else ""
            return f"a {type(value).__name__}{at} ({_brief.repr(value)})"
    return None


def _made_of_state_types(state: Any) -> bool:
    """Whether ``state`` is made of the types states are made of: the fast walk, without the
    paths :func:`state_problem` names."""
    stack = [state]
    pop, push = stack.pop, stack.extend
    while stack:
        value = pop()
        kind = type(value)
        if kind is tuple or kind is frozenset:
            push(value)
        elif kind in _EXACT_LEAF_TYPES:
            continue
        elif isinstance(value, (tuple, frozenset)):
            push(value)  # a NamedTuple
        elif not isinstance(value, STATE_LEAF_TYPES):
            return False
    return True


_EXACT_LEAF_TYPES = frozenset((int, bool, str, bytes, type(None)))


def predicate_holds(kind: str, name: str, verdict: Any) -> bool:
    """Whether an invariant's (or a step property's) verdict says it holds.

    A false verdict must be a boolean (or an integer): ``None`` is most often a forgotten
    ``return``, and counting it as a violation would report a bug that is not there."""
    if verdict:
        return True
    if isinstance(verdict, int) or type(verdict).__name__ in ("bool_", "bool"):  # numpy's booleans too
        return False
    raise ModelProtocolError(f"{kind} {name} returned {_brief.repr(verdict)}, not True or False")
