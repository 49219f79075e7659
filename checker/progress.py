"""Progress on stderr while a search runs: a live line on a terminal, a plain line otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from .bfs import Progress

#: Seconds between two plain progress lines (when stderr is not a terminal).
PLAIN_INTERVAL_S = 5.0


def _line(p: Progress) -> str:
    rate = p.distinct_states / p.elapsed_s if p.elapsed_s > 0 else 0.0
    return (
        f"depth {p.depth:,}  distinct {p.distinct_states:,}  generated {p.generated_states:,}  "
        f"queued {p.queued:,}  {rate:,.0f} states/s  {p.elapsed_s:,.0f} s"
    )


class PlainProgress:
    """One line every few seconds, for logs and CI."""

    def __init__(self, stream: TextIO = sys.stderr, interval_s: float = PLAIN_INTERVAL_S):
        self.stream = stream
        self.interval_s = interval_s
        self.last = time.monotonic()

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if now - self.last >= self.interval_s:
            self.last = now
            print(f"progress: {_line(p)}", file=self.stream, flush=True)

    def close(self) -> None:
        pass


class LiveProgress:
    """A single line redrawn in place by rich, for a terminal."""

    def __init__(self, stream: TextIO = sys.stderr):
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=stream)
        self.live = Live("", console=self.console, refresh_per_second=4, transient=True)
        self.live.start()
        self.last = 0.0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if now - self.last >= 0.25:
            self.last = now
            self.live.update(f"[bold cyan]checking[/] {_line(p)}")

    def close(self) -> None:
        try:
            self.live.stop()  # shows the cursor again
        except OSError:  # the terminal hung up (SIGHUP): nothing to show it on
            pass


def progress_reporter(quiet: bool, stream: TextIO = sys.stderr):
    """The reporter that fits ``stream``: none when quiet, live on a terminal, plain otherwise."""
    if quiet:
        return None
    if stream.isatty():
        return LiveProgress(stream)
    return PlainProgress(stream)
