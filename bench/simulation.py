"""Simulation against the shipped mutants: for each, at the config that catches it, how many
walks and steps the seeded walks take to meet its violation, how long that trace is, how long
``trace minimize``'s pass makes it, and the breadth-first search's shortest trace of the same
property (the search checking that property alone, so that it stops at its first violation).

    .venv/bin/python bench/simulation.py [--walks N] [--depth D] [--seed S] [--set KEY=VALUE] [MUTANT ...]

``--set brokers=3`` walks each mutant's config with three brokers, which no search exhausts;
the BFS column is then left empty.

One line per mutant; the last says how many minimised traces have BFS's length.
"""

from __future__ import annotations

import argparse
import time

from kraftcheck.checker.bfs import OnlyProperty, explore
from kraftcheck.checker.config import CheckConfig, build_model, load_config
from kraftcheck.checker.simulation import simulate
from kraftcheck.model.mutants import CAUGHT_AT
from kraftcheck.traces.minimize import minimize, violation_test


def mutant_model(mutant: str, overrides: list[str]):
    config = load_config(CAUGHT_AT[mutant], overrides=overrides)
    settings = {**config.settings, "mutant": mutant}
    return build_model(CheckConfig(config.model, settings, dict(config.check), config.source)), config


def measure(mutant: str, walks: int, depth: int, seed: int, overrides: list[str], by_action: bool = True) -> dict:
    model, config = mutant_model(mutant, overrides)
    started = time.perf_counter()
    found = simulate(model, walks=walks, depth=depth, seed=seed,
                     check_deadlock=config.check.get("deadlock", True), by_action=by_action)
    simulated_s = time.perf_counter() - started
    row = {"mutant": mutant, "config": CAUGHT_AT[mutant], "walks": found.walks, "steps": found.steps,
           "simulate_s": simulated_s}
    if not found.violations:
        return row
    cx = found.violations[0]
    start, steps = cx.trace[0][1], cx.trace[1:]
    started = time.perf_counter()
    short = minimize(model, start, steps, violation_test(model, cx.kind, cx.name))
    row.update(property=cx.name, length=cx.length, minimized=short.length, minimize_s=time.perf_counter() - started)
    if not overrides:
        shortest = explore(OnlyProperty(model, cx.kind, cx.name), check_deadlock=False)
        row["bfs"] = shortest.violations[0].length
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mutants", nargs="*", default=sorted(CAUGHT_AT))
    parser.add_argument("--walks", type=int, default=20_000)
    parser.add_argument("--depth", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pick", choices=("action", "step"), default="action",
                        help="how a walk picks its next step, as simulate's --pick (default: action)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    print("| mutant | config | found after walks | steps | property | trace | minimized | BFS | simulate s | minimize s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    same = found = 0
    for mutant in args.mutants:
        row = measure(mutant, args.walks, args.depth, args.seed, args.overrides, args.pick == "action")
        if "property" not in row:
            print(f"| {mutant} | {row['config']} | not in {row['walks']:,} | {row['steps']:,} | | | | | "
                  f"{row['simulate_s']:.1f} | |", flush=True)
            continue
        found += 1
        same += row["minimized"] == row.get("bfs")
        print(f"| {mutant} | {row['config']} | {row['walks']:,} | {row['steps']:,} | {row['property']} | "
              f"{row['length']} | {row['minimized']} | {row.get('bfs', '')} | {row['simulate_s']:.1f} | "
              f"{row['minimize_s']:.1f} |", flush=True)
    print(f"\n{found} of {len(args.mutants)} mutants found" + ("" if args.overrides else
                                                             f"; {same} minimised to BFS's length"))


if __name__ == "__main__":
    main()
