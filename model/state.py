"""The state of the KRaft model: its variables in the TLA+ module's order, and the constants that
name their values, the metadata records and the messages.

The state is a plain tuple of the TLA+ variables, each made of ints, bools, ``None`` and tuples
only, so that it is one-to-one with the TLA+ state and fingerprints the same in every process.
"""

from __future__ import annotations

from .uuids import uuid_name

# ---------------------------------------------------------------------------------------------
# The variables (same names and order as the TLA+ module).
# ---------------------------------------------------------------------------------------------
VARIABLES = (
    "brokerStatus",  # broker -> OFF | STARTING (registration not yet answered) | RUNNING
    "incarnation",  # broker -> number of starts so far: the incarnation ID of the running process
    "dirIds",  # broker -> slot -> directory UUID in the slot's meta.properties
    "dirState",  # broker -> slot -> HEALTHY | FAILED | FAILED_ACKED
    "logs",  # broker -> slot -> sorted partitions whose (main) log is on that disk
    "future",  # broker -> partition -> slot of the future replica of a move, or NONE
    "queued",  # broker -> partition -> directory queued for AssignReplicasToDirs, or NONE
    "brokerEpoch",  # controller: broker -> registered broker epoch (0: never registered)
    "fenced",  # controller: broker -> fenced?
    "onlineDirs",  # controller: broker -> sorted online directories of its registration
    "partition",  # controller: partition -> NoPartition (None) | <<leader, isr, dirs, leaderEpoch, partitionEpoch,
    # elr, lastKnownElr, recovering>>
    "network",  # sorted bag of messages in flight
    "nextUuid",  # the next fresh directory UUID the format tool generates
    "dirFailures",  # directory failures so far
    "lostMessages",  # messages lost so far
    "movesStarted",  # replica moves between directories started so far
    "knownEpoch",  # broker -> the broker epoch its registration response gave it (0: none yet)
    "registeredIncarnation",  # controller: broker -> incarnation ID of its registration (0: none)
    "metadataVersion",  # controller: 0 below 3.7-IV2 (no directory assignment), 1 at or above
    # The metadata log, when failovers are modeled (else (), () and 0 throughout):
    "committedImage",  # the controller variables as the committed records leave them
    "uncommitted",  # batches appended and not yet committed: ((records, response or ()), ...)
    "failoversDone",  # controller failovers so far
    # The brokers' own metadata, when their lag is modeled (else () throughout):
    "brokerImage",  # broker -> the committed image the broker has loaded, which it acts on
    # The data plane, when records are produced (else () and 0 throughout):
    "replicaLog",  # broker -> partition -> the leader epoch of each record of its replica's log, by offset
    "highWatermark",  # broker -> partition -> the replica's high watermark (checkpointed: kept across restarts)
    "followerEnd",  # broker -> partition -> <<leaderEpoch, epochStartOffset, broker -> log end offset,
    # broker -> broker epoch of its last fetch>>: what the broker, as leader in that epoch, has learned
    # from its followers' fetches (in memory)
    "acked",  # partition -> <<offset, leaderEpoch, leader, lostBy>> of every record ever acknowledged to its
    # producer (acks=all: committed); lostBy: KEPT, or the declared loss that gave it up (LOST_BY_ELECTION,
    # LOST_BY_DISK or LOST_BY_POWER, see below)
    "produced",  # records produced so far
    "flushed",  # broker -> partition -> how much of the replica's log is on disk (the prefix up to its flush
    # point), when machines may lose power (else () throughout): a power loss keeps that prefix only
    # KIP-1275's recovery tool, when it runs (else () throughout):
    "tool",  # <<answers: partition -> broker -> <<leaderEpoch, logEndOffset>> or () (none yet),
    # outcome: partition -> RUNNING_TOOL | ELECTED_BY_TOOL | FOUND_ONLINE, requests sent so far,
    # takenUp: partition -> the leader epoch it had offline when the tool took it up, or -1>>
    # The controller's heartbeat sessions, when a Kafka release's are modeled (else () throughout):
    "session",  # controller: broker -> does its registered epoch have a heartbeat session
    # (BrokerHeartbeatTracker's entry: made by a heartbeat, dropped when it expires and by a new incarnation)
    "sessionsExpired",  # sessions of running brokers expired so far (a pause, heartbeats lost or late)
    # Clean shutdowns, when they are modeled (else () and 0 throughout):
    "inControlledShutdown",  # controller: broker -> its registration's inControlledShutdown flag
    "awaitedHeartbeats",  # controller: broker -> <<>> when BrokerHeartbeatManager has it in no controlled
    # shutdown, else <<the brokers whose metadata offset is below its controlled shutdown offset>>: those
    # that have not heartbeated since (lowestActiveOffset, counting the active ones only)
    "wantShutdown",  # broker -> has the running process begun a controlled shutdown (wantShutDown)
    "cleanShutdownEpoch",  # broker -> the broker epoch in its directories' clean-shutdown files, which the
    # incarnation that read them at start registers with as previousBrokerEpoch; -1: none
    "cleanShutdowns",  # controlled shutdowns begun so far
    # Dynamic topic configs, when an operator may alter them while the cluster runs (else () throughout):
    "topicConfig",  # controller: <<min.insync.replicas, unclean.leader.election.enable>> as its ConfigRecords
    # leave them (every topic alike)
    "configChanges",  # <<min.insync.replicas changes, unclean.leader.election.enable toggles>> so far
    # Cordoned log directories (KIP-1066), when an operator may cordon them (else () and 0 throughout):
    "cordoned",  # broker -> sorted slots its cordoned.log.dirs names (a broker config: kept across restarts)
    "registeredCordons",  # controller: broker -> <<>> while its registration's cordonedLogDirs is null (none reported
    # since it registered), else <<the sorted directories it holds cordoned>>
    "reportedCordons",  # broker -> <<>> or <<the sorted directories>> the last heartbeat of the broker that the
    # controller handled reported cordoned, whichever incarnation sent it: what the controller has been told
    "cordonChanges",  # changes to a broker's cordoned.log.dirs so far
    # Kafka's fetch protocol, when it is modeled (model setting fetch = "batch"; else () throughout):
    "epochEntry",  # broker -> partition -> the leader epoch Partition.makeLeader assigned at the log's end in
    # the replica's leader-epoch cache while no record of it follows yet, or -1: the cache is the log's runs
    # of records of one epoch, and this entry
    # Topic deletion, when an operator may delete topics (else () throughout):
    "deleted",  # controller: partition -> has its topic been deleted (its RemoveTopicRecord replayed): no longer
    # there, and never created again (a topic created anew under the name is another topic, with another ID)
    # Partition reassignments, when an operator may reassign partitions (else 0 throughout):
    "reassignmentsMade",  # AlterPartitionReassignments requests that changed a partition so far
)
(
    STATUS,
    INCARNATION,
    DIR_IDS,
    DIR_STATE,
    LOGS,
    FUTURE,
    QUEUED,
    BROKER_EPOCH,
    FENCED,
    ONLINE_DIRS,
    PARTITION,
    NETWORK,
    NEXT_UUID,
    DIR_FAILURES,
    LOST_MESSAGES,
    MOVES_STARTED,
    KNOWN_EPOCH,
    REGISTERED_INCARNATION,
    METADATA_VERSION,
    COMMITTED_IMAGE,
    UNCOMMITTED,
    FAILOVERS_DONE,
    BROKER_IMAGE,
    REPLICA_LOG,
    HIGH_WATERMARK,
    FOLLOWER_END,
    ACKED,
    PRODUCED,
    FLUSHED,
    TOOL,
    SESSION,
    SESSIONS_EXPIRED,
    IN_CONTROLLED_SHUTDOWN,
    AWAITED_HEARTBEATS,
    WANT_SHUTDOWN,
    CLEAN_SHUTDOWN_EPOCH,
    CLEAN_SHUTDOWNS,
    TOPIC_CONFIG,
    CONFIG_CHANGES,
    CORDONED,
    REGISTERED_CORDONS,
    REPORTED_CORDONS,
    CORDON_CHANGES,
    EPOCH_ENTRY,
    DELETED,
    REASSIGNMENTS_MADE,
) = range(len(VARIABLES))
# The recovery tool's outcome for a partition: still trying, elected a leader, or found the
# partition online again (reported instead of an election).
RUNNING_TOOL, ELECTED_BY_TOOL, FOUND_ONLINE = 0, 1, 2
TOOL_OUTCOME_NAMES = ("RUNNING", "ELECTED", "FOUND_ONLINE")
#: The controller's in-memory state, in the order of a committed image.
CONTROLLER_VARIABLES = (BROKER_EPOCH, FENCED, ONLINE_DIRS, PARTITION, REGISTERED_INCARNATION, METADATA_VERSION, TOPIC_CONFIG,
                        REGISTERED_CORDONS, DELETED)
