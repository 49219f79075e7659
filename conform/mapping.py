"""The stated mapping between the Kafka model's terms and Kafka's controller's.

- Directory IDs: the model's small ints become real ``Uuid``s: the reserved ones are
  ``DirectoryId``'s constants (``MIGRATING`` = Uuid(0, 0), ``UNASSIGNED`` = Uuid(0, 1),
  ``LOST`` = Uuid(0, 2)), the model's fourth reserved value Uuid(0, 3); a real one ``d`` is
  Uuid(DIRECTORY_MSB, d), never reserved.
- Incarnation IDs: broker ``b``'s ``n``-th start is Uuid(INCARNATION_MSB | b, n).
- Broker epochs: Kafka's is the offset of a registration in the metadata log, the model's a
  count of the broker's registrations.  They are compared by order: a broker's model epochs and
  Kafka epochs must map one to one and keep their order (:class:`EpochMap`).
- Partitions: the model's partition ``p`` on its fixed replicas is topic ``p<p>`` with one
  partition, created with a manual assignment of those replicas.
- The metadata log: a model batch of records is one batch of the harness's log or none (a batch
  of an answer alone); a failover keeps the committed batches and a prefix of the others.

Every controller step of the model becomes one harness request (:func:`request_for`); broker,
network and data-plane steps are the model's alone.  After each controller step Kafka's state,
read back in the model's terms (:func:`kafka_view`), is compared with the model's
(:func:`model_view`) field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kraftcheck.model.state import (
    ALTER_PARTITION_RESPONSE, ASSIGN_RESPONSE, BROKER_EPOCH, HEARTBEAT_RESPONSE, IN_CONTROLLED_SHUTDOWN, DIRS, ELR, FENCED, ISR, LAST_KNOWN_ELR, LEADER,
    LEADER_EPOCH, METADATA_VERSION, METADATA_VERSION_NAMES, NETWORK, ONLINE_DIRS, PARTITION, PARTITION_EPOCH,
    RECOVERING, REPLICAS, REMOVING, ADDING, REGISTERED_INCARNATION, REGISTER_RESPONSE, UNCOMMITTED, dir_name, MV_3_7_IV2, REGISTERED_CORDONS,
)
from kraftcheck.model.uuids import FIRST_REAL, LOST, MIGRATING, RESERVED3, UNASSIGNED

DIRECTORY_MSB = 0x6B63_6469_7200_0000  # "kcdir"
INCARNATION_MSB = 0x6B63_696E_6300_0000  # "kcinc"
#: A broker epoch the controller never gave: what a request carries for a model epoch that no
#: registration answered.
NO_SUCH_EPOCH = -3

#: The model's controller actions, each with the harness operation it becomes.
CONTROLLER_ACTIONS = {
    "ControllerHandlesRegistration": "register",
    "ControllerHandlesRegistrationAfterSessionTimeout": "register",
    "ControllerHandlesHeartbeat": "heartbeat",
    "ControllerTimesOutHeartbeat": "heartbeat",
    "ControllerFencesExpiredBroker": "fenceExpired",
    "ControllerFencesSilentBroker": "fenceExpired",  # the controller cannot tell a live broker from a dead one
    "ControllerHandlesAssignment": "assign",
    "ControllerHandlesAlterPartition": "alterPartition",
    "ControllerCreatesPartition": "createPartition",
    "AdminDeletesTopic": "deleteTopic",
    "AdminReassignsPartition": "alterPartitionReassignments",
    "AdminCancelsReassignment": "alterPartitionReassignments",
    "AdminElectsUncleanLeader": "electLeaders",
    "ControllerElectsUncleanLeaders": "electUncleanLeaders",
    "AdminUpgradesMetadataVersion": "upgradeMetadataVersion",
    "AdminAltersMinIsr": "alterConfig",
    "AdminTogglesUncleanElection": "alterConfig",
    "AdminElectsPreferredLeader": "electLeaders",
    "ControllerFailsOver": "failover",
}
#: Controller steps of the model that no Kafka release has: a trace taking one is compared up
#: to it, and random walks do not take them.
MODEL_ONLY = {
    "ControllerHandlesAlterReplicaState": "KIP-589's AlterReplicaState was never implemented in Kafka",
    "AdminElectsDesignatedLeader": "KIP-1275's designated elections are in no Kafka release",
    "ToolElectsLeader": "KIP-1275's recovery tool is in no Kafka release",
}
#: Steps that use up a bound of the config (a crash, a failed disk, a lost message, a failover,
#: a move): a walk that takes them early ends early, so walks take them a twentieth as often as
#: other steps, and reach more controller steps.
WALK_RARE = frozenset({"BrokerCrashes", "BrokerLosesPower", "BrokerFailsDir", "NetworkLosesMessage", "ControllerFailsOver", "BrokerStartsMove"})


def walk_weight(action) -> float:
    return 0.05 if action[0] in WALK_RARE else 1.0


#: The metadata log's commit: it changes no controller state, only what a failover keeps.
COMMIT = "ControllerCommits"


#: The model's reserved directories by meaning, as DirectoryId defines them.
RESERVED_UUIDS = {MIGRATING: [0, 0], UNASSIGNED: [0, 1], LOST: [0, 2], RESERVED3: [0, 3]}
_RESERVED_BY_LSB = {uuid[1]: d for d, uuid in RESERVED_UUIDS.items()}


def directory_uuid(d: int) -> list[int]:
    return list(RESERVED_UUIDS[d]) if d < FIRST_REAL else [DIRECTORY_MSB, d]


def directory_of(uuid: list[int]) -> int | str:
    """A Kafka directory ID back in the model's terms; one the mapping never made, as text."""
    msb, lsb = uuid
    if msb == 0 and lsb in _RESERVED_BY_LSB:
        return _RESERVED_BY_LSB[lsb]
    if msb == DIRECTORY_MSB and lsb >= FIRST_REAL:
        return lsb
    return f"Uuid({msb}, {lsb})"


