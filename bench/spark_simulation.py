"""Simulation's throughput: the local engine, then Spark on local[1] and local[2], the same
walks of the same seed each time (their figures must agree, and this checks that they do).

    .venv/bin/python bench/spark_simulation.py [CONFIG] [--walks N] [--depth D] [--seed S] [--standalone]

Prints walks/s and steps/s of each, and local[2]'s speed-up over local[1]; with
``--standalone``, also a standalone cluster on 127.0.0.1 of two workers with one core each (as
the tests start it).  Each Spark figure includes the session's start (a JVM, a Python worker
per core), as a user's run does.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kraftcheck.checker.config import build_model, load_config  # noqa: E402
from kraftcheck.checker.simulation import simulate  # noqa: E402
from kraftcheck.checker.spark_simulation import simulate_spark  # noqa: E402


def figures(result) -> tuple:
    return (result.walks, result.steps, result.distinct_states, [cx.length for cx in result.counterexamples])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default="three")
    parser.add_argument("--walks", type=int, default=20_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--standalone", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    config = load_config(args.config)
    model = build_model(config)
    options = {"walks": args.walks, "depth": args.depth, "seed": args.seed, "stop_on_violation": False,
               "check_deadlock": config.check.get("deadlock", True)}
    rows = []
    started = time.perf_counter()
    local = simulate(model, **options)
    rows.append(("local engine", time.perf_counter() - started, local))
    def on_spark(name: str, master: str) -> None:
        started = time.perf_counter()
        result = simulate_spark(config, model, master=master, **options)
        rows.append((name, time.perf_counter() - started, result))
        assert figures(result) == figures(local), (master, figures(result), figures(local))

    for master in ("local[1]", "local[2]"):
        on_spark(f"spark {master}", master)
    if args.standalone:
        import tempfile
        from pathlib import Path

        from tests.spark_helpers import standalone_cluster

        with tempfile.TemporaryDirectory() as logs, standalone_cluster(Path(logs), workers=2, cores=1) as (url, _):
            on_spark("spark standalone, 2 workers x 1 core", url)
    print(f"{args.config}: {local.walks:,} walks of at most {args.depth} states, seed {args.seed}: "
          f"{local.steps:,} steps, {local.distinct_states:,} distinct states; the same on every engine\n")
    print("| engine | seconds | walks/s | steps/s |")
    print("|---|---|---|---|")
    for name, seconds, result in rows:
        print(f"| {name} | {seconds:.1f} | {result.walks / seconds:,.0f} | {result.steps / seconds:,.0f} |")
    one, two = rows[1][1], rows[2][1]
    print(f"\nlocal[2] / local[1] speed-up: {one / two:.2f}")


if __name__ == "__main__":
    main()
