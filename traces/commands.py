"""The trace subcommands of the CLI (``kraftcheck trace ...``, ``kraftcheck graph``).

Bad input (a missing or invalid trace, an unknown output extension, a model that cannot be
built) raises ``ConfigError`` or ``TraceFormatError``: the CLI prints one line and exits 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kraftcheck.checker.config import ConfigError, ModelFailed
from kraftcheck.checker.outputs import refuse_replacing
from kraftcheck.checker.protocol import ModelProtocolError

#: Exit code of ``trace replay`` when the trace is not a run of the model.
EXIT_INVALID_TRACE = 1


def register(commands) -> None:
    """Add the trace subcommands to the CLI's subparsers."""
    from kraftcheck.checker.arguments import positive

    trace = commands.add_parser("trace", help="replay, show, render or page through an ITF trace",
                                description="Work with ITF traces (*.itf.json), the checker's or Quint's/Apalache's.")
    actions = trace.add_subparsers(dest="trace_command", metavar="ACTION", required=True)

    def model_options(parser):
        parser.add_argument("--model", metavar="MODULE:FACTORY",
                            help="the model to use instead of the one named in the trace's #meta")
        parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                            help="override a model setting of the trace's config")

    replay = actions.add_parser("replay", help="check that every step is a legal transition of the model",
                                description="Check that every step of TRACE is a legal transition of its model "
                                            "and that the last state is what the trace says. "
                                            "Exit 0: valid; 1: not (the step and the reason are printed).")
    replay.add_argument("trace", metavar="TRACE")
    model_options(replay)
    replay.set_defaults(run=_guarded(run_replay))

    minimize = actions.add_parser(
        "minimize", help="the shortest run to the same violation: a search near the trace, then delta debugging",
        description="Find a shorter run of TRACE's model to a violation of the same property: a breadth-first "
                    "search through the states within --radius steps of the trace's, then delta debugging over "
                    "the steps, every candidate checked by running the model. Writes a trace that replays.")
    minimize.add_argument("trace", metavar="TRACE")
    minimize.add_argument("-o", "--output", metavar="OUT.itf.json",
                          help="where the shorter trace goes (default: TRACE's name with .min.itf.json)")
    minimize.add_argument("--radius", type=int, default=None, metavar="K",
                          help="search the states within K steps of the trace's (0: its own states only); by "
                               "default 3, doubled while the neighbourhood stays under 200,000 states, the shortest "
                               "result kept")
    model_options(minimize)
    minimize.set_defaults(run=_guarded(run_minimize))

    show = actions.add_parser("show", help="print the trace: each step's action and what changed")
    show.add_argument("trace", metavar="TRACE")
    show.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                      help="colour the output (default: auto, when writing to a terminal)")
    show.set_defaults(run=run_show)

    render = actions.add_parser("render", help="draw the trace with graphviz (.svg, .png or .dot)")
    render.add_argument("trace", metavar="TRACE")
    render.add_argument("-o", "--output", required=True, metavar="OUT", help="OUT.svg, OUT.png or OUT.dot")
    render.add_argument("--style", choices=("compact", "state", "sequence"), default="compact",
                        help="compact: the violation on top, the first state drawn, then what each step changed "
                             "(the default); state: every state drawn in full; sequence: a message sequence chart, "
                             "a lane per participant (needs the model's sequence chart)")
    model_options(render)
    render.set_defaults(run=_guarded(run_render))

    page = actions.add_parser("html", help="write one self-contained page to step through the trace")
    page.add_argument("trace", metavar="TRACE")
    page.add_argument("-o", "--output", required=True, metavar="OUT.html")
    page.add_argument("--no-picture", dest="picture", action="store_false",
                      help="show the tables of variables only, without the model's picture of each state")
    model_options(page)
    page.set_defaults(run=_guarded(run_html))

    graph = commands.add_parser("graph", help="draw the whole state graph of a tiny config",
                                description="Explore every reachable state of a tiny config and draw the state "
                                            "graph (.dot, .svg or .png), with networkx statistics.")
    graph.add_argument("config", nargs="?", metavar="CONFIG.toml",
                       help="config file (default: the embedded spec/configs/default.toml)")
    graph.add_argument("--model", metavar="MODULE:FACTORY", help="the model FACTORY(config) from MODULE")
    graph.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                       help="override a [model] setting")
    graph.add_argument("-o", "--output", required=True, metavar="OUT", help="OUT.dot, OUT.svg or OUT.png")
    graph.add_argument("--max-nodes", type=positive, default=None, metavar="N",
                       help="refuse graphs of more than N states (default: 1000)")
    graph.set_defaults(run=_guarded(run_graph))


