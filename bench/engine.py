"""The local engine against a minimal hand-written BFS loop on the same model.

The bare loop keeps whole states in a ``set`` and a ``deque`` and does nothing else: no
fingerprints, no parent records, no invariants, no coverage.  The figures that matter are
ratios measured in one run: the engine's speed relative to the loop (target >= 0.6) and
the engine's bytes per distinct state for the visited set and the parent records (target
<= 120).

    python bench/engine.py            # six counters 0..9: 1,000,000 states
    python bench/engine.py --n 5      # a smaller run
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kraftcheck.checker.bfs import explore  # noqa: E402
from tests.models import counters  # noqa: E402


def bare_bfs(model) -> tuple[int, int]:
    """The smallest honest BFS: states in a set, a queue, every successor looked up."""
    seen = set()
    queue = deque()
    for s in model.init_states():
        if s not in seen:
            seen.add(s)
            queue.append(s)
    generated = len(seen)
    successors = model.successors
    while queue:
        s = queue.popleft()
        for _, t in successors(s):
            generated += 1
            if t not in seen:
                seen.add(t)
                queue.append(t)
    return len(seen), generated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=6, help="number of counters (default 6)")
    parser.add_argument("--limit", type=int, default=9, help="counters run 0..LIMIT (default 9)")
    args = parser.parse_args()
    model = counters({"n": args.n, "limit": args.limit})

    started = time.perf_counter()
    bare_distinct, bare_generated = bare_bfs(model)
    bare_s = time.perf_counter() - started

    started = time.perf_counter()
    result = explore(model, check_deadlock=False)
    engine_s = time.perf_counter() - started

    assert (result.distinct_states, result.generated_states) == (bare_distinct, bare_generated)
    print(f"model: {args.n} counters in 0..{args.limit}: {bare_distinct:,} distinct, {bare_generated:,} generated")
    print(f"bare loop: {bare_s:.2f} s  ({bare_distinct / bare_s:,.0f} states/s)")
    print(f"engine:    {engine_s:.2f} s  ({bare_distinct / engine_s:,.0f} states/s)")
    print(f"engine speed / bare loop speed: {bare_s / engine_s:.2f}  (target >= 0.6)")
    print(f"engine bytes per distinct state: {result.memory_bytes / result.distinct_states:.1f}  (target <= 120)")


if __name__ == "__main__":
    main()
