"""A lock shared by processes that ask for it, hold it, and give it back, again and again: the
smallest model where fairness decides a liveness property.

    kraftcheck check --model kraftcheck.examples.lock:make_model --no-deadlock
    kraftcheck check --model kraftcheck.examples.lock:make_model --set fairness=strong

Each process goes idle -> waiting -> critical -> idle.  Asking is nobody's duty (``Request``
has no fairness); taking a free lock and giving it back are weakly fair per process, as a
scheduler that keeps running each process gives them.

- ``ReleasesTheLock`` (``Critical0 ~> Idle0``) holds: a holder keeps its ``Release`` enabled
  until it takes it.
- ``NoStarvation`` (``Waiting0 ~> Critical0``) fails under weak fairness: process 1 may take
  the lock each time it is free, so process 0's ``Acquire`` is enabled again and again but
  never for ever, and weak fairness asks nothing of it.  The lasso: process 0 asks, then
  process 1 asks, takes and gives back the lock for ever.  With ``--set fairness=strong``
  (strong fairness on ``Acquire``, a lock that serves its waiters in turn) it holds.

The state is ``(pcs, holder)``: each process's ``idle``, ``waiting`` or ``critical``, and the
process holding the lock, or None.
"""

from kraftcheck.checker.temporal import leads_to, strong_fairness, weak_fairness

IDLE, WAITING, CRITICAL = "idle", "waiting", "critical"


def Waiting0(state) -> bool:
    """Process 0 waits for the lock."""
    return state[0][0] == WAITING


def Critical0(state) -> bool:
    """Process 0 holds the lock."""
    return state[0][0] == CRITICAL


def Idle0(state) -> bool:
    """Process 0 neither holds nor wants the lock."""
    return state[0][0] == IDLE


class Lock:
    actions = ["Request", "Acquire", "Release"]

    def __init__(self, processes: int = 2, fairness: str = "weak"):
        if fairness not in ("weak", "strong"):
            raise ValueError(f"fairness must be weak or strong, not {fairness!r}")
        self.processes = tuple(range(processes))
        self.invariants = {"MutualExclusion": self.MutualExclusion}
        self.temporal_properties = {"ReleasesTheLock": leads_to(Critical0, Idle0),
                                    "NoStarvation": leads_to(Waiting0, Critical0)}
        acquire = strong_fairness if fairness == "strong" else weak_fairness
        self.fairness = [acquire("Acquire", per_parameter=True), weak_fairness("Release", per_parameter=True)]

    def MutualExclusion(self, state) -> bool:
        """At most one process holds the lock."""
        return list(state[0]).count(CRITICAL) <= 1

    def ReleasesTheLock(self):
        """Process 0, holding the lock, gives it back."""

    def NoStarvation(self):
        """Process 0, waiting for the lock, gets it."""

    def init_states(self):
        return [((IDLE,) * len(self.processes), None)]

    def successors(self, state):
        pcs, holder = state
        for p in self.processes:
            if pcs[p] == IDLE:
                yield ("Request", p), (self._set(pcs, p, WAITING), holder)
            elif pcs[p] == WAITING and holder is None:
                yield ("Acquire", p), (self._set(pcs, p, CRITICAL), p)
            elif pcs[p] == CRITICAL:
                yield ("Release", p), (self._set(pcs, p, IDLE), None)

    @staticmethod
    def _set(pcs, p, value):
        return pcs[:p] + (value,) + pcs[p + 1:]

    def Request(self):
        """An idle process asks for the lock."""

    def Acquire(self):
        """A waiting process takes the lock, which is free."""

    def Release(self):
        """The holder gives the lock back."""

    def sequence(self, steps) -> dict:
        """The trace as a message sequence chart: a lane per process and one for the lock; taking
        and giving back the lock are messages to it, a process's new state a note."""
        lanes = [f"process {p}" for p in self.processes] + ["lock"]
        messages, notes = [], []
        for i, step in enumerate(steps):
            if step.action not in self.actions:
                continue
            p = step.params[0]
            notes.append({"step": i, "lane": f"process {p}", "text": step.values["pc"][p]})
            if step.action in ("Acquire", "Release"):
                messages.append({"label": "take" if step.action == "Acquire" else "give back", "sender": f"process {p}",
                                 "receiver": "lock", "sent": i, "delivered": i, "lost": False})
        return {"lanes": lanes, "messages": messages, "notes": notes}

    def describe(self, state) -> dict:
        pcs, holder = state
        return {"pc": list(pcs), "holder": -1 if holder is None else holder}


def make_model(settings: dict) -> Lock:
    """The factory ``--model`` names: a config's ``[model]`` table (or ``--set``) comes in as ``settings``."""
    unknown = sorted(set(settings) - {"processes", "fairness"})
    if unknown:
        raise ValueError(f"unknown model setting {unknown[0]!r} (known: processes, fairness)")
    return Lock(**settings)
