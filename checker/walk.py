"""Seeded random walks through a model: each walk a path from an initial state, one enabled
step chosen at random at a time, reproducible from its seed and index alone.

A walk knows nothing about what it walks through: a caller may narrow the steps it may take
(``allowed``), for instance to the actions another program can follow, and reads the path.
Simulation and conformance testing both build on it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .protocol import Action, State, action_name


@dataclass(frozen=True)
class Walk:
    """One random walk: where it came from and the path it took."""

    seed: int
    index: int
    #: the initial state
    start: State
    #: every step taken, in order: (action, state reached)
    steps: tuple[tuple[Action, State], ...]
    #: why it ended: "depth" (the bound), "deadlock" (no step enabled) or "stopped" (the caller's
    #: ``until`` said so)
    ending: str


def walk_rng(seed: int, index: int) -> random.Random:
    """The random source of walk ``index`` of ``seed``: the same in every process and run
    (``random.Random`` seeded with a string hashes it with SHA-512, not Python's salted ``hash``)."""
    return random.Random(f"kraftcheck-walk:{seed}:{index}")


def random_walk(model: Any, seed: int, index: int, depth: int,
                allowed: Callable[[Action], bool] | None = None,
                until: Callable[[State, Action, State], bool] | None = None,
                weight: Callable[[Action], float] | None = None, by_action: bool = False) -> Walk:
    """Walk ``index`` of ``seed``: from one of the model's initial states (chosen at random),
    take up to ``depth`` steps, each chosen among the enabled successors whose action
    ``allowed`` accepts: uniformly, or in proportion to ``weight(action)`` (a positive number),
    or with ``by_action`` an action's name first, uniformly among the names enabled, then one
    of its steps (an action with many parameters, a broker's crash with three brokers, is then
    no likelier than one with a single step).
    ``until(previous, action, state)`` ends the walk after the step it returns true for."""
    if by_action and weight is not None:
        raise ValueError("a walk picks by action or by weight, not both")
    rng = walk_rng(seed, index)
    starts = list(model.init_states())
    if not starts:
        raise ValueError("the model has no initial state")
    state = start = starts[rng.randrange(len(starts))]
    steps: list[tuple[Action, State]] = []
    ending = "depth"
    for _ in range(depth):
        choices = [(a, n) for a, n in model.successors(state) if allowed is None or allowed(a)]
        if not choices:
            ending = "deadlock"
            break
        action, successor = choices[_pick_by_action(rng, choices) if by_action else _pick(rng, choices, weight)]
        steps.append((action, successor))
        previous, state = state, successor
        if until is not None and until(previous, action, successor):
            ending = "stopped"
            break
    return Walk(seed, index, start, tuple(steps), ending)


def _pick_by_action(rng: random.Random, choices: list) -> int:
    positions: dict[str, list[int]] = {}
    for position, (action, _) in enumerate(choices):
        positions.setdefault(action_name(action), []).append(position)
    names = list(positions)  # in the order the model gives its steps: the same in every run
    group = positions[names[rng.randrange(len(names))]]
    return group[rng.randrange(len(group))]


def _pick(rng: random.Random, choices: list, weight: Callable[[Action], float] | None) -> int:
    if weight is None:
        return rng.randrange(len(choices))
    weights = [weight(a) for a, _ in choices]
    point = rng.random() * sum(weights)
    for i, w in enumerate(weights):
        point -= w
        if point < 0:
            return i
    return len(choices) - 1


def random_walks(model: Any, seed: int, count: int, depth: int,
                 allowed: Callable[[Action], bool] | None = None,
                 weight: Callable[[Action], float] | None = None) -> Iterator[Walk]:
    """Walks 0, 1, ..., ``count - 1`` of ``seed``."""
    for index in range(count):
        yield random_walk(model, seed, index, depth, allowed, weight=weight)
