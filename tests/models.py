"""Toy models that exercise the engines independently of Kafka.

Each is built by a factory ``FACTORY(config: dict)``, like any model the CLI checks:
``kraftcheck check --model tests.models:diehard``.
"""

from __future__ import annotations

from kraftcheck.examples.diehard import DieHard as ExampleDieHard


def _reject_unknown(config: dict, known: dict) -> dict:
    unknown = sorted(set(config) - set(known))
    if unknown:
        raise ValueError(f"unknown model setting {unknown[0]!r} (known: {', '.join(sorted(known)) or 'none'})")
    return {**known, **config}


class DieHard(ExampleDieHard):
    """The Die Hard jugs (kraftcheck.examples.diehard), with settings from a config and a type
    invariant: a 3-gallon and a 5-gallon jug; can you measure exactly 4 gallons?

    The invariant ``NotFourGallons`` claims the big jug never holds 4 gallons; the checker
    refutes it with the shortest way of measuring them (7 states).  Its invariants are lambdas:
    a model without docstrings is shown by its names alone.
    """

    mutants: dict[str, str] = {}

    def __init__(self, config: dict):
        cfg = _reject_unknown(config, {"small": 3, "big": 5, "goal": 4})
        super().__init__(cfg["small"], cfg["big"], cfg["goal"])
        self.invariants = {
            "TypeOK": lambda s: 0 <= s[0] <= self.small_cap and 0 <= s[1] <= self.big_cap,
            "NotFourGallons": lambda s: s[1] != self.goal,
        }


def diehard(config: dict | None = None) -> DieHard:
    return DieHard(config or {})


class Countdown:
    """A counter that counts down from ``start`` and then has nothing left to do: a deadlock."""

    actions = ["Tick"]

    def __init__(self, config: dict):
        self.start = _reject_unknown(config, {"start": 5})["start"]
        self.invariants = {"NonNegative": lambda s: s >= 0}

    def init_states(self):
        return [self.start]

    def successors(self, s):
        if s > 0:
            yield ("Tick", s), s - 1


def countdown(config: dict | None = None) -> Countdown:
    return Countdown(config or {})


class TwoStarts:
    """Two initial states, each cycling through its own ring of ``size`` states.

    ``Below`` fails only on the ring that starts at 100, so the shortest counterexample
    must start from the second initial state.
    """

    actions = ["Step", "Jump"]

    def __init__(self, config: dict):
        cfg = _reject_unknown(config, {"size": 4, "bad": 102})
        self.size, self.bad = cfg["size"], cfg["bad"]
        self.invariants = {"Below": lambda s: s != self.bad}

    def init_states(self):
        return [0, 100]

    def successors(self, s):
        base = s - s % 100
        yield ("Step", 1), base + (s - base + 1) % self.size


def two_starts(config: dict | None = None) -> TwoStarts:
    return TwoStarts(config or {})


class Counters:
    """``n`` counters in ``0..limit``, each incremented or decremented by one.

    ``(limit + 1) ** n`` states; six counters in 0..9 make the engine benchmark's million.
    ``locality``: the positions of the counters named as the model's ``locality``.
    """

    def __init__(self, config: dict):
        cfg = _reject_unknown(config, {"n": 3, "limit": 3, "locality": []})
        self.n, self.limit = cfg["n"], cfg["limit"]
        if cfg["locality"]:
            self.locality = tuple(cfg["locality"])
        self.actions = ["Inc", "Dec"]
        self.invariants = {"InRange": lambda s: min(s) >= 0 and max(s) <= self.limit}

    def init_states(self):
        return [(0,) * self.n]

    def successors(self, s):
        limit = self.limit
        for i, c in enumerate(s):
            if c < limit:
                yield ("Inc", i), s[:i] + (c + 1,) + s[i + 1 :]
            if c > 0:
                yield ("Dec", i), s[:i] + (c - 1,) + s[i + 1 :]


def counters(config: dict | None = None) -> Counters:
    return Counters(config or {})


