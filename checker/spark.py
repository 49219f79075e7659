"""The Spark engine: level-synchronous breadth-first search over DataFrames.

Each level is two Spark jobs.  The first expands the frontier on the executors
(``mapInArrow`` over ``(fp, state)`` rows, see :mod:`.spark_worker`): the model, rebuilt from
the config in each Python worker, checks the invariants on the frontier's states, checks the
step properties, finds deadlocks and generates the successors.  The second anti-joins the
successors with the visited fingerprints, keeps one parent per new fingerprint and counts
the new states: they are the next frontier.

Visited fingerprints and parent records ``(fp, parent, ordinal)`` stay in Spark, one
persisted DataFrame per level, hash-partitioned by fingerprint so that joining against them
moves only the new successors.  The driver collects counts and, for a violation, walks the
parent records back one small lookup per level; the counterexample is then rebuilt by
re-executing the recorded steps (:mod:`.path`), exactly as the local engine does.

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
    EXPANSION_SCHEMA,
    FAIL_ONCE_ENV,
    GENERATED,
    SUCCESSOR,
    Job,
    DISTINCT,
    LEVEL_COLUMNS,
    LEVEL_SCHEMA,
    check_partition,
    encoder,
    expand_partition,
    job_config,
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

        #: per level (index 0 = level 1): persisted parent records (fp, parent, ordinal)
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
        # Keep every level hash-partitioned the same way, so joins reuse the partitioning of
        # the visited set; never broadcast it (a broadcast goes through the driver).
        conf.set("spark.sql.adaptive.enabled", "false")
        conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
        conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "4096")

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
        level = self._initial_level()  # the rows of the level about to be expanded
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
                new = new.limit(self.max_states - self.distinct).localCheckpoint(eager=True)
                count = new.count()
            if count == 0:
                break
            self.depth += 1
            self.distinct += count
            self.levels.append(self._records(new))
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
        """Level 1 from the driver: the initial states, deduplicated, with their ordinals."""
        encode_state = encoder(self.model)
        inits = list(self.model.init_states())
        self.generated = len(inits)
        seen, rows = set(), []
        for ordinal, state in enumerate(inits):
            fp, data = encode_state(state)
            if fp in seen:
                continue
            if self.max_states is not None and len(rows) >= self.max_states:
                self.result.stopped_by = "max_states"
                break
            seen.add(fp)
            rows.append((fp, None, ordinal, None, data))
        if not rows:
            return None
        self.distinct = len(rows)
        self.depth = 1
        level = self.spark.createDataFrame(rows, LEVEL_SCHEMA)
        level = level.repartition(self.partitions, "fp").localCheckpoint(eager=True)
        self.levels.append(self._records(level))
        return level

    def _records(self, level):
        """A level's parent records, persisted.

        Spark forgets how a checkpoint's rows are partitioned, so the visited set (the union
        of every level's records) is hash-partitioned again by each level's join: the cost
        of a level grows with the states visited so far.
        """
        return self._persist(level.select("fp", "parent", "ordinal"))

    def _visited(self):
        visited = functools.reduce(lambda a, b: a.union(b), (level.select("fp") for level in self.levels))
        # a hash table of each visited partition, rather than sorting it at every level
        return visited.hint("shuffle_hash")

    def _job(self, **changes) -> Job:
        skip_invariants = frozenset(i for i, n in enumerate(self.invariant_names) if n in self.bad_states)
        skip_steps = frozenset(i for i, n in enumerate(self.step_names) if n in self.bad_steps)
        return Job(**{**self.job.__dict__, "skip_invariants": skip_invariants, "skip_steps": skip_steps, **changes})

    def _expansion(self, level, **changes):
        job = self._job(**changes)
        frontier = level.select("fp", "state", "action")
        return frontier.mapInArrow(functools.partial(expand_partition, job), EXPANSION_SCHEMA)

    def _new_fingerprints(self, successors):
        """The successors whose fingerprint was never visited, one parent each.

        The parent kept is the least ``(parent, ordinal)``: the same whatever the partitioning.
        """
        F = self.F
        return (
            successors.join(self._visited(), "fp", "left_anti")
            .groupBy("fp")
            .agg(F.min(F.struct("parent", "ordinal", "action", "state")).alias("first"))
            .select("fp", "first.parent", "first.ordinal", "first.action", "first.state")
        )

    def _next_level(self, level):
        """Expand ``level`` on the executors and build the next one: (rows, count), or
        (None, 0) when ``level`` violates an invariant and the search stops after it.

        In classic Spark this is one job: the expansion's notes and the number of new states
        are observed while the new level is checkpointed.  Spark Connect hands back no
        observations for a checkpoint, so there the expansion is persisted and its notes
        collected first.
        """
        F = self.F
        gen = self._expansion(level)
        if self.handle.is_connect:
            gen = self._persist(gen)
            notes = gen.filter(F.col("kind") != SUCCESSOR).collect()
            if not self._take_notes(notes):
                self._unpersist(gen)
                return None, 0
            successors = gen.filter(F.col("kind") == SUCCESSOR).select(*LEVEL_COLUMNS)
            new = self._new_fingerprints(successors).localCheckpoint(eager=True)
            self._unpersist(gen)
            return new, new.count()

        from pyspark.sql import Observation

        noted, counted = Observation(), Observation()
        gen = gen.observe(noted, self._notes_aggregate())
        successors = gen.filter(F.col("kind") == SUCCESSOR).select(*LEVEL_COLUMNS)
        new = self._new_fingerprints(successors).observe(counted, F.count(F.lit(1)).alias("n"))
        # A checkpoint cuts the lineage: each level's plan would otherwise hold every earlier one.
        new = new.localCheckpoint(eager=True)
        if not self._take_notes(noted.get["notes"]):
            return None, 0
        return new, counted.get["n"]

    def _notes_aggregate(self):
        F = self.F
        note = F.struct("kind", "fp", "parent", "ordinal", "action", "n")
        return F.collect_list(F.when(F.col("kind") != SUCCESSOR, note)).alias("notes")

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
        """At the depth bound: expand the last level without admitting anything, to count what
        it generates, find its deadlocks and tell whether states lie beyond the bound."""
        F = self.F
        gen = self._expansion(level, check_steps=False)
        if self.handle.is_connect:
            gen = self._persist(gen)
            notes = gen.filter(F.col("kind") != SUCCESSOR).collect()
        else:
            from pyspark.sql import Observation

            noted = Observation()
            gen = gen.observe(noted, self._notes_aggregate())
        beyond = gen.filter(F.col("kind") == SUCCESSOR).select("fp").join(self._visited(), "fp", "left_anti").count()
        if not self.handle.is_connect:
            notes = noted.get["notes"]
        if self._take_notes(notes) and beyond:
            self.result.stopped_by = "max_depth"

    def _check_only(self, level):
        """Check the invariants on a level that will not be expanded (and count its states by action)."""
        job = self._job()
        frontier = level.select("fp", "state", "action")
        self._note_level(frontier.mapInArrow(functools.partial(check_partition, job), EXPANSION_SCHEMA).collect())

    # ---------------------------------------------------------------- traces

    def chain_to(self, level: int, fp: int) -> list[int]:
        """The recorded steps to the state ``fp`` of ``level``, one lookup per level back."""
        F = self.F
        chain = []
        for records in reversed(self.levels[:level]):
            rows = records.filter(F.col("fp") == fp).select("parent", "ordinal").limit(1).collect()
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
