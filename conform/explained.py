"""Divergences between the model and Kafka's released controllers that are understood: each a
rule that Kafka changed after the code the model was read from (apache/kafka commit
``1eb7644349c``, between 3.9 and 4.0), or a scenario of the model that no release allows.

A divergence is explained when exactly one entry matches it: the step's action, the Kafka
versions the entry holds for, and the fields that differ, all as the entry says.  Anything else
is unexplained, and a failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kraftcheck.model.state import BROKER_EPOCH, FENCED, PARTITION, REPLICAS
from kraftcheck.model.uuids import UNASSIGNED

REGISTRATIONS = ("ControllerHandlesRegistration", "ControllerHandlesRegistrationAfterSessionTimeout")
PARTITION_FIELDS = {"leader", "isr", "leaderEpoch", "partitionEpoch", "recovering", "elr", "lastKnownElr"}
BROKER_FIELDS = {"epoch", "incarnation", "onlineDirs", "fenced", "inControlledShutdown"}


@dataclass(frozen=True)
class Explanation:
    name: str
    #: why the model and Kafka differ, and since which release
    why: str
    #: the Kafka versions it holds for, as (major, minor) ranges: [first, last]
    versions: tuple[tuple[int, int], tuple[int, int]]
    matches: Callable[..., bool]


def _kinds(fields) -> set[str]:
    out = set()
    for path, _, _ in fields:
        parts = path.split(".")
        out.add(parts[0] if parts[0] in ("answer", "epoch order", "metadataVersion") else
                f"{parts[0]}:{parts[2] if len(parts) > 2 else '*'}")
    return out


def _shutdown_records_without_elr(model, pre, action, divergence) -> bool:
    kinds = _kinds(divergence.fields)
    return (action[0] in REGISTRATIONS and model.code and not model.settings.elr and bool(kinds)
            and all(k.startswith("partitions:") and k.split(":")[1] in PARTITION_FIELDS for k in kinds))


def _fenced_broker_has_session(model, pre, action, divergence) -> bool:
    if action[0] != "ControllerHandlesRegistration":
        return False
    b = action[1][1]
    kinds = _kinds(divergence.fields)
    refused = any(f == "answer" and m == "accepted" and k == "refused" for f, m, k in divergence.fields)
    # the registration the model accepts replaces the broker's and writes its shutdown's partition records
    return (action[0] == "ControllerHandlesRegistration" and model.code and refused and pre[BROKER_EPOCH][b] > 0 and pre[FENCED][b]
            and all(k in ("answer", "epoch order") or (k.startswith("brokers:") and k.split(":")[1] in BROKER_FIELDS)
                    or (k.startswith("partitions:") and k.split(":")[1] in PARTITION_FIELDS) for k in kinds))


def _broker_without_directories(model, pre, action, divergence) -> bool:
    if action[0] not in REGISTRATIONS:
        return False
    b, dirs = action[1][1], action[1][3]
    refused = any(f == "answer" and m == "accepted" and k == "refused" for f, m, k in divergence.fields)
    return (action[0] in REGISTRATIONS and not dirs and model.legacy[b] and refused
            and _kinds(divergence.fields) <= {"answer", "brokers:*"})


def _last_known_leader_unacceptable(model, pre, action, divergence) -> bool:
    kinds = _kinds(divergence.fields)
    if action[0] not in REGISTRATIONS:
        return False
    kafka_leader = next((k for f, _, k in divergence.fields if f.endswith(".leader")), None)
    return (model.settings.elr and kafka_leader == action[1][1]
            and all(k.startswith("partitions:") and k.split(":")[1] in PARTITION_FIELDS for k in kinds))


def _kip(model, action, names) -> bool:
    return model.settings.semantics == "kip" and action[0] in names


def _only_partitions(kinds) -> bool:
    return bool(kinds) and all(k.startswith("partitions:") and k.split(":")[1] in PARTITION_FIELDS for k in kinds)


def _kip_fenced_until_assigned(model, pre, action, divergence) -> bool:
    if not _kip(model, action, ("ControllerHandlesHeartbeat",)):
        return False
    b = action[1][1]
    unassigned = any(part is not None and b in part[REPLICAS] and model.replica_dir(part, p, b) == UNASSIGNED
                     for p, part in enumerate(pre[PARTITION]))
    kinds = _kinds(divergence.fields) - {"brokers:fenced"}
    return (unassigned and (f"brokers.{b}.fenced", True, False) in divergence.fields
            and (not kinds or _only_partitions(kinds)))


def _kip_offline_dirs_first(model, pre, action, divergence) -> bool:
    """Finding 1: the heartbeat unfences its broker and reports a failed directory; Kafka's
    unfencing elects the broker where the KIP's reading, seeing the failure first, does not."""
    if not _kip(model, action, ("ControllerHandlesHeartbeat",)):
        return False
    b, offline, want_fence = action[1][1], action[1][3], action[1][4]
    kafka_leaders = {k for f, _, k in divergence.fields if f.endswith(".leader")}
    return (bool(offline) and not want_fence and pre[FENCED][b] and kafka_leaders == {b}
            and _only_partitions(_kinds(divergence.fields)))


