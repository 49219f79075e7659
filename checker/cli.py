"""The ``kraftcheck`` command line.

Exit codes are TLC's: 0 all invariants hold and the search was exhaustive, 11 deadlock,
12 invariant violated, 3 stopped by a bound, 2 bad usage or bad input, 1 the model
itself failed (or the search ran out of memory); stopped by a signal, 128 + its number: 130
SIGINT (Ctrl-C), 143 SIGTERM, 129 SIGHUP (:mod:`.signals`).  Once a search has ended, its
verdict decides the exit code: an output that cannot be written after it (a trace, its
picture, the summary, standard output) is one line on stderr, and the verdict is printed all
the same.  Every output is checked to be writable before the search starts.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import stat
import sys
import traceback
from pathlib import Path
from typing import Any

from .bfs import explore, initial_states
from .config import CheckConfig, ConfigError, ModelFailed, build_model, load_config
from .progress import progress_reporter
from .protocol import ModelProtocolError, action_name, action_params
from .result import DEADLOCK_NAME, Result
from .signals import Figures, note_figures, report_interruption, stopping_on_signals
from kraftcheck.traces.itf import TraceFormatError
from kraftcheck.traces.text import visible

EXIT_BAD_INPUT = 2
EXIT_MODEL_FAILED = 1
DEFAULT_TRACE_DIR = "out"
#: Longest error line, in characters: a message quoting what the user gave stays readable.
MAX_ERROR_LENGTH = 1000
#: Longest file name most file systems take, in bytes.
MAX_FILE_NAME = 255
#: What ``write_json_atomically`` adds to a file's name for its temporary file.
TEMPORARY_NAME_EXTRA = 10


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
    check.add_argument("--no-picture", action="store_true",
                       help="do not draw an SVG picture beside each trace")
    check.set_defaults(run=run_check)

    listing = commands.add_parser("list", parents=[model_source], help="show invariants, actions and mutants")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(run=run_list)

    from kraftcheck.traces.commands import register as register_trace_commands

    register_trace_commands(commands)

    from .spark_package import DEFAULT_OUT, DRIVER_SCRIPT, ZIP_NAME

    package = commands.add_parser(
        "spark-package", help="build what spark-submit ships to executors that lack kraftcheck",
        description=f"Write {ZIP_NAME} (kraftcheck, for spark-submit --py-files: executors put a .zip on "
                    f"their path, not a .whl) and {DRIVER_SCRIPT} (the driver script) into DIR.")
    package.add_argument("--out", metavar="DIR", default=DEFAULT_OUT, help=f"where they go (default: ./{DEFAULT_OUT})")
    package.set_defaults(run=run_spark_package)
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
            raise UsageError("a command is required: check, list, trace, graph or spark-package "
                             "(see 'kraftcheck --help')")
        return _run_command(args)
    except (UsageError, ConfigError, TraceFormatError) as e:
        _error(str(e))
        return EXIT_BAD_INPUT
    except ModelProtocolError as e:
        _error(str(e))
        return EXIT_MODEL_FAILED
    except ModelFailed as e:
        return _model_failed(e.__cause__)


def _run_command(args) -> int:
    """Run a subcommand with standard output guarded (:class:`_GuardedOutput`).

    ``sys.exit()`` called by the model's code is a failure of the model's, not kraftcheck's
    exit code; running out of memory is said as such.  Output that cannot be written is one
    line on stderr and exit code 2, except for ``check``, whose verdict decides its exit code;
    a reader that stops reading (``| head``) is no error."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # closed by the caller (`>&-`): what goes there goes nowhere
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
    output = _GuardedOutput(sys.stdout)
    sys.stdout = output
    try:
        code = args.run(args)
    except (SystemExit, MemoryError) as e:
        raise ModelFailed() from e
    finally:
        output.flush()
        sys.stdout = output.stream
    if output.error is not None and not isinstance(output.error, BrokenPipeError):
        _error(f"cannot write to standard output: {output.error.strerror or output.error}")
        if args.command != "check":
            return code or EXIT_BAD_INPUT
    return code


