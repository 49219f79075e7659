"""``kraftcheck check`` of one config: the search on the chosen engine, its traces, its report.

Several configs (a suite) are :mod:`.suite_run`'s; both share :class:`ConfigRun`."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bfs import initial_states
from .config import MUTANT_SETTING, CheckConfig, ConfigError, build_model, load_config
from .errors import EXIT_MODEL_FAILED, error, model_failure, search_failure
from .outputs import DEFAULT_TRACE_DIR, check_outputs, json_summary, refuse_replacing, write_summary, write_traces
from .progress import progress_reporter
from .protocol import ModelProtocolError, action_name, action_params
from .result import DEADLOCK, EXIT_CODES, EXIT_STEP_PROPERTY, INCOMPLETE, OK, VIOLATION, Result
from .signals import Figures, note_figures
from .suite import EXIT_EXPECTED_MISSING
from .workers import available_cores, explore
from kraftcheck.traces.itf import TraceFormatError
from kraftcheck.traces.text import visible

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


def check_single(args) -> int:
    """Check one config (or the embedded default): exit code as :mod:`.cli` says."""
    config = load_config(args.configs[0] if args.configs else None, args.model, args.overrides)
    model = without_symmetry(build_model(config), args.no_symmetry)
    options = search_options(config, args)
    trace_dir = Path(args.trace_dir or DEFAULT_TRACE_DIR)
    check_outputs(model, config, trace_dir, args.json, args.junit)
    refuse_replacing([config.source], [("--json", args.json), ("--junit", args.junit)], [(config, model)], trace_dir)
    run = ConfigRun(config, model, options)
    if not check_config(args, run, trace_dir):
        if args.junit:
            write_junit_report(args.junit, [run])
        return EXIT_MODEL_FAILED
    if args.json:
        write_summary(args.json, json_summary(run.result, config, options, run.trace_paths))
    if args.junit:
        write_junit_report(args.junit, [run])
    report(model, run.result, run.trace_paths, quiet=args.quiet, out=sys.stdout)
    note_unchanged_mutant(args, run)
    return run.result.exit_code


def note_unchanged_mutant(args, run: ConfigRun) -> None:
    """Say so when the mutant a config switches on changed nothing there: the search without it
    finds the same states, transitions and coverage.  Otherwise an ``ok`` would read as the
    mutant escaping the config, when the config never reaches the mutant's code at all."""
    mutant = run.config.settings.get(MUTANT_SETTING)
    result = run.result
    if args.engine != "local" or mutant in (None, "none") or result.verdict != OK or result.stopped_by:
        return
    unmutated = CheckConfig(run.config.model, {**run.config.settings, MUTANT_SETTING: "none"}, dict(run.config.check),
                            run.config.source)
    try:
        baseline = explore(without_symmetry(build_model(unmutated), args.no_symmetry),
                           **{**run.options, "workers": run.options.get("workers", 1)})
    except Exception:  # a model without an unmutated "none": nothing to compare with
        return
    if (baseline.distinct_states, baseline.generated_states, baseline.coverage) == (
            result.distinct_states, result.generated_states, result.coverage):
        print(f"kraftcheck: note: mutant {mutant} changed nothing at {visible(run.config.label)}: the search without it "
              f"finds the same {result.distinct_states:,} states and {result.generated_states:,} transitions "
              "(`kraftcheck list` names the config that catches it)", file=sys.stderr)


def build_named_model(config: CheckConfig):
    """:func:`build_model`, with a setting the model rejects said with the config it is in."""
    try:
        return build_model(config)
    except ConfigError as e:
        if config.source and config.source not in str(e):
            raise ConfigError(f"{config.source}: {e}") from None
        raise


def check_config(args, run: ConfigRun, trace_dir: Path, *, always_name: bool = False, announce: bool | None = None,
                 progress: bool | None = None) -> bool:
    """Search ``run``'s config and write its traces; False when the model's code failed (the
    error is on stderr and in ``run.error``).  ``announce``: print which config is checked
    first (by default unless ``--quiet``); ``progress``: show the search's progress on stderr
    (by default unless ``--quiet``)."""
    config, out = run.config, sys.stdout
    properties = liveness_properties(args, run.model)
    if announce if announce is not None else not args.quiet:
        print(f"checking {config.model} with {config.source or 'no config file'} ({args.engine} engine)", file=out)
    # sys.stderr as it is now (os.devnull when closed from the start), not as it was at import
    reporter = progress_reporter(not progress if progress is not None else args.quiet, sys.stderr)
    try:
        result = run_engine(args, config, run.model, run.options, reporter)
        if properties:
            check_temporal(run.model, result, properties, progress=reporter,
                           after_violations=run.options.get("stop_on_violation") is False)
    except (KeyboardInterrupt, ModelProtocolError, ConfigError):
        raise
    except (Exception, SystemExit) as e:  # the model's own code failed: say where, briefly
        run.error = search_failure(e)
        error(f"{config.source}: {run.error}" if always_name else run.error)
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


