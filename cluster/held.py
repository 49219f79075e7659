"""A played scenario held to the model: is every state the cluster settled in a reachable state
of the model, under the same external events?

The scenario's events become constraints on the model's environment actions: a directory
fails (``BrokerFailsDir``), a broker is killed (``BrokerCrashes``) or starts again
(``BrokerStarts``, each failed directory repaired or replaced as the scenario did it), a replica
move starts (``BrokerStartsMove``), an operator elects an unclean leader
(``AdminElectsUncleanLeader``), a broker paused until the controller fences it has its session
expire while its process lives (``ControllerFencesSilentBroker``).  Each happens exactly where the scenario has it, and nowhere
else.  Every other action (heartbeats, registrations, assignments, elections, fetches,
AlterPartition, the brokers' first starts and the topic's creation) is free, in any order.
A resume, a wait, a repair or a replacement is no step of the model by itself.

The search goes event by event.  Before the first event it explores every state the free
actions reach; it keeps those whose view (``observe.model_view``) is the cluster's first
observation; from them it takes the first event's action, explores again, keeps the states that
look like the second observation, and so on.  A step where no state is kept is a divergence:
the cluster settled in a state the model cannot reach under those events.  It is reported with
the model's nearest state (the fewest fields apart).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from kraftcheck.model import make_model
from kraftcheck.model.config import KAFKA_RELEASES
from kraftcheck.model.state import INCARNATION, REPAIRED, REPLACED

from .observe import cluster_view, differences, frozen, model_view
from .play import Played
from .scenario import Event

#: The model's environment actions: each taken only where an event of the scenario says so.
CONTROLLED = frozenset({"BrokerFailsDir", "BrokerCrashes", "BrokerStarts", "BrokerStartsMove",
                        "AdminElectsUncleanLeader", "NetworkLosesMessage", "ControllerFailsOver",
                        "AdminUpgradesMetadataVersion", "ControllerFencesSilentBroker"})
#: Records the model's producer writes: enough for a follower to fall behind and catch up,
#: which is all the views compare (the cluster's thousands of records are not the point).
MODEL_RECORDS = 2
#: The most states one step's search may hold before it gives up.
MAX_STATES = 3_000_000


class NotModeled(Exception):
    """The scenario does something the model has no action for; one line."""


@dataclass
class Step:
    after: str
    #: states the model reaches there, and how many of them look like the cluster
    reached: int
    matched: int
    #: when nothing matched: the model's nearest view's differences, (field, model, cluster)
    nearest: list[tuple[str, object, object]] = field(default_factory=list)


@dataclass
class Held:
    settings: dict
    steps: list[Step] = field(default_factory=list)
    #: the index of the first observation no model state matches, or None: it conforms
    diverged_at: int | None = None
    not_modeled: str | None = None
    #: why the run is no experiment the model can judge (a broker fenced that no event stopped)
    disturbed: str | None = None
    #: how long the model's search took
    seconds: float = 0.0

    @property
    def conforms(self) -> bool:
        return self.diverged_at is None and self.not_modeled is None and self.disturbed is None


def model_settings(played: Played) -> dict:
    """The model's [model] table for a played scenario: its cluster, and bounds that count its
    events."""
    s = played.scenario
    if played.kafka_version not in KAFKA_RELEASES:
        raise NotModeled(f"the model knows Kafka releases {KAFKA_RELEASES[0]} to {KAFKA_RELEASES[-1]}, "
                         f"not {played.kafka_version}")

    def count(do: str) -> int:
        return sum(1 for e in played.events if e.do == do)

    return {
        "brokers": s.spec.brokers, "dirs_per_broker": s.spec.dirs_per_broker, "partitions": 1,
        "replication_factor": s.replication_factor, "min_isr": s.min_insync_replicas, "elr": s.spec.elr,
        "restarts": count("start"), "dir_failures": count("fail_dir"), "moves": count("move"),
        "session_expiries": count("pause"),
        "unclean_election": "admin" if count("elect_unclean") else "off",
        "records": MODEL_RECORDS, "semantics": "code", "kafka_version": played.kafka_version,
    }


def event_matcher(event: Event, fates: dict[int, str]):
    """The model action an event is, as a predicate on actions; None for no action.  ``fates``:
    slot -> "repaired" or "replaced", for a start."""
    b = event.broker
    if event.do == "fail_dir":
        return lambda a: a == ("BrokerFailsDir", b, event.dir)
    if event.do == "kill":
        return lambda a: a == ("BrokerCrashes", b)
    if event.do == "move":
        return lambda a: a == ("BrokerStartsMove", b, 0, event.dir)
    if event.do == "elect_unclean":
        return lambda a: a == ("AdminElectsUncleanLeader", 0)
    if event.do == "pause":
        # paused until the controller fences it: its session expires while its process lives
        return lambda a: a == ("ControllerFencesSilentBroker", b)
    if event.do == "start":
        wanted = {slot: REPLACED if fate == "replaced" else REPAIRED for slot, fate in fates.items()}
        return lambda a: a[0] == "BrokerStarts" and a[1] == b and dict(a[2]) == wanted
    return None


def _free(model, s, action) -> bool:
    if action[0] == "BrokerStarts":
        return s[INCARNATION][action[1]] == 0  # a broker's first start is the cluster's start
    return action[0] not in CONTROLLED


def _explore(model, frontier) -> list:
    """Every state the free actions reach from ``frontier``, the frontier included."""
    seen = set(frontier)
    queue = deque(frontier)
    while queue:
        s = queue.popleft()
        for action, n in model.successors(s):
            if n not in seen and _free(model, s, action):
                seen.add(n)
                queue.append(n)
                if len(seen) > MAX_STATES:
                    raise NotModeled(f"the model's search passed {MAX_STATES:,} states at one step")
    return list(seen)


def observed_groups(events: list[Event]) -> list[list[Event]]:
    """The events between one observation and the next: none before the first (the topic's
    creation), then each observed event with the unobserved ones just before it."""
    groups: list[list[Event]] = [[]]
    pending: list[Event] = []
    for event in events:
        pending.append(event)
        if event.observed:
            groups.append(pending)
            pending = []
    return groups


def hold(played: Played) -> Held:
    started = time.perf_counter()
    held = _hold(played)
    held.seconds = time.perf_counter() - started
    return held


def _hold(played: Played) -> Held:
    settings = model_settings(played)
    held = Held(settings)
    model = make_model(settings)
    observations = played.observations
    # Each observation follows one observed event (the first follows the topic's creation); a
    # repair or a replacement is folded into its broker's next start.
    fates: dict[int, dict[int, str]] = {}
    states = list(model.init_states())
    for index, (group, obs) in enumerate(zip(observed_groups(played.events), observations)):
        for event in group:
            if event.do in ("resume", "wait"):
                continue
            if event.do in ("repair_dir", "replace_disk"):
                fates.setdefault(event.broker, {})[event.dir] = "replaced" if event.do == "replace_disk" else "repaired"
                continue
            match = event_matcher(event, fates.pop(event.broker, {}) if event.do == "start" else {})
            states = [n for s in states for a, n in model.successors(s) if match(a)]
        reached = _explore(model, states)
        wanted = frozen(cluster_view(obs))
        kept = [s for s in reached if frozen(model_view(model, s)) == wanted]
        step = Step(obs.after, len(reached), len(kept))
        held.steps.append(step)
        if not kept:
            observed = cluster_view(obs)
            views = {frozen(model_view(model, s)): s for s in reached}
            nearest = min((differences(model_view(model, s), observed) for s in views.values()), key=len, default=[])
            step.nearest = nearest
            held.diverged_at = index
            return held
        states = kept
    return held
