"""``kraftcheck mutants``: every mutant the model lists, against configs, caught or missed.

A mutant (the model's ``mutants``: name -> description, switched on by the setting
``mutant = NAME``) is a known bug put back.  The invariants catch it at a config when the
search of the mutated model finds a violation there that the model without the mutant does
not have.  Configs are tried in the order given, and each mutant stops at the first config that
catches it: a mutant that only a big config catches costs that config's search, and a mutant
caught early costs a few levels.  The exit code is 0 when every mutant is caught.
"""

from __future__ import annotations

import importlib.resources
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .arguments import positive, workers_count
from .check import build_named_model, check_temporal, without_symmetry
from .config import MUTANT_SETTING, CheckConfig, ConfigError, ModelFailed, load_config, parse_override
from .errors import EXIT_MODEL_FAILED, error, model_failure, search_failure
from .jobs import TaskLost, run_tasks
from .outputs import refuse_replacing, unwritable
from .protocol import ModelProtocolError
from .result import Counterexample
from .suite import EXIT_EXPECTED_MISSING
from .temporal import declared_properties
from .workers import available_cores, explore

#: The exit code when a mutant escapes every config (and no model's code failed): an expected
#: violation that did not occur, as for a suite's finding.
EXIT_MUTANT_ESCAPED = EXIT_EXPECTED_MISSING


def register(commands, model_source) -> None:
    mutants = commands.add_parser(
        "mutants", parents=[model_source], help="run every mutant against configs: caught or missed",
        description="Run every mutant the model lists against the configs, in their order, each until the "
                    "first config that catches it, and print which config caught it, by which invariant, "
                    f"with how long a trace; exit {EXIT_MUTANT_ESCAPED} when a mutant escapes every config.")
    mutants.add_argument("configs", nargs="*", metavar="CONFIG.toml",
                         help="configs, tried in this order (default: the shipped spec/configs/*.toml, by name)")
    mutants.add_argument("--mutant", dest="only", action="append", default=[], metavar="NAME",
                         help="run this mutant only (repeatable; default: every mutant the model lists)")
    mutants.add_argument("--max-states", type=positive, metavar="N", help="stop each search after N distinct states")
    mutants.add_argument("--max-depth", type=positive, metavar="N", help="explore paths of at most N states")
    mutants.add_argument("--workers", type=workers_count, metavar="N",
                         help="processes each search runs the model in: N, or auto for every core (default: auto)")
    mutants.add_argument("-j", "--jobs", type=workers_count, metavar="N",
                         help="hunt N mutants at a time: N, or auto for every core (default: auto); "
                              "the output is the same whatever N")
    mutants.add_argument("--junit", metavar="PATH", help="write a JUnit XML report to PATH: a test case per mutant")
    mutants.add_argument("--under", metavar="KEY=V1,V2,...",
                         help="hunt every mutant once under each value of a model setting (as --set KEY=V on every "
                              "config; a config that refuses a value is left out for it), and report which values "
                              "catch it, and where")
    mutants.add_argument("--quiet", action="store_true", help="no progress on stderr")
    mutants.set_defaults(run=run_mutants)


def shipped_configs() -> list[str]:
    """The configs kraftcheck ships (``spec/configs/*.toml`` as installed), by name."""
    folder = importlib.resources.files("kraftcheck.spec.configs")
    return sorted(str(entry) for entry in folder.iterdir() if entry.name.endswith(".toml"))


@dataclass
class MutantOutcome:
    """How one mutant fared: caught (by ``config``, violating ``violated`` in ``length`` states),
    missed by every config, or stopped by the model's code failing (``error``)."""

    name: str
    description: str
    config: CheckConfig | None = None
    violated: list[str] = field(default_factory=list)
    length: int = 0
    counterexample: Counterexample | None = None
    error: str | None = None
    #: the config whose search the model's code failed in
    error_config: str | None = None
    elapsed_s: float = 0.0

    @property
    def verdict(self) -> str:
        if self.error is not None:
            return "error"
        return "caught" if self.config is not None else "missed"