def incarnation_uuid(b: int, n: int) -> list[int]:
    return [INCARNATION_MSB | b, n]


def incarnation_of(b: int, uuid: list[int]) -> int | str:
    msb, lsb = uuid
    return lsb if msb == INCARNATION_MSB | b else f"Uuid({msb}, {lsb})"


@dataclass
class EpochMap:
    """Each broker's model epochs and Kafka epochs, paired as the registrations made them."""

    pairs: dict[int, dict[int, int]] = field(default_factory=dict)

    def to_kafka(self, b: int, model_epoch: int) -> int:
        if model_epoch == -1:
            return -1  # AlterPartition's "unknown": the controller skips the check (KIP-903)
        return self.pairs.get(b, {}).get(model_epoch, NO_SUCH_EPOCH)

    def pair(self, b: int, model_epoch: int, kafka_epoch: int) -> str | None:
        """Record that broker ``b``'s model epoch and Kafka epoch stand for one registration;
        a text saying why not when that breaks the order or a pairing made before."""
        known = self.pairs.setdefault(b, {})
        if model_epoch in known:
            if known[model_epoch] != kafka_epoch:
                return f"model epoch {model_epoch} was Kafka epoch {known[model_epoch]}, now {kafka_epoch}"
            return None
        if kafka_epoch in known.values():
            return f"Kafka epoch {kafka_epoch} already stands for another model epoch"
        below = [k for m, k in known.items() if m < model_epoch]
        above = [k for m, k in known.items() if m > model_epoch]
        if any(k >= kafka_epoch for k in below) or any(k <= kafka_epoch for k in above):
            return f"model epoch {model_epoch} as Kafka epoch {kafka_epoch} breaks the order of {sorted(known.items())}"
        known[model_epoch] = kafka_epoch
        return None

    def forget_lost(self, model, s) -> None:
        """After a failover: pairings of registrations the new controller does not hold are gone.
        The model numbers a broker's registrations, so it gives a lost registration's number to
        the next one; Kafka's next epoch is a new offset."""
        for b, known in self.pairs.items():
            for m in [m for m in known if m > s[BROKER_EPOCH][b]]:
                del known[m]

    def model_epoch(self, b: int, kafka_epoch: int) -> int | None:
        return next((m for m, k in self.pairs.get(b, {}).items() if k == kafka_epoch), None)


#: The metadata version the model's "3.7-IV2" stands for when directories may be cordoned: the
#: first with cordoned log directories (MetadataVersion.isCordonedLogDirsSupported).
CORDONS_METADATA_VERSION = "4.3-IV0"


def metadata_version_name(model, mv: int) -> str:
    """The metadata version Kafka's controller runs at for the model's ``mv``."""
    if model.settings.cordons and mv == MV_3_7_IV2:
        return CORDONS_METADATA_VERSION
    return METADATA_VERSION_NAMES[mv]