# topicConfig's fields
MIN_ISR, UNCLEAN_ENABLED = 0, 1

# metadata.version: below IBP_3_7_IV2 brokers register no directories and nothing is assigned
# (MetadataVersion.isDirectoryAssignmentSupported); at or above it KIP-858 is in force.
MV_3_5, MV_3_6, MV_3_7_IV2 = 0, 1, 2
METADATA_VERSION_NAMES = ("3.5-IV2", "3.6-IV2", "3.7-IV2")

OFF, STARTING, RUNNING = 0, 1, 2
STATUS_NAMES = ("OFF", "STARTING", "RUNNING")

# A disk's health in the current incarnation; FAILED_ACKED: failed, and a heartbeat response
# acknowledged it (the broker keeps listing it until it restarts).
HEALTHY, FAILED, FAILED_ACKED = 0, 1, 2
DIR_STATE_NAMES = ("HEALTHY", "FAILED", "FAILED_ACKED")

# The fate of an acknowledged record (the last field of an ``acked`` entry): kept, or given up by
# a declared loss, which stays named for good: <<LOST_BY_ELECTION, new leader, its leader epoch>>
# (an election that declares itself unclean, its new leader lacking the record) or
# <<LOST_BY_DISK, broker, its new incarnation>> (a replaced disk that took the last copy) or
# <<LOST_BY_POWER, broker, its incarnation>> (a power loss that took the last copy, unflushed).
KEPT = ()
LOST_BY_ELECTION, LOST_BY_DISK, LOST_BY_POWER = "election", "disk", "power"

