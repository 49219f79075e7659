"""A trace as the viewers and replay see it: steps of decoded variables, each with the action
that led to it, and what changed since the step before.

Any valid ITF file loads, whoever wrote it.  A kraftcheck trace names its action in each
state's ``#meta``; a Quint trace in its ``mbt::actionTaken`` variable; other traces have no
action names, and their steps are just numbered.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .itf import TraceFormatError, decode, json_kind, read_trace
from .signature import signed_here
from .text import excerpt

#: Longest meaning of a property or an action shown (a trace may hold megabytes of text).
MEANING_SHOWN = 240
#: The ``#meta`` source of the traces the checker writes.
KRAFTCHECK_SOURCE = "kraftcheck"
#: Variables in which Quint records the action taken (its model-based-testing mode).
QUINT_ACTION_VARIABLES = ("mbt::actionTaken", "action_taken")
#: Quint's record of the nondeterministic choices of a step: name -> Some(value) | None.
QUINT_PICKS_VARIABLES = ("mbt::nondetPicks", "nondet_picks")
#: Keys of a trace's ``#meta`` the readers use, each a string when present.
META_STRINGS = ("source", "model", "kind", "invariant", "status", "meaning")
#: Longest step label and title: a trace may name an action with megabytes of text.
LABEL_LIMIT = 200


@dataclass
class Step:
    """One state of a trace and the action that led to it."""

    #: the position in the trace, from 0; shown as :attr:`number`, from 1, as TLC numbers states
    index: int
    #: the action's name ("Init" for the first state of a kraftcheck trace), or None when unknown
    action: str | None
    #: the action's parameters, decoded
    params: list[Any]
    #: variable -> decoded value
    values: dict[str, Any]
    #: variable -> value exactly as in the file (ITF form)
    raw: dict[str, Any]
    #: variables whose value differs from the step before (every variable for the first step)
    changed: list[str] = field(default_factory=list)
    #: the state's own ``#meta``, unknown keys included
    meta: dict[str, Any] = field(default_factory=dict)
    #: named parameters (Quint's nondeterministic picks), shown as ``name=value``
    picks: dict[str, Any] = field(default_factory=dict)

    @property
    def number(self) -> int:
        """The state's number as every view shows it: 1 for the initial state, as TLC and ``check`` count."""
        return self.index + 1

    @property
    def label(self) -> str:
        """The action as a reader sees it: the model's own label when the trace records one,
        else ``Name(p1, p2)``, or ``step i`` when unknown."""
        if isinstance(self.meta.get("label"), str):
            return excerpt(self.meta["label"], LABEL_LIMIT)
        if self.action is None:
            return f"step {self.number}"
        arguments = [format_value(p, LABEL_LIMIT) for p in self.params] + [
            f"{excerpt(k, LABEL_LIMIT)}={format_value(v, LABEL_LIMIT)}" for k, v in self.picks.items()]
        label = f"{self.action}({', '.join(arguments)})" if arguments else self.action
        return excerpt(label, LABEL_LIMIT)


@dataclass
class Trace:
    path: str
    meta: dict[str, Any]
    variables: list[str]
    steps: list[Step]
    loop: int | None = None
    #: written and signed by this user's kraftcheck (:mod:`.signature`): the model it names is trusted
    signed: bool = False

    @property
    def written_by_kraftcheck(self) -> bool:
        return self.meta.get("source") == KRAFTCHECK_SOURCE and isinstance(self.meta.get("model"), str)

    @property
    def verdict(self) -> str | None:
        """What the last state (or step) shows, in words; None when the trace does not say."""
        kind, name = self.meta.get("kind"), self.meta.get("invariant")
        kind, name = kind and excerpt(kind, LABEL_LIMIT), name and excerpt(name, LABEL_LIMIT)
        last = len(self.steps) - 1
        if kind == "invariant":
            return f"state {last + 1} violates the invariant {name}"
        if kind == "action":
            return f"step {last + 1} ({self.steps[last].action}) violates the step property {name}"
        if kind == "deadlock":
            return f"state {last + 1} is a deadlock: no action is enabled"
        if kind == "temporal":
            return f"the behaviour violates the temporal property {name}"
        if self.meta.get("status") == "violation" or kind is not None:
            return f"the last state ({last + 1}) is a {kind or 'violation'}"
        return None

    @property
    def loop_note(self) -> str | None:
        """For a lasso (ITF's ``loop``): where the last state goes back to."""
        if self.loop is None:
            return None
        last = len(self.steps) - 1
        if self.loop == last:
            return f"state {last + 1} stutters for ever: from step {last + 1} on, nothing changes"
        if self.steps[last].raw == self.steps[self.loop].raw:  # kraftcheck's lassos, and Apalache's
            return (f"state {last + 1} is state {self.loop + 1} again: from step {self.loop + 1}, "
                    f"the steps to state {last + 1} repeat for ever")
        return f"then back to state {self.loop + 1}: the steps from there repeat forever"

    @property
    def meaning(self) -> str | None:
        """What the violated property means, in one line, as the writer's model says (``#meta.meaning``)."""
        meaning = self.meta.get("meaning")
        return excerpt(meaning, MEANING_SHOWN) if isinstance(meaning, str) and meaning else None

    def action_meaning(self, action: str | None) -> str | None:
        """What an action means, in one line, as the writer's model says (``#meta.actions``)."""
        actions = self.meta.get("actions")
        meaning = actions.get(action) if isinstance(actions, dict) and isinstance(action, str) else None
        return excerpt(meaning, MEANING_SHOWN) if isinstance(meaning, str) and meaning else None

    @property
    def title(self) -> str:
        """What the trace shows, and where: ``ci.toml: FencedBrokerLeadsNothing`` (its config's
        file), else the model's reference, else the trace file's name."""
        config = self.meta.get("config")
        source = config.get("source") if isinstance(config, dict) else None
        if isinstance(source, str) and source.startswith("<embedded ") and source.endswith(">"):
            source = source[len("<embedded "):-1]  # the embedded default config, by its name
        where = os.path.basename(source) if isinstance(source, str) and source and not source.startswith("<") else None
        where = where or self.meta.get("model") or self.meta.get("source") or os.path.basename(self.path)
        what = self.meta.get("invariant") or self.meta.get("status") or "trace"
        return f"{excerpt(where, LABEL_LIMIT)}: {excerpt(what, LABEL_LIMIT)}"


