"""The Spark engine against the local engine on toy models: the same figures, traces that replay.

One local[2] session serves the whole module (the engine uses a running session and leaves
it running), so each check costs its levels, not a JVM start.
"""

from __future__ import annotations

from typing import NamedTuple

import pytest

from kraftcheck.checker.bfs import explore
from kraftcheck.checker.config import CheckConfig, build_model
from tests.spark_helpers import assert_same, local_spark, narrow_level  # noqa: F401  (a fixture)

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
    # states that are frozensets of strings, whose iteration order the hash seed decides
    "frozensets": ("tests.models:tokens", {"size": 6}, {"stop_on_violation": False}),
    # the bound at the first state, inside a level, at the end of a level, and on its last state
    **{f"diehard-max-states-{n}": ("tests.models:diehard", {}, {"max_states": n}) for n in (1, 3, 5, 10, 14)},
}


#: How the levels run (``spark.kraftcheck.narrowLevel``): each in a job of its own; narrow ones
#: (at most 3 transitions) in one task and the others not, the search going back and forth;
#: as by default, where every toy model's search runs in one task.
NARROW_LEVEL = {"a-job-per-level": "0", "mixed": "3", "default": None}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("levels", sorted(NARROW_LEVEL))
def test_same_figures_as_the_local_engine(spark, levels, case):
    model_ref, settings, options = CASES[case]
    with narrow_level(spark, NARROW_LEVEL[levels]):
        both(spark, model_ref, settings, **options)


@pytest.mark.parametrize("narrow, jobs", [("0", 6), ("3", 5), (None, 1)])
def test_narrow_levels_run_in_one_job(spark, narrow, jobs):
    """Two counters 0..2: levels of 1, 2, 3, 2, 1 states generating 2, 6, 8, 6, 2 transitions (25
    generated states with the initial one),
    then a level that adds none.  A job per level; or, narrow levels being those of at most 3
    transitions, levels 1-2 in one job (the second is wide), 3, 4 and 5 a job each, the empty
    level one more; by default, one job for all."""
    from kraftcheck.checker.spark import explore_spark

    context = spark.spark.sparkContext
    group = f"narrow-levels-{narrow}"
    context.setJobGroup(group, "a test counts this group's jobs")
    try:
        with narrow_level(spark, narrow):
            r = explore_spark(CheckConfig(model="tests.models:counters", settings={"n": 2, "limit": 2}),
                              master="local[2]")
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert (r.distinct_states, r.generated_states, r.depth, len(r.level_seconds)) == (9, 25, 5, 5)
    assert len(context.statusTracker().getJobIdsForGroup(group)) == jobs


@pytest.mark.parametrize("narrow, warmed", [(None, True), ("0", False)])
def test_workers_are_started_beside_the_first_levels_run_in_one_task(spark, monkeypatch, narrow, warmed):
    """While the first levels run in one task, a job of one task per partition (a shuffle
    after it) starts the other Python workers; it has ended (or been cancelled) when the search
    returns.  When the first level is a job of its own there is nothing to start beside it."""
    from kraftcheck.checker import spark as engine

    started, warm_up = [], engine._WarmUp
    monkeypatch.setattr(engine, "_WarmUp", type("Noted", (warm_up,), {
        "__init__": lambda self, *args: started.append(self) or warm_up.__init__(self, *args)}))
    with narrow_level(spark, narrow):
        r = engine.explore_spark(CheckConfig(model="tests.models:counters", settings={"n": 2, "limit": 2}),
                                 master="local[2]")
    assert (r.distinct_states, r.depth) == (9, 5)
    tracker = spark.spark.sparkContext.statusTracker()
    assert list(tracker.getActiveJobsIds()) == []
    assert len(started) == int(warmed)
    for warming in started:
        [job] = tracker.getJobIdsForGroup(warming.group)
        assert len(tracker.getJobInfo(job).stageIds) == 2  # done or cancelled: no job is active


