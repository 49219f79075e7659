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
import os
import sys

from .arguments import ENGINES, duration, engine, positive, seed, workers_count
from .check import check_single
from .listing import run_list
from .config import ConfigError, ModelFailed
from .errors import EXIT_BAD_INPUT, EXIT_MODEL_FAILED, UsageError, error, model_failed
from .extras import MissingExtra, require
from .protocol import ModelProtocolError
from .outputs import DEFAULT_TRACE_DIR
from .signals import report_interruption, stopping_on_signals
from .suite import SuiteEntry, load_suite
from .spark_package import run_spark_package
from .suite_run import check_several
from kraftcheck import __version__
from kraftcheck.traces.itf import TraceFormatError

class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def run_check(args) -> int:
    """``check``: options that do not go together are a usage error; then one config, or several."""
    if args.workers is not None and args.engine == "spark":
        raise UsageError("--workers sets the local engine's processes: the Spark engine's are its executors "
                         "(--spark-master local[N])")
    if args.no_symmetry and args.engine == "spark":
        raise UsageError("--no-symmetry works with the local engine only: the Spark engine's workers build the "
                         "model from the config")
    if args.jobs is not None and args.jobs > 1 and args.engine == "spark":
        raise UsageError("-j checks configs side by side on this machine: the Spark engine spreads each search over "
                         "its executors, one config at a time")
    if args.engine == "spark":
        require("spark", "--engine spark")
    if args.suite is not None:
        if args.configs:
            raise UsageError("give config files or --suite, not both")
        return check_several(args, load_suite(args.suite))
    if len(args.configs) > 1:
        return check_several(args, [SuiteEntry(path) for path in args.configs])
    return check_single(args)


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
    check.add_argument("--engine", type=engine, default="local", help=f"search engine: {', '.join(ENGINES)} (default: local)")
    check.add_argument("--spark-master", metavar="URL",
                       help="Spark master for --engine spark: local[N], spark://HOST:PORT or sc://HOST:PORT "
                            "(default: $SPARK_MASTER, else local[*])")
    check.add_argument("--workers", type=workers_count, metavar="N",
                       help="processes the local engine runs the model in: N, or auto for every core (default: auto); "
                            "the figures and traces are the same whatever N")
    check.add_argument("-j", "--jobs", type=workers_count, metavar="N",
                       help="with several configs, check N of them at a time: N, or auto for every core (default: auto); "
                            "the output is the same whatever N")
    check.add_argument("--verbose", action="store_true",
                       help="with several configs, print each one's whole report (coverage, steps of each trace), "
                            "not one line")
    check.add_argument("--json", metavar="PATH", help="write a JSON summary to PATH")
    check.add_argument("--trace-dir", metavar="DIR", help=f"where traces go (default: ./{DEFAULT_TRACE_DIR})")
    check.add_argument("--max-states", type=positive, metavar="N", help="stop after N distinct states")
    check.add_argument("--max-depth", type=positive, metavar="N", help="explore paths of at most N states")
    check.add_argument("--no-deadlock", action="store_true", help="do not report states without successors")
    check.add_argument("--no-liveness", action="store_true",
                       help="skip the liveness phase: check no temporal property the model declares")
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

    from .simulate import register as register_simulate

    register_simulate(commands, model_source, positive=positive, seed=seed, duration=duration, engine=engine,
                      engines=ENGINES)

    from .mutants import register as register_mutants

    register_mutants(commands, model_source)

    from kraftcheck.proofs.run import register as register_prove

    register_prove(commands, positive)

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
            raise UsageError("a command is required: check, simulate, mutants, prove, conform, cluster, list, trace, graph or spark-package "
                             "(see 'kraftcheck --help')")
        return _run_command(args)
    except (UsageError, ConfigError, TraceFormatError, MissingExtra) as e:
        error(str(e))
        return EXIT_BAD_INPUT
    except ModelProtocolError as e:
        error(str(e))
        return EXIT_MODEL_FAILED
    except ModelFailed as e:
        return model_failed(e.__cause__)


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
        error(f"cannot write to standard output: {output.error.strerror or output.error}")
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


if __name__ == "__main__":
    # `python -m` puts the current directory first on sys.path, where a `graphviz.py` would
    # stand in for the installed module; the console script does not, nor should this.
    try:
        here = os.path.realpath(os.getcwd())
    except FileNotFoundError:  # deleted under the command: said once the command runs
        here = None
    if sys.path and (sys.path[0] == "" or os.path.realpath(sys.path[0]) == here):
        del sys.path[0]
    sys.exit(main())