# ------------------------------------------------------------------------- replay


def run_replay(args) -> int:
    from .replay import ReplayFailed, model_for, replay
    from .text import visible
    from .trace import load_trace

    lenient_stdout()
    trace = load_trace(args.trace)
    model_ref, model = model_for(trace, args.model, args.overrides)
    try:
        report = model_code(replay, trace, model, model_ref)
    except ReplayFailed as e:
        print(visible(f"invalid: {e}"))
        return EXIT_INVALID_TRACE
    print(visible(f"valid: {report.states} states, every step a legal transition of {report.model}; {report.ending}"))
    return 0


def run_minimize(args) -> int:
    from kraftcheck.checker.result import Counterexample

    from .counterexample import write_counterexample
    from .minimize import TooWide, minimize, violation_test
    from .replay import ReplayFailed, concrete_run, model_for, replay
    from .text import excerpt, visible
    from .trace import load_trace

    lenient_stdout()
    if args.radius is not None and args.radius < 0:
        raise ConfigError(f"--radius is a number of steps, 0 or more, not {args.radius}")
    output = args.output or _minimized_name(args.trace)
    refuse_replacing([args.trace], [("-o", output)])
    trace = load_trace(args.trace)
    kind, name = trace.meta.get("kind"), trace.meta.get("invariant")
    if trace.written_by_kraftcheck and kind == "temporal":
        raise ConfigError(f"{args.trace} is a lasso, built from shortest paths by the liveness phase; "
                          "minimize works on invariants, step properties and deadlocks")
    if not trace.written_by_kraftcheck or kind not in ("invariant", "action", "deadlock"):
        raise ConfigError(f"{args.trace} is no counterexample of kraftcheck's: it names no violated property to keep")
    model_ref, model = model_for(trace, args.model, args.overrides)
    try:
        model_code(replay, trace, model, model_ref)
    except ReplayFailed as e:
        print(visible(f"invalid: {e}"))
        return EXIT_INVALID_TRACE
    start, steps = model_code(concrete_run, trace, model)
    try:
        found = model_code(minimize, model, start, steps, violation_test(model, kind, name), args.radius)
    except TooWide as e:
        raise ConfigError(str(e)) from None
    meta = {"model": model_ref, "config": trace.meta.get("config", {}),
            "minimized": {"from": str(args.trace), "states": found.original}}
    cx = Counterexample(kind, name, [(None, found.start), *found.steps])
    try:
        write_counterexample(output, model, cx, meta)
    except OSError as e:  # before the model's own failures: the disk or the path, not the model
        raise ConfigError(f"cannot write {output}: {e.strerror or e}") from None
    except Exception as e:  # describe() failing
        raise ModelFailed() from e
    print(visible(f"{found.original} states to {found.length}: the search within {found.radius} steps of the trace found "
                  f"{found.after_search}, delta debugging left {found.length}; {excerpt(name)} is still violated"))
    print(visible(f"wrote {output}"))
    return 0


def _minimized_name(path: str) -> str:
    base = path[:-len(".itf.json")] if path.endswith(".itf.json") else path
    return base + ".min.itf.json"


def lenient_stdout() -> None:
    """Let stdout write what its encoding cannot (``PYTHONIOENCODING=ascii``, a C locale) as
    backslash escapes instead of failing halfway through a trace."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")


def model_code(function, *args, **kwargs):
    """Call ``function``, which runs the model's code: its exceptions become :class:`ModelFailed`."""
    from .itf import TraceFormatError
    from .replay import ReplayFailed

    try:
        return function(*args, **kwargs)
    except (KeyboardInterrupt, ConfigError, TraceFormatError, ReplayFailed, ModelProtocolError):
        raise
    except Exception as e:
        raise ModelFailed() from e


