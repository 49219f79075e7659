"""The Die Hard jugs, the smallest model worth checking: a 3-gallon and a 5-gallon jug, a tap
and a drain; can you measure exactly 4 gallons?

    kraftcheck check --model kraftcheck.examples.diehard:make_model

``NotFourGallons`` claims the big jug never holds 4 gallons; kraftcheck refutes it with the
shortest way to measure them: 7 states, out of 14 explored.

A model is any object with ``init_states()``, ``successors(state)`` (pairs of an action and the
state it leads to) and ``invariants`` (name -> predicate); states are made of ints, strings,
tuples and frozensets.  Everything else (``actions``, ``describe``) only makes reports read better.
"""


class DieHard:
    actions = ["FillSmall", "FillBig", "EmptySmall", "EmptyBig", "SmallToBig", "BigToSmall"]

    def __init__(self, small: int = 3, big: int = 5, goal: int = 4):
        self.small_cap, self.big_cap, self.goal = small, big, goal
        self.invariants = {"NotFourGallons": self.NotFourGallons}

    def NotFourGallons(self, state) -> bool:
        """The big jug never holds exactly the goal (4 gallons): the claim the movie's heroes must refute."""
        return state[1] != self.goal

    def init_states(self):
        return [(0, 0)]  # (small, big): both jugs empty

    def successors(self, state):
        small, big = state
        yield "FillSmall", (self.small_cap, big)
        yield "FillBig", (small, self.big_cap)
        yield "EmptySmall", (0, big)
        yield "EmptyBig", (small, 0)
        pour = min(small, self.big_cap - big)
        yield "SmallToBig", (small - pour, big + pour)
        pour = min(big, self.small_cap - small)
        yield "BigToSmall", (small + pour, big - pour)

    def describe(self, state):
        """The variables as traces show them."""
        return {"small": state[0], "big": state[1]}


def make_model(settings: dict):
    """The factory ``--model`` names: a config's ``[model]`` table (or ``--set``) comes in as ``settings``."""
    unknown = sorted(set(settings) - {"small", "big", "goal"})
    if unknown:
        raise ValueError(f"unknown model setting {unknown[0]!r} (known: small, big, goal)")
    return DieHard(**settings)
