"""Whether this machine's cores run at one speed: one process per core, each running the same
CPU-bound Python loop (dicts of tuples, as a model's step does), the CPU time of each chunk
compared between the processes window by window.

A level-synchronous search ends each level when its slowest task does: where one core runs
slower than the other for seconds at a time (a virtual machine sharing its host's cores),
the faster one waits, whatever the engine does.

    python bench/cores.py                  # 30 s, every core
    python bench/cores.py --seconds 60 --window 5
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time


def chunk() -> int:
    table = {}
    for i in range(200_000):
        table[(i, i & 7)] = (i, str(i & 15))
    return len(table)


def spin(seconds: float, results) -> None:
    """Run chunks for ``seconds``; put (wall time at the chunk's end, its CPU seconds) per chunk."""
    chunks = []
    end = time.time() + seconds
    while time.time() < end:
        cpu = time.process_time()
        chunk()
        chunks.append((time.time(), time.process_time() - cpu))
    results.put((os.getpid(), chunks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="how long each process runs (default 30)")
    parser.add_argument("--window", type=float, default=3.0, help="seconds per compared window (default 3)")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1,
                        help="processes, one per core by default")
    args = parser.parse_args()
    if args.processes < 2:
        parser.error("--processes must be at least 2: the figure compares cores")
    if not 0 < args.window <= args.seconds:
        parser.error("--window must be more than 0 and at most --seconds")

    results = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=spin, args=(args.seconds, results)) for _ in range(args.processes)]
    for worker in workers:
        worker.start()
    runs = [results.get()[1] for _ in workers]
    for worker in workers:
        worker.join()

    start = min(chunks[0][0] for chunks in runs)
    windows = int(args.seconds // args.window)
    spreads = []
    print(f"{args.processes} processes, CPU ms per chunk in each {args.window:g}-second window:")
    for w in range(windows):
        means = []
        for chunks in runs:
            inside = [cpu for at, cpu in chunks if w * args.window <= at - start < (w + 1) * args.window]
            means.append(statistics.mean(inside) * 1000 if inside else float("nan"))
        spreads.append(max(means) / min(means))
        print(f"  {w * args.window:5.0f} s: " + "  ".join(f"{m:6.1f}" for m in means) + f"   slowest / fastest {spreads[-1]:.2f}")
    print(f"slowest / fastest: median {statistics.median(spreads):.2f}, max {max(spreads):.2f}")


if __name__ == "__main__":
    main()
