"""The types of the command line's arguments: each a function from the text given to its value,
raising ``argparse.ArgumentTypeError`` with what was expected."""

from __future__ import annotations

import argparse

from .workers import available_cores

ENGINES = ("local", "spark")


def engine(text: str) -> str:
    if text not in ENGINES:
        raise argparse.ArgumentTypeError(f"unknown engine {text!r} (known: {', '.join(ENGINES)})")
    return text


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def workers_count(text: str) -> int:
    """``--workers``: a positive count, or ``auto``, every core this process may run on."""
    if text == "auto":
        return available_cores()
    try:
        return positive(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}") from None
