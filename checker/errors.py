"""What the command line says when something fails, and its exit codes for it.

One line on stderr, ``kraftcheck: error: ...``, with what the user gave escaped and cut to a
readable length; the model's own code failing is said with its file and line."""

from __future__ import annotations

import sys

from .workers import WorkerFailed, WorkerLost, describe_failure
from kraftcheck.traces.text import visible

EXIT_BAD_INPUT = 2


EXIT_MODEL_FAILED = 1


#: Longest error line, in characters: a message quoting what the user gave stays readable, and
#: one naming every mutant the model knows (an unknown mutant's) fits whole.
MAX_ERROR_LENGTH = 2000


class UsageError(Exception):
    pass


def error(message: str) -> None:
    message = visible(message)  # control characters and bidirectional overrides of any input escaped
    if len(message) > MAX_ERROR_LENGTH:
        message = f"{message[:MAX_ERROR_LENGTH]}... ({len(message) - MAX_ERROR_LENGTH:,} more characters)"
    try:
        print(f"kraftcheck: error: {message}", file=sys.stderr, flush=True)
    except OSError:
        pass  # stderr itself is gone: the exit code still tells


def model_failure(e: BaseException) -> str:
    """What the model's code did, with the file and line where it happened (in a worker of the
    search too, which said so itself); or that a worker was lost."""
    if isinstance(e, (WorkerFailed, WorkerLost)):
        return str(e)
    return describe_failure(e)


def search_failure(e: BaseException) -> str:
    """What stopped a search: the model's own code failing, or memory running out."""
    if isinstance(e, MemoryError):
        states = getattr(e, "distinct_states", None)
        after = f" after {states:,} distinct states" if states else ""
        return (f"out of memory{after}: bound the search with --max-states N or --max-depth N, or run it with "
                "--engine spark, whose visited states are spread over the executors")
    return model_failure(e)


def model_failed(e: BaseException) -> int:
    error(search_failure(e))
    return EXIT_MODEL_FAILED
