"""The local engine on toy models whose answers are known by hand."""

import random
import subprocess
import sys
from typing import NamedTuple

import pytest

from kraftcheck.checker.bfs import NondeterministicModel, explore
from kraftcheck.checker.fingerprint import fingerprint
from tests.models import countdown, counters, diehard, two_starts


def actions(cx):
    return [a for a, _ in cx.trace]


def test_diehard_finds_four_gallons_in_seven_states():
    r = explore(diehard())
    assert r.verdict == "violation"
    [cx] = r.violations
    assert cx.name == "NotFourGallons" and cx.length == 7
    assert actions(cx) == [None, "FillBig", "BigToSmall", "EmptySmall", "BigToSmall", "FillBig", "BigToSmall"]
    assert cx.trace[-1][1] == (3, 4)
    # the search finishes the level of the violation: 14 states in 7 complete levels
    assert (r.distinct_states, r.generated_states, r.depth) == (14, 73, 7)


def test_diehard_whole_state_space_with_continue():
    r = explore(diehard(), stop_on_violation=False)
    assert (r.distinct_states, r.generated_states, r.depth) == (16, 97, 8)
    assert [cx.length for cx in r.violations] == [7]
    assert r.coverage["FillBig"] == {"generated": 16, "distinct": 3}
    assert sum(c["distinct"] for c in r.coverage.values()) == 16 - 1


def test_countdown_deadlocks_at_zero():
    r = explore(countdown({"start": 5}))
    assert r.verdict == "deadlock" and r.exit_code == 11
    assert r.deadlock.length == 6 and r.deadlock.trace[-1][1] == 0
    assert actions(r.deadlock)[1:] == [("Tick", 5), ("Tick", 4), ("Tick", 3), ("Tick", 2), ("Tick", 1)]


def test_deadlock_detection_can_be_turned_off():
    r = explore(countdown({"start": 5}), check_deadlock=False)
    assert r.verdict == "ok" and r.exit_code == 0
    assert (r.distinct_states, r.generated_states, r.depth) == (6, 6, 6)


def test_shortest_trace_starts_from_the_right_initial_state():
    r = explore(two_starts())
    [cx] = r.violations
    assert [s for _, s in cx.trace] == [100, 101, 102]


def test_two_initial_states_both_explored():
    r = explore(two_starts({"bad": -5}))
    assert r.verdict == "ok"
    assert (r.distinct_states, r.generated_states, r.depth) == (8, 10, 4)


def test_counters_state_count_and_depth():
    r = explore(counters({"n": 3, "limit": 3}))
    assert (r.distinct_states, r.depth) == (64, 10)
    assert r.generated_states == 1 + 64 * 3 * 2 * 3 // 4  # each counter: 3 of 4 values can go up, 3 down
    assert r.coverage == {"Dec": {"generated": 144, "distinct": 0}, "Inc": {"generated": 144, "distinct": 63}}


def test_max_states_bound_is_incomplete_never_ok():
    r = explore(counters({"n": 3, "limit": 3}), max_states=10)
    assert r.verdict == "incomplete" and r.exit_code == 3 and r.stopped_by == "max_states"
    assert r.distinct_states == 10


@pytest.mark.parametrize("bound, figures", [(1, (1, 1, 7)), (10, (10, 5, 61)), (13, (13, 7, 73))])
def test_max_states_bound_admits_part_of_a_level_and_generates_the_level_before_in_full(bound, figures):
    # diehard's levels hold 1, 2, 3, 2, 2, 2, 2 states: 1 and 10 fall at the end of a level, 13 inside one
    r = explore(diehard(), max_states=bound)
    assert (r.distinct_states, r.depth, r.generated_states) == figures and r.stopped_by == "max_states"


def test_max_depth_bound():
    r = explore(counters({"n": 3, "limit": 3}), max_depth=4)
    assert r.verdict == "incomplete" and r.stopped_by == "max_depth"
    assert r.depth == 4 and r.distinct_states == 1 + 3 + 6 + 10


