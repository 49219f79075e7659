"""``check --workers``: one worker against two, and TLC's ``-workers 1`` against ``-workers 2``,
side by side in one run, on one config (``default.toml``: 1,022,723 states).

Each run is a whole process, from start to exit, past any violation (``--continue``,
``-continue``), one after the other, each ``--repeat`` times (the figure is the fastest; every
time is printed).  Printed: the wall times, the speed-ups (one worker's time over two
workers'), kraftcheck's engine bytes per distinct state (visited fingerprints, every worker's,
and parent records: the JSON's ``memory_bytes``) and the peak of its processes' resident memory
added up (sampled), and the serial fraction that two workers'
speed-up implies (Karp-Flatt), with the speed-up it predicts for 8 workers.

    .venv/bin/python bench/workers.py                       # default.toml, TLC too
    .venv/bin/python bench/workers.py --config ci --no-tlc --repeat 3
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tlc import SPEC, VERDICTS, run_tlc  # noqa: E402

from kraftcheck.checker.tlc import TlcUnavailable, tlc_command  # noqa: E402


def tree_rss(pid: int) -> int:
    """Bytes resident in ``pid`` and its children, now (from /proc)."""
    total = 0
    pids = [pid]
    try:
        pids += [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    for each in pids:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def run_kraftcheck(name: str, workers: int) -> tuple[float, dict, int]:
    """Wall time, the JSON summary, and the peak of the resident memory of the coordinator and
    its workers together (sampled every 0.2 s)."""
    with tempfile.TemporaryDirectory(prefix="kraftcheck-bench-") as work:
        summary = Path(work) / "summary.json"
        command = [sys.executable, "-m", "kraftcheck.checker.cli", "check", str(SPEC / "configs" / f"{name}.toml"),
                   "--continue", "--quiet", "--no-picture", "--workers", str(workers), "--json", str(summary),
                   "--trace-dir", work]
        peak = 0
        with tempfile.TemporaryFile(mode="w+") as out:
            start = time.perf_counter()
            process = subprocess.Popen(command, cwd=work, stdout=out, stderr=subprocess.STDOUT)
            while process.poll() is None:
                peak = max(peak, tree_rss(process.pid))
                time.sleep(0.2)
            elapsed = time.perf_counter() - start
            out.seek(0)
            output = out.read()
        if process.returncode not in VERDICTS:
            sys.exit(f"bench/workers.py: kraftcheck exited {process.returncode} on {name}: {output[-500:]}")
        return elapsed, json.loads(summary.read_text()), peak


def karp_flatt(speedup: float, n: int) -> float:
    """The serial fraction a speed-up on ``n`` processors implies: (1/S - 1/n) / (1 - 1/n)."""
    return (1 / speedup - 1 / n) / (1 - 1 / n)


def amdahl(serial: float, n: int) -> float:
    return 1 / (serial + (1 - serial) / n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="default", help="a config in spec/configs (default: default)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (default: 1); the fastest counts")
    parser.add_argument("--no-tlc", action="store_true", help="kraftcheck only")
    parser.add_argument("--heap", default="8g", help="TLC's maximum heap, -Xmx (default: 8g)")
    args = parser.parse_args()
    if not (SPEC / "configs" / f"{args.config}.toml").is_file():
        parser.error(f"no such config in spec/configs: {args.config}")
    if not args.no_tlc:
        try:
            tlc_command("KRaftJBOD.tla", "x.cfg")
        except TlcUnavailable as e:
            sys.exit(f"bench/workers.py: {e}")

    times: dict[str, list[float]] = {}
    distinct: dict[str, int] = {}
    memory: dict[str, float] = {}
    rss: dict[str, int] = {}
    runs = [("kraftcheck --workers 1", 1), ("kraftcheck --workers 2", 2)]
    if not args.no_tlc:
        runs += [("TLC -workers 1", 1), ("TLC -workers 2", 2)]
    for _ in range(args.repeat):
        for label, n in runs:
            if label.startswith("TLC"):
                elapsed, _, found = run_tlc(args.config, n, args.heap)
            else:
                elapsed, summary, peak = run_kraftcheck(args.config, n)
                rss[label] = max(rss.get(label, 0), peak)
                found = summary["distinct_states"]
                memory[label] = summary["memory_bytes"] / found
                if summary["workers"] != n:
                    sys.exit(f"bench/workers.py: {label} ran {summary['workers']} workers: no level was wide enough")
            times.setdefault(label, []).append(elapsed)
            distinct.setdefault(label, found)
            if found != distinct[label] or len(set(distinct.values())) != 1:
                sys.exit(f"bench/workers.py: distinct states differ: {distinct} and {label}: {found:,}")
            print(f"{label:<24} {elapsed:8.1f} s", flush=True)

    best = {label: min(t) for label, t in times.items()}
    print(f"\n{args.config}.toml, {next(iter(distinct.values())):,} distinct states; the fastest of {args.repeat}")
    for label in best:
        extra = (f"  {memory[label]:.1f} engine bytes a state, peak RSS of every process {rss[label] / 2**20:,.0f} MB"
                 if label in memory else "")
        print(f"  {label:<24} {best[label]:8.1f} s{extra}")
    kc = best["kraftcheck --workers 1"] / best["kraftcheck --workers 2"]
    serial = karp_flatt(kc, 2)
    print(f"  kraftcheck speed-up, 2 workers over 1: {kc:.2f} (serial fraction {serial:.3f}: "
          f"8 workers would give {amdahl(serial, 8):.2f})")
    if not args.no_tlc:
        tlc = best["TLC -workers 1"] / best["TLC -workers 2"]
        print(f"  TLC speed-up, 2 workers over 1: {tlc:.2f}")
        print(f"  TLC -workers 2 / kraftcheck --workers 2: {best['TLC -workers 2'] / best['kraftcheck --workers 2']:.2f}")


if __name__ == "__main__":
    main()
