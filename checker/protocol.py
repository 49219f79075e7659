"""The seam between the engines and a model: what a model must offer to be checked.

The engines see a model only through this protocol (TLA+'s ``Init``/``Next``/``INVARIANT``,
Stateright's ``Model`` trait).  A model is made by a factory ``FACTORY(config: dict)`` from
plain data, so that another process (a Spark executor) can rebuild the same model.
"""

from __future__ import annotations

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
#   action_invariants -> dict[str, Callable[[state, action, next_state], bool]]
#                                    step properties ([][P]_vars), checked on every transition
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
