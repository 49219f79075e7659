"""The Spark engine against the local engine, and Spark on one core against Spark on two.

Every run is a ``kraftcheck check`` in a process of its own; the figures are the searches'
own ``elapsed_s`` (from the JSON summary: Spark's start-up is not in them, it is shown
apart).  Printed: the local engine, Spark ``local[1]`` and ``local[2]``, the ratios
``local[1]/local[2]`` (scaling, target >= 1.6) and ``local engine / Spark local[2]``
(target > 1), and the cost of a level on a tiny config (a countdown: one state per level).

    python bench/spark.py                                  # twelve counters 0..2: 531,441 states
    python bench/spark.py --model tests.models:counters --set n=6 --set limit=7
    python bench/spark.py --config spec/configs/ci.toml    # the Kafka model
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def env() -> dict[str, str]:
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}


def check(args: list[str], engine: str, master: str | None = None) -> tuple[dict, float]:
    """One search in its own process: (JSON summary, wall seconds including start-up)."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        command = [sys.executable, "-m", "kraftcheck.checker.cli", "check", *args, "--engine", engine,
                   "--json", str(summary), "--quiet", "--no-deadlock", "--trace-dir", tmp]
        if master:
            command += ["--spark-master", master]
        started = time.perf_counter()
        p = subprocess.run(command, cwd=REPO, env=env(), capture_output=True, text=True)
        wall = time.perf_counter() - started
        if p.returncode not in (0, 12):
            sys.exit(f"{engine} {master or ''} failed with exit {p.returncode}:\n{p.stderr[-2000:]}")
        return json.loads(summary.read_text()), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="a config file (default: --model's model)")
    parser.add_argument("--model", default="tests.models:counters", help="MODULE:FACTORY (default: counters)")
    parser.add_argument("--set", dest="overrides", action="append", help="KEY=VALUE (default: n=12, limit=2)")
    parser.add_argument("--tiny-levels", type=int, default=20, help="levels of the per-level overhead run")
    args = parser.parse_args()
    if args.config:
        model_args = [args.config] + [f"--set={o}" for o in args.overrides or []]
    else:
        overrides = args.overrides or ["n=12", "limit=2"]
        model_args = ["--model", args.model] + [f"--set={o}" for o in overrides]

    local, local_wall = check(model_args, "local")
    print(f"model: {' '.join(model_args)}: {local['distinct_states']:,} distinct, "
          f"{local['generated_states']:,} generated, depth {local['depth']}")
    print(f"local engine:       {local['elapsed_s']:8.2f} s")
    runs = {}
    for master in ("local[1]", "local[2]"):
        summary, wall = check(model_args, "spark", master)
        for key in ("distinct_states", "generated_states", "depth", "verdict"):
            assert summary[key] == local[key], (master, key, summary[key], local[key])
        runs[master] = summary["elapsed_s"]
        print(f"spark {master}:    {summary['elapsed_s']:8.2f} s  (start-up and shutdown: {wall - summary['elapsed_s']:.1f} s)")
    print(f"scaling local[1] / local[2]:            {runs['local[1]'] / runs['local[2]']:.2f}  (target >= 1.6)")
    print(f"local engine / spark local[2]:          {local['elapsed_s'] / runs['local[2]']:.2f}  (target > 1)")

    tiny = ["--model", "tests.models:countdown", f"--set=start={args.tiny_levels - 1}"]
    summary, _ = check(tiny, "spark", "local[2]")
    levels = summary["level_seconds"][1:]  # level 1 also starts the Python workers and builds the model
    print(f"per-level overhead, spark local[2] (a countdown, one state per level): "
          f"{sum(levels) / len(levels):.2f} s per level over {len(levels)} levels")


if __name__ == "__main__":
    main()
