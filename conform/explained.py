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

from kraftcheck.model.state import BROKER_EPOCH, FENCED

REGISTRATIONS = ("ControllerHandlesRegistration", "ControllerHandlesRegistrationAfterSessionTimeout")
PARTITION_FIELDS = {"leader", "isr", "leaderEpoch", "partitionEpoch", "recovering", "elr", "lastKnownElr"}
BROKER_FIELDS = {"epoch", "incarnation", "onlineDirs", "fenced"}


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
    return (action[0] in REGISTRATIONS and not model.settings.elr and bool(kinds)
            and all(k.startswith("partitions:") and k.split(":")[1] in PARTITION_FIELDS for k in kinds))


def _fenced_broker_has_session(model, pre, action, divergence) -> bool:
    if action[0] != "ControllerHandlesRegistration":
        return False
    b = action[1][1]
    kinds = _kinds(divergence.fields)
    refused = any(f == "answer" and m == "accepted" and k == "refused" for f, m, k in divergence.fields)
    return (action[0] == "ControllerHandlesRegistration" and refused and pre[BROKER_EPOCH][b] > 0 and pre[FENCED][b]
            and all(k in ("answer", "epoch order") or (k.startswith("brokers:") and k.split(":")[1] in BROKER_FIELDS)
                    for k in kinds))


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
