"""The liveness phase's cost beside the safety search's, in one run: the state graph it keeps
(states, edges, bytes, bytes per edge) and the time it takes to build it and to decide one
property, against the breadth-first search of the same model on one core.

    .venv/bin/python bench/liveness.py [--processes N ...] [--config CONFIG.toml ...]

``--processes``: the example lock with N processes (its two properties).  ``--config``: a
shipped Kafka config without symmetry reduction, with one property that holds nowhere
(``[]<>FALSE``, decided on the whole graph): the graph's size and build time.
"""

from __future__ import annotations

import argparse
import time

from kraftcheck.checker.check import WithoutSymmetry
from kraftcheck.checker.config import build_model, load_config
from kraftcheck.checker.liveness import check_liveness
from kraftcheck.checker.temporal import always_eventually, declared_fairness, declared_properties
from kraftcheck.checker.workers import explore
from kraftcheck.examples.lock import make_model as make_lock


def Never(state) -> bool:
    return False


def measure(name: str, model, properties, fairness) -> dict:
    started = time.perf_counter()
    safety = explore(model, workers=1, check_deadlock=False)
    safety_s = time.perf_counter() - started
    live = check_liveness(model, properties, fairness)
    return {"model": name, "states": live.graph_states, "edges": live.graph_edges, "bytes": live.memory_bytes,
            "per_edge": live.memory_bytes / max(live.graph_edges, 1), "safety_s": safety_s, "liveness_s": live.elapsed_s,
            "ratio": live.elapsed_s / safety_s if safety_s else 0.0, "failing": sorted(live.lassos),
            "bfs_states": safety.distinct_states}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, nargs="*", default=[4, 6])
    parser.add_argument("--config", nargs="*", default=["spec/configs/ci.toml"])
    args = parser.parse_args()
    rows = []
    for n in args.processes:
        lock = make_lock({"processes": n})
        rows.append(measure(f"lock, {n} processes", lock, declared_properties(lock), declared_fairness(lock)))
    for path in args.config:
        model = WithoutSymmetry(build_model(load_config(path)))
        rows.append(measure(f"{path} (no symmetry)", model, {"Never": always_eventually(Never)}, []))
    print(f"{'model':<40} {'states':>10} {'edges':>11} {'bytes/edge':>10} {'safety s':>9} {'liveness s':>10} "
          f"{'ratio':>6}  failing")
    for r in rows:
        assert r["states"] == r["bfs_states"], r
        print(f"{r['model']:<40} {r['states']:>10,} {r['edges']:>11,} {r['per_edge']:>10.1f} {r['safety_s']:>9.2f} "
              f"{r['liveness_s']:>10.2f} {r['ratio']:>6.2f}  {', '.join(r['failing']) or '-'}")


if __name__ == "__main__":
    main()
