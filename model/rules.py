"""The controller rules that Kafka's releases changed after the code the model was read from
(apache/kafka commit 1eb7644349c), each switched on for the releases that have it.  Every one
was found by ``kraftcheck conform`` replaying the model's steps against that release's
controller, and is held to it by tests/test_conform.py."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KafkaRules:
    #: KAFKA-18106 (4.0.0): a new incarnation's registration writes handleBrokerShutdown's records
    #: also without ELR: the broker out of the ISR and leadership of every partition, as when fenced
    shutdown_records_without_elr: bool = False
    #: BrokerHeartbeatTracker (4.0.0): a session belongs to a broker and epoch, is made by a
    #: heartbeat, fenced or not, and ends when it expires (and is fenced then) or a new incarnation
    #: registers; before, only an unfenced broker had one
    sessions_by_epoch: bool = False
    #: ClusterControlManager.activate in 4.0.x: a controller taking over gives every registered
    #: broker a session, fenced ones too; from 4.1.0 on, unfenced ones only
    failover_sessions_for_fenced: bool = False
    #: KAFKA-19522, fixed in 4.1.0: 4.0.x elects the last known leader though it is not acceptable
    last_known_leader_unchecked: bool = False
    #: apache/kafka#20716 (4.3.0): AssignReplicasToDirs' builder has ELR as every other builder
    #: does, so an assignment no longer clears the ELR (finding 9 fixed)
    assignment_keeps_elr: bool = False
    #: PartitionChangeBuilder.maybeUpdateLastKnownLeader from 4.1.1 on: a record that leaves the
    #: partition leaderless keeps its leader as the last known one whatever the ISR (before:
    #: only when the ISR empties), unless one is kept already; a record that elects clears it
    last_known_leader_when_leaderless: bool = False
    #: KAFKA-18635 (4.0.0): registerBroker detects a clean shutdown (previousBrokerEpoch equal to
    #: the registered epoch, KAFKA-15586) and then keeps the broker's ELR memberships; the code
    #: read took every new incarnation as an unclean shutdown
    clean_shutdown_detection: bool = False
    #: KIP-1066 (KAFKA-19774, 4.3.0): brokers report cordoned log directories in their heartbeats,
    #: registrations hold them, and placement reads them (the model's ``cordons`` setting needs it)
    cordoned_dirs: bool = False
    #: KAFKA-19975 (4.3.0): a reassignment completes once the replicas it adds are in the ISR, every
    #: target replica in it only when the reassignment shrinks the replicas (it removes more than it
    #: adds); before, every target replica had to be in the ISR
    reassignment_completes_once_added_in_sync: bool = False

    @classmethod
    def of(cls, release: tuple[int, int, int] | None) -> "KafkaRules":
        """The rules of release (4, minor, patch); None: the code the model was read from."""
        if release is None:
            return cls()
        return cls(
            shutdown_records_without_elr=True,
            sessions_by_epoch=True,
            failover_sessions_for_fenced=release[:2] == (4, 0),
            last_known_leader_unchecked=release[:2] == (4, 0),
            assignment_keeps_elr=release >= (4, 3, 0),
            last_known_leader_when_leaderless=release >= (4, 1, 1),
            clean_shutdown_detection=True,
            cordoned_dirs=release >= (4, 3, 0),
            reassignment_completes_once_added_in_sync=release >= (4, 3, 0),
        )
