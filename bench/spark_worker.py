"""The Spark engine's executor code without Spark, against the local engine.

Runs :func:`kraftcheck.checker.spark_worker.level_partition` level by level in this one
process, over ``--partitions`` partitions, feeding each level's rows to the next as Spark's
shuffle would (rows grouped by their partition's key, notes included), and times it against
the local engine on the same config.  The ratio is the executors' own cost per state
(decoding states, Arrow blocks, admission in numpy, visited sets) beside the model's work;
what Spark adds on top (the JVM, the shuffle, scheduling) is what ``bench/spark.py`` shows
beyond it.

    python bench/spark_worker.py --config spec/configs/default.toml
    python bench/spark_worker.py --model tests.models:counters --set n=12 --set limit=2
"""

from __future__ import annotations

import argparse
import time

import workload  # bench/workload.py, beside this script

from kraftcheck.checker import spark_worker as worker
from kraftcheck.checker.bfs import explore
from kraftcheck.checker.config import ConfigError, build_model, load_config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload.add_arguments(parser)
    parser.add_argument("--partitions", type=int, default=1, help="partitions, all run in this process (default 1)")
    args = parser.parse_args()
    if args.partitions < 1:
        parser.error("--partitions must be at least 1")
    try:
        config = load_config(*workload.chosen(args))
        model = build_model(config)
    except ConfigError as e:
        parser.error(str(e))

    local = explore(model, check_deadlock=False)
    print(f"{local.distinct_states:,} distinct, {local.generated_states:,} generated, depth {local.depth}")
    print(f"local engine:                    {local.elapsed_s:8.2f} s")

    job = worker.Job(config_json=worker.job_config(config), check_deadlock=False,
                     keys=worker.partition_keys(args.partitions))
    started = time.perf_counter()
    depth, distinct, shipped = worker.search_in_process(model, job)
    seconds = time.perf_counter() - started
    assert (depth, distinct) == (local.depth, local.distinct_states), (depth, distinct)
    print(f"executor code, {args.partitions} partition(s):    {seconds:8.2f} s")
    print(f"executor code / local engine:    {seconds / local.elapsed_s:8.2f}")
    # A task drops the successors its own partition has visited; the others travel to theirs.
    print(f"successor records shipped:       {shipped:,} ({shipped / distinct:.2f} per distinct state)")


if __name__ == "__main__":
    main()
