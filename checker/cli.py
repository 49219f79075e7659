"""The ``kraftcheck`` command line.

Exit codes are TLC's: 0 all invariants hold and the search was exhaustive, 11 deadlock,
12 invariant violated, 3 stopped by a bound, 2 bad usage or bad input, 1 the model
itself failed (or the search ran out of memory); stopped by a signal, 128 + its number: 130
SIGINT (Ctrl-C), 143 SIGTERM, 129 SIGHUP (:mod:`.signals`).  Once a search has ended, its
verdict decides the exit code: an output that cannot be written after it (a trace, its
picture, the summary, standard output) is one line on stderr, and the verdict is printed all
the same.  Every output is checked to be writable before the search starts.  Several configs
in one ``check`` (or a suite, :mod:`.suite`) exit with the worst of their codes
(:data:`EXIT_SEVERITY`); 4 is an expected violation that did not occur: a suite's finding, or a
mutant that escapes every config (:mod:`.mutants`).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bfs import initial_states
from .config import CheckConfig, ConfigError, ModelFailed, build_model, load_config
from .progress import progress_reporter
from .protocol import ModelProtocolError, action_name, action_params
from .result import (DEADLOCK, DEADLOCK_NAME, EXIT_CODES, EXIT_STEP_PROPERTY, INCOMPLETE, OK, VIOLATION,
                     Result)
from .signals import Figures, note_figures, report_interruption, stopping_on_signals
from .suite import EXIT_EXPECTED_MISSING, SuiteEntry, check_expected_names, load_suite
from .workers import WorkerFailed, WorkerLost, available_cores, describe_failure, explore
from kraftcheck import __version__
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


def workers_count(text: str) -> int:
    """``--workers``: a positive count, or ``auto``, every core this process may run on."""
    if text == "auto":
        return available_cores()
    try:
        return _positive(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kraftcheck", description="Model-check Kafka's KRaft controller, or any model.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    parser.add_argument("--version", action="version", version=f"kraftcheck {__version__}")

    model_source = _Parser(add_help=False)
    model_source.add_argument("--model", metavar="MODULE:FACTORY",
                              help="check the model FACTORY(config) from MODULE (current directory or sys.path)")
    model_source.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                              help="override a [model] setting; VALUE is a TOML scalar or a bare word")

    check = commands.add_parser("check", parents=[model_source], help="explore every reachable state",
                                description="Explore every reachable state and check every invariant; "
                                            "with several configs, check each and print a table.")
    check.add_argument("configs", nargs="*", metavar="CONFIG.toml",
                       help="config files (default: the embedded spec/configs/default.toml)")
    check.add_argument("--engine", type=_engine, default="local", help=f"search engine: {', '.join(ENGINES)} (default: local)")
    check.add_argument("--spark-master", metavar="URL",
                       help="Spark master for --engine spark: local[N], spark://HOST:PORT or sc://HOST:PORT "
                            "(default: $SPARK_MASTER, else local[*])")
    check.add_argument("--workers", type=workers_count, metavar="N",
                       help="processes the local engine runs the model in: N, or auto for every core (default: auto); "
                            "the figures and traces are the same whatever N")
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
    check.add_argument("--junit", metavar="PATH", help="write a JUnit XML report to PATH: a test case per config")
    check.add_argument("--no-symmetry", action="store_true",
                       help="ignore the model's canonical(): no symmetry reduction (local engine)")
    check.add_argument("--suite", metavar="SUITE.toml",
                       help="check the configs a suite file lists, each expecting the violations it names "
                            "(spec/suite.toml: every shipped config)")
    check.set_defaults(run=run_check)

    from .mutants import register as register_mutants

    register_mutants(commands, model_source)

    from kraftcheck.proofs.run import register as register_prove

    register_prove(commands, _positive)

    from kraftcheck.conform.run import register as register_conform

    register_conform(commands)

    from kraftcheck.cluster.run import register as register_cluster

    register_cluster(commands)

    listing = commands.add_parser("list", parents=[model_source], help="show invariants, actions and mutants")
    listing.add_argument("config", nargs="?", metavar="CONFIG.toml",
                         help="config file (default: the embedded spec/configs/default.toml)")
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
            raise UsageError("a command is required: check, mutants, prove, conform, cluster, list, trace, graph or spark-package "
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
    """What the model's code did, with the file and line where it happened (in a worker of the
    search too, which said so itself); or that a worker was lost."""
    if isinstance(e, (WorkerFailed, WorkerLost)):
        return str(e)
    return describe_failure(e)


def _search_failure(e: BaseException) -> str:
    """What stopped a search: the model's own code failing, or memory running out."""
    if isinstance(e, MemoryError):
        states = getattr(e, "distinct_states", None)
        after = f" after {states:,} distinct states" if states else ""
        return (f"out of memory{after}: bound the search with --max-states N or --max-depth N, or run it with "
                "--engine spark, whose visited states are spread over the executors")
    return _model_failure(e)


