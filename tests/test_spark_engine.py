"""The Spark engine against the local engine on toy models: the same figures, traces that replay.

One local[2] session serves the whole module (the engine uses a running session and leaves
it running), so each check costs its levels, not a JVM start.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from kraftcheck.checker.bfs import explore
from kraftcheck.checker.config import CheckConfig, build_model
from tests.spark_helpers import assert_same, local_spark  # noqa: F401  (a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::FutureWarning")]


@pytest.fixture(scope="module")
def spark(local_spark):
    return local_spark


def both(spark, model_ref: str, settings: dict | None = None, **options):
    from kraftcheck.checker.spark import explore_spark

    config = CheckConfig(model=model_ref, settings=dict(settings or {}))
    local = explore(build_model(config), **options)
    remote = explore_spark(config, master="local[2]", **options)
    assert_same(local, remote, build_model(config))
    return local, remote


CASES = {
    "diehard": ("tests.models:diehard", {}, {}),
    "diehard-continue": ("tests.models:diehard", {}, {"stop_on_violation": False}),
    "countdown-deadlock": ("tests.models:countdown", {"start": 4}, {}),
    "countdown-no-deadlock": ("tests.models:countdown", {"start": 3}, {"check_deadlock": False}),
    "two-starts": ("tests.models:two_starts", {}, {}),
    "counters": ("tests.models:counters", {"n": 3, "limit": 3}, {}),
    "counters-depth-bound": ("tests.models:counters", {"n": 3, "limit": 3}, {"max_depth": 4}),
    "counters-depth-bound-at-depth": ("tests.models:counters", {"n": 2, "limit": 2}, {"max_depth": 5}),
    "steps": ("tests.test_spark_engine:steps", {}, {}),
    "symmetric": ("tests.test_spark_engine:symmetric", {}, {"check_deadlock": False}),
    "named-tuples": ("tests.test_spark_engine:named_tuples", {}, {}),
    # the bound at the first state, inside a level, at the end of a level, and on its last state
    **{f"diehard-max-states-{n}": ("tests.models:diehard", {}, {"max_states": n}) for n in (1, 3, 5, 10, 14)},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_figures_as_the_local_engine(spark, case):
    model_ref, settings, options = CASES[case]
    both(spark, model_ref, settings, **options)


def test_diehard_exact_figures(spark):
    _, r = both(spark, "tests.models:diehard")
    assert (r.distinct_states, r.generated_states, r.depth) == (14, 73, 7)
    [cx] = r.violations
    assert cx.name == "NotFourGallons" and cx.length == 7 and cx.trace[-1][1][1] == 4
    assert len(r.level_seconds) == 7


def test_max_states_bound_is_incomplete(spark):
    from kraftcheck.checker.spark import explore_spark

    r = explore_spark(CheckConfig(model="tests.models:counters"), master="local[2]", max_states=10)
    assert r.verdict == "incomplete" and r.stopped_by == "max_states" and r.distinct_states == 10


@pytest.mark.parametrize(
    "model_ref, settings, options, figures",
    [
        ("tests.models:diehard", {}, {}, (14, 7, None)),  # stops at a violation
        ("tests.models:countdown", {"start": 3}, {"check_deadlock": False}, (4, 4, None)),  # exhaustive
        ("tests.models:diehard", {}, {"max_states": 10}, (10, 5, "max_states")),
        ("tests.models:diehard", {}, {"max_states": 3}, (3, 2, "max_states")),  # at the end of a level
        ("tests.models:counters", {"n": 3, "limit": 3}, {"max_depth": 4}, (20, 4, "max_depth")),
    ],
    ids=["violation", "exhaustive", "max-states", "max-states-at-a-level-end", "max-depth"],
)
def test_a_search_leaves_no_checkpoint_behind(spark, model_ref, settings, options, figures):
    """Each level's checkpoint is dropped once the next holds its parent records, the last once
    the traces are rebuilt: a session the caller started keeps nothing of the search."""
    from kraftcheck.checker.spark import explore_spark

    def checkpoints() -> int:
        return spark.spark.sparkContext._jsc.sc().getPersistentRDDs().size()

    before = checkpoints()
    r = explore_spark(CheckConfig(model=model_ref, settings=settings), master="local[2]", **options)
    assert (r.distinct_states, r.depth, r.stopped_by) == figures
    assert checkpoints() == before


def test_the_driver_jvm_the_engine_starts_compiles_with_c1_only(spark):
    jvm = spark.spark.sparkContext._jvm
    arguments = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert "-XX:TieredStopAtLevel=1" in arguments


def test_progress_has_one_line_per_level(spark, capsys):
    from kraftcheck.checker.spark import explore_spark

    seen = []
    explore_spark(CheckConfig(model="tests.models:countdown", settings={"start": 2}), master="local[2]",
                  progress=seen.append)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("level ")]
    assert [line.split(",")[0] for line in lines] == ["level 1: frontier 1", "level 2: frontier 1", "level 3: frontier 1"]
    assert "distinct 3" in lines[-1] and lines[-1].endswith(" s")
    assert [p.distinct_states for p in seen] == [1, 2, 3]


# ---------------------------------------------------------------- models only these tests need


class _Steps:
    """A counter 0..3 whose step property forbids going from 2 to 3; also an invariant that fails later."""

    actions = ["Up", "Reset"]

    def __init__(self):
        self.invariants = {"BelowThree": lambda s: s < 3}
        self.action_invariants = {"NoTwoToThree": lambda s, a, t: not (s == 2 and t == 3)}

    def init_states(self):
        return [0]

    def successors(self, s):
        if s < 3:
            yield "Up", s + 1
        yield "Reset", 0


def steps(config=None):
    return _Steps()


class _Symmetric:
    """Three interchangeable counters 0..2: canonical() sorts them."""

    invariants = {"Small": lambda s: sum(s) <= 6}

    def init_states(self):
        return [(0, 0, 0)]

    def successors(self, s):
        for i in range(3):
            if s[i] < 2:
                yield ("Inc", i), s[:i] + (s[i] + 1,) + s[i + 1 :]

    def canonical(self, s):
        return tuple(sorted(s))


def symmetric(config=None):
    return _Symmetric()


class Jugs(NamedTuple):
    small: int
    big: int


class _NamedJugs:
    """The Die Hard jugs with NamedTuple states: pickled, not marshalled, for transport."""

    def __init__(self):
        self.invariants = {"NotFour": lambda s: s.big != 4}

    def init_states(self):
        return [Jugs(0, 0)]

    def successors(self, s):
        yield "FillSmall", s._replace(small=3)
        yield "FillBig", s._replace(big=5)
        yield "EmptySmall", s._replace(small=0)
        yield "EmptyBig", s._replace(big=0)
        pour = min(s.small, 5 - s.big)
        yield "SmallToBig", Jugs(s.small - pour, s.big + pour)
        pour = min(s.big, 3 - s.small)
        yield "BigToSmall", Jugs(s.small + pour, s.big - pour)


def named_tuples(config=None):
    return _NamedJugs()


def test_partition_keys_go_where_spark_hash_partitioning_sends_them(spark):
    """The engine computes Spark's hash() of a bigint itself (Murmur3, seed 42), to key each
    partition's rows without a Spark job; Spark must agree on every value and every key."""
    from pyspark.sql import functions as F

    from kraftcheck.checker.spark_worker import partition_keys, spark_hash_long

    values = [0, 1, -1, 2**63 - 1, -(2**63), 123456789012345, -987654321, *range(2, 200)]
    session = spark.spark
    rows = session.createDataFrame([(v,) for v in values], "v bigint").select("v", F.hash("v").alias("h")).collect()
    assert [spark_hash_long(row.v) for row in rows] == [row.h for row in rows]
    for partitions in (1, 2, 3, 7, 16):
        keys = partition_keys(partitions)
        placed = session.range(1).select(*[F.expr(f"pmod(hash(cast({k} as bigint)), {partitions})") for k in keys])
        assert list(placed.collect()[0]) == list(range(partitions))


