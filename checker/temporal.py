"""Temporal properties and fairness: what a model may declare beyond invariants.

A model may offer two more optional members (see :mod:`.protocol`):

- ``temporal_properties``: name -> a property made here, TLA+'s ``PROPERTY``:
  ``leads_to(P, Q)`` (``P ~> Q``), ``always_eventually(P)`` (``[]<>P``) and
  ``eventually_always(P)`` (``<>[]P``), over predicates on one state; and
  ``for_each(values, make)`` (``\\A x \\in values: make(x)``), one of those for each value;
- ``fairness``: a list of conditions made here, the fairness conjuncts of TLA+'s ``Spec``:
  ``weak_fairness("A")`` (``WF_vars(A)``) and ``strong_fairness("A")`` (``SF_vars(A)``) for
  the steps of the action named A, or of every action (``weak_fairness()``: ``WF_vars(Next)``);
  with ``per_parameter=True``, one condition for each of the action's parameter values
  (``\\A p: WF_vars(A(p))``).

As in TLA+, a behaviour may stutter: a step that leaves the state as it is is no step of an
action, and a state may stutter forever unless a fairness condition forbids it (a deadlock is
such a state).  An action is enabled in a state when one of its steps leads to another state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable

from .protocol import State, action_name

Predicate = Callable[[State], bool]

LEADS_TO, ALWAYS_EVENTUALLY, EVENTUALLY_ALWAYS, FOR_EACH = "leads_to", "always_eventually", "eventually_always", "for_each"
WEAK, STRONG = "weak", "strong"


@dataclass(frozen=True)
class TemporalProperty:
    """``P ~> Q``, ``[]<>P`` or ``<>[]P`` (``q`` only for leads-to), or the conjunction of
    ``parts`` (for-each: ``\\A x \\in S: ...``, one part per value, each ``(value, property)``)."""

    kind: str
    p: Predicate | None
    q: Predicate | None = None
    parts: tuple = ()

    @property
    def formula(self) -> str:
        """The property as TLA+ writes it, with each predicate by its name."""
        if self.kind == FOR_EACH:
            return " /\\ ".join(f"({part.formula})" for _, part in self.parts)
        p = _name(self.p)
        if self.kind == LEADS_TO:
            return f"{p} ~> {_name(self.q)}"
        return ("[]<>" if self.kind == ALWAYS_EVENTUALLY else "<>[]") + p


def leads_to(p: Predicate, q: Predicate) -> TemporalProperty:
    """``P ~> Q``: whenever P holds, Q holds then or later."""
    return TemporalProperty(LEADS_TO, p, q)


def always_eventually(p: Predicate) -> TemporalProperty:
    """``[]<>P``: P holds infinitely often (from every point on, P holds then or later)."""
    return TemporalProperty(ALWAYS_EVENTUALLY, p)


def eventually_always(p: Predicate) -> TemporalProperty:
    """``<>[]P``: from some point on, P holds for ever."""
    return TemporalProperty(EVENTUALLY_ALWAYS, p)


@dataclass(frozen=True)
class Fairness:
    """``WF_vars(A)`` or ``SF_vars(A)`` for the steps of the action named ``action`` (None: every
    action), one condition per parameter value when ``per_parameter``, or one per value of
    ``per(action)`` (a key of the step's action, such as the sender of the message it handles:
    ``\\A k: WF_vars(\\E p: key(p) = k /\\ A(p))``)."""

    kind: str
    action: str | None = None
    per_parameter: bool = False
    per: Callable[[Any], Hashable] | None = None

    def instance(self, action: Any) -> Hashable | None:
        """Which of this fairness's conditions a step of ``action`` belongs to (None: none)."""
        if self.action is not None and action_name(action) != self.action:
            return None
        if self.per is not None:
            return (self.action, self.per(action))
        return action if self.per_parameter else self.action

    @property
    def formula(self) -> str:
        which = self.action or "Next"
        if self.per is not None:
            which += f", for each {_name(self.per)}"
        elif self.per_parameter:
            which += "(p), for each p"
        return f"{'WF' if self.kind == WEAK else 'SF'}_vars({which})"


def weak_fairness(action: str | None = None, *, per_parameter: bool = False, per=None) -> Fairness:
    """``WF_vars(A)``: an A step that stays enabled for ever is eventually taken."""
    return Fairness(WEAK, action, per_parameter, per)


def strong_fairness(action: str | None = None, *, per_parameter: bool = False, per=None) -> Fairness:
    """``SF_vars(A)``: an A step enabled again and again, however often disabled between, is
    eventually taken."""
    return Fairness(STRONG, action, per_parameter, per)