class _GuardedOutput:
    """Standard output that, once a write fails (``> /dev/full``, a closed pipe), keeps the
    error and drops what follows, so that a command still finishes its work (a check still
    writes its traces and its summary) and says so once at the end."""

    def __init__(self, stream):
        self.stream = stream
        self.error: OSError | None = None
        try:  # a path or a value the output's encoding cannot hold is shown escaped
            if stream.errors == "strict":
                stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass

    def write(self, text: str) -> int:
        if self.error is None:
            try:
                return self.stream.write(text)
            except OSError as e:
                self._failed(e)
        return len(text)

    def flush(self) -> None:
        if self.error is None:
            try:
                self.stream.flush()
            except OSError as e:
                self._failed(e)

    def _failed(self, error: OSError) -> None:
        self.error = error
        _discard_output(self.stream)

    def __getattr__(self, name: str):  # isatty, fileno, encoding ... of the stream itself
        return getattr(self.stream, name)


def _discard_output(stream=None) -> None:
    """Send what is left of standard output nowhere, so that exiting does not fail on it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (stream or sys.stdout).fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass




def _error(message: str) -> None:
    message = visible(message)  # control characters and bidirectional overrides of any input escaped
    if len(message) > MAX_ERROR_LENGTH:
        message = f"{message[:MAX_ERROR_LENGTH]}... ({len(message) - MAX_ERROR_LENGTH:,} more characters)"
    try:
        print(f"kraftcheck: error: {message}", file=sys.stderr, flush=True)
    except OSError:
        pass  # stderr itself is gone: the exit code still tells


def _model_failure(e: BaseException) -> str:
    """What the model's code did, with the file and line where it happened."""
    frames = traceback.extract_tb(e.__traceback__)
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    if isinstance(e, SystemExit):
        return f"the model called sys.exit({e.code!r}){where}"
    return f"the model raised {type(e).__name__}: {e}{where}"


def _model_failed(e: BaseException) -> int:
    if isinstance(e, MemoryError):
        states = getattr(e, "distinct_states", None)
        after = f" after {states:,} distinct states" if states else ""
        _error(f"out of memory{after}: bound the search with --max-states N or --max-depth N, or run it with "
               "--engine spark, whose visited states are spread over the executors")
    else:
        _error(_model_failure(e))
    return EXIT_MODEL_FAILED


# ---------------------------------------------------------------- check


def run_check(args) -> int:
    config = load_config(args.config, args.model, args.overrides)
    model = build_model(config)
    options = _search_options(config, args)
    trace_dir = Path(args.trace_dir or DEFAULT_TRACE_DIR)
    check_outputs(model, config, trace_dir, args.json)
    out = sys.stdout
    if not args.quiet:
        print(f"checking {config.model} with {config.source or 'no config file'} ({args.engine} engine)", file=out)
    # sys.stderr as it is now (os.devnull when closed from the start), not as it was at import
    reporter = progress_reporter(args.quiet, sys.stderr)
    try:
        result = run_engine(args, config, model, options, reporter)
    except (KeyboardInterrupt, ModelProtocolError, ConfigError):
        raise
    except (Exception, SystemExit) as e:  # the model's own code failed: say where, briefly
        return _model_failed(e)
    finally:
        if reporter is not None:
            reporter.close()
    # an interruption while the results are written reports the whole search
    note_figures(Figures(result.distinct_states, result.generated_states, result.depth, result.elapsed_s,
                         result.verdict))
    # The verdict stands from here on: what cannot be written is said on stderr, and the exit
    # code stays the verdict's.
    trace_paths = write_traces(model, config, result, trace_dir, picture=not args.no_picture)
    if args.json:
        write_summary(args.json, json_summary(result, config, options, trace_paths))
    report(model, result, trace_paths, quiet=args.quiet, out=out)
    return result.exit_code