def _model_failed(e: BaseException) -> int:
    _error(_search_failure(e))
    return EXIT_MODEL_FAILED


# ---------------------------------------------------------------- check


#: Exit codes of configs checked in one run, the worst first: a model whose code failed (its
#: config was not checked at all), a violated invariant, a violated step property, a deadlock,
#: an expected violation that did not occur (a suite's finding), a deadlock, a search stopped by
#: a bound, every invariant holding (or only expected violations).  The run exits with the worst.
EXIT_SEVERITY = (EXIT_MODEL_FAILED, EXIT_CODES[VIOLATION], EXIT_STEP_PROPERTY, EXIT_EXPECTED_MISSING,
                 EXIT_CODES[DEADLOCK], EXIT_CODES[INCOMPLETE], EXIT_CODES[OK])
#: The verdict of a config whose model's code failed, in the table and the summary.
ERROR_VERDICT = "error"
#: A suite's config whose expected violation was found, and one whose expected violation was not.
EXPECTED_VERDICT, MISSING_VERDICT = "expected", "missing"


def worst_exit_code(codes) -> int:
    """The first of :data:`EXIT_SEVERITY` among ``codes`` (0 for none)."""
    present = set(codes)
    return next((code for code in EXIT_SEVERITY if code in present), 0)


@dataclass
class ConfigRun:
    """One config checked: its search's result, or what stopped the model's code."""

    config: CheckConfig
    model: Any
    options: dict[str, Any]
    result: Result | None = None
    trace_paths: dict[str, str | None] = field(default_factory=dict)
    #: the model's own code failed (building it or during the search): what and where
    error: str | None = None
    #: the properties whose violation is this config's expected outcome (a suite's ``expect``)
    expect: tuple[str, ...] = ()

    @property
    def expectation_met(self) -> bool | None:
        """None when nothing is expected; else whether a violation was found and each violation
        found is one expected."""
        if not self.expect or self.result is None:
            return None
        found = {cx.name for cx in self.result.counterexamples}
        return bool(found) and found <= set(self.expect)

    @property
    def exit_code(self) -> int:
        if self.result is None:
            return EXIT_MODEL_FAILED
        if self.expectation_met:
            return 0
        if self.expect and self.result.verdict == OK:
            return EXIT_EXPECTED_MISSING
        return self.result.exit_code

    @property
    def verdict(self) -> str:
        return ERROR_VERDICT if self.result is None else self.result.verdict

    @property
    def outcome(self) -> str:
        """The verdict as a suite's table says it: ``expected`` for an expected violation found,
        ``missing`` for one that did not occur."""
        if self.expectation_met:
            return EXPECTED_VERDICT
        if self.expect and self.exit_code == EXIT_EXPECTED_MISSING:
            return MISSING_VERDICT
        return self.verdict