def test_max_depth_at_the_real_depth_is_complete():
    r = explore(counters({"n": 3, "limit": 3}), max_depth=10)
    assert r.verdict == "ok" and r.stopped_by is None and r.distinct_states == 64


def test_never_enabled_actions_are_listed():
    model = diehard()
    model.actions = model.actions + ["Spill"]
    r = explore(model, stop_on_violation=False)
    assert r.never_enabled == ["Spill"]
    assert r.coverage["Spill"] == {"generated": 0, "distinct": 0}


class _Steps:
    """A counter 0..3 whose step property forbids going from 2 to 3."""

    invariants = {}
    actions = ["Up", "Reset"]

    def __init__(self):
        self.action_invariants = {"NoTwoToThree": lambda s, a, t: not (s == 2 and t == 3)}

    def init_states(self):
        return [0]

    def successors(self, s):
        if s < 3:
            yield "Up", s + 1
        yield "Reset", 0


def test_step_property_violation_ends_in_the_bad_step():
    r = explore(_Steps())
    [cx] = r.violations
    assert cx.kind == "action" and cx.name == "NoTwoToThree"
    assert [s for _, s in cx.trace] == [0, 1, 2, 3] and cx.length == 4
    assert r.exit_code == 13  # TLC's code for a violated action property


def test_an_invariant_and_a_step_property_violated_exit_as_an_invariant():
    steps = _Steps()
    steps.invariants = {"BelowThree": lambda s: s < 3}
    r = explore(steps, stop_on_violation=False)
    assert [(cx.kind, cx.name) for cx in r.violations] == [("invariant", "BelowThree"), ("action", "NoTwoToThree")]
    assert r.exit_code == 12


class _Shuffled:
    """A model whose successor order changes between calls: traces cannot be rebuilt."""

    invariants = {"Small": lambda s: s < 3}

    def init_states(self):
        return [0]

    def successors(self, s):
        options = [(("Add", k), s + k) for k in (1, 2)]
        random.shuffle(options)
        return options


def test_nondeterministic_successor_order_is_detected():
    random.seed(3)
    with pytest.raises(NondeterministicModel):
        for _ in range(20):  # some orders happen to replay; one of 20 runs will not
            explore(_Shuffled())


class _Symmetric:
    """Two interchangeable counters: with canonical() sorting them, (a, b) and (b, a) are one state."""

    invariants = {}

    def init_states(self):
        return [(0, 0)]

    def successors(self, s):
        for i in range(2):
            if s[i] < 2:
                yield ("Inc", i), s[:i] + (s[i] + 1,) + s[i + 1 :]

    def canonical(self, s):
        return tuple(sorted(s))


def test_symmetry_reduction_through_canonical():
    assert explore(_Symmetric(), check_deadlock=False).distinct_states == 6
    plain = _Symmetric()
    plain.canonical = None
    assert explore(plain, check_deadlock=False).distinct_states == 9


# ---------------------------------------------------------------- fingerprints


class Pair(NamedTuple):
    leader: int
    epoch: int


def test_fingerprints_separate_minus_one_from_minus_two():
    assert hash((-1, 5)) == hash((-2, 5))  # why Python's hash is no fingerprint
    assert fingerprint((-1, 5)) != fingerprint((-2, 5))
    assert fingerprint((None, -1)) != fingerprint((None, -2))


def test_fingerprint_of_namedtuple_equals_plain_tuple():
    assert fingerprint(Pair(-1, 3)) == fingerprint((-1, 3))
    assert fingerprint((Pair(1, 2), (3,))) == fingerprint(((1, 2), (3,)))


def test_equal_states_built_differently_have_equal_fingerprints():
    shared = (1, 2)
    assert fingerprint((shared, shared)) == fingerprint(((1, 2), (1, 2)))


def test_fingerprints_are_equal_across_processes():
    states = [(-1, 5), ("broker", None, (1, 2)), (2**70, True)]
    code = (
        "from kraftcheck.checker.fingerprint import fingerprint;"
        f"print([fingerprint(s) for s in {states!r}])"
    )
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    assert outputs == {f"{[fingerprint(s) for s in states]}\n"}
