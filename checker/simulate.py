"""``kraftcheck simulate``: seeded random walks through one config, for bounds too large to
exhaust (:mod:`.simulation`).

Its exit codes and JSON summary are ``check``'s: 12 a violated invariant, 13 only step
properties, 11 a deadlock, and 3 (verdict ``incomplete``) when the walks met no violation,
which proves nothing about the states they did not reach.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from .check import action_labeller, finding_text, print_coverage
from .config import ConfigError, build_model, load_config
from .errors import EXIT_MODEL_FAILED, UsageError, error, model_failure
from .extras import require
from .outputs import DEFAULT_TRACE_DIR, check_outputs, json_summary, refuse_replacing, write_summary, write_traces
from .protocol import ModelProtocolError
from .result import DEADLOCK_NAME
from .signals import Figures, note_figures
from .simulation import TIME_UP, SimulationProgress, SimulationResult, simulate

#: Walks when neither --walks nor --time says how many.
DEFAULT_WALKS = 1000
#: States on a walk when --depth does not say (TLC's -depth default).
DEFAULT_DEPTH = 100
#: Seconds between two progress lines on stderr.
PROGRESS_INTERVAL_S = 5.0


def register(commands, model_source, *, positive, seed, duration, engine, engines) -> None:
    simulate_parser = commands.add_parser(
        "simulate", parents=[model_source], help="check invariants along seeded random walks",
        description="Walk the model at random from its initial states, checking every invariant and step "
                    "property at each step; for state spaces too large to explore. Walk I of seed S is the "
                    "same walk in every run.")
    simulate_parser.add_argument("config", nargs="?", metavar="CONFIG.toml",
                                 help="config file (default: the embedded spec/configs/default.toml)")
    simulate_parser.add_argument("--walks", type=positive, metavar="N",
                                 help=f"walks to take (default: {DEFAULT_WALKS:,}, or as many as --time allows)")
    simulate_parser.add_argument("--depth", type=positive, metavar="D",
                                 help=f"states on a walk at most, as --max-depth counts them (default: {DEFAULT_DEPTH})")
    simulate_parser.add_argument("--seed", type=seed, metavar="S",
                                 help="the walks' seed (default: a random one, printed)")
    simulate_parser.add_argument("--time", type=duration, metavar="LIMIT",
                                 help="stop after LIMIT: seconds, or 90s, 5m, 1h")
    simulate_parser.add_argument("--engine", type=engine, default="local",
                                 help=f"where the walks run: {', '.join(engines)} (default: local); on Spark, chunks of "
                                      "walks go to the executors, and the figures and traces are the local engine's for "
                                      "the same seed and --walks")
    simulate_parser.add_argument("--spark-master", metavar="URL",
                                 help="Spark master for --engine spark: local[N], spark://HOST:PORT or sc://HOST:PORT "
                                      "(default: $SPARK_MASTER, else local[*])")
    simulate_parser.add_argument("--replay-walk", type=int, metavar="I",
                                 help="take walk I of --seed alone and print its steps")
    simulate_parser.add_argument("--pick", choices=("action", "step"), default="action",
                                 help="how a walk picks its next step: action, an enabled action's name first, "
                                      "uniformly, then one of its steps (the default); step, uniformly among all "
                                      "enabled steps")
    simulate_parser.add_argument("--expect", action="append", default=[], metavar="PROPERTY",
                                 help="a property whose violation is expected (a known finding): said as expected, and "
                                      "exit 0 when the walks meet only expected violations; repeat for several")
    simulate_parser.add_argument("--continue", dest="keep_going", action="store_true",
                                 help="keep walking after a violation; report the shortest trace found of each")
    simulate_parser.add_argument("--no-deadlock", action="store_true", help="do not report states without successors")
    simulate_parser.add_argument("--json", metavar="PATH", help="write a JSON summary to PATH")
    simulate_parser.add_argument("--trace-dir", metavar="DIR", help=f"where traces go (default: ./{DEFAULT_TRACE_DIR})")
    simulate_parser.add_argument("--quiet", action="store_true", help="no progress, only the verdict")
    simulate_parser.add_argument("--no-picture", action="store_true", help="do not draw an SVG picture beside each trace")
    simulate_parser.set_defaults(run=run_simulate)


def run_simulate(args) -> int:
    if args.replay_walk is not None:
        if args.seed is None:
            raise UsageError("--replay-walk needs the --seed its walk was taken with")
        if args.replay_walk < 0:
            raise UsageError(f"--replay-walk takes a walk's index, 0 or more, not {args.replay_walk}")
        if args.walks is not None or args.time is not None:
            raise UsageError("--replay-walk takes one walk: give neither --walks nor --time")
        if args.engine == "spark":
            raise UsageError("--replay-walk takes one walk, on this machine: not with --engine spark")
    if args.engine == "spark":
        require("spark", "--engine spark")
    config = load_config(args.config, args.model, args.overrides)
    model = build_model(config)
    _check_expected(model, args.expect)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    walks = 1 if args.replay_walk is not None else args.walks or (sys.maxsize if args.time else DEFAULT_WALKS)
    depth = args.depth or config.check.get("max_depth") or DEFAULT_DEPTH
    trace_dir = Path(args.trace_dir or DEFAULT_TRACE_DIR)
    check_outputs(model, config, trace_dir, args.json)
    refuse_replacing([config.source], [("--json", args.json)], [(config, model)], trace_dir)
    options = {"walks": None if walks == sys.maxsize else walks, "depth": depth, "seed": seed, "time_s": args.time,
               "check_deadlock": not args.no_deadlock and config.check.get("deadlock", True),
               "stop_on_violation": not (args.keep_going or config.check.get("continue", False)), "pick": args.pick}
    if not args.quiet:
        print(f"simulating {config.model} with {config.source or 'no config file'}: {_plan(options, args.replay_walk)}, "
              f"seed {seed}", flush=True)
    note_figures(Figures(0, 0, 0, 0.0))  # a stopping signal before the first walk ends reports no walk
    try:
        result = _run_engine(args, config, model, walks, depth, seed, options)
    except (KeyboardInterrupt, ModelProtocolError, ConfigError):
        raise
    except (Exception, SystemExit) as e:  # the model's own code failed
        error(model_failure(e))
        return EXIT_MODEL_FAILED
    note_figures(Figures(result.distinct_states, result.generated_states, result.depth, result.elapsed_s,
                         result.verdict))
    trace_paths = write_traces(model, config, result, trace_dir, picture=not args.no_picture,
                               meta_for=lambda cx: {"walk": {"seed": seed, "index": result.walk_of[(cx.kind, cx.name)],
                                                            "pick": args.pick}})
    if args.json:
        write_summary(args.json, json_summary(result, config, options, trace_paths))
    _report(model, result, trace_paths, quiet=args.quiet, replayed=args.replay_walk, expected=tuple(args.expect))
    found = result.counterexamples
    if found and all(cx.name in args.expect for cx in found):
        return 0
    return result.exit_code


def _check_expected(model, expected: list[str]) -> None:
    known = [*model.invariants, *(getattr(model, "action_invariants", None) or {}), DEADLOCK_NAME]
    for name in expected:
        if name not in known:
            raise UsageError(f"--expect {name}: the model checks no property of that name (known: {', '.join(known)})")


def _run_engine(args, config, model, walks: int, depth: int, seed: int, options: dict) -> SimulationResult:
    if args.engine == "spark":
        from .spark_simulation import simulate_spark

        return simulate_spark(config, model, master=args.spark_master, walks=walks, depth=depth, seed=seed,
                              time_limit_s=args.time, check_deadlock=options["check_deadlock"],
                              stop_on_violation=options["stop_on_violation"], by_action=args.pick == "action")
    return simulate(model, walks=walks, depth=depth, seed=seed, time_limit_s=args.time,
                    first_walk=args.replay_walk or 0, check_deadlock=options["check_deadlock"],
                    stop_on_violation=options["stop_on_violation"], progress=_PlainProgress(args.quiet),
                    keep_last_walk=args.replay_walk is not None, by_action=args.pick == "action")


def _plan(options: dict, replayed: int | None) -> str:
    if replayed is not None:
        return f"walk {replayed} of at most {options['depth']:,} states"
    walks = f"{options['walks']:,} walks" if options["walks"] is not None else "walks"
    limit = f" for at most {options['time_s']:g} s" if options["time_s"] else ""
    return f"{walks} of at most {options['depth']:,} states{limit}"


class _PlainProgress:
    """One line on stderr every few seconds (none with ``quiet``); and the figures so far noted
    for a stopping signal to report (:mod:`.signals`), as ``check`` notes its search's."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.last = time.monotonic()

    def __call__(self, p: SimulationProgress) -> None:
        note_figures(Figures(p.distinct_states, p.steps + p.walks, p.longest, p.elapsed_s))
        now = time.monotonic()
        if not self.quiet and now - self.last >= PROGRESS_INTERVAL_S:
            self.last = now
            rate = p.steps / p.elapsed_s if p.elapsed_s > 0 else 0.0
            print(f"progress: walks {p.walks:,}  steps {p.steps:,}  distinct {p.distinct_states:,}  "
                  f"{rate:,.0f} steps/s  {p.elapsed_s:,.0f} s", file=sys.stderr, flush=True)


