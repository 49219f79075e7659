"""``kraftcheck conform``: the model's controller steps replayed against Kafka's own controller.

Runs come from ITF traces (finding traces, counterexamples) or from seeded random walks at a
config; every controller step of a run goes to one JVM running Kafka's controller (the Java
harness, ``harness/``), and Kafka's state is compared with the model's after each.

Exit codes: 0 every run conforms; 14 a run diverges (the first divergence printed: the step,
the request, and model against Kafka field by field); 2 bad usage or bad input, or java,
javac or Maven missing; 1 the harness failed (crashed, or answered outside its protocol).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any

EXIT_CONFORMS, EXIT_HARNESS_FAILED, EXIT_BAD_INPUT, EXIT_DIVERGES = 0, 1, 2, 14
DEFAULT_WALKS = 50
DEFAULT_DEPTH = 40


@dataclass
class Source:
    """One run to replay: where it came from, its model, its initial state and steps."""

    name: str
    model: Any
    start: Any
    steps: list


@dataclass
class Report:
    kafka_version: str
    runs: int = 0
    controller_steps: int = 0
    model_steps: int = 0
    #: runs that stopped at a controller step no Kafka release has: (run, step, action, why)
    stopped: list[tuple[str, int, str, str]] = field(default_factory=list)
    #: the first divergence no known explanation covers: (run, Divergence)
    divergence: tuple[str, Any] | None = None
    #: runs that ended at an explained divergence (with --allow-explained): (run, Divergence, name)
    explained: list[tuple[str, Any, str]] = field(default_factory=list)
    by_action: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def register(commands) -> None:
    from kraftcheck.checker.arguments import positive

    from .harness import DEFAULT_KAFKA_VERSION

    conform = commands.add_parser(
        "conform", help="replay the model's controller steps against Kafka's own controller",
        description="Send every controller step of TRACEs, and of seeded random walks at --config files, to "
                    "Kafka's released controller (kafka-metadata, fetched by Maven) running in one JVM, and "
                    "compare Kafka's state with the model's after each step. Exit 0: every run conforms; "
                    f"{EXIT_DIVERGES}: a run diverges (the first divergence printed); 2: bad usage, or java, "
                    "javac or Maven missing; 1: the harness failed.")
    conform.add_argument("traces", nargs="*", metavar="TRACE", help="ITF traces of the Kafka model (*.itf.json)")
    conform.add_argument("--config", dest="configs", action="append", default=[], metavar="CONFIG.toml",
                         help="random walks at this config (repeatable)")
    conform.add_argument("--walks", type=positive, default=DEFAULT_WALKS, metavar="N",
                         help=f"walks per config (default {DEFAULT_WALKS})")
    conform.add_argument("--depth", type=positive, default=DEFAULT_DEPTH, metavar="D",
                         help=f"steps per walk at most (default {DEFAULT_DEPTH})")
    conform.add_argument("--seed", type=int, default=0, metavar="S", help="the walks' seed (default 0)")
    conform.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                         help="override a model setting of every config and trace")
    conform.add_argument("--kafka-version", dest="kafka_versions", action="append", default=[], metavar="X.Y.Z",
                         help=f"Kafka release to run, from Maven Central (repeatable; default {DEFAULT_KAFKA_VERSION})")
    conform.add_argument("--kafka-classpath", metavar="PATH",
                         help="run the Kafka jars at PATH instead (a directory of jars, such as a Kafka "
                              "distribution's libs/, or a classpath): a contributor's own build")
    conform.add_argument("--allow-explained", action="store_true",
                         help="a run that reaches a divergence the model's known differences from Kafka's "
                              "releases explain (conform/explained.py) ends there and counts; only an "
                              "unexplained one fails")
    conform.add_argument("--json", metavar="PATH", help="write a JSON summary to PATH")
    conform.set_defaults(run=run_conform)


def load_sources(traces: list[str], configs: list[str], overrides: list[str], walks: int, depth: int, seed: int,
                 follow: str | None = None):
    """Every run to replay: each trace's run of its own model, and the walks at each config.
    ``follow``: a Kafka release whose rules the walks' model follows (``kafka_version``, over
    the config's own) where the config reads the code and ``--set`` names no version."""
    from kraftcheck.checker.config import build_model, load_config
    from kraftcheck.checker.walk import random_walk
    from kraftcheck.traces.replay import ReplayFailed, concrete_run, model_for
    from kraftcheck.traces.trace import load_trace

    from .mapping import MODEL_ONLY, walk_weight

    sources: list[Source] = []
    for path in traces:
        trace = load_trace(path)
        _, model = model_for(trace, None, overrides)
        _require_kafka_model(model, path)
        try:
            start, steps = concrete_run(trace, model)
        except ReplayFailed as e:
            raise BadInput(f"{path}: not a run of its model: {e}") from None
        sources.append(Source(path, model, start, steps))
    for path in configs:
        config = load_config(path, None, overrides)
        named = any(item.split("=", 1)[0].strip() == "kafka_version" for item in overrides)
        if follow and config.settings.get("semantics", "code") == "code" and not named:
            config.settings["kafka_version"] = follow
        model = build_model(config)
        _require_kafka_model(model, path)
        for index in range(walks):
            walk = random_walk(model, seed, index, depth, allowed=lambda a: a[0] not in MODEL_ONLY, weight=walk_weight)
            sources.append(Source(f"{path} walk {index} (seed {seed})", model, walk.start, list(walk.steps)))
    return sources


