"""The Spark engine: level-synchronous breadth-first search over DataFrames.

A level is a DataFrame hash-partitioned by fingerprint into ``P`` partitions.  Partition
``i`` holds the states first reached at that level whose fingerprint is ``i`` modulo ``P``,
as blocks of records ``(fp, parent, ordinal, action, state)`` (one Arrow IPC stream per row,
:data:`~.spark_worker.STATE` rows), and the visited set of that partition: every fingerprint
ever reached that is ``i`` modulo ``P``, sorted, as the bytes of an int64 array
(:data:`~.spark_worker.VISITED` rows).  Every row of partition ``i`` bears the same key, a
value that Spark's hash partitioning sends to partition ``i``, so a ``repartition`` by that
column puts each block where its fingerprints belong.

Each level is one Spark job of two stages:

1. expansion (``mapInArrow``, :func:`~.spark_worker.expand_partition`): the model, rebuilt
   from the config in each Python worker, checks the invariants on the level's states,
   checks the step properties, finds deadlocks and generates the successors, which leave in
   blocks bound for the partition of their fingerprint; the visited set goes through as it is;
2. admission, after the shuffle by key (:func:`~.spark_worker.admit_partition`): the
   anti-join of the candidates with the partition's visited set, in numpy; each new
   fingerprint keeps its least ``(parent, ordinal)``, so the result does not depend on the
   order in which rows arrive; the visited set grows by the new fingerprints.

The admitted level is checkpointed (``localCheckpoint``: on the executors, the lineage cut)
and kept: its records are the parent records.  A block moves thousands of states as one row,
so Spark's per-row costs (the JVM's rows, the shuffle's records, Arrow's conversions) are
paid per block, and the visited set is merged in the partition that owns it rather than
re-shuffled and re-hashed by a join at every level.

The driver collects counts and the rare notes (violations, deadlocks, per-action counts),
never states or fingerprints.  For a violation it walks the parent records back, one small
lookup per level, in the partition that holds the fingerprint; the counterexample is then
rebuilt by re-executing the recorded steps (:mod:`.path`), exactly as the local engine does.

The figures are those of the local engine: ``generated_states``, ``distinct_states``,
``depth``, the verdict, the violated invariants and the length of every counterexample.
The local engine checks a level's invariants as soon as the level is built; here they are
checked when the level is expanded, and when that turns up a violation the expansion's own
figures are dropped, so both engines stop after the same complete level.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from collections import Counter

from .bfs import Progress, ProgressCallback
from .config import CheckConfig, ConfigError, build_model
from .path import counterexamples
from .result import Result
from .spark_session import PARTITIONS_KEY, SparkHandle, open_session
from .spark_worker import (
    BAD_STATE,
    BAD_STEP,
    DEADLOCK,
    DISTINCT,
    EXPANSION_SCHEMA,
    FAIL_ONCE_ENV,
    GENERATED,
    STATE,
    SUCCESSOR,
    VISITED,
    Job,
    RECORDS_PER_BLOCK,
    admit_partition,
    blocks,
    check_partition,
    encoder,
    expand_partition,
    find_record,
    job_config,
    partition_of,
    records_batch,
    truncate_partition,
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
    handle = open_session(master)
    interrupted = _note_interrupts()
    search = _SparkSearch(handle, config, model, max_states, max_depth, check_deadlock, stop_on_violation, progress)
    try:
        return search.run()
    except KeyboardInterrupt:
        handle.interrupt()
        raise
    except Exception as e:
        # Ctrl-C while the driver waits in the JVM surfaces as whatever error the cancelled
        # call raises (a Py4J or Spark error), not as KeyboardInterrupt: say what it was.
        if interrupted.is_set():
            handle.interrupt()
            raise KeyboardInterrupt from e
        raise
    finally:
        interrupted.restore()
        search.release()
        handle.stop()


class _InterruptFlag:
    """Notes a SIGINT, then lets the handler in place before (Spark's: cancel jobs) act on it."""

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


def _driver_paths() -> tuple[str, ...]:
    """Where the driver finds modules that executors on this machine may need too (a model
    module in the working directory or on PYTHONPATH)."""
    paths = [os.getcwd()]
    paths += [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return tuple(os.path.abspath(p) for p in paths)


class _SparkSearch:
    def __init__(self, handle: SparkHandle, config, model, max_states, max_depth, check_deadlock, stop_on_violation,
                 progress):
        from pyspark.sql import functions as F
        from pyspark.storagelevel import StorageLevel

        self.F = F
        self.storage = StorageLevel.MEMORY_AND_DISK
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
            paths=_driver_paths(),
            check_deadlock=check_deadlock,
            fail_once=os.environ.get(FAIL_ONCE_ENV) or None,
        )
        self.partitions = self._partitions()
        self.result = Result(engine="spark")

        #: per level (index 0 = level 1): the checkpointed level, whose STATE rows are its parent records
        self.levels: list = []
        self.persisted: list = []
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
        configured = self.spark.conf.get(PARTITIONS_KEY, None)
        if configured:
            try:
                return max(1, int(configured))
            except ValueError:
                raise ConfigError(f"{PARTITIONS_KEY} must be an integer, not {configured!r}") from None
        return self.handle.parallelism()

    def _configure(self):
        conf = self.spark.conf
        conf.set("spark.sql.shuffle.partitions", str(self.partitions))
        # Each partition's visited set must meet exactly the successors hashed to it: no
        # adaptive coalescing of partitions.
        conf.set("spark.sql.adaptive.enabled", "false")
        conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "4096")

    def _partition_keys(self) -> list[int]:
        """For each partition, a fingerprint value that Spark's hash partitioning sends there:
        the key of the partition's visited-set rows."""
        F = self.F
        p = self.partitions
        candidates = self.spark.range(0, 64 * p + 64).select("id", F.expr(f"pmod(hash(id), {p})").alias("partition"))
        keys: dict[int, int] = {}
        for row in candidates.collect():
            keys.setdefault(row.partition, row.id)
        if len(keys) != p:
            raise RuntimeError(f"no key found for {p - len(keys)} of {p} partitions")
        return [keys[i] for i in range(p)]

    def release(self):
        for df in self.persisted:
            try:
                df.unpersist()
            except Exception:
                pass
        self.persisted.clear()

    def _persist(self, df):
        df = df.persist(self.storage)
        self.persisted.append(df)
        return df

    def _unpersist(self, df):
        if df is not None:
            df.unpersist()
            self.persisted = [d for d in self.persisted if d is not df]

    # ---------------------------------------------------------------- the search

    def run(self) -> Result:
        self._configure()
        self.started = time.perf_counter()
        level = self._initial_level()  # the level about to be expanded
        level_seconds = [time.perf_counter() - self.started]
        if level is not None:
            self._report_level(self.distinct, level_seconds[0])
            if self._must_stop():
                self._check_only(level)
                level = None
        while level is not None:
            level_started = time.perf_counter()
            if self.max_depth is not None and self.depth >= self.max_depth:
                self._probe(level)
                break
            new, count = self._next_level(level)
            if new is None:  # the expanded level violates an invariant: stop after it
                break
            if self.max_states is not None and self.distinct + count > self.max_states:
                self.result.stopped_by = "max_states"
                new = self._truncate(new, self.max_states - self.distinct)
                count = self.max_states - self.distinct
            if count == 0:
                break
            self.depth += 1
            self.distinct += count
            self.levels.append(new)
            level = new
            level_seconds.append(time.perf_counter() - level_started)
            self._report_level(count, level_seconds[-1])
            if self._must_stop():
                self._check_only(level)
                break
        return self._finish(level_seconds)

    def _must_stop(self) -> bool:
        if self.result.stopped_by is not None:
            return True
        found = self.bad_states or self.bad_steps or self.deadlocked is not None
        return bool(found) and self.stop_on_violation

    def _initial_level(self):
        """Level 1: the initial states, deduplicated on the driver, admitted with one empty
        visited set per partition."""
        encode_state = encoder(self.model)
        inits = list(self.model.init_states())
        self.generated = len(inits)
        seen, fps, ordinals, states = set(), [], [], []
        for ordinal, state in enumerate(inits):
            fp, data = encode_state(state)
            if fp in seen:
                continue
            if self.max_states is not None and len(fps) >= self.max_states:
                self.result.stopped_by = "max_states"
                break
            seen.add(fp)
            fps.append(fp)
            ordinals.append(ordinal)
            states.append(data)
        if not fps:
            return None
        keys = self._partition_keys()
        self.job = Job(**{**self.job.__dict__, "keys": tuple(keys)})
        records = records_batch(fps, [None] * len(fps), ordinals, [None] * len(fps), states)
        rows = [tuple(r.values()) for batch in blocks(SUCCESSOR, records, keys, RECORDS_PER_BLOCK) for r in batch.to_pylist()]
        rows += [(VISITED, key, None, None, None, b"", 0) for key in keys]
        self.distinct = len(fps)
        self.depth = 1
        level = self._admit(self.spark.createDataFrame(rows, EXPANSION_SCHEMA)).localCheckpoint(eager=True)
        self.levels.append(level)
        return level

    def _states(self, level):
        return level.filter(self.F.col("kind") == STATE)

    def _job(self, **changes) -> Job:
        skip_invariants = frozenset(i for i, n in enumerate(self.invariant_names) if n in self.bad_states)
        skip_steps = frozenset(i for i, n in enumerate(self.step_names) if n in self.bad_steps)
        return Job(**{**self.job.__dict__, "skip_invariants": skip_invariants, "skip_steps": skip_steps, **changes})

    def _expansion(self, level, **changes):
        return level.mapInArrow(functools.partial(expand_partition, self._job(**changes)), EXPANSION_SCHEMA)

    def _admit(self, rows):
        """Hash-partition candidates and visited sets by fingerprint and admit the new states."""
        carried = rows.filter(self.F.col("kind").isin(SUCCESSOR, VISITED))
        return carried.repartition(self.partitions, "fp").mapInArrow(admit_partition, EXPANSION_SCHEMA)

    def _next_level(self, level, **changes):
        """Expand ``level`` on the executors and build the next one: (level, new states), or
        (None, 0) when ``level`` violates an invariant and the search stops after it.

        In classic Spark this is one job of two stages (expansion, admission): the
        expansion's notes and the number of new states are observed while the new level is
        checkpointed.  Spark Connect hands back no observations for a checkpoint, so there
        the expansion is persisted and its notes collected first.
        """
        F = self.F
        expanded = self._expansion(level, **changes)
        if self.handle.is_connect:
            expanded = self._persist(expanded)
            notes = expanded.filter(~F.col("kind").isin(SUCCESSOR, VISITED)).collect()
            if not self._take_notes(notes):
                self._unpersist(expanded)
                return None, 0
            new = self._admit(expanded).localCheckpoint(eager=True)
            self._unpersist(expanded)
            return new, self._count_states(new)

        from pyspark.sql import Observation

        noted, counted = Observation(), Observation()
        expanded = expanded.observe(noted, self._notes_aggregate())
        new = self._admit(expanded).observe(counted, self._states_aggregate())
        # A checkpoint cuts the lineage: each level's plan would otherwise hold every earlier one.
        new = new.localCheckpoint(eager=True)
        if not self._take_notes(noted.get["notes"]):
            return None, 0
        return new, counted.get["n"]

    def _states_aggregate(self):
        F = self.F
        return F.coalesce(F.sum(F.when(F.col("kind") == STATE, F.col("n"))), F.lit(0)).alias("n")

    def _count_states(self, level) -> int:
        return level.agg(self._states_aggregate()).collect()[0].n

    def _truncate(self, level, keep: int):
        """The first ``keep`` states of ``level`` (in partition order): the ``max_states`` bound."""
        F = self.F
        per_key = {row.fp: row.n for row in self._states(level).groupBy("fp").agg(F.sum("n").alias("n")).collect()}
        quotas = {}
        for key in self.job.keys:
            quotas[key] = min(keep, per_key.get(key, 0))
            keep -= quotas[key]
        truncated = self._states(level).mapInArrow(functools.partial(truncate_partition, quotas), EXPANSION_SCHEMA)
        return truncated.localCheckpoint(eager=True)

    def _notes_aggregate(self):
        F = self.F
        note = F.struct("kind", "fp", "parent", "ordinal", "action", "n")
        return F.collect_list(F.when(~F.col("kind").isin(SUCCESSOR, VISITED), note)).alias("notes")

    def _take_notes(self, notes) -> bool:
        """Take in an expansion's notes; False when the expanded level violates an invariant
        and the search must stop after it (the expansion's other figures are then dropped,
        as the local engine never makes them)."""
        self._note_level(notes)
        if self._must_stop():
            return False
        for row in notes:
            if row.kind == GENERATED:
                self.generated += row.n
                self.generated_by_action[row.action] += row.n
            elif row.kind == DEADLOCK and self.check_deadlock and self.deadlocked is None:
                self.deadlocked = (self.depth, row.fp)
            elif row.kind == BAD_STEP:
                name = self.step_names[row.n]
                if name not in self.bad_steps:
                    self.bad_steps[name] = (self.depth, row.parent, row.ordinal)
        return True

    def _note_level(self, notes):
        """What any pass over a level reports about the level's own states."""
        for row in notes:
            if row.kind == BAD_STATE:
                name = self.invariant_names[row.n]
                if name not in self.bad_states:
                    self.bad_states[name] = (self.depth, row.fp)
            elif row.kind == DISTINCT:
                self.distinct_by_action[row.action] += row.n

    def _probe(self, level):
        """At the depth bound: expand the last level without keeping anything, to count what
        it generates, find its deadlocks and tell whether states lie beyond the bound."""
        beyond, count = self._next_level(level, check_steps=False)
        if beyond is not None and count:
            self.result.stopped_by = "max_depth"

    def _check_only(self, level):
        """Check the invariants on a level that will not be expanded (and count its states by action)."""
        job = self._job()
        self._note_level(self._states(level).mapInArrow(functools.partial(check_partition, job), EXPANSION_SCHEMA).collect())

    # ---------------------------------------------------------------- traces

    def chain_to(self, level: int, fp: int) -> list[int]:
        """The recorded steps to the state ``fp`` of ``level``, one lookup per level back."""
        F = self.F
        chain = []
        partition_key = dict(enumerate(self.job.keys))
        for records in reversed(self.levels[:level]):
            key = partition_key[int(partition_of([fp], self.partitions)[0])]
            blocks_of_fp = self._states(records).filter(F.col("fp") == key)
            rows = blocks_of_fp.mapInArrow(functools.partial(find_record, fp), EXPANSION_SCHEMA).collect()
            if not rows:
                raise RuntimeError(f"no parent record for fingerprint {fp} at level {level}")
            chain.append(rows[0].ordinal)
            fp = rows[0].parent
            level -= 1
        chain.reverse()
        return chain

    # ---------------------------------------------------------------- result

    def _report_level(self, frontier_size: int, seconds: float):
        if self.progress is None:
            return
        elapsed = time.perf_counter() - self.started
        print(
            f"level {self.depth}: frontier {frontier_size:,}, distinct {self.distinct:,}, {seconds:.2f} s",
            file=sys.stderr,
            flush=True,
        )
        self.progress(Progress(self.distinct, self.generated, self.depth, frontier_size, elapsed))

    def _finish(self, level_seconds) -> Result:
        r = self.result
        r.violations, r.deadlock = counterexamples(
            self.model,
            {name: self.chain_to(level, fp) for name, (level, fp) in self.bad_states.items()},
            {name: self.chain_to(level, parent) + [ordinal] for name, (level, parent, ordinal) in self.bad_steps.items()},
            None if self.deadlocked is None else self.chain_to(*self.deadlocked),
        )
        r.distinct_states = self.distinct
        r.generated_states = self.generated
        r.depth = self.depth
        r.set_coverage(self.generated_by_action, self.distinct_by_action, getattr(self.model, "actions", None))
        r.elapsed_s = time.perf_counter() - self.started
        r.level_seconds = level_seconds
        return r
