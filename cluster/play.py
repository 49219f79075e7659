"""A scenario played against a real cluster: the cluster started (or reached at --bootstrap),
topic ``p0`` created, a producer (acks=all) writing numbered records throughout, each event
made, the settled state observed after each, and every record read back at the end."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .client import ClusterClient
from .nodes import ClusterFailed, LoopbackCluster
from .observe import Observation, cluster_view
from .scenario import Event, Scenario

TOPIC = "p0"
#: The longest a settle may take, in seconds; a cluster still changing then is observed anyway.
SETTLE_LIMIT_S = 90
#: How often the controller's state is read while settling, in seconds.
POLL_S = 0.5


@dataclass
class Durability:
    """Jepsen's check on the producer's records: every acknowledged one read back."""

    sent: int
    acked: list[int]
    read: list[int]
    failures: dict[str, int]
    complete: bool
    read_error: str | None = None

    @property
    def lost(self) -> list[int]:
        got = set(self.read)
        return [n for n in self.acked if n not in got]

    @property
    def unexpected(self) -> list[int]:
        """Read back but never sent: a record from nowhere."""
        return sorted(set(self.read) - set(range(self.sent)))


@dataclass
class Played:
    scenario: Scenario
    kafka_version: str
    #: each event as made: the event with its broker and directory resolved
    events: list[Event] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    durability: Durability | None = None
    seconds: float = 0.0
    workdir: Path | None = None
    #: the controller's metadata log at the end, batch by batch (no-ops left out): the evidence
    #: of what happened between settled states
    metadata_log: list[dict] = field(default_factory=list)


def ranges(numbers: list[int]) -> list[list[int]]:
    """[0, 1, 2, 5, 6] as [[0, 2], [5, 6]]: the producer's numbers, mostly consecutive, kept short."""
    out: list[list[int]] = []
    for n in numbers:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def from_ranges(spans: list[list[int]]) -> list[int]:
    return [n for first, last in spans for n in range(first, last + 1)]


def played_to_json(played: Played) -> dict:
    """A played scenario as JSON: enough to hold it to the model again without a cluster.
    The numbers acknowledged and read are kept as ranges."""
    from dataclasses import asdict

    d = played.durability
    durability = None
    if d is not None:
        durability = asdict(d)
        durability["acked"], durability["read"] = ranges(d.acked), ranges(d.read)
    return {
        "scenario": {"name": played.scenario.name, "text": played.scenario.text},
        "kafkaVersion": played.kafka_version,
        "events": [asdict(e) for e in played.events],
        "observations": [asdict(o) for o in played.observations],
        "durability": durability,
        "seconds": played.seconds,
        "metadataLog": played.metadata_log,
    }


def played_from_json(data: dict) -> Played:
    from .scenario import parse

    scenario = parse(data["scenario"]["text"], data["scenario"]["name"])
    played = Played(scenario, data["kafkaVersion"], seconds=data.get("seconds", 0.0),
                    metadata_log=list(data.get("metadataLog", [])))
    played.events = [Event(**e) for e in data["events"]]
    for o in data["observations"]:
        o = dict(o)
        o["dir_ids"] = {int(b): v for b, v in o["dir_ids"].items()}
        o["failed"] = {int(b): v for b, v in o["failed"].items()}
        o["processes"] = {int(b): v for b, v in o["processes"].items()}
        played.observations.append(Observation(**o))
    if data.get("durability"):
        d = dict(data["durability"])
        d["acked"], d["read"] = from_ranges(d["acked"]), from_ranges(d["read"])
        played.durability = Durability(**d)
    return played


#: The events after which their broker being fenced or leaving the ISR is the scenario's doing:
#: the process stopped or paused, a directory failure that may stop it, a new incarnation.
STOPS_ITS_BROKER = ("kill", "pause", "start", "fail_dir", "repair_dir", "replace_disk")
FENCED_RECORD = re.compile(r"BrokerRegistrationChangeRecord\(brokerId=(\d+),.*\bfenced=1,")
ISR_RECORD = re.compile(r"Partition(?:Change)?Record\(partitionId=0, topicId=([^,]+),.*?\bisr=\[([\d, ]*)\]")