def liveness_properties(args, model) -> dict:
    """The temporal properties the liveness phase will check (none with ``--no-liveness``), or a
    one-line refusal (ConfigError, before any search) where the phase cannot run soundly."""
    from .temporal import declared_fairness, declared_properties

    if getattr(args, "no_liveness", False):
        return {}
    try:
        properties = declared_properties(model)
        declared_fairness(model)
    except TypeError as e:
        raise ModelProtocolError(str(e)) from None
    if not properties:
        return {}
    if getattr(args, "engine", "local") == "spark":
        raise ConfigError("the Spark engine checks invariants only: the liveness phase needs the whole state graph "
                          "in one process; use --engine local, or --no-liveness")
    if getattr(model, "canonical", None) is not None:
        from .liveness import SYMMETRY_REFUSAL

        raise ConfigError(SYMMETRY_REFUSAL)
    return properties


def check_temporal(model, result: Result, properties: dict, progress=None, after_violations: bool = False) -> None:
    """The liveness phase, after a search that found every invariant holding: a lasso for each
    temporal property that fails, as a counterexample of kind ``temporal``.  With
    ``after_violations`` (``--continue``, whose search explores every state whatever it finds),
    also after a search whose only verdict is its violations.  After any other verdict the
    phase is skipped and the result says so."""
    from .liveness import check_liveness, lasso_trace
    from .result import VIOLATION, Counterexample
    from .temporal import declared_fairness

    complete = result.deadlock is None and result.stopped_by is None
    if result.verdict != OK and not (after_violations and result.verdict == VIOLATION and complete):
        result.liveness = {"checked": False, "properties": list(properties),
                           "why": f"the search's verdict is {result.verdict}"}
        return
    live = check_liveness(model, properties, declared_fairness(model), progress=graph_progress(progress))
    for name, (chain, loop) in live.lassos.items():
        result.violations.append(Counterexample("temporal", name, lasso_trace(model, chain, loop), loop))
    result.liveness = {"checked": True, "properties": {name: ("violated" if name in live.lassos else "holds")
                                                        for name in properties},
                       "graph_states": live.graph_states, "graph_edges": live.graph_edges,
                       "memory_bytes": live.memory_bytes, "elapsed_s": round(live.elapsed_s, 3)}


def graph_progress(progress):
    """The liveness graph's growth as the search's progress shows it (no depth: 0), or None."""
    if progress is None:
        return None
    import time

    from .bfs import Progress

    started = time.perf_counter()
    return lambda states, edges, queued: progress(Progress(states, edges, 0, queued, time.perf_counter() - started))


class WithoutSymmetry:
    """A model with its ``canonical`` hidden (``--no-symmetry``): every other member is the model's."""

    def __init__(self, model):
        self._model = model

    def __getattr__(self, name: str):
        if name == "canonical":
            raise AttributeError(name)
        return getattr(self._model, name)


def without_symmetry(model, no_symmetry: bool):
    return WithoutSymmetry(model) if no_symmetry and model is not None else model


def finding_text(cx) -> str:
    """What a counterexample shows, as the report says it."""
    return {
        "invariant": f"invariant {cx.name} is violated",
        "action": f"step property {cx.name} is violated",
        "deadlock": "deadlock reached",
        "temporal": f"temporal property {cx.name} is violated",
    }[cx.kind]


def lasso_text(cx) -> str:
    """Where a lasso's loop goes, counted in states from 1 as its steps are printed."""
    if cx.loop == cx.length - 1:
        return f"state {cx.loop + 1} stutters for ever"
    return f"from state {cx.loop + 1}, the steps to state {cx.length} (state {cx.loop + 1} again) repeat for ever"


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