def for_each(values, make: Callable[[Any], TemporalProperty]) -> TemporalProperty:
    """``\\A x \\in values: make(x)``: ``make(x)``, a property of the other kinds, for every value; it
    fails where one of them fails.  Give the predicates ``make`` builds names that say their value
    (their ``__name__``), for the formula a listing shows."""
    parts = tuple((x, make(x)) for x in values)
    for x, part in parts:
        if not isinstance(part, TemporalProperty) or part.kind == FOR_EACH:
            raise TypeError(f"for_each's property for {x!r} is not one made by leads_to, always_eventually or "
                            "eventually_always")
    return TemporalProperty(FOR_EACH, None, parts=parts)


def predicates_of(prop: TemporalProperty) -> list[Predicate]:
    """The state predicates a property names, its parts' too."""
    if prop.kind == FOR_EACH:
        return [p for _, part in prop.parts for p in predicates_of(part)]
    return [p for p in (prop.p, prop.q) if p is not None]


def _name(predicate: Predicate | None) -> str:
    return getattr(predicate, "__name__", None) or repr(predicate)


def declared_properties(model) -> dict[str, TemporalProperty]:
    """The model's temporal properties (none when it declares none), each checked to be one."""
    properties = dict(getattr(model, "temporal_properties", None) or {})
    for name, prop in properties.items():
        if not isinstance(prop, TemporalProperty):
            raise TypeError(f"temporal property {name} is a {type(prop).__name__}, not one made by "
                            "leads_to, always_eventually, eventually_always or for_each")
    return properties


def declared_fairness(model) -> list[Fairness]:
    """The model's fairness conditions (none when it declares none), each checked to be one."""
    fairness = list(getattr(model, "fairness", None) or [])
    for f in fairness:
        if not isinstance(f, Fairness):
            raise TypeError(f"a fairness condition is a {type(f).__name__}, not one made by weak_fairness or "
                            "strong_fairness")
    return fairness


# ------------------------------------------------------------------------------------------
# A given lasso (a replayed trace): does its loop keep the fairness, does it break the property
# ------------------------------------------------------------------------------------------

def loop_unfairness(model, fairness: list[Fairness], loop_states: list, loop_steps: list) -> str | None:
    """Why a behaviour that repeats ``loop_states`` for ever (through ``loop_steps``, the
    ``(action, state)`` steps between them, none when the one state stutters) is not fair, or
    None when it keeps every fairness condition."""
    taken = [set() for _ in fairness]
    previous = loop_states[0]
    for action, state in loop_steps:
        if state != previous:
            for i, f in enumerate(fairness):
                key = f.instance(action)
                if key is not None:
                    taken[i].add(key)
        previous = state
    enabled_in = [[set() for _ in fairness] for _ in loop_states]
    for here, state in zip(enabled_in, loop_states):
        for action, successor in model.successors(state):
            if successor != state:
                for i, f in enumerate(fairness):
                    key = f.instance(action)
                    if key is not None:
                        here[i].add(key)
    for i, f in enumerate(fairness):
        every = set.intersection(*(here[i] for here in enabled_in))
        some = set.union(*(here[i] for here in enabled_in))
        unmet = (every if f.kind == WEAK else some) - taken[i]
        if unmet:
            which = sorted(map(_instance_text, unmet))[0]
            how = "in every state of the loop" if f.kind == WEAK else "in a state of the loop"
            return f"{f.formula} is not kept: {which} is enabled {how} and never taken in it"
    return None


def lasso_violates(prop: TemporalProperty, states: list, loop: int) -> bool:
    """Whether the behaviour ``states[:loop]`` then ``states[loop:]`` for ever breaks ``prop``
    (when the last state is ``states[loop]`` again, the loop is ``states[loop:-1]``; either way
    the states from ``loop`` on are those visited for ever)."""
    if prop.kind == FOR_EACH:
        return any(lasso_violates(part, states, loop) for _, part in prop.parts)
    looped = states[loop:]
    if prop.kind == ALWAYS_EVENTUALLY:
        return not any(prop.p(s) for s in looped)
    if prop.kind == EVENTUALLY_ALWAYS:
        return not all(prop.p(s) for s in looped)
    return any(prop.p(s) and not any(prop.q(t) for t in states[min(i, loop):])
               for i, s in enumerate(states))


def _instance_text(key) -> str:
    if isinstance(key, tuple) and key and isinstance(key[0], str):
        return f"{key[0]}({', '.join(map(repr, key[1:]))})"
    return str(key)
