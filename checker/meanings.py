"""What a model's properties and actions mean, in one line each, for people reading a report.

A property's meaning is the first sentence of its function's docstring (``invariants[name]``,
``action_invariants[name]``); an action's, the first sentence of the docstring of the model's
member of the same name, when it has one.  Nothing is required: a model without docstrings
is shown by its names alone."""

from __future__ import annotations

import inspect
import re
from typing import Any

#: Longest meaning shown, in characters.
MEANING_LIMIT = 200


def meaning_of(code: Any) -> str | None:
    """The first sentence of ``code``'s docstring on one line, or None."""
    try:
        doc = inspect.getdoc(code) if callable(code) else None
    except Exception:  # a model's member may be anything
        return None
    if not isinstance(doc, str) or not doc.strip():
        return None
    text = " ".join(doc.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    sentence = match.group(1) if match else text
    return sentence if len(sentence) <= MEANING_LIMIT else sentence[: MEANING_LIMIT - 1] + "…"


def property_meanings(model: Any) -> dict[str, str]:
    """name -> meaning of each invariant and step property that has one, and of each temporal
    property: its formula, with the model's member of that name's meaning when there is one."""
    found: dict[str, str] = {}
    for table in (getattr(model, "invariants", None) or {}, getattr(model, "action_invariants", None) or {}):
        try:
            items = list(table.items())
        except Exception:
            continue
        for name, code in items:
            meaning = meaning_of(code)
            if meaning:
                found[str(name)] = meaning
    try:
        temporal = list((getattr(model, "temporal_properties", None) or {}).items())
    except Exception:
        temporal = []
    for name, prop in temporal:
        formula = getattr(prop, "formula", None)
        # the model's member of the property's name says what it means, as an action's does
        meaning = meaning_of(getattr(model, name, None)) if isinstance(name, str) and name.isidentifier() else None
        if isinstance(formula, str):
            found[str(name)] = f"{formula}: {meaning}" if meaning else formula
    return found


def action_meanings(model: Any, names=None) -> dict[str, str]:
    """name -> meaning of each action (``names``, or the model's ``actions``) whose member has one."""
    try:
        names = list(names if names is not None else getattr(model, "actions", None) or [])
    except Exception:
        return {}
    found: dict[str, str] = {}
    for name in names:
        if isinstance(name, str) and name.isidentifier():
            meaning = meaning_of(getattr(model, name, None))
            if meaning:
                found[name] = meaning
    return found