def check_outputs(model, config: CheckConfig, trace_dir: Path, summary: str | None) -> None:
    """Bad input, before the search starts, when its results could not be written: the trace
    directory or the summary's path is not writable, or a trace's name would be too long."""
    problem = _unwritable(trace_dir, directory=True)
    if problem:
        raise ConfigError(f"cannot write traces to {trace_dir}: {problem}")
    if summary is not None:
        problem = _unwritable(Path(summary), directory=False)
        if problem:
            raise ConfigError(f"cannot write the summary to {summary}: {problem}")
    try:
        names = [*model.invariants, *(getattr(model, "action_invariants", None) or {}), DEADLOCK_NAME]
    except Exception:
        return  # the search says what is wrong with the model
    longest = max((trace_file_name(config, str(name)) for name in names), key=lambda n: len(os.fsencode(n)))
    if len(os.fsencode(longest)) + TEMPORARY_NAME_EXTRA > MAX_FILE_NAME:
        raise ConfigError(f"cannot write traces to {trace_dir}: the name {longest[:60]}... would be longer than "
                          f"{MAX_FILE_NAME - TEMPORARY_NAME_EXTRA} bytes (rename the config file)")


def _unwritable(path: Path, *, directory: bool) -> str | None:
    """Why ``path`` (a directory to write files in, or a file to write) cannot be written, or None.

    A missing directory is created when the first file is written: its nearest existing
    ancestor must then let it be.  A file is replaced in its directory (through a symbolic
    link, in the link's target's), except one that is not a regular file (``/dev/stdout``, a
    named pipe), which is written in place."""
    path = Path(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        return e.strerror or str(e)
    if mode is not None:
        if directory:
            return _can_create_in(path) if stat.S_ISDIR(mode) else os.strerror(errno.ENOTDIR)
        if stat.S_ISDIR(mode):
            return os.strerror(errno.EISDIR)
        if not stat.S_ISREG(mode):
            return None if os.access(path, os.W_OK) else os.strerror(errno.EACCES)
    if not directory:
        path = Path(os.path.realpath(path)).parent
    while True:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            if path == path.parent:
                return os.strerror(errno.ENOENT)
            path = path.parent
            continue
        except OSError as e:
            return e.strerror or str(e)
        return _can_create_in(path) if stat.S_ISDIR(mode) else os.strerror(errno.ENOTDIR)


def _can_create_in(directory: Path) -> str | None:
    """Why files cannot be created in an existing directory, or None."""
    if os.access(directory, os.W_OK | os.X_OK):
        return None
    try:
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            return os.strerror(errno.EROFS)
    except OSError:
        pass
    return os.strerror(errno.EACCES)


def run_engine(args, config: CheckConfig, model, options: dict[str, Any], reporter) -> Result:
    """Run the chosen engine; both return the same Result."""
    if args.engine == "spark":
        from .spark import explore_spark

        initial_states(model)  # the local engine checks them itself

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


def trace_file_name(config: CheckConfig, name: str) -> str:
    """``<config>[,<overrides>]_<name>.itf.json``: the run's label, so that runs of one config
    with other ``--set`` overrides (another mutant) keep their own traces."""
    safe_name = re.sub(r"[^\w.=,+-]", "-", name)
    return f"{config.run_label}_{safe_name}.itf.json"


def write_traces(model, config: CheckConfig, result: Result, trace_dir: Path, *, picture: bool = True) -> dict[str, str | None]:
    """Write every counterexample as ITF; return invariant name -> path (None: not written).

    A trace that cannot be written (the disk, or the model's ``describe`` raising) is one
    line on stderr; the others are written all the same."""
    from kraftcheck.traces.counterexample import write_counterexample
    from kraftcheck.traces.render import svg_beside

    meta = {"model": config.model, "config": config.to_json()}
    paths: dict[str, str | None] = {}
    for cx in result.counterexamples:
        path = trace_dir / trace_file_name(config, cx.name)
        paths[cx.name] = None
        try:
            write_counterexample(path, model, cx, meta)
        except KeyboardInterrupt:
            raise
        except OSError as e:
            _error(f"cannot write trace to {path}: {e.strerror or e}")
            continue
        except BaseException as e:  # describe(), describe_action(), or a value ITF cannot hold
            _error(f"cannot write the trace of {cx.name}: {_unwritable_value(e)}")
            continue
        paths[cx.name] = str(path)
        if picture:
            try:
                svg_beside(path, model)  # X.svg beside X.itf.json when graphviz's dot is installed
            except KeyboardInterrupt:
                raise
            except BaseException as e:  # svg_beside warns about what it catches; not sys.exit()
                _error(f"cannot draw {path}: {_model_failure(e)}")
    return paths


def _unwritable_value(e: BaseException) -> str:
    """Why a trace could not be written: a value ITF cannot hold, or the model's code failing."""
    from kraftcheck.traces import itf

    frames = traceback.extract_tb(e.__traceback__)
    if isinstance(e, TypeError) and frames and frames[-1].filename == itf.__file__:
        return f"a state or an action parameter holds a value ITF cannot hold ({e})"
    return _model_failure(e)


def write_summary(path: str, summary: dict) -> None:
    """Write the ``--json`` summary; one line on stderr when it cannot be."""
    from kraftcheck.traces.itf import write_json_atomically

    try:
        write_json_atomically(path, summary)
    except OSError as e:
        _error(f"cannot write the summary to {path}: {e.strerror or e}")
    except (TypeError, ValueError) as e:  # a config value JSON cannot hold
        _error(f"cannot write the summary to {path}: {e}")


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


def _plain_action_label(action) -> str:
    params = action_params(action)
    return action_name(action) + (f"({', '.join(map(str, params))})" if params else "")


def _action_labeller(model):
    """A function from action to its label: the model's ``describe_action``, and when that
    raises, one line on stderr and the plain label for the rest of the report."""
    describe_action = getattr(model, "describe_action", None)
    failed = describe_action is None

    def label(action) -> str:
        nonlocal failed
        if action is None:
            return "Init"
        if not failed:
            try:
                return str(describe_action(action))
            except KeyboardInterrupt:
                raise
            except BaseException as e:
                failed = True
                _error(f"cannot label the steps: {_model_failure(e)}")
        try:
            return _plain_action_label(action)
        except Exception:
            return repr(action)

    return label


def report(model, result: Result, trace_paths: dict[str, str | None], *, quiet: bool, out) -> None:
    from kraftcheck.traces.render import svg_path_for

    describe_action = _action_labeller(model)
    for cx in result.counterexamples:
        what = {
            "invariant": f"invariant {cx.name} is violated",
            "action": f"step property {cx.name} is violated",
            "deadlock": "deadlock reached",
        }[cx.kind]
        print(f"error: {what}; shortest trace: {cx.length} states", file=out)
        if not quiet:
            for i, (action, _) in enumerate(cx.trace, start=1):
                print(f"  {i:>3}  {describe_action(action)}", file=out)
        trace_path = trace_paths.get(cx.name)
        if trace_path is None:
            print("  trace: not written (the reason is on stderr)", file=out)
            continue
        print(f"  trace: {trace_path}", file=out)
        picture = svg_path_for(trace_path)
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


# ---------------------------------------------------------------- spark-package


def run_spark_package(args) -> int:
    from .spark_package import EXECUTOR_REQUIREMENTS, build

    built = build(args.out)
    print(f"wrote {built.archive}: kraftcheck {built.version}, {built.files} files (spark-submit --py-files)")
    print(f"wrote {built.driver_script}: the driver script (spark-submit's application)")
    print(f"the executors' Python needs {', '.join(EXECUTOR_REQUIREMENTS)} installed")
    return 0


# ---------------------------------------------------------------- list


def run_list(args) -> int:
    config = load_config(args.config, args.model, args.overrides)
    model = build_model(config)
    try:
        listing = {
            "invariants": [str(n) for n in [*model.invariants, *(getattr(model, "action_invariants", None) or {})]],
            "actions": [str(n) for n in getattr(model, "actions", None) or []],
            "mutants": [{"name": str(n), "description": str(d)}
                        for n, d in (getattr(model, "mutants", None) or {}).items()],
        }
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the model's members are its own code (properties, odd types)
        raise ModelFailed() from e
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
    # `python -m` puts the current directory first on sys.path, where a `graphviz.py` would
    # stand in for the installed module; the console script does not, nor should this.
    if sys.path and (sys.path[0] == "" or os.path.realpath(sys.path[0]) == os.path.realpath(os.getcwd())):
        del sys.path[0]
    sys.exit(main())