def run_check(args) -> int:
    if args.workers is not None and args.engine == "spark":
        raise UsageError("--workers sets the local engine's processes: the Spark engine's are its executors "
                         "(--spark-master local[N])")
    if args.no_symmetry and args.engine == "spark":
        raise UsageError("--no-symmetry works with the local engine only: the Spark engine's workers build the "
                         "model from the config")
    if args.suite is not None:
        if args.configs:
            raise UsageError("give config files or --suite, not both")
        return run_check_suite(args, load_suite(args.suite))
    if len(args.configs) > 1:
        return run_check_suite(args, [SuiteEntry(path) for path in args.configs])
    config = load_config(args.configs[0] if args.configs else None, args.model, args.overrides)
    model = _without_symmetry(build_model(config), args.no_symmetry)
    options = _search_options(config, args)
    trace_dir = Path(args.trace_dir or DEFAULT_TRACE_DIR)
    check_outputs(model, config, trace_dir, args.json, args.junit)
    run = ConfigRun(config, model, options)
    if not _check_config(args, run, trace_dir):
        if args.junit:
            _write_junit(args.junit, [run])
        return EXIT_MODEL_FAILED
    if args.json:
        write_summary(args.json, json_summary(run.result, config, options, run.trace_paths))
    if args.junit:
        _write_junit(args.junit, [run])
    report(model, run.result, run.trace_paths, quiet=args.quiet, out=sys.stdout)
    return run.result.exit_code


def run_check_suite(args, entries: list[SuiteEntry]) -> int:
    """Check several configs one after the other: each reported as a single config is, then one
    table; one summary with an entry per config; the worst exit code (:data:`EXIT_SEVERITY`).

    Every config is read, and its model built, before the first search starts: a config that
    cannot be used is bad input before any time is spent.  A model whose code fails is that
    config's verdict (``error``), and the others are checked all the same."""
    runs: list[ConfigRun] = []
    for entry in entries:
        config = load_config(entry.path, args.model, args.overrides)
        run = ConfigRun(config, None, _search_options(config, args), expect=entry.expect)
        try:
            run.model = _without_symmetry(build_named_model(config), args.no_symmetry)
        except ModelFailed as e:
            run.error = _model_failure(e.__cause__)
        else:
            check_expected_names(entry, run.model, config.source)
        runs.append(run)
    labels: dict[str, str] = {}
    for run in runs:
        other = labels.setdefault(run.config.run_label, run.config.source)
        if other != run.config.source:
            raise ConfigError(f"{other} and {run.config.source} would write the same trace files "
                              f"({run.config.run_label}_*): give each config a name of its own")
    trace_dir = Path(args.trace_dir or DEFAULT_TRACE_DIR)
    for run in runs:
        if run.model is not None:
            check_outputs(run.model, run.config, trace_dir, args.json, args.junit)
    out = sys.stdout
    for run in runs:
        if run.error is not None:
            print(f"checking {run.config.model} with {run.config.source}: not checked", file=out)
            _error(f"{run.config.source}: {run.error}")
        elif _check_config(args, run, trace_dir, always_name=True):
            report(run.model, run.result, run.trace_paths, quiet=args.quiet, out=out)
        print(file=out)
    print_runs_table(runs, out)
    if len({run.config.model for run in runs}) == 1 and any(getattr(run.model, "actions", None) for run in runs):
        print(actions_never_enabled_line(runs), file=out)
    if args.json:
        write_summary(args.json, suite_summary(runs))
    if args.junit:
        _write_junit(args.junit, runs)
    return worst_exit_code(run.exit_code for run in runs)


def build_named_model(config: CheckConfig):
    """:func:`build_model`, with a setting the model rejects said with the config it is in."""
    try:
        return build_model(config)
    except ConfigError as e:
        if config.source and config.source not in str(e):
            raise ConfigError(f"{config.source}: {e}") from None
        raise


