"""The Spark engine: level-synchronous breadth-first search over DataFrames.

Fingerprints are spread over ``P`` partitions, fingerprint ``f`` to partition ``f mod P``.
Every row of partition ``i`` bears in its ``fp`` column the same key, a value that Spark's
hash partitioning sends to partition ``i``, so a ``repartition`` by that column puts each
row where its fingerprints belong.  A level's checkpointed DataFrame holds, per partition
(rows of :data:`~.spark_worker.ROW_SCHEMA`):

- the partition's visited set: the parent record ``(fp, parent, ordinal)`` of every state
  reached so far, sorted by fingerprint, in pieces of thousands (one Arrow IPC stream per
  :data:`~.spark_worker.VISITED` row);
- the successors of the level's states, first seen by the task that generated them, bound
  for the partition of their fingerprint: the candidates of the next level
  (:data:`~.spark_worker.SUCCESSOR` blocks of ``(fp, parent, ordinal, action, state)``);
- the notes for the driver: violations, deadlocks, counts.

Each wide level is one Spark job of two stages: the previous level's rows are shuffled by
key (its notes, keyed by nothing, go along and are skipped), then
:func:`~.spark_worker.level_partition` runs on each partition (``mapInArrow``, in the
executors' Python workers, where the model is rebuilt from the config): it anti-joins the
candidates with the partition's visited set in numpy (a new fingerprint keeps its least
``(parent, ordinal)``, so the outcome does not depend on the order rows arrive in), grows
the visited set, checks the invariants on the new states, checks the step properties on
their transitions, finds deadlocks and generates their successors.  The result is
checkpointed (``localCheckpoint``: kept on the executors, the lineage cut); only the last
level is kept, since its visited sets hold every level's parent records (the one before is
unpersisted at once), so what Spark holds grows with the states reached, not with the depth.
A block moves thousands of states as one row, so Spark's per-row costs (the JVM's rows, the
shuffle's records, Arrow's conversions) are paid per block, and each visited set is merged
where it lives instead of being re-hashed by a join at every level.

A job per level costs a fraction of a second however few states the level holds, and a BFS
starts and ends with many narrow levels.  After a level whose expansion generated few
transitions (``spark.kraftcheck.narrowLevel``), the next levels run in one task
(:func:`~.spark_worker.levels_in_one_task`, on the previous level's rows coalesced into one
partition: no shuffle): it merges every partition's visited set and runs level after level
while they stay narrow, yielding each level's notes, then the rows of the last level it ran,
keyed by partition as :func:`~.spark_worker.level_partition` would have left them.  It stops
at whatever the driver must decide on (a violation, a deadlock, a bad step) and leaves a
level that would pass ``max_states`` to the level-by-level path, so the driver takes each
level's notes as it takes a single level's.  Only while the visited set is small enough for
one worker (:data:`~.spark_session.ONE_TASK_VISITED`).

The driver collects the notes only, never states or fingerprints.  For a violation it walks
the parent records back, reading one piece of a visited set per level; the counterexample is
then rebuilt by re-executing the recorded steps (:mod:`.path`), exactly as the local engine
does.

The figures are those of the local engine: ``generated_states``, ``distinct_states``,
``depth``, the verdict, the violated invariants and the length of every counterexample.  A
level's states are checked and expanded in the same task; when the level violates an
invariant, its expansion's figures are dropped, so both engines stop after the same
complete level.  A level's expansion that finds a deadlock or a bad step stops the search
after the next level is admitted and checked, unexpanded; at the ``max_states`` bound the
last level is admitted again with a quota per partition, unexpanded.

docs/spark-engine.md says the same for a reader of the repository, with the settings a session
is given and why.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
import re
import signal
import sys
import time
import uuid
from collections import Counter

from .bfs import Progress, ProgressCallback
from .config import CheckConfig, ConfigError, build_model
from .path import counterexamples
from .result import Result
from .signals import Figures, Interrupted, note_figures, received
from .spark_package import EXECUTOR_REQUIREMENTS, ZIP_NAME
from .spark_session import (
    NARROW_KEY,
    NARROW_TRANSITIONS,
    ONE_TASK_VISITED,
    PARTITIONS_KEY,
    SparkHandle,
    open_session,
)
from .spark_worker import (
    ADMITTED,
    BAD_STATE,
    BAD_STEP,
    BLOCK_KINDS,
    DEADLOCK,
    DISTINCT,
    FAIL_ONCE_ENV,
    GENERATED,
    ROW_SCHEMA,
    SECONDS,
    VISITED,
    Job,
    find_parent,
    first_level_rows,
    initial_records,
    job_config,
    level_partition,
    levels_in_one_task,
    partition_keys,
    partition_of,
    warm_up,
)

#: Spark SQL settings that each make every shuffle hash the rows it writes (Spark 4.1+).
ORDER_INDEPENDENT_CHECKSUM_KEYS = (
    "spark.sql.shuffle.orderIndependentChecksum.enabled",
    "spark.sql.shuffle.orderIndependentChecksum.enableFullRetryOnMismatch",
)


def explore_spark(
    config: CheckConfig,
    *,
    master: str | None = None,
    progress: ProgressCallback | None = None,
    max_states: int | None = None,
    max_depth: int | None = None,
    check_deadlock: bool = True,
    stop_on_violation: bool = True,
) -> Result:
    """Explore the model of ``config`` on Spark; the same Result as the local engine, ``engine="spark"``.

    ``master``: ``local[N]``, ``spark://HOST:PORT``, ``sc://HOST:PORT`` (Spark Connect);
    default ``$SPARK_MASTER``, else spark-submit's session, else ``local[*]``.  With a
    ``progress`` callback, one line per level also goes to stderr.
    """
    if max_states is not None and max_states < 1:
        raise ValueError("max_states must be at least 1")
    if max_depth is not None and max_depth < 1:
        raise ValueError("max_depth must be at least 1")
    model = build_model(config)
    with _quiet_py4j_when_interrupted():
        handle = open_session(master, say=None if progress is None else _say)
        interrupted = _note_interrupts()
        search = None
        try:
            search = _SparkSearch(handle, config, model, max_states, max_depth, check_deadlock, stop_on_violation,
                                  progress)
            return search.run()
        except KeyboardInterrupt:
            _note_figures_so_far(search)
            handle.interrupt()
            raise
        except Exception as e:
            # Ctrl-C while the driver waits in the JVM may surface as whatever error the
            # cancelled call raises (a Py4J or Spark error), not as KeyboardInterrupt: say what it was.
            if interrupted.is_set() or received() is not None:
                _note_figures_so_far(search)
                handle.interrupt()
                raise Interrupted(received() or signal.SIGINT) from e
            missing = missing_on_executors(str(e))
            if missing is not None:
                raise ConfigError(missing) from None
            raise
        finally:
            interrupted.restore()
            handle.stop()


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


#: How a Python worker reports a module it cannot import, in the text of the task's failure.
_MODULE_NOT_FOUND = re.compile(r"ModuleNotFoundError: No module named '(?P<name>[\w.]+)'")


def missing_on_executors(failure: str) -> str | None:
    """The one line that says how to give the executors a module their tasks could not
    import (``failure`` is the text of the job's failure), or None when no task failed so or
    when the driver cannot import the module either (then the model's code is at fault, as
    the local engine would say)."""
    found = _MODULE_NOT_FOUND.search(failure)
    if found is None:
        return None
    name = found.group("name")
    top = name.split(".")[0]
    python = os.environ.get("PYSPARK_PYTHON", "python3")
    if top == "kraftcheck":
        return (f"the executors' Python ({python}) cannot import kraftcheck (no module named {name!r}): ship "
                f"{ZIP_NAME}, built by 'kraftcheck spark-package --out DIR', with spark-submit --py-files DIR/{ZIP_NAME}")
    if top not in sys.modules and importlib.util.find_spec(top) is None:
        return None
    if top in EXECUTOR_REQUIREMENTS:
        return (f"the executors' Python ({python}) has no module named {name!r}: install "
                f"{', '.join(EXECUTOR_REQUIREMENTS)} there, or set spark.pyspark.python to a Python that has them")
    return (f"the executors' Python ({python}) cannot import {name!r}, which the driver imports: ship it with "
            "spark-submit --py-files (a .py file, or a .zip of its package), or install it there")


def _note_figures_so_far(search: "_SparkSearch | None") -> None:
    """What the driver knows of an interrupted search: the levels it has taken in."""
    if search is not None:
        elapsed = time.perf_counter() - search.started if search.started else 0.0
        note_figures(Figures(search.distinct, search.generated, search.depth, elapsed))


class _QuietOnInterruption(logging.Filter):
    """Drops py4j's log records about an interruption: py4j logs a traceback when a signal
    interrupts a call to the JVM (and the calls of the clean-up may fail after it), where
    the command says in one line that it was interrupted."""

    def filter(self, record: logging.LogRecord) -> bool:
        from_py4j = record.name.startswith("py4j") or f"{os.sep}py4j{os.sep}" in record.pathname
        if not from_py4j:
            return True
        interrupting = record.exc_info is not None and isinstance(record.exc_info[1], KeyboardInterrupt)
        return not (interrupting or received() is not None)


#: The loggers py4j's records pass through: its module-level ``logging.exception`` calls log
#: on the root logger, its own loggers below "py4j" (a logger's filters see only its own records).
_PY4J_LOGGERS = ("", "py4j", "py4j.java_gateway", "py4j.clientserver")


@contextlib.contextmanager
def _quiet_py4j_when_interrupted():
    quiet = _QuietOnInterruption()
    loggers = [logging.getLogger(name) for name in _PY4J_LOGGERS]
    for logger in loggers:
        logger.addFilter(quiet)
    try:
        yield
    finally:
        for logger in loggers:
            logger.removeFilter(quiet)


class _InterruptFlag:
    """Notes a SIGINT, then lets the handler in place before (the command line's, else
    Python's: raise KeyboardInterrupt) act on it."""

    def __init__(self):
        self._set = False
        self._previous = None

    def install(self):
        import signal

        self._previous = signal.getsignal(signal.SIGINT)

        def on_sigint(signum, frame):
            self._set = True
            if callable(self._previous):
                self._previous(signum, frame)
            else:
                raise KeyboardInterrupt

        try:
            signal.signal(signal.SIGINT, on_sigint)
        except ValueError:  # not the main thread: signals are not ours to handle
            self._previous = None
        return self

    def is_set(self) -> bool:
        return self._set

    def restore(self):
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None


def _note_interrupts() -> _InterruptFlag:
    return _InterruptFlag().install()


class _WarmUp:
    """A job run in a thread of its own, beside the search: cancelled, if still running, when
    the search ends; its errors are of no consequence (the search starts what it needs)."""

    def __init__(self, spark, frame):
        from pyspark import InheritableThread

        self.context = spark.sparkContext
        self.group = f"kraftcheck-warm-up-{uuid.uuid4().hex}"
        self.thread = InheritableThread(target=self._run, args=(frame,), name="kraftcheck-warm-up", daemon=True)
        self.thread.start()

    def _run(self, frame) -> None:
        try:
            self.context.setJobGroup(self.group, "kraftcheck: Python workers started ahead of the first wide level")
            frame.collect()
        except Exception:
            pass

    def finish(self) -> None:
        if self.thread.is_alive():
            try:
                self.context.cancelJobGroup(self.group)
            except Exception:
                pass
        self.thread.join()


def driver_paths() -> tuple[str, ...]:
    """Where the driver finds modules that executors on this machine may need too (a model
    module in the working directory or on PYTHONPATH)."""
    paths = [os.getcwd()]
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return tuple(os.path.abspath(p) for p in paths)


def _takes_arrow_tables() -> bool:
    """Whether classic PySpark's ``createDataFrame`` takes an Arrow table (Spark 4.0 and later)."""
    import pyspark

    return int(pyspark.__version__.split(".")[0]) >= 4


def row_type_of(schema: str):
    """A DDL schema (``"name type, ..."``) as a StructType, built in Python: given as a DDL
    string, the schema would be parsed by the JVM's SQL parser at every level."""
    from pyspark.sql import types as T

    types = {"tinyint": T.ByteType, "int": T.IntegerType, "bigint": T.LongType, "string": T.StringType,
             "binary": T.BinaryType}
    return T.StructType([T.StructField(name, types[kind]()) for name, kind in map(str.split, schema.split(","))])


class _SparkSearch:
    def __init__(self, handle: SparkHandle, config, model, max_states, max_depth, check_deadlock, stop_on_violation,
                 progress):
        from pyspark.sql import functions as F

        self.F = F
        # Built once: each Column call is several round trips to the JVM, some of which
        # search every jar on the class path for a name (Spark's per-level driver cost).
        self.is_note = ~F.col("kind").isin(*BLOCK_KINDS)
        note = F.struct("kind", "fp", "parent", "ordinal", "action", "n", "level")
        self.notes = F.collect_list(F.when(self.is_note, note)).alias("notes")
        self.row_type = row_type_of(ROW_SCHEMA)
        self.handle = handle
        self.spark = handle.spark
        self.config = config
        self.model = model
        self.max_states = max_states
        self.max_depth = max_depth
        self.check_deadlock = check_deadlock
        self.stop_on_violation = stop_on_violation
        self.progress = progress
        self.invariant_names = list(model.invariants)
        self.step_names = list(getattr(model, "action_invariants", None) or {})
        self.job = Job(
            config_json=job_config(config),
            paths=driver_paths(),
            check_deadlock=check_deadlock,
            fail_once=os.environ.get(FAIL_ONCE_ENV) or None,
        )
        self.partitions = self._partitions()
        self.narrow_transitions = self._setting(NARROW_KEY, NARROW_TRANSITIONS)
        #: transitions the last level's expansion generated (for the first level: its states)
        self.last_generated = 0
        self.result = Result(engine="spark")

        #: the last level kept (checkpointed): its visited sets hold the parent records of every level
        self.records = None
        self.distinct = 0
        self.generated = 0
        self.depth = 0
        self.generated_by_action: Counter = Counter()
        self.distinct_by_action: Counter = Counter()
        # name -> (level, fp) of a violating state / (level of the parent, parent fp, ordinal)
        self.bad_states: dict[str, tuple[int, int]] = {}
        self.bad_steps: dict[str, tuple[int, int, int]] = {}
        self.deadlocked: tuple[int, int] | None = None
        self.started = 0.0

    def _partitions(self) -> int:
        return max(1, self._setting(PARTITIONS_KEY, self.handle.parallelism()))

    def _setting(self, key: str, default: int) -> int:
        """A whole number set in the session's conf under ``key``; ``default`` when unset."""
        configured = self.spark.conf.get(key, None)
        if not configured:
            return default
        try:
            value = int(configured)
        except ValueError:
            raise ConfigError(f"{key} must be an integer, not {configured!r}") from None
        if value < 0:
            raise ConfigError(f"{key} must not be negative, not {configured!r}")
        return value

    def _configure(self):
        conf = self.spark.conf
        conf.set("spark.sql.shuffle.partitions", str(self.partitions))
        # Each partition's visited set must meet exactly the successors hashed to it: no
        # adaptive coalescing of partitions.
        conf.set("spark.sql.adaptive.enabled", "false")
        conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "4096")
        # The shuffle's order-independent checksum hashes every byte shuffled, to detect a
        # retried map task writing other rows; the engine's shuffles read a checkpoint, so a
        # retry writes the same rows.  Spark computes it when either key is on (the second,
        # a full retry of the consumers on a mismatch, is on by default since Spark 4.1).
        for key in ORDER_INDEPENDENT_CHECKSUM_KEYS:
            conf.set(key, "false")
        # A level's plan is a few operators over a few thousand rows (blocks): compiling it to
        # Java costs more than interpreting it.
        conf.set("spark.sql.codegen.wholeStage", "false")

    # ---------------------------------------------------------------- the search

    def run(self) -> Result:
        self._configure()
        self.started = time.perf_counter()
        candidates = self._initial_candidates()  # what the next level is admitted from
        warming = self._warm_up() if candidates is not None and self._narrow() else None
        try:
            return self._search(candidates)
        finally:
            if warming is not None:
                warming.finish()

    def _search(self, candidates) -> Result:
        level_seconds = []
        expand = self.result.stopped_by is None
        while candidates is not None:
            level_started = time.perf_counter()
            if self.max_depth is not None and self.depth >= self.max_depth:
                if self._count_new(candidates):
                    self.result.stopped_by = "max_depth"
                break
            if expand and self._narrow():
                level, levels = self._levels_in_one_task(candidates)
                if not levels:  # the next level passes max_states: it is cut level by level
                    self._release(self.records)
                    self.records = candidates = level
                    level, levels = self._one_level(candidates, expand)
            else:
                level, levels = self._one_level(candidates, expand)
            if level is None:  # the search ended before the level
                break
            self._release(self.records)
            self.records = level
            taken = self._take_levels(levels, level_seconds, time.perf_counter() - level_started)
            if not taken or not expand or self.result.stopped_by is not None:
                break
            if self._must_stop():
                # What the level's expansion found (a deadlock, a bad step) stops the search
                # after the next level is built and checked, as in the local engine.
                expand = False
            candidates = level
        return self._finish(level_seconds)

    def _warm_up(self) -> "_WarmUp | None":
        """While the first levels run in one task, on one core, start on the others what the
        first wide level needs: a Python worker per core with the model built, then the JVM's
        hash shuffle (on two cores the first wide level cost 1.2 s beside 0.7 s for the next,
        larger one; 0.75 s with them started).  Nothing to gain on one core."""
        if self.partitions < 2 or self.handle.is_connect:
            return None
        workers = self.spark.range(0, self.partitions, 1, self.partitions).mapInArrow(
            functools.partial(warm_up, self.job), self.row_type)
        return _WarmUp(self.spark, workers.repartition(self.partitions, "fp"))

    def _one_level(self, candidates, expand: bool):
        """Admit, check and (with ``expand``) expand the next level, one task per partition:
        (the level, [its notes]); (None, []) when it adds no state, or none under ``max_states``."""
        # The expansion of the level at the depth bound only counts what lies beyond it:
        # the local engine checks no step property there either.
        check_steps = self.max_depth is None or self.depth + 1 < self.max_depth
        level, notes = self._level(candidates, expand=expand, check_steps=check_steps)
        count = self._admitted(notes)
        if count == 0:  # nothing new: the search is complete
            self._release(level)
            return None, []
        if self.max_states is not None and self.distinct + count > self.max_states:
            self.result.stopped_by = "max_states"
            quotas = self._quotas(notes, self.max_states - self.distinct)
            self._release(level)
            level, notes = self._level(candidates, expand=False, quotas=quotas)
            if self._admitted(notes) == 0:  # the bound fell at the end of the last level: no level more
                self._release(level)
                return None, []
        return level, [notes]

    def _narrow(self) -> bool:
        """Whether the next levels run in one task: the last one generated few transitions
        and the visited set is small enough for one worker to hold."""
        return 0 < self.last_generated <= self.narrow_transitions and self.distinct <= ONE_TASK_VISITED

    def _levels_in_one_task(self, candidates):
        """Run the next levels in one task while they stay narrow (:func:`levels_in_one_task`):
        (the last level run, [each level's notes]); the levels end where the task stopped."""
        levels = 1 << 30 if self.max_depth is None else self.max_depth - self.depth
        job = self._job(
            levels=levels,
            step_levels=levels if self.max_depth is None else levels - 1,
            narrow=self.narrow_transitions,
            max_visited=ONE_TASK_VISITED,
            max_new=None if self.max_states is None else self.max_states - self.distinct,
        )
        level, notes = self._checkpointed(
            candidates.coalesce(1).mapInArrow(functools.partial(levels_in_one_task, job), self.row_type))
        by_level: dict[int, list] = {}
        for row in notes:
            by_level.setdefault(row.level, []).append(row)
        return level, [by_level[i] for i in sorted(by_level)]

    def _take_levels(self, levels, level_seconds, seconds: float) -> bool:
        """Take in the notes of the levels a job ran, reporting each; False when the search
        ends with them (nothing new, or a violated invariant that stops it)."""
        measured = [sum(row.n for row in notes if row.kind == SECONDS) / 1e6 for notes in levels]
        for i, notes in enumerate(levels):
            count = self._admitted(notes)
            if count == 0:
                return False
            self.depth += 1
            self.distinct += count
            expanded = self._take_notes(notes)
            # A task running several levels times each; what the job cost besides goes to its first.
            level_seconds.append(measured[i] + (seconds - sum(measured) if i == 0 else 0.0))
            self._report_level(count, level_seconds[-1])
            if not expanded:
                return False
        return True

    def _must_stop(self) -> bool:
        if self.result.stopped_by is not None:
            return True
        found = self.bad_states or self.bad_steps or self.deadlocked is not None
        return bool(found) and self.stop_on_violation

    def _initial_candidates(self):
        """The candidates of level 1: the initial states, deduplicated on the driver, with
        one empty visited set per partition; None when there are none."""
        records, self.generated, cut = initial_records(self.model, self.partitions, self.max_states)
        self.last_generated = records.num_rows
        if cut:
            self.result.stopped_by = "max_states"
        if not records.num_rows:
            return None
        keys = partition_keys(self.partitions)
        self.job = Job(**{**self.job.__dict__, "keys": keys})
        return self._local_rows(first_level_rows(records, keys))

    def _local_rows(self, batches):
        """A DataFrame of Arrow batches (of ROW_SCHEMA) built on the driver.

        Given as an Arrow table, the rows are read by the JVM itself; given as Python rows,
        Spark reads them through a Python worker of a kind of its own (one more Python process
        to start while the first level waits for its input).  Spark before 4.0 takes no Arrow table.
        """
        import pyarrow as pa

        if self.handle.is_connect or _takes_arrow_tables():
            return self.spark.createDataFrame(pa.Table.from_batches(batches), self.row_type)
        rows = [tuple(row.values()) for batch in batches for row in batch.to_pylist()]
        return self.spark.createDataFrame(rows, self.row_type)

    def _job(self, **changes) -> Job:
        skip_invariants = frozenset(i for i, n in enumerate(self.invariant_names) if n in self.bad_states)
        skip_steps = frozenset(i for i, n in enumerate(self.step_names) if n in self.bad_steps)
        return Job(**{**self.job.__dict__, "skip_invariants": skip_invariants, "skip_steps": skip_steps,
                      # only the first deadlock is reported
                      "check_deadlock": self.check_deadlock and self.deadlocked is None, **changes})

    def _partitioned(self, candidates, job: Job):
        """The level admitted from ``candidates`` (the previous level's rows): the candidates
        and visited sets hash-partitioned by key, then :func:`level_partition` on each.  The
        previous level's notes travel along (a filter would be one more plan for the driver to
        build at every level) and are skipped by the workers."""
        carried = candidates.repartition(self.partitions, "fp")
        return carried.mapInArrow(functools.partial(level_partition, job), self.row_type)

    def _level(self, candidates, **changes):
        """Admit, check and expand one level, one task per partition: (the level, checkpointed; its notes)."""
        return self._checkpointed(self._partitioned(candidates, self._job(**changes)))

    def _checkpointed(self, level):
        """``level`` computed and checkpointed: (it, its notes).

        In classic Spark this is one job (the notes are observed while the level is
        checkpointed).  Spark Connect hands back no observations for a checkpoint, so there
        the notes are read back from the checkpoint.
        """
        if self.handle.is_connect:
            level = level.localCheckpoint(eager=True)
            return level, level.filter(self.is_note).collect()

        from pyspark.sql import Observation

        noted = Observation()
        level = level.observe(noted, self.notes)
        # A checkpoint cuts the lineage: each level's plan would otherwise hold every earlier one.
        level = level.localCheckpoint(eager=True)
        return level, noted.get["notes"]

    def _release(self, level) -> None:
        """Drop a level's checkpoint from the executors once the next level holds all it held.

        Spark would drop it only after the JVM's collector finds it unreferenced, long after:
        meanwhile every level's blocks fill the memory, and the JVM spends its time collecting
        and spilling them.  Spark Connect releases a checkpoint when its DataFrame is freed.
        """
        if level is None or self.handle.is_connect:
            return
        from py4j.protocol import Py4JError

        try:
            level._jdf.queryExecution().analyzed().rdd().unpersist(False)
        except Py4JError:  # a Spark whose plan is shaped otherwise: its cleaner will drop it
            pass

    def _count_new(self, candidates) -> int:
        """How many of ``candidates`` were never visited: admitted, neither kept nor checked."""
        job = self._job(keep=False, check_invariants=False, expand=False)
        return self._admitted(self._partitioned(candidates, job).collect())

    @staticmethod
    def _admitted(notes) -> int:
        return sum(row.n for row in notes if row.kind == ADMITTED)

    def _quotas(self, notes, keep: int) -> tuple[int, ...]:
        """Per partition, how many states to admit so that ``keep`` are: the partitions in order."""
        per_key = Counter()
        for row in notes:
            if row.kind == ADMITTED:
                per_key[row.fp] += row.n
        quotas = []
        for key in self.job.keys:
            quotas.append(min(keep, per_key[key]))
            keep -= quotas[-1]
        return tuple(quotas)

    def _take_notes(self, notes) -> bool:
        """Take in a level's notes; False when the level violates an invariant and the search
        stops after it (its expansion's figures are then dropped, as the local engine never
        makes them)."""
        for row in notes:
            if row.kind == BAD_STATE:
                name = self.invariant_names[row.n]
                if name not in self.bad_states:
                    self.bad_states[name] = (self.depth, row.fp)
            elif row.kind == DISTINCT:
                self.distinct_by_action[row.action] += row.n
        if self.bad_states and self.stop_on_violation:
            return False
        self.last_generated = 0
        for row in notes:
            if row.kind == GENERATED:
                self.last_generated += row.n
                self.generated += row.n
                self.generated_by_action[row.action] += row.n
            elif row.kind == DEADLOCK and self.check_deadlock and self.deadlocked is None:
                self.deadlocked = (self.depth, row.fp)
            elif row.kind == BAD_STEP:
                name = self.step_names[row.n]
                if name not in self.bad_steps:
                    self.bad_steps[name] = (self.depth, row.parent, row.ordinal)
        return True

    # ---------------------------------------------------------------- traces

    def chain_to(self, level: int, fp: int) -> list[int]:
        """The recorded steps to the state ``fp`` of ``level``, one lookup per level back.

        A lookup reads the one piece of the last level's visited sets that can hold ``fp``:
        pieces are sorted by fingerprint and each piece's row bears its least fingerprint.
        """
        F = self.F
        chain = []
        for _ in range(level):
            key = self.job.keys[int(partition_of([fp], self.partitions)[0])]
            pieces = self.records.filter((F.col("kind") == VISITED) & (F.col("fp") == key) & (F.col("parent") <= fp))
            block = pieces.orderBy(F.col("parent").desc()).limit(1).select("state").collect()
            found = find_parent(fp, block[0].state) if block else None
            if found is None:
                raise RuntimeError(f"no parent record for fingerprint {fp} at level {level}")
            parent, ordinal = found
            chain.append(ordinal)
            fp = parent
            level -= 1
        chain.reverse()
        return chain

    # ---------------------------------------------------------------- result

    def _report_level(self, frontier_size: int, seconds: float):
        if self.progress is None:
            return
        elapsed = time.perf_counter() - self.started
        # one write, the newline in it: a signal between print's two writes would leave the
        # interruption's error line glued to this one
        sys.stderr.write(f"level {self.depth}: frontier {frontier_size:,}, distinct {self.distinct:,}, {seconds:.2f} s\n")
        sys.stderr.flush()
        self.progress(Progress(self.distinct, self.generated, self.depth, frontier_size, elapsed))

    def _finish(self, level_seconds) -> Result:
        r = self.result
        r.violations, r.deadlock = counterexamples(
            self.model,
            {name: self.chain_to(level, fp) for name, (level, fp) in self.bad_states.items()},
            {name: self.chain_to(level, parent) + [ordinal] for name, (level, parent, ordinal) in self.bad_steps.items()},
            None if self.deadlocked is None else self.chain_to(*self.deadlocked),
        )
        # The traces are rebuilt: the last level's parent records are no longer needed (a
        # session the caller started goes on without them).
        self._release(self.records)
        self.records = None
        r.distinct_states = self.distinct
        r.generated_states = self.generated
        r.depth = self.depth
        r.set_coverage(self.generated_by_action, self.distinct_by_action, getattr(self.model, "actions", None))
        r.elapsed_s = time.perf_counter() - self.started
        r.level_seconds = level_seconds
        return r