NONE = -1  # no slot, nothing queued
# mutant assignment_not_retried: a queued assignment whose request or response was lost, which the
# broker keeps queued and never sends again
GIVEN_UP = -3
NO_LEADER = -1
# The fate of a failed directory at a restart (the parameter of BrokerStarts).
REPAIRED = -1  # the disk comes back: same UUID, its logs back
REPLACED = -2  # a new disk, formatted with a fresh UUID

# Partition record fields; with ELR (KIP-966) also the eligible leader replicas and the last
# known ones (lastKnownElr: with useLastKnownLeaderInBalancedRecovery, the last known leader), and
# whether its leader is RECOVERING from an unclean election (LeaderRecoveryState); then the
# replicas (DIRS names their directories, in their order) and, while a reassignment is under way,
# the sorted replicas it removes and adds (removingReplicas, addingReplicas; () otherwise).
LEADER, ISR, DIRS, LEADER_EPOCH, PARTITION_EPOCH, ELR, LAST_KNOWN_ELR, RECOVERING, REPLICAS, REMOVING, ADDING = range(11)

# Metadata records, as Kafka's controller writes them: a handler computes its records from the
# image it read, and replay applies them in order (QuorumController).  Under semantics "kip"
# each record is computed from the state the records before it left.
PARTITION_CHANGE = "PartitionChange"  # <<kind, p, leader or NO_LEADER_CHANGE, isr or None, dirs or None,
# eligibleLeaderReplicas or None, lastKnownElr or None, leaderRecoveryState: True for RECOVERING, False
# for RECOVERED, None for no change, replicas or None, removingReplicas or None, addingReplicas or None>>
REGISTRATION_CHANGE = "BrokerRegistrationChange"  # <<kind, b, fenced (True, False or None), logDirs or None,
# inControlledShutdown (True or None)>>
REGISTER_BROKER = "RegisterBroker"  # <<kind, b, incarnation ID, broker epoch, fenced, logDirs>>
PARTITION_RECORD = "Partition"  # <<kind, p, leader, isr, dirs>>: a new partition, both epochs 0
FEATURE_LEVEL = "FeatureLevel"  # <<kind, metadata version>>
CONFIG_RECORD = "Config"  # <<kind, field of topicConfig (MIN_ISR or UNCLEAN_ENABLED), value>>: ConfigRecord, every topic
CORDONED_DIRS = "CordonedDirs"  # <<kind, b, sorted directories>>: a BrokerRegistrationChangeRecord that sets only
# cordonedLogDirs (ReplicationControlManager.handleDirectoriesCordoned)
CLEAR_ELR = "ClearElr"  # <<kind>>: ClearElrRecord, every topic (its partitions' ELR and lastKnownElr emptied)
REMOVE_TOPIC = "RemoveTopic"  # <<kind, p>>: RemoveTopicRecord, the topic of partition p deleted
NO_LEADER_CHANGE = -2  # PartitionChangeRecord's leader when the record leaves it alone (Kafka's -2)