def reset_request(model) -> dict:
    """The harness's controller, set up as the model's config says."""
    st = model.settings
    return {
        "op": "reset",
        "metadataVersion": metadata_version_name(model, METADATA_VERSION_NAMES.index(st.metadata_version)),
        "elr": st.elr,
        "minIsr": st.min_isr,
        "uncleanElection": st.unclean_election == "topic",
    }


def request_for(model, pre, action, epochs: EpochMap) -> dict | None:
    """The harness request a controller step of the model stands for (None for a step that is
    not the controller's, or is only the commit)."""
    name, *params = action
    op = CONTROLLER_ACTIONS.get(name)
    if op is None:
        return None
    if op == "register":
        _, b, incarnation, dirs, previous_epoch = params[0]
        return {"op": op, "broker": b, "incarnation": incarnation_uuid(b, incarnation),
                "logDirs": [directory_uuid(d) for d in dirs], "previousBrokerEpoch": epochs.to_kafka(b, previous_epoch),
                "sessionExpired": name == "ControllerHandlesRegistrationAfterSessionTimeout"}
    if op == "heartbeat":
        _, b, epoch, offline, want_fence, want_shutdown, cordoned = params[0]
        return {"op": op, "broker": b, "brokerEpoch": epochs.to_kafka(b, epoch), "wantFence": want_fence,
                "wantShutdown": want_shutdown, "offlineLogDirs": [directory_uuid(d) for d in offline],
                "timedOut": name == "ControllerTimesOutHeartbeat",
                # CordonedLogDirs: absent for null
                **({"cordonedLogDirs": [directory_uuid(d) for d in cordoned[0]]} if cordoned else {})}
    if op == "fenceExpired":
        return {"op": op, "broker": params[0]}
    if op == "assign":
        _, b, epoch, p, directory = params[0]
        return {"op": op, "broker": b, "brokerEpoch": epochs.to_kafka(b, epoch), "partition": p,
                "dir": directory_uuid(directory)}
    if op == "alterPartition":
        _, b, epoch, p, leader_epoch, partition_epoch, isr, recovering = params[0]
        return {"op": op, "broker": b, "brokerEpoch": epochs.to_kafka(b, epoch), "partition": p,
                "leaderEpoch": leader_epoch, "partitionEpoch": partition_epoch,
                "isr": [[r, epochs.to_kafka(r, e)] for r, e in isr], "leaderRecoveryState": 1 if recovering else 0}
    if op == "createPartition":
        p = params[0]
        return {"op": op, "partition": p, "replicas": list(model.replicas[p])}
    if op == "deleteTopic":
        return {"op": op, "partition": params[0]}
    if op == "alterPartitionReassignments":
        # the target replicas; none (null) cancels the reassignment under way
        return {"op": op, "partition": params[0], "replicas": list(params[1]) if len(params) > 1 else None}
    if op == "electLeaders":
        election = "preferred" if name == "AdminElectsPreferredLeader" else "unclean"
        return {"op": op, "partition": params[0], "electionType": election}
    if name == "AdminAltersMinIsr":
        return {"op": op, "key": "min.insync.replicas", "value": str(params[0])}
    if name == "AdminTogglesUncleanElection":
        return {"op": op, "key": "unclean.leader.election.enable", "value": _config_text(not model.unclean_enabled(pre))}
    if op == "upgradeMetadataVersion":
        return {"op": op, "to": METADATA_VERSION_NAMES[-1]}
    if op == "electUncleanLeaders":
        return {"op": op}
    return {"op": op}  # failover: its batch count is the driver's (see Conformance)


def model_outcome(model, pre, action, post) -> str | None:
    """What the model's step answered, where the model says: "refused" or "accepted" (None where
    the model's answer says nothing Kafka's response can be held to)."""
    name, *params = action
    sent = _new_messages(pre, post)
    if name in ("ControllerHandlesRegistration", "ControllerHandlesRegistrationAfterSessionTimeout"):
        b, incarnation = params[0][1], params[0][2]
        answers = [m for m in sent if m[0] == REGISTER_RESPONSE and m[1] == b and m[2] == incarnation]
        if not answers:
            return "unanswered"  # under the KIP's reading an older incarnation is dropped
        return "refused" if answers[0][3] == 0 else "accepted"
    if name in ("ControllerHandlesHeartbeat", "ControllerTimesOutHeartbeat"):
        b, epoch = params[0][1], params[0][2]
        if not model.epoch_is_current(pre, b, epoch):
            return "stale"
        if name == "ControllerHandlesHeartbeat" and model.code and model.settings.shutdown_files:
            # the answer says whether to shut down now
            told = any(m[0] == HEARTBEAT_RESPONSE and m[4] for m in sent)
            return "accepted, shut down" if told else "accepted"
        return "accepted"
    if name == "ControllerHandlesAssignment":
        answers = [m for m in sent if m[0] == ASSIGN_RESPONSE]
        if not answers:
            return "stale"
        return "accepted" if answers[0][5] else "refused"
    if name == "ControllerHandlesAlterPartition":
        answers = [m for m in sent if m[0] == ALTER_PARTITION_RESPONSE]
        return answers[0][6] if answers else "stale"
    if name in ("ControllerCreatesPartition", "AdminDeletesTopic", "AdminReassignsPartition", "AdminCancelsReassignment",
                "AdminElectsUncleanLeader", "AdminUpgradesMetadataVersion", "AdminAltersMinIsr",
                "AdminTogglesUncleanElection", "AdminElectsPreferredLeader"):
        return "accepted"  # the model's guard took the request: Kafka must too
    return None


