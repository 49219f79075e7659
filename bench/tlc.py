"""TLC against kraftcheck's local engine on the Kafka model, config by config.

For each config, one after the other: TLC with ``-workers 1`` and with ``-workers 2``
(``-XX:+UseParallelGC``, the heap ``--heap`` gives, deadlock checking as the ``.toml`` says, in
a temporary copy of ``spec/``), then ``kraftcheck check --workers 1`` on the ``.toml`` (one
process: ``bench/workers.py`` runs two against TLC's two), both past any
violation (``-continue``, ``--continue``).  Each is a whole
process, timed from start to exit (TLC's JVM start-up and kraftcheck's imports included), and
its peak resident memory is the kernel's figure for that process (``wait4``'s ``ru_maxrss``).
Printed: each run's wall time and peak RSS, the distinct states each reported (they must be
equal), and the ratios TLC / kraftcheck.

    .venv/bin/python bench/tlc.py                               # every config but default
    .venv/bin/python bench/tlc.py --configs ci default --heap 8g
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from kraftcheck.checker.tlc import TlcUnavailable, parse_output, tlc_command

SPEC = Path(__file__).resolve().parent.parent / "spec"
#: Both explore every state past violations (TLC's -continue, kraftcheck's --continue), so that a
#: config holding a finding is timed over its whole state space too: ok, or a violation found.
VERDICTS = (0, 12, 13)


def timed(command: list[str], cwd: str | Path) -> tuple[float, int, str, int]:
    """Run ``command``; return its wall time (s), peak RSS (bytes), output and exit code."""
    with tempfile.TemporaryFile(mode="w+") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        return elapsed, usage.ru_maxrss * 1024, out.read(), process.returncode


def run_tlc(name: str, workers: int, heap: str) -> tuple[float, int, int | None]:
    deadlock = tomllib.loads((SPEC / "configs" / f"{name}.toml").read_text())["check"].get("deadlock", True)
    with tempfile.TemporaryDirectory(prefix="tlc-bench-") as work:
        for path in [*SPEC.glob("*.tla"), SPEC / f"{name}.cfg"]:
            shutil.copy(path, work)
        command = tlc_command("KRaftJBOD.tla", f"{name}.cfg", workers=workers, check_deadlock=deadlock,
                              keep_going=True, java_options=("-XX:+UseParallelGC", f"-Xmx{heap}"))
        elapsed, rss, output, code = timed(command, work)
    run = parse_output(output, exit_code=code)
    if code not in VERDICTS or run.distinct is None:
        sys.exit(f"bench/tlc.py: TLC exited {code} on {name}: {' '.join(run.errors) or output[-500:]}")
    return elapsed, rss, run.distinct


def run_kraftcheck(name: str) -> tuple[float, int, int]:
    with tempfile.TemporaryDirectory(prefix="kraftcheck-bench-") as work:
        summary = Path(work) / "summary.json"
        command = [sys.executable, "-m", "kraftcheck.checker.cli", "check", str(SPEC / "configs" / f"{name}.toml"),
                   "--continue", "--quiet", "--workers", "1", "--json", str(summary), "--trace-dir", work]
        elapsed, rss, output, code = timed(command, work)
        if code not in VERDICTS:
            sys.exit(f"bench/tlc.py: kraftcheck exited {code} on {name}: {output[-500:]}")
        return elapsed, rss, json.loads(summary.read_text())["distinct_states"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = sorted(p.stem for p in (SPEC / "configs").glob("*.toml") if p.stem != "default")
    parser.add_argument("--configs", nargs="+", default=default, metavar="NAME",
                        help="configs in spec/configs (default: all but default)")
    parser.add_argument("--heap", default="4g", help="TLC's maximum heap, -Xmx (default: 4g)")
    args = parser.parse_args()
    unknown = [n for n in args.configs if not (SPEC / "configs" / f"{n}.toml").is_file()]
    if unknown:
        parser.error(f"no such config in spec/configs: {', '.join(unknown)}")
    try:
        tlc_command("KRaftJBOD.tla", "x.cfg")
    except TlcUnavailable as e:
        sys.exit(f"bench/tlc.py: {e}")

    print(f"TLC: -XX:+UseParallelGC -Xmx{args.heap}; wall time of the whole process, peak RSS in MB")
    header = f"{'config':<18} {'distinct':>10}  {'TLC -workers 1':>16}  {'TLC -workers 2':>16}  {'kraftcheck':>16}  {'TLC 1 / kc':>10}  {'TLC 2 / kc':>10}"
    print(header)
    for name in args.configs:
        t1, m1, d1 = run_tlc(name, 1, args.heap)
        t2, m2, d2 = run_tlc(name, 2, args.heap)
        tk, mk, dk = run_kraftcheck(name)
        if not d1 == d2 == dk:
            sys.exit(f"bench/tlc.py: {name}: TLC found {d1:,} and {d2:,} distinct states, kraftcheck {dk:,}")
        mb = 1 << 20
        print(f"{name:<18} {dk:>10,}  {t1:>8.1f} s {m1 / mb:>5.0f}  {t2:>8.1f} s {m2 / mb:>5.0f}  "
              f"{tk:>8.1f} s {mk / mb:>5.0f}  {t1 / tk:>10.2f}  {t2 / tk:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