def load_trace(path: str | os.PathLike) -> Trace:
    """Read, validate and decode an ITF file; :class:`TraceFormatError` on anything invalid."""
    document = read_trace(path)
    meta = document.get("#meta", {})
    if not isinstance(meta, dict):
        raise TraceFormatError(f"{path}: '#meta' must be a JSON object")
    for key in META_STRINGS:
        if key in meta and not isinstance(meta[key], str):
            raise TraceFormatError(f"{path}: '#meta' {key} must be a string, not {json_kind(meta[key])}")
    variables = list(document.get("vars") or _variables_of(document["states"]))
    if not document["states"]:
        raise TraceFormatError(f"{path} holds no states")
    steps: list[Step] = []
    for index, state in enumerate(document["states"]):
        state_meta = state.get("#meta", {})
        if not isinstance(state_meta, dict):
            raise TraceFormatError(f"{path}: state {index + 1}: '#meta' must be a JSON object")
        raw = {v: state[v] for v in variables if v in state}
        if not isinstance(state_meta.get("params", []), list):
            raise TraceFormatError(f"{path}: state {index + 1}: '#meta' params must be a list")
        try:
            values = {v: decode(raw[v]) for v in raw}
            params = [decode(p) for p in state_meta.get("params", [])]
        except TraceFormatError as e:
            raise TraceFormatError(f"{path}: state {index + 1}: {e}") from None
        action = state_meta.get("action")
        picks: dict[str, Any] = {}
        if action is None:
            action = next((values[v] for v in QUINT_ACTION_VARIABLES if isinstance(values.get(v), str)), None)
            picks = _quint_picks(next((values[v] for v in QUINT_PICKS_VARIABLES if v in values), None))
        elif not isinstance(action, str):
            raise TraceFormatError(f"{path}: state {index + 1}: '#meta' action must be a string")
        step = Step(index, action, params, values, raw, meta=state_meta, picks=picks)
        if steps:
            previous = steps[-1].values
            step.changed = [v for v in variables if v in values and (v not in previous or previous[v] != values[v]
                                                                   or _kinds(previous[v]) != _kinds(values[v]))]
        else:
            step.changed = list(values)
        steps.append(step)
    return Trace(str(path), meta, variables, steps, document.get("loop"), signed_here(document))


def _quint_picks(picks: Any) -> dict[str, Any]:
    """The choices Quint made in a step: the ``Some`` ones of ``{name: {tag, value}}``."""
    if not isinstance(picks, dict):
        return {}
    return {str(name): pick["value"] for name, pick in picks.items()
            if isinstance(pick, dict) and pick.get("tag") == "Some" and "value" in pick}


def _variables_of(states: list[dict]) -> list[str]:
    seen: dict[str, None] = {}
    for state in states:
        for key in state:
            if key != "#meta":
                seen.setdefault(key, None)
    return list(seen)