def kafka_outcome(op: str, response: dict) -> str | None:
    """Kafka's answer in the terms of :func:`model_outcome`."""
    error, part_error = response.get("error", "NONE"), response.get("partitionError", "NONE")
    if op == "register":
        return "accepted" if error == "NONE" else "refused"
    if op == "heartbeat":
        if error == "REQUEST_TIMED_OUT":  # a timed-out heartbeat: what processExpiredBrokerHeartbeat said
            error = response.get("expiredHeartbeatError", "NONE")
        if error == "NONE" and response.get("shouldShutDown"):
            return "accepted, shut down"
        return "stale" if error == "STALE_BROKER_EPOCH" else ("accepted" if error == "NONE" else error)
    if op == "assign":
        if error == "STALE_BROKER_EPOCH":
            return "stale"
        return "accepted" if error == "NONE" and part_error == "NONE" else "refused"
    if op == "alterPartition":
        if error == "STALE_BROKER_EPOCH":
            return "stale"
        return part_error if error == "NONE" else error
    if op in ("createPartition", "deleteTopic", "alterPartitionReassignments", "electLeaders", "upgradeMetadataVersion",
              "alterConfig"):
        worst = error if error != "NONE" else part_error
        return "accepted" if worst == "NONE" else worst
    return None


def _new_messages(pre, post) -> list:
    """Messages the step sent: new in the network, or answers of a batch it appended."""
    before = list(pre[NETWORK])
    sent = []
    for m in post[NETWORK]:
        if m in before:
            before.remove(m)
        else:
            sent.append(m)
    if len(post[UNCOMMITTED]) > len(pre[UNCOMMITTED]) and post[UNCOMMITTED][-1][1]:
        sent.append(post[UNCOMMITTED][-1][1])
    return sent


def model_view(model, s) -> dict:
    """The model's controller state in the compared terms."""
    brokers = {}
    for b in model.brokers:
        if s[BROKER_EPOCH][b] <= 0:
            brokers[b] = None
            continue
        brokers[b] = {
            "epoch": s[BROKER_EPOCH][b],
            "incarnation": s[REGISTERED_INCARNATION][b],
            "fenced": s[FENCED][b],
            "onlineDirs": sorted(s[ONLINE_DIRS][b]),
        }
        if model.settings.shutdown_files:
            brokers[b]["inControlledShutdown"] = s[IN_CONTROLLED_SHUTDOWN][b]
        if model.settings.cordons:
            cordons = s[REGISTERED_CORDONS][b]
            brokers[b]["cordonedLogDirs"] = sorted(cordons[0]) if cordons else None
    partitions = {}
    for p in model.partitions:
        part = s[PARTITION][p]
        if part is None:
            partitions[p] = None
            continue
        view = {
            "replicas": list(part[REPLICAS]),
            "leader": part[LEADER],
            "isr": sorted(part[ISR]),
            "elr": sorted(part[ELR]),
            "lastKnownElr": sorted(part[LAST_KNOWN_ELR]),
            "leaderEpoch": part[LEADER_EPOCH],
            "partitionEpoch": part[PARTITION_EPOCH],
            "dirs": list(part[DIRS]),
        }
        if model.settings.records:
            view["recovering"] = part[RECOVERING]
        if model.settings.reassignments:
            view["removingReplicas"] = sorted(part[REMOVING])
            view["addingReplicas"] = sorted(part[ADDING])
        if model.settings.dynamic_configs:
            view["minIsr"] = str(model.min_isr(s))
            view["uncleanElection"] = _config_text(model.unclean_enabled(s))
        partitions[p] = view
    return {"metadataVersion": metadata_version_name(model, s[METADATA_VERSION]), "brokers": brokers, "partitions": partitions}