def _report(model, result: SimulationResult, trace_paths: dict, *, quiet: bool, replayed: int | None,
            expected: tuple[str, ...] = ()) -> None:
    out = sys.stdout
    label = action_labeller(model)
    if replayed is not None and not quiet:
        print(f"walk {replayed} of seed {result.seed}:", file=out)
        for i, (action, _) in enumerate(result.last_walk, start=1):
            print(f"  {i:>3}  {label(action)}", file=out)
    for cx in result.counterexamples:
        walk = result.walk_of[(cx.kind, cx.name)]
        kind = "expected" if cx.name in expected else "error"
        print(f"{kind}: {finding_text(cx)}; shortest trace found: {cx.length} states (walk {walk} of seed {result.seed})",
              file=out)
        if not quiet and replayed is None:
            for i, (action, _) in enumerate(cx.trace, start=1):
                print(f"  {i:>3}  {label(action)}", file=out)
        path = trace_paths.get(cx.name)
        print(f"  trace: {path}" if path else "  trace: not written (the reason is on stderr)", file=out)
    if not result.counterexamples:
        why = "the time limit came" if result.stopped_by == TIME_UP else "the walks were done"
        print(f"incomplete: no violation in {result.walks:,} walks ({why}); the states no walk reached are unchecked",
              file=out)
    rate = result.steps / result.elapsed_s if result.elapsed_s > 0 else 0.0
    print(f"{result.walks:,} walks, {result.steps:,} steps, {result.distinct_states:,} distinct states, "
          f"longest walk {result.depth:,} states, {result.elapsed_s:.2f} s ({rate:,.0f} steps/s)", file=out)
    if quiet:
        return
    print_coverage(result, out, ("taken", "first reached"), "never taken")