class Slow:
    """A counter from 0 to ``limit`` whose steps and descriptions take time, for the tests that
    stop ``check`` with a signal at a known point.  ``BelowLimit`` fails at ``limit``.

    Settings: ``step_ms``, milliseconds each expansion sleeps; ``ready``, a file created when
    the state 2 is expanded (the search is under way, two levels done); ``describing``, a
    file created when ``describe`` runs (the search has ended and its trace is being
    written); ``describe_ms``, milliseconds ``describe`` then sleeps; ``payload``, the length
    of a list of numbers ``describe`` adds to each state, so that writing a trace takes long;
    ``early``, a count that the invariant ``NotEarly`` rejects (0: no such invariant).
    """

    actions = ["Up"]

    def __init__(self, config: dict):
        cfg = _reject_unknown(config, {"limit": 3, "step_ms": 0, "ready": "", "describing": "", "describe_ms": 0,
                                       "payload": 0, "early": 0})
        self.limit, self.step_ms, self.payload = cfg["limit"], cfg["step_ms"], cfg["payload"]
        self.ready, self.describing = cfg["ready"], cfg["describing"]
        self.describe_ms = cfg["describe_ms"]
        self.invariants = {"BelowLimit": lambda s: s < self.limit}
        if cfg["early"]:
            # broken at the count ``early``: a violation found before the search is stopped
            self.invariants["NotEarly"] = lambda s: s != cfg["early"]

    def init_states(self):
        return [0]

    def successors(self, s):
        import time

        if s == 2 and self.ready:
            _touch(self.ready)
        time.sleep(self.step_ms / 1000)
        if s < self.limit:
            yield "Up", s + 1

    def describe(self, s):
        import time

        if self.describing:
            _touch(self.describing)
        # Slices, not one long sleep: a signal that lands between the file's creation and the
        # sleep's system call runs its handler only at the next bytecode boundary, which one
        # ten-minute sleep would put ten minutes away (a loaded machine makes that window wide).
        deadline = time.monotonic() + self.describe_ms / 1000
        while time.monotonic() < deadline:
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        return {"count": s, "payload": list(range(self.payload))}


def _touch(path: str) -> None:
    with open(path, "a"):
        pass


def slow(config: dict | None = None) -> Slow:
    return Slow(config or {})


class Interchangeable:
    """``n`` interchangeable counters in ``0..limit``, each only counting up: a state and its
    permutations are one state under ``canonical`` (sorted), so symmetry reduction leaves the
    multisets, C(n + limit, n) of them, of the (limit + 1) ** n states."""

    actions = ["Inc"]

    def __init__(self, config: dict):
        cfg = _reject_unknown(config, {"n": 3, "limit": 2})
        self.n, self.limit = cfg["n"], cfg["limit"]
        self.invariants = {"InRange": lambda s: max(s) <= self.limit}

    def init_states(self):
        return [(0,) * self.n]

    def successors(self, s):
        for i, c in enumerate(s):
            if c < self.limit:
                yield ("Inc", i), s[:i] + (c + 1,) + s[i + 1 :]

    def canonical(self, s):
        return tuple(sorted(s))


def interchangeable(config: dict | None = None) -> Interchangeable:
    return Interchangeable(config or {})


class Bounded:
    """A counter from 0 up to ``limit``, with three known bugs to put back (``mutant``):
    ``overflow`` counts past the limit (``InRange`` fails in limit + 2 states), ``double_step``
    counts by two (caught only when the limit is odd, in (limit + 3) / 2 states), ``idle``
    adds a step that changes nothing (no invariant can catch it).  ``forbidden``: a value that
    ``NotForbidden`` rejects, which the correct counter reaches too (-1: none).  ``crash``:
    with a mutant on, ``successors`` raises.
    """

    actions = ["Inc", "Idle"]
    mutants = {
        "overflow": "Inc past the limit",
        "double_step": "Inc adds two",
        "idle": "a step that changes nothing",
    }

    def __init__(self, config: dict):
        cfg = _reject_unknown(config, {"limit": 4, "forbidden": -1, "mutant": "none", "crash": False})
        self.limit, self.forbidden, self.mutant = cfg["limit"], cfg["forbidden"], cfg["mutant"]
        self.crash = cfg["crash"]
        if self.mutant not in {"none", *self.mutants}:
            raise ValueError(f"unknown mutant {self.mutant!r} (known: {', '.join(self.mutants)})")
        self.invariants = {
            "InRange": lambda s: 0 <= s <= self.limit,
            "NotForbidden": lambda s: s != self.forbidden,
        }

    def init_states(self):
        return [0]

    def successors(self, s):
        if self.crash and self.mutant != "none":
            raise RuntimeError("the mutant crashed")
        if s < self.limit or self.mutant == "overflow" and s == self.limit:
            yield "Inc", s + (2 if self.mutant == "double_step" else 1)
        if self.mutant == "idle":
            yield "Idle", s


def bounded(config: dict | None = None) -> Bounded:
    return Bounded(config or {})


