"""Where one Spark search's CPU goes: the driver JVM's threads and the Python workers.

Starts a session as the engine does, then reads, from ``/proc``, the CPU time of each thread
of the driver JVM and of every Python process below this one, before and after one search
(so the JVM's start-up is left out): user and kernel time, and the page faults (a page the
process touches for the first time, zeroed by the kernel).  Linux only.

    python bench/spark_cpu.py --config spec/configs/default.toml
    python bench/spark_cpu.py --config spec/configs/default.toml --master 'local[1]'
"""

from __future__ import annotations

import argparse
import os
import re
from collections import Counter

import workload  # bench/workload.py, beside this script

from kraftcheck.checker.config import ConfigError, load_config
from kraftcheck.checker.spark import explore_spark
from kraftcheck.checker.spark_session import open_session

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(path: str) -> tuple[str, list[str]]:
    """(command name, the fields after it) of a /proc stat file."""
    with open(path) as f:
        text = f.read()
    return text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            _, fields = _stat(f"/proc/{entry}/stat")
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


class Usage:
    """CPU seconds (user, kernel) and minor page faults of a set of processes or threads."""

    def __init__(self, user: float = 0.0, system: float = 0.0, faults: int = 0):
        self.user, self.system, self.faults = user, system, faults

    def add(self, fields: list[str], children: bool = False) -> None:
        """Add a /proc stat record's figures (with ``children``, those of its exited children too)."""
        self.user += (int(fields[11]) + (int(fields[13]) if children else 0)) / _TICK
        self.system += (int(fields[12]) + (int(fields[14]) if children else 0)) / _TICK
        self.faults += int(fields[7]) + (int(fields[8]) if children else 0)

    def __sub__(self, other: "Usage") -> "Usage":
        return Usage(self.user - other.user, self.system - other.system, self.faults - other.faults)

    def __str__(self) -> str:
        return (f"{self.user + self.system:6.1f} s of CPU ({self.user:.1f} s user, {self.system:.1f} s kernel), "
                f"{self.faults:,} page faults")


def cpu_seconds() -> tuple[Counter, Usage, Usage]:
    """(seconds per kind of JVM thread, numbers in names folded; the JVM's usage; the usage
    of the Python processes below this one, their exited children included)."""
    children, todo, below = _children(), [os.getpid()], []
    while todo:
        for child in children.get(todo.pop(), []):
            below.append(child)
            todo.append(child)
    threads, jvm, python = Counter(), Usage(), Usage()
    for pid in below:
        try:
            name, fields = _stat(f"/proc/{pid}/stat")
            if name == "java":
                jvm.add(fields)
                for tid in os.listdir(f"/proc/{pid}/task"):
                    thread, t = _stat(f"/proc/{pid}/task/{tid}/stat")
                    threads[re.sub(r"\d+", "#", thread)] += (int(t[11]) + int(t[12])) / _TICK
            elif name.startswith("python"):
                python.add(fields, children=True)
        except OSError:  # gone meanwhile
            continue
    return threads, jvm, python


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload.add_arguments(parser)
    parser.add_argument("--master", default="local[2]", help="a local master (default local[2])")
    args = parser.parse_args()
    if not args.master.startswith("local"):
        parser.error("--master must be local[N]: the JVM and the workers are read from this machine's /proc")
    try:
        config = load_config(*workload.chosen(args))
        handle = open_session(args.master)
    except ConfigError as e:
        parser.error(str(e))
    try:
        threads_before, jvm_before, python_before = cpu_seconds()
        result = explore_spark(config, master=args.master, check_deadlock=False)
        threads_after, jvm_after, python_after = cpu_seconds()
    finally:
        handle.stop()
    by_thread = Counter({name: seconds - threads_before.get(name, 0.0) for name, seconds in threads_after.items()})
    print(f"{result.distinct_states:,} distinct, depth {result.depth}, {args.master}: {result.elapsed_s:.2f} s")
    print(f"driver JVM:     {jvm_after - jvm_before}")
    for name, seconds in by_thread.most_common(6):
        print(f"  {name:22} {seconds:6.2f} s")
    print(f"Python workers: {python_after - python_before}")


if __name__ == "__main__":
    main()