# Messages: a tuple whose first item is its kind, then the sender broker and its broker epoch
# (for a registration and its response, the incarnation ID the request carries instead).
REGISTER = 1  # <<REGISTER, b, incarnation, dirs, previousBrokerEpoch>>    BrokerRegistrationRequest (-1: none)
REGISTER_RESPONSE = 2  # <<REGISTER_RESPONSE, b, incarnation, epoch>> epoch 0: an error
HEARTBEAT = 3  # <<HEARTBEAT, b, epoch, offlineDirs, wantFence, wantShutDown, cordoned>> BrokerHeartbeatRequest;
# cordoned: <<>> for CordonedLogDirs null (not modeled, or before the broker has caught up), else <<directories>>
HEARTBEAT_RESPONSE = 4  # <<HEARTBEAT_RESPONSE, b, epoch, offlineDirs, shouldShutDown>> acknowledges offlineDirs
ASSIGN = 5  # <<ASSIGN, b, epoch, p, dir>>                       AssignReplicasToDirs
ASSIGN_RESPONSE = 6  # <<ASSIGN_RESPONSE, b, epoch, p, dir, ok>>
ALTER_REPLICA_STATE = 7  # <<ALTER_REPLICA_STATE, b, epoch, p>>  KIP-589, replica offline
ALTER_PARTITION = 8  # <<ALTER_PARTITION, b, epoch, p, leaderEpoch, partitionEpoch, <<<<r, brokerEpoch>>, ...>>, recovering>>
ALTER_PARTITION_RESPONSE = 9  # <<ALTER_PARTITION_RESPONSE, b, epoch, p, leaderEpoch, proposed isr, error>>
MESSAGE_NAMES = {
    REGISTER: "Register",
    REGISTER_RESPONSE: "RegisterResponse",
    HEARTBEAT: "Heartbeat",
    HEARTBEAT_RESPONSE: "HeartbeatResponse",
    ASSIGN: "AssignReplicasToDirs",
    ASSIGN_RESPONSE: "AssignReplicasToDirsResponse",
    ALTER_REPLICA_STATE: "AlterReplicaState",
    ALTER_PARTITION: "AlterPartition",
    ALTER_PARTITION_RESPONSE: "AlterPartitionResponse",
}
# Requests the controller gates on the broker epoch (KIP-589).
EPOCH_GATED = (HEARTBEAT, ASSIGN, ALTER_REPLICA_STATE, ALTER_PARTITION)
#: AlterPartition's errors, in the order the controller checks them, after the broker epoch
#: (ReplicationControlManager.validateAlterPartitionData); NONE: accepted.
ALTER_PARTITION_ERRORS = ("NONE", "NOT_CONTROLLER", "FENCED_LEADER_EPOCH", "INVALID_REQUEST",
                          "INVALID_UPDATE_VERSION", "INELIGIBLE_REPLICA", "NEW_LEADER_ELECTED")