def test_admission_keeps_the_least_parent_and_skips_the_visited():
    """A partition's admission, without Spark: one record per new fingerprint, the least
    ``(parent, ordinal)`` whatever the order of the candidates, none already visited, sorted,
    and the visited set grown by exactly those."""
    import numpy as np

    from kraftcheck.checker.spark_worker import Visited, admit, records_batch

    visited = Visited(np.array([5, 20], np.int64), np.array([0, 5], np.int64), np.array([0, 1], np.int32))
    first = records_batch([30, 20, 7], [9, 9, 9], [2, 0, 1], ["A", "B", "C"], [b"x", b"y", b"z"])
    second = records_batch([7, 30, 30], [8, 9, 3], [4, 0, 5], ["D", "E", "F"], [b"p", b"q", b"r"])
    for candidates in ([first, second], [second, first]):
        admitted, grown = admit(visited, candidates)
        assert admitted.column("fp").to_pylist() == [7, 30]
        assert admitted.column("parent").to_pylist() == [8, 3]
        assert admitted.column("action").to_pylist() == ["D", "F"]
        assert grown.fp.tolist() == [5, 7, 20, 30]
        assert grown.parent.tolist() == [0, 8, 5, 3] and grown.ordinal.tolist() == [0, 4, 1, 5]
    admitted, grown = admit(visited, [first, second], quota=1)
    assert admitted.column("fp").to_pylist() == [7] and grown.fp.tolist() == [5, 7, 20]


def test_visited_pieces_bear_their_least_fingerprint_and_hold_the_parent_records():
    """A visited set goes out in pieces of VISITED_PER_ROW records, each row's ``parent`` its
    least fingerprint (what a counterexample's lookup picks the piece by); a piece finds the
    parent records it holds and no others."""
    import numpy as np

    from kraftcheck.checker.spark_worker import VISITED, VISITED_PER_ROW, Visited, find_parent, visited_rows

    count = 2 * VISITED_PER_ROW + 1000
    fps = np.arange(count, dtype=np.int64) * 3 - 100_000
    visited = Visited(fps, fps + 1, (np.arange(count) % 7).astype(np.int32))
    [rows] = list(visited_rows(42, visited))
    assert rows.column("kind").to_pylist() == [VISITED] * 3 and rows.column("fp").to_pylist() == [42] * 3
    assert rows.column("n").to_pylist() == [VISITED_PER_ROW, VISITED_PER_ROW, 1000]
    assert rows.column("parent").to_pylist() == [int(fps[0]), int(fps[VISITED_PER_ROW]), int(fps[2 * VISITED_PER_ROW])]
    pieces = rows.column("state").to_pylist()
    wanted = int(fps[VISITED_PER_ROW + 5])
    assert find_parent(wanted, pieces[1]) == (wanted + 1, (VISITED_PER_ROW + 5) % 7)
    assert find_parent(wanted, pieces[0]) is None and find_parent(wanted + 1, pieces[1]) is None
    [empty] = list(visited_rows(42, Visited(fps[:0], fps[:0], np.zeros(0, np.int32))))
    assert empty.column("n").to_pylist() == [0] and empty.column("parent").to_pylist() == [None]