def _config_text(value: bool) -> str:
    """A boolean topic config as Kafka's ConfigRecord holds it."""
    return "true" if value else "false"


def kafka_view(model, state: dict, epochs: EpochMap) -> dict:
    """Kafka's controller state, as the harness reports it, in the model's terms.  A broker
    epoch is given as the model epoch it is paired with, or as ``kafka:<epoch>`` when unpaired."""
    brokers = {}
    for b in model.brokers:
        reg = state["brokers"].get(str(b))
        if reg is None:
            brokers[b] = None
            continue
        paired = epochs.model_epoch(b, reg["epoch"])
        brokers[b] = {
            "epoch": paired if paired is not None else f"kafka:{reg['epoch']}",
            "incarnation": incarnation_of(b, reg["incarnation"]),
            "fenced": reg["fenced"],
            "onlineDirs": sorted(directory_of(u) for u in reg["logDirs"]),
        }
        if model.settings.shutdown_files:
            brokers[b]["inControlledShutdown"] = reg["inControlledShutdown"]
        if model.settings.cordons:
            cordons = reg.get("cordonedLogDirs")
            brokers[b]["cordonedLogDirs"] = None if cordons is None else sorted(directory_of(u) for u in cordons)
    partitions = {}
    for p in model.partitions:
        part = state["partitions"].get(str(p))
        if part is None:
            partitions[p] = None
            continue
        view = {
            "replicas": part["replicas"],
            "leader": part["leader"],
            "isr": sorted(part["isr"]),
            "elr": sorted(part["elr"]),
            "lastKnownElr": sorted(part["lastKnownElr"]),
            "leaderEpoch": part["leaderEpoch"],
            "partitionEpoch": part["partitionEpoch"],
            "dirs": [directory_of(u) for u in part["directories"]],
        }
        if model.settings.records:
            view["recovering"] = part["leaderRecoveryState"] == 1
        if model.settings.reassignments:
            view["removingReplicas"] = sorted(part.get("removingReplicas", []))
            view["addingReplicas"] = sorted(part.get("addingReplicas", []))
        if model.settings.dynamic_configs:
            view["minIsr"] = part.get("minIsr")
            view["uncleanElection"] = part.get("uncleanElection")
        partitions[p] = view
    return {"metadataVersion": state["metadataVersion"], "brokers": brokers, "partitions": partitions}


def pair_epochs(model, s, state: dict, epochs: EpochMap) -> list[str]:
    """Pair each registered broker's model epoch with Kafka's; the pairings that break the order."""
    problems = []
    for b in model.brokers:
        reg = state["brokers"].get(str(b))
        if s[BROKER_EPOCH][b] > 0 and reg is not None:
            problem = epochs.pair(b, s[BROKER_EPOCH][b], reg["epoch"])
            if problem:
                problems.append(f"b{b} epoch: {problem}")
    return problems


def differences(model_side: dict, kafka_side: dict, path: str = "") -> list[tuple[str, Any, Any]]:
    """Every field where the two views differ: (path, model's value, Kafka's value)."""
    if isinstance(model_side, dict) and isinstance(kafka_side, dict):
        out = []
        for key in list(model_side) + [k for k in kafka_side if k not in model_side]:
            where = f"{path}.{key}" if path else str(key)
            out += differences(model_side.get(key), kafka_side.get(key), where)
        return out
    return [] if model_side == kafka_side else [(path, model_side, kafka_side)]


def field_label(path: str) -> str:
    """``brokers.0.fenced`` as ``b0 fenced``, ``partitions.0.leader`` as ``p0 leader``."""
    parts = path.split(".")
    if parts[0] == "brokers" and len(parts) >= 2:
        return f"b{parts[1]}" + (f" {'.'.join(parts[2:])}" if len(parts) > 2 else "")
    if parts[0] == "partitions" and len(parts) >= 2:
        return f"p{parts[1]}" + (f" {'.'.join(parts[2:])}" if len(parts) > 2 else "")
    return path


def dirs_named(value: Any, key: str) -> Any:
    """Directory fields with the model's directory names, for reports."""
    if key in ("dirs", "onlineDirs") and isinstance(value, list):
        return [dir_name(d) if isinstance(d, int) else d for d in value]
    return value