ACTIONS = (
    "BrokerStarts",
    "BrokerSendsRegistration",
    "BrokerRefreshesRegistration",
    "BrokerReceivesRegistrationResponse",
    "BrokerCrashes",
    "BrokerLosesPower",
    "BrokerBeginsShutdown",
    "BrokerFailsDir",
    "BrokerSendsHeartbeat",
    "BrokerReceivesHeartbeatResponse",
    "BrokerConsumesMetadata",
    "BrokerSendsAssignment",
    "BrokerReceivesAssignmentResponse",
    "BrokerShutsDownOnDirFailureTimeout",
    "BrokerStartsMove",
    "BrokerFutureCaughtUp",
    "BrokerSendsAlterReplicaState",
    "ControllerHandlesRegistration",
    "ControllerHandlesRegistrationAfterSessionTimeout",
    "ControllerHandlesHeartbeat",
    "ControllerTimesOutHeartbeat",
    "ControllerFencesExpiredBroker",
    "ControllerFencesSilentBroker",
    "ControllerHandlesAssignment",
    "ControllerHandlesAlterReplicaState",
    "ControllerCreatesPartition",
    "AdminDeletesTopic",
    "AdminReassignsPartition",
    "AdminCancelsReassignment",
    "AdminElectsDesignatedLeader",
    "AdminElectsUncleanLeader",
    "ControllerElectsUncleanLeaders",
    "AdminUpgradesMetadataVersion",
    "AdminAltersMinIsr",
    "AdminTogglesUncleanElection",
    "AdminElectsPreferredLeader",
    "AdminCordonsDir",
    "NetworkLosesMessage",
    "ControllerCommits",
    "ControllerFailsOver",
    "BrokerLoadsMetadata",
    "LeaderStartsEpoch",
    "LeaderAppendsRecord",
    "BrokerFlushesLog",
    "FollowerFetches",
    "LeaderSendsAlterPartition",
    "LeaderAdvancesHighWatermark",
    "ControllerHandlesAlterPartition",
    "BrokerReceivesAlterPartitionResponse",
    "ToolAsksReplicaLogInfo",
    "ToolElectsLeader",
)


def holds(log: tuple, entry: tuple) -> bool:
    """The replica log ``log`` holds the acknowledged record ``entry``: its leader epoch at its offset."""
    return entry[0] < len(log) and log[entry[0]] == entry[1]


def given_up_unless(entries: tuple, kept, cause: tuple) -> tuple:
    """``entries`` (a partition's ``acked``) with every record still kept for which ``kept(entry)``
    is false marked as given up by ``cause``; a record lost before keeps its first cause."""
    return tuple(e if e[3] != KEPT or kept(e) else e[:3] + (cause,) for e in entries)


def describe_loss(lost: tuple):
    """An ``acked`` entry's fate for people and traces: "kept", or the declared loss that gave it up."""
    if lost == KEPT:
        return "kept"
    kind, b, number = lost
    if kind == LOST_BY_ELECTION:
        return {"election": {"leader": b, "leaderEpoch": number}}
    if kind == LOST_BY_POWER:
        return {"powerLoss": {"broker": b, "incarnation": number}}
    return {"replacedDisk": {"broker": b, "incarnation": number}}


def except_at(t: tuple, i: int, v) -> tuple:
    """``t`` with item ``i`` replaced by ``v`` (TLA+'s [t EXCEPT ![i] = v])."""
    return t[:i] + (v,) + t[i + 1 :]


def bag_add(bag: tuple, m: tuple) -> tuple:
    return tuple(sorted(bag + (m,)))


def bag_remove(bag: tuple, m: tuple) -> tuple:
    i = bag.index(m)
    return bag[:i] + bag[i + 1 :]


VARIABLE_INDEX = {name: i for i, name in enumerate(VARIABLES)}


def dir_name(d) -> str:
    """A directory as traces show it: ``NONE`` for no slot, else its UUID's name."""
    return "NONE" if d == NONE else "GIVEN_UP" if d == GIVEN_UP else uuid_name(d)