class BadInput(Exception):
    """Input conform cannot use: one line, exit 2."""


def _require_kafka_model(model, where: str) -> None:
    from kraftcheck.model.kraft import KRaftJBOD

    if not isinstance(model, KRaftJBOD):
        raise BadInput(f"{where}: conform replays the Kafka model's controller steps; this is another model")


def conform_all(sources: list[Source], harness, allow_explained: bool = False) -> Report:
    """Replay every run; stop at the first divergence (with ``allow_explained``, the first that
    no known explanation covers)."""
    from .compare import Conformance
    from .explained import explain

    report = Report(harness.kafka_version)
    started = time.perf_counter()
    checkers: dict[int, Conformance] = {}
    for source in sources:
        checker = checkers.setdefault(id(source.model), Conformance(source.model, harness))
        result = checker.run(source.start, source.steps)
        report.runs += 1
        report.controller_steps += result.controller_steps
        report.model_steps += result.model_steps
        for name, count in result.by_action.items():
            report.by_action[name] = report.by_action.get(name, 0) + count
        if result.stopped_at:
            step, name, why = result.stopped_at
            report.stopped.append((source.name, step, name, why))
        if result.divergence:
            d = result.divergence
            known = explain(source.model, d.pre, d.action, d, harness.kafka_version) if allow_explained else None
            if known is not None:
                report.explained.append((source.name, d, known.name))
                continue
            report.divergence = (source.name, d)
            break
    report.seconds = time.perf_counter() - started
    return report


def run_conform(args) -> int:
    from kraftcheck.checker.config import ConfigError
    from kraftcheck.checker.outputs import refuse_replacing
    from kraftcheck.traces.itf import TraceFormatError

    from .harness import DEFAULT_KAFKA_VERSION, Harness, HarnessFailed, HarnessUnavailable

    if not args.traces and not args.configs:
        return _bad("conform needs TRACE files or --config CONFIG.toml (see 'kraftcheck conform --help')")
    if args.kafka_classpath and args.kafka_versions:
        return _bad("--kafka-classpath and --kafka-version exclude each other: the classpath is the Kafka to run")
    try:
        refuse_replacing([*args.traces, *args.configs], [("--json", args.json)])
        sources = load_sources(args.traces, args.configs, args.overrides, args.walks, args.depth, args.seed)
    except (BadInput, ConfigError, TraceFormatError, OSError) as e:
        return _bad(str(e))
    targets = [("classpath", args.kafka_classpath)] if args.kafka_classpath else \
        [("version", v) for v in (args.kafka_versions or [DEFAULT_KAFKA_VERSION])]
    reports = []
    code = EXIT_CONFORMS
    for kind, target in targets:
        try:
            with Harness(kafka_version=target if kind == "version" else None,
                         kafka_classpath=target if kind == "classpath" else None) as harness:
                follow = release_of(harness.kafka_version)
                if args.configs and follow:  # the walks follow the rules of the release they meet
                    try:
                        sources = load_sources(args.traces, args.configs, args.overrides, args.walks, args.depth,
                                               args.seed, follow)
                    except ConfigError as e:  # a config whose feature the release lacks
                        return _bad(f"{e} (walks against Kafka {harness.kafka_version} follow its rules)")
                lacking = _needs_a_later_kafka(sources, follow)
                if lacking:
                    return _bad(f"{lacking} has cordoned log directories, which Kafka {harness.kafka_version} lacks "
                                "(KIP-1066 came with Kafka 4.3.0)")
                report = conform_all(sources, harness, args.allow_explained)
        except HarnessUnavailable as e:
            return _bad(str(e))
        except HarnessFailed as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_HARNESS_FAILED
        reports.append(report)
        _print_report(report)
        if report.divergence:
            code = EXIT_DIVERGES
    if args.json:
        _write_json(args.json, reports)
    return code


