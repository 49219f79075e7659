"""A counterexample of the checker as an ITF trace file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kraftcheck.checker.meanings import action_meanings, property_meanings
from kraftcheck.checker.protocol import action_name, action_params
from kraftcheck.checker.result import Counterexample

from .itf import encode, trace_document, write_json_atomically

#: The ``#meta`` action of the first state, which no action led to (TLA+'s Init).
INIT_ACTION = "Init"


def state_variables(model: Any, state: Any) -> dict[str, Any]:
    """The variables of a state as a trace shows them: the model's ``describe``, else the raw state."""
    describe = getattr(model, "describe", None)
    if describe is None:
        return {"state": state}
    return dict(describe(state))


def step_meta(action: Any, model: Any = None) -> dict[str, Any]:
    """The ``#meta`` entries for the action that led to a state: its name, its parameters,
    and the model's readable label for it when the model has ``describe_action``."""
    if action is None:
        return {"action": INIT_ACTION}
    meta = {"action": action_name(action), "params": [encode(p) for p in action_params(action)]}
    describe_action = getattr(model, "describe_action", None)
    if describe_action is not None:
        meta["label"] = describe_action(action)
    return meta


def counterexample_document(model: Any, counterexample: Counterexample, meta: dict[str, Any]) -> dict[str, Any]:
    states = [state_variables(model, state) for _, state in counterexample.trace]
    steps = [step_meta(action, model) for action, _ in counterexample.trace]
    # what the property and the trace's actions mean, for readers who never load the model
    meanings = {}
    meaning = property_meanings(model).get(counterexample.name)
    if meaning:
        meanings["meaning"] = meaning
    actions = action_meanings(model, dict.fromkeys(step["action"] for step in steps[1:]))
    if actions:
        meanings["actions"] = actions
    document = trace_document(
        states,
        steps,
        {
            "source": "kraftcheck",
            "kind": counterexample.kind,
            "invariant": counterexample.name,
            "length": counterexample.length,
            **meanings,
            **meta,
        },
    )
    if counterexample.loop is not None:
        document["loop"] = counterexample.loop  # ITF's lasso mark, as Apalache and Quint write it
    return document


def write_counterexample(
    path: str | os.PathLike, model: Any, counterexample: Counterexample, meta: dict[str, Any]
) -> Path:
    """Write ``counterexample`` as an ITF file at ``path`` (atomically) and return the path."""
    from .signature import sign

    # signed, so that this user's kraftcheck trusts the model it names (traces/signature.py)
    return write_json_atomically(path, sign(counterexample_document(model, counterexample, meta)))
