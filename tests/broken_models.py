"""Models that fail in their own code or break the model protocol, one way each.

The CLI's tests check that each is reported in one line with the right exit code, and that
what the search found is never lost on the way.
"""

from __future__ import annotations

import sys

from .models import DieHard


def _setting(config: dict, key: str, default):
    return (config or {}).get(key, default)


def factory_raises(config: dict | None = None):
    """A factory that fails as ``config["error"]`` says: RuntimeError, RecursionError,
    MemoryError, exit (``sys.exit(9)``), or ValueError (a two-line message)."""
    error = _setting(config, "error", "RuntimeError")
    if error == "RecursionError":
        return factory_raises(config)
    if error == "exit":
        sys.exit(9)  # the factory leaves
    if error == "ValueError":
        raise ValueError("first line\nsecond line")
    raise {"RuntimeError": RuntimeError, "MemoryError": MemoryError}[error]("the factory gave up")


class Ticker:
    """A counter from 0 to ``limit`` that turns bad as ``config`` says, at state ``at``."""

    actions = ["Tick"]

    def __init__(self, config: dict):
        self.limit = _setting(config, "limit", 4)
        self.at = _setting(config, "at", 2)
        self.invariants = {"Small": lambda s: s[0] <= self.limit}

    def init_states(self):
        return [(0, ())]

    def successors(self, s):
        if s[0] < self.limit:
            n = s[0] + 1
            yield ("Tick", n), (n, self.payload(n))

    def payload(self, n):
        return ()


class BadlyTypedStates(Ticker):
    """From state ``at`` on, a state holds a value of ``config["kind"]``: list, set, dict,
    frozenset or float."""

    def __init__(self, config: dict):
        super().__init__(config)
        self.kind = _setting(config, "kind", "list")

    def payload(self, n):
        if n < self.at:
            return ()
        return {"list": [n], "set": {n}, "dict": {n: n}, "frozenset": frozenset({n}), "float": n / 2}[self.kind]


def badly_typed_states(config: dict | None = None) -> BadlyTypedStates:
    return BadlyTypedStates(config or {})


class NoInitialStates(Ticker):
    def init_states(self):
        return []


def no_initial_states(config: dict | None = None) -> NoInitialStates:
    return NoInitialStates(config or {})


class SilentInvariant(Ticker):
    """``Quiet`` forgets its ``return`` for states from ``at`` on: it returns None."""

    def __init__(self, config: dict):
        super().__init__(config)
        self.invariants = {"Quiet": self.quiet}

    def quiet(self, s):
        if s[0] < self.at:
            return True


def silent_invariant(config: dict | None = None) -> SilentInvariant:
    return SilentInvariant(config or {})


class SilentStepProperty(Ticker):
    """``Forward`` returns None for the step into state ``at``."""

    def __init__(self, config: dict):
        super().__init__(config)
        self.action_invariants = {"Forward": lambda s, a, t: True if t[0] != self.at else None}


def silent_step_property(config: dict | None = None) -> SilentStepProperty:
    return SilentStepProperty(config or {})


class ExitingSuccessors(Ticker):
    """``successors`` calls ``sys.exit(9)`` at state ``at``."""

    def successors(self, s):
        if s[0] == self.at:
            sys.exit(9)  # the search leaves
        yield from super().successors(s)


def exiting_successors(config: dict | None = None) -> ExitingSuccessors:
    return ExitingSuccessors(config or {})


class GreedySuccessors(Ticker):
    """``successors`` runs out of memory at state ``at``: it asks for a petabyte."""

    def successors(self, s):
        if s[0] == self.at:
            bytearray(1 << 50)
        yield from super().successors(s)


def greedy_successors(config: dict | None = None) -> GreedySuccessors:
    return GreedySuccessors(config or {})


class DescribeRaises(DieHard):
    """The Die Hard jugs, whose ``describe`` (for traces) fails."""

    def describe(self, s):
        raise ValueError("describe is broken")


def describe_raises(config: dict | None = None) -> DescribeRaises:
    return DescribeRaises(config or {})


class DescribeActionRaises(DieHard):
    """The Die Hard jugs, whose ``describe_action`` (for reports and traces) fails."""

    def describe_action(self, action):
        raise RuntimeError("describe_action is broken")


def describe_action_raises(config: dict | None = None) -> DescribeActionRaises:
    return DescribeActionRaises(config or {})


class FloatParameters(Ticker):
    """A ticker whose actions carry a float parameter: states are fine, ITF cannot hold the action."""

    def __init__(self, config: dict):
        super().__init__(config)
        self.invariants = {"Small": lambda s: s[0] < self.limit}

    def successors(self, s):
        for action, target in super().successors(s):
            yield ("Tick", target[0] / 2), target


def float_parameters(config: dict | None = None) -> FloatParameters:
    return FloatParameters(config or {})


