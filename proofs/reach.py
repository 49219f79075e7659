"""Is a counterexample to induction reachable?  Looked up among the runs of small configs of
the model.

For a step that is not proven (an action against a property), the lookup asks the model itself:
is there a reachable state of a lookup config where every invariant holds and a step of that
action (one of the model's successors: its request in flight, its guard true) breaks the
property?  The z3 step relation takes exactly the model's steps there
(tests/test_prove_differential.py).  One found: a run breaks the property at that step, a real
violation; the shallowest such state is reported with its depth.  None found: no run at those
bounds takes such a step; the property needs strengthening, or larger bounds reach it.

A counterexample is written as a two-state ITF trace: the reachable state and the model's step
when one was found, else z3's own pre- and post-state, the controller's variables taken from
the solver and the brokers' left as the model's initial state has them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path

import z3

from kraftcheck.model import make_model

from . import induction
from .concrete import fixed_to

#: The lookup configs: partition 0 on every broker, a restart, designated elections; the first
#: with a directory failure, a move and AlterReplicaState; run under the semantics whose handlers
#: are checked.
LOOKUP = {
    "1 broker × 2 dirs": dict(brokers=1, dirs_per_broker=2, partitions=1, replication_factor=1, restarts=1,
                              dir_failures=1, max_messages=2, moves=1, alter_replica_state=True, semantics="code",
                              designated=True),
    "2 brokers × 1 dir": dict(brokers=2, dirs_per_broker=1, partitions=1, replication_factor=2, restarts=1,
                              dir_failures=0, max_messages=2, semantics="code", designated=True),
}


@dataclass
class Reached:
    """Where a run takes a step that breaks a property."""

    config: str
    #: the depth of the state the step leaves
    depth: int
    model: object
    pre: tuple
    action: tuple
    post: tuple
    #: a shortest run to ``pre``: ((action or None, state), ...) from an initial state
    run: tuple = ()


class LookupSpace:
    """A lookup config's reachable states, each with its depth and the step that first found it."""

    def __init__(self, name: str, settings: dict):
        self.name, self.model = name, make_model(settings)
        init = list(self.model.init_states())
        self.depth = {s: 0 for s in init}
        self.parent: dict[tuple, tuple | None] = {s: None for s in init}
        queue = deque(init)
        while queue:
            s = queue.popleft()
            for action, t in self.model.successors(s):
                if t not in self.depth:
                    self.depth[t] = self.depth[s] + 1
                    self.parent[t] = (s, action)
                    queue.append(t)
        self.in_order = sorted(self.depth, key=self.depth.get)

    def run_to(self, state) -> tuple:
        """A shortest run from an initial state to ``state``: ((action or None, state), ...)."""
        steps = []
        while self.parent[state] is not None:
            previous, action = self.parent[state]
            steps.append((action, state))
            state = previous
        steps.append((None, state))
        return tuple(reversed(steps))


_SPACES: dict[tuple[str, str], LookupSpace] = {}


def spaces(semantics: str = "code") -> list[LookupSpace]:
    """The lookup configs' reachable states under ``semantics`` (explored once per process)."""
    for name, settings in LOOKUP.items():
        if (name, semantics) not in _SPACES:
            _SPACES[name, semantics] = LookupSpace(name, dict(settings, semantics=semantics))
    return [_SPACES[name, semantics] for name in LOOKUP]


def look_up(action: induction.Action, prop: induction.Property, mutant: str, semantics: str = "code") -> Reached | None:
    """The shallowest step of ``action`` that breaks ``prop`` from a state where every model
    invariant of :data:`induction.PROPERTIES` holds, over the lookup configs."""
    found = None
    for space in spaces(semantics):
        model = space.model if mutant == "none" else make_model(dict(LOOKUP[space.name], semantics=semantics,
                                                                      mutant=mutant))
        invariants = [model.invariants[p.name] for p in induction.PROPERTIES if p.name in model.invariants]
        breaks = _breaks(model, prop, mutant)
        for s in space.in_order:
            if found is not None and space.depth[s] >= found.depth:
                break
            if not all(holds(s) for holds in invariants):
                continue
            step = next(((a, t) for a, t in model.successors(s) if a[0] in action.model_actions and breaks(t)), None)
            if step is not None:
                found = Reached(space.name, space.depth[s], model, s, *step, run=space.run_to(s))
                break
    return found


