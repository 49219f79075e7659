"""The Spark engine against the local engine, and Spark on one core against Spark on two.

Every run is a ``kraftcheck check`` in a process of its own; the figures are the searches'
own ``elapsed_s`` (from the JSON summary: Spark's start-up is not in them, it is shown
apart).  Printed: the local engine, Spark ``local[1]`` twice (as it runs on the whole
machine, and confined to one core) and ``local[2]``; the ratios ``local[1]/local[2]``, both
ways (scaling: target >= 1.6 from one core to two) and ``local engine / Spark local[2]``
(target > 1); and the cost of a level on a tiny config (a countdown: one state per level),
each level a Spark job of its own (``spark.kraftcheck.narrowLevel=0``), then as by default,
all in one task.

``local[1]`` runs one task at a time, but its JVM (the driver, the shuffle, the task's
input and output) may run beside the task's Python worker on another core.  Confined to one
core (the process and all it starts, by CPU affinity; a round's core is the round number
modulo the cores available), it has one core, as ``local[2]`` has two: the second scaling
figure compares one core with two, the first one task slot with two.

With ``--repeat N`` the searches run N times in turn (local, ``local[1]``, ``local[1]`` on
one core, ``local[2]``, local, ...), so that a drift in the machine's speed touches all
alike; each figure is then the median of its N runs (the spread is printed beside it) and
the ratios are those of the medians.

    python bench/spark.py                                  # twelve counters 0..2: 531,441 states
    python bench/spark.py --model tests.models:counters --set n=6 --set limit=7
    python bench/spark.py --config spec/configs/ci.toml    # the Kafka model
    python bench/spark.py --config spec/configs/default.toml --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import workload  # bench/workload.py, beside this script

REPO = Path(__file__).resolve().parent.parent


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])), **extra}


def check(args: list[str], engine: str, master: str | None = None, cores: set[int] | None = None,
          **spark_conf: str) -> tuple[dict, float]:
    """One search in its own process: (JSON summary, wall seconds including start-up); with
    ``cores``, the process and every process and thread it starts run on those cores only;
    with ``spark_conf``, Spark settings for the session the search starts."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        command = [sys.executable, "-m", "kraftcheck.checker.cli", "check", *args, "--engine", engine,
                   "--json", str(summary), "--quiet", "--no-deadlock", "--trace-dir", tmp]
        if master:
            command += ["--spark-master", master]
        started = time.perf_counter()
        conf = [f"--conf {key}={value}" for key, value in spark_conf.items()]
        extra = {"PYSPARK_SUBMIT_ARGS": " ".join([*conf, "pyspark-shell"])} if conf else {}
        confine = None if cores is None else (lambda: os.sched_setaffinity(0, cores))
        p = subprocess.run(command, cwd=REPO, env=env(**extra), capture_output=True, text=True, preexec_fn=confine)
        wall = time.perf_counter() - started
        if p.returncode not in (0, 12):
            sys.exit(f"{engine} {master or ''} failed with exit {p.returncode}:\n{p.stderr[-2000:]}")
        return json.loads(summary.read_text()), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload.add_arguments(parser)
    parser.add_argument("--tiny-levels", type=int, default=20, help="levels of the per-level overhead run")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the four searches; figures are medians")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    model_args = workload.check_arguments(args)

    engines = {"local engine": ("local", None, False), "spark local[1]": ("spark", "local[1]", False),
               "spark local[1], one core": ("spark", "local[1]", True), "spark local[2]": ("spark", "local[2]", False)}
    available = sorted(os.sched_getaffinity(0))
    if len(available) < 2:
        parser.error(f"this machine gives this process {len(available)} core; local[2] needs two")
    times: dict[str, list[float]] = {name: [] for name in engines}
    startups: dict[str, list[float]] = {name: [] for name in engines}
    reference = None
    for round_number in range(args.repeat):
        one_core = {available[round_number % len(available)]}
        for name, (engine, master, confined) in engines.items():
            summary, wall = check(model_args, engine, master, one_core if confined else None)
            if reference is None:
                reference = summary
                print(f"model: {' '.join(model_args)}: {summary['distinct_states']:,} distinct, "
                      f"{summary['generated_states']:,} generated, depth {summary['depth']}")
            for key in ("distinct_states", "generated_states", "depth", "verdict"):
                assert summary[key] == reference[key], (name, key, summary[key], reference[key])
            times[name].append(summary["elapsed_s"])
            startups[name].append(wall - summary["elapsed_s"])
            if args.repeat > 1:
                print(f"  round {round_number + 1}: {name}: {summary['elapsed_s']:.2f} s", flush=True)
        if args.repeat > 1:
            this_round = {name: runs[-1] for name, runs in times.items()}
            print(f"  round {round_number + 1}: scaling {this_round['spark local[1]'] / this_round['spark local[2]']:.2f}, "
                  f"on one core {this_round['spark local[1], one core'] / this_round['spark local[2]']:.2f} "
                  f"(core {min(one_core)})", flush=True)
    median = {name: statistics.median(runs) for name, runs in times.items()}
    for name, runs in times.items():
        spread = f"  (runs {min(runs):.2f} .. {max(runs):.2f})" if len(runs) > 1 else ""
        startup = "" if name == "local engine" else f"  start-up and shutdown: {statistics.median(startups[name]):.1f} s"
        print(f"{name + ':':25} {median[name]:8.2f} s{spread}{startup}")
    two = median["spark local[2]"]
    print(f"scaling local[1] / local[2]:               {median['spark local[1]'] / two:.2f}  "
          "(local[1]'s JVM free to use a second core)")
    print(f"scaling local[1] on one core / local[2]:   {median['spark local[1], one core'] / two:.2f}  "
          "(from one core to two: target >= 1.6)")
    print(f"local engine / spark local[2]:             {median['local engine'] / two:.2f}  (target > 1)")

    tiny = ["--model", "tests.models:countdown", f"--set=start={args.tiny_levels - 1}"]
    by_level, _ = check(tiny, "spark", "local[2]", **{"spark.kraftcheck.narrowLevel": "0"})
    levels = by_level["level_seconds"][1:]  # level 1 also starts the Python workers and builds the model
    print(f"per-level overhead, spark local[2] (a countdown, one state per level, a job per level): "
          f"{sum(levels) / len(levels):.2f} s per level over {len(levels)} levels")
    in_one_task, _ = check(tiny, "spark", "local[2]")
    print(f"the countdown's {args.tiny_levels} levels: {by_level['elapsed_s']:.2f} s a job per level, "
          f"{in_one_task['elapsed_s']:.2f} s in one task (as by default)")

if __name__ == "__main__":
    main()
