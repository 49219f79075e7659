"""``kraftcheck check`` of several configs (``--suite``, or several files): each checked as
:mod:`.check` checks one, then one table, one summary and the worst exit code."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

from .check import (ERROR_VERDICT, ConfigRun, build_named_model, check_config, report, search_options,
                    without_symmetry, worst_exit_code, write_junit_report)
from .config import ConfigError, ModelFailed, load_config
from .errors import error, model_failure
from .jobs import TaskLost, run_tasks
from .outputs import DEFAULT_TRACE_DIR, check_outputs, json_summary, refuse_replacing, write_summary
from .protocol import ModelProtocolError
from .result import OK, Result
from .suite import SuiteEntry, check_expected_names
from .workers import available_cores
from kraftcheck.traces.text import visible

def check_several(args, entries: list[SuiteEntry]) -> int:
    """Check several configs, ``args.jobs`` of them at a time: a line for each as it finishes
    (its whole report with ``--verbose``, nothing with ``--quiet``), then one table; one summary
    with an entry per config; the worst exit code (:data:`EXIT_SEVERITY`).  The output is the
    same, line for line, whatever the number of jobs (:mod:`.jobs`).

    Every config is read, and its model built, before the first search starts: a config that
    cannot be used is bad input before any time is spent.  A model whose code fails is that
    config's verdict (``error``), and the others are checked all the same."""
    runs: list[ConfigRun] = []
    for entry in entries:
        config = load_config(entry.path, args.model, args.overrides)
        run = ConfigRun(config, None, {}, expect=entry.expect)
        try:
            run.model = without_symmetry(build_named_model(config), args.no_symmetry)
        except ModelFailed as e:
            run.error = model_failure(e.__cause__)
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
    refuse_replacing([*(run.config.source for run in runs), getattr(args, "suite", None) or ""],
                     [("--json", args.json), ("--junit", args.junit)],
                     [(run.config, run.model) for run in runs if run.model is not None], trace_dir)
    jobs = suite_jobs(args, sum(run.model is not None for run in runs))
    # the cores are shared out between the jobs, unless --workers says otherwise
    workers = args.workers if args.workers is not None else max(1, available_cores() // jobs)
    for run in runs:
        run.options = search_options(run.config, args, workers=workers)
    verbose = getattr(args, "verbose", False)
    out = sys.stdout

    def task(run: ConfigRun):
        return lambda: _check_one(args, run, trace_dir, verbose=verbose, in_own_process=jobs > 1)

    def finished(index: int, outcome) -> None:
        run = runs[index]
        if isinstance(outcome, TaskLost):
            run.error = outcome.reason
            error(f"{run.config.source}: {run.error}")
        else:
            _replay(outcome)
            run.result, run.trace_paths = outcome.result, outcome.trace_paths
            run.error = run.error if outcome.error is None else outcome.error
            if outcome.raised is not None:
                raise outcome.raised
        if verbose:
            print(file=out)
        elif not args.quiet:
            print(f"[{index + 1}/{len(runs)}] {finished_line(run)}", file=out, flush=True)

    run_tasks([task(run) for run in runs], jobs, finished)
    print_runs_table(runs, out)
    if len({run.config.model for run in runs}) == 1 and any(getattr(run.model, "actions", None) for run in runs):
        print(actions_never_enabled_line(runs), file=out)
    if args.json:
        write_summary(args.json, suite_summary(runs))
    if args.junit:
        write_junit_report(args.junit, runs)
    return worst_exit_code(run.exit_code for run in runs)


def suite_jobs(args, configs: int) -> int:
    """How many configs are checked at a time: ``-j``, all cores by default, never more than
    there are configs; one on the Spark engine, which spreads each search over its executors."""
    if args.engine == "spark":
        return 1
    jobs = args.jobs if getattr(args, "jobs", None) is not None else available_cores()
    return max(1, min(jobs, configs))


@dataclass
class _Checked:
    """What checking one config left: its result, its traces, its output (when it ran in a
    process of its own) and an exception that stops the whole run (bad input, a model that
    breaks the protocol)."""

    result: Result | None
    trace_paths: dict[str, str | None]
    error: str | None
    out: str | None = None
    err: str | None = None
    raised: BaseException | None = None


def _check_one(args, run: ConfigRun, trace_dir: Path, *, verbose: bool, in_own_process: bool) -> _Checked:
    if run.error is not None:  # its model could not be built: said once, as the search's failure is
        if verbose:
            print(f"checking {run.config.model} with {run.config.source}: not checked")
        error(f"{run.config.source}: {run.error}")
        return _Checked(None, {}, run.error)
    if not in_own_process:  # progress as a single config's, with --verbose
        if check_config(args, run, trace_dir, always_name=True, announce=verbose, progress=verbose) and verbose:
            report(run.model, run.result, run.trace_paths, quiet=args.quiet, out=sys.stdout, expected=run.expect)
        return _Checked(run.result, run.trace_paths, run.error)
    # in a process of its own: what it prints comes back with its outcome, and is printed in order
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    raised = None
    try:
        if check_config(args, run, trace_dir, always_name=True, announce=verbose, progress=False) and verbose:
            report(run.model, run.result, run.trace_paths, quiet=args.quiet, out=out, expected=run.expect)
    except (ModelProtocolError, ConfigError) as e:
        raised = e
    finally:
        sys.stdout, sys.stderr = saved
    return _Checked(run.result, run.trace_paths, run.error, out.getvalue(), err.getvalue(), raised)


def _replay(outcome: _Checked) -> None:
    if outcome.out:
        sys.stdout.write(outcome.out)
    if outcome.err:
        sys.stderr.write(outcome.err)
        sys.stderr.flush()


def finished_line(run: ConfigRun) -> str:
    """A config's one line as it finishes: outcome, figures, and its first finding's trace."""
    source = visible(run.config.source or run.config.label)
    r = run.result
    if r is None:
        return f"{source}: {run.outcome}: the model failed (stderr says where)"
    line = f"{source}: {run.outcome}, {r.distinct_states:,} states, depth {r.depth:,}, {r.elapsed_s:.2f} s"
    if r.counterexamples:
        cx = r.counterexamples[0]
        more = f" and {len(r.counterexamples) - 1} more" if len(r.counterexamples) > 1 else ""
        line += f"; {cx.name} ({cx.length} states){more}: {run.trace_paths.get(cx.name) or 'trace not written'}"
    elif run.expect:
        line += f"; expected {', '.join(run.expect)}"
    return line


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
        rows.append((visible(run.config.source or run.config.label), run.outcome, *figures, _first_finding(run)))
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