def _kinds(value: Any) -> Any:
    """The shape of a value, so that ``True`` and ``1`` (equal in Python) count as a change."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_kinds(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), _kinds(v)) for k, v in value.items())))
    return type(value).__name__


# ------------------------------------------------------------------------- formatting


def format_value(value: Any, limit: int | None = None) -> str:
    """A decoded value in a compact, readable form: lists ``[a, b]``, tuples ``<<a, b>>``
    (TLA+'s), sets ``{a, b}``, records ``{field: v}``, maps ``{k -> v}``."""
    text = _format(value)
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


def _format(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value if _is_word(value) else _quote(value)
    if isinstance(value, tuple):
        return "<<" + ", ".join(_format(v) for v in value) + ">>"
    if isinstance(value, list):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    if isinstance(value, frozenset | set):
        return "{" + ", ".join(sorted(_format(v) for v in value)) + "}"
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return "{" + ", ".join(f"{k}: {_format(v)}" for k, v in value.items()) + "}"
        return "{" + ", ".join(f"{_format(k)} -> {_format(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _is_word(text: str) -> bool:
    return bool(text) and all(c.isalnum() or c in "_-.:" for c in text) and not text[0].isdigit()


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def value_changes(old: Any, new: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Where two values differ, as ``(path, old, new)`` leaves: ``[1].leader`` inside lists of
    records, so that a reader sees the one field that changed rather than the whole variable."""
    if _same(old, new):
        return []
    if isinstance(old, list) and isinstance(new, list):
        if len(old) == len(new):
            # item by item, unless reading the list as a bag says it in fewer changes
            differing = [i for i, (o, n) in enumerate(zip(old, new)) if o != n or not _same(o, n)]
            if len(differing) > 1:
                bag = _bag_changes(old, new, path)
                if bag and len(bag) <= len(differing):
                    return bag
            return [c for i in differing for c in value_changes(old[i], new[i], f"{path}[{i}]")]
        bag = _bag_changes(old, new, path)
        if bag:
            return bag
    if isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new):
        return [c for i, (o, n) in enumerate(zip(old, new)) for c in value_changes(o, n, f"{path}[{i}]")]
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        changes = []
        for key in old:
            where = f"{path}.{key}" if isinstance(key, str) and _is_word(key) else f"{path}[{_format(key)}]"
            changes.extend(value_changes(old[key], new[key], where))
        return changes
    return [(path, old, new)]


#: Most changes of one variable in one step that ``show`` and the page list: a reader wants
#: the first ones, and listing tens of thousands (a list rebuilt) takes seconds.
CHANGES_SHOWN = 50


def listed_changes(old: Any, new: Any) -> tuple[list[tuple[str, Any, Any]], int]:
    """The first :data:`CHANGES_SHOWN` of :func:`value_changes`, and how many more there are."""
    changes = value_changes(old, new)
    return changes[:CHANGES_SHOWN], max(len(changes) - CHANGES_SHOWN, 0)


#: Stands for "no value" in :func:`value_changes`: an item added to or removed from a list.
ABSENT = type("Absent", (), {"__repr__": lambda self: "ABSENT"})()


def _bag_changes(old: list, new: list, path: str) -> list[tuple[str, Any, Any]] | None:
    """A list read as a bag (messages in flight): the items removed, then the items added.

    Items are matched by a hashable identity, so that lists of any length compare in linear
    time; an item of ``old`` matches the first unmatched equal item of ``new``."""
    old_keys, new_keys = list(map(_identity, old)), list(map(_identity, new))
    unmatched_new = Counter(new_keys)
    removed = []
    for item, key in zip(old, old_keys):
        if unmatched_new[key]:
            unmatched_new[key] -= 1
        else:
            removed.append(item)
    matched = Counter(old_keys)
    remaining = []
    for item, key in zip(new, new_keys):
        if matched[key]:
            matched[key] -= 1
        else:
            remaining.append(item)
    if len(removed) + len(remaining) > max(len(old), len(new)):
        return None  # nothing in common: the whole value changed
    return [(path, item, ABSENT) for item in removed] + [(path, ABSENT, item) for item in remaining]


def _identity(value: Any) -> Any:
    """A hashable form of a decoded value that is equal for equal values of the same kinds
    (Python equates ``True`` with ``1`` and ignores the kind of a sequence; this does not)."""
    kind = type(value)
    if kind is int or kind is str:
        return value
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, tuple):
        return ("tuple", tuple(_identity(v) for v in value))
    if isinstance(value, list):
        return ("list", tuple(_identity(v) for v in value))
    if isinstance(value, frozenset | set):
        return ("set", frozenset(_identity(v) for v in value))
    if isinstance(value, dict):
        return ("dict", frozenset((_identity(k), _identity(v)) for k, v in value.items()))
    return value


def _same(a: Any, b: Any) -> bool:
    if not a == b:
        return False
    kind = type(a)
    if kind is type(b) and (kind is int or kind is str):
        return True
    return _kinds(a) == _kinds(b)
