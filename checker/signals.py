"""SIGINT, SIGTERM and SIGHUP: whichever arrives, the command stops as it does on Ctrl-C.

Each raises :class:`Interrupted` (a ``KeyboardInterrupt``) in the main thread, so that what
is under way unwinds as on Ctrl-C: the live progress line stops and shows the cursor again,
a ``dot`` being run is killed (``subprocess.run`` kills its child on any exception), the
temporary file of an output being written is removed, a Spark job is cancelled and the
session stopped.  The command then prints the violations found so far and the figures of the
search (those an engine or ``check`` noted with :func:`note_figures`) and exits with 128 + the signal's number, the
shells' convention: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.

A signal that arrives while the first one is being handled is ignored, so that the clean-up
runs to its end (SIGKILL still ends the process at once); so is one that was ignored when
the command started (``nohup``).
"""

from __future__ import annotations

import contextlib
import signal
import sys
from dataclasses import dataclass

#: The signals that stop a command cleanly.
STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def exit_code_for(signum: int) -> int:
    """The exit code of a command stopped by ``signum``: 128 + its number, as shells report it."""
    return 128 + signum


class Interrupted(KeyboardInterrupt):
    """A stopping signal arrived; a ``KeyboardInterrupt``, so that whatever unwinds on Ctrl-C
    unwinds on it too."""

    def __init__(self, signum: int = signal.SIGINT):
        self.signum = signum
        super().__init__(signal_name(signum))

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.signum)


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


@dataclass
class Figures:
    """What an interrupted command reports: the search's figures when it was stopped, and its
    verdict when it had ended (the interruption came while its results were written)."""

    distinct_states: int
    generated_states: int
    depth: int
    elapsed_s: float
    verdict: str | None = None
    #: what the search had found when it was stopped: (kind, name, shortest trace length),
    #: kind "invariant", "action" (a step property) or "deadlock"
    violations: tuple = ()


class _Stopping:
    """The process-wide state of signal handling (signals are process-wide)."""

    received: int | None = None
    figures: Figures | None = None


def received() -> int | None:
    """The stopping signal that arrived while handlers were installed, if one did."""
    return _Stopping.received


def note_figures(figures: Figures) -> None:
    """Keep ``figures`` as what an interruption from now on reports."""
    _Stopping.figures = figures


def _on_signal(signum, frame):
    if _Stopping.received is not None:
        return  # already stopping: let the clean-up of the first signal finish
    _Stopping.received = signum
    raise Interrupted(signum)


@contextlib.contextmanager
def stopping_on_signals():
    """Within: each of :data:`STOPPING_SIGNALS` raises :class:`Interrupted` in the main thread.

    Outside the main thread (a caller's thread running the CLI) signals cannot be handled
    there, and nothing is installed."""
    _Stopping.received = None
    _Stopping.figures = None
    previous = {}
    try:
        for signum in STOPPING_SIGNALS:
            # a signal ignored when the command started stays ignored: ``nohup`` ignores
            # SIGHUP, a shell ignores SIGINT in what it starts in the background
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, _on_signal)
    except ValueError:  # not the main thread
        pass
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def reinstall(signum: int, handler) -> None:
    """Put ``handler`` back for ``signum`` (after a library replaced it), from the main thread only."""
    try:
        signal.signal(signum, handler)
    except ValueError:
        pass


def report_interruption(interruption: KeyboardInterrupt, out=None, err=None) -> int:
    """Print what an interrupted command had done (on ``out``) and one error line (on ``err``);
    return the exit code.  A terminal that hung up (SIGHUP) cannot be written to: nothing is
    printed then, and the exit code still says what happened."""
    out = out or sys.stdout
    err = err or sys.stderr
    signum = getattr(interruption, "signum", signal.SIGINT)
    name = signal_name(signum)
    figures = _Stopping.figures
    found = [(line, out) for line in found_lines(figures.violations)] if figures and figures.verdict is None else []
    for line, stream in (*found, (figures_line(name, figures) if figures else None, out),
                         (f"kraftcheck: error: interrupted by {name}", err)):
        if line is None:
            continue
        try:
            print(line, file=stream, flush=True)
        except (OSError, ValueError):  # a closed or hung-up terminal
            pass
    return exit_code_for(signum)


def found_lines(violations) -> list[str]:
    """What a stopped search had found, as ``check`` reports it; its traces are not written."""
    said = {"invariant": "invariant {} is violated", "action": "step property {} is violated",
            "deadlock": "deadlock reached", "temporal": "temporal property {} is violated"}
    return [f"error: {said[kind].format(name)}; shortest trace: {length} states (found before the interruption; "
            "its trace is not written)" for kind, name, length in violations]


def figures_line(name: str, figures: Figures) -> str:
    counts = (f"{figures.distinct_states:,} distinct states, {figures.generated_states:,} generated, "
              f"depth {figures.depth:,} ({figures.elapsed_s:.2f} s)")
    if figures.verdict is not None:
        return f"interrupted by {name} while writing the results of the search ({figures.verdict}): {counts}"
    return f"interrupted by {name}: the search stopped after {counts}; the rest is unexplored"
