"""Replay: is every step of a trace a legal transition of the model, and does it end where it says?

The model is rebuilt from the trace's ``#meta`` (its ``MODULE:FACTORY`` and config settings),
or given by the caller for traces written elsewhere.  Replay starts from every initial state
whose ``describe()`` equals state 0 and follows, step by step, every successor whose action
(name and parameters) and ``describe()`` equal the next state's: ``describe`` need not be
one-to-one, so several model states may stand for one trace state.  At the end, the last
state must violate the named invariant (or be a deadlock, or the last step violate the named
step property).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, NoReturn

from kraftcheck.checker.config import CheckConfig, ConfigError, build_model, parse_override
from kraftcheck.checker.protocol import action_name, action_params

from .counterexample import INIT_ACTION, state_variables
from .itf import TraceFormatError, decode, encode, freeze, json_kind
from .text import excerpt
from .trace import ABSENT, Step, Trace, format_value, value_changes

#: How many characters of a value an error message shows.
VALUE_LIMIT = 120
#: Longest message of a model that rejects the settings a trace records.
MESSAGE_LIMIT = 300

#: The models kraftcheck ships, as a trace names them in its ``#meta``.  Reading a trace
#: builds one of these, or the model the reader passes with ``--model``, and nothing else:
#: whoever wrote the trace does not choose the code that runs.
SHIPPED_MODELS = ("kraftcheck.model:make_model", "kraftcheck.examples.diehard:make_model",
                  "kraftcheck.examples.twophase:make_model")


class UntrustedModel(ConfigError):
    """A trace names a model that kraftcheck does not ship, and the reader passed no ``--model``."""


class ReplayFailed(Exception):
    """The trace is not a run of the model: ``step`` is where it goes wrong."""

    def __init__(self, step: int, message: str):
        super().__init__(message)
        self.step = step


@dataclass
class ReplayReport:
    model: str
    states: int
    ending: str


def model_for(trace: Trace, model_ref: str | None = None, overrides: list[str] | None = None):
    """The model a trace was written from: its ``#meta`` model and settings, with ``--model`` and
    ``--set`` applied.  A trace written elsewhere needs ``--model``; a trace naming a model
    that kraftcheck does not ship needs it too (:class:`UntrustedModel`)."""
    if model_ref is None and not trace.written_by_kraftcheck:
        writer = excerpt(trace.meta.get("source") or "another tool")
        raise ConfigError(
            f"{trace.path} was not written by kraftcheck ({writer}): replay needs a kraftcheck model, "
            "given with --model MODULE:FACTORY (and --set KEY=VALUE for its settings)"
        )
    settings = trace_settings(trace) if trace.written_by_kraftcheck else {}
    if model_ref is not None and model_ref != trace.meta.get("model"):
        settings = {}
    if model_ref is None and trace.meta["model"] not in SHIPPED_MODELS and not trace.signed:
        named = excerpt(trace.meta["model"])
        raise UntrustedModel(f"{trace.path}: the trace names model {named}, which kraftcheck does not ship, and it is "
                             f"not a trace this user's kraftcheck wrote as it stands; pass --model {named} to trust it")
    for item in overrides or []:
        key, value = parse_override(item)
        settings[key] = value
    ref = model_ref or trace.meta["model"]
    try:
        return ref, build_model(CheckConfig(model=ref, settings=settings))
    except ConfigError as e:  # a model's message may quote a setting of the trace whole
        raise ConfigError(excerpt(e, MESSAGE_LIMIT)) from None


def trace_settings(trace: Trace) -> dict[str, Any]:
    """The model settings a kraftcheck trace records (``#meta.config.settings``), checked to
    be what a config file can hold: a JSON object of finite numbers, strings and booleans."""
    config = trace.meta.get("config", {})
    if not isinstance(config, dict):
        raise TraceFormatError(f"{trace.path}: '#meta' config must be a JSON object, not {json_kind(config)}")
    settings = config.get("settings", {})
    if not isinstance(settings, dict):
        raise TraceFormatError(f"{trace.path}: '#meta' config.settings must be a JSON object, not {json_kind(settings)}")
    for key, value in settings.items():
        if not _setting_value(value):
            raise TraceFormatError(f"{trace.path}: '#meta' config.settings {excerpt(key)} is {excerpt(json.dumps(value))}, "
                                   "not a finite number, a string or a boolean")
    return dict(settings)


def _setting_value(value: Any) -> bool:
    # what TOML can write: no null, no infinity (JSON's 1e400 reads as one)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):  # a TOML array
        return all(_setting_value(v) for v in value)
    if isinstance(value, dict):  # a TOML table
        return all(_setting_value(v) for v in value.values())
    return isinstance(value, (str, int))


def replay(trace: Trace, model: Any, model_ref: str = "") -> ReplayReport:
    """Check ``trace`` against ``model``; raise :class:`ReplayFailed` at the first step that is wrong."""
    first = trace.steps[0]
    # candidate model states for the current trace state -> (previous state, action) that led there
    candidates: dict[Any, tuple[Any, Any]] = {}
    for state in model.init_states():
        if _matches(model, state, first):
            candidates.setdefault(state, (None, None))
    if not candidates:
        raise ReplayFailed(0, f"state 1: {_closest_init(model, first)}")
    for step in trace.steps[1:]:
        candidates = _advance(model, trace, step, candidates)
    return ReplayReport(model_ref, len(trace.steps), _check_ending(model, trace, candidates))


def concrete_run(trace: Trace, model: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    """One run of ``model`` that the trace stands for: its initial state and every step as
    ``(action, state)``, each state one whose ``describe()`` equals the trace's.  Where several
    model states stand for a trace state, the run ends in one that shows the trace's ending (its
    invariant violated, its step property broken) when the trace names one.  Raises
    :class:`ReplayFailed` as :func:`replay` does."""
    first = trace.steps[0]
    layers: list[dict[Any, tuple[Any, Any]]] = [{}]
    for state in model.init_states():
        if _matches(model, state, first):
            layers[0].setdefault(state, (None, None))
    if not layers[0]:
        raise ReplayFailed(0, f"state 1: {_closest_init(model, first)}")
    for step in trace.steps[1:]:
        layers.append(_advance(model, trace, step, layers[-1]))
    last = next(iter(layers[-1]))
    kind, name = trace.meta.get("kind"), trace.meta.get("invariant")
    if kind == "invariant" and name in (getattr(model, "invariants", None) or {}):
        last = next((s for s in layers[-1] if not model.invariants[name](s)), last)
    elif kind == "action" and name in (getattr(model, "action_invariants", None) or {}):
        predicate = model.action_invariants[name]
        last = next((s for s, (p, a) in layers[-1].items() if not predicate(p, a, s)), last)
    steps: list[tuple[Any, Any]] = []
    state = last
    for layer in reversed(layers[1:]):
        previous, action = layer[state]
        steps.append((action, state))
        state = previous
    steps.reverse()
    return state, steps


def _advance(model, trace: Trace, step: Step, candidates: dict) -> dict:
    i = step.index
    wanted_params = _normal(step.meta["params"]) if "params" in step.meta else None
    known_action = step.action is not None and "action" in step.meta
    next_candidates: dict[Any, tuple[Any, Any]] = {}
    near_miss = None  # (action, successor): the trace's action, leading to another state
    for state in candidates:
        for action, successor in model.successors(state):
            if known_action and action_name(action) != step.action:
                continue
            if wanted_params is not None and _normal([encode(p) for p in action_params(action)]) != wanted_params:
                continue
            if _matches(model, successor, step):
                next_candidates.setdefault(successor, (state, action))
            elif near_miss is None:
                near_miss = (action, successor)
    if next_candidates:
        return next_candidates
    if not known_action:
        raise ReplayFailed(i, f"step {i + 1}: no action of the model leads from state {i} to state {i + 1}")
    if near_miss is None:
        raise ReplayFailed(i, f"step {i + 1}: {step.label} is not enabled in state {i}")
    action, successor = near_miss
    return _differs(model, step, successor)


def _differs(model, step: Step, successor) -> NoReturn:
    """Say where the model's successor and the trace's state first differ (the innermost field)."""
    i = step.index
    expected = {k: encode(v) for k, v in state_variables(model, successor).items()}
    for variable in sorted(set(expected) | set(step.raw), key=_order(step)):
        if variable not in step.raw:
            raise ReplayFailed(i, f"step {i + 1}: {step.label}: the trace lacks variable {excerpt(variable)}")
        if variable not in expected:
            raise ReplayFailed(i, f"step {i + 1}: {step.label}: the model has no variable {excerpt(variable)}")
        if _normal(expected[variable]) != _normal(step.raw[variable]):
            model_value, trace_value = decode(expected[variable]), step.values[variable]
            path = ""
            changes = value_changes(trace_value, model_value)
            if len(changes) == 1 and ABSENT not in changes[0][1:]:
                path, trace_value, model_value = changes[0]
            raise ReplayFailed(
                i, f"step {i + 1}: {step.label} leads to {excerpt(variable + path)} = {format_value(model_value, VALUE_LIMIT)}, "
                   f"but the trace has {format_value(trace_value, VALUE_LIMIT)}"
            )
    raise ReplayFailed(i, f"step {i + 1}: {step.label} does not lead to state {i + 1}")  # pragma: no cover


def _order(step: Step):
    position = {v: n for n, v in enumerate(step.raw)}
    return lambda v: (position.get(v, len(position)), v)


def _closest_init(model, first: Step) -> str:
    states = list(model.init_states())
    if not states:
        return "the model has no initial state"
    expected = {k: encode(v) for k, v in state_variables(model, states[0]).items()}
    for variable, value in expected.items():
        if variable not in first.raw:
            return f"the trace lacks variable {excerpt(variable)}"
        if _normal(value) != _normal(first.raw[variable]):
            return (f"no initial state of the model matches: it has {variable} = "
                    f"{format_value(decode(value), VALUE_LIMIT)}, the trace has "
                    f"{format_value(first.values[variable], VALUE_LIMIT)}")
    return "no initial state of the model matches it"


def _check_ending(model, trace: Trace, candidates: dict) -> str:
    kind, invariant = trace.meta.get("kind"), trace.meta.get("invariant")
    name = excerpt(invariant)  # as messages show it
    last = len(trace.steps) - 1
    if not trace.written_by_kraftcheck or kind is None:
        return "the trace names no invariant to check at its end"
    if kind == "invariant":
        predicate = (getattr(model, "invariants", None) or {}).get(invariant)
        if predicate is None:
            raise ReplayFailed(last, f"the model has no invariant named {name}")
        if any(not predicate(state) for state in candidates):
            return f"state {last + 1} violates {name}"
        raise ReplayFailed(last, f"state {last + 1} does not violate {name}")
    if kind == "action":
        predicate = (getattr(model, "action_invariants", None) or {}).get(invariant)
        if predicate is None:
            raise ReplayFailed(last, f"the model has no step property named {name}")
        if last == 0:
            raise ReplayFailed(0, f"a trace of one state cannot violate the step property {name}")
        if any(not predicate(previous, action, state) for state, (previous, action) in candidates.items()):
            return f"step {last + 1} ({trace.steps[last].label}) violates {name}"
        raise ReplayFailed(last, f"step {last + 1} ({trace.steps[last].label}) does not violate {name}")
    if kind == "deadlock":
        if any(next(iter(model.successors(state)), None) is None for state in candidates):
            return f"state {last + 1} is a deadlock"
        raise ReplayFailed(last, f"state {last + 1} is not a deadlock: {_enabled(model, candidates)} is enabled")
    if kind == "temporal":
        return _check_lasso(model, trace)
    raise ReplayFailed(last, f"unknown counterexample kind {excerpt(repr(kind))} in the trace's #meta")


def _check_lasso(model, trace: Trace) -> str:
    """A lasso's checks: its loop closes, keeps the model's fairness, and breaks the property."""
    from kraftcheck.checker.temporal import declared_fairness, lasso_violates, loop_unfairness

    name = excerpt(trace.meta.get("invariant"))
    last = len(trace.steps) - 1
    prop = (getattr(model, "temporal_properties", None) or {}).get(trace.meta.get("invariant"))
    if prop is None:
        raise ReplayFailed(last, f"the model has no temporal property named {name}")
    if trace.loop is None:
        raise ReplayFailed(last, "the trace of a temporal property must be a lasso: it has no 'loop'")
    first, steps = concrete_run(trace, model)
    states = [first] + [state for _, state in steps]
    loop = trace.loop
    if loop < last and states[last] != states[loop]:
        raise ReplayFailed(last, f"the loop does not close: state {last + 1} is not state {loop + 1} again")
    looped = states[loop:last] if loop < last else [states[last]]
    unfair = loop_unfairness(model, declared_fairness(model), looped, steps[loop:last])
    if unfair:
        raise ReplayFailed(last, f"the loop from state {loop + 1} is not fair: {unfair}")
    if not lasso_violates(prop, states, loop):
        raise ReplayFailed(last, f"the lasso does not violate {name} ({prop.formula})")
    where = (f"state {loop + 1} stutters for ever" if loop == last
             else f"the loop from state {loop + 1} closes")
    return f"{where}, keeps the model's fairness, and violates {name} ({prop.formula})"


def _enabled(model, candidates: dict) -> str:
    for state in candidates:
        for action, _ in model.successors(state):
            params = action_params(action)
            return action_name(action) + (f"({', '.join(format_value(p) for p in params)})" if params else "")
    return "nothing"  # pragma: no cover


def _matches(model, state, step: Step) -> bool:
    variables = state_variables(model, state)
    if variables.keys() != step.raw.keys():
        return False
    return all(_normal(encode(value)) == _normal(step.raw[name]) for name, value in variables.items())


def _normal(itf_value: Any) -> Any:
    """An ITF value in a form where equal values are equal: sets unordered, records as pairs."""
    return freeze(_tagged(decode(itf_value)))


def _tagged(value: Any) -> Any:
    # keep apart what Python equates: True/1, tuples/lists
    if isinstance(value, bool):
        return ("#bool", value)
    if isinstance(value, tuple):
        return ("#tup", tuple(_tagged(v) for v in value))
    if isinstance(value, list):
        return ("#seq", tuple(_tagged(v) for v in value))
    if isinstance(value, frozenset):
        return ("#set", frozenset(_tagged(v) for v in value))
    if isinstance(value, dict):
        return ("#rec", frozenset((freeze(_tagged(k)), freeze(_tagged(v))) for k, v in value.items()))
    return value


__all__ = ["ReplayFailed", "ReplayReport", "concrete_run", "SHIPPED_MODELS", "UntrustedModel", "model_for", "replay", "trace_settings",
           "INIT_ACTION"]
