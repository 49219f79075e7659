"""The ``kraftcheck`` command line.

Exit codes are TLC's: 0 all invariants hold and the search was exhaustive, 11 deadlock,
12 invariant violated, 3 stopped by a bound, 2 bad usage or bad input, 1 the model
itself failed; stopped by a signal, 128 + its number: 130 SIGINT (Ctrl-C), 143 SIGTERM,
129 SIGHUP (:mod:`.signals`).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import Any

from .bfs import NondeterministicModel, explore
from .config import CheckConfig, ConfigError, build_model, load_config
from .progress import progress_reporter
from .protocol import action_name, action_params
from .result import Result
from .signals import Figures, note_figures, report_interruption, stopping_on_signals
from kraftcheck.traces.itf import TraceFormatError
from kraftcheck.traces.text import visible

EXIT_BAD_INPUT = 2
EXIT_MODEL_FAILED = 1
DEFAULT_TRACE_DIR = "out"


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str):
        raise UsageError(f"{message} (see '{self.prog} --help')")


ENGINES = ("local", "spark")


def _engine(text: str) -> str:
    if text not in ENGINES:
        raise argparse.ArgumentTypeError(f"unknown engine {text!r} (known: {', '.join(ENGINES)})")
    return text


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kraftcheck", description="Model-check Kafka's KRaft controller, or any model.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    model_source = _Parser(add_help=False)
    model_source.add_argument("config", nargs="?", metavar="CONFIG.toml",
                              help="config file (default: the embedded spec/configs/default.toml)")
    model_source.add_argument("--model", metavar="MODULE:FACTORY",
                              help="check the model FACTORY(config) from MODULE (current directory or sys.path)")
    model_source.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                              help="override a [model] setting; VALUE is a TOML scalar or a bare word")

    check = commands.add_parser("check", parents=[model_source], help="explore every reachable state",
                                description="Explore every reachable state and check every invariant.")
    check.add_argument("--engine", type=_engine, default="local", help=f"search engine: {', '.join(ENGINES)} (default: local)")
    check.add_argument("--spark-master", metavar="URL",
                       help="Spark master for --engine spark: local[N], spark://HOST:PORT or sc://HOST:PORT "
                            "(default: $SPARK_MASTER, else local[*])")
    check.add_argument("--json", metavar="PATH", help="write a JSON summary to PATH")
    check.add_argument("--trace-dir", metavar="DIR", help=f"where traces go (default: ./{DEFAULT_TRACE_DIR})")
    check.add_argument("--max-states", type=_positive, metavar="N", help="stop after N distinct states")
    check.add_argument("--max-depth", type=_positive, metavar="N", help="explore paths of at most N states")
    check.add_argument("--no-deadlock", action="store_true", help="do not report states without successors")
    check.add_argument("--continue", dest="keep_going", action="store_true",
                       help="keep exploring after a violation; report the shortest trace of each")
    check.add_argument("--quiet", action="store_true", help="no progress, only the verdict")
    check.set_defaults(run=run_check)

    listing = commands.add_parser("list", parents=[model_source], help="show invariants, actions and mutants")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(run=run_list)

    from kraftcheck.traces.commands import register as register_trace_commands

    register_trace_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    with stopping_on_signals():
        try:
            return _run(argv)
        except KeyboardInterrupt as interruption:  # SIGINT, SIGTERM or SIGHUP: see .signals
            return report_interruption(interruption)


def _run(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_BAD_INPUT
        return args.run(args)
    except (UsageError, ConfigError, TraceFormatError) as e:
        _error(str(e))
        return EXIT_BAD_INPUT
    except NondeterministicModel as e:
        _error(str(e))
        return EXIT_MODEL_FAILED


def _error(message: str) -> None:
    print(f"kraftcheck: error: {visible(message)}", file=sys.stderr)  # control characters of any input escaped


def _model_failed(e: BaseException) -> int:
    where = traceback.extract_tb(e.__traceback__)[-1]
    _error(f"the model raised {type(e).__name__}: {e} ({Path(where.filename).name}:{where.lineno})")
    return EXIT_MODEL_FAILED


# ---------------------------------------------------------------- check


def run_check(args) -> int:
    config = load_config(args.config, args.model, args.overrides)
    model = build_model(config)
    options = _search_options(config, args)
    trace_dir = Path(args.trace_dir or DEFAULT_TRACE_DIR)
    out = sys.stdout
    if not args.quiet:
        print(f"checking {config.model} with {config.source or 'no config file'} ({args.engine} engine)", file=out)
    reporter = progress_reporter(args.quiet)
    try:
        result = run_engine(args, config, model, options, reporter)
    except (KeyboardInterrupt, NondeterministicModel, ConfigError):
        raise
    except Exception as e:  # the model's own code failed: say where, briefly
        return _model_failed(e)
    finally:
        if reporter is not None:
            reporter.close()
    # an interruption while the results are written reports the whole search
    note_figures(Figures(result.distinct_states, result.generated_states, result.depth, result.elapsed_s,
                         result.verdict))
    trace_paths = write_traces(model, config, result, trace_dir)
    report(model, result, trace_paths, quiet=args.quiet, out=out)
    if args.json:
        from kraftcheck.traces.itf import write_json_atomically

        try:
            write_json_atomically(args.json, json_summary(result, config, options, trace_paths))
        except OSError as e:
            raise ConfigError(f"cannot write the summary to {args.json}: {e.strerror}") from None
    return result.exit_code


def run_engine(args, config: CheckConfig, model, options: dict[str, Any], reporter) -> Result:
    """Run the chosen engine; both return the same Result."""
    if args.engine == "spark":
        from .spark import explore_spark

        return explore_spark(config, master=args.spark_master, progress=reporter, **options)
    return explore(model, progress=reporter, **options)


def _search_options(config: CheckConfig, args) -> dict[str, Any]:
    check = config.check
    return {
        "max_states": args.max_states if args.max_states is not None else check.get("max_states"),
        "max_depth": args.max_depth if args.max_depth is not None else check.get("max_depth"),
        "check_deadlock": not args.no_deadlock and check.get("deadlock", True),
        "stop_on_violation": not args.keep_going,
    }


def write_traces(model, config: CheckConfig, result: Result, trace_dir: Path) -> dict[str, str]:
    """Write every counterexample as ITF; return invariant name -> path."""
    from kraftcheck.traces.counterexample import write_counterexample
    from kraftcheck.traces.render import svg_beside

    meta = {"model": config.model, "config": config.to_json()}
    paths = {}
    for cx in result.counterexamples:
        path = trace_dir / f"{config.label}_{cx.name}.itf.json"
        try:
            write_counterexample(path, model, cx, meta)
        except OSError as e:
            raise ConfigError(f"cannot write trace to {path}: {e.strerror}") from None
        svg_beside(path, model)  # X.svg beside X.itf.json when graphviz's dot is installed
        paths[cx.name] = str(path)
    return paths


def json_summary(result: Result, config: CheckConfig, options: dict, trace_paths: dict[str, str]) -> dict:
    summary = result.summary()
    summary["violations"] = [
        {"invariant": cx.name, "kind": cx.kind, "length": cx.length, "trace": trace_paths.get(cx.name)}
        for cx in result.violations
    ]
    summary["deadlock"] = (
        {"length": result.deadlock.length, "trace": trace_paths.get(result.deadlock.name)}
        if result.deadlock
        else None
    )
    summary["config"] = {**config.to_json(), "search": options}
    return summary


def _describe_action(model, action) -> str:
    if action is None:
        return "Init"
    describe_action = getattr(model, "describe_action", None)
    if describe_action is not None:
        return describe_action(action)
    params = action_params(action)
    return action_name(action) + (f"({', '.join(map(str, params))})" if params else "")


def report(model, result: Result, trace_paths: dict[str, str], *, quiet: bool, out) -> None:
    from kraftcheck.traces.render import svg_path_for

    for cx in result.counterexamples:
        what = {
            "invariant": f"invariant {cx.name} is violated",
            "action": f"step property {cx.name} is violated",
            "deadlock": "deadlock reached",
        }[cx.kind]
        print(f"error: {what}; shortest trace: {cx.length} states", file=out)
        if not quiet:
            for i, (action, _) in enumerate(cx.trace, start=1):
                print(f"  {i:>3}  {_describe_action(model, action)}", file=out)
        print(f"  trace: {trace_paths[cx.name]}", file=out)
        picture = svg_path_for(trace_paths[cx.name])
        if picture.is_file():
            print(f"  picture: {picture}", file=out)
    if result.stopped_by:
        bound = {"max_states": "--max-states", "max_depth": "--max-depth"}[result.stopped_by]
        print(f"incomplete: the search stopped at the {bound} bound; states remain unexplored", file=out)
    elif result.verdict == "ok":
        print("ok: every invariant holds in every reachable state", file=out)
    print(
        f"{result.distinct_states:,} distinct states, {result.generated_states:,} generated, "
        f"depth {result.depth:,}, {result.elapsed_s:.2f} s ({result.states_per_s:,.0f} states/s)",
        file=out,
    )
    if quiet:
        return
    print(f"fingerprint collision probability (optimistic): {result.fingerprint_collision_probability:.1e}", file=out)
    if result.coverage:
        width = max(len(name) for name in result.coverage)
        print(f"coverage:\n  {'action':<{width}}  {'generated':>12}  {'distinct':>12}", file=out)
        for name, counts in result.coverage.items():
            print(f"  {name:<{width}}  {counts['generated']:>12,}  {counts['distinct']:>12,}", file=out)
    if result.never_enabled:
        print(f"never enabled: {', '.join(result.never_enabled)}", file=out)


# ---------------------------------------------------------------- list


def run_list(args) -> int:
    config = load_config(args.config, args.model, args.overrides)
    model = build_model(config)
    listing = {
        "invariants": list(model.invariants) + list(getattr(model, "action_invariants", None) or {}),
        "actions": list(getattr(model, "actions", None) or []),
        "mutants": [{"name": n, "description": d} for n, d in (getattr(model, "mutants", None) or {}).items()],
    }
    if args.json:
        print(json.dumps(listing, indent=1))
        return 0
    print("invariants:")
    for name in listing["invariants"]:
        print(f"  {name}")
    print("actions:")
    for name in listing["actions"]:
        print(f"  {name}")
    print("mutants:" if listing["mutants"] else "mutants: none")
    for m in listing["mutants"]:
        print(f"  {m['name']}: {m['description']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