def run_mutants(args) -> int:
    if any(parse_override(item)[0] == MUTANT_SETTING for item in args.overrides):
        raise ConfigError(f"--set {MUTANT_SETTING}=... is what this command does for each mutant: leave it out")
    if args.junit is not None:
        problem = unwritable(Path(args.junit), directory=False)
        if problem:
            raise ConfigError(f"cannot write the JUnit report to {args.junit}: {problem}")
    paths = args.configs or shipped_configs()
    configs = [load_config(path, args.model, args.overrides) for path in paths]
    refuse_replacing([config.source for config in configs], [("--junit", args.junit)])
    baselines = [build_named_model(config) for config in configs]
    listed = [_listed_mutants(model) for model in baselines]
    mutants = listed[0]
    if not mutants:
        raise ConfigError(f"{configs[0].model} lists no mutants (a model's 'mutants': name -> description)")
    unknown = [name for name in args.only if name not in mutants]
    if unknown:
        raise ConfigError(f"unknown mutant {unknown[0]!r} (known: {', '.join(mutants)})")
    if args.only:
        mutants = {name: text for name, text in mutants.items() if name in args.only}
    if args.under is not None:
        if args.junit is not None:
            raise ConfigError("--junit writes one verdict per mutant: leave out --under, or run each value with --set")
        return _run_under(args, paths, mutants)

    out = sys.stdout
    name_width = max(len("mutant"), *(len(name) for name in mutants))
    config_width = max(len("config"), *(len(config.label) for config in configs))
    print(f"{'mutant':<{name_width}}  {'verdict':<7}  {'config':<{config_width}}  {'trace':>5}  violated", file=out,
          flush=True)
    outcomes: list[MutantOutcome] = []
    noted: set[int] = set()
    jobs = max(1, min(args.jobs if args.jobs is not None else available_cores(), len(mutants)))
    # the cores are shared out between the jobs, unless --workers says otherwise
    workers = args.workers if args.workers is not None else max(1, available_cores() // jobs)
    progress = not args.quiet and jobs == 1

    def task(name: str, description: str):
        return lambda: _hunt(args, name, description, configs, baselines, listed, workers=workers, progress=progress)

    def finished(index: int, hunted) -> None:
        if isinstance(hunted, TaskLost):
            name, description = list(mutants.items())[index]
            outcome, failing = MutantOutcome(name, description, error=hunted.reason), []
        else:
            outcome, failing = hunted
        for config_index, invariant in failing:
            if config_index not in noted:  # the config fails by itself: it tells nothing about mutants
                noted.add(config_index)
                print(f"note: {configs[config_index].source} violates {invariant} without a mutant: "
                      "it catches no mutant", file=sys.stderr, flush=True)
        if outcome.error is not None:
            where = f" at {outcome.error_config}" if outcome.error_config else ""
            error(f"mutant {outcome.name}{where}: {outcome.error}")
        outcomes.append(outcome)
        where = outcome.config.label if outcome.config is not None else "-"
        trace = str(outcome.length) if outcome.config is not None else "-"
        violated = ", ".join(outcome.violated) or "-"
        print(f"{outcome.name:<{name_width}}  {outcome.verdict:<7}  {where:<{config_width}}  {trace:>5}  {violated}",
              file=out, flush=True)

    run_tasks([task(name, description) for name, description in mutants.items()], jobs, finished)
    caught = sum(outcome.verdict == "caught" for outcome in outcomes)
    missed = [outcome.name for outcome in outcomes if outcome.verdict == "missed"]
    print(f"mutation score: {caught}/{len(outcomes)} caught" + (f"; missed: {', '.join(missed)}" if missed else ""),
          file=out)
    if args.junit is not None:
        _write_junit(args.junit, outcomes, configs)
    if any(outcome.error is not None for outcome in outcomes):
        return EXIT_MODEL_FAILED
    return EXIT_MUTANT_ESCAPED if missed else 0


def parse_under(text: str) -> tuple[str, list[str]]:
    """``KEY=V1,V2,...`` as the setting and its values (each a ``--set`` of its own)."""
    key, sep, raw = text.partition("=")
    values = [value.strip() for value in raw.split(",")]
    if not sep or not key.strip() or len(values) < 2 or not all(values):
        raise ConfigError(f"--under expects KEY=V1,V2,... (two values at least), got {text!r}")
    if key.strip() == MUTANT_SETTING:
        raise ConfigError(f"--under {MUTANT_SETTING}=...: this command sets {MUTANT_SETTING} itself")
    for value in values:
        parse_override(f"{key.strip()}={value}")
    return key.strip(), values


def _run_under(args, paths: list[str], mutants: dict[str, str]) -> int:
    """Every mutant hunted under each value of one setting: a column per value, the config that
    caught it there and the trace's length, or ``missed``; exit 0 when each mutant is caught
    under some value."""
    key, values = parse_under(args.under)
    variants = []  # (--set item, configs, their models, the mutants each lists)
    for value in values:
        item = f"{key}={value}"
        configs, baselines = [], []
        for path in paths:
            try:
                config = load_config(path, args.model, [*args.overrides, item])
                baselines.append(build_named_model(config))
            except ConfigError as e:
                said = str(e) if path in str(e) else f"{path}: {e}"
                print(f"note: left out with {item}: {said}", file=sys.stderr, flush=True)
                continue
            configs.append(config)
        variants.append((item, configs, baselines, [_listed_mutants(model) for model in baselines]))
    hunts = [(name, description, v) for name, description in mutants.items() for v in range(len(variants))]
    jobs = max(1, min(args.jobs if args.jobs is not None else available_cores(), len(hunts)))
    workers = args.workers if args.workers is not None else max(1, available_cores() // jobs)
    results: dict[tuple[str, int], MutantOutcome] = {}

    def task(name: str, description: str, v: int):
        _, configs, baselines, listed = variants[v]
        return lambda: _hunt(args, name, description, configs, baselines, listed, workers=workers, progress=False)

    def finished(index: int, hunted) -> None:
        name, description, v = hunts[index]
        outcome = MutantOutcome(name, description, error=hunted.reason) if isinstance(hunted, TaskLost) else hunted[0]
        if outcome.error is not None:
            where = f" at {outcome.error_config}" if outcome.error_config else ""
            error(f"mutant {name} with {variants[v][0]}{where}: {outcome.error}")
        results[name, v] = outcome
        if not args.quiet:
            print(f"{name} with {variants[v][0]}: {outcome.verdict}", file=sys.stderr, flush=True)

    run_tasks([task(*hunt) for hunt in hunts], jobs, finished)

    def cell(outcome: MutantOutcome) -> str:
        if outcome.config is None:
            return outcome.verdict
        return f"{outcome.config.label} {outcome.length} {', '.join(outcome.violated)}"

    rows = [["mutant", *(item for item, _, _, _ in variants)]]
    rows += [[name, *(cell(results[name, v]) for v in range(len(variants)))] for name in mutants]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip(), file=sys.stdout)
    for v, (item, _, _, _) in enumerate(variants):
        caught = sum(results[name, v].verdict == "caught" for name in mutants)
        print(f"{item}: {caught}/{len(mutants)} caught", file=sys.stdout)
    escaped = [name for name in mutants if all(results[name, v].verdict != "caught" for v in range(len(variants)))]
    if escaped:
        print(f"missed under every value: {', '.join(escaped)}", file=sys.stdout)
    if any(outcome.error is not None for outcome in results.values()):
        return EXIT_MODEL_FAILED
    return EXIT_MUTANT_ESCAPED if escaped else 0


def _hunt(args, name: str, description: str, configs: list[CheckConfig], baselines: list, listed: list[dict],
          *, workers: int, progress: bool) -> tuple[MutantOutcome, list[tuple[int, str]]]:
    """Search the configs in order with mutant ``name`` on, until one catches it; and the configs
    (index, invariant) that turned out to fail without any mutant."""
    outcome = MutantOutcome(name, description)
    failing: list[tuple[int, str]] = []
    started = time.perf_counter()
    for index, (config, baseline) in enumerate(zip(configs, baselines)):
        if name not in listed[index]:
            continue  # another model, without this mutant
        found = _search(args, config, name, outcome, workers=workers, progress=progress)
        if outcome.error is not None:
            outcome.error_config = config.source
            break
        # shortest first: a config that goes on past its violations (``continue``) finds them in
        # the order of its properties, and the mutant's shortest trace is the one to report
        own = sorted((cx for cx in found if not also_without_mutant(baseline, cx)), key=lambda cx: cx.length)
        if own:
            outcome.config, outcome.counterexample = config, own[0]
            outcome.violated = sorted({cx.name for cx in own}, key=[cx.name for cx in own].index)
            outcome.length = own[0].length
            break
        if found:
            failing.append((index, found[0].name))
    outcome.elapsed_s = time.perf_counter() - started
    return outcome, failing


def _listed_mutants(model) -> dict[str, str]:
    try:
        return {str(name): str(text) for name, text in (getattr(model, "mutants", None) or {}).items()}
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # the model's members are its own code
        raise ModelFailed() from e


def _search(args, config: CheckConfig, mutant: str, outcome: MutantOutcome, *, workers: int,
            progress: bool) -> list[Counterexample]:
    """Search ``config`` with ``mutant`` switched on; the counterexamples of the first level
    that has any (none: the mutant escapes this config).  The model's code failing goes to
    ``outcome.error``."""
    from .progress import progress_reporter

    mutated = CheckConfig(config.model, {**config.settings, MUTANT_SETTING: mutant}, dict(config.check),
                          config.source, {**config.overrides, MUTANT_SETTING: mutant})
    try:
        model = build_named_model(mutated)
    except ModelFailed as e:
        outcome.error = model_failure(e.__cause__)
        return []
    check = config.check
    # a config that keeps going past its own findings (``continue``) may catch a mutant deeper
    keep_going = bool(check.get("continue", False))
    reporter = progress_reporter(not progress, sys.stderr)
    try:
        result = explore(
            model,
            max_states=args.max_states if args.max_states is not None else check.get("max_states"),
            max_depth=args.max_depth if args.max_depth is not None else check.get("max_depth"),
            check_deadlock=check.get("deadlock", True),
            stop_on_violation=not keep_going,
            progress=reporter,
            workers=workers,
        )
        # a liveness mutant breaks only a temporal property: the liveness phase follows, on the
        # model without its symmetry reduction (which would make its loops unsound)
        properties = declared_properties(model)
        if properties:
            check_temporal(without_symmetry(model, True), result, properties, after_violations=keep_going)
    except (KeyboardInterrupt, ModelProtocolError):
        raise
    except (Exception, SystemExit) as e:  # the model's own code failed: said in the mutant's row
        outcome.error = search_failure(e)
        return []
    finally:
        if reporter is not None:
            reporter.close()
    return result.counterexamples


def also_without_mutant(baseline, cx: Counterexample) -> bool:
    """Whether ``cx`` is a run of the model without the mutant too, ending in the same violation
    (or deadlock): then the config breaks by itself, and the violation says nothing of the mutant.

    The model's code raising on the way back shows no such run: the violation is the mutant's."""
    try:
        return _replays(baseline, cx)
    except KeyboardInterrupt:
        raise
    except Exception:
        return False


def _replays(baseline, cx: Counterexample) -> bool:
    trace = cx.trace
    if trace[0][1] not in list(baseline.init_states()):
        return False
    for (_, before), (action, after) in zip(trace, trace[1:]):
        if (action, after) not in list(baseline.successors(before)):
            return False
    last = trace[-1][1]
    if cx.kind == "invariant":
        return baseline.invariants[cx.name](last) is False
    if cx.kind == "action":
        return baseline.action_invariants[cx.name](trace[-2][1], trace[-1][0], last) is False
    if cx.kind == "temporal":
        from .temporal import declared_fairness, lasso_violates, loop_unfairness

        states = [state for _, state in trace]
        looped = states[cx.loop:-1] if cx.loop < len(states) - 1 else states[cx.loop:]
        prop = (getattr(baseline, "temporal_properties", None) or {}).get(cx.name)
        return (prop is not None and loop_unfairness(baseline, declared_fairness(baseline), looped, trace[cx.loop + 1:]) is None
                and lasso_violates(prop, states, cx.loop))
    return not any(True for _ in baseline.successors(last))


def _write_junit(path: str, outcomes: list[MutantOutcome], configs: list[CheckConfig]) -> None:
    from .junit import Case, Outcome, write_junit

    tried = ", ".join(config.label for config in configs)
    cases = []
    for outcome in outcomes:
        case = Case(outcome.name, "kraftcheck.mutants", outcome.elapsed_s)
        if outcome.error is not None:
            case.error = Outcome(outcome.error, "model failed", outcome.description)
        elif outcome.config is None:
            case.failure = Outcome(f"mutant {outcome.name} escaped every config: {tried}", "missed",
                                   outcome.description)
        else:
            case.output = (f"caught by {outcome.config.label}: {', '.join(outcome.violated)} violated, "
                           f"shortest trace {outcome.length} states\n{outcome.description}\n")
        cases.append(case)
    try:
        write_junit(path, "kraftcheck mutants", cases)
    except OSError as e:
        error(f"cannot write the JUnit report to {path}: {e.strerror or e}")
