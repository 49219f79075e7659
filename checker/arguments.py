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


def _integer_from(text: str, low: int, what: str) -> int:
    """``text`` as an integer of at least ``low``; ``what`` names what was expected."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def positive(text: str) -> int:
    return _integer_from(text, 1, "a positive integer")


def workers_count(text: str) -> int:
    """``--workers``: a positive count, or ``auto``, every core this process may run on."""
    if text == "auto":
        return available_cores()
    try:
        return positive(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}") from None


def seed(text: str) -> int:
    """``--seed``: a non-negative integer."""
    return _integer_from(text, 0, "a non-negative integer")


_UNITS = {"s": 1, "m": 60, "h": 3600}


def duration(text: str) -> float:
    """``--time``: seconds, or a number with the unit s, m or h (``90``, ``90s``, ``5m``, ``1h``)."""
    number, unit = (text[:-1], text[-1]) if text[-1:] in _UNITS else (text, "s")
    try:
        value = float(number) * _UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a duration such as 90, 90s, 5m or 1h, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive duration, got {text!r}")
    return value
