"""``kraftcheck prove``: the lemmas of :mod:`.lemmas`, proven or refuted by z3.

Exit codes: 0 every lemma proven; 12 a lemma refuted (its counterexample printed, in Kafka's
terms); 3 the solver gave up on one (timeout or ``unknown``: reported as incomplete, never as
proven); 2 bad usage.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

#: Exit codes, as ``check``'s: a refuted lemma is a violated invariant.
EXIT_PROVEN, EXIT_REFUTED, EXIT_INCOMPLETE = 0, 12, 3
MAX_BROKERS = 10
MAX_DIRS = 4
DEFAULT_TIMEOUT_S = 60


@dataclass
class Outcome:
    name: str
    statement: str
    #: "proven", "refuted" or "incomplete"
    result: str
    seconds: float
    counterexample: list[str] = field(default_factory=list)
    #: why the solver gave up (incomplete only)
    reason: str = ""


def prove_all(n: int, dirs: int, mutant: str = "none", timeout_s: float = DEFAULT_TIMEOUT_S) -> list[Outcome]:
    """Every lemma for ``n`` brokers with up to ``dirs`` registered directories each."""
    import z3

    from .lemmas import LEMMAS, Cluster

    outcomes = []
    for lemma in LEMMAS:
        cluster = Cluster(n, dirs)
        solver = z3.Solver()
        solver.set("timeout", int(timeout_s * 1000))
        solver.add(cluster.well_formed(mutant), z3.Not(lemma.claim(cluster, mutant)))
        start = time.perf_counter()
        answer = solver.check()
        seconds = time.perf_counter() - start
        if answer == z3.unsat:
            outcomes.append(Outcome(lemma.name, lemma.statement, "proven", seconds))
        elif answer == z3.sat:
            outcomes.append(Outcome(lemma.name, lemma.statement, "refuted", seconds, cluster.describe(solver.model())))
        else:
            outcomes.append(Outcome(lemma.name, lemma.statement, "incomplete", seconds,
                                    reason=solver.reason_unknown()))
    return outcomes


def exit_code(outcomes: list[Outcome]) -> int:
    results = {o.result for o in outcomes}
    if "refuted" in results:
        return EXIT_REFUTED
    return EXIT_INCOMPLETE if "incomplete" in results else EXIT_PROVEN


def register(commands, positive) -> None:
    prove = commands.add_parser(
        "prove", help="prove the controller's rules for every input with z3",
        description="Prove lemmas about the controller's decision rules (directory online, reserved UUIDs, "
                    "leader acceptability and election, directory failure, fencing, the broker-epoch gate, "
                    "designated elections) for every value: 128-bit directory IDs, 64-bit broker epochs, "
                    f"N brokers. Exit {EXIT_PROVEN}: all proven; {EXIT_REFUTED}: a lemma refuted (its "
                    f"counterexample printed); {EXIT_INCOMPLETE}: the solver gave up on one.")
    prove.add_argument("--n", type=bounded("--n", MAX_BROKERS), default=3, metavar="N",
                       help=f"brokers, each a replica of the partition (1..{MAX_BROKERS}; default 3)")
    prove.add_argument("--dirs", type=bounded("--dirs", MAX_DIRS), default=2, metavar="K",
                       help=f"registered directories per broker (1..{MAX_DIRS}; default 2)")
    prove.add_argument("--mutant", default="none", metavar="NAME", help="put a known bug back into the rules")
    prove.add_argument("--timeout", type=positive, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                       help=f"the solver's time per lemma (default {DEFAULT_TIMEOUT_S})")
    prove.add_argument("--induction", action="store_true",
                       help="check the controller's actions for induction (Init => Inv, Inv and each action "
                            "=> Inv') instead of the rule lemmas")
    prove.add_argument("--semantics", choices=("code", "kip"), default="code",
                       help="with --induction: the handlers as Kafka's code runs them (default) or as KIP-858 reads")
    prove.add_argument("--cti-dir", metavar="DIR",
                       help="with --induction: write each counterexample to induction as a two-state ITF trace in DIR")
    prove.add_argument("--json", metavar="PATH", help="write a JSON summary to PATH")
    prove.set_defaults(run=run_prove)


def bounded(flag: str, largest: int):
    import argparse

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer from 1 to {largest}, got {text!r}") from None
        if not 1 <= value <= largest:
            raise argparse.ArgumentTypeError(f"expected an integer from 1 to {largest}, got {text!r}")
        return value

    return parse


def run_prove(args) -> int:
    from kraftcheck.checker.config import ConfigError
    from kraftcheck.checker.extras import require
    from kraftcheck.model import MUTANTS

    require("prove", "kraftcheck prove")
    from .lemmas import RULE_MUTANTS

    if args.mutant != "none" and args.mutant not in MUTANTS:
        raise ConfigError(f"unknown mutant {args.mutant!r} (known: {', '.join(MUTANTS)})")
    if args.semantics != "code" and not args.induction:
        raise ConfigError("--semantics goes with --induction: the rule lemmas hold under both readings")
    if args.cti_dir and not args.induction:
        raise ConfigError("--cti-dir goes with --induction: the rule lemmas have no counterexamples to induction")
    if args.mutant != "none" and args.mutant not in RULE_MUTANTS and not args.induction:
        print(f"kraftcheck: note: mutant {args.mutant} changes no rule these lemmas state (the rule mutants: "
              f"{', '.join(sorted(RULE_MUTANTS))}); the lemmas are proven as without it", file=sys.stderr)
    if args.json:
        from pathlib import Path

        from kraftcheck.checker.outputs import unwritable as _unwritable

        problem = _unwritable(Path(args.json), directory=False)
        if problem:
            raise ConfigError(f"cannot write the summary to {args.json}: {problem}")
    if args.induction:
        return run_induction(args)
    outcomes = prove_all(args.n, args.dirs, args.mutant, args.timeout)
    code = exit_code(outcomes)
    print_outcomes(outcomes, args, sys.stdout)
    if args.json:
        from kraftcheck.checker.outputs import write_summary

        write_summary(args.json, summary(outcomes, args, code))
    return code


def print_outcomes(outcomes: list[Outcome], args, out) -> None:
    mutant = "" if args.mutant == "none" else f", mutant {args.mutant}"
    print(f"proving {len(outcomes)} lemmas for {args.n} brokers with up to {args.dirs} directories each, "
          f"128-bit directory IDs, 64-bit broker epochs{mutant}", file=out)
    width = max(len(o.name) for o in outcomes)
    for o in outcomes:
        print(f"  {o.name:<{width}}  {o.result:<10}  {o.seconds:6.2f} s", file=out)
    for o in outcomes:
        if o.result == "refuted":
            print(f"\n{o.name} is refuted: it is not so that {o.statement}. Counterexample:", file=out)
            for line in o.counterexample:
                print(f"  {line}", file=out)
        elif o.result == "incomplete":
            print(f"\n{o.name} is incomplete: the solver gave up ({o.reason}); it is not proven", file=out)
    verdict = {EXIT_PROVEN: "every lemma proven", EXIT_REFUTED: "a lemma is refuted",
               EXIT_INCOMPLETE: "incomplete: a lemma is neither proven nor refuted"}[exit_code(outcomes)]
    print(f"\n{verdict} ({sum(o.seconds for o in outcomes):.2f} s)", file=out)


def summary(outcomes: list[Outcome], args, code: int) -> dict:
    verdict = {EXIT_PROVEN: "proven", EXIT_REFUTED: "refuted", EXIT_INCOMPLETE: "incomplete"}[code]
    return {
        "verdict": verdict, "exit_code": code, "brokers": args.n, "dirs": args.dirs, "mutant": args.mutant,
        "timeout_s": args.timeout,
        "lemmas": [{"name": o.name, "statement": o.statement, "result": o.result, "seconds": round(o.seconds, 3),
                    "counterexample": o.counterexample, **({"reason": o.reason} if o.reason else {})}
                   for o in outcomes],
    }


#: how the induction's output names the handlers it checks
HANDLERS = {"code": "the handlers as Kafka's code runs them", "kip": "the handlers as KIP-858 reads them"}


def induction_exit_code(cells) -> int:
    """12: a step breaks an invariant from a reachable state; 3: a step is not proven (a
    counterexample no run reaches at the lookup configs, or the solver gave up); 0: all proven."""
    if any(c.result == "counterexample" and c.reached is not None for c in cells):
        return EXIT_REFUTED
    return EXIT_PROVEN if all(c.result == "proven" for c in cells) else EXIT_INCOMPLETE


def reach_text(cell) -> str:
    from .reach import LOOKUP

    if cell.reached is None:
        return (f"no run reaches it at the lookup configs ({'; '.join(LOOKUP)}): the invariant needs "
                "strengthening, or larger bounds reach it")
    r = cell.reached
    return (f"reachable: {r.config}, {r.model.describe_action(r.action)} from a state at depth {r.depth}: "
            "a real violation")


def run_induction(args) -> int:
    """``prove --induction``: the table of actions against invariants and helpers, then each
    counterexample to induction, its two states in Kafka's terms."""
    from pathlib import Path

    from kraftcheck.checker.outputs import unwritable as _unwritable
    from kraftcheck.checker.config import ConfigError

    from .induction import check_induction
    from .reach import classify, cti_document, run_document, write_cti

    if args.cti_dir:
        problem = _unwritable(Path(args.cti_dir), directory=True)
        if problem:
            raise ConfigError(f"cannot write counterexamples to {args.cti_dir}: {problem}")
    cells = check_induction(args.n, args.dirs, args.mutant, args.timeout, args.semantics)
    classify(cells, args.mutant, args.semantics)
    code = induction_exit_code(cells)
    written = {}
    if args.cti_dir:
        # The proof stands once found: a counterexample that cannot be written (a full disk, a
        # folder gone meanwhile) is one line on stderr, and the table and verdict follow all the same.
        from kraftcheck.checker.errors import error

        for c in cells:
            if c.result == "counterexample" and c.post:
                try:
                    Path(args.cti_dir).mkdir(parents=True, exist_ok=True)
                    written[(c.action, c.prop)] = str(write_cti(Path(args.cti_dir), c,
                                                                cti_document(c, args.n, args.dirs, args.semantics)))
                    if c.reached is not None:
                        write_cti(Path(args.cti_dir), c, run_document(c.reached, c.prop), ".run")
                except OSError as e:
                    error(f"cannot write the counterexample of {c.action} against {c.prop} to {args.cti_dir}: "
                          f"{e.strerror or e}")
    out = sys.stdout
    mutant = "" if args.mutant == "none" else f", mutant {args.mutant}"
    print(f"checking {len(cells)} induction steps for {args.n} brokers with up to {args.dirs} directories each, "
          f"128-bit directory IDs, 64-bit broker epochs, {HANDLERS[args.semantics]}{mutant}", file=out)
    action_width = max(len(c.action) for c in cells)
    prop_width = max(len(c.prop) + (9 if c.helper else 0) for c in cells)
    for c in cells:
        prop = f"{c.prop} (helper)" if c.helper else c.prop
        print(f"  {c.action:<{action_width}}  {prop:<{prop_width}}  {c.result:<14}  {c.seconds:6.2f} s", file=out)
    for c in cells:
        if c.result == "counterexample":
            print(f"\n{c.action} does not keep {c.prop}: a counterexample to induction; {reach_text(c)}", file=out)
            if (c.action, c.prop) in written:
                run = " and the whole run, .run.itf.json" if c.reached is not None else ""
                print(f"  written to {written[(c.action, c.prop)]}{run}", file=out)
            for label, lines in (("before", c.pre), ("after", c.post)):
                if lines:
                    print(f"  {label}:", file=out)
                    for line in lines:
                        print(f"    {line}", file=out)
        elif c.result == "incomplete":
            print(f"\n{c.action} against {c.prop} is incomplete: the solver gave up ({c.reason})", file=out)
    verdict = {EXIT_PROVEN: "every step proven: the invariants are inductive for these actions",
               EXIT_REFUTED: "a step breaks an invariant from a reachable state",
               EXIT_INCOMPLETE: "not proven: a step has a counterexample no run reaches, or the solver gave up"}[code]
    print(f"\n{verdict} ({sum(c.seconds for c in cells):.2f} s)", file=out)
    if args.json:
        from kraftcheck.checker.outputs import write_summary

        write_summary(args.json, {
            "verdict": {EXIT_PROVEN: "proven", EXIT_REFUTED: "violated", EXIT_INCOMPLETE: "incomplete"}[code],
            "exit_code": code, "brokers": args.n, "dirs": args.dirs, "semantics": args.semantics, "mutant": args.mutant,
            "timeout_s": args.timeout,
            "steps": [{"action": c.action, "property": c.prop, "helper": c.helper, "result": c.result,
                       "seconds": round(c.seconds, 3), "before": c.pre, "after": c.post,
                       **({"reachable": c.reached is not None} if c.result == "counterexample" else {}),
                       **({"lookup_config": c.reached.config, "depth": c.reached.depth} if c.reached else {}),
                       **({"trace": written[(c.action, c.prop)]} if (c.action, c.prop) in written else {}),
                       **({"reason": c.reason} if c.reason else {})} for c in cells],
        })
    return code