def _check_config(args, run: ConfigRun, trace_dir: Path, *, always_name: bool = False) -> bool:
    """Search ``run``'s config and write its traces; False when the model's code failed (the
    error is on stderr and in ``run.error``)."""
    config, out = run.config, sys.stdout
    if not args.quiet or always_name:
        print(f"checking {config.model} with {config.source or 'no config file'} ({args.engine} engine)", file=out)
    # sys.stderr as it is now (os.devnull when closed from the start), not as it was at import
    reporter = progress_reporter(args.quiet, sys.stderr)
    try:
        result = run_engine(args, config, run.model, run.options, reporter)
    except (KeyboardInterrupt, ModelProtocolError, ConfigError):
        raise
    except (Exception, SystemExit) as e:  # the model's own code failed: say where, briefly
        run.error = _search_failure(e)
        _error(f"{config.source}: {run.error}" if always_name else run.error)
        return False
    finally:
        if reporter is not None:
            reporter.close()
    # an interruption while the results are written reports the whole search
    note_figures(Figures(result.distinct_states, result.generated_states, result.depth, result.elapsed_s,
                         result.verdict))
    # The verdict stands from here on: what cannot be written is said on stderr, and the exit
    # code stays the verdict's.
    run.result = result
    run.trace_paths = write_traces(run.model, config, result, trace_dir, picture=not args.no_picture)
    return True


class _WithoutSymmetry:
    """A model with its ``canonical`` hidden (``--no-symmetry``): every other member is the model's."""

    def __init__(self, model):
        self._model = model

    def __getattr__(self, name: str):
        if name == "canonical":
            raise AttributeError(name)
        return getattr(self._model, name)


def _without_symmetry(model, no_symmetry: bool):
    return _WithoutSymmetry(model) if no_symmetry and model is not None else model


def _first_finding(run: ConfigRun) -> str:
    if run.result is None:
        return "the model failed (stderr says where)"
    found = run.result.counterexamples
    if found:
        return f"{found[0].name} ({found[0].length} states)"
    return f"none; expected {', '.join(run.expect)}" if run.expect else "-"


def print_runs_table(runs: list[ConfigRun], out) -> None:
    """One line per config: verdict, distinct states, depth, time and the first violation."""
    rows = [("config", "verdict", "states", "depth", "time", "first violation")]
    for run in runs:
        r = run.result
        figures = ("-", "-", "-") if r is None else (f"{r.distinct_states:,}", f"{r.depth:,}", f"{r.elapsed_s:.2f} s")
        rows.append((run.config.source, run.outcome, *figures, _first_finding(run)))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print(f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}  {row[3]:>{widths[3]}}  "
              f"{row[4]:>{widths[4]}}  {row[5]}", file=out)


def never_enabled_in_any(runs: list[ConfigRun]) -> list[str]:
    """The actions no config's search took, in the order the first config's model declares them
    (a search stopped at a violation counts with what it took before it stopped)."""
    checked = [run.result for run in runs if run.result is not None]
    if not checked:
        return []
    return [a for a in checked[0].never_enabled if all(a in r.never_enabled for r in checked[1:])]


def actions_never_enabled_line(runs: list[ConfigRun]) -> str:
    missing = never_enabled_in_any(runs)
    if missing:
        return f"never enabled in any config: {', '.join(missing)}"
    return "every action was taken in some config"


def suite_summary(runs: list[ConfigRun]) -> dict:
    """The ``--json`` summary of several configs: the worst verdict and exit code, and one entry
    per config, each the summary a single config's run writes, with its exit code."""
    entries = []
    for run in runs:
        if run.result is None:
            entry = {"verdict": ERROR_VERDICT, "error": run.error,
                     "config": {**run.config.to_json(), "search": run.options}}
        else:
            entry = json_summary(run.result, run.config, run.options, run.trace_paths)
        if run.expect:
            entry["expect"] = list(run.expect)
            entry["expectation_met"] = bool(run.expectation_met)
        entry["exit_code"] = run.exit_code
        entries.append(entry)
    code = worst_exit_code(run.exit_code for run in runs)
    worst = next(run for run in runs if run.exit_code == code)
    return {"verdict": OK if code == 0 else worst.outcome, "exit_code": code,
            "never_enabled_in_any": never_enabled_in_any(runs), "configs": entries}