def run_engine(args, config: CheckConfig, model, options: dict[str, Any], reporter) -> Result:
    """Run the chosen engine; both return the same Result."""
    if args.engine == "spark":
        from .spark import explore_spark

        initial_states(model)  # the local engine checks them itself

        options = {key: value for key, value in options.items() if key != "workers"}
        return explore_spark(config, master=args.spark_master, progress=reporter, **options)
    return explore(model, progress=reporter, **options)


def search_options(config: CheckConfig, args, *, workers: int | None = None) -> dict[str, Any]:
    """The search's bounds and options: the command line's, else the config's ``[check]``."""
    check = config.check
    return {
        "max_states": args.max_states if args.max_states is not None else check.get("max_states"),
        "max_depth": args.max_depth if args.max_depth is not None else check.get("max_depth"),
        "check_deadlock": not args.no_deadlock and check.get("deadlock", True),
        "stop_on_violation": not (args.keep_going or check.get("continue", False)),
        "workers": workers or (args.workers if args.workers is not None else available_cores()),
    }


def _plain_action_label(action) -> str:
    params = action_params(action)
    return action_name(action) + (f"({', '.join(map(str, params))})" if params else "")


def action_labeller(model):
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
                error(f"cannot label the steps: {model_failure(e)}")
        try:
            return _plain_action_label(action)
        except Exception:
            return repr(action)

    return label


def report(model, result: Result, trace_paths: dict[str, str | None], *, quiet: bool, out,
           expected: tuple[str, ...] = ()) -> None:
    """A search's verdict, figures and traces; with ``quiet``, without the steps and coverage.
    A violation of a property in ``expected`` (a suite's finding) is said as expected, not as an error."""
    from kraftcheck.traces.render import svg_path_for

    describe_action = action_labeller(model)
    for cx in result.counterexamples:
        kind = "expected" if cx.name in expected else "error"
        if cx.loop is None:
            print(f"{kind}: {finding_text(cx)}; shortest trace: {cx.length} states", file=out)
        else:
            print(f"{kind}: {finding_text(cx)}; lasso: {cx.length} state{'s' * (cx.length != 1)}, {lasso_text(cx)}",
                  file=out)
        if not quiet:
            for i, (action, _) in enumerate(cx.trace, start=1):
                mark = "  <- loop" if cx.loop is not None and i == cx.loop + 1 else ""
                print(f"  {i:>3}  {describe_action(action)}{mark}", file=out)
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
    live = result.liveness
    if live is not None and live["checked"]:
        held = [name for name, verdict in live["properties"].items() if verdict == "holds"]
        if held:
            print(f"ok: under the model's fairness, {', '.join(held)} hold{'s' * (len(held) == 1)} on every behaviour",
                  file=out)
        print(f"liveness: {live['graph_states']:,} states, {live['graph_edges']:,} edges, {live['elapsed_s']:.2f} s",
              file=out)
    elif live is not None:
        print(f"liveness: not checked ({live['why']})", file=out)
    print(
        f"{result.distinct_states:,} distinct states, {result.generated_states:,} generated, "
        f"depth {result.depth:,}, {result.elapsed_s:.2f} s ({result.states_per_s:,.0f} states/s)",
        file=out,
    )
    if quiet:
        return
    print(f"fingerprint collision probability (optimistic): {result.fingerprint_collision_probability:.1e}", file=out)
    print_coverage(result, out)


def print_coverage(result: Result, out, headings: tuple[str, str] = ("generated", "distinct"),
                   never: str = "never enabled") -> None:
    """The coverage table, a row per action, and the actions no transition took."""
    if result.coverage:
        width = max(len(name) for name in result.coverage)
        first, second = (max(12, len(heading)) for heading in headings)
        print(f"coverage:\n  {'action':<{width}}  {headings[0]:>{first}}  {headings[1]:>{second}}", file=out)
        for name, counts in result.coverage.items():
            print(f"  {name:<{width}}  {counts['generated']:>{first},}  {counts['distinct']:>{second},}", file=out)
    if result.never_enabled:
        print(f"{never}: {', '.join(result.never_enabled)}", file=out)


def write_junit_report(path: str, runs: list[ConfigRun]) -> None:
    from .junit import write_junit

    try:
        write_junit(path, "kraftcheck check", [_junit_case(run) for run in runs])
    except OSError as e:
        error(f"cannot write the JUnit report to {path}: {e.strerror or e}")


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