def test_levels_run_in_one_task_only_while_one_worker_can_hold_the_visited_set(spark, monkeypatch):
    """Two counters 0..2 (1, 3, 6, 8, 9 states visited after each level), at most 3 states in
    one task: levels 1-3 in one job (the third leaves 6), then 4, 5 and the empty level 6 a
    job each."""
    from kraftcheck.checker import spark as engine

    monkeypatch.setattr(engine, "ONE_TASK_VISITED", 3)
    context = spark.spark.sparkContext
    context.setJobGroup("one-task-visited", "a test counts this group's jobs")
    try:
        r = engine.explore_spark(CheckConfig(model="tests.models:counters", settings={"n": 2, "limit": 2}),
                                 master="local[2]")
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert (r.distinct_states, r.depth) == (9, 5)
    assert len(context.statusTracker().getJobIdsForGroup("one-task-visited")) == 4


@pytest.mark.parametrize("value, error", [
    ("-1", "spark.kraftcheck.narrowLevel must not be negative, not '-1'"),
    ("many", "spark.kraftcheck.narrowLevel must be an integer, not 'many'"),
])
def test_a_bad_narrow_level_is_a_clear_error(spark, value, error):
    from kraftcheck.checker.config import ConfigError
    from kraftcheck.checker.spark import explore_spark

    with narrow_level(spark, value), pytest.raises(ConfigError) as raised:
        explore_spark(CheckConfig(model="tests.models:countdown"), master="local[2]")
    assert str(raised.value) == error


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


def test_a_session_the_engine_starts_shuffles_without_compression_or_checksums(spark):
    conf = spark.spark.sparkContext.getConf()
    assert conf.get("spark.shuffle.compress") == "false" and conf.get("spark.shuffle.checksum.enabled") == "false"


def test_the_engines_shuffles_hash_no_rows(spark):
    """Spark 4.1+ hashes every row a shuffle writes (an order-independent checksum, to retry the
    consumers of a map task whose retry wrote other rows) unless both its keys are off."""
    from py4j.protocol import Py4JError

    from kraftcheck.checker.spark import ORDER_INDEPENDENT_CHECKSUM_KEYS, _SparkSearch

    session = spark.spark
    saved = {key: session.conf.get(key, None) for key in ORDER_INDEPENDENT_CHECKSUM_KEYS}
    try:
        for key in ORDER_INDEPENDENT_CHECKSUM_KEYS:
            session.conf.set(key, "true")
        _SparkSearch._configure(type("Search", (), {"spark": session, "partitions": 2})())
        shuffle = session.range(4).withColumnRenamed("id", "fp").repartition(2, "fp")
        dependency = shuffle._jdf.queryExecution().executedPlan().shuffleDependency()
        try:
            checksums = dependency.rowBasedChecksums()
        except Py4JError:
            pytest.skip("this Spark computes no row checksums in its shuffles")
        assert len(checksums) == 0
    finally:
        for key, value in saved.items():
            if value is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, value)


def test_the_first_level_is_read_by_the_jvm_without_a_python_worker(spark):
    """The initial states reach Spark as a local table, not as Python rows (which Spark reads
    through a Python worker of a kind of its own, started while the first level waits)."""
    from kraftcheck.checker.spark import _SparkSearch

    config = CheckConfig(model="tests.models:diehard", settings={})
    search = _SparkSearch(spark, config, build_model(config), None, None, True, True, None)
    search._configure()
    plan = search._initial_candidates()._jdf.queryExecution().executedPlan().toString()
    assert plan.startswith("LocalTableScan [kind#"), plan
    assert "ExistingRDD" not in plan


def test_a_spark_that_takes_no_arrow_table_gets_the_first_level_as_rows(spark, monkeypatch):
    """Before Spark 4.0 ``createDataFrame`` takes no Arrow table: the rows go as Python rows,
    and the search finds what the local engine finds."""
    from kraftcheck.checker import spark as engine

    monkeypatch.setattr(engine, "_takes_arrow_tables", lambda: False)
    config = CheckConfig(model="tests.models:diehard", settings={})
    search = engine._SparkSearch(spark, config, build_model(config), None, None, True, True, None)
    search._configure()
    assert "ExistingRDD" in search._initial_candidates()._jdf.queryExecution().executedPlan().toString()
    both(spark, "tests.models:diehard")


