"""The trace subcommands of the CLI (``kraftcheck trace ...``, ``kraftcheck graph``)."""

from __future__ import annotations


def register(commands) -> None:
    """Add the trace subcommands to the CLI's subparsers."""