def _kip_assignment(model, pre, action, divergence) -> bool:
    """Finding 5: the KIP's reading elects the assigning broker on its new directory; Kafka's
    election, judged on the old directories, leaves the partition leaderless."""
    if not _kip(model, action, ("ControllerHandlesAssignment",)):
        return False
    b = action[1][1]
    leaders = [(m, k) for f, m, k in divergence.fields if f.endswith(".leader")]
    if leaders == [(b, -1)] and _only_partitions(_kinds(divergence.fields)):
        return True
    # an assignment to a directory not online: Kafka's two records (the directory, then the
    # broker out) where the KIP's one change does both, so one epoch more (findings 5 and 6)
    return (_kinds(divergence.fields) <= {"partitions:partitionEpoch", "partitions:leaderEpoch"}
            and all(isinstance(m, int) and k == m + 1 for _, m, k in divergence.fields))


def _kip_registration(model, pre, action, divergence) -> bool:
    return _kip(model, action, REGISTRATIONS) and not _broker_without_directories(model, pre, action, divergence)


def _assignment_keeps_elr(model, pre, action, divergence) -> bool:
    return (action[0] == "ControllerHandlesAssignment" and model.settings.elr
            and _kinds(divergence.fields) == {"partitions:elr"})


KNOWN = (
    Explanation(
        "KAFKA-18106", "a new incarnation's registration writes handleBrokerShutdown's records (the broker out "
        "of its leaderships and ISRs, as when fenced) also without ELR, since Kafka 4.0.0; the model follows "
        "the code before it, where registerBroker wrote none (finding 3)",
        ((4, 0), (4, 99)), _shutdown_records_without_elr),
    Explanation(
        "fenced-session", "a broker that heartbeats has a session while fenced too, since Kafka 4.0.0 "
        "(BrokerHeartbeatTracker keys sessions by broker and epoch and drops only expired ones), so a new "
        "incarnation is refused (DUPLICATE_BROKER_REGISTRATION) until the fenced one's session times out; "
        "the model follows the code before it, where a fenced broker had no session",
        ((4, 0), (4, 99)), _fenced_broker_has_session),
    Explanation(
        "no-directories", "Kafka's controller refuses a registration without directories at metadata version "
        "3.7-IV2 or later; the model's legacy_brokers register without directories at any version, standing "
        "for brokers that registered before an upgrade, which no release lets register anew",
        ((4, 0), (4, 99)), _broker_without_directories),
    Explanation(
        "KAFKA-19522", "Kafka 4.0.0 elects the last known leader when ISR and ELR are empty whether or not it "
        "is acceptable (canElectLastKnownLeader only logs); fixed in later releases, which the model follows "
        "(its mutant elect_unacceptable_last_leader is 4.0.0's behaviour)",
        ((4, 0), (4, 0)), _last_known_leader_unacceptable),
    Explanation(
        "finding-9-fixed", "AssignReplicasToDirs keeps the ELR since Kafka 4.3.0 (apache/kafka#20716: its "
        "PartitionChangeBuilder has ELR as every other one); the code read cleared it (finding 9)",
        ((4, 3), (4, 99)), _assignment_keeps_elr),
    # The KIP's reading (semantics = "kip") where it differs from every release's code
    # (spec/README.md, "Where the model follows the KIP, and where the code"):
    Explanation(
        "kip:fenced-until-assigned", "finding 2: KIP-858 keeps a broker fenced while a replica of it is "
        "UNASSIGNED; Kafka's code unfences it (and its unfencing elects)",
        ((4, 0), (4, 99)), _kip_fenced_until_assigned),
    Explanation(
        "kip:offline-dirs-first", "finding 1: KIP-858 handles a heartbeat's offline directories before its "
        "unfencing; Kafka's code elects first, from the image the heartbeat found",
        ((4, 0), (4, 99)), _kip_offline_dirs_first),
    Explanation(
        "kip:assignment", "finding 5: under KIP-858 one change sets an assignment's directory and elects on "
        "it (or, for a directory not online, takes the broker out); Kafka's code writes the directory with an "
        "election judged on the old directories, and a second record for a directory not online",
        ((4, 0), (4, 99)), _kip_assignment),
    Explanation(
        "kip:registration", "the KIP's reading of registration (finding 3's): the incarnation number is the "
        "epoch, a new incarnation is accepted at once and loses its leaderships, the same one is answered "
        "with nothing written; Kafka's code has sessions, assigns epochs as offsets and rewrites the "
        "registration of the same incarnation",
        ((4, 0), (4, 99)), _kip_registration),
)


def explain(model, pre, action, divergence, kafka_version: str) -> Explanation | None:
    """The known explanation of a divergence at Kafka ``kafka_version``, or None."""
    try:
        major, minor = (int(x) for x in kafka_version.split(".")[:2])
    except ValueError:
        return None
    for entry in KNOWN:
        first, last = entry.versions
        if first <= (major, minor) <= last and entry.matches(model, pre, action, divergence):
            return entry
    return None