def disturbances(played: Played) -> list[str]:
    """What happened to a broker after the topic's creation that no event asked for: the
    controller fenced it (its heartbeats came later than broker.session.timeout.ms), or it left
    the ISR (it fell behind for replica.lag.time.max.ms).  A loaded machine can do either, and
    the model, which fences no running broker and lets a fetching follower keep up, reaches
    neither.  Read from the metadata log, so a recorded run gives the same answer."""
    records = [r for batch in played.metadata_log for r in batch.get("records", [])]
    created = max((i for i, r in enumerate(records) if r.startswith(f"TopicRecord(name='{TOPIC}',")), default=None)
    if created is None:
        return []
    topic_id = records[created][records[created].index("topicId=") + len("topicId="):].rstrip(")")
    stopped = {e.broker for e in played.events if e.do in STOPS_ITS_BROKER}
    fenced: set[int] = set()
    left: set[int] = set()
    isr: set[int] | None = None
    for r in records[created + 1:]:
        if m := FENCED_RECORD.match(r):
            fenced.add(int(m.group(1)))
        elif (m := ISR_RECORD.match(r)) and m.group(1) == topic_id:
            now = {int(b) for b in m.group(2).split(",") if b.strip()}
            if isr is not None:
                left |= isr - now
            isr = now
    said = []
    if fenced - stopped:
        who = sorted(fenced - stopped)
        said.append(f"the controller fenced broker{'s' * (len(who) > 1)} {', '.join(map(str, who))}, which no event "
                    "stopped (heartbeats later than broker.session.timeout.ms)")
    if left - fenced - stopped:
        who = sorted(left - fenced - stopped)
        said.append(f"broker{'s' * (len(who) > 1)} {', '.join(map(str, who))} left the ISR, which no event stopped "
                    "(behind for replica.lag.time.max.ms)")
    return said


