"""Simulation on Spark: the walks spread over the executors, a chunk of consecutive walk indices
a task (:func:`.simulation.take_walks`), the chunks' findings merged on the driver
(:func:`.simulation.merge`).

Walk ``i`` of seed ``s`` is the same walk on every executor, and the merge does not depend on
which task took which chunk nor in what order they ended: for a seed and a walk count the
figures, traces and verdict are the local engine's, whatever the number of executors.  Only a
time limit, which each task reads off its own clock, makes them depend on speed.
"""

from __future__ import annotations

import functools
import pickle
import time
from dataclasses import dataclass

from .config import CheckConfig
from .simulation import Chunk, SimulationResult, merge, take_walks
from .spark_session import open_session
from .spark_worker import Job, job_config, model_for

#: Chunks per executor core: enough that a slow chunk does not hold the others up long.
CHUNKS_PER_CORE = 4
#: The rows a task returns: its chunk's index and what its walks met, pickled.
CHUNK_SCHEMA = "chunk bigint, outcome binary"


@dataclass(frozen=True)
class SimulationJob:
    """What a task needs: the model (as :class:`.spark_worker.Job` carries it) and the walks."""

    model: Job
    walks: int
    chunks: int
    depth: int
    seed: int
    deadline: float | None
    check_deadlock: bool
    stop_on_violation: bool
    by_action: bool


def chunk_range(walks: int, chunks: int, chunk: int) -> tuple[int, int]:
    """The first walk index and the number of walks of ``chunk`` of ``chunks``: consecutive
    ranges, their sizes at most one apart."""
    size, extra = divmod(walks, chunks)
    first = chunk * size + min(chunk, extra)
    return first, size + (1 if chunk < extra else 0)


def walk_chunks(job: SimulationJob, batches):
    """``mapInArrow``: each chunk index in, one row with its walks' outcome out."""
    import pyarrow as pa

    model = model_for(job.model)
    for batch in batches:
        for chunk in batch.column(0).to_pylist():
            first, count = chunk_range(job.walks, job.chunks, chunk)
            outcome = take_walks(model, first, count, depth=job.depth, seed=job.seed, deadline=job.deadline,
                                 check_deadlock=job.check_deadlock, stop_on_violation=job.stop_on_violation,
                                 by_action=job.by_action)
            yield pa.RecordBatch.from_pydict({"chunk": [chunk], "outcome": [pickle.dumps(outcome)]})


def simulate_spark(config: CheckConfig, model, *, master: str | None, walks: int, depth: int, seed: int,
                   time_limit_s: float | None = None, check_deadlock: bool = True,
                   stop_on_violation: bool = True, by_action: bool = True) -> SimulationResult:
    """:func:`.simulation.simulate` with the walks spread over Spark's executors."""
    from .spark import driver_paths, row_type_of

    started = time.perf_counter()
    handle = open_session(master, app_name="kraftcheck simulate")
    try:
        chunks = max(1, min(walks, handle.parallelism() * CHUNKS_PER_CORE))
        job = SimulationJob(Job(job_config(config), driver_paths()), walks, chunks, depth, seed,
                            None if time_limit_s is None else time.time() + time_limit_s, check_deadlock,
                            stop_on_violation, by_action)
        rows = (handle.spark.range(0, chunks, 1, chunks)
                .mapInArrow(functools.partial(walk_chunks, job), row_type_of(CHUNK_SCHEMA))
                .collect())
        outcomes: list[Chunk] = [pickle.loads(row["outcome"]) for row in rows]
    except KeyboardInterrupt:
        handle.interrupt()
        raise
    finally:
        handle.stop()
    return merge(outcomes, model, seed=seed, stop_on_violation=stop_on_violation,
                 elapsed_s=time.perf_counter() - started, engine="spark")