def test_a_local_session_the_engine_starts_keeps_freed_memory_for_reuse(spark):
    """The driver JVM and the Python workers get the allocator settings; this process does not keep them."""
    import os

    from kraftcheck.checker.spark_session import LOCAL_ALLOCATOR_ENV

    def worker_environment(batches):
        import pyarrow as pa

        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({name: [os.environ.get(name)] for name in LOCAL_ALLOCATOR_ENV})

    # what the environment running the tests sets itself is kept
    own = {name: os.environ[name] for name in LOCAL_ALLOCATOR_ENV if name in os.environ}
    expected = {**LOCAL_ALLOCATOR_ENV, **own}
    schema = ", ".join(f"{name} string" for name in LOCAL_ALLOCATOR_ENV)
    seen = spark.spark.range(1, numPartitions=1).mapInArrow(worker_environment, schema).collect()[0].asDict()
    assert seen == expected
    jvm = spark.spark.sparkContext._jvm
    assert {name: jvm.java.lang.System.getenv(name) for name in LOCAL_ALLOCATOR_ENV} == expected
    assert {name: os.environ[name] for name in LOCAL_ALLOCATOR_ENV if name in os.environ} == own


def test_a_python_worker_asks_for_prompt_acknowledgements_on_its_connection_to_the_jvm(spark):
    """Each task's worker finds its one connection to the JVM, on loopback, and sets
    TCP_QUICKACK on it: a small input is then not held back by Nagle's algorithm."""
    import json
    import socket

    from kraftcheck.checker.spark_worker import acknowledge_promptly

    if not hasattr(socket, "TCP_QUICKACK"):
        pytest.skip("TCP_QUICKACK is Linux's")

    def connections(batches):
        import pyarrow as pa

        found = acknowledge_promptly()
        for _ in batches:
            pass
        yield pa.RecordBatch.from_pydict({"connections": [json.dumps(sorted(found))]})

    rows = spark.spark.range(0, 2, 1, 2).mapInArrow(connections, "connections string").collect()
    assert len(rows) == 2
    for row in rows:
        [(local, peer)] = json.loads(row.connections)
        assert local[0] == peer[0] == "127.0.0.1"


def test_allocator_settings_already_in_the_environment_are_kept(monkeypatch):
    import os

    from kraftcheck.checker.spark_session import _environment

    monkeypatch.setenv("MIMALLOC_PURGE_DELAY", "10")
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    with _environment({"MIMALLOC_PURGE_DELAY": "-1", "GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"}):
        assert (os.environ["MIMALLOC_PURGE_DELAY"], os.environ["GLIBC_TUNABLES"]) == ("10", "glibc.malloc.trim_threshold=1")
    assert os.environ["MIMALLOC_PURGE_DELAY"] == "10" and "GLIBC_TUNABLES" not in os.environ


def test_a_local_session_the_engine_starts_has_a_2g_driver_unless_told_otherwise(spark, tmp_path):
    from kraftcheck.checker.spark_session import driver_memory_configured

    assert spark.spark.sparkContext.getConf().get("spark.driver.memory") == "2g"
    home = tmp_path / "spark"
    (home / "conf").mkdir(parents=True)
    assert not driver_memory_configured({"SPARK_HOME": str(home)})
    assert driver_memory_configured({"SPARK_HOME": str(home), "SPARK_DRIVER_MEMORY": "4g"})
    assert driver_memory_configured({"SPARK_HOME": str(home), "PYSPARK_SUBMIT_ARGS": "--driver-memory 4g pyspark-shell"})
    assert driver_memory_configured(
        {"SPARK_HOME": str(home), "PYSPARK_SUBMIT_ARGS": "--conf spark.driver.memory=4g pyspark-shell"})
    (home / "conf" / "spark-defaults.conf").write_text("spark.executor.memory 1g\n")
    assert not driver_memory_configured({"SPARK_HOME": str(home)})
    (home / "conf" / "spark-defaults.conf").write_text("spark.executor.memory 1g\nspark.driver.memory  8g\n")
    assert driver_memory_configured({"SPARK_HOME": str(home)})
    other = tmp_path / "conf"
    other.mkdir()
    (other / "spark-defaults.conf").write_text("spark.driver.memory 8g\n")
    assert driver_memory_configured({"SPARK_HOME": str(tmp_path / "none"), "SPARK_CONF_DIR": str(other)})


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
