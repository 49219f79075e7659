"""What a real cluster shows, and what a model state says, in the same terms.

A cluster's state is observed once it has settled: the controller's state as its metadata log
leaves it (registrations, and topic ``p0``'s partition), each broker's directories (failed or
not, and the directory ID in each one's meta.properties) and each broker's process (up, paused,
or down).  Both sides become a *view*:

- ``up``: broker -> is its process running (a paused one counts as running: its process
  lives, as a model broker's whose session expired, ``ControllerFencesSilentBroker``);
- ``failed``: broker -> the slots whose directory has failed in the running incarnation;
- ``brokers``: broker -> None (never registered) or whether it is fenced and which of its
  directories its registration lists as online;
- ``partition``: leader, ISR, ELR, last known ELR, leader and partition epochs, and the
  directory of each replica.

Directories are named by where they are, not by their random IDs: ``b<broker>/dir<slot>`` for
the ID a slot holds now, ``replaced`` for an ID no slot holds any more (a replaced disk's),
and the reserved IDs by name (``UNASSIGNED``, ``LOST``, ``MIGRATING``).  Broker epochs are left
out: Kafka's are metadata offsets, the model's counts of registrations, and a single state
cannot pair them (``kraftcheck conform`` pairs them along a run).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from kraftcheck.model.state import (
    DIR_IDS, DIR_STATE, ELR, FENCED, HEALTHY, ISR, LAST_KNOWN_ELR, LEADER, LEADER_EPOCH, OFF, ONLINE_DIRS,
    PARTITION, PARTITION_EPOCH, REGISTERED_INCARNATION, STATUS, DIRS,
)
from kraftcheck.model.uuids import LOST, MIGRATING, RESERVED3, UNASSIGNED

#: Kafka's reserved directory IDs (DirectoryId), as [mostSignificantBits, leastSignificantBits].
RESERVED_NAMES = {(0, 0): "MIGRATING", (0, 1): "UNASSIGNED", (0, 2): "LOST"}
MODEL_RESERVED_NAMES = {MIGRATING: "MIGRATING", UNASSIGNED: "UNASSIGNED", LOST: "LOST", RESERVED3: "RESERVED3"}


@dataclass
class Observation:
    """One settled state of the cluster, after an event (``after``)."""

    after: str
    controller: dict
    #: broker -> slot -> the directory ID in the slot's meta.properties (Kafka's base64 form)
    dir_ids: dict[int, list[str | None]]
    #: broker -> slot -> has the directory failed (it is a file, as the fault made it)
    failed: dict[int, list[bool]]
    #: broker -> "up", "paused" or "down"
    processes: dict[int, str]
    #: broker -> what describeLogDirs says (None: the broker did not answer)
    log_dirs: dict[int, Any] = field(default_factory=dict)
    settled: bool = True
    seconds: float = 0.0


def uuid_from_base64(text: str) -> tuple[int, int]:
    """Kafka's Uuid.toString() form back to its two signed longs."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    msb, lsb = int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:16], "big", signed=True)
    return msb, lsb


def cluster_view(obs: Observation, topic_partition: str = "0") -> dict:
    names: dict[tuple[int, int], str] = dict(RESERVED_NAMES)
    for b, ids in obs.dir_ids.items():
        for slot, text in enumerate(ids):
            if text is not None:
                names[uuid_from_base64(text)] = f"b{b}/dir{slot}"

    def name(uuid) -> str:
        return names.get(tuple(uuid), "replaced")

    brokers = {}
    for b in sorted(obs.processes):
        reg = obs.controller["brokers"].get(str(b))
        brokers[b] = None if reg is None else {"fenced": reg["fenced"],
                                               "onlineDirs": sorted(name(u) for u in reg["logDirs"])}
    part = obs.controller["partitions"].get(topic_partition)
    partition = None if part is None else {
        "leader": part["leader"], "isr": sorted(part["isr"]), "elr": sorted(part["elr"]),
        "lastKnownElr": sorted(part["lastKnownElr"]), "leaderEpoch": part["leaderEpoch"],
        "partitionEpoch": part["partitionEpoch"], "dirs": [name(u) for u in part["directories"]],
    }
    return {
        "up": {b: obs.processes[b] != "down" for b in sorted(obs.processes)},
        "failed": {b: [slot for slot, f in enumerate(obs.failed[b]) if f] if obs.processes[b] != "down" else []
                   for b in sorted(obs.processes)},
        "brokers": brokers,
        "partition": partition,
    }


def model_view(model, s, p: int = 0) -> dict:
    names = dict(MODEL_RESERVED_NAMES)
    for b in model.brokers:
        for slot in model.slots:
            names[s[DIR_IDS][b][slot]] = f"b{b}/dir{slot}"

    def name(uuid) -> str:
        return names.get(uuid, "replaced")

    brokers = {}
    for b in model.brokers:
        registered = s[REGISTERED_INCARNATION][b] > 0
        brokers[b] = None if not registered else {"fenced": s[FENCED][b],
                                                  "onlineDirs": sorted(name(u) for u in s[ONLINE_DIRS][b])}
    part = s[PARTITION][p]
    partition = None if part is None else {
        "leader": part[LEADER], "isr": sorted(part[ISR]), "elr": sorted(part[ELR]),
        "lastKnownElr": sorted(part[LAST_KNOWN_ELR]), "leaderEpoch": part[LEADER_EPOCH],
        "partitionEpoch": part[PARTITION_EPOCH], "dirs": [name(u) for u in part[DIRS]],
    }
    return {
        "up": {b: s[STATUS][b] != OFF for b in model.brokers},
        "failed": {b: [slot for slot in model.slots if s[DIR_STATE][b][slot] != HEALTHY] if s[STATUS][b] != OFF else []
                   for b in model.brokers},
        "brokers": brokers,
        "partition": partition,
    }


def differences(model_side: Any, cluster_side: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Field by field, (path, model's value, cluster's value) where they differ."""
    if isinstance(model_side, dict) and isinstance(cluster_side, dict):
        out = []
        for key in sorted(set(model_side) | set(cluster_side), key=str):
            out += differences(model_side.get(key), cluster_side.get(key), f"{path}.{key}" if path else str(key))
        return out
    return [] if model_side == cluster_side else [(path, model_side, cluster_side)]


def frozen(view: Any) -> Any:
    """A view as a hashable value, for sets of views."""
    if isinstance(view, dict):
        return tuple(sorted((str(k), frozen(v)) for k, v in view.items()))
    if isinstance(view, list):
        return tuple(frozen(v) for v in view)
    return view


def describe(view: dict) -> str:
    """One line: the partition, then each broker."""
    part = view["partition"]
    said = []
    if part is None:
        said.append("p0: not created")
    else:
        leader = "none" if part["leader"] < 0 else part["leader"]
        elr = f", ELR {part['elr']}" if part["elr"] else ""
        said.append(f"p0: leader {leader}, ISR {part['isr']}{elr}, epochs {part['leaderEpoch']}/{part['partitionEpoch']}, "
                    f"dirs {part['dirs']}")
    for b, reg in view["brokers"].items():
        up = "up" if view["up"][b] else "down"
        failed = f", failed dir {view['failed'][b]}" if view["failed"][b] else ""
        state = "unregistered" if reg is None else (("fenced" if reg["fenced"] else "unfenced") +
                                                    f", online {reg['onlineDirs']}")
        said.append(f"broker {b}: {up}{failed}, {state}")
    return "; ".join(said)
