"""Seeded random walks (checker/walk.py): reproducible from (seed, index) alone, on a toy model."""

from __future__ import annotations

from kraftcheck.checker.walk import random_walk, random_walks
from tests.models import diehard


def test_a_walk_is_its_seed_and_index():
    model = diehard({})
    first, again = random_walk(model, 7, 3, 20), random_walk(model, 7, 3, 20)
    assert first == again
    assert [w.steps for w in random_walks(model, 7, 5, 20)][3] == first.steps
    assert len({random_walk(model, 7, i, 20).steps for i in range(10)}) > 1


def test_allowed_weight_and_until():
    model = diehard({})
    walk = random_walk(model, 0, 0, 30, allowed=lambda a: "Fill" in str(a))
    assert walk.steps and all("Fill" in str(a) for a, _ in walk.steps)
    heavy = random_walk(model, 0, 0, 30, weight=lambda a: 1000.0 if "Empty" in str(a) else 0.001)
    assert sum("Empty" in str(a) for a, _ in heavy.steps) > len(heavy.steps) // 2
    stopped = random_walk(model, 0, 0, 30, until=lambda s, a, t: True)
    assert (len(stopped.steps), stopped.ending) == (1, "stopped")


def test_picking_by_action_and_by_weight_at_once_is_refused():
    import pytest

    with pytest.raises(ValueError, match="^a walk picks by action or by weight, not both$"):
        random_walk(diehard({}), 0, 0, 5, weight=lambda a: 1.0, by_action=True)