def _breaks(model, prop: induction.Property, mutant: str):
    """Whether a model state breaks ``prop``: the model's own invariant, or for a helper lemma
    its z3 statement evaluated on the state."""
    if prop.name in model.invariants:
        holds = model.invariants[prop.name]
        return lambda state: not holds(state)
    n, dirs = model.settings.brokers, model.settings.dirs_per_broker

    def broken(state) -> bool:
        s = induction.ControllerState(n, dirs, "")
        solver = z3.Solver()
        solver.add(fixed_to(s, model.controller_image(state)), z3.Not(prop.holds(s, mutant)))
        return solver.check() == z3.sat

    return broken


def cti_document(cell: induction.Cell, n: int, dirs: int, semantics: str = "code") -> dict:
    """The two-state ITF trace of a counterexample to induction."""
    from kraftcheck.traces.counterexample import state_variables
    from kraftcheck.traces.itf import trace_document

    reached = cell.reached
    if reached is not None:
        model, pre, post = reached.model, reached.pre, reached.post
        label = model.describe_action(reached.action)
        where = {"reachable": True, "lookup_config": reached.config, "depth": reached.depth}
    else:
        settings = dict(brokers=n, dirs_per_broker=dirs, partitions=1, replication_factor=n, semantics=semantics)
        model = make_model(settings)
        pre, post = cell.states(model)
        label = f"{cell.action} (z3's step)"
        where = {"reachable": False, "lookup_configs": list(LOOKUP),
                 "note": "the controller's variables from the solver; the brokers' as Init has them"}
    return trace_document(
        [state_variables(model, pre), state_variables(model, post)],
        [None, {"action": cell.action, "label": label}],
        {"source": "kraftcheck prove --induction", "kind": "counterexample to induction", "action": cell.action,
         "invariant": cell.prop, "length": 2, "model": "kraftcheck.model:make_model",
         "config": {"model": "kraftcheck.model:make_model", "settings": asdict(model.settings)}, **where},
    )


def write_cti(directory: Path, cell: induction.Cell, document: dict, suffix: str = "") -> Path:
    from kraftcheck.traces.itf import write_json_atomically

    return write_json_atomically(directory / f"{cell.action}_{cell.prop}{suffix}.itf.json", document)


def classify(cells: list[induction.Cell], mutant: str, semantics: str = "code") -> None:
    """Look every counterexample's step up (``cell.reached``: where a run takes it, or None)."""
    actions = {a.name: a for a in induction.ACTIONS_BY_SEMANTICS[semantics]}
    props = {p.name: p for p in induction.PROPERTIES}
    for cell in cells:
        if cell.result == "counterexample" and cell.action in actions:
            cell.reached = look_up(actions[cell.action], props[cell.prop], mutant, semantics)


def run_document(r: Reached, prop: str) -> dict:
    """The whole run of a reachable counterexample: a shortest run to the state, then the step
    that breaks ``prop``."""
    from kraftcheck.traces.counterexample import state_variables, step_meta
    from kraftcheck.traces.itf import trace_document

    steps = list(r.run) + [(r.action, r.post)]
    return trace_document(
        [state_variables(r.model, state) for _, state in steps], [step_meta(action, r.model) for action, _ in steps],
        {"source": "kraftcheck", "command": "prove --induction", "kind": "invariant", "invariant": prop,
         "length": len(steps),
         "model": "kraftcheck.model:make_model",
         "config": {"model": "kraftcheck.model:make_model", "settings": asdict(r.model.settings)},
         "lookup_config": r.config})