def _needs_a_later_kafka(sources: list[Source], release: str | None) -> str | None:
    """The first run whose model has cordoned directories, when the release to run has none."""
    from kraftcheck.model.config import Settings
    from kraftcheck.model.rules import KafkaRules

    if release is None or KafkaRules.of(Settings(kafka_version=release).kafka_release).cordoned_dirs:
        return None
    return next((source.name for source in sources if getattr(source.model.settings, "cordons", 0)), None)


def release_of(version: str) -> str | None:
    """A Kafka version as the model's ``kafka_version`` takes it: a release whose rules the model
    knows, else None (a contributor's snapshot build: the walks follow the code the model was
    read from, and what the branch changed shows as divergences)."""
    from kraftcheck.model.config import KAFKA_RELEASES

    return version if version in KAFKA_RELEASES else None


def _print_report(report: Report) -> None:
    where = f"Kafka {report.kafka_version}'s controller"
    if report.divergence:
        name, divergence = report.divergence
        print(f"diverges from {where}: {name}")
        for line in divergence.report():
            print(line)
        _print_explained(report)
        return
    print(f"conforms: {report.controller_steps:,} controller steps over {report.runs:,} "
          f"trace{'' if report.runs == 1 else 's'} against {where} "
          f"({report.model_steps:,} steps the model's alone, {report.seconds:.1f} s)")
    for name, step, action, why in report.stopped:
        print(f"  {name}: compared up to step {step}, {action}: {why}")
    _print_explained(report)


def _print_explained(report: Report) -> None:
    from .explained import KNOWN

    counts: dict[str, int] = {}
    for _, _, name in report.explained:
        counts[name] = counts.get(name, 0) + 1
    for entry in KNOWN:
        if entry.name in counts:
            n = counts[entry.name]
            print(f"  {n} run{'' if n == 1 else 's'} ended at an explained divergence, {entry.name}: {entry.why}")


def _write_json(path: str, reports: list[Report]) -> None:
    from kraftcheck.traces.itf import write_json_atomically

    summary = []
    for r in reports:
        entry = {"kafkaVersion": r.kafka_version, "runs": r.runs, "controllerSteps": r.controller_steps,
                 "modelSteps": r.model_steps, "byAction": r.by_action, "seconds": round(r.seconds, 3),
                 "stopped": [{"run": n, "step": s, "action": a, "why": w} for n, s, a, w in r.stopped],
                 "explained": [{"run": n, "step": d.step, "action": d.label, "explanation": e} for n, d, e in r.explained],
                 "verdict": "diverges" if r.divergence else "conforms"}
        if r.divergence:
            name, d = r.divergence
            entry["divergence"] = {"run": name, "step": d.step, "action": d.label, "request": d.request,
                                   "records": d.records,
                                   "fields": [{"field": f, "model": m, "kafka": k} for f, m, k in d.fields]}
        summary.append(entry)
    write_json_atomically(path, {"conform": summary})


def _bad(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