class Wide(Counters):
    """:class:`Counters` with levels wide enough for ``check --workers`` to hand them to its
    workers (four counters in 0..9: levels of up to 670 states), and ways to go wrong there.

    Settings, besides ``n`` and ``limit``: ``bad_sum``, a sum of the counters that the invariant
    ``SumBelow`` rejects (0: no such invariant); ``fail_sum``, a sum at which ``successors``
    raises; ``step_ms``, milliseconds each expansion of a state whose sum is ``slow_from`` or
    more sleeps; ``ready``, a file created when such a state is first expanded, in whichever
    process expands it.
    """

    def __init__(self, config: dict):
        own = {"bad_sum": 0, "fail_sum": 0, "step_ms": 0, "slow_from": 0, "ready": ""}
        cfg = _reject_unknown(config, {"n": 4, "limit": 9, "locality": [], **own})
        super().__init__({key: cfg[key] for key in ("n", "limit", "locality")})
        self.bad_sum, self.fail_sum, self.step_ms = cfg["bad_sum"], cfg["fail_sum"], cfg["step_ms"]
        self.slow_from, self.ready = cfg["slow_from"], cfg["ready"]
        if self.bad_sum:
            self.invariants["SumBelow"] = lambda s: sum(s) != self.bad_sum

    def successors(self, s):
        total = sum(s)
        if self.fail_sum and total == self.fail_sum:
            raise RuntimeError(f"the counters reached {total}")
        if self.step_ms and total >= self.slow_from:
            import time

            if self.ready:
                _touch(self.ready)
            time.sleep(self.step_ms / 1000)
        return super().successors(s)


def wide(config: dict | None = None) -> Wide:
    return Wide(config or {})


class Tokens:
    """A frozenset of named tokens: each step takes one in or gives one back.  Equal sets are
    reached by many histories, and strings iterate in an order their hashes decide, so a
    fingerprint that followed the iteration order would count one set many times.
    ``AllTaken`` fails when every token is taken (a trace of ``size + 1`` states)."""

    actions = ["Take", "Give"]

    def __init__(self, config: dict):
        self.size = _reject_unknown(config, {"size": 4})["size"]
        self.names = [f"token-{i}" for i in range(self.size)]
        self.invariants = {"AllTaken": lambda s: len(s) < self.size}

    def init_states(self):
        return [frozenset()]

    def successors(self, taken):
        for name in self.names:
            if name in taken:
                yield ("Give", name), taken - {name}
            else:
                yield ("Take", name), taken | {name}


def tokens(config: dict | None = None) -> Tokens:
    return Tokens(config or {})


class Channel:
    """A message sent again and again over a channel that may lose it: ``Send`` puts it on the
    wire, ``Lose`` drops it, ``Deliver`` hands it over (then nothing is left to do).  ``Deliver``
    is enabled only while the message is on the wire, so weak fairness on it does not force a
    delivery (the sender may send and the channel lose for ever) and strong fairness does.

    Settings: ``fairness`` ``weak`` or ``strong`` on ``Deliver`` (``Send`` weakly fair), or ``none``
    at all.  Properties: ``Delivered`` (``[]<>Done``), ``Settles`` (``<>[]Quiet``: nothing on
    the wire from some point on) and ``SentLeadsToDone`` (``OnWire ~> Done``)."""

    actions = ["Send", "Lose", "Deliver"]
    mutants = {"black_hole": "the wire never delivers: it only loses (breaks no invariant, only liveness)"}

    def __init__(self, config: dict):
        from kraftcheck.checker.temporal import (always_eventually, eventually_always, leads_to, strong_fairness,
                                                 weak_fairness)

        settings = _reject_unknown(config, {"fairness": "weak", "mutant": "none"})
        fairness, self.mutant = settings["fairness"], settings["mutant"]
        self.invariants = {}
        self.temporal_properties = {"Delivered": always_eventually(Done), "Settles": eventually_always(Quiet),
                                    "SentLeadsToDone": leads_to(OnWire, Done)}
        self.fairness = []
        if fairness != "none":
            self.fairness = [weak_fairness("Send"), (strong_fairness if fairness == "strong" else weak_fairness)("Deliver")]

    def init_states(self):
        return [("idle", False)]  # (sender, on the wire)

    def successors(self, state):
        sender, wire = state
        if sender == "done":
            return
        if not wire:
            yield "Send", (sender, True)
        else:
            yield "Lose", (sender, False)
            if self.mutant != "black_hole":
                yield "Deliver", ("done", False)


def Done(state) -> bool:
    return state[0] == "done"


def Quiet(state) -> bool:
    return not state[1]


def OnWire(state) -> bool:
    return state[1]


def channel(config: dict | None = None) -> Channel:
    return Channel(config or {})


class SymmetricLock:
    """The example lock with a symmetry reduction, which liveness refuses."""

    def __new__(cls, config: dict):
        from kraftcheck.examples.lock import make_model

        lock = make_model(config)
        lock.canonical = lambda state: state
        return lock


def symmetric_lock(config: dict | None = None):
    return SymmetricLock(config or {})