def _write_junit(path: str, runs: list[ConfigRun]) -> None:
    from .junit import write_junit

    try:
        write_junit(path, "kraftcheck check", [_junit_case(run) for run in runs])
    except OSError as e:
        _error(f"cannot write the JUnit report to {path}: {e.strerror or e}")


def _junit_case(run: ConfigRun):
    """A config's test case: a violation or a deadlock fails it (each counterexample's trace as
    ``trace show`` prints it), a search stopped by a bound too; the model's code failing is an error."""
    from .junit import Case, Outcome

    case = Case(run.config.source or run.config.label, "kraftcheck.check", 0.0)
    if run.result is None:
        case.error = Outcome(run.error or "the model failed", "model failed")
        return case
    result = run.result
    case.time_s = result.elapsed_s
    case.output = (f"{result.distinct_states:,} distinct states, {result.generated_states:,} generated, "
                   f"depth {result.depth:,}, {result.elapsed_s:.2f} s\n")
    found = result.counterexamples
    if run.expectation_met:
        case.output += "".join(f"expected: {finding_text(cx)}; shortest trace: {cx.length} states\n" for cx in found)
    elif run.outcome == MISSING_VERDICT:
        case.failure = Outcome(f"expected a violation of {', '.join(run.expect)}; every invariant holds",
                               "ExpectedViolationMissing")
    elif found:
        texts = [trace_text(run.trace_paths.get(cx.name)) for cx in found]
        case.failure = Outcome(
            "; ".join(f"{finding_text(cx)}; shortest trace: {cx.length} states" for cx in found),
            found[0].name, "\n".join(texts))
    elif result.stopped_by:
        bound = {"max_states": "--max-states", "max_depth": "--max-depth"}[result.stopped_by]
        case.failure = Outcome(f"incomplete: the search stopped at the {bound} bound; states remain unexplored",
                               "incomplete")
    return case


def finding_text(cx) -> str:
    """What a counterexample shows, as the report says it."""
    return {
        "invariant": f"invariant {cx.name} is violated",
        "action": f"step property {cx.name} is violated",
        "deadlock": "deadlock reached",
    }[cx.kind]


def trace_text(path: str | None) -> str:
    """A written trace as ``trace show`` prints it, without colours."""
    import io

    from kraftcheck.traces.show import show_trace
    from kraftcheck.traces.trace import load_trace

    if path is None:
        return "(the trace was not written; the reason is on stderr)"
    try:
        trace = load_trace(path)
    except (OSError, TraceFormatError) as e:
        return f"(the trace {path} cannot be read back: {e})"
    text = io.StringIO()
    show_trace(trace, file=text, color=False)
    return text.getvalue()


def check_outputs(model, config: CheckConfig, trace_dir: Path, summary: str | None, junit: str | None = None) -> None:
    """Bad input, before the search starts, when its results could not be written: the trace
    directory, the summary's or the JUnit report's path is not writable, or a trace's name would
    be too long."""
    problem = _unwritable(trace_dir, directory=True)
    if problem:
        raise ConfigError(f"cannot write traces to {trace_dir}: {problem}")
    for path, what in ((summary, "the summary"), (junit, "the JUnit report")):
        if path is not None:
            problem = _unwritable(Path(path), directory=False)
            if problem:
                raise ConfigError(f"cannot write {what} to {path}: {problem}")
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

        options = {key: value for key, value in options.items() if key != "workers"}
        return explore_spark(config, master=args.spark_master, progress=reporter, **options)
    return explore(model, progress=reporter, **options)


def _search_options(config: CheckConfig, args) -> dict[str, Any]:
    check = config.check
    return {
        "max_states": args.max_states if args.max_states is not None else check.get("max_states"),
        "max_depth": args.max_depth if args.max_depth is not None else check.get("max_depth"),
        "check_deadlock": not args.no_deadlock and check.get("deadlock", True),
        "stop_on_violation": not (args.keep_going or check.get("continue", False)),
        "workers": args.workers if args.workers is not None else available_cores(),
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
        print(f"error: {finding_text(cx)}; shortest trace: {cx.length} states", file=out)
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
