"""Independent tasks side by side, one forked process each (``check --suite -j N``, ``mutants -j N``).

Each task runs in a process of its own, at most ``jobs`` at a time, and its outcome comes back
pickled through a pipe.  Outcomes are handed on in the tasks' order, each as soon as it and
every task before it have finished, so that what a caller prints from them is the same,
line for line, whatever ``jobs`` is.  With one job the tasks run in this process, one after
the other, exactly as a loop would run them.

A task's process ignores SIGINT (a Ctrl-C reaches every process of the terminal's group; the
caller's process decides) and dies with the caller (``PR_SET_PDEATHSIG``).  When the caller
stops early (a signal, an exception) every running task's process is killed with SIGKILL.
This module knows nothing about what the tasks do."""

from __future__ import annotations

import multiprocessing
import os
import signal
import traceback
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Callable, Sequence, TypeVar

from .workers import die_with_parent

Outcome = TypeVar("Outcome")


@dataclass
class TaskLost:
    """A task's process ended without an outcome: killed (the out-of-memory killer), or its
    outcome could not be pickled (``reason`` says which)."""

    index: int
    reason: str


def run_tasks(tasks: Sequence[Callable[[], Outcome]], jobs: int,
              on_outcome: Callable[[int, Outcome | TaskLost], None]) -> None:
    """Run every task, at most ``jobs`` at once; call ``on_outcome(i, outcome)`` in the order of i."""
    if jobs <= 1 or len(tasks) <= 1:
        for i, task in enumerate(tasks):
            on_outcome(i, task())
        return
    context = multiprocessing.get_context("fork")
    running: dict = {}  # connection -> (index, process)
    finished: dict[int, object] = {}
    next_task = next_outcome = 0
    try:
        while next_outcome < len(tasks):
            while next_task < len(tasks) and len(running) < jobs:
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(target=_run_task, args=(tasks[next_task], sender), daemon=False)
                process.start()
                sender.close()
                running[receiver] = (next_task, process)
                next_task += 1
            for receiver in wait(list(running)):
                index, process = running.pop(receiver)
                finished[index] = _receive(index, receiver, process)
            while next_outcome in finished:
                on_outcome(next_outcome, finished.pop(next_outcome))
                next_outcome += 1
    finally:
        for receiver, (_, process) in running.items():
            _kill(process)
            receiver.close()


def _run_task(task: Callable[[], object], sender) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    outcome = task()
    try:
        sender.send(outcome)
    except Exception as e:  # an outcome that cannot be pickled
        sender.send(TaskLost(-1, f"its outcome cannot be sent back: {''.join(traceback.format_exception_only(e)).strip()}"))
    sender.close()


def _receive(index: int, receiver, process) -> object:
    try:
        outcome = receiver.recv()
    except (EOFError, OSError):
        process.join()
        code = process.exitcode
        how = f"was killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exited with code {code}"
        return TaskLost(index, f"its process (pid {process.pid}) {how} before it finished")
    finally:
        receiver.close()
    process.join()
    if isinstance(outcome, TaskLost):
        outcome.index = index
    return outcome


def _kill(process) -> None:
    try:
        os.kill(process.pid, signal.SIGKILL)
    except (ProcessLookupError, TypeError):
        pass
    process.join()
