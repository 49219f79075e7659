"""Simulation against the shipped mutants: for each, at the config that catches it, how many
walks and steps the seeded walks take to meet its violation, how long that trace is, how long
``trace minimize``'s pass makes it, and the breadth-first search's shortest trace of the same
property (the search checking that property alone, so that it stops at its first violation).

    .venv/bin/python bench/simulation.py [--walks N] [--depth D] [--seed S] [--set KEY=VALUE] [MUTANT ...]

``--set brokers=3`` walks each mutant's config with three brokers, which no search exhausts;
the BFS column is then left empty.  ``--findings CONFIG`` walks one config instead (``three``)
and says after how many walks, steps and seconds each property was first violated.

One line per mutant; the last says how many minimised traces have BFS's length.
"""

from __future__ import annotations

import argparse
import time

from kraftcheck.checker.bfs import OnlyProperty, explore
from kraftcheck.checker.config import CheckConfig, build_model, load_config
from kraftcheck.checker.simulation import simulate
from kraftcheck.model.mutants import CAUGHT_AT
from kraftcheck.traces.minimize import minimize, run_actions, violation_test


def mutant_model(mutant: str, overrides: list[str]):
    config = load_config(CAUGHT_AT[mutant], overrides=overrides)
    settings = {**config.settings, "mutant": mutant}
    return build_model(CheckConfig(config.model, settings, dict(config.check), config.source)), config


def measure(mutant: str, walks: int, depth: int, seed: int, overrides: list[str], by_action: bool = True,
            shorten: bool = True) -> dict:
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
    row.update(property=cx.name, length=cx.length)
    # the same steps without the mutant: a violation they reach too is the config's own finding
    plain = build_model(CheckConfig(config.model, {**config.settings, "mutant": "none"}, dict(config.check), config.source))
    row["without_mutant"] = run_actions(plain, start, [a for a, _ in steps], violation_test(plain, cx.kind, cx.name)) is not None
    if not shorten:
        return row
    started = time.perf_counter()
    short = minimize(model, start, steps, violation_test(model, cx.kind, cx.name))
    row.update(property=cx.name, length=cx.length, minimized=short.length, minimize_s=time.perf_counter() - started)
    if not overrides:
        shortest = explore(OnlyProperty(model, cx.kind, cx.name), check_deadlock=False)
        row["bfs"] = shortest.violations[0].length
    return row


class WithoutProperties:
    """The model with the properties already met left unchecked, so that a simulation stopping
    at its first violation goes on to the next property."""

    def __init__(self, model, met: set[str]):
        self._model = model
        self.invariants = {n: p for n, p in model.invariants.items() if n not in met}
        self.action_invariants = {n: p for n, p in (getattr(model, "action_invariants", None) or {}).items()
                                  if n not in met}

    def __getattr__(self, name):
        return getattr(self._model, name)


def first_violations(config_name: str, walks: int, depth: int, seed: int) -> None:
    config = load_config(config_name)
    model = build_model(config)
    met: set[str] = set()
    first, steps, started = 0, 0, time.perf_counter()
    print(f"{config_name}: walks of seed {seed}, at most {depth} states; each property's first violation\n")
    print("| property | walk | walks so far | steps so far | seconds so far | its trace |")
    print("|---|---|---|---|---|---|")
    while first < walks:
        found = simulate(WithoutProperties(model, met), walks=walks - first, depth=depth, seed=seed, first_walk=first,
                         check_deadlock=False)
        steps += found.steps
        if not found.violations:
            break
        for cx in found.violations:
            index = found.walk_of[(cx.kind, cx.name)]
            met.add(cx.name)
            print(f"| {cx.name} | {index:,} | {index + 1:,} | {steps:,} | {time.perf_counter() - started:.1f} | "
                  f"{cx.length} |", flush=True)
        first = index + 1
    print(f"\n{len(met)} properties met in {walks:,} walks ({steps:,} steps, {time.perf_counter() - started:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mutants", nargs="*", default=sorted(CAUGHT_AT))
    parser.add_argument("--walks", type=int, default=20_000)
    parser.add_argument("--depth", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pick", choices=("action", "step"), default="action",
                        help="how a walk picks its next step, as simulate's --pick (default: action)")
    parser.add_argument("--no-minimize", dest="shorten", action="store_false", help="leave the traces as found")
    parser.add_argument("--findings", metavar="CONFIG", help="each property's first violation on CONFIG")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    if args.findings:
        first_violations(args.findings, args.walks, args.depth, args.seed)
        return
    print("| mutant | config | found after walks | steps | property | trace | minimized | BFS | simulate s | minimize s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    same = found = 0
    for mutant in args.mutants:
        row = measure(mutant, args.walks, args.depth, args.seed, args.overrides, args.pick == "action", args.shorten)
        if "property" not in row:
            print(f"| {mutant} | {row['config']} | not in {row['walks']:,} | {row['steps']:,} | | | | | "
                  f"{row['simulate_s']:.1f} | |", flush=True)
            continue
        found += 1
        same += row.get("minimized") == row.get("bfs")
        # a violation the same steps reach without the mutant is the config's own finding
        name = row["property"] + (" (also without the mutant)" if row["without_mutant"] else "")
        print(f"| {mutant} | {row['config']} | {row['walks']:,} | {row['steps']:,} | {name} | "
              f"{row['length']} | {row.get('minimized', '')} | {row.get('bfs', '')} | {row['simulate_s']:.1f} | "
              f"{row['minimize_s']:.1f} |" if "minimize_s" in row else
              f"| {mutant} | {row['config']} | {row['walks']:,} | {row['steps']:,} | {name} | {row['length']} | | | "
              f"{row['simulate_s']:.1f} | |", flush=True)
    print(f"\n{found} of {len(args.mutants)} mutants found" + ("" if args.overrides else
                                                             f"; {same} minimised to BFS's length"))


if __name__ == "__main__":
    main()