def _guarded(run):
    """A subcommand whose model code may fail: one line saying where, exit 1 (as ``check``)."""
    import functools

    @functools.wraps(run)
    def guarded(args) -> int:
        try:
            return run(args)
        except ModelFailed as e:
            from kraftcheck.checker.errors import model_failed as _model_failed

            return _model_failed(e.__cause__)

    return guarded


# ------------------------------------------------------------------------- show


def run_show(args) -> int:
    from .show import show_trace
    from .trace import load_trace

    lenient_stdout()
    trace = load_trace(args.trace)
    color = {"auto": None, "always": True, "never": False}[args.color]
    show_trace(trace, file=sys.stdout, color=color)
    return 0


# ------------------------------------------------------------------------- render, html


def picture_model(trace, model_ref: str | None, overrides: list[str]):
    """The model whose ``picture`` hook draws the trace, or None (then a table of variables).

    A trace written elsewhere is drawn without a model; one that names a model kraftcheck
    does not ship, unless ``--model`` passes it, without a model too, and a note says how to
    trust it.  A model that cannot be built from the trace's settings is bad input."""
    from .render import note
    from .replay import UntrustedModel, model_for

    if model_ref is None and not trace.written_by_kraftcheck:
        return None
    try:
        return model_for(trace, model_ref, overrides)[1]
    except UntrustedModel as e:
        note(f"drawing the variables only: {e}")
        return None


def chart_model(trace, model_ref: str | None, overrides: list[str]):
    """The model that draws the trace's sequence chart, or None (then no chart can be drawn).
    A trace naming a model kraftcheck does not ship needs ``--model``: bad input without it."""
    from .replay import UntrustedModel, model_for

    if model_ref is None and not trace.written_by_kraftcheck:
        return None
    try:
        return model_for(trace, model_ref, overrides)[1]
    except UntrustedModel as e:
        raise ConfigError(f"a sequence chart needs the trace's model: {e}") from None


def run_render(args) -> int:
    from .render import output_format, render_trace
    from .trace import load_trace

    lenient_stdout()
    fmt = output_format(args.output)
    refuse_replacing([args.trace], [("-o", args.output)])
    trace = load_trace(args.trace)
    if args.style == "sequence":
        from .sequence import render_sequence

        path = model_code(render_sequence, trace, args.output, fmt, model=chart_model(trace, args.model, args.overrides))
    else:
        model = picture_model(trace, args.model, args.overrides)
        path = model_code(render_trace, trace, args.output, fmt, model=model, compact=args.style == "compact")
    print(f"wrote {path}")
    return 0


def run_html(args) -> int:
    from .page import write_page
    from .trace import load_trace

    lenient_stdout()
    if Path(args.output).suffix.lower() not in (".html", ".htm"):
        raise ConfigError(f"trace html writes an .html file, not {args.output!r}")
    refuse_replacing([args.trace], [("-o", args.output)])
    trace = load_trace(args.trace)
    model = picture_model(trace, args.model, args.overrides) if args.picture else None
    path = model_code(write_page, trace, args.output, model=model, picture=args.picture)
    print(f"wrote {path}")
    return 0


# ------------------------------------------------------------------------- graph


def run_graph(args) -> int:
    from kraftcheck.checker.config import build_model, load_config

    from .graph import DEFAULT_MAX_NODES, explore_graph, graph_summary, write_graph
    from .render import output_format

    lenient_stdout()
    fmt = output_format(args.output)
    refuse_replacing([args.config or ""], [("-o", args.output)])
    config = load_config(args.config, args.model, args.overrides)
    model = build_model(config)
    max_nodes = args.max_nodes or DEFAULT_MAX_NODES
    graph = model_code(explore_graph, model, max_nodes=max_nodes, label=config.label)
    path = model_code(write_graph, graph, model, args.output, fmt)
    for line in graph_summary(graph):
        print(line)
    print(f"wrote {path}")
    return 0