class ScenarioRunner:
    """Plays one scenario on a cluster of its own, printing each step through ``say``."""

    def __init__(self, scenario: Scenario, cluster: LoopbackCluster, client: ClusterClient,
                 say: Callable[[str], None] = lambda line: None):
        self.scenario = scenario
        self.cluster = cluster
        self.client = client
        self.say = say
        self.played = Played(scenario, cluster.kafka_version, workdir=cluster.workdir)
        self.roles: dict[str, int] = {}
        #: broker -> slot -> directory ID, as its running (or last) incarnation has them
        self.dir_ids: dict[int, list[str | None]] = {}

    # ------------------------------------------------------------------ observing

    def observe(self, after: str, settle: bool = True) -> Observation:
        started = time.monotonic()
        quiet = (self.cluster.spec.session_timeout_ms + 1000) / 1000
        last, last_change = None, time.monotonic()
        settled = not settle
        while True:
            obs = self._snapshot(after)
            key = repr(cluster_view(obs))
            now = time.monotonic()
            if key != last:
                last, last_change = key, now
            if not settle or now - last_change >= quiet:
                settled = True
                break
            if now - started >= SETTLE_LIMIT_S:
                break
            time.sleep(POLL_S)
        obs.settled = settled
        obs.seconds = time.monotonic() - started
        obs.log_dirs = self.client.log_dirs([b for b, p in obs.processes.items() if p == "up"])
        self.played.observations.append(obs)
        return obs

    def _snapshot(self, after: str) -> Observation:
        spec = self.cluster.spec
        processes = {}
        for b in range(spec.brokers):
            processes[b] = "paused" if b in self.cluster.paused else ("up" if self.cluster.running(b) else "down")
        state = self.client.controller_state(self.cluster.metadata_log_dir())["state"]
        # A down broker's directories are named as its last incarnation had them: a disk
        # replaced while it is down is the next incarnation's (the model's BrokerStarts).
        for b, process in processes.items():
            if process != "down" or b not in self.dir_ids:
                self.dir_ids[b] = [self.cluster.directory_id(b, slot) for slot in range(spec.dirs_per_broker)]
        return Observation(
            after=after, controller=state,
            dir_ids={b: list(ids) for b, ids in self.dir_ids.items()},
            failed={b: [self.cluster.failed(b, slot) for slot in range(spec.dirs_per_broker)]
                    for b in range(spec.brokers)},
            processes=processes)

    # ------------------------------------------------------------------ events

    def broker_of(self, event: Event) -> int:
        if isinstance(event.broker, int):
            return event.broker
        return self.roles[event.broker]

    def replica_slot(self, b: int) -> int | None:
        """The slot holding broker b's replica of p0 now, by the directories on disk."""
        for slot in range(self.cluster.spec.dirs_per_broker):
            if (self.cluster.dir_path(b, slot) / f"{TOPIC}-0").is_dir():
                return slot
        return None

    def future_slot(self, b: int) -> int | None:
        """The slot holding broker b's future replica of p0 (a move's destination), if any."""
        for slot in range(self.cluster.spec.dirs_per_broker):
            if any(self.cluster.dir_path(b, slot).glob(f"{TOPIC}-0.*-future")):
                return slot
        return None

    def slot_of(self, event: Event, b: int) -> int:
        if isinstance(event.dir, int):
            return event.dir
        if event.dir == "future":
            future = self.future_slot(b)
            if future is None:
                raise ClusterFailed(f"broker {b} has no move of {TOPIC} under way")
            return future
        held = self.replica_slot(b)
        if event.dir == "replica":
            if held is None:
                raise ClusterFailed(f"broker {b} holds no replica of {TOPIC} in a healthy directory")
            return held
        others = [s for s in range(self.cluster.spec.dirs_per_broker) if s != held]
        return others[0]

    def make(self, event: Event) -> Event:
        """Makes the event happen; returns it with its broker and directory resolved."""
        c = self.cluster
        if event.do == "wait":
            time.sleep(event.seconds)
            return event
        if event.do == "elect_unclean":
            error = self.client.elect_unclean(TOPIC)
            self.say(f"    unclean election: {error or 'NONE'}")
            return event
        b = self.broker_of(event)
        slot = None
        if event.do in ("fail_dir", "move"):
            slot = self.slot_of(event, b)
        elif event.do in ("repair_dir", "replace_disk"):
            slot = event.dir if isinstance(event.dir, int) else next(
                (s for s in range(c.spec.dirs_per_broker) if c.failed(b, s)), None)
            if slot is None:
                raise ClusterFailed(f"broker {b} has no failed directory to {event.do.replace('_', ' ')}")
        if event.do == "fail_dir":
            c.fail_dir(b, slot)
        elif event.do == "repair_dir":
            c.repair_dir(b, slot)
        elif event.do == "replace_disk":
            c.replace_disk(b, slot)
        elif event.do == "kill":
            c.kill(b)
        elif event.do == "start":
            c.start_broker(b)
        elif event.do == "pause":
            c.pause(b)
        elif event.do == "resume":
            c.resume(b)
        elif event.do == "move":
            error = self.client.alter_replica_log_dir(TOPIC, b, str(c.dir_path(b, slot)))
            if error:
                raise ClusterFailed(f"alterReplicaLogDirs to broker {b}'s dir {slot} failed: {error}")
        return Event(event.do, b, slot, event.seconds, event.settle)

    def throttle_moves(self, rate: str) -> None:
        """Every broker's move throttle, set and waited for: a broker applies a dynamic config
        only once it has loaded the record, and an unthrottled move would end at once."""
        name = "replica.alter.log.dirs.io.max.bytes.per.second"
        for b in range(self.cluster.spec.brokers):
            self.client.alter_broker_config(b, name, rate)
        deadline = time.monotonic() + SETTLE_LIMIT_S
        while any(self.client.broker_config(b, name) != rate for b in range(self.cluster.spec.brokers)):
            if time.monotonic() > deadline:
                raise ClusterFailed(f"the brokers did not apply {name} = {rate} within {SETTLE_LIMIT_S} s")
            time.sleep(POLL_S)

    # ------------------------------------------------------------------ the run

    def run(self) -> Played:
        started = time.monotonic()
        s = self.scenario
        if s.spec.move_throttle_bytes_per_s:
            self.throttle_moves(str(s.spec.move_throttle_bytes_per_s))
        self.client.create_topic(TOPIC, s.replicas, {"min.insync.replicas": str(s.min_insync_replicas)})
        first = self.observe("the topic's creation")
        part = first.controller["partitions"].get("0")
        if part is None or part["leader"] < 0:
            raise ClusterFailed(f"topic {TOPIC} has no leader {first.seconds:.0f} s after its creation")
        self.roles = {"leader": part["leader"], "follower": next(r for r in part["replicas"] if r != part["leader"])
                      if len(part["replicas"]) > 1 else part["leader"]}
        self.say(f"  0. created {TOPIC} on brokers {s.replicas}: leader {self.roles['leader']}")
        self.client.produce_start(TOPIC)
        for i, event in enumerate(s.events, 1):
            made = self.make(event)
            self.played.events.append(made)
            if not event.observed:
                self.say(f"  {i}. {made.describe()}")
                continue
            obs = self.observe(made.describe(), settle=event.settle)
            self.say(f"  {i}. {made.describe()}" + ("" if obs.settled else f"  (still changing after {SETTLE_LIMIT_S} s)"))
        self.played.metadata_log = self.client.controller_state(self.cluster.metadata_log_dir(), batches=True)["batches"]
        out = self.client.produce_stop()
        last = self.played.observations[-1].controller["partitions"].get("0")
        if last is not None and last["leader"] < 0:
            read = {"values": [], "complete": False, "error": "the partition has no leader"}
        else:
            read = self.client.consume(TOPIC)
        self.played.durability = Durability(out["sent"], out["acked"], read["values"], out["failures"],
                                            bool(read.get("complete")), read.get("error"))
        self.played.seconds = time.monotonic() - started
        return self.played
