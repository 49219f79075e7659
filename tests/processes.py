"""What the tests that stop kraftcheck with signals need of the processes they start."""

from __future__ import annotations

import signal


def default_stopping_signals() -> None:
    """``preexec_fn``: the child starts with SIGINT, SIGTERM and SIGHUP at their defaults.

    A signal ignored when kraftcheck starts stays ignored (SIGHUP under ``nohup``, SIGINT in a
    shell's background job), so a test suite run that way would otherwise start children that
    never see the signal the test sends."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
