------------------------------ MODULE KRaftJBOD ------------------------------
(***************************************************************************)
(* KRaft controller, brokers and log directories: KIP-858 (JBOD), KIP-589  *)
(* (broker-epoch gated replica state), the controller's leader election,   *)
(* KIP-1275 (designated leader elections and the recovery tool), KIP-966   *)
(* (eligible leader replicas), unclean elections and the leader's recovery *)
(* state, and the data plane: replicas' logs, fetching, high watermarks,   *)
(* AlterPartition.                                                         *)
(*                                                                         *)
(* The Python package model/ mirrors this module one to one: the           *)
(* same variables, one function per action named like the operator here,   *)
(* the same invariants; TLC on a .cfg and `kraftcheck check` on the .toml  *)
(* of the same name report the same states, per action too (tested with    *)
(* TLC in tests/test_kafka_tlc.py).  Standard modules only.                *)
(***************************************************************************)
EXTENDS Naturals, Integers, Sequences, FiniteSets, Bags, TLC

CONSTANTS
    NumBrokers,               \* brokers 0 .. NumBrokers - 1
    DirsPerBroker,            \* log directories (slots) per broker
    NumPartitions,            \* partitions 0 .. NumPartitions - 1
    ReplicationFactor,        \* partition p is on brokers p, p+1, ... (mod NumBrokers)
    MaxRestarts,              \* restarts in the whole run, beyond each broker's first start
    CrashesAllowed,           \* a running broker's process may crash (BrokerCrashes)
    MaxDirFailures,           \* directory failures in the whole run
    MaxMessages,              \* messages in flight at once
    MaxLosses,                \* messages the network may lose in the whole run
    MaxSessionExpiries,       \* running brokers' heartbeat sessions that may expire in the whole run
    MaxCleanShutdowns,        \* controlled shutdowns in the whole run; 0: brokers only ever stop uncleanly
    LegacyBrokers,            \* brokers 0 .. LegacyBrokers - 1 register no directories
    MaxMoves,                 \* intra-broker replica moves in the whole run
    AlterReplicaStateEnabled, \* KIP-589's AlterReplicaState path
    DesignatedEnabled,        \* KIP-1275's designated elections
    Semantics,                \* "code": Kafka's controller code; "kip": KIP-858's text (spec/README.md)
    InitialMetadataVersion,   \* "3.5-IV2" (below 3.6-IV0), "3.6-IV2" (no directory assignment) or "3.7-IV2"
    MetadataUpgradeEnabled,   \* an operator may upgrade the metadata version to 3.7-IV2
    Failovers,                \* controller failovers in the whole run; 0: the metadata log is not modeled
    MaxUncommitted,           \* batches of records appended and not yet committed at once
    BrokerLag,                \* brokers act on the metadata they have loaded (brokerImage)
    MaxRecords,               \* records producers write in the whole run; 0: no data plane
    PowerLoss,                \* a running broker's machine may lose power: its logs keep what they had flushed
    Fetch,                    \* how followers fetch: "whole_log" (one step takes the leader's log) or "batch"
                              \* (Kafka's fetch protocol: one record, or a diverging epoch to truncate by)
    MinIsr,                   \* min.insync.replicas
    ElrEnabled,               \* KIP-966's eligible leader replicas (metadata version 4.0-IV1 and later)
    UncleanElection,          \* "off", "admin" (ElectLeaders UNCLEAN) or "topic" (unclean.leader.election.enable)
    MaxMinIsrChanges,         \* times an operator alters the topic's min.insync.replicas in the whole run
    MaxUncleanToggles,        \* times an operator turns the topic's unclean.leader.election.enable on or off
    PreferredElections,       \* an operator may run preferred leader elections
    TopicDeletion,            \* an operator may delete topics (DeleteTopics); a deleted topic is not created again
    MaxReassignments,         \* times an operator reassigns a partition, or cancels a reassignment under way
                              \* (AlterPartitionReassignments), in the whole run; 0: never
    MaxCordons,               \* KIP-1066: times an operator cordons or uncordons a broker's directory in the whole run
    MaxToolRequests,          \* KIP-1275's recovery tool: requests it may send in the whole run; 0: not run
    ToolEpoch,                \* "current" (KIP-1275's PartitionLeaderEpoch) or "last_written" (KIP-966's)
    ToolEpochCheck,           \* the tool's elections carry the leader epoch it saw (finding 10's fix)
    KafkaVersion,             \* the controller followed: "1eb7644" (the code read) or a release "4.0.0" .. "4.4.0"
    Mutant,                   \* "none", or the name of a bug put back (see spec/README.md)
    NoPartition               \* model value: a partition not yet created

Brokers == 0 .. NumBrokers - 1
Slots == 0 .. DirsPerBroker - 1
Partitions == 0 .. NumPartitions - 1
\* The replica assignment partition p is created with (its first replica the preferred leader);
\* afterwards the partition's registration holds its replicas (`replicas`, as PartitionRegistration).
Replicas(p) == [k \in 1 .. ReplicationFactor |-> (p + k - 1) % NumBrokers]
ReplicaSet(p) == {Replicas(p)[k] : k \in 1 .. ReplicationFactor}
\* The replicas a partition's registration holds, as a set.
ReplicasOf(part) == {part.replicas[k] : k \in DOMAIN part.replicas}
Legacy(b) == b < LegacyBrokers

(* Kafka's releases.  The model follows the controller code it was read from, apache/kafka    *)
(* trunk at commit 1eb7644349c (KafkaVersion "1eb7644"), or a release's: each rule below is one *)
(* a release changed since, on for the releases that have it (model/rules.py, KafkaRules).     *)
KafkaReleases ==
    ("4.0.0" :> <<4, 0, 0>>) @@ ("4.0.1" :> <<4, 0, 1>>) @@ ("4.0.2" :> <<4, 0, 2>>)
    @@ ("4.1.0" :> <<4, 1, 0>>) @@ ("4.1.1" :> <<4, 1, 1>>) @@ ("4.1.2" :> <<4, 1, 2>>)
    @@ ("4.2.0" :> <<4, 2, 0>>) @@ ("4.2.1" :> <<4, 2, 1>>) @@ ("4.2.2" :> <<4, 2, 2>>)
    @@ ("4.3.0" :> <<4, 3, 0>>) @@ ("4.3.1" :> <<4, 3, 1>>) @@ ("4.4.0" :> <<4, 4, 0>>)
ASSUME KafkaVersion = "1eb7644" \/ KafkaVersion \in DOMAIN KafkaReleases
\* a release's rules are its code's
ASSUME KafkaVersion # "1eb7644" => Semantics = "code"
IsRelease == KafkaVersion \in DOMAIN KafkaReleases
\* the release followed is v = <<major, minor, patch>> or a later one
ReleaseAtLeast(v) ==
    LET r == KafkaReleases[KafkaVersion]
    IN IsRelease /\ (r[1] > v[1] \/ (r[1] = v[1] /\ (r[2] > v[2] \/ (r[2] = v[2] /\ r[3] >= v[3]))))
Release4_0 == IsRelease /\ ~ReleaseAtLeast(<<4, 1, 0>>)
\* KAFKA-18106 (4.0.0): a new incarnation's registration takes the broker out of each ISR it is in
\* (and so out of its leaderships) also without ELR, as handleBrokerFenced does
ShutdownRecordsWithoutElr == IsRelease
\* BrokerHeartbeatTracker (4.0.0): a session belongs to a broker and epoch, is made by a heartbeat,
\* fenced or not, and ends when it expires (the broker fenced then) or a new incarnation registers;
\* before, only an unfenced broker had one (`session`)
SessionsByEpoch == IsRelease
\* ClusterControlManager.activate in 4.0.x: a controller taking over gives every registered broker a
\* session, fenced ones too; from 4.1.0 on, unfenced ones only
FailoverSessionsForFenced == Release4_0
\* KAFKA-19522, fixed in 4.1.0: 4.0.x elects the last known leader though it is not acceptable
LastKnownLeaderUnchecked == Release4_0
\* apache/kafka#20716 (4.3.0): AssignReplicasToDirs' builder has ELR as every other builder does
AssignmentKeepsElr == ReleaseAtLeast(<<4, 3, 0>>)
\* maybeUpdateLastKnownLeader from 4.1.1 on: a record that leaves the partition leaderless keeps its
\* leader as the last known one whatever the ISR, unless one is kept already; one that elects clears it
LastKnownLeaderWhenLeaderless == ReleaseAtLeast(<<4, 1, 1>>)
\* KAFKA-18635 (4.0.0): registerBroker detects a clean shutdown (previousBrokerEpoch equal to the
\* registered epoch, KAFKA-15586) and then keeps the broker's ELR memberships; the code read took
\* every new incarnation as an unclean shutdown
CleanShutdownDetection == IsRelease
\* KIP-1066 (KAFKA-19774, 4.3.0): brokers report cordoned log directories in their heartbeats,
\* registrations hold them, and placement reads them (MaxCordons needs it)
CordonedDirs == ReleaseAtLeast(<<4, 3, 0>>)
\* KAFKA-19975 (4.3.0): a reassignment completes once the replicas it adds are in the ISR, every
\* target replica in it only when it removes more replicas than it adds
ReassignmentCompletesOnceAddedInSync == ReleaseAtLeast(<<4, 3, 0>>)
CordonsOn == MaxCordons > 0
ASSUME Fetch \in {"whole_log", "batch"}
BatchFetches == Fetch = "batch"
ASSUME CordonsOn => CordonedDirs /\ Failovers = 0 /\ LegacyBrokers = 0 /\ InitialMetadataVersion = "3.7-IV2"
                    /\ ~MetadataUpgradeEnabled
\* Reassignments (AlterPartitionReassignments) go without the recovery tool and cordons: neither the
\* tool's replicas nor the cordoned brokers' placement is modeled for a reassigned partition.
ReassignmentsOn == MaxReassignments > 0
ASSUME ReassignmentsOn => MaxToolRequests = 0 /\ MaxCordons = 0

Min(S) == CHOOSE x \in S : \A y \in S : x <= y
Max(S) == CHOOSE x \in S : \A y \in S : x >= y
Range(seq) == {seq[k] : k \in DOMAIN seq}

\* The network is a bag; one copy of a message added or removed (standard Bags operators only).
BagAdd(B, m) == B (+) SetToBag({m})
BagRemove(B, m) == B (-) SetToBag({m})

(* The directory UUID space, shrunk to small ints (KIP-858 "Reserved UUIDs"). *)
UNASSIGNED == 0   \* Uuid(0, 1): not yet known where the replica lives
LOST == 1         \* Uuid(0, 2): in some offline directory that cannot be named
MIGRATING == 2    \* Uuid(0, 0): placed before directory assignment existed
RESERVED3 == 3    \* Uuid(0, 3): one of the other reserved values
FIRST_REAL == 4
Reserved == {UNASSIGNED, LOST, MIGRATING, RESERVED3}
IsReserved(u) == u < FIRST_REAL

NONE == -1        \* no slot, nothing queued
\* mutant assignment_not_retried: a queued assignment whose request or response was lost, which
\* the broker keeps queued and never sends again
GIVEN_UP == -3
NoLeader == -1

VARIABLES
    brokerStatus,  \* broker -> "OFF" | "STARTING" | "RUNNING"
    incarnation,   \* broker -> number of starts: the incarnation ID of the running process
    dirIds,        \* broker -> slot -> directory UUID in the slot's meta.properties
    dirState,      \* broker -> slot -> "HEALTHY" | "FAILED" | "FAILED_ACKED"
    logs,          \* broker -> slot -> partitions whose (main) log is on that disk
    future,        \* broker -> partition -> slot of the future replica, or NONE
    queued,        \* broker -> partition -> directory queued for AssignReplicasToDirs, or NONE
    brokerEpoch,   \* controller: broker -> registered broker epoch (0: never registered)
    fenced,        \* controller: broker -> fenced?
    onlineDirs,    \* controller: broker -> online directories of its registration
    partition,     \* controller: partition -> NoPartition or its record (NewPartition)
    network,       \* bag of messages in flight
    nextUuid,      \* the next fresh directory UUID
    dirFailures,   \* directory failures so far
    lostMessages,  \* messages lost so far
    movesStarted,  \* replica moves started so far
    knownEpoch,    \* broker -> the broker epoch its registration response gave it (0: none yet)
    registeredIncarnation, \* controller: broker -> incarnation ID of its registration (0: none)
    metadataVersion, \* controller: "3.5-IV2", "3.6-IV2" or "3.7-IV2"
    \* The metadata log, when failovers are modeled (else <<>>, <<>> and 0 throughout):
    committedImage, \* the controller variables as the committed records leave them
    uncommitted,    \* batches appended and not yet committed: <<[records, response], ...>>
    failoversDone,  \* controller failovers so far
    \* The brokers' own metadata, when their lag is modeled (else <<>> throughout):
    brokerImage,    \* broker -> the committed image the broker has loaded, which it acts on
    \* The data plane, when records are produced (else <<>> and 0 throughout):
    replicaLog,     \* broker -> partition -> the leader epoch of each record of its log (offset k-1 at k)
    highWatermark,  \* broker -> partition -> its replica's high watermark (checkpointed)
    followerEnd,    \* broker -> partition -> [leaderEpoch, start, ends, fetchEpochs]: what it learned as leader (in memory)
    acked,          \* partition -> <<offset, leaderEpoch, leader, lostBy>> of every record ever acknowledged
                    \* (committed); lostBy: Kept, or the declared loss that gave it up (LostBy* below)
    produced,       \* records produced so far
    flushed,        \* broker -> partition -> how much of its log is on disk (its flush point), when
                    \* machines may lose power (else <<>> throughout): a power loss keeps that prefix only
    \* KIP-1275's recovery tool, when it runs (else <<>> throughout):
    tool,           \* [answers: p -> b -> <<leaderEpoch, logEndOffset>> or <<>>, outcome: p -> "RUNNING" |
                    \*  "ELECTED" | "FOUND_ONLINE", requests: sent so far, takenUp: p -> offline leader epoch or -1]
    \* The controller's heartbeat sessions, when a Kafka release's are modeled (else <<>> throughout):
    session,        \* controller: broker -> does its registered epoch have a heartbeat session
    sessionsExpired, \* sessions of running brokers expired so far (a pause, heartbeats lost or late)
    \* Clean shutdowns, when they are modeled (else <<>> and 0 throughout):
    inControlledShutdown, \* controller: broker -> its registration's inControlledShutdown flag
    awaitedHeartbeats, \* controller: broker -> <<>> when BrokerHeartbeatManager has it in no controlled
                       \* shutdown, else <<the brokers whose metadata offset is below its controlled shutdown
                       \* offset>>: those that have not heartbeated since (lowestActiveOffset)
    wantShutdown,   \* broker -> has the running process begun a controlled shutdown (wantShutDown)
    cleanShutdownEpoch, \* broker -> the broker epoch in its directories' clean-shutdown files, which the
                        \* incarnation that read them at start registers with (previousBrokerEpoch); -1: none
    cleanShutdowns, \* controlled shutdowns begun so far
    \* Dynamic topic configs, when an operator may alter them while the cluster runs (else <<>> throughout):
    topicConfig,    \* controller: [minIsr, unclean] as its ConfigRecords leave them (every topic alike)
    configChanges,  \* [minIsr, unclean]: min.insync.replicas changes and unclean toggles so far
    \* Cordoned log directories (KIP-1066), when an operator may cordon them (else <<>> and 0 throughout):
    cordoned,       \* broker -> the slots its cordoned.log.dirs names (a broker config: kept across restarts)
    registeredCordons, \* controller: broker -> <<>> while its registration's cordonedLogDirs is null (none
                       \* reported since it registered), else <<the directories it holds cordoned>>
    reportedCordons, \* broker -> <<>> or <<the directories>> the last heartbeat of the broker that the controller
                     \* handled reported cordoned, whichever incarnation sent it: what the controller has been told
    cordonChanges,  \* changes to a broker's cordoned.log.dirs so far
    \* Kafka's fetch protocol, when it is modeled (Fetch = "batch"; else <<>> throughout):
    epochEntry,     \* broker -> partition -> the leader epoch Partition.makeLeader assigned at the log's end in
                    \* the replica's leader-epoch cache while no record of it follows yet, or -1
    \* Topic deletion, when an operator may delete topics (TopicDeletion; else <<>> throughout):
    deleted,        \* controller: partition -> has its topic been deleted (its RemoveTopicRecord replayed)
    \* Partition reassignments, when an operator may reassign partitions (MaxReassignments; else 0 throughout):
    reassignmentsMade \* AlterPartitionReassignments requests that changed a partition so far

vars == <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued,
          brokerEpoch, fenced, onlineDirs, partition, network,
          nextUuid, dirFailures, lostMessages, movesStarted,
          knownEpoch, registeredIncarnation, metadataVersion,
          committedImage, uncommitted, failoversDone, brokerImage,
          replicaLog, highWatermark, followerEnd, acked, produced, flushed, tool, session, sessionsExpired,
          inControlledShutdown, awaitedHeartbeats, wantShutdown, cleanShutdownEpoch, cleanShutdowns,
          topicConfig, configChanges, cordoned, registeredCordons, reportedCordons, cordonChanges, epochEntry, deleted,
          reassignmentsMade>>
\* What a broker's crash keeps of the data plane (its followerEnd is in memory).
dataKept == <<replicaLog, highWatermark, acked, produced, flushed>>
dataVars == <<replicaLog, highWatermark, followerEnd, acked, produced, flushed, epochEntry>>
brokerVars == <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage, dataVars>>
\* What a controller step leaves alone: all but `acked`, in which an unclean election marks what it gives up.
brokerVarsButAcked == <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                        replicaLog, highWatermark, followerEnd, produced, flushed, epochEntry>>
logVars == <<committedImage, uncommitted, failoversDone>>
\* The controller's state: in memory, and (with failovers) its metadata log.
\* (reportedCordons, what the controller has been told of cordons, goes with them.)
controllerVars == <<brokerEpoch, fenced, onlineDirs, partition, registeredIncarnation, metadataVersion, topicConfig,
                   registeredCordons, reportedCordons, deleted, logVars>>
\* An operator's cordons: the brokers' configs, and the count.
cordonVars == <<cordoned, cordonChanges>>
counters == <<nextUuid, dirFailures, lostMessages, movesStarted, sessionsExpired, configChanges, cordonVars,
             reassignmentsMade>>
\* Controlled shutdown: the controller's side (its registrations' flags and BrokerHeartbeatManager's
\* offsets), the brokers' (a shutdown asked for, the clean-shutdown files), and the count.
heartbeatVars == <<inControlledShutdown, awaitedHeartbeats>>
brokerShutdownVars == <<wantShutdown, cleanShutdownEpoch>>
shutdownVars == <<heartbeatVars, brokerShutdownVars, cleanShutdowns>>

-----------------------------------------------------------------------------
(* Helpers *)

SlotOnline(b, i) == dirState[b][i] = "HEALTHY"
SlotFailed(b, i) == dirState[b][i] # "HEALTHY"
FailedSlots(b) == {i \in Slots : SlotFailed(b, i)}
OnlineSlots(b) == {i \in Slots : SlotOnline(b, i)}
MainSlots(b, p) == {i \in Slots : p \in logs[b][i]}
Load(b, i) == Cardinality(logs[b][i]) + Cardinality({p \in Partitions : future[b][p] = i})
\* The directories a broker may place a new replica in (LogManager.nextLogDirs): the online ones,
\* with cordoned directories (KIP-1066) the uncordoned ones among them, or the first online one
\* when every one is cordoned; the only online one, cordoned or not.
PlacementSlots(b) ==
    LET open == IF CordonsOn /\ Mutant # "log_dirs_ignore_cordons" /\ Cardinality(OnlineSlots(b)) > 1
                THEN OnlineSlots(b) \ cordoned[b] ELSE OnlineSlots(b)
    IN IF open = {} /\ OnlineSlots(b) # {} THEN {Min(OnlineSlots(b))} ELSE open
\* Where a broker places a new replica: of those, the directory with the fewest logs.
LeastLoadedOnlineSlot(b) ==
    CHOOSE i \in PlacementSlots(b) :
        \A j \in PlacementSlots(b) : Load(b, i) < Load(b, j) \/ (Load(b, i) = Load(b, j) /\ i <= j)

\* The data plane is modeled: records are produced, replicas keep logs.
DataPlane == MaxRecords > 0
ToolOn == MaxToolRequests > 0
\* The topic's configs are state (topicConfig), altered while the cluster runs.
DynamicConfigs == MaxMinIsrChanges > 0 \/ MaxUncleanToggles > 0
\* min.insync.replicas and unclean.leader.election.enable in a topic config `tc` (the controller's,
\* or an image's): as altered, or as the constants give them.
MinIsrIn(tc) == IF DynamicConfigs THEN tc.minIsr ELSE MinIsr
UncleanIn(tc) == IF DynamicConfigs THEN tc.unclean ELSE UncleanElection = "topic"
\* unclean.leader.election.enable as the controller's elections read it (the topic's dynamic value
\* first, uncleanLeaderElectionEnabledForTopic); the mutant reads the value the cluster started with.
ControllerUnclean ==
    IF Mutant = "unclean_config_read_statically" THEN UncleanElection = "topic" ELSE UncleanIn(topicConfig)

Registered(b) == brokerEpoch[b] > 0
\* BrokerRegistration.hasUncordonedDirs: the registration lists no directory, or holds no cordoned
\* ones (null), or some online directory of it is not cordoned.
HasUncordonedDirs(b) ==
    IF onlineDirs[b] = {} \/ registeredCordons[b] = <<>> THEN TRUE
    ELSE ~(onlineDirs[b] \subseteq registeredCordons[b][1])
EpochIsCurrent(b, e) == Registered(b) /\ brokerEpoch[b] = e
\* The registered incarnation has a heartbeat session (BrokerHeartbeatManager.hasValidSession, timing
\* apart): the code read, while it is unfenced; the releases, once its epoch has heartbeated, fenced
\* or not, until that session expires or a new incarnation registers.
HasSession(b) == IF SessionsByEpoch THEN session[b] ELSE ~fenced[b]
\* QuorumController.trackBrokerHeartbeat: a heartbeat of the registered epoch gives it a session.
HeardFrom(b, e) ==
    session' = IF SessionsByEpoch /\ EpochIsCurrent(b, e) THEN [session EXCEPT ![b] = TRUE] ELSE session
\* The registered incarnation is the broker's running process (it heartbeats).
Alive(b) == brokerStatus[b] = "RUNNING" /\ incarnation[b] = registeredIncarnation[b]
\* MetadataVersion.isDirectoryAssignmentSupported
AssignmentSupported == metadataVersion = "3.7-IV2"

\* DirectoryId.isOnline: a broker that registered no directories has all of them online.
IsOnline(d, online) ==
    IF d \in {UNASSIGNED, MIGRATING} THEN TRUE
    ELSE IF d = LOST THEN FALSE
    ELSE IF online = {} THEN TRUE
    ELSE d \in online

DirOnlineInMetadata(b, d) == Registered(b) /\ IsOnline(d, onlineDirs[b])

\* The controller's own check, where the directory mutants put their bugs back.
ControllerThinksOnline(b, d, od) ==
    IF Mutant = "elect_ignoring_dirs" THEN TRUE
    ELSE IF Mutant = "no_dirs_all_offline" /\ od[b] = {} THEN d \in {UNASSIGNED, MIGRATING}
    ELSE IsOnline(d, od[b])

\* The clean-shutdown files, and the controlled-shutdown state, are modeled: with controlled
\* shutdowns, which write them, and with power losses, whose detection at the next registration
\* reads them.
CleanShutdownsOn == MaxCleanShutdowns > 0 \/ PowerLoss
\* The registration's inControlledShutdown flag (the controller's own state: clean shutdowns are
\* modeled without failovers, so no image holds it).
InControlledShutdown(b) == CleanShutdownsOn /\ inControlledShutdown[b]
\* ClusterControlManager.isActive: registered, unfenced and not in controlled shutdown.
Active(b) == Registered(b) /\ ~fenced[b] /\ ~InControlledShutdown(b)

\* BrokerHeartbeatManager, as awaitedHeartbeats holds it.  A heartbeat of the registered epoch
\* reports the offset the controller has written (touch): no controlled shutdown awaits it any
\* more; fenced, it leaves its own controlled shutdown.
HeartbeatTouched(aw, b, leaves) ==
    [x \in Brokers |-> IF x = b /\ leaves THEN <<>> ELSE IF aw[x] = <<>> THEN <<>> ELSE <<aw[x][1] \ {b}>>]
\* Replaying a registration record of b (BrokerHeartbeatManager.register): its offset forgotten,
\* so every controlled shutdown under way awaits its next heartbeat; a new entry, or a fenced
\* broker, is in no controlled shutdown.
OffsetForgotten(aw, b, leaves) ==
    [x \in Brokers |-> IF x = b THEN (IF leaves THEN <<>> ELSE aw[x])
                       ELSE IF aw[x] = <<>> THEN <<>> ELSE <<aw[x][1] \cup {b}>>]
\* In BrokerHeartbeatManager's active set: unfenced and not shutting down.
HeartbeatActive(b) == Registered(b) /\ ~fenced[b] /\ awaitedHeartbeats[b] = <<>>

AcceptableLeader(b, d, ep, fen, od) == ep[b] > 0 /\ ~fen[b] /\ ~InControlledShutdown(b) /\ ControllerThinksOnline(b, d, od)

DefaultDir(b) ==
    IF onlineDirs[b] = {} \/ ~AssignmentSupported THEN MIGRATING
    ELSE IF Cardinality(onlineDirs[b]) = 1 THEN CHOOSE d \in onlineDirs[b] : TRUE
    ELSE UNASSIGNED

(* PartitionChangeBuilder.build: take brokers out of the target ISR, then elect: the current  *)
(* leader if still valid, else the first valid replica in replica order (valid: in the ISR, or *)
(* in the ELR when the ISR is empty, and acceptable), else with ELR the last known leader when *)
(* ISR and ELR are empty (unclean), else for an "unclean" election the first acceptable       *)
(* replica, else no leader.  `remove` and `unclean` (handleBrokerUncleanShutdown) are never    *)
(* acceptable leaders, `add` is one though still fenced (generateLeaderAndIsrUpdates'          *)
(* brokerToRemove, brokerWithUncleanShutdown, brokerToAdd).  With ELR (KIP-966) an ISR shorter *)
(* than MinIsr keeps the members it lost as eligible leader replicas; one at least as long     *)
(* clears them.  An unclean election's leader is the ISR alone and, with the data plane,       *)
(* RECOVERING; `recovered`: the leader's AlterPartition reports its recovery done.  Without    *)
(* ELR an empty ISR is never written.  A reassignment's targets (setTargetReplicas,            *)
(* setTargetRemoving, setTargetAdding; by default the registration's): one under way completes *)
(* first (completeReassignmentIfNeeded), the election goes by the target replicas' order, a    *)
(* record that drops a replica bumps the leader epoch, and a new replica's directory is        *)
(* DefaultDir (setAssignmentChanges).  The result is a PartitionChangeRecord holding only what *)
(* changes; ep, fen, od: the controller state the election reads.                              *)
NoLeaderChange == -2
The(S) == CHOOSE x \in S : TRUE
\* (Build is a chain of operators, each taking what the one before computed: TLC's coverage
\* expands every reference to a LET definition anew.)
AcceptableAs(r, remove, add, unclean, acceptDirs, ep, fen, od) ==
    /\ r # remove /\ r # unclean
    /\ IF r = add THEN ep[r] > 0 /\ ControllerThinksOnline(r, acceptDirs[r], od)
       ELSE AcceptableLeader(r, acceptDirs[r], ep, fen, od)
\* maybePopulateTargetElr
TargetElr(part, targetIsr, unclean, elrOn) ==
    IF ~elrOn THEN part.elr
    \* getTopicEffectiveMinIsr: min.insync.replicas, but no more than the partition's replicas
    ELSE IF Cardinality(targetIsr) >= Min({MinIsrIn(topicConfig), Len(part.replicas)}) THEN {}
    ELSE (part.elr \cup part.isr) \ (targetIsr \cup {unclean})
\* isValidNewLeader: in the ISR, or in the ELR when the ISR is empty, and acceptable; of the
\* target replicas `reps` (a sequence)
ValidLeaders(reps, targetIsr, elr0, acceptable) ==
    {r \in Range(reps) : (r \in targetIsr \/ (targetIsr = {} /\ r \in elr0)) /\ r \in acceptable}
\* The first of S in the replica order `reps` (NoLeader if none is there).
FirstIn(reps, S) ==
    LET ks == {k \in DOMAIN reps : reps[k] \in S} IN IF ks = {} THEN NoLeader ELSE reps[Min(ks)]
\* electAnyLeader: <<leader, unclean>>; the last known leader (canElectLastKnownLeader, KAFKA-19522
\* fixed), then for an "unclean" election any acceptable replica; over the target replicas t.replicas
\* in their order, with the target ISR t.isr
Elect(part, t, elr0, acceptable, election, elrOn) ==
    LET valid == ValidLeaders(t.replicas, t.isr, elr0, acceptable)
    IN IF election = "preferred" /\ t.replicas[1] \in valid THEN <<t.replicas[1], FALSE>>  \* electPreferredLeader
       ELSE IF part.leader # NoLeader /\ part.leader \in valid THEN <<part.leader, FALSE>>
       ELSE IF valid # {} THEN <<FirstIn(t.replicas, valid), FALSE>>
       ELSE IF elrOn /\ elr0 = {} /\ t.isr = {} /\ Cardinality(part.lastKnownElr) = 1
               /\ (part.lastKnownElr \subseteq acceptable \/ Mutant = "elect_unacceptable_last_leader"
                   \/ LastKnownLeaderUnchecked)
       THEN <<The(part.lastKnownElr), TRUE>>
       ELSE IF election = "unclean" /\ FirstIn(t.replicas, acceptable) # NoLeader
       THEN <<FirstIn(t.replicas, acceptable), TRUE>>
       ELSE <<NoLeader, FALSE>>
\* The directories of the replicas `reps` (a sequence), in their order, as the registration lists
\* them (PartitionRegistration.directories): `dirs` maps a replica to its directory.
DirsInOrder(reps, dirs) == [k \in DOMAIN reps |-> dirs[reps[k]]]
\* setAssignmentChanges: each target replica's directory, DefaultDir (ClusterDescriber.defaultDir)
\* for a replica the registration does not have.
AssignedDirs(part, reps, newDirs) ==
    IF reps = part.replicas THEN newDirs
    ELSE [r \in Range(reps) |-> IF r \in DOMAIN newDirs THEN newDirs[r] ELSE DefaultDir(r)]
\* tryElection, triggerLeaderEpochBumpForReplicaReassignmentIfNeeded, maybeUpdateRecordElr, the
\* ISR, maybeUpdateLastKnownLeader, setAssignmentChanges, the recovery state
RecordOf(part, t, elr0, newLeader, electedUnclean, newDirs, elrOn, recovered) ==
    LET targetIsr == t.isr
        changed == newLeader # part.leader
        isUnclean == changed /\ electedUnclean
        fromElr == changed /\ newLeader \in elr0
        isr1 == IF fromElr THEN {newLeader} ELSE targetIsr
        setIsr == isUnclean \/ ((isr1 # {} \/ elrOn) /\ isr1 # part.isr)
        isr2 == IF isUnclean THEN {newLeader} ELSE isr1
        elr2 == IF ~elrOn \/ isUnclean THEN {} ELSE IF fromElr THEN elr0 \ {newLeader} ELSE elr0
        \* triggerLeaderEpochBumpForIsrShrinkIfNeeded: below 3.6-IV0 the brokers' replica manager
        \* needs a new leader epoch whenever the ISR shrinks (KAFKA-15021)
        bumpOnShrink == /\ metadataVersion = "3.5-IV2" /\ Mutant # "no_leader_epoch_bump_on_isr_shrink"
                        /\ setIsr /\ ~(part.isr \subseteq isr2)
        \* triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: a record whose replicas lack one of
        \* the registration's sets the leader, for a new leader epoch
        bumpOnReassign == ~(ReplicasOf(part) \subseteq Range(t.replicas))
        recLeader == IF changed THEN newLeader ELSE IF bumpOnReassign \/ bumpOnShrink THEN part.leader
                     ELSE NoLeaderChange
        dirs2 == AssignedDirs(part, t.replicas, newDirs)
        \* from 4.1.1 (LastKnownLeaderWhenLeaderless): kept when the record leaves the partition
        \* leaderless and none is kept yet, cleared when it elects; before: kept when the ISR empties
        knownToLeader == elrOn /\ IF LastKnownLeaderWhenLeaderless THEN recLeader = NoLeader /\ part.lastKnownElr = {}
                                 ELSE setIsr /\ isr2 = {} /\ part.lastKnownElr # {part.leader}
        knownCleared == elrOn /\ part.lastKnownElr # {}
                        /\ IF LastKnownLeaderWhenLeaderless THEN recLeader >= 0
                           ELSE recLeader >= 0 \/ (part.leader # NoLeader /\ recLeader # NoLeader)
    IN [leader |-> recLeader,
        setIsr |-> setIsr, isr |-> isr2,
        \* the directories as the registration lists them, in replica order, compared
        setDirs |-> IF t.replicas = part.replicas THEN dirs2 # part.dirs
                    ELSE DirsInOrder(t.replicas, dirs2) # DirsInOrder(part.replicas, part.dirs),
        dirs |-> dirs2,
        setElr |-> elr2 # part.elr, elr |-> elr2,
        setKnown |-> knownToLeader \/ knownCleared,
        known |-> IF knownToLeader THEN {part.leader} ELSE {},
        recovery |-> IF recovered /\ part.recovering THEN "RECOVERED"
                     ELSE IF isUnclean /\ DataPlane /\ ~part.recovering /\ Mutant # "unclean_not_recovering"
                     THEN "RECOVERING" ELSE "none",
        setReplicas |-> t.replicas # part.replicas, replicas |-> t.replicas,
        setRemoving |-> t.removing # part.removing, removing |-> t.removing,
        setAdding |-> t.adding # part.adding, adding |-> t.adding]
RecordFrom(part, t, elr0, result, newDirs, elrOn, recovered) ==
    RecordOf(part, t, elr0, result[1], result[2], newDirs, elrOn, recovered)
BuildWith(part, p, t, elr0, acceptable, newDirs, election, elrOn, recovered) ==
    RecordFrom(part, t, elr0, Elect(part, t, elr0, acceptable, election, elrOn), newDirs, elrOn, recovered)
\* A replica is judged on acceptDirs, its directory in the registration the builder started from
\* (LeaderAcceptor, PartitionRegistration.directory): the registration's replicas only.
BuildFor(part, p, t, remove, add, unclean, newDirs, acceptDirs, election, elrOn, recovered, ep, fen, od) ==
    BuildWith(part, p, t, TargetElr(part, t.isr, unclean, elrOn),
              {r \in ReplicasOf(part) : AcceptableAs(r, remove, add, unclean, acceptDirs, ep, fen, od)},
              newDirs, election, elrOn, recovered)
\* LeaderAcceptor's checks of a broker before its directory: not the broker leaving, and active
\* (isActive; the broker being added need only be registered).
BrokerAcceptableAs(r, remove, add, unclean, ep, fen) ==
    /\ r # remove /\ r # unclean
    /\ IF r = add THEN ep[r] > 0 ELSE ep[r] > 0 /\ ~fen[r] /\ ~InControlledShutdown(r)
\* The election judges the directory of a broker the registration does not hold (an eligible leader
\* replica a reassignment removed, then added back): PartitionRegistration.directory throws
\* IllegalArgumentException, and the request fails with nothing written.  The builder asks in
\* tryElection's order, and stops at the first leader it can take: the first target replica if
\* the election is PREFERRED, the current leader, the target replicas in order (isValidNewLeader:
\* in the ISR, or the ELR with the ISR empty), the last known leader, and for an UNCLEAN election
\* any target replica.  brokerOk: the brokers passing BrokerAcceptableAs; acceptable: the
\* registration's replicas passing AcceptableAs.
JudgesNonReplica(part, t, elr0, brokerOk, acceptable, election, elrOn) ==
    LET regs == ReplicasOf(part)
        reps == t.replicas
        cand == IF t.isr = {} THEN elr0 ELSE t.isr
        throws(r) == r \in brokerOk /\ r \notin regs
        \* the first of reps in S the acceptor judges is not the registration's, and none of S
        \* before it is taken
        throwsIn(S, taken) == \E k \in DOMAIN reps : /\ reps[k] \in S /\ throws(reps[k])
                                                   /\ \A j \in 1 .. k - 1 : reps[j] \notin taken
        valid == cand \cap acceptable
        knownAsked == elrOn /\ elr0 = {} /\ t.isr = {} /\ Cardinality(part.lastKnownElr) = 1
        knownTaken == part.lastKnownElr \subseteq acceptable \/ Mutant = "elect_unacceptable_last_leader"
                      \/ LastKnownLeaderUnchecked
    IN IF election = "preferred" /\ reps[1] \in cand /\ throws(reps[1]) THEN TRUE
       ELSE IF election = "preferred" /\ reps[1] \in valid THEN FALSE
       ELSE IF part.leader \in cand /\ throws(part.leader) THEN TRUE
       ELSE IF part.leader \in valid THEN FALSE
       ELSE IF throwsIn(cand, valid) THEN TRUE
       ELSE IF Range(reps) \cap valid # {} THEN FALSE
       ELSE IF knownAsked /\ throws(The(part.lastKnownElr)) THEN TRUE
       ELSE IF knownAsked /\ knownTaken THEN FALSE
       ELSE election = "unclean" /\ throwsIn(Range(reps), acceptable)
\* JudgesNonReplica for BuildFor's arguments.
BuildThrowsFor(part, t, remove, add, unclean, acceptDirs, election, elrOn, ep, fen, od) ==
    JudgesNonReplica(part, t, TargetElr(part, t.isr, unclean, elrOn),
                     {r \in Brokers : BrokerAcceptableAs(r, remove, add, unclean, ep, fen)},
                     {r \in ReplicasOf(part) : AcceptableAs(r, remove, add, unclean, acceptDirs, ep, fen, od)},
                     election, elrOn)
\* What the builder is to make of the partition: the target ISR, the target replicas (a sequence),
\* and the replicas a reassignment removes and adds (sets: the record lists them sorted).
Targets(isr, reps, removing, adding) == [isr |-> isr, replicas |-> reps, removing |-> removing, adding |-> adding]
\* completeReassignmentIfNeeded (PartitionReassignmentReplicas.maybeCompleteReassignment): a
\* reassignment under way completes once the target ISR less the replicas it removes is not empty
\* and holds every replica it keeps (from 4.3.0, KAFKA-19975: every replica it adds, and every one
\* it keeps only when it removes more than it adds): those are the replicas then, and that the ISR.
Completed(t) ==
    IF t.removing = {} /\ t.adding = {} THEN t
    ELSE LET keptIsr == t.isr \ t.removing
             kept == SelectSeq(t.replicas, LAMBDA r : r \notin t.removing)
             inSync == IF ReassignmentCompletesOnceAddedInSync
                       THEN t.adding \subseteq keptIsr
                            /\ (Cardinality(t.adding) >= Cardinality(t.removing) \/ Range(kept) \subseteq keptIsr)
                       ELSE Range(kept) \subseteq keptIsr
         IN IF keptIsr # {} /\ kept # <<>> /\ inSync
            THEN Targets(keptIsr, kept, {}, {}) ELSE t
\* The builder with a reassignment's targets t0 (setTargetReplicas, setTargetRemoving, setTargetAdding).
BuildReassigning(part, p, t0, remove, add, unclean, newDirs, acceptDirs, election, elrOn, recovered, ep, fen, od) ==
    BuildFor(part, p, Completed(t0), remove, add, unclean, newDirs, acceptDirs, election, elrOn, recovered, ep, fen, od)
\* The builder with the target ISR given, the replicas and the reassignment the registration's.
Build(part, p, targetIsr, remove, add, unclean, newDirs, acceptDirs, election, elrOn, recovered, ep, fen, od) ==
    BuildReassigning(part, p, Targets(targetIsr, part.replicas, part.removing, part.adding), remove, add, unclean,
                     newDirs, acceptDirs, election, elrOn, recovered, ep, fen, od)
\* The topic's election, with unclean.leader.election.enable.
TopicElection == IF ControllerUnclean THEN "unclean" ELSE "online"
\* generateLeaderAndIsrUpdates: `remove` out of the ISR; a replica judged on acceptDirs (Kafka's
\* LeaderAcceptor reads the registration the builder started from).
ChangeRecordJudging(part, p, remove, add, newDirs, acceptDirs, keepInIsr, ep, fen, od) ==
    LET isr == IF remove # NONE /\ remove \in part.isr /\ ~keepInIsr THEN part.isr \ {remove} ELSE part.isr
    IN Build(part, p, isr, remove, add, NONE, newDirs, acceptDirs, TopicElection, ElrEnabled, FALSE, ep, fen, od)
\* handleBrokerUncleanShutdown (with ELR): the broker out of the ISR and the ELR.
UncleanShutdownRecord(part, p, b, ep, fen, od) ==
    Build(part, p, part.isr \ {b}, NONE, NONE, b, part.dirs, part.dirs, TopicElection, ElrEnabled, FALSE, ep, fen, od)
\* handleAssignReplicasToDirs' builder: neither ELR nor the topic's unclean election set (ELR as
\* elsewhere from 4.3.0, AssignmentKeepsElr).
AssignRecord(part, p, newDirs, ep, fen, od) ==
    Build(part, p, part.isr, NONE, NONE, NONE, newDirs, part.dirs, "online", AssignmentKeepsElr /\ ElrEnabled, FALSE,
          ep, fen, od)
\* The builder with a target ISR given (a leader's AlterPartition: setTargetIsrWithBrokerStates),
\* and the leader's recovery done (setTargetLeaderRecoveryState).
IsrChangeRecord(part, p, isr, recovered, ep, fen, od) ==
    Build(part, p, isr, NONE, NONE, NONE, part.dirs, part.dirs, TopicElection, ElrEnabled, recovered, ep, fen, od)
\* electLeader with ElectionType.UNCLEAN (an admin's, or the controller's periodic task).
UncleanElectionRecord(part, p, ep, fen, od) ==
    Build(part, p, part.isr, NONE, NONE, NONE, part.dirs, part.dirs, "unclean", ElrEnabled, FALSE, ep, fen, od)
\* electLeader with ElectionType.PREFERRED: the first replica if valid, then as any election.
PreferredElectionRecord(part, p, ep, fen, od) ==
    Build(part, p, part.isr, NONE, NONE, NONE, part.dirs, part.dirs, "preferred", ElrEnabled, FALSE, ep, fen, od)
ChangeRecord(part, p, remove, add, newDirs, keepInIsr, ep, fen, od) ==
    ChangeRecordJudging(part, p, remove, add, newDirs, newDirs, keepInIsr, ep, fen, od)

\* PartitionRegistration.merge: replaying a record sets what it holds; the leader epoch goes up
\* when it sets a leader, the partition epoch with every record.  A record that would change
\* nothing is never written.
NoChange(rec) ==
    /\ rec.leader = NoLeaderChange /\ ~rec.setIsr /\ ~rec.setDirs /\ ~rec.setElr /\ ~rec.setKnown /\ rec.recovery = "none"
    /\ ~rec.setReplicas /\ ~rec.setRemoving /\ ~rec.setAdding
\* New replicas with the directories the registration lists, by position: a record that sets the
\* replicas and not the directories leaves the list as it was (it reads the same in the new order).
Realigned(part, reps) == [r \in Range(reps) |-> part.dirs[part.replicas[CHOOSE k \in DOMAIN reps : reps[k] = r]]]
Merge(part, rec) ==
    IF NoChange(rec) THEN part
    ELSE [leader |-> IF rec.leader = NoLeaderChange THEN part.leader ELSE rec.leader,
          isr |-> IF rec.setIsr THEN rec.isr ELSE part.isr,
          dirs |-> IF rec.setDirs THEN rec.dirs ELSE IF rec.setReplicas THEN Realigned(part, rec.replicas) ELSE part.dirs,
          leaderEpoch |-> part.leaderEpoch + (IF rec.leader = NoLeaderChange THEN 0 ELSE 1),
          partitionEpoch |-> part.partitionEpoch + 1,
          elr |-> IF rec.setElr THEN rec.elr ELSE part.elr,
          lastKnownElr |-> IF rec.setKnown THEN rec.known ELSE part.lastKnownElr,
          recovering |-> IF rec.recovery = "none" THEN part.recovering ELSE rec.recovery = "RECOVERING",
          replicas |-> IF rec.setReplicas THEN rec.replicas ELSE part.replicas,
          removing |-> IF rec.setRemoving THEN rec.removing ELSE part.removing,
          adding |-> IF rec.setAdding THEN rec.adding ELSE part.adding]
\* A new partition (PartitionRecord): both epochs 0, no ELR, recovered, no reassignment under way.
NewPartition(p, leader, isr, dirs) ==
    [leader |-> leader, isr |-> isr, dirs |-> dirs, leaderEpoch |-> 0, partitionEpoch |-> 0,
     elr |-> {}, lastKnownElr |-> {}, recovering |-> FALSE, replicas |-> Replicas(p), removing |-> {}, adding |-> {}]

\* A record computed from the partition as it is, and replayed onto it.
ChangePartition(part, p, remove, newDirs, keepInIsr, ep, fen, od) ==
    Merge(part, ChangeRecord(part, p, remove, NONE, newDirs, keepInIsr, ep, fen, od))

-----------------------------------------------------------------------------
(* The metadata log, as records.  With failovers (LogOn) a handler's records wait uncommitted,  *)
(* its answer with them, until the quorum commits them; brokers read the committed image.       *)
(* Without, both happen at once, and the controller's state is what brokers read.               *)

LogOn == Failovers > 0
CurrentImage == [brokerEpoch |-> brokerEpoch, fenced |-> fenced, onlineDirs |-> onlineDirs,
                 partition |-> partition, registeredIncarnation |-> registeredIncarnation,
                 metadataVersion |-> metadataVersion, topicConfig |-> topicConfig,
                 registeredCordons |-> registeredCordons, deleted |-> deleted]
\* The metadata brokers read: brokers replay committed records only.
Published == IF LogOn THEN committedImage ELSE CurrentImage
\* The metadata broker b acts on: the image it has loaded when the brokers' lag is modeled.
BrokerView(b) == IF BrokerLag THEN brokerImage[b] ELSE Published
\* The broker has loaded its own registration (its epoch and incarnation): only then does
\* Kafka's broker act on metadata and ask to be unfenced (BrokerServer's initial catch-up).
CaughtUp(b) ==
    /\ knownEpoch[b] > 0
    /\ BrokerView(b).brokerEpoch[b] = knownEpoch[b]
    /\ BrokerView(b).registeredIncarnation[b] = incarnation[b]

\* The records as the log holds them: what a record leaves alone is stored empty.
PartitionChangeRec(p, rec) ==
    [kind |-> "PartitionChange", partition |-> p, leader |-> rec.leader,
     setIsr |-> rec.setIsr, isr |-> IF rec.setIsr THEN rec.isr ELSE {},
     setDirs |-> rec.setDirs, dirs |-> IF rec.setDirs THEN rec.dirs ELSE <<>>,
     setElr |-> rec.setElr, elr |-> IF rec.setElr THEN rec.elr ELSE {},
     setKnown |-> rec.setKnown, known |-> IF rec.setKnown THEN rec.known ELSE {},
     recovery |-> rec.recovery,
     setReplicas |-> rec.setReplicas, replicas |-> IF rec.setReplicas THEN rec.replicas ELSE <<>>,
     setRemoving |-> rec.setRemoving, removing |-> IF rec.setRemoving THEN rec.removing ELSE {},
     setAdding |-> rec.setAdding, adding |-> IF rec.setAdding THEN rec.adding ELSE {}]
\* fenced: TRUE, FALSE, or left alone (setFenced FALSE); logDirs: {} leaves them alone
RegistrationChangeRec(b, setFenced, fen, logDirs) ==
    [kind |-> "BrokerRegistrationChange", broker |-> b, setFenced |-> setFenced, fenced |-> fen, logDirs |-> logDirs,
     inControlledShutdown |-> FALSE]
\* handleBrokerInControlledShutdown's record: the registration's inControlledShutdown set
ControlledShutdownRec(b) ==
    [kind |-> "BrokerRegistrationChange", broker |-> b, setFenced |-> FALSE, fenced |-> FALSE, logDirs |-> {},
     inControlledShutdown |-> TRUE]
RegisterBrokerRec(b, inc, epoch, fen, logDirs) ==
    [kind |-> "RegisterBroker", broker |-> b, incarnation |-> inc, epoch |-> epoch, fenced |-> fen, logDirs |-> logDirs]
PartitionRec(p, leader, isr, dirs) == [kind |-> "Partition", partition |-> p, leader |-> leader, isr |-> isr, dirs |-> dirs]
FeatureLevelRec(version) == [kind |-> "FeatureLevel", version |-> version]
\* ConfigRecord (every topic alike): key "minIsr" or "unclean"
ConfigRec(key, value) == [kind |-> "Config", key |-> key, value |-> value]
\* A BrokerRegistrationChangeRecord that sets only cordonedLogDirs (handleDirectoriesCordoned)
CordonedDirsRec(b, dirs) == [kind |-> "CordonedDirs", broker |-> b, dirs |-> dirs]
\* ClearElrRecord (every topic)
ClearElrRec == [kind |-> "ClearElr"]
RemoveTopicRec(p) == [kind |-> "RemoveTopic", partition |-> p]
\* ReplicationControlManager.replay(ClearElrRecord): a partition with an ELR or a last known leader
\* merges a record emptying both (its partition epoch goes up).
ElrCleared(part) ==
    IF part = NoPartition \/ (part.elr = {} /\ part.lastKnownElr = {}) THEN part
    ELSE [part EXCEPT !.elr = {}, !.lastKnownElr = {}, !.partitionEpoch = @ + 1]
\* The PartitionChangeRecords of a sequence that change something (those are written).
Written(recs) == SelectSeq(recs, LAMBDA r : r.kind # "PartitionChange" \/ ~NoChange(r))
\* A PartitionChangeRecord that changes nothing (never written: Written drops it).
NoChangeRec(p) == PartitionChangeRec(p, [leader |-> NoLeaderChange, setIsr |-> FALSE, isr |-> {},
                                         setDirs |-> FALSE, dirs |-> <<>>, setElr |-> FALSE, elr |-> {},
                                         setKnown |-> FALSE, known |-> {}, recovery |-> "none",
                                         setReplicas |-> FALSE, replicas |-> <<>>, setRemoving |-> FALSE,
                                         removing |-> {}, setAdding |-> FALSE, adding |-> {}])
RECURSIVE Concat(_)
Concat(seqs) == IF seqs = <<>> THEN <<>> ELSE Head(seqs) \o Concat(Tail(seqs))

\* Replay, one rule per record kind, as standbys and a controller taking over apply the log
\* (the active controller's handlers apply their changes as they meant them).
ReplayRecord(img, r) ==
    CASE r.kind = "PartitionChange" ->
            [img EXCEPT !.partition[r.partition] = Merge(@, r)]
      [] r.kind = "Partition" ->
            [img EXCEPT !.partition[r.partition] = NewPartition(r.partition, r.leader, r.isr, r.dirs)]
      [] r.kind = "RegisterBroker" ->    \* no cordonedLogDirs: null until a heartbeat reports them
            [img EXCEPT !.brokerEpoch[r.broker] = r.epoch, !.registeredIncarnation[r.broker] = r.incarnation,
                        !.fenced[r.broker] = r.fenced, !.onlineDirs[r.broker] = r.logDirs,
                        !.registeredCordons = IF CordonsOn THEN [@ EXCEPT ![r.broker] = <<>>] ELSE @]
      [] r.kind = "CordonedDirs" ->
            [img EXCEPT !.registeredCordons[r.broker] = <<r.dirs>>]
      [] r.kind = "FeatureLevel" ->
            [img EXCEPT !.metadataVersion = r.version]
      [] r.kind = "Config" ->
            [img EXCEPT !.topicConfig[r.key] = r.value]
      [] r.kind = "RemoveTopic" ->    \* the topic and its partitions gone
            [img EXCEPT !.partition[r.partition] = NoPartition, !.deleted[r.partition] = TRUE]
      [] r.kind = "ClearElr" ->
            [img EXCEPT !.partition = [p \in Partitions |-> ElrCleared(@[p])]]
      [] OTHER ->    \* BrokerRegistrationChange: an empty logDirs means "no change"
            [img EXCEPT !.fenced[r.broker] = IF r.setFenced THEN r.fenced ELSE @,
                        !.onlineDirs[r.broker] = IF r.logDirs # {} /\ Mutant # "replay_ignores_log_dirs"
                                                 THEN r.logDirs ELSE @]
RECURSIVE Replay(_, _)
Replay(img, recs) == IF recs = <<>> THEN img ELSE Replay(ReplayRecord(img, Head(recs)), Tail(recs))
BatchRecords(batches) == Concat([k \in DOMAIN batches |-> batches[k].records])

NoResponse == [kind |-> "NoResponse"]
Send(net, r) == IF r.kind = "NoResponse" THEN net ELSE BagAdd(net, r)
\* QuorumController's write path for a handler's result: the records (the action sets the
\* controller's variables to their effect) and the answer.  With the log, the batch waits among
\* the uncommitted ones, an answer with it even without records; the handler waits while
\* MaxUncommitted batches do.
LogWrite(net, recs, r) ==
    IF ~LogOn
    THEN network' = Send(net, r) /\ UNCHANGED logVars
    ELSE /\ network' = net
         /\ IF recs = <<>> /\ r.kind = "NoResponse"
            THEN UNCHANGED logVars
            ELSE /\ Len(uncommitted) < MaxUncommitted
                 /\ uncommitted' = Append(uncommitted, [records |-> recs, response |-> r])
                 /\ UNCHANGED <<committedImage, failoversDone>>

Room == BagCardinality(network) < MaxMessages
RegistrationInFlight(b) ==
    \E m \in BagToSet(network) :
        m.kind \in {"Register", "RegisterResponse"} /\ m.broker = b /\ m.incarnation = incarnation[b]
InFlight(kinds, b, e) == \E m \in BagToSet(network) : m.kind \in kinds /\ m.broker = b /\ m.epoch = e
InFlightFor(kinds, b, e, p) ==
    \E m \in BagToSet(network) : m.kind \in kinds /\ m.broker = b /\ m.epoch = e /\ m.partition = p

RECURSIVE SumOver(_, _)
SumOver(f, S) == IF S = {} THEN 0 ELSE LET x == CHOOSE x \in S : TRUE IN f[x] + SumOver(f, S \ {x})
RestartsUsed == SumOver([b \in Brokers |-> IF incarnation[b] > 1 THEN incarnation[b] - 1 ELSE 0], Brokers)

\* The data plane: a log is the leader epoch of each record, by offset (offset k - 1 at index k).
\* A leader's followerEnd before it has led: no epoch, nothing heard (-1: UnknownOffset, and an
\* unknown broker epoch, which AlterPartition's check skips).
NoFollowerState == [leaderEpoch |-> -1, start |-> 0, ends |-> [r \in Brokers |-> -1],
                    fetchEpochs |-> [r \in Brokers |-> -1]]
\* A log holds the acknowledged record e = <<offset, leaderEpoch, leader, lostBy>>.
Holds(log, e) == Len(log) > e[1] /\ log[e[1] + 1] = e[2]

\* An acknowledged record's fate: kept, or given up by a declared loss, named for good: an
\* election that declares itself unclean (its new leader and leader epoch), a replaced disk
\* that took the last copy (the broker and its new incarnation), or a power loss that took it,
\* unflushed (the broker and its incarnation that lost power).
Kept == <<>>
LostByElection(b, epoch) == <<"election", b, epoch>>
LostByDisk(b, inc) == <<"disk", b, inc>>
LostByPower(b, inc) == <<"power", b, inc>>
\* How long a prefix two logs share: records of one leader epoch at one offset are one record.
Agreement(log1, log2) ==
    LET n == IF Len(log1) < Len(log2) THEN Len(log1) ELSE Len(log2)
    IN CHOOSE k \in 0 .. n : (\A j \in 1 .. k : log1[j] = log2[j]) /\ (k = n \/ log1[k + 1] # log2[k + 1])
\* `entries` (a partition's `acked`) with every record still kept that no log of `holders`
\* holds marked as given up by `cause`; a record lost before keeps its first cause.
GivenUpUnless(entries, holders, cause) ==
    {IF e[4] # Kept \/ \E log \in holders : Holds(log, e) THEN e ELSE <<e[1], e[2], e[3], cause>> : e \in entries}

\* The ghost `acked` after a controller step: an election that declares itself unclean (its new
\* leader RECOVERING: an unclean, a last-known-leader or a designated election) gives up the
\* acknowledged records its new leader's log lacks, which stay marked with that election; a
\* clean election gives up nothing.
GiveUp ==
    acked' = IF ~DataPlane THEN acked
             ELSE [p \in Partitions |->
                     IF partition[p] # NoPartition /\ partition'[p].leader \notin {NoLeader, partition[p].leader}
                        /\ partition'[p].recovering
                     THEN GivenUpUnless(acked[p], {replicaLog[partition'[p].leader][p]},
                                        LostByElection(partition'[p].leader, partition'[p].leaderEpoch))
                     ELSE acked[p]]

\* A broker process stops: in-memory queues, epoch and its shutdown request are gone; logs,
\* futures and disk health stay.  Its clean-shutdown files then hold `written` (-1: none; the
\* ones it read at start it deleted then).
BrokerStops(b, written) ==
    /\ brokerStatus' = [brokerStatus EXCEPT ![b] = "OFF"]
    /\ queued' = [queued EXCEPT ![b] = [p \in Partitions |-> NONE]]
    /\ knownEpoch' = [knownEpoch EXCEPT ![b] = 0]
    \* what it knew of its followers is gone; its logs and high watermarks stay
    /\ followerEnd' = IF DataPlane THEN [followerEnd EXCEPT ![b] = [p \in Partitions |-> NoFollowerState]]
                      ELSE followerEnd
    \* the next start's log recovery truncates the cache at the log's end (LogLoader), taking the
    \* entry no record follows with it
    /\ epochEntry' = IF BatchFetches THEN [epochEntry EXCEPT ![b] = [p \in Partitions |-> -1]] ELSE epochEntry
    /\ wantShutdown' = IF CleanShutdownsOn THEN [wantShutdown EXCEPT ![b] = FALSE] ELSE wantShutdown
    /\ cleanShutdownEpoch' = IF CleanShutdownsOn THEN [cleanShutdownEpoch EXCEPT ![b] = written] ELSE cleanShutdownEpoch
\* ... uncleanly: a crash, a failed disk, an error
BrokerDown(b) == BrokerStops(b, -1)

-----------------------------------------------------------------------------
(* Init: every broker formatted (distinct real UUIDs) and off; nothing registered. *)

Init ==
    /\ brokerStatus = [b \in Brokers |-> "OFF"]
    /\ incarnation = [b \in Brokers |-> 0]
    /\ dirIds = [b \in Brokers |-> [i \in Slots |-> FIRST_REAL + b * DirsPerBroker + i]]
    /\ dirState = [b \in Brokers |-> [i \in Slots |-> "HEALTHY"]]
    /\ logs = [b \in Brokers |-> [i \in Slots |-> {}]]
    /\ future = [b \in Brokers |-> [p \in Partitions |-> NONE]]
    /\ queued = [b \in Brokers |-> [p \in Partitions |-> NONE]]
    /\ brokerEpoch = [b \in Brokers |-> 0]
    /\ fenced = [b \in Brokers |-> TRUE]
    /\ onlineDirs = [b \in Brokers |-> {}]
    /\ partition = [p \in Partitions |-> NoPartition]
    /\ network = EmptyBag
    /\ nextUuid = FIRST_REAL + NumBrokers * DirsPerBroker
    /\ dirFailures = 0
    /\ lostMessages = 0
    /\ sessionsExpired = 0
    /\ movesStarted = 0
    /\ knownEpoch = [b \in Brokers |-> 0]
    /\ registeredIncarnation = [b \in Brokers |-> 0]
    /\ metadataVersion = InitialMetadataVersion
    \* the topic's configs as the constants give them; none altered yet
    /\ topicConfig = IF DynamicConfigs THEN [minIsr |-> MinIsr, unclean |-> UncleanElection = "topic"] ELSE <<>>
    /\ configChanges = IF DynamicConfigs THEN [minIsr |-> 0, unclean |-> 0] ELSE <<>>
    \* nothing cordoned, nothing reported (before the images, which hold registeredCordons)
    /\ cordoned = IF CordonsOn THEN [b \in Brokers |-> {}] ELSE <<>>
    /\ registeredCordons = IF CordonsOn THEN [b \in Brokers |-> <<>>] ELSE <<>>
    /\ reportedCordons = IF CordonsOn THEN [b \in Brokers |-> <<>>] ELSE <<>>
    /\ cordonChanges = 0
    \* no topic deleted (before the images, which hold deleted)
    /\ deleted = IF TopicDeletion THEN [p \in Partitions |-> FALSE] ELSE <<>>
    \* no partition reassigned yet
    /\ reassignmentsMade = 0
    \* the log starts empty: the committed image is the initial controller state
    /\ committedImage = IF LogOn THEN CurrentImage ELSE <<>>
    /\ uncommitted = <<>>
    /\ failoversDone = 0
    \* every broker has loaded the empty metadata log
    /\ brokerImage = IF BrokerLag THEN [b \in Brokers |-> CurrentImage] ELSE <<>>
    \* every replica's log empty; no leader has heard from a follower yet
    /\ replicaLog = IF DataPlane THEN [b \in Brokers |-> [p \in Partitions |-> <<>>]] ELSE <<>>
    /\ highWatermark = IF DataPlane THEN [b \in Brokers |-> [p \in Partitions |-> 0]] ELSE <<>>
    /\ followerEnd = IF DataPlane THEN [b \in Brokers |-> [p \in Partitions |-> NoFollowerState]] ELSE <<>>
    /\ acked = IF DataPlane THEN [p \in Partitions |-> {}] ELSE <<>>
    /\ produced = 0
    \* nothing written, nothing to flush
    /\ flushed = IF PowerLoss THEN [b \in Brokers |-> [p \in Partitions |-> 0]] ELSE <<>>
    \* the tool has heard from nobody and elected nothing
    /\ tool = IF ToolOn THEN [answers |-> [p \in Partitions |-> [b \in Brokers |-> <<>>]],
                              outcome |-> [p \in Partitions |-> "RUNNING"], requests |-> 0,
                              takenUp |-> [p \in Partitions |-> -1]]
              ELSE <<>>
    \* no broker has heartbeated yet
    /\ session = IF SessionsByEpoch THEN [b \in Brokers |-> FALSE] ELSE <<>>
    \* no broker in controlled shutdown, none asking, no clean-shutdown file
    /\ inControlledShutdown = IF CleanShutdownsOn THEN [b \in Brokers |-> FALSE] ELSE <<>>
    /\ awaitedHeartbeats = IF CleanShutdownsOn THEN [b \in Brokers |-> <<>>] ELSE <<>>
    /\ wantShutdown = IF CleanShutdownsOn THEN [b \in Brokers |-> FALSE] ELSE <<>>
    /\ cleanShutdownEpoch = IF CleanShutdownsOn THEN [b \in Brokers |-> -1] ELSE <<>>
    /\ cleanShutdowns = 0
    \* every leader-epoch cache empty
    /\ epochEntry = IF BatchFetches THEN [b \in Brokers |-> [p \in Partitions |-> -1]] ELSE <<>>

-----------------------------------------------------------------------------
(* Broker actions *)

REPAIRED == -1   \* a failed directory's fate at restart: repaired (same UUID, logs back)
REPLACED == -2   \* ... or replaced: formatted anew with a fresh UUID
Fates == {REPAIRED, REPLACED} \cup (IF Mutant = "reserved_uuids" THEN Reserved ELSE {})

\* KIP-858: a broker with several log directories does not run below 3.7-IV2.  Kafka's broker
\* only reports a non-fatal fault and runs on (MetadataVersionConfigValidator, KAFKA-16606).
RefusesJbod ==
    /\ Semantics = "kip"
    /\ Mutant # "jbod_below_3_7_iv2"
    /\ DirsPerBroker > 1
    /\ ~AssignmentSupported

\* A new incarnation: each failed directory comes back repaired or replaced (under the mutant,
\* formatted with a reserved UUID).  The fates are the action's parameter, as in Python.
BrokerStarts(b) ==
    /\ brokerStatus[b] = "OFF"
    /\ incarnation[b] > 0 => RestartsUsed < MaxRestarts
    /\ ~RefusesJbod
    /\ \E fate \in [FailedSlots(b) -> Fates] :
        LET fresh == {i \in FailedSlots(b) : fate[i] = REPLACED}
            wiped == {i \in FailedSlots(b) : fate[i] # REPAIRED}
            NewId(i) == IF i \in fresh THEN nextUuid + Cardinality({j \in fresh : j < i})
                        ELSE IF i \in wiped THEN fate[i] ELSE dirIds[b][i]
        IN /\ brokerStatus' = [brokerStatus EXCEPT ![b] = "STARTING"]
           /\ incarnation' = [incarnation EXCEPT ![b] = @ + 1]
           /\ dirIds' = [dirIds EXCEPT ![b] = [i \in Slots |-> NewId(i)]]
           /\ dirState' = [dirState EXCEPT ![b] = [i \in Slots |-> "HEALTHY"]]
           /\ logs' = [logs EXCEPT ![b] = [i \in Slots |-> IF i \in wiped THEN {} ELSE logs[b][i]]]
           /\ future' = [future EXCEPT ![b] = [p \in Partitions |->
                            IF future[b][p] \in wiped THEN NONE ELSE future[b][p]]]
           /\ nextUuid' = nextUuid + Cardinality(fresh)
           /\ LET emptied == UNION {logs[b][i] : i \in wiped}
                  newLog == [replicaLog EXCEPT ![b] = [p \in Partitions |->
                                IF p \in emptied THEN <<>> ELSE replicaLog[b][p]]]
              IN IF DataPlane /\ emptied # {}
                 \* their records and high watermarks went with the old disk, and so did the
                 \* acknowledged records no replica's log holds any more
                 THEN /\ replicaLog' = newLog
                      /\ highWatermark' = [highWatermark EXCEPT ![b] = [p \in Partitions |->
                                             IF p \in emptied THEN 0 ELSE highWatermark[b][p]]]
                      /\ acked' = [p \in Partitions |-> GivenUpUnless(acked[p], {newLog[r][p] : r \in Brokers},
                                                                      LostByDisk(b, incarnation[b] + 1))]
                      /\ flushed' = IF PowerLoss THEN [flushed EXCEPT ![b] = [p \in Partitions |->
                                                           IF p \in emptied THEN 0 ELSE flushed[b][p]]]
                                    ELSE flushed
                 ELSE UNCHANGED <<replicaLog, highWatermark, acked, flushed>>
           /\ UNCHANGED <<queued, knownEpoch, brokerImage, controllerVars, network, dirFailures, lostMessages, movesStarted, sessionsExpired, configChanges, cordonVars,
                          reassignmentsMade,
                          followerEnd, epochEntry, produced, tool, session, shutdownVars>>

RegistrationDirs(b) == IF Legacy(b) THEN <<>> ELSE [k \in 1 .. DirsPerBroker |-> dirIds[b][k - 1]]

\* BrokerRegistrationRequest: the incarnation ID, the LogDirs loaded at startup, and the
\* previousBrokerEpoch its clean-shutdown files held (-1: none).
RegistrationRequest(b) ==
    [kind |-> "Register", broker |-> b, incarnation |-> incarnation[b], dirs |-> RegistrationDirs(b),
     previousBrokerEpoch |-> IF CleanShutdownsOn THEN cleanShutdownEpoch[b] ELSE -1]

\* (Re)send the registration until one is answered.
BrokerSendsRegistration(b) ==
    /\ brokerStatus[b] = "STARTING"
    /\ Room
    /\ ~RegistrationInFlight(b)
    /\ network' = BagAdd(network, RegistrationRequest(b))
    /\ UNCHANGED <<brokerVars, controllerVars, counters, tool, session, shutdownVars>>

\* BrokerRegistrationTracker: at 3.7-IV2 or later, a running broker whose registration lists no
\* directories registers again with the same incarnation ID (KAFKA-16162); no heartbeat until
\* that is answered.
BrokerRefreshesRegistration(b) ==
    /\ brokerStatus[b] = "RUNNING"
    /\ ~Legacy(b)
    /\ BrokerView(b).metadataVersion = "3.7-IV2"
    /\ Room
    /\ BrokerView(b).brokerEpoch[b] > 0
    /\ BrokerView(b).onlineDirs[b] = {}
    /\ ~RegistrationInFlight(b)
    /\ network' = BagAdd(network, RegistrationRequest(b))
    /\ UNCHANGED <<brokerVars, controllerVars, counters, tool, session, shutdownVars>>

\* The broker runs with the epoch the controller gave it.  An error (epoch 0): Kafka's broker
\* tries again; under the KIP's reading a starting broker fails to start.
BrokerReceivesRegistrationResponse(m) ==
    LET b == m.broker IN
    /\ m.kind = "RegisterResponse"
    /\ network' = BagRemove(network, m)
    /\ IF brokerStatus[b] = "OFF" \/ m.incarnation # incarnation[b]
       THEN UNCHANGED <<brokerVars, brokerShutdownVars>>   \* an answer to an earlier incarnation
       ELSE IF m.epoch # 0
       THEN /\ brokerStatus' = [brokerStatus EXCEPT ![b] = "RUNNING"]
            /\ knownEpoch' = [knownEpoch EXCEPT ![b] = m.epoch]
            /\ UNCHANGED <<incarnation, brokerImage, dirIds, dirState, logs, future, queued, dataVars, brokerShutdownVars>>
       ELSE IF Semantics = "code" \/ brokerStatus[b] = "RUNNING"
       THEN UNCHANGED <<brokerVars, brokerShutdownVars>>   \* it registers again later
       ELSE /\ BrokerDown(b)
            /\ UNCHANGED <<incarnation, brokerImage, dirIds, dirState, logs, future, dataKept>>
    /\ UNCHANGED <<controllerVars, counters, tool, session, heartbeatVars, cleanShutdowns>>

BrokerCrashes(b) ==
    /\ CrashesAllowed
    /\ brokerStatus[b] # "OFF"
    /\ BrokerDown(b)
    /\ UNCHANGED <<incarnation, brokerImage, dirIds, dirState, logs, future, controllerVars, network, counters, dataKept, tool, session,
                   heartbeatVars, cleanShutdowns>>

\* The broker's machine loses power: the process stops as in a crash, and each of its replicas'
\* logs keeps only what it had flushed, the page cache gone with the machine; the checkpointed
\* high watermark is capped at the log's end.  An acknowledged record whose last copy went so is
\* given up, marked with this power loss.  Under the mutant the clean-shutdown files hold the
\* broker's epoch all the same (KAFKA-15582 missing).
BrokerLosesPower(b) ==
    LET newLog == [replicaLog EXCEPT ![b] = [p \in Partitions |-> SubSeq(replicaLog[b][p], 1, flushed[b][p])]]
    IN /\ PowerLoss
       /\ brokerStatus[b] # "OFF"
       /\ BrokerStops(b, IF Mutant = "power_loss_reported_clean" /\ knownEpoch[b] > 0 THEN knownEpoch[b] ELSE -1)
       /\ replicaLog' = newLog
       /\ highWatermark' = [highWatermark EXCEPT ![b] = [p \in Partitions |-> Min({highWatermark[b][p], flushed[b][p]})]]
       /\ acked' = [p \in Partitions |-> GivenUpUnless(acked[p], {newLog[r][p] : r \in Brokers},
                                                       LostByPower(b, incarnation[b]))]
       /\ UNCHANGED <<incarnation, brokerImage, dirIds, dirState, logs, future, controllerVars, network, counters, produced,
                      flushed, tool, session, heartbeatVars, cleanShutdowns>>

\* A running broker begins a controlled shutdown (BrokerLifecycleManager.beginControlledShutdown):
\* its heartbeats ask to shut down from now on, and it stops when a response says it should, at
\* most MaxCleanShutdowns times in the run.
BrokerBeginsShutdown(b) ==
    /\ CleanShutdownsOn
    /\ brokerStatus[b] = "RUNNING"
    /\ ~wantShutdown[b]
    /\ cleanShutdowns < MaxCleanShutdowns
    /\ wantShutdown' = [wantShutdown EXCEPT ![b] = TRUE]
    /\ cleanShutdowns' = cleanShutdowns + 1
    /\ UNCHANGED <<brokerVars, controllerVars, network, counters, tool, session, heartbeatVars, cleanShutdownEpoch>>

\* A log directory fails.  A move whose destination failed is reverted; one whose source
\* failed is assigned to LOST (KAFKA-16297).  With no directory left the broker stops.
BrokerFailsDir(b, i) ==
    /\ brokerStatus[b] # "OFF"
    /\ SlotOnline(b, i)
    /\ dirFailures < MaxDirFailures
    /\ LET states == [dirState[b] EXCEPT ![i] = "FAILED"]
           DestFailed(p) == future[b][p] = i
           SourceFailed(p) == future[b][p] # NONE /\ future[b][p] # i /\ i \in MainSlots(b, p)
           newQueued == [p \in Partitions |->
               IF DestFailed(p)
               THEN IF Mutant # "no_revert_on_dest_failure" /\ MainSlots(b, p) # {}
                    THEN dirIds[b][Min(MainSlots(b, p))] ELSE queued[b][p]
               ELSE IF SourceFailed(p) /\ Mutant # "no_lost_on_source_failure" THEN LOST
               ELSE queued[b][p]]
           allFailed == \A j \in Slots : states[j] # "HEALTHY"
       IN /\ dirState' = [dirState EXCEPT ![b] = states]
          /\ future' = [future EXCEPT ![b] = [p \in Partitions |->
                            IF DestFailed(p) \/ SourceFailed(p) THEN NONE ELSE future[b][p]]]
          /\ IF allFailed
             THEN BrokerDown(b)
             ELSE /\ queued' = [queued EXCEPT ![b] = newQueued]
                  /\ UNCHANGED <<brokerStatus, knownEpoch, followerEnd, epochEntry, brokerShutdownVars>>
    /\ dirFailures' = dirFailures + 1
    /\ UNCHANGED <<brokerImage, incarnation, dirIds, logs, controllerVars, network, nextUuid, lostMessages, movesStarted, sessionsExpired, configChanges, cordonVars, reassignmentsMade,
                   dataKept, tool, session, heartbeatVars, cleanShutdowns>>

\* Every heartbeat repeats all directories that failed in this incarnation (OfflineLogDirs), asks
\* to stay fenced (wantFence) until the broker has loaded its registration, and asks to shut down
\* (wantShutDown) once the broker has begun a controlled shutdown.  With cordoned directories, once
\* the broker has caught up it also lists those its cordoned.log.dirs names (CordonedLogDirs; null,
\* <<>>, before), failed ones included.
BrokerSendsHeartbeat(b) ==
    /\ brokerStatus[b] = "RUNNING"
    /\ Room
    /\ ~InFlight({"Heartbeat", "HeartbeatResponse"}, b, knownEpoch[b])
    /\ ~RegistrationInFlight(b)      \* registering again: heartbeats wait for the answer
    /\ network' = BagAdd(network, [kind |-> "Heartbeat", broker |-> b, epoch |-> knownEpoch[b],
                                   offline |-> {dirIds[b][i] : i \in FailedSlots(b)},
                                   wantFence |-> BrokerLag /\ ~CaughtUp(b),
                                   wantShutDown |-> CleanShutdownsOn /\ wantShutdown[b],
                                   cordoned |-> IF CordonsOn /\ (~BrokerLag \/ CaughtUp(b))
                                                THEN <<{dirIds[b][i] : i \in cordoned[b]}>> ELSE <<>>])
    /\ UNCHANGED <<brokerVars, controllerVars, counters, tool, session, shutdownVars>>

\* The broker marks the offline directories the response acknowledges; one that says
\* shouldShutDown ends its controlled shutdown: the process stops, and writes its broker epoch in
\* the clean-shutdown file of every directory (a failed one gets none: the next incarnation reads
\* no epoch).
BrokerReceivesHeartbeatResponse(m) ==
    LET b == m.broker
        states == [i \in Slots |-> IF dirState[b][i] = "FAILED" /\ dirIds[b][i] \in m.offline THEN "FAILED_ACKED"
                                   ELSE dirState[b][i]]
    IN
    /\ m.kind = "HeartbeatResponse"
    /\ network' = BagRemove(network, m)
    /\ IF brokerStatus[b] # "RUNNING" \/ m.epoch # knownEpoch[b]
       THEN UNCHANGED <<dirState, brokerStatus, queued, knownEpoch, followerEnd, epochEntry, brokerShutdownVars>>
       ELSE /\ dirState' = [dirState EXCEPT ![b] = states]
            /\ IF m.shouldShutDown
               THEN BrokerStops(b, IF \A i \in Slots : states[i] = "HEALTHY" THEN m.epoch ELSE -1)
               ELSE UNCHANGED <<brokerStatus, queued, knownEpoch, followerEnd, epochEntry, brokerShutdownVars>>
    \* LogManager.shutdown flushes every log before it writes the clean-shutdown files
    /\ flushed' = IF PowerLoss /\ brokerStatus[b] = "RUNNING" /\ m.epoch = knownEpoch[b] /\ m.shouldShutDown
                  THEN [flushed EXCEPT ![b] = [p \in Partitions |-> Len(replicaLog[b][p])]]
                  ELSE flushed
    /\ UNCHANGED <<incarnation, dirIds, logs, future, brokerImage, controllerVars, counters,
                   replicaLog, highWatermark, acked, produced, tool, session, heartbeatVars, cleanShutdowns>>

\* What a broker does on the metadata it has loaded for partition p (KIP-858 "Replica
\* management"; ReplicaManager.applyDelta).
ConsumeOutcome(b, p) ==
    LET md == BrokerView(b).partition[p].dirs[b]
        main == MainSlots(b, p)
        mainOnline == {i \in main : SlotOnline(b, i)}
        named == {i \in Slots : dirIds[b][i] = md}
        fut == future[b][p]
        Nothing == [what |-> "nothing", slot |-> NONE]
        \* Below 3.7-IV2 nothing is assigned: the broker places replicas and tells nobody.
        tells == BrokerView(b).metadataVersion = "3.7-IV2"
        CreateQueue == [what |-> IF tells THEN "create+queue" ELSE "create",
                        slot |-> LeastLoadedOnlineSlot(b)]
        Queue(i) == IF tells THEN [what |-> "queue", slot |-> i] ELSE Nothing
    IN IF md \in {UNASSIGNED, MIGRATING}
       THEN IF mainOnline # {} THEN Queue(Min(mainOnline))
            ELSE IF main # {} THEN Nothing        \* the only copy is on a failed disk
            ELSE CreateQueue
       ELSE IF named # {} /\ SlotOnline(b, Min(named))
       THEN IF fut = Min(named) THEN [what |-> "promote", slot |-> fut]
            ELSE IF main = {} THEN [what |-> "create", slot |-> Min(named)]
            ELSE IF Min(named) \in main THEN Nothing
            ELSE IF mainOnline # {} THEN Queue(Min(mainOnline))   \* moved while down
            ELSE Nothing
       \* The assigned directory is offline, LOST or unknown to this broker.
       \* KIP-858: with a failed disk it may live there: never create it elsewhere.
       ELSE IF FailedSlots(b) # {} /\ Semantics = "kip"
       THEN IF Mutant = "recreate_elsewhere" /\ mainOnline = {} THEN CreateQueue
            ELSE Nothing
       ELSE IF mainOnline # {} THEN Queue(Min(mainOnline))
       \* its log is on a failed disk: the replica manager holds it offline (KAFKA-16234)
       ELSE IF main # {} THEN IF Mutant = "recreate_elsewhere" THEN CreateQueue ELSE Nothing
       \* no log of it on any disk: the replica manager creates it as new (isNew), failures or not
       ELSE CreateQueue

\* Swap a caught-up future replica in: it becomes the replica, the source is deleted.
PromotedLogs(b, p) ==
    [i \in Slots |-> IF i = future[b][p] THEN logs[b][i] \cup {p}
                     ELSE IF Mutant = "keep_source_after_promotion" THEN logs[b][i]
                     ELSE logs[b][i] \ {p}]

\* The topic of p is deleted, or b is no longer among p's replicas: ReplicaManager.applyDelta stops
\* the replica and deletes its logs (stopPartitions, the future replica's too), records, high
\* watermark and leader-epoch cache with them.  A log on a failed disk cannot be deleted: it stays
\* until the disk is back (a stray then).  A queued assignment stays queued: nothing tells
\* AssignmentsManager, which drops it when it next sends (BrokerSendsAssignment).
LogsLeftByDeletion(b, p) == [i \in Slots |-> IF SlotOnline(b, i) THEN logs[b][i] \ {p} ELSE logs[b][i]]
DeletesReplica(b, p) ==
    LET left == LogsLeftByDeletion(b, p)
    IN /\ ~(left = logs[b] /\ future[b][p] = NONE)   \* (not a disjunction: TLC would take each true one)
       /\ logs' = [logs EXCEPT ![b] = left]
       /\ future' = [future EXCEPT ![b][p] = NONE]
       /\ UNCHANGED queued
       \* with the data plane, once no log of p is left on any of its disks: an empty log, as a
       \* replica that never held one
       /\ IF DataPlane /\ \A i \in Slots : p \notin left[i]
          THEN /\ replicaLog' = [replicaLog EXCEPT ![b][p] = <<>>]
               /\ highWatermark' = [highWatermark EXCEPT ![b][p] = 0]
               /\ followerEnd' = [followerEnd EXCEPT ![b][p] = NoFollowerState]
               /\ flushed' = IF PowerLoss THEN [flushed EXCEPT ![b][p] = 0] ELSE flushed
               /\ epochEntry' = IF BatchFetches THEN [epochEntry EXCEPT ![b][p] = -1] ELSE epochEntry
               /\ UNCHANGED <<acked, produced>>
          ELSE UNCHANGED dataVars

BrokerConsumesMetadata(b, p) ==
    /\ brokerStatus[b] = "RUNNING"
    /\ IF BrokerLag THEN CaughtUp(b) ELSE TRUE   \* (IF, not \/: TLC would count each true disjunct as a step)
    \* deleted, or reassigned away (stopPartitions, as for a deleted topic)
    /\ IF \/ TopicDeletion /\ BrokerView(b).deleted[p]
          \/ BrokerView(b).partition[p] # NoPartition /\ b \notin ReplicasOf(BrokerView(b).partition[p])
       THEN DeletesReplica(b, p)
       ELSE /\ BrokerView(b).partition[p] # NoPartition
            /\ queued[b][p] = NONE
            /\ UNCHANGED dataVars
            /\ LET o == ConsumeOutcome(b, p) IN
               /\ o.what # "nothing"
               /\ IF o.what = "promote"
                  THEN /\ logs' = [logs EXCEPT ![b] = PromotedLogs(b, p)]
                       /\ future' = [future EXCEPT ![b][p] = NONE]
                       /\ UNCHANGED queued
                  ELSE /\ logs' = IF o.what \in {"create", "create+queue"}
                                  THEN [logs EXCEPT ![b][o.slot] = @ \cup {p}] ELSE logs
                       /\ queued' = IF o.what \in {"queue", "create+queue"}
                                    THEN [queued EXCEPT ![b][p] = dirIds[b][o.slot]] ELSE queued
                       /\ UNCHANGED future
    /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, knownEpoch, brokerImage, controllerVars, network, counters,
                   tool, session, shutdownVars>>

\* AssignmentsManager.maybeSendAssignments: send the queued AssignReplicasToDirs entry for p (one
\* in flight per partition), or drop it unsent if the metadata the broker has loaded no longer has
\* it hold a replica of p (Assignment.valid): the topic deleted (without that check, KAFKA-17190),
\* or the broker reassigned away (without it, KAFKA-16886).
BrokerSendsAssignment(b, p) ==
    /\ brokerStatus[b] = "RUNNING"
    /\ queued[b][p] \notin {NONE, GIVEN_UP}
    /\ BrokerView(b).metadataVersion = "3.7-IV2"
    /\ ~InFlightFor({"Assign", "AssignResponse"}, b, knownEpoch[b], p)
    /\ IF \/ BrokerView(b).partition[p] = NoPartition /\ Mutant # "assignment_retried_for_deleted_topic"
          \/ /\ BrokerView(b).partition[p] # NoPartition /\ b \notin ReplicasOf(BrokerView(b).partition[p])
             /\ Mutant # "assignment_retried_for_reassigned_replica"
       THEN /\ queued' = [queued EXCEPT ![b][p] = NONE]
            /\ UNCHANGED network
       ELSE /\ Room
            /\ network' = BagAdd(network, [kind |-> "Assign", broker |-> b, epoch |-> knownEpoch[b],
                                           partition |-> p, dir |-> queued[b][p]])
            /\ UNCHANGED queued
    /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, knownEpoch, brokerImage, dataVars,
                   controllerVars, counters, tool, session, shutdownVars>>

\* Success clears the entry (and promotes a future replica the assignment moved); after an error
\* the entry stays queued and is sent again (handleAssignmentResponse puts it back among the ready
\* ones), unless the broker's metadata then says it is no longer valid (BrokerSendsAssignment).
BrokerReceivesAssignmentResponse(m) ==
    LET b == m.broker
        p == m.partition
    IN /\ m.kind = "AssignResponse"
       /\ network' = BagRemove(network, m)
       /\ IF brokerStatus[b] # "RUNNING" \/ m.epoch # knownEpoch[b] \/ queued[b][p] # m.dir
          THEN UNCHANGED <<logs, future, queued>>         \* stale, or superseded
          ELSE IF ~m.ok
          THEN UNCHANGED <<logs, future, queued>>         \* sent again
          ELSE IF future[b][p] # NONE /\ dirIds[b][future[b][p]] = m.dir
          THEN /\ logs' = [logs EXCEPT ![b] = PromotedLogs(b, p)]
               /\ future' = [future EXCEPT ![b][p] = NONE]
               /\ queued' = [queued EXCEPT ![b][p] = NONE]
          ELSE /\ queued' = [queued EXCEPT ![b][p] = NONE]
               /\ UNCHANGED <<logs, future>>
       /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, knownEpoch, brokerImage, controllerVars, counters,
                      dataVars, tool, session, shutdownVars>>

\* log.dir.failure.timeout.ms elapsed with a failure not yet acknowledged: Kafka's broker shuts
\* down (semantics "code"); KIP-858's only if it leads a replica in that directory ("kip").
\* Leadership is read from the metadata the broker has loaded.
BrokerShutsDownOnDirFailureTimeout(b) ==
    /\ brokerStatus[b] = "RUNNING"
    /\ \E i \in Slots :
           /\ dirState[b][i] = "FAILED"
           \* (IF, not \/: TLC takes each true disjunct of an action as a step of its own)
           /\ IF Semantics = "code" THEN TRUE
              ELSE \E p \in Partitions : p \in logs[b][i] /\ BrokerView(b).partition[p] # NoPartition
                                         /\ BrokerView(b).partition[p].leader = b
    /\ BrokerDown(b)
    /\ UNCHANGED <<incarnation, brokerImage, dirIds, dirState, logs, future, controllerVars, network, counters, dataKept, tool, session, heartbeatVars, cleanShutdowns>>

\* AlterReplicaLogDirs: start a future replica of p in another online directory.
BrokerStartsMove(b, p, t) ==
    /\ movesStarted < MaxMoves
    /\ brokerStatus[b] = "RUNNING"
    /\ future[b][p] = NONE
    /\ queued[b][p] = NONE
    /\ Cardinality(MainSlots(b, p)) = 1
    /\ \A s \in MainSlots(b, p) : SlotOnline(b, s) /\ t # s
    /\ SlotOnline(b, t)
    \* not to a cordoned directory (ReplicaManager.alterReplicaLogDirs: InvalidReplicaAssignmentException)
    /\ CordonsOn => t \notin cordoned[b]
    /\ future' = [future EXCEPT ![b][p] = t]
    /\ movesStarted' = movesStarted + 1
    /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, queued, knownEpoch, brokerImage, controllerVars,
                   network, nextUuid, dirFailures, lostMessages, sessionsExpired, configChanges, cordonVars, reassignmentsMade, dataVars,
                   tool, session, shutdownVars>>

\* The future replica caught up: move the assignment first, promote once acknowledged.
BrokerFutureCaughtUp(b, p) ==
    /\ brokerStatus[b] = "RUNNING"
    /\ future[b][p] # NONE
    /\ queued[b][p] = NONE
    /\ queued' = [queued EXCEPT ![b][p] = dirIds[b][future[b][p]]]
    /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, knownEpoch, brokerImage, controllerVars,
                   network, counters, dataVars, tool, session, shutdownVars>>

\* KIP-589: tell the controller a replica went offline, with the broker epoch.
BrokerSendsAlterReplicaState(b, p) ==
    LET m == [kind |-> "AlterReplicaState", broker |-> b, epoch |-> knownEpoch[b], partition |-> p] IN
    /\ AlterReplicaStateEnabled
    /\ brokerStatus[b] = "RUNNING"
    /\ Room
    /\ \E i \in MainSlots(b, p) : SlotFailed(b, i)
    /\ m \notin BagToSet(network)
    /\ network' = BagAdd(network, m)
    /\ UNCHANGED <<brokerVars, controllerVars, counters, tool, session, shutdownVars>>

-----------------------------------------------------------------------------
(* Controller actions *)

\* ClusterControlManager: no reserved, duplicate or foreign directory; none at all only for
\* a broker of an older metadata version.
RegistrationValid(b, dirs) ==
    /\ Len(dirs) = 0 => Legacy(b)
    /\ Cardinality(Range(dirs)) = Len(dirs)
    /\ Mutant # "reserved_uuids" => \A k \in DOMAIN dirs : ~IsReserved(dirs[k])
    /\ \A other \in Brokers \ {b} : Range(dirs) \cap onlineDirs[other] = {}

\* The registration's directories as the RegisterBrokerRecord holds them: none below 3.7-IV2.
RecordDirs(dirs) == IF AssignmentSupported THEN Range(dirs) ELSE {}

\* ClusterControlManager.registerBroker, the code's way, and the replay of its RegisterBrokerRecord
\* (the registration replaced whole).  Another incarnation while the registered one's session is
\* valid: DuplicateBrokerRegistrationException.  The same incarnation again: the epoch and the
\* flags kept (KAFKA-16952, KAFKA-16757).  A new incarnation: the next epoch (the record's offset;
\* the model numbers a broker's records, which orders its epochs as the offsets do), fenced, with
\* no session yet (SessionsByEpoch); its ISR memberships and leaderships kept without ELR (the code
\* read; the releases write handleBrokerFenced's records first: the broker out of each ISR it is
\* in, ShutdownRecordsWithoutElr), and with ELR handleBrokerUncleanShutdown's records first: the
\* broker out of each ISR, then each ELR, it is in (from the image); a clean shutdown detected
\* (TakenAsClean) only out of each ISR.  Replayed, the record makes the broker's
\* BrokerHeartbeatManager entry anew.
\* registerBroker's isCleanShutdown: previousBrokerEpoch is the registered epoch (KAFKA-15586),
\* with detection on (KAFKA-18635).
TakenAsClean(b, previous) ==
    IF Mutant = "unclean_shutdown_kept_in_elr" THEN TRUE
    ELSE IF ~CleanShutdownDetection \/ Mutant = "clean_shutdown_undetected" THEN FALSE
    ELSE Registered(b) /\ previous = brokerEpoch[b]
Register(m, sessionExpired) ==
    LET b == m.broker
        inc == m.incarnation
        net == BagRemove(network, m)
        Response(e) == [kind |-> "RegisterResponse", broker |-> b, incarnation |-> inc, epoch |-> e]
        same == Registered(b) /\ registeredIncarnation[b] = inc
        validSession == Registered(b) /\ HasSession(b) /\ (Alive(b) \/ ~sessionExpired)
        epoch == IF same THEN brokerEpoch[b] + (IF Mutant = "reregistration_new_epoch" THEN 1 ELSE 0)
                 ELSE brokerEpoch[b] + 1
        fen == IF same THEN Mutant = "reregistration_fences" \/ fenced[b] ELSE TRUE
        shutdown == (ElrEnabled \/ ShutdownRecordsWithoutElr) /\ ~same /\ Mutant # "unclean_reregistration_keeps_epochs"
        unclean == ElrEnabled /\ ~TakenAsClean(b, m.previousBrokerEpoch)
        Member(p, members) == shutdown /\ partition[p] # NoPartition /\ b \in partition[p][members]
                              /\ (members = "isr" \/ unclean)
        Shutdown(p) ==
            IF unclean THEN UncleanShutdownRecord(partition[p], p, b, brokerEpoch, fenced, onlineDirs)
            ELSE ChangeRecord(partition[p], p, b, NONE, partition[p].dirs, FALSE, brokerEpoch, fenced, onlineDirs)
        ShutdownRecs(members) ==
            [k \in 1 .. NumPartitions |-> LET p == k - 1 IN
                IF Member(p, members) THEN PartitionChangeRec(p, Shutdown(p)) ELSE NoChangeRec(p)]
    IN IF (validSession /\ ~same) \/ (AssignmentSupported /\ ~RegistrationValid(b, m.dirs))
       THEN network' = BagAdd(net, Response(0)) /\ UNCHANGED <<controllerVars, session, heartbeatVars>>   \* an exception: at once
       ELSE /\ LogWrite(net, Written(ShutdownRecs("isr") \o ShutdownRecs("elr"))
                              \o <<RegisterBrokerRec(b, inc, epoch, fen, RecordDirs(m.dirs))>>, Response(epoch))
            /\ brokerEpoch' = [brokerEpoch EXCEPT ![b] = epoch]
            /\ registeredIncarnation' = [registeredIncarnation EXCEPT ![b] = inc]
            /\ fenced' = [fenced EXCEPT ![b] = fen]
            /\ onlineDirs' = [onlineDirs EXCEPT ![b] = RecordDirs(m.dirs)]
            \* ISR and ELR are disjoint: a partition gets one of the two records
            /\ partition' = [p \in Partitions |->
                  IF Member(p, "isr") \/ Member(p, "elr") THEN Merge(partition[p], Shutdown(p)) ELSE partition[p]]
            /\ session' = IF SessionsByEpoch /\ ~same THEN [session EXCEPT ![b] = FALSE] ELSE session
            \* the flag amended with the same incarnation, the record's default (false) for a new one
            /\ inControlledShutdown' = IF CleanShutdownsOn /\ ~same THEN [inControlledShutdown EXCEPT ![b] = FALSE]
                                      ELSE inControlledShutdown
            /\ awaitedHeartbeats' = IF CleanShutdownsOn THEN OffsetForgotten(awaitedHeartbeats, b, TRUE) ELSE awaitedHeartbeats
            \* the RegisterBrokerRecord carries no cordonedLogDirs: null until a heartbeat reports them
            /\ registeredCordons' = IF CordonsOn THEN [registeredCordons EXCEPT ![b] = <<>>] ELSE registeredCordons
            /\ UNCHANGED <<metadataVersion, topicConfig, reportedCordons, deleted>>

\* registerBroker.  Semantics "code": Register, the registered incarnation's session taken as
\* still valid while it has one (HasSession).  Semantics "kip": the incarnation number is the
\* epoch; an older one is dropped, the same one answered, and a new one starts fenced and loses
\* its leaderships and ISR memberships (unclean shutdown).
ControllerHandlesRegistration(m) ==
    LET b == m.broker
        inc == m.incarnation
        net == BagRemove(network, m)
        Answer(e) == BagAdd(net, [kind |-> "RegisterResponse", broker |-> b, incarnation |-> inc, epoch |-> e])
        ep == [brokerEpoch EXCEPT ![b] = inc]
        fen == [fenced EXCEPT ![b] = TRUE]
        od == [onlineDirs EXCEPT ![b] = RecordDirs(m.dirs)]
    IN /\ m.kind = "Register"
       /\ IF Semantics = "code"
          THEN Register(m, FALSE)
          ELSE IF inc < brokerEpoch[b] /\ Mutant # "accept_older_registration"
          THEN network' = net /\ UNCHANGED <<controllerVars, session, heartbeatVars>>
          ELSE IF inc = brokerEpoch[b]
          THEN network' = Answer(inc) /\ UNCHANGED <<controllerVars, session, heartbeatVars>>
          ELSE IF AssignmentSupported /\ ~RegistrationValid(b, m.dirs)
          THEN network' = Answer(0) /\ UNCHANGED <<controllerVars, session, heartbeatVars>>
          ELSE /\ network' = Answer(inc)
               /\ brokerEpoch' = ep
               /\ registeredIncarnation' = [registeredIncarnation EXCEPT ![b] = inc]
               /\ fenced' = fen
               /\ onlineDirs' = od
               /\ partition' = [p \in Partitions |->
                     IF partition[p] # NoPartition /\ b \in ReplicasOf(partition[p])
                     THEN ChangePartition(partition[p], p, b, partition[p].dirs, FALSE, ep, fen, od)
                     ELSE partition[p]]
               /\ UNCHANGED <<metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted, logVars, session, heartbeatVars>>
       /\ UNCHANGED <<brokerVarsButAcked, counters, tool, brokerShutdownVars, cleanShutdowns>> /\ GiveUp

\* registerBroker for a new incarnation once the registered incarnation is gone and its session
\* timeout has elapsed, before maybeFenceOneStaleBroker ended its session (one stale broker per
\* event): hasValidSession is false, so the registration goes through (semantics "code" only).
ControllerHandlesRegistrationAfterSessionTimeout(m) ==
    LET b == m.broker IN
    /\ m.kind = "Register"
    /\ Semantics = "code"
    /\ Registered(b) /\ HasSession(b) /\ ~Alive(b)
    /\ m.incarnation # registeredIncarnation[b]
    /\ Register(m, TRUE)
    /\ UNCHANGED <<brokerVarsButAcked, counters, tool, brokerShutdownVars, cleanShutdowns>> /\ GiveUp

\* Mutant foreign_offline_dirs: the other replicas of p are judged against the sender's
\* online directories, and those found "offline" are taken out first.
RECURSIVE RemoveBySendersDirs(_, _, _, _, _)
RemoveBySendersDirs(part, p, b, k, od) ==
    IF k > Len(part.replicas) THEN part
    ELSE LET r == part.replicas[k]
             next == IF r # b /\ ~IsOnline(part.dirs[r], od[b])
                     THEN ChangePartition(part, p, r, part.dirs, FALSE, brokerEpoch, fenced, od)
                     ELSE part
         IN RemoveBySendersDirs(next, p, b, k + 1, od)

\* The same mutant under semantics "code": each other replica's removal is a record computed
\* from the image, replayed onto `part` in replica order.
RECURSIVE ForeignRecords(_, _, _, _, _)
ForeignRecords(part, p, b, k, od) ==
    IF k > Len(partition[p].replicas) THEN part
    ELSE LET r == partition[p].replicas[k]
             next == IF r # b /\ ~IsOnline(partition[p].dirs[r], od[b])
                     THEN Merge(part, ChangeRecord(partition[p], p, r, NONE, partition[p].dirs, FALSE,
                                                   brokerEpoch, fenced, onlineDirs))
                     ELSE part
         IN ForeignRecords(next, p, b, k + 1, od)

\* processBrokerHeartbeat: epoch gate; newly offline directories (registered to the sender and
\* still online) leave its registration and take the sender out of exactly the partitions with
\* its replica there; a fenced broker is unfenced once no replica of it is UNASSIGNED, and
\* leaderless partitions get a leader.  Semantics "kip": the offline directories first, and the
\* unfencing sees them.  Semantics "code": the broker's next state (calculateNextBrokerState:
\* FENCED, UNFENCED, CONTROLLED_SHUTDOWN or SHUTDOWN_NOW), then every record computed from the
\* state the heartbeat found, the state change's first (handleBrokerUnfenced, with the sender an
\* acceptable leader on the directories its registration still lists; handleBrokerFenced;
\* handleBrokerInControlledShutdown), then handleDirectoriesOffline.  A broker in controlled
\* shutdown may stop once it leads nothing and every active broker has heartbeated since it
\* entered (lowestActiveOffset: a heartbeat reports the offset the controller has written when it
\* handles it).  A heartbeat of the registered epoch gives it a session (SessionsByEpoch).
ControllerHandlesHeartbeat(m) ==
    LET b == m.broker
        net == BagRemove(network, m)
        current == EpochIsCurrent(b, m.epoch) \/ (Mutant = "skip_epoch_check" /\ Registered(b))
        applyOffline == current \/ (Mutant = "stale_offline_dirs" /\ Registered(b))
        \* below 3.7-IV2 the controller does not look at the offline directories
        newly == (IF AssignmentSupported THEN m.offline ELSE {}) \cap onlineDirs[b]
        od == [onlineDirs EXCEPT ![b] = @ \ newly]
        Affected(p) == partition[p] # NoPartition /\ b \in ReplicasOf(partition[p]) /\ partition[p].dirs[b] \in newly
        \* -- semantics "kip": one change after the other
        Base(p) == IF Mutant = "foreign_offline_dirs"
                   THEN RemoveBySendersDirs(partition[p], p, b, 1, od) ELSE partition[p]
        parts1 == [p \in Partitions |->
            IF Affected(p)
            THEN ChangePartition(Base(p), p, b, Base(p).dirs, Mutant = "keep_offline_replica_in_isr",
                                 brokerEpoch, fenced, od)
            ELSE partition[p]]
        Unfences(parts, dirs) ==
            /\ current /\ fenced[b] /\ ~m.wantFence
            /\ \/ ~(dirs[b] # {} /\ \E p \in Partitions : parts[p] # NoPartition /\ b \in ReplicasOf(parts[p])
                                                         /\ parts[p].dirs[b] = UNASSIGNED)
               \/ Mutant = "unfence_before_assigned"
               \/ Semantics = "code"       \* the code's broker asks once caught up, assigned or not
        unfence == Unfences(parts1, od)
        fen == IF unfence THEN [fenced EXCEPT ![b] = FALSE] ELSE fenced
        parts2 == IF unfence /\ Mutant # "unfence_without_election"
                  THEN [p \in Partitions |->
                           IF parts1[p] # NoPartition /\ parts1[p].leader = NoLeader
                           THEN ChangePartition(parts1[p], p, NONE, parts1[p].dirs, FALSE, brokerEpoch, fen, od)
                           ELSE parts1[p]]
                  ELSE parts1
        \* -- semantics "code": calculateNextBrokerState, then records from the image, replayed in order
        was == IF CleanShutdownsOn /\ awaitedHeartbeats[b] # <<>> THEN "CONTROLLED_SHUTDOWN"
               ELSE IF fenced[b] THEN "FENCED" ELSE "UNFENCED"
        hasLeaderships == \E p \in Partitions : partition[p] # NoPartition /\ partition[p].leader = b
        will == IF ~current THEN was
                ELSE IF was = "CONTROLLED_SHUTDOWN"
                THEN IF hasLeaderships \/ \E x \in awaitedHeartbeats[b][1] : HeartbeatActive(x)
                     THEN "CONTROLLED_SHUTDOWN" ELSE "SHUTDOWN_NOW"
                ELSE IF was = "FENCED"
                THEN IF m.wantShutDown THEN "SHUTDOWN_NOW" ELSE IF m.wantFence THEN "FENCED" ELSE "UNFENCED"
                ELSE IF m.wantFence THEN IF m.wantShutDown THEN "SHUTDOWN_NOW" ELSE "FENCED"
                ELSE IF m.wantShutDown THEN IF hasLeaderships THEN "CONTROLLED_SHUTDOWN" ELSE "SHUTDOWN_NOW"
                ELSE "UNFENCED"
        unfenceC == will # was /\ will = "UNFENCED"
        fenceC == will # was /\ will \in {"FENCED", "SHUTDOWN_NOW"}
        enterC == will # was /\ will = "CONTROLLED_SHUTDOWN"
        \* handleBrokerFenced and handleBrokerInControlledShutdown take the broker out of each ISR
        outOfIsrs == (fenceC /\ Mutant # "fenced_leader_kept") \/ enterC
        InIsr(p) == partition[p] # NoPartition /\ b \in partition[p].isr
        Image(p, remove, add, keep) ==
            ChangeRecord(partition[p], p, remove, add, partition[p].dirs, keep, brokerEpoch, fenced, onlineDirs)
        ElectsFor(p) == unfenceC /\ Mutant # "unfence_without_election" /\ partition[p] # NoPartition
                        /\ partition[p].leader = NoLeader
        Elected(p) ==
            IF ElectsFor(p) THEN Merge(partition[p], Image(p, NONE, b, FALSE))
            ELSE IF outOfIsrs /\ InIsr(p) THEN Merge(partition[p], Image(p, b, NONE, FALSE))
            ELSE partition[p]
        codeParts == [p \in Partitions |->
            IF Affected(p)
            THEN Merge(IF Mutant = "foreign_offline_dirs" THEN ForeignRecords(Elected(p), p, b, 1, od) ELSE Elected(p),
                       Image(p, b, NONE, Mutant = "keep_offline_replica_in_isr"))
            ELSE Elected(p)]
        \* BrokerRegistrationChangeRecord's replay takes an empty logDirs for "no change"
        codeOd == IF od[b] # {} THEN od ELSE onlineDirs
        \* the same records, as the log holds them, in the order the code writes them
        ImageRec(p, remove, add, keep) == PartitionChangeRec(p, Image(p, remove, add, keep))
        electionRecs ==
            IF Mutant = "unfence_without_election" THEN <<>>
            ELSE [k \in 1 .. NumPartitions |-> LET p == k - 1 IN
                     IF partition[p] # NoPartition /\ partition[p].leader = NoLeader
                     THEN ImageRec(p, NONE, b, FALSE) ELSE NoChangeRec(p)]
        isrRecs == [k \in 1 .. NumPartitions |-> LET p == k - 1 IN
                       IF outOfIsrs /\ InIsr(p) THEN ImageRec(p, b, NONE, FALSE) ELSE NoChangeRec(p)]
        stateRecs ==
            IF unfenceC THEN <<RegistrationChangeRec(b, TRUE, FALSE, {})>> \o electionRecs
            ELSE IF fenceC THEN isrRecs \o <<RegistrationChangeRec(b, TRUE, TRUE, {})>>
            ELSE IF enterC THEN (IF InControlledShutdown(b) THEN <<>> ELSE <<ControlledShutdownRec(b)>>) \o isrRecs
            ELSE <<>>
        codeFenced == IF unfenceC THEN [fenced EXCEPT ![b] = FALSE] ELSE IF fenceC THEN [fenced EXCEPT ![b] = TRUE]
                      ELSE fenced
        \* handleDirectoriesCordoned (metadata version 4.3-IV0): the registration takes the reported
        \* directories when it holds none (null) or others; the mutant keeps only those it lists online,
        \* and writes nothing when none is (trunk before KAFKA-20441)
        reportsCordons == current /\ m.cordoned # <<>>
        cordonSet == IF Mutant = "cordons_only_of_online_dirs" THEN m.cordoned[1] \cap onlineDirs[b]
                     ELSE IF reportsCordons THEN m.cordoned[1] ELSE {}
        cordonWritten == /\ reportsCordons
                         /\ ~(Mutant = "cordons_only_of_online_dirs" /\ cordonSet = {})
                         /\ registeredCordons[b] # <<cordonSet>>
        cordonRecs == IF cordonWritten THEN <<CordonedDirsRec(b, cordonSet)>> ELSE <<>>
        \* BrokerHeartbeatManager: the sender's offset (touch), the registration records' replay,
        \* then a controlled shutdown's offset (maybeUpdateControlledShutdownOffset)
        touched == IF current THEN HeartbeatTouched(awaitedHeartbeats, b, will \in {"FENCED", "SHUTDOWN_NOW"})
                   ELSE awaitedHeartbeats
        registrationWritten == unfenceC \/ fenceC \/ (enterC /\ ~InControlledShutdown(b)) \/ newly # {} \/ cordonWritten
        replayed == IF registrationWritten THEN OffsetForgotten(touched, b, codeFenced[b]) ELSE touched
        codeAwaited == IF will = "CONTROLLED_SHUTDOWN" /\ replayed[b] = <<>>
                       THEN [replayed EXCEPT ![b] = <<Brokers \ {b}>>] ELSE replayed
        ForeignRecs(p) ==
            [k \in DOMAIN partition[p].replicas |-> LET r == partition[p].replicas[k] IN
                IF Mutant = "foreign_offline_dirs" /\ r # b /\ ~IsOnline(partition[p].dirs[r], od[b])
                THEN PartitionChangeRec(p, ChangeRecord(partition[p], p, r, NONE, partition[p].dirs, FALSE,
                                                        brokerEpoch, fenced, onlineDirs))
                ELSE NoChangeRec(p)]
        offlineRecs ==
            IF newly = {} THEN <<>>
            ELSE Concat([k \in 1 .. NumPartitions |-> LET p == k - 1 IN
                     IF Affected(p)
                     THEN ForeignRecs(p) \o <<ImageRec(p, b, NONE, Mutant = "keep_offline_replica_in_isr")>>
                     ELSE <<>>])
                 \o <<RegistrationChangeRec(b, FALSE, FALSE, od[b])>>
        shouldShutDown == Semantics = "code" /\ will = "SHUTDOWN_NOW"
        response == IF (m.offline # {} \/ shouldShutDown) /\ current
                    THEN [kind |-> "HeartbeatResponse", broker |-> b, epoch |-> m.epoch, offline |-> m.offline,
                          shouldShutDown |-> shouldShutDown]
                    ELSE NoResponse
    IN /\ m.kind = "Heartbeat"
       /\ IF ~applyOffline
          THEN network' = net /\ UNCHANGED <<controllerVars, heartbeatVars>>     \* STALE_BROKER_EPOCH
          ELSE /\ IF Semantics = "code"
                  THEN /\ onlineDirs' = codeOd
                       /\ fenced' = codeFenced
                       /\ partition' = codeParts
                       /\ LogWrite(net, Written(stateRecs \o offlineRecs \o cordonRecs), response)
                       /\ registeredCordons' = IF cordonWritten THEN [registeredCordons EXCEPT ![b] = <<cordonSet>>]
                                               ELSE registeredCordons
                       /\ inControlledShutdown' = IF enterC THEN [inControlledShutdown EXCEPT ![b] = TRUE]
                                                 ELSE inControlledShutdown
                       /\ awaitedHeartbeats' = IF CleanShutdownsOn THEN codeAwaited ELSE awaitedHeartbeats
                  ELSE /\ onlineDirs' = od
                       /\ fenced' = fen
                       /\ partition' = parts2
                       /\ network' = Send(net, response)
                       /\ UNCHANGED <<logVars, heartbeatVars, registeredCordons>>
               /\ UNCHANGED <<brokerEpoch, registeredIncarnation, metadataVersion, topicConfig, deleted>>
               /\ reportedCordons' = IF reportsCordons THEN [reportedCordons EXCEPT ![b] = m.cordoned] ELSE reportedCordons
       /\ HeardFrom(b, m.epoch)
       /\ UNCHANGED <<brokerVarsButAcked, counters, tool, brokerShutdownVars, cleanShutdowns>> /\ GiveUp

\* processExpiredBrokerHeartbeat (semantics "code"): a heartbeat that waited in the controller's
\* queue past its deadline only keeps the session alive (of the registered epoch, it makes one:
\* SessionsByEpoch) and reports the broker's metadata offset (touch); nothing is written or
\* answered.
ControllerTimesOutHeartbeat(m) ==
    /\ m.kind = "Heartbeat"
    /\ Semantics = "code"
    /\ network' = BagRemove(network, m)
    /\ HeardFrom(m.broker, m.epoch)
    /\ awaitedHeartbeats' = IF CleanShutdownsOn /\ EpochIsCurrent(m.broker, m.epoch)
                            THEN HeartbeatTouched(awaitedHeartbeats, m.broker, FALSE) ELSE awaitedHeartbeats
    /\ UNCHANGED <<brokerVars, controllerVars, counters, tool, inControlledShutdown, brokerShutdownVars, cleanShutdowns>>

\* handleBrokerFenced for a broker whose session expired (all but the counters).
FenceExpired(b) ==
    LET fen == [fenced EXCEPT ![b] = TRUE]
        \* handleBrokerFenced's records, as the log holds them
        fenceRecs ==
            Written([k \in 1 .. NumPartitions |-> LET p == k - 1 IN
                        IF Mutant # "fenced_leader_kept" /\ partition[p] # NoPartition /\ b \in partition[p].isr
                        THEN PartitionChangeRec(p, ChangeRecord(partition[p], p, b, NONE, partition[p].dirs, FALSE,
                                                                brokerEpoch, fenced, onlineDirs))
                        ELSE NoChangeRec(p)])
            \o <<RegistrationChangeRec(b, TRUE, TRUE, {})>>
    IN
    /\ fenced' = fen
    /\ session' = IF SessionsByEpoch THEN [session EXCEPT ![b] = FALSE] ELSE session
    /\ partition' = IF Mutant = "fenced_leader_kept" THEN partition
                    ELSE IF Semantics = "code"
                    THEN [p \in Partitions |->
                            IF partition[p] # NoPartition /\ b \in partition[p].isr
                            THEN ChangePartition(partition[p], p, b, partition[p].dirs, FALSE, brokerEpoch, fenced, onlineDirs)
                            ELSE partition[p]]
                    ELSE [p \in Partitions |->
                            IF partition[p] # NoPartition /\ b \in ReplicasOf(partition[p])
                            THEN ChangePartition(partition[p], p, b, partition[p].dirs, FALSE, brokerEpoch, fen, onlineDirs)
                            ELSE partition[p]]
    /\ IF Semantics = "code" THEN LogWrite(network, fenceRecs, NoResponse) ELSE UNCHANGED <<network, logVars>>
    \* the fencing record's replay ends the broker's controlled shutdown in BrokerHeartbeatManager
    /\ awaitedHeartbeats' = IF CleanShutdownsOn THEN OffsetForgotten(awaitedHeartbeats, b, TRUE) ELSE awaitedHeartbeats
    /\ UNCHANGED <<brokerVarsButAcked, brokerEpoch, onlineDirs, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted, tool,
                   inControlledShutdown, brokerShutdownVars, cleanShutdowns>> /\ GiveUp

\* maybeFenceOneStaleBroker: the registered incarnation stopped heartbeating (it is down or was
\* replaced): fence it and move its leaderships and ISR memberships away.  Semantics "code":
\* handleBrokerFenced's records, for the partitions with the broker in the ISR, computed from
\* the image, then the fencing; with SessionsByEpoch its session ends, and a broker fenced
\* already whose session expires gets the same records.
ControllerFencesExpiredBroker(b) ==
    /\ Registered(b)
    /\ HasSession(b)
    /\ ~Alive(b)
    /\ FenceExpired(b)
    /\ UNCHANGED counters

\* maybeFenceOneStaleBroker for a broker whose process still runs: its heartbeats have not
\* reached the controller within the session timeout (a long pause, heartbeats lost or late),
\* at most MaxSessionExpiries times in the run.  Fenced as any expired broker; it keeps running
\* as the same incarnation, and a heartbeat the controller handles later may unfence it.
ControllerFencesSilentBroker(b) ==
    /\ sessionsExpired < MaxSessionExpiries
    /\ Registered(b)
    /\ HasSession(b)
    /\ Alive(b)
    /\ FenceExpired(b)
    /\ sessionsExpired' = sessionsExpired + 1
    /\ UNCHANGED <<nextUuid, dirFailures, lostMessages, movesStarted, configChanges, cordonVars, reassignmentsMade>>

\* AssignReplicasToDirs: epoch gate; per-partition errors; record the directory, and if it is
\* not online for the broker (LOST, unknown) take the replica out as for a failed directory.
\* Semantics "code" (handleAssignReplicasToDirs): a record setting the directory, its election
\* judging replicas on the partition's old directories, then, for a directory not online, a
\* record from the same image taking the broker out: the partition epoch up by two.
ControllerHandlesAssignment(m) ==
    LET b == m.broker
        p == m.partition
        net == BagRemove(network, m)
        Response(ok) == [kind |-> "AssignResponse", broker |-> b, epoch |-> m.epoch,
                         partition |-> p, dir |-> m.dir, ok |-> ok]
        Answer(ok) == BagAdd(net, Response(ok))
    IN /\ m.kind = "Assign"
       /\ IF ~AssignmentSupported                 \* UnsupportedVersionException
          THEN network' = Answer(FALSE) /\ UNCHANGED controllerVars
          ELSE IF ~EpochIsCurrent(b, m.epoch) /\ ~(Mutant = "skip_epoch_check" /\ Registered(b))
          THEN network' = net /\ UNCHANGED controllerVars
          ELSE IF partition[p] = NoPartition \/ b \notin ReplicasOf(partition[p])
          THEN /\ LogWrite(net, <<>>, Response(FALSE))     \* a per-partition error in the response
               /\ UNCHANGED <<brokerEpoch, fenced, onlineDirs, partition, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted>>
          ELSE LET part == partition[p]
                   dirs == [part.dirs EXCEPT ![b] = m.dir]
                   online == ControllerThinksOnline(b, m.dir, onlineDirs)
                   remove == IF online THEN NONE ELSE b
                   firstRec == AssignRecord(part, p, dirs, brokerEpoch, fenced, onlineDirs)
                   secondRec == ChangeRecord(part, p, b, NONE, part.dirs, FALSE, brokerEpoch, fenced, onlineDirs)
                   first == Merge(part, firstRec)
                   codePart == IF online THEN first ELSE Merge(first, secondRec)
                   codeRecs == Written(<<PartitionChangeRec(p, firstRec)>>
                                       \o (IF online THEN <<>> ELSE <<PartitionChangeRec(p, secondRec)>>))
               IN /\ IF Semantics = "code" THEN LogWrite(net, codeRecs, Response(TRUE))
                     ELSE network' = Answer(TRUE) /\ UNCHANGED logVars
                  /\ partition' = [partition EXCEPT ![p] =
                        IF Semantics = "code" THEN codePart
                        ELSE ChangePartition(part, p, remove, dirs, FALSE, brokerEpoch, fenced, onlineDirs)]
                  /\ UNCHANGED <<brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted>>
       /\ UNCHANGED <<brokerVarsButAcked, counters, tool, session, shutdownVars>> /\ GiveUp

\* KIP-589: epoch gate, then the replica is offline: its directory becomes LOST and it leaves
\* the ISR and leadership.
ControllerHandlesAlterReplicaState(m) ==
    LET b == m.broker
        p == m.partition
        net == BagRemove(network, m)
    IN /\ m.kind = "AlterReplicaState"
       /\ IF (~EpochIsCurrent(b, m.epoch) /\ ~(Mutant = "skip_epoch_check" /\ Registered(b)))
             \/ partition[p] = NoPartition \/ b \notin ReplicasOf(partition[p])
          THEN network' = net /\ UNCHANGED controllerVars
          ELSE LET rec == ChangeRecord(partition[p], p, b, NONE, [partition[p].dirs EXCEPT ![b] = LOST], FALSE,
                                       brokerEpoch, fenced, onlineDirs)
               IN /\ partition' = [partition EXCEPT ![p] = Merge(partition[p], rec)]
                  /\ LogWrite(net, Written(<<PartitionChangeRec(p, rec)>>), NoResponse)
                  /\ UNCHANGED <<brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted>>
       /\ UNCHANGED <<brokerVarsButAcked, counters, tool, session, shutdownVars>> /\ GiveUp

\* CreateTopics with a manual assignment: every replica registered, the ISR its unfenced
\* replicas (at least one), the first of them leader, directories DefaultDir (createTopic's
\* PartitionRecord, both epochs 0).
ControllerCreatesPartition(p) ==
    LET isr == {r \in ReplicaSet(p) : ~fenced[r] /\ ~InControlledShutdown(r)}
        first == Min({k \in 1 .. ReplicationFactor : Replicas(p)[k] \in isr})
    IN /\ partition[p] = NoPartition
       \* deleted: a topic created anew under its name is another topic
       /\ TopicDeletion => ~deleted[p]
       /\ \A r \in ReplicaSet(p) : Registered(r)
       \* validateManualPartitionAssignment: no replica on a broker with every directory cordoned
       /\ CordonsOn => \A r \in ReplicaSet(p) : HasUncordonedDirs(r)
       /\ isr # {}
       /\ partition' = [partition EXCEPT ![p] =
             NewPartition(p, Replicas(p)[first], isr, [r \in ReplicaSet(p) |-> DefaultDir(r)])]
       /\ LogWrite(network, <<PartitionRec(p, Replicas(p)[first], isr, [r \in ReplicaSet(p) |-> DefaultDir(r)])>>,
                   NoResponse)
       /\ UNCHANGED <<brokerVarsButAcked, brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted, counters, tool, session, shutdownVars>> /\ GiveUp

\* DeleteTopics: ControllerApis looks the topic's ID up in the committed metadata (findTopicIds
\* reads at the last stable offset), then deleteTopics writes a RemoveTopicRecord for it, which
\* replay takes the topic out with (an ID already gone from the controller's own state:
\* UNKNOWN_TOPIC_ID, nothing written).
AdminDeletesTopic(p) ==
    /\ TopicDeletion
    /\ Published.partition[p] # NoPartition
    /\ partition[p] # NoPartition
    /\ partition' = [partition EXCEPT ![p] = NoPartition]
    /\ deleted' = [deleted EXCEPT ![p] = TRUE]
    /\ LogWrite(network, <<RemoveTopicRec(p)>>, NoResponse)
    /\ UNCHANGED <<brokerVarsButAcked, brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig,
                   registeredCordons, reportedCordons, counters, tool, session, shutdownVars>> /\ GiveUp

\* An AlterPartitionReassignments request's target replicas: every list of distinct brokers, one to
\* ReplicationFactor long.  (Never empty: TLC's -coverage leaves out an action over an empty domain,
\* and kraftcheck's lists every action.)
ReassignmentTargets ==
    UNION {{t \in [1 .. k -> Brokers] : Cardinality(Range(t)) = k} : k \in 1 .. ReplicationFactor}
\* The brokers of S in increasing order.
SortedSeq(S) == [k \in 1 .. Cardinality(S) |-> CHOOSE x \in S : Cardinality({y \in S : y < x}) = k - 1]
\* changePartitionReassignment's builder for target replicas `target` (PartitionReassignmentReplicas):
\* the replicas it removes are the current ones not in the target, those it adds the target's not
\* current ones, and the replicas the target, then the removed ones; the builder is told no empty
\* removing or adding (setTargetRemoving, setTargetAdding: it keeps the registration's then); an
\* ONLINE election, replicas judged on the partition's directories.
ReassignTargets(part, target) ==
    LET removing == ReplicasOf(part) \ Range(target)
        adding == Range(target) \ ReplicasOf(part)
    IN Targets(part.isr, target \o SortedSeq(removing), IF removing = {} THEN part.removing ELSE removing,
               IF adding = {} THEN part.adding ELSE adding)
ReassignRecord(part, p, target, ep, fen, od) ==
    BuildReassigning(part, p, ReassignTargets(part, target), NONE, NONE, NONE, part.dirs, part.dirs, "online",
                     ElrEnabled, FALSE, ep, fen, od)
\* Its election judges a broker the registration does not hold (JudgesNonReplica).
ReassignThrows(part, target, ep, fen, od) ==
    BuildThrowsFor(part, Completed(ReassignTargets(part, target)), NONE, NONE, NONE, part.dirs, "online", ElrEnabled,
                   ep, fen, od)

\* AlterPartitionReassignments with target replicas `target` for p
\* (ReplicationControlManager.changePartitionReassignment, on the controller's own state): every
\* target broker registered (validateManualPartitionAssignment, else InvalidReplicaAssignmentException:
\* nothing written); the builder's record (ReassignRecord) adds the new replicas at once and completes
\* the reassignment when the ISR allows it (at once, for replicas merely reordered).  A request that
\* changes nothing writes nothing.  Reassignments and cancellations together, at most
\* MaxReassignments times in the run.
AdminReassignsPartition(p, target) ==
    LET rec == ReassignRecord(partition[p], p, target, brokerEpoch, fenced, onlineDirs)
    IN /\ reassignmentsMade < MaxReassignments
       /\ partition[p] # NoPartition
       /\ \A r \in Range(target) : Registered(r)
       /\ ~ReassignThrows(partition[p], target, brokerEpoch, fenced, onlineDirs)  \* UNKNOWN_SERVER_ERROR
       /\ ~NoChange(rec)
       /\ partition' = [partition EXCEPT ![p] = Merge(partition[p], rec)]
       /\ reassignmentsMade' = reassignmentsMade + 1
       /\ LogWrite(network, <<PartitionChangeRec(p, rec)>>, NoResponse)
       /\ UNCHANGED <<brokerVarsButAcked, brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig,
                      registeredCordons, reportedCordons, deleted, nextUuid, dirFailures, lostMessages, movesStarted,
                      sessionsExpired, configChanges, cordonVars, tool, session, shutdownVars>> /\ GiveUp

\* The ISR a cancelled reassignment leaves (PartitionReassignmentRevert): the ISR less the replicas it
\* was adding, or if that is empty the first remaining replica (an unclean election).
RevertedIsr(part, original) == IF part.isr \ part.adding = {} THEN {original[1]} ELSE part.isr \ part.adding
\* cancelPartitionReassignment's builder: the replicas less those the reassignment was adding, that
\* ISR, nothing removed or added any more; the topic's election (UNCLEAN with its
\* unclean.leader.election.enable), replicas judged on the partition's directories.
CancelRecordFrom(part, p, original, ep, fen, od) ==
    BuildReassigning(part, p, Targets(RevertedIsr(part, original), original, {}, {}), NONE, NONE, NONE,
                     part.dirs, part.dirs, TopicElection, ElrEnabled, FALSE, ep, fen, od)
CancelRecord(part, p, ep, fen, od) ==
    CancelRecordFrom(part, p, SelectSeq(part.replicas, LAMBDA r : r \notin part.adding), ep, fen, od)
\* Its election judges a broker the registration does not hold (JudgesNonReplica): its last known
\* leader, which a reassignment removed.
CancelThrows(part, ep, fen, od) ==
    LET original == SelectSeq(part.replicas, LAMBDA r : r \notin part.adding)
    IN BuildThrowsFor(part, Completed(Targets(RevertedIsr(part, original), original, {}, {})), NONE, NONE, NONE,
                      part.dirs, TopicElection, ElrEnabled, ep, fen, od)

\* AlterPartitionReassignments with null replicas for p: the reassignment under way is reverted
\* (cancelPartitionReassignment, CancelRecord).  No reassignment under way:
\* NoReassignmentInProgressException; an ISR the revert would empty needs an unclean election, refused
\* (InvalidReplicaAssignmentException) unless the topic's unclean.leader.election.enable is on.
\* Either error writes nothing; so does a request that changes nothing.
AdminCancelsReassignment(p) ==
    LET rec == CancelRecord(partition[p], p, brokerEpoch, fenced, onlineDirs)
    IN /\ reassignmentsMade < MaxReassignments
       /\ partition[p] # NoPartition
       /\ ~(partition[p].removing = {} /\ partition[p].adding = {})
       /\ IF partition[p].isr \ partition[p].adding = {} THEN ControllerUnclean ELSE TRUE
       /\ ~CancelThrows(partition[p], brokerEpoch, fenced, onlineDirs)  \* UNKNOWN_SERVER_ERROR
       /\ ~NoChange(rec)
       /\ partition' = [partition EXCEPT ![p] = Merge(partition[p], rec)]
       /\ reassignmentsMade' = reassignmentsMade + 1
       /\ LogWrite(network, <<PartitionChangeRec(p, rec)>>, NoResponse)
       /\ UNCHANGED <<brokerVarsButAcked, brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig,
                      registeredCordons, reportedCordons, deleted, nextUuid, dirFailures, lostMessages, movesStarted,
                      sessionsExpired, configChanges, cordonVars, tool, session, shutdownVars>> /\ GiveUp

-----------------------------------------------------------------------------
(* Admin and network *)

\* ElectLeaders DESIGNATED (KIP-1275), the controller's checks: only for a leaderless partition;
\* the designated replica must be in the replica set, unfenced and on an online directory.
DesignatedElectionAllowed(p, b) ==
    LET part == partition[p]
    IN /\ part # NoPartition
       /\ b \in ReplicasOf(part)
       /\ part.leader = NoLeader \/ Mutant = "designated_with_leader"
       /\ part.leader # b
       /\ AcceptableLeader(b, part.dirs[b], brokerEpoch, fenced, onlineDirs)

\* ... and its record: like an unclean election, the ISR becomes just the new leader, the ELR and
\* the last known leader are cleared, and with the data plane the leader is RECOVERING.
DesignatedElection(p, b) ==
    LET part == partition[p]
        rec == [leader |-> b, setIsr |-> part.isr # {b}, isr |-> {b}, setDirs |-> FALSE, dirs |-> part.dirs,
                setElr |-> part.elr # {}, elr |-> {}, setKnown |-> part.lastKnownElr # {}, known |-> {},
                recovery |-> IF DataPlane /\ ~part.recovering THEN "RECOVERING" ELSE "none",
                setReplicas |-> FALSE, replicas |-> part.replicas, setRemoving |-> FALSE, removing |-> part.removing,
                setAdding |-> FALSE, adding |-> part.adding]
    IN
    /\ partition' = [partition EXCEPT ![p] = Merge(part, rec)]
    /\ LogWrite(network, <<PartitionChangeRec(p, rec)>>, NoResponse)
    /\ UNCHANGED <<brokerVarsButAcked, brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted, counters, session, shutdownVars>> /\ GiveUp

\* An operator's kafka-leader-election --election-type designated (KIP-1275).
AdminElectsDesignatedLeader(p, b) ==
    /\ DesignatedEnabled
    /\ DesignatedElectionAllowed(p, b)
    /\ DesignatedElection(p, b)
    /\ UNCHANGED tool

\* kafka-leader-election --election-type unclean (ReplicationControlManager.electLeader):
\* ELECTION_NOT_NEEDED for a partition with a leader; else the builder's UNCLEAN election, and
\* ELIGIBLE_LEADERS_NOT_AVAILABLE (nothing written) when it elects nobody.
AdminElectsUncleanLeader(p) ==
    LET rec == UncleanElectionRecord(partition[p], p, brokerEpoch, fenced, onlineDirs)
    IN /\ UncleanElection # "off"
       /\ partition[p] # NoPartition
       /\ partition[p].leader = NoLeader
       /\ ~NoChange(rec)
       /\ partition' = [partition EXCEPT ![p] = Merge(partition[p], rec)]
       /\ LogWrite(network, <<PartitionChangeRec(p, rec)>>, NoResponse)
       /\ UNCHANGED <<brokerVarsButAcked, brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted, counters, tool, session, shutdownVars>> /\ GiveUp

\* maybeElectUncleanLeaders, the controller's periodic task with the topic's
\* unclean.leader.election.enable: an UNCLEAN election for every leaderless partition, in one batch.
ControllerElectsUncleanLeaders ==
    LET Leaderless(p) == partition[p] # NoPartition /\ partition[p].leader = NoLeader
        Rec(p) == UncleanElectionRecord(partition[p], p, brokerEpoch, fenced, onlineDirs)
        recs == Written([k \in 1 .. NumPartitions |-> LET p == k - 1 IN
                            IF Leaderless(p) THEN PartitionChangeRec(p, Rec(p)) ELSE NoChangeRec(p)])
    IN /\ ControllerUnclean
       /\ Mutant # "unclean_election_not_retried"
       /\ recs # <<>>
       /\ partition' = [p \in Partitions |-> IF Leaderless(p) THEN Merge(partition[p], Rec(p)) ELSE partition[p]]
       /\ LogWrite(network, recs, NoResponse)
       /\ UNCHANGED <<brokerVarsButAcked, brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted, counters, tool, session, shutdownVars>> /\ GiveUp

\* kafka-features upgrade to 3.7-IV2: the controller writes a FeatureLevelRecord.
AdminUpgradesMetadataVersion ==
    /\ MetadataUpgradeEnabled
    /\ metadataVersion # "3.7-IV2"
    /\ metadataVersion' = "3.7-IV2"
    /\ LogWrite(network, <<FeatureLevelRec("3.7-IV2")>>, NoResponse)
    /\ UNCHANGED <<brokerVars, brokerEpoch, fenced, onlineDirs, partition, registeredIncarnation, topicConfig, registeredCordons, reportedCordons, deleted, counters, tool, session, shutdownVars>>

\* The topic exists (an operator can alter only an existing topic's configs).
TopicExists == \E p \in Partitions : partition[p] # NoPartition
\* kafka-configs --alter --add-config min.insync.replicas=v on the topic
\* (ConfigurationControlManager.incrementalAlterConfigs): a ConfigRecord, and with ELR a
\* ClearElrRecord in the same batch (createClearElrRecordsAsNeeded, KAFKA-16540): the eligible
\* leader replicas were chosen under the old value.
AdminAltersMinIsr(v) ==
    LET clear == ElrEnabled /\ Mutant # "min_isr_change_keeps_elr" IN
    /\ DynamicConfigs
    /\ configChanges.minIsr < MaxMinIsrChanges
    /\ v # topicConfig.minIsr
    /\ TopicExists
    /\ topicConfig' = [topicConfig EXCEPT !.minIsr = v]
    /\ partition' = IF clear THEN [p \in Partitions |-> ElrCleared(partition[p])] ELSE partition
    /\ LogWrite(network, <<ConfigRec("minIsr", v)>> \o (IF clear THEN <<ClearElrRec>> ELSE <<>>), NoResponse)
    /\ configChanges' = [configChanges EXCEPT !.minIsr = @ + 1]
    /\ UNCHANGED <<brokerVars, brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion,
                   registeredCordons, reportedCordons, deleted, cordonVars, reassignmentsMade,
                   nextUuid, dirFailures, lostMessages, movesStarted, sessionsExpired, tool, session, shutdownVars>>

\* kafka-configs --alter on the topic's unclean.leader.election.enable: a ConfigRecord turning it
\* on or off.  Nothing is elected at once: the periodic unclean election reads the new value.
AdminTogglesUncleanElection ==
    /\ DynamicConfigs
    /\ configChanges.unclean < MaxUncleanToggles
    /\ TopicExists
    /\ topicConfig' = [topicConfig EXCEPT !.unclean = ~@]
    /\ LogWrite(network, <<ConfigRec("unclean", ~topicConfig.unclean)>>, NoResponse)
    /\ configChanges' = [configChanges EXCEPT !.unclean = @ + 1]
    /\ UNCHANGED <<brokerVars, brokerEpoch, fenced, onlineDirs, partition, registeredIncarnation, metadataVersion,
                   registeredCordons, reportedCordons, deleted, cordonVars, reassignmentsMade,
                   nextUuid, dirFailures, lostMessages, movesStarted, sessionsExpired, tool, session, shutdownVars>>

\* KIP-1066: an operator cordons broker b's directory in slot i, or uncordons it (kafka-configs
\* --alter --entity-type brokers: cordoned.log.dirs).  Sent to a running broker, which checks the
\* path and forwards it, any change goes; sent to the controller while the broker is not running,
\* only an uncordon (ConfigurationControlManager.isCordonedLogDirsInvalid).  The broker applies the
\* value at once (DynamicLogConfig.reconfigure), and reads it when it starts.
AdminCordonsDir(b, i) ==
    /\ CordonsOn
    /\ cordonChanges < MaxCordons
    /\ IF brokerStatus[b] = "RUNNING" THEN TRUE ELSE i \in cordoned[b]
    /\ cordoned' = [cordoned EXCEPT ![b] = IF i \in @ THEN @ \ {i} ELSE @ \cup {i}]
    /\ cordonChanges' = cordonChanges + 1
    /\ UNCHANGED <<brokerVars, controllerVars, network, nextUuid, dirFailures, lostMessages, movesStarted,
                   sessionsExpired, configChanges, reassignmentsMade, tool, session, shutdownVars>>

\* kafka-leader-election --election-type preferred (ReplicationControlManager.electLeader), as the
\* controller's auto.leader.rebalance.enable also runs it: ELECTION_NOT_NEEDED when the first
\* replica leads; else the builder's PREFERRED election, and PREFERRED_LEADER_NOT_AVAILABLE
\* (nothing written) when that changes nothing.
AdminElectsPreferredLeader(p) ==
    LET rec == PreferredElectionRecord(partition[p], p, brokerEpoch, fenced, onlineDirs)
    IN /\ PreferredElections
       /\ partition[p] # NoPartition
       /\ partition[p].leader # partition[p].replicas[1]
       /\ ~NoChange(rec)
       /\ partition' = [partition EXCEPT ![p] = Merge(partition[p], rec)]
       /\ LogWrite(network, <<PartitionChangeRec(p, rec)>>, NoResponse)
       /\ UNCHANGED <<brokerVarsButAcked, brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted,
                      counters, tool, session, shutdownVars>> /\ GiveUp

NetworkLosesMessage(m) ==
    /\ lostMessages < MaxLosses
    /\ network' = BagRemove(network, m)
    /\ lostMessages' = lostMessages + 1
    \* mutant assignment_not_retried: the broker's wait for the answer times out and nothing
    \* reschedules the entry
    /\ IF /\ Mutant = "assignment_not_retried" /\ m.kind \in {"Assign", "AssignResponse"}
          /\ brokerStatus[m.broker] = "RUNNING" /\ m.epoch = knownEpoch[m.broker]
          /\ queued[m.broker][m.partition] = m.dir
       THEN /\ queued' = [queued EXCEPT ![m.broker][m.partition] = GIVEN_UP]
            /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, knownEpoch, brokerImage, dataVars, controllerVars, nextUuid, dirFailures, movesStarted, sessionsExpired, configChanges, cordonVars, reassignmentsMade, tool, session, shutdownVars>>
       ELSE UNCHANGED <<brokerVars, controllerVars, nextUuid, dirFailures, movesStarted, sessionsExpired, configChanges, cordonVars, reassignmentsMade, tool, session, shutdownVars>>

(* The metadata log (with failovers) *)

\* The quorum commits the oldest uncommitted batch: the committed image replays it, and its
\* answer goes out.
ControllerCommits ==
    /\ uncommitted # <<>>
    /\ committedImage' = Replay(committedImage, Head(uncommitted).records)
    /\ uncommitted' = Tail(uncommitted)
    /\ network' = Send(network, Head(uncommitted).response)
    /\ UNCHANGED <<brokerVars, brokerEpoch, fenced, onlineDirs, partition, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted,
                   failoversDone, counters, tool, session, shutdownVars>>

\* The active controller fails and another takes over.  Raft's new leader holds the committed
\* records and may hold a prefix of the uncommitted batches, the first `kept`, which it commits;
\* the rest are lost.  The new controller rebuilds its state by replaying the log; the old one's
\* pending answers are lost.  Requests in flight reach the new controller (a broker answered
\* NOT_CONTROLLER, or not at all, sends its request again).
ControllerFailsOver(kept) ==
    LET img == Replay(committedImage, BatchRecords(SubSeq(uncommitted, 1, kept))) IN
    /\ failoversDone < Failovers
    /\ brokerEpoch' = img.brokerEpoch
    /\ fenced' = img.fenced
    /\ onlineDirs' = img.onlineDirs
    /\ partition' = img.partition
    /\ registeredIncarnation' = img.registeredIncarnation
    /\ metadataVersion' = img.metadataVersion
    /\ topicConfig' = img.topicConfig
    /\ registeredCordons' = img.registeredCordons
    /\ deleted' = img.deleted
    /\ committedImage' = img
    /\ uncommitted' = <<>>
    /\ failoversDone' = failoversDone + 1
    \* ClusterControlManager.activate: a session for every registered broker (4.0.x), or every
    \* unfenced one (4.1.0 and later); the mutant: none (KAFKA-18138)
    /\ session' = IF SessionsByEpoch
                  THEN [b \in Brokers |-> img.brokerEpoch[b] > 0 /\ (FailoverSessionsForFenced \/ ~img.fenced[b])
                                          /\ Mutant # "failover_without_sessions"]
                  ELSE session
    /\ UNCHANGED <<brokerVars, network, counters, tool, shutdownVars, reportedCordons>>

\* The broker's metadata listener loads what has been committed since it last looked: its image
\* becomes the latest committed one.  It keeps its metadata across restarts (on disk).
BrokerLoadsMetadata(b) ==
    /\ BrokerLag
    /\ brokerStatus[b] # "OFF"
    /\ brokerImage[b] # Published
    /\ brokerImage' = [brokerImage EXCEPT ![b] = Published]
    /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch,
                   controllerVars, network, counters, dataVars, tool, session, shutdownVars>>

-----------------------------------------------------------------------------
(* The data plane: producers write to leaders (acks=all), followers fetch, leaders change the  *)
(* ISR with AlterPartition.  A fetch is one step, request and answer together: the follower     *)
(* truncates by leader epoch to where its log and the leader's agree and takes the rest (its    *)
(* log becomes the leader's), and the leader learns its new log end offset at once.             *)

\* Broker b runs and holds p's log on a disk that has not failed.
ReplicaReadable(b, p) == brokerStatus[b] = "RUNNING" /\ \E i \in MainSlots(b, p) : SlotOnline(b, i)
\* Broker b acts as p's leader: its metadata names it, it can serve the log, and (Fetch = "batch")
\* it has taken the lead in that leader epoch (LeaderStartsEpoch).
Leads(b, p) ==
    /\ BrokerView(b).partition[p] # NoPartition
    /\ BrokerView(b).partition[p].leader = b
    /\ ReplicaReadable(b, p)
    /\ BatchFetches => followerEnd[b][p].leaderEpoch = BrokerView(b).partition[p].leaderEpoch
\* Broker b's leader-epoch cache of p (LeaderEpochFileCache): <<epoch, start offset>> of each run of
\* records of one leader epoch in its log, then the entry makeLeader assigned at the log's end, if
\* no record has followed it yet.
EpochCache(b, p) ==
    LET log == replicaLog[b][p]
        starts == SelectSeq([k \in 1 .. Len(log) |-> k], LAMBDA k : k = 1 \/ log[k - 1] # log[k])
        runs == [j \in 1 .. Len(starts) |-> <<log[starts[j]], starts[j] - 1>>]
    IN IF BatchFetches /\ epochEntry[b][p] # -1 THEN Append(runs, <<epochEntry[b][p], Len(log)>>) ELSE runs
\* The epoch of its last entry (UnifiedLog.latestEpoch), -1 if it is empty: what a follower sends as
\* its last fetched epoch, and what KIP-966's LastWrittenLeaderEpoch reads.
LatestEpoch(b, p) == LET c == EpochCache(b, p) IN IF c = <<>> THEN -1 ELSE c[Len(c)][1]
\* LeaderEpochFileCache.endOffsetFor: <<the largest epoch at most `requested`, the start of the next
\* epoch>> (the log end offset `leo` for the latest epoch itself), <<-1, -1>> when the cache cannot
\* place it (UNDEFINED_EPOCH_OFFSET); an epoch below every entry gives <<requested, the first start>>.
EndOffsetFor(cache, leo, requested) ==
    IF requested = -1 \/ cache = <<>> THEN <<-1, -1>>
    ELSE IF cache[Len(cache)][1] = requested THEN <<requested, leo>>
    ELSE LET higher == {j \in 1 .. Len(cache) : cache[j][1] > requested}
             floor == {j \in 1 .. Len(cache) : cache[j][1] <= requested}
         IN IF higher = {} THEN <<-1, -1>>
            ELSE <<IF floor = {} THEN requested ELSE cache[Max(floor)][1], cache[Min(higher)][2]>>
\* What leader b knows of its followers in the leader epoch of part: each epoch starts knowing
\* nothing, at its log end offset (Partition.makeLeader).
FollowerState(b, p, part) ==
    IF followerEnd[b][p].leaderEpoch = part.leaderEpoch THEN followerEnd[b][p]
    ELSE [leaderEpoch |-> part.leaderEpoch, start |-> Len(replicaLog[b][p]), ends |-> [r \in Brokers |-> -1],
          fetchEpochs |-> [r \in Brokers |-> -1]]
AlterPartitionKinds == {"AlterPartition", "AlterPartitionResponse"}
AlterPartitionPending(b, p) ==
    \E m \in BagToSet(network) : m.kind \in AlterPartitionKinds /\ m.broker = b /\ m.partition = p
\* The ISR leader b's AlterPartition in flight proposes in leader epoch le ({} if none).
PendingIsr(net, b, p, le) ==
    LET ms == {m \in BagToSet(net) : m.kind \in AlterPartitionKinds /\ m.broker = b /\ m.partition = p
                                    /\ m.leaderEpoch = le}
    IN IF ms = {} THEN {}
       ELSE LET m == CHOOSE m \in ms : TRUE IN IF m.kind = "AlterPartition" THEN DOMAIN m.isr ELSE m.isr
\* Partition.maybeIncrementLeaderHW: the least log end offset of the maximal ISR (the ISR and
\* the members a pending AlterPartition adds), the leader's own log being `log`; under
\* min.insync.replicas it stays (KAFKA-15583: isUnderMinIsr reads the ISR the metadata holds).
HwTarget(b, p, part, st, log, net) ==
    IF Cardinality(part.isr) < MinIsrIn(BrokerView(b).topicConfig) THEN highWatermark[b][p]
    ELSE Min({IF r = b THEN Len(log) ELSE st.ends[r] : r \in part.isr \cup PendingIsr(net, b, p, part.leaderEpoch) \cup {b}})
NewHw(old, target) == IF target > old THEN target ELSE old
\* The records of the leader's own epoch the high watermark passes, acknowledged if the ISR still
\* has min.insync.replicas members (checkEnoughReplicasReachOffset).
NewlyAcked(b, part, log, old, target) ==
    IF target <= old \/ Cardinality(part.isr) < MinIsrIn(BrokerView(b).topicConfig) THEN {}
    ELSE {<<o, part.leaderEpoch, b, Kept>> : o \in {o \in old .. target - 1 : log[o + 1] = part.leaderEpoch}}
\* Replica b can fetch p from leader l in leader epoch le.
FetchingFrom(b, p, l, le) ==
    /\ BrokerView(b).partition[p] # NoPartition
    /\ b \in ReplicasOf(BrokerView(b).partition[p])
    /\ ReplicaReadable(b, p)
    /\ BrokerView(b).partition[p] # NoPartition
    /\ BrokerView(b).partition[p].leader = l
    /\ BrokerView(b).partition[p].leaderEpoch = le

\* A producer's record (acks=all) reaches the leader, which appends it in its leader epoch; with
\* fewer than min.insync.replicas in its ISR it refuses it (NOT_ENOUGH_REPLICAS).
LeaderAppendsRecord(b, p) ==
    LET part == BrokerView(b).partition[p]
        log == Append(replicaLog[b][p], part.leaderEpoch)
        st == FollowerState(b, p, part)
        old == highWatermark[b][p]
        target == HwTarget(b, p, part, st, log, network)
    IN /\ DataPlane
       /\ produced < MaxRecords
       /\ Leads(b, p)
       /\ Cardinality(part.isr) >= MinIsrIn(BrokerView(b).topicConfig)
       /\ replicaLog' = [replicaLog EXCEPT ![b][p] = log]
       /\ produced' = produced + 1
       /\ highWatermark' = [highWatermark EXCEPT ![b][p] = NewHw(old, target)]
       /\ followerEnd' = [followerEnd EXCEPT ![b][p] = st]
       /\ acked' = [acked EXCEPT ![p] = @ \cup NewlyAcked(b, part, log, old, target)]
       \* the cache's entry for its epoch now starts a run of records
       /\ epochEntry' = IF BatchFetches THEN [epochEntry EXCEPT ![b][p] = -1] ELSE epochEntry
       /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                      controllerVars, network, counters, flushed, tool, session, shutdownVars>>

\* Where follower b truncates to on the leader's diverging epoch and end offset `div`
\* (AbstractFetcherThread.getOffsetTruncationState): if its own cache holds that epoch, to the
\* lesser of the two end offsets; if not, to the end of its largest epoch below it, and it asks
\* again (KIP-279); if its cache has nothing that low, to the leader's offset.
TruncationOffset(b, p, div) ==
    LET leo == Len(replicaLog[b][p])
        own == EndOffsetFor(EpochCache(b, p), leo, div[1])
    IN IF own[2] = -1 THEN Min({div[2], leo})
       ELSE IF own[1] # div[1] THEN Min({own[2], leo})
       ELSE Min({own[2], div[2], leo})

\* Broker b's log of p truncated to offset k (UnifiedLog.truncateTo): its cache loses every entry
\* from there, the entry makeLeader assigned at the log's end with them; the high watermark and
\* the flush point come back to the log's end.
Truncates(b, p, k) ==
    /\ replicaLog' = [replicaLog EXCEPT ![b][p] = SubSeq(@, 1, k)]
    /\ epochEntry' = [epochEntry EXCEPT ![b][p] = -1]
    /\ highWatermark' = [highWatermark EXCEPT ![b][p] = Min({@, k})]
    /\ flushed' = IF PowerLoss THEN [flushed EXCEPT ![b][p] = Min({@, k})] ELSE flushed
    /\ <<replicaLog', epochEntry', highWatermark', flushed'>> # <<replicaLog, epochEntry, highWatermark, flushed>>
    /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                   controllerVars, network, counters, followerEnd, acked, produced, tool, session, shutdownVars>>

\* The follower takes the leader's high watermark hw, on a log that diverges from the leader's.
ExposesHighWatermark(b, p, hw) ==
    /\ hw # highWatermark[b][p]
    /\ highWatermark' = [highWatermark EXCEPT ![b][p] = hw]
    /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                   controllerVars, network, counters, replicaLog, followerEnd, acked, produced, flushed, epochEntry,
                   tool, session, shutdownVars>>

\* Leader b, knowing st of its followers, takes follower r into the ISR (Partition.isFollowerInSync
\* and isReplicaIsrEligible): r holds the high watermark and all since the leader's epoch began
\* (KAFKA-7128; under the mutant isr_join_below_epoch_start only the high watermark), and b's
\* metadata has it registered and unfenced, not shutting down (KIP-841).
JoinsIsr(b, p, st, r) ==
    /\ st.ends[r] >= highWatermark[b][p]
    /\ st.ends[r] >= st.start \/ Mutant = "isr_join_below_epoch_start"
    /\ BrokerView(b).brokerEpoch[r] > 0
    /\ ~BrokerView(b).fenced[r]
    /\ ~InControlledShutdown(r)
\* Leader b's AlterPartition proposing the ISR `members`: each member with its last fetch's broker
\* epoch (KIP-903; the leader itself, its own), and RECOVERED, which makeLeader set on taking the lead.
AlterPartitionMessage(b, p, part, st, members) ==
    [kind |-> "AlterPartition", broker |-> b, epoch |-> knownEpoch[b], partition |-> p,
     leaderEpoch |-> part.leaderEpoch, partitionEpoch |-> part.partitionEpoch,
     isr |-> [x \in members |-> IF x = b THEN knownEpoch[b] ELSE st.fetchEpochs[x]], recovering |-> FALSE]

\* The read: the leader records the fetch offset as the follower's log end offset, with its broker
\* epoch (KIP-903), tries to take it into the ISR before its high watermark moves
\* (Partition.updateFollowerFetchState: maybeExpandIsr), and may move its high watermark up; it
\* answers with the high watermark it had before (readRecords' initialHighWatermark) and the next
\* record batch (here one record), which the follower appends.
ReadsBatch(b, p, l) ==
    LET lpart == BrokerView(l).partition[p]
        mine == replicaLog[b][p]
        theirs == replicaLog[l][p]
        offset == Len(mine)
        st == [FollowerState(l, p, lpart) EXCEPT !.ends[b] = offset, !.fetchEpochs[b] = knownEpoch[b]]
        joins == b \notin lpart.isr /\ Room /\ ~AlterPartitionPending(l, p) /\ JoinsIsr(l, p, st, b)
        net == IF joins THEN BagAdd(network, AlterPartitionMessage(l, p, lpart, st, lpart.isr \cup {b}))
               ELSE network
        old == highWatermark[l][p]
        target == HwTarget(l, p, lpart, st, theirs, net)
        log == IF Len(theirs) > offset THEN Append(mine, theirs[offset + 1]) ELSE mine
    IN /\ network' = net
       /\ replicaLog' = [replicaLog EXCEPT ![b][p] = log]
       /\ highWatermark' = [highWatermark EXCEPT ![l][p] = NewHw(old, target), ![b][p] = Min({old, Len(log)})]
       /\ followerEnd' = [followerEnd EXCEPT ![l][p] = st]
       /\ acked' = [acked EXCEPT ![p] = @ \cup NewlyAcked(l, lpart, theirs, old, target)]
       \* appending past the cache's last entry replaces an entry no record followed
       /\ epochEntry' = IF Len(log) > offset THEN [epochEntry EXCEPT ![b][p] = -1] ELSE epochEntry
       /\ <<network', replicaLog', highWatermark', followerEnd', acked', epochEntry'>>
             # <<network, replicaLog, highWatermark, followerEnd, acked, epochEntry>>
       /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                      controllerVars, counters, produced, flushed, tool, session, shutdownVars>>

\* Fetch = "whole_log": the follower truncates by leader epoch and takes the rest, its high
\* watermark becomes the leader's, and the leader learns its log end offset and may move its high
\* watermark up.
FetchesWholeLog(b, p, l) ==
    LET lpart == BrokerView(l).partition[p]
        log == replicaLog[l][p]
        \* the fetch carries the follower's broker epoch, kept with its offset (KIP-903)
        st == [FollowerState(l, p, lpart) EXCEPT !.ends[b] = Len(log), !.fetchEpochs[b] = knownEpoch[b]]
        old == highWatermark[l][p]
        target == HwTarget(l, p, lpart, st, log, network)
    IN /\ replicaLog' = [replicaLog EXCEPT ![b][p] = log]
       /\ highWatermark' = [highWatermark EXCEPT ![l][p] = NewHw(old, target), ![b][p] = NewHw(old, target)]
       /\ followerEnd' = [followerEnd EXCEPT ![l][p] = st]
       /\ acked' = [acked EXCEPT ![p] = @ \cup NewlyAcked(l, lpart, log, old, target)]
       /\ <<replicaLog', highWatermark', followerEnd', acked'>> # <<replicaLog, highWatermark, followerEnd, acked>>
       \* truncation moves the flush point back to where the logs agree (Log.truncateTo); what
       \* the fetch appends is not flushed
       /\ flushed' = IF PowerLoss THEN [flushed EXCEPT ![b][p] = Min({@, Agreement(replicaLog[b][p], log)})]
                     ELSE flushed
       /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                      controllerVars, network, counters, produced, tool, session, shutdownVars, epochEntry>>

\* Fetch = "batch", Kafka's fetch protocol: the follower's fetch offset is its log end offset, its
\* last fetched epoch its cache's latest (AbstractFetcherThread); the leader checks that epoch
\* against its own cache (Partition.readRecords).  A leader that cannot place the epoch answers
\* OFFSET_OUT_OF_RANGE: the follower truncates to the leader's log end offset if its own is beyond
\* it, no epoch compared, and else fetches again as it was (fetchOffsetAndTruncate).  A diverging
\* epoch: the leader neither reads nor records the follower's position (KAFKA-13141), and the
\* follower truncates by it (the mutants: otherwise).
FetchesBatch(b, p, l) ==
    LET mine == replicaLog[b][p]
        theirs == replicaLog[l][p]
        lastFetched == LatestEpoch(b, p)
        div == EndOffsetFor(EpochCache(l, p), Len(theirs), lastFetched)
        hw == Min({highWatermark[l][p], Len(mine)})
    IN IF lastFetched = -1 THEN ReadsBatch(b, p, l)
       ELSE IF div[1] = -1 \/ div[2] = -1 THEN Len(theirs) < Len(mine) /\ Truncates(b, p, Len(theirs))
       ELSE IF div[1] >= lastFetched /\ div[2] >= Len(mine) THEN ReadsBatch(b, p, l)
       \* KIP-101's one truncation, to the lesser of the two end offsets, no epoch compared, then a read
       ELSE IF Mutant = "single_truncation"
       THEN IF Min({div[2], Len(mine)}) < Len(mine) THEN Truncates(b, p, Min({div[2], Len(mine)}))
            ELSE ReadsBatch(b, p, l)
       \* taken for an empty answer: the high watermark, and no truncation
       ELSE IF Mutant = "diverging_epoch_ignored" THEN ExposesHighWatermark(b, p, hw)
       \* processPartitionData before truncateOnFetchResponse: the high watermark first
       ELSE IF Mutant = "high_watermark_before_truncation" /\ hw # highWatermark[b][p]
       THEN ExposesHighWatermark(b, p, hw)
       ELSE Truncates(b, p, TruncationOffset(b, p, div))

\* Replica b fetches from the leader its metadata names, in that leader's epoch (the leader answers
\* only in the epoch it leads in: else FENCED_LEADER_EPOCH or NOT_LEADER).
FollowerFetches(b, p) ==
    LET l == BrokerView(b).partition[p].leader
    IN /\ DataPlane
       /\ BrokerView(b).partition[p] # NoPartition
       /\ b \in ReplicasOf(BrokerView(b).partition[p])
       /\ ReplicaReadable(b, p)
       /\ BrokerView(b).partition[p] # NoPartition
       /\ l # NoLeader
       /\ l # b
       /\ Leads(l, p)
       /\ BrokerView(l).partition[p].leaderEpoch = BrokerView(b).partition[p].leaderEpoch
       /\ IF BatchFetches THEN FetchesBatch(b, p, l) ELSE FetchesWholeLog(b, p, l)

\* Broker b applies the metadata that names it p's leader in a new leader epoch
\* (Partition.makeLeader; Fetch = "batch"): the epoch starts at its log end offset, it knows nothing
\* of its followers yet, it assigns the epoch from its log end offset in its leader-epoch cache, so
\* that a follower holding records of a later epoch than any record it has can truncate
\* (KAFKA-7415), and it moves its high watermark up as far as its ISR allows
\* (maybeIncrementLeaderHW).  Until then it acts as no leader.
LeaderStartsEpoch(b, p) ==
    LET part == BrokerView(b).partition[p]
        log == replicaLog[b][p]
        st == [leaderEpoch |-> part.leaderEpoch, start |-> Len(log), ends |-> [r \in Brokers |-> -1],
               fetchEpochs |-> [r \in Brokers |-> -1]]
        old == highWatermark[b][p]
        target == HwTarget(b, p, part, st, log, network)
    IN /\ BatchFetches
       /\ part # NoPartition
       /\ part.leader = b
       /\ ReplicaReadable(b, p)
       /\ followerEnd[b][p].leaderEpoch # part.leaderEpoch
       /\ followerEnd' = [followerEnd EXCEPT ![b][p] = st]
       \* LeaderEpochFileCache.assign: an entry at the log's end replaces one there before
       /\ epochEntry' = IF (log = <<>> \/ log[Len(log)] # part.leaderEpoch) /\ Mutant # "new_epoch_not_cached"
                        THEN [epochEntry EXCEPT ![b][p] = part.leaderEpoch] ELSE epochEntry
       /\ highWatermark' = [highWatermark EXCEPT ![b][p] = NewHw(old, target)]
       /\ acked' = [acked EXCEPT ![p] = @ \cup NewlyAcked(b, part, log, old, target)]
       /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                      controllerVars, network, counters, replicaLog, produced, flushed, tool, session, shutdownVars>>

\* Broker b's log of p reaches its disk up to its end (Kafka's log flusher, a segment roll, or
\* the OS writing its page cache back; the machine may run while the process is down): a later
\* power loss keeps it.  Not on a failed disk.
BrokerFlushesLog(b, p) ==
    /\ PowerLoss
    /\ flushed[b][p] # Len(replicaLog[b][p])
    /\ \E i \in MainSlots(b, p) : SlotOnline(b, i)
    /\ flushed' = [flushed EXCEPT ![b][p] = Len(replicaLog[b][p])]
    /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                   replicaLog, highWatermark, followerEnd, acked, produced, controllerVars, network, counters, tool,
                   session, shutdownVars, epochEntry>>

\* The leader asks the controller to take follower r out of the ISR (its log end offset is short
\* of the leader's) or into it (as it serves r's fetch: r holds the high watermark and all since
\* the epoch began, and is registered and unfenced, KIP-841), with its leader and partition
\* epochs and each member's broker epoch (KIP-903).  One AlterPartition per partition in flight.
LeaderSendsAlterPartition(b, p, r) ==
    LET view == BrokerView(b)
        part == view.partition[p]
        st == FollowerState(b, p, part)
        members == IF r \in part.isr THEN part.isr \ {r} ELSE part.isr \cup {r}
    IN /\ DataPlane
       /\ r # b
       /\ part # NoPartition
       /\ r \in ReplicasOf(part)
       /\ Room
       /\ Leads(b, p)
       /\ ~AlterPartitionPending(b, p)
       /\ IF r \in part.isr
          \* replica.lag.time.max.ms, abstracted: a follower still fetching from the leader
          \* catches up before its lag time runs out; one that cannot fetch falls out
          THEN st.ends[r] < Len(replicaLog[b][p]) /\ ~FetchingFrom(r, p, b, part.leaderEpoch)
          \* with Fetch = "batch" the leader tries an expansion in the fetch itself (ReadsBatch)
          ELSE /\ ~BatchFetches
               /\ FetchingFrom(r, p, b, part.leaderEpoch)
               /\ JoinsIsr(b, p, st, r)
       /\ network' = BagAdd(network, AlterPartitionMessage(b, p, part, st, members))
       /\ UNCHANGED <<brokerVars, controllerVars, counters, tool, session, shutdownVars>>

\* The leader applies an ISR the controller shrank and moves its high watermark up over it.
LeaderAdvancesHighWatermark(b, p) ==
    LET part == BrokerView(b).partition[p]
        st == FollowerState(b, p, part)
        old == highWatermark[b][p]
        target == HwTarget(b, p, part, st, replicaLog[b][p], network)
    IN /\ DataPlane
       /\ Leads(b, p)
       /\ target > old
       /\ highWatermark' = [highWatermark EXCEPT ![b][p] = target]
       /\ followerEnd' = [followerEnd EXCEPT ![b][p] = st]
       /\ acked' = [acked EXCEPT ![p] = @ \cup NewlyAcked(b, part, replicaLog[b][p], old, target)]
       /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                      controllerVars, network, counters, replicaLog, produced, flushed, tool, session, shutdownVars,
                      epochEntry>>

\* The answer ends the leader's pending change; a leader still leading in that epoch moves its
\* high watermark up over the ISR it has now (Partition.handleAlterPartitionUpdate).
BrokerReceivesAlterPartitionResponse(m) ==
    LET b == m.broker
        p == m.partition
        net == BagRemove(network, m)
        part == BrokerView(b).partition[p]
        st == FollowerState(b, p, part)
        old == highWatermark[b][p]
        target == HwTarget(b, p, part, st, replicaLog[b][p], net)
    IN /\ m.kind = "AlterPartitionResponse"
       /\ network' = net
       /\ IF Leads(b, p) /\ part.leaderEpoch = m.leaderEpoch
          THEN /\ highWatermark' = [highWatermark EXCEPT ![b][p] = NewHw(old, target)]
               /\ followerEnd' = [followerEnd EXCEPT ![b][p] = st]
               /\ acked' = [acked EXCEPT ![p] = @ \cup NewlyAcked(b, part, replicaLog[b][p], old, target)]
          ELSE UNCHANGED <<highWatermark, followerEnd, acked>>
       /\ UNCHANGED <<brokerStatus, incarnation, dirIds, dirState, logs, future, queued, knownEpoch, brokerImage,
                      controllerVars, counters, replicaLog, produced, flushed, tool, session, shutdownVars,
                      epochEntry>>

\* validateAlterPartitionData: the first check the request fails, in Kafka's order, or "NONE".
AlterPartitionError(m) ==
    LET part == partition[m.partition]
        proposed == DOMAIN m.isr
    IN IF m.leaderEpoch > part.leaderEpoch \/ m.partitionEpoch > part.partitionEpoch THEN "NOT_CONTROLLER"
       ELSE IF m.leaderEpoch < part.leaderEpoch THEN "FENCED_LEADER_EPOCH"
       ELSE IF m.broker # part.leader THEN "INVALID_REQUEST"
       ELSE IF m.partitionEpoch < part.partitionEpoch THEN "INVALID_UPDATE_VERSION"
       ELSE IF ~(proposed \subseteq ReplicasOf(part)) \/ part.leader \notin proposed THEN "INVALID_REQUEST"
       \* a leader still recovering from an unclean election is the ISR alone, and RECOVERED stays
       ELSE IF m.recovering /\ (Cardinality(proposed) > 1 \/ ~part.recovering) THEN "INVALID_REQUEST"
       ELSE IF \E r \in proposed : ~Registered(r) \/ InControlledShutdown(r) \/ (fenced[r] /\ Mutant # "fenced_replica_joins_isr")
                                   \/ (m.isr[r] # -1 /\ m.isr[r] # brokerEpoch[r]
                                       /\ Mutant # "alter_partition_stale_broker_epoch")
       THEN "INELIGIBLE_REPLICA"
       ELSE "NONE"

\* ReplicationControlManager.alterPartition: the broker epoch (a stale one fails the request:
\* nothing written, nothing answered), the checks, then the builder's record with the ISR asked
\* for, its election keeping the leader if still acceptable (else NEW_LEADER_ELECTED, the record
\* written all the same).
ControllerHandlesAlterPartition(m) ==
    LET b == m.broker
        p == m.partition
        net == BagRemove(network, m)
        error == AlterPartitionError(m)
        rec == IsrChangeRecord(partition[p], p, DOMAIN m.isr, ~m.recovering, brokerEpoch, fenced, onlineDirs)
        Answer(e) == [kind |-> "AlterPartitionResponse", broker |-> b, epoch |-> m.epoch, partition |-> p,
                      leaderEpoch |-> m.leaderEpoch, isr |-> DOMAIN m.isr, error |-> e]
    IN /\ m.kind = "AlterPartition"
       /\ IF ~EpochIsCurrent(b, m.epoch) /\ ~(Mutant = "skip_epoch_check" /\ Registered(b))
          THEN network' = net /\ UNCHANGED controllerVars
          ELSE IF error # "NONE"
          THEN /\ LogWrite(net, <<>>, Answer(error))
               /\ UNCHANGED <<brokerEpoch, fenced, onlineDirs, partition, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted>>
          ELSE /\ partition' = [partition EXCEPT ![p] = Merge(partition[p], rec)]
               /\ LogWrite(net, Written(<<PartitionChangeRec(p, rec)>>),
                           Answer(IF rec.leader \notin {NoLeaderChange, b} THEN "NEW_LEADER_ELECTED" ELSE "NONE"))
               /\ UNCHANGED <<brokerEpoch, fenced, onlineDirs, registeredIncarnation, metadataVersion, topicConfig, registeredCordons, reportedCordons, deleted>>
       /\ UNCHANGED <<brokerVarsButAcked, counters, tool, session, shutdownVars>> /\ GiveUp

-----------------------------------------------------------------------------
(* KIP-1275's recovery tool (kafka-unclean-recovery.sh), outside the cluster: it asks the      *)
(* replicas of an offline partition for their logs (GetReplicaLogInfo), then designates the     *)
(* replica with the highest leader epoch, then the longest log.  Any running broker answers,   *)
(* fenced ones too; an answer may be stale by the time it is used.  The tool retries failed     *)
(* elections until its deadline (its requests), and reports a partition back online.            *)

\* The operator sees p offline: leaderless in the published metadata (an admin client's view).
OfflineToOperator(p) == Published.partition[p] # NoPartition /\ Published.partition[p].leader = NoLeader
\* The tool may still send a request for p: it has requests left, has not settled p, and has
\* taken p up (or may now); once taken up, it keeps going whatever becomes of the partition.
ToolMaySend(p) ==
    /\ ToolOn
    /\ tool.requests < MaxToolRequests
    /\ tool.outcome[p] = "RUNNING"
    /\ tool.takenUp[p] = -1 => OfflineToOperator(p)   \* (not a disjunction: TLC would take each true one)
\* Broker b's answer: KIP-1275's PartitionLeaderEpoch (the partition's leader epoch in the
\* broker's metadata), or KIP-966's LastWrittenLeaderEpoch (its leader-epoch cache's latest,
\* UnifiedLog.latestEpoch: its log's last record's, or with Fetch = "batch" the entry a leader
\* assigned before it had a record; -1 if empty), and the log end offset.
ReplicaLogInfo(b, p) ==
    LET log == replicaLog[b][p]
    IN IF ToolEpoch = "last_written" THEN <<LatestEpoch(b, p), Len(log)>>
       ELSE <<BrokerView(b).partition[p].leaderEpoch, Len(log)>>
Answered(p) == {b \in ReplicasOf(partition[p]) : tool.answers[p][b] # <<>>}
ReplicaIndex(p, b) == CHOOSE k \in DOMAIN partition[p].replicas : partition[p].replicas[k] = b
\* b ranks at least as high as c: the higher epoch, then the longer log, then replica order.
RanksFirst(p, b, c) ==
    LET x == tool.answers[p][b]
        y == tool.answers[p][c]
    IN \/ x[1] > y[1]
       \/ x[1] = y[1] /\ x[2] > y[2]
       \/ x[1] = y[1] /\ x[2] = y[2] /\ ReplicaIndex(p, b) <= ReplicaIndex(p, c)
ToolChoice(p) == CHOOSE b \in Answered(p) : \A c \in Answered(p) : RanksFirst(p, b, c)

\* GetReplicaLogInfo to replica b of p, once: a running broker whose log is readable answers.
ToolAsksReplicaLogInfo(p, b) ==
    /\ b \in ReplicaSet(p)
    /\ ToolMaySend(p)
    /\ tool.answers[p][b] = <<>>
    /\ ReplicaReadable(b, p)
    /\ BrokerView(b).partition[p] # NoPartition
    /\ tool' = [tool EXCEPT !.answers[p][b] = ReplicaLogInfo(b, p), !.requests = @ + 1,
                            !.takenUp[p] = IF @ = -1 THEN Published.partition[p].leaderEpoch ELSE @]
    /\ UNCHANGED <<brokerVars, controllerVars, network, counters, session, shutdownVars>>

\* ElectLeaders DESIGNATED for the chosen replica: elected; or ELECTION_NOT_NEEDED for a
\* partition with a leader again, reported online; or refused, and the tool tries again while it
\* may.  With ToolEpochCheck the request carries the leader epoch the tool took p up in, and
\* the controller refuses it (FENCED_LEADER_EPOCH) once the partition's has moved on.
ToolElectsLeader(p) ==
    /\ ToolMaySend(p)
    /\ Answered(p) # {}
    /\ LET chosen == ToolChoice(p)
           stale == ToolEpochCheck /\ partition[p].leaderEpoch # tool.takenUp[p]
       IN IF ~stale /\ DesignatedElectionAllowed(p, chosen)
          THEN /\ DesignatedElection(p, chosen)
               /\ tool' = [tool EXCEPT !.outcome[p] = "ELECTED", !.requests = @ + 1]
          ELSE /\ tool' = [tool EXCEPT !.outcome[p] = IF partition[p].leader # NoLeader THEN "FOUND_ONLINE" ELSE @,
                                       !.requests = @ + 1]
               /\ UNCHANGED <<brokerVars, controllerVars, network, counters, session, shutdownVars>>

Next ==
    \/ \E b \in Brokers :
        \/ BrokerStarts(b)
        \/ BrokerSendsRegistration(b)
        \/ BrokerRefreshesRegistration(b)
        \/ BrokerCrashes(b)
        \/ BrokerLosesPower(b)
        \/ BrokerBeginsShutdown(b)
        \/ \E i \in Slots : BrokerFailsDir(b, i)
        \/ BrokerSendsHeartbeat(b)
        \/ \E p \in Partitions : BrokerConsumesMetadata(b, p)
        \/ \E p \in Partitions : BrokerSendsAssignment(b, p)
        \/ BrokerShutsDownOnDirFailureTimeout(b)
        \/ \E p \in Partitions, t \in Slots : BrokerStartsMove(b, p, t)
        \/ \E p \in Partitions : BrokerFutureCaughtUp(b, p)
        \/ \E p \in Partitions : BrokerSendsAlterReplicaState(b, p)
        \/ ControllerFencesExpiredBroker(b)
        \/ ControllerFencesSilentBroker(b)
    \/ \E p \in Partitions : ControllerCreatesPartition(p)
    \/ \E p \in Partitions : AdminDeletesTopic(p)
    \/ \E p \in Partitions, target \in ReassignmentTargets : AdminReassignsPartition(p, target)
    \/ \E p \in Partitions : AdminCancelsReassignment(p)
    \/ \E p \in Partitions, b \in Brokers : AdminElectsDesignatedLeader(p, b)
    \/ \E p \in Partitions : AdminElectsUncleanLeader(p)
    \/ ControllerElectsUncleanLeaders
    \/ AdminUpgradesMetadataVersion
    \/ \E v \in 1 .. ReplicationFactor : AdminAltersMinIsr(v)
    \/ AdminTogglesUncleanElection
    \/ \E p \in Partitions : AdminElectsPreferredLeader(p)
    \/ \E b \in Brokers, i \in Slots : AdminCordonsDir(b, i)
    \* Each delivery is an action of its own, so that TLC's -coverage counts each on its own.
    \/ \E m \in BagToSet(network) : ControllerHandlesRegistration(m)
    \/ \E m \in BagToSet(network) : ControllerHandlesRegistrationAfterSessionTimeout(m)
    \/ \E m \in BagToSet(network) : BrokerReceivesRegistrationResponse(m)
    \/ \E m \in BagToSet(network) : ControllerHandlesHeartbeat(m)
    \/ \E m \in BagToSet(network) : ControllerTimesOutHeartbeat(m)
    \/ \E m \in BagToSet(network) : BrokerReceivesHeartbeatResponse(m)
    \/ \E m \in BagToSet(network) : ControllerHandlesAssignment(m)
    \/ \E m \in BagToSet(network) : BrokerReceivesAssignmentResponse(m)
    \/ \E m \in BagToSet(network) : ControllerHandlesAlterReplicaState(m)
    \/ \E m \in BagToSet(network) : ControllerHandlesAlterPartition(m)
    \/ \E m \in BagToSet(network) : BrokerReceivesAlterPartitionResponse(m)
    \/ \E m \in BagToSet(network) : NetworkLosesMessage(m)
    \/ ControllerCommits
    \/ \E kept \in 0 .. Len(uncommitted) : ControllerFailsOver(kept)
    \/ \E b \in Brokers : BrokerLoadsMetadata(b)
    \/ \E b \in Brokers, p \in Partitions : LeaderStartsEpoch(b, p)
    \/ \E b \in Brokers, p \in Partitions : LeaderAppendsRecord(b, p)
    \/ \E b \in Brokers, p \in Partitions : FollowerFetches(b, p)
    \/ \E b \in Brokers, p \in Partitions, r \in Brokers : LeaderSendsAlterPartition(b, p, r)
    \/ \E b \in Brokers, p \in Partitions : LeaderAdvancesHighWatermark(b, p)
    \/ \E b \in Brokers, p \in Partitions : BrokerFlushesLog(b, p)
    \/ \E p \in Partitions, b \in Brokers : ToolAsksReplicaLogInfo(p, b)
    \/ \E p \in Partitions : ToolElectsLeader(p)

Spec == Init /\ [][Next]_vars

\* The fairness of the progress properties (model/progress.py says why each is realistic): the
\* broker's and the controller's duties, each per broker (and partition); a message's delivery
\* per the broker it is from or to.
DeliveryFor(b, A(_)) == \E m \in BagToSet(network) : m.broker = b /\ A(m)
ProgressFairness ==
    /\ \A b \in Brokers :
        /\ SF_vars(BrokerSendsRegistration(b))
        /\ WF_vars(DeliveryFor(b, BrokerReceivesRegistrationResponse))
        /\ SF_vars(BrokerSendsHeartbeat(b))
        /\ WF_vars(DeliveryFor(b, BrokerReceivesHeartbeatResponse))
        /\ \A p \in Partitions : WF_vars(BrokerConsumesMetadata(b, p))
        /\ \A p \in Partitions : SF_vars(BrokerSendsAssignment(b, p))
        /\ WF_vars(DeliveryFor(b, BrokerReceivesAssignmentResponse))
        /\ WF_vars(BrokerShutsDownOnDirFailureTimeout(b))
        /\ \A p \in Partitions : SF_vars(BrokerSendsAlterReplicaState(b, p))
        /\ WF_vars(BrokerLoadsMetadata(b))
        /\ SF_vars(DeliveryFor(b, ControllerHandlesRegistration))
        /\ SF_vars(DeliveryFor(b, ControllerHandlesHeartbeat))
        /\ SF_vars(ControllerFencesExpiredBroker(b))
        /\ SF_vars(DeliveryFor(b, ControllerHandlesAssignment))
        /\ SF_vars(DeliveryFor(b, ControllerHandlesAlterReplicaState))
        /\ SF_vars(DeliveryFor(b, ControllerHandlesAlterPartition))
        /\ WF_vars(DeliveryFor(b, BrokerReceivesAlterPartitionResponse))
    /\ SF_vars(ControllerElectsUncleanLeaders)
    /\ WF_vars(ControllerCommits)
    \* Kafka's fetch protocol: the leader's replica manager applies the metadata that makes it
    \* leader, and the follower's fetcher thread keeps fetching
    /\ BatchFetches => \A b \in Brokers, p \in Partitions :
                         WF_vars(LeaderStartsEpoch(b, p)) /\ WF_vars(FollowerFetches(b, p))

FairSpec == Spec /\ ProgressFairness

-----------------------------------------------------------------------------
(* Invariants *)

\* The active controller's state is what replaying the metadata log gives: the committed image
\* with the uncommitted batches replayed onto it (what a standby, or a controller taking over,
\* rebuilds).
ControllerStateIsReplayedLog ==
    LogOn => CurrentImage = Replay(committedImage, BatchRecords(uncommitted))

Created == {p \in Partitions : partition[p] # NoPartition}
\* In a step: the partitions there before it and after it (not deleted by it).
CreatedAndKept == {p \in Created : partition'[p] # NoPartition}

\* No replica's high watermark is beyond its log end offset.
HighWatermarkWithinLog ==
    DataPlane => \A b \in Brokers, p \in Partitions : highWatermark[b][p] <= Len(replicaLog[b][p])

\* Every record ever acknowledged is in the log of every broker that acts as the partition's
\* leader: one an election gave up, or a replaced disk took the last copy of, counts as lost.
CommittedRecordsSurvive ==
    DataPlane => \A p \in Partitions : \A b \in Brokers :
        Leads(b, p) => \A e \in acked[p] : Holds(replicaLog[b][p], e)

\* Every acknowledged record a broker acting as the partition's leader lacks was given up by a
\* declared loss (an election declaring itself unclean, or a replaced disk taking the last copy).
LossesDeclared ==
    DataPlane => \A p \in Partitions : \A b \in Brokers :
        Leads(b, p) => \A e \in acked[p] : e[4] = Kept => Holds(replicaLog[b][p], e)

\* The records acknowledged in a leader epoch were all acknowledged by one broker.
OneLeaderCommitsPerEpoch ==
    DataPlane => \A p \in Partitions : \A e, f \in acked[p] : e[2] = f[2] => e[3] = f[3]

\* Every ISR member running as the incarnation the controller registered, its log readable,
\* holds every record ever acknowledged (a clean election picks from the ISR; KIP-903).
IsrHoldsCommittedRecords ==
    DataPlane =>
        \A p \in Created : \A r \in partition[p].isr :
            (registeredIncarnation[r] = incarnation[r] /\ ReplicaReadable(r, p)) =>
                \A e \in acked[p] : Holds(replicaLog[r][p], e)

\* With ELR: no replica is both in the ISR and an eligible leader replica (KIP-966).
IsrElrDisjoint ==
    ElrEnabled => \A p \in Created : partition[p].isr \cap partition[p].elr = {}

\* With ELR: the ELR is empty while the ISR has min.insync.replicas members (KIP-966).
ElrOnlyBelowMinIsr ==
    ElrEnabled => \A p \in Created : Cardinality(partition[p].isr) >= MinIsrIn(topicConfig) => partition[p].elr = {}

\* KIP-1066: a registration's cordoned directories are those its broker last reported, or null
\* before its incarnation has reported any (KAFKA-20441).
RegistrationHoldsReportedCordons ==
    CordonsOn => \A b \in Brokers : Registered(b) /\ registeredCordons[b] # <<>> => registeredCordons[b] = reportedCordons[b]

\* No leader's replica is on a directory that is offline for its broker: clients would be
\* sent to a replica that cannot serve them (the reason KIP-858 exists).
LeaderOnOnlineDir ==
    \A p \in Created : LET l == partition[p].leader IN
        l # NoLeader => DirOnlineInMetadata(l, partition[p].dirs[l])

\* A fenced or unregistered broker leads nothing: nobody would notice it failing to serve.
FencedBrokerLeadsNothing ==
    \A p \in Created : LET l == partition[p].leader IN
        l # NoLeader => Registered(l) /\ ~fenced[l]

\* The leader is in the ISR: otherwise committed data could be lost on the next election.
LeaderInIsr ==
    \A p \in Created : partition[p].leader # NoLeader => partition[p].leader \in partition[p].isr

\* The ISR is a subset of the replica set, non-empty without ELR (KIP-966 lets an ISR shrink to
\* nothing, its members kept as eligible leader replicas).
IsrWithinReplicas ==
    \A p \in Created : (partition[p].isr # {} \/ ElrEnabled) /\ partition[p].isr \subseteq ReplicasOf(partition[p])

\* Every ISR member's replica is on an online directory, except the last member kept in the
\* ISR of a leaderless partition.
IsrOnOnlineDirs ==
    \A p \in Created :
        ~(partition[p].leader = NoLeader /\ Cardinality(partition[p].isr) = 1) =>
            \A r \in partition[p].isr : DirOnlineInMetadata(r, partition[p].dirs[r])

\* Every directory the controller holds offline for a broker's current incarnation failed in
\* that incarnation: a repaired broker is never marked offline by its own old request.  A
\* registration with no directories (an older broker, or below 3.7-IV2) holds none offline.
OfflineDirsReallyOffline ==
    \A b \in Brokers :
        (~Legacy(b) /\ onlineDirs[b] # {} /\ registeredIncarnation[b] = incarnation[b]) =>
            \A i \in Slots : dirIds[b][i] \notin onlineDirs[b] => SlotFailed(b, i)

\* No disk and no registered directory carries a reserved UUID; in metadata reserved values
\* appear only as the UNASSIGNED/LOST/MIGRATING markers.
ReservedUUIDsNeverReal ==
    /\ \A b \in Brokers : \A i \in Slots : ~IsReserved(dirIds[b][i])
    /\ \A b \in Brokers : \A d \in onlineDirs[b] : ~IsReserved(d)
    /\ \A p \in Created : \A r \in ReplicasOf(partition[p]) : partition[p].dirs[r] # RESERVED3

\* On a broker, a replica lives in at most one online directory, and a future replica in
\* another one: two live copies would diverge.
OneDirPerReplica ==
    \A b \in Brokers, p \in Partitions :
        LET online == {i \in MainSlots(b, p) : SlotOnline(b, i)} IN
        /\ Cardinality(online) <= 1
        /\ future[b][p] \notin online

\* A replica whose log is on a failed disk is not recreated in another directory (KAFKA-16234).
NoReplicaRecreatedElsewhere ==
    \A b \in Brokers, p \in Partitions :
        ~((\E i \in MainSlots(b, p) : SlotFailed(b, i)) /\ (\E i \in MainSlots(b, p) : SlotOnline(b, i)))

\* A partition is leaderless only when no ISR replica (with ELR and an empty ISR: no eligible
\* leader replica) is acceptable as leader.
ElectedWhenPossible ==
    \A p \in Created : partition[p].leader = NoLeader =>
        \* an election looks at the replicas only (an ELR may keep a broker a reassignment removed)
        \A r \in (IF partition[p].isr # {} \/ ~ElrEnabled THEN partition[p].isr ELSE partition[p].elr)
                 \cap ReplicasOf(partition[p]) :
            ~(Active(r) /\ DirOnlineInMetadata(r, partition[p].dirs[r]))

\* When metadata puts a replica in a directory that failed while its log is safe in an online
\* one, the running broker has the correcting assignment queued (KAFKA-16297).
FailedMoveReverted ==
    \A b \in Brokers, p \in Created :
        (brokerStatus[b] = "RUNNING" /\ b \in ReplicasOf(partition[p]) /\ queued[b][p] = NONE) =>
            LET md == partition[p].dirs[b]
                named == {i \in Slots : dirIds[b][i] = md}
            IN (named # {} /\ SlotFailed(b, Min(named))) =>
                   ~(\E i \in MainSlots(b, p) : SlotOnline(b, i))

\* Once the controller has acknowledged a directory failure, the broker (in the registered
\* incarnation) leads no replica whose log is on that disk, unless the assignment that tells the
\* controller where the replica is is still on its way (KIP-858; the reason for LOST).
AcknowledgedFailureLeadsNothing ==
    \A p \in Created : LET b == partition[p].leader IN
        (/\ b # NoLeader
         /\ Alive(b)
         /\ queued[b][p] = NONE)
        => \A i \in Slots : ~(dirState[b][i] = "FAILED_ACKED" /\ p \in logs[b][i])

-----------------------------------------------------------------------------
(* Step properties, checked as [][P]_vars (TLC: PROPERTY) *)

\* A heartbeat, AssignReplicasToDirs or AlterReplicaState whose broker epoch is not the
\* broker's registered one writes nothing and answers nothing (KIP-589).
StaleEpochChangesNothing ==
    \A m \in BagToSet(network) :
        (/\ m.kind \in {"Heartbeat", "Assign", "AlterReplicaState", "AlterPartition"}
         /\ ~EpochIsCurrent(m.broker, m.epoch)
         /\ \/ ControllerHandlesHeartbeat(m)
            \/ ControllerHandlesAssignment(m)
            \/ ControllerHandlesAlterReplicaState(m)
            \/ ControllerHandlesAlterPartition(m))
        => UNCHANGED controllerVars /\ network' = BagRemove(network, m)

\* Broker, leader and partition epochs never go back, in the metadata brokers read (a failover
\* drops uncommitted changes, which nobody outside the controller has seen).
EpochsNeverDecrease ==
    LET now == Published
        next == Published'
    IN
    /\ \A b \in Brokers : next.brokerEpoch[b] >= now.brokerEpoch[b] /\ incarnation'[b] >= incarnation[b]
    \* (a topic deleted has no epochs left)
    /\ \A p \in Partitions : (now.partition[p] # NoPartition /\ ~(TopicDeletion /\ next.deleted[p])) =>
        /\ next.partition[p] # NoPartition
        /\ next.partition[p].leaderEpoch >= now.partition[p].leaderEpoch
        /\ next.partition[p].partitionEpoch >= now.partition[p].partitionEpoch

\* A heartbeat changes leader/ISR only of partitions whose sender's replica is in a directory
\* the heartbeat took offline, and only by removing the sender; or, when it unfences the
\* sender, elects leaders of leaderless partitions; or, when it fences the sender or the sender
\* asks to shut down (a controlled shutdown, or a shutdown at once), only by removing the sender.
UpdatesOnlyOfflinePartitions ==
    \A m \in BagToSet(network) :
        (m.kind = "Heartbeat" /\ ControllerHandlesHeartbeat(m)) =>
            LET b == m.broker IN
            \A p \in CreatedAndKept :
                (<<partition[p].leader, partition[p].isr>> # <<partition'[p].leader, partition'[p].isr>>) =>
                    \/ /\ b \in ReplicasOf(partition[p])
                       /\ \/ partition[p].dirs[b] \in onlineDirs[b] /\ partition[p].dirs[b] \notin onlineDirs'[b]
                          \* it fences the sender, or the sender asks to shut down
                          \/ ~fenced[b] /\ fenced'[b]
                          \/ m.wantShutDown
                       /\ partition[p].isr \ {b} \subseteq partition'[p].isr
                    \/ /\ fenced[b] /\ ~fenced'[b]
                       /\ partition[p].leader = NoLeader
                       /\ \/ partition'[p].isr = partition[p].isr
                          \* an election from the ELR, of the last known leader (KIP-966) or an
                          \* unclean one makes its leader the ISR alone
                          \/ LET c == partition'[p] IN
                             /\ c.leader # NoLeader /\ c.isr = {c.leader}
                             /\ \/ ElrEnabled /\ c.leader \in partition[p].isr \cup partition[p].elr \cup partition[p].lastKnownElr
                                \/ UncleanIn(topicConfig)

\* A broker that registered directories is never unfenced while metadata holds one of its
\* replicas as UNASSIGNED (KIP-858).
FencedUntilAssigned ==
    LET now == Published
        next == Published'
    IN
    \A b \in Brokers :
        (now.fenced[b] /\ ~next.fenced[b] /\ next.onlineDirs[b] # {}) =>
            \A p \in Partitions :
                (next.partition[p] # NoPartition /\ b \in ReplicasOf(next.partition[p])) => next.partition[p].dirs[b] # UNASSIGNED

\* A designated election (KIP-1275), an operator's or the recovery tool's, happens only for a
\* leaderless partition and elects a replica in the replica set that is unfenced and on an
\* online directory.
DesignatedSafely(p, b) ==
    /\ partition[p].leader = NoLeader
    /\ Registered(b) /\ ~fenced[b]
    /\ DirOnlineInMetadata(b, partition[p].dirs[b])
DesignatedElectionSafe ==
    /\ \A p \in Partitions, b \in Brokers : AdminElectsDesignatedLeader(p, b) => DesignatedSafely(p, b)
    /\ ToolOn => \A p \in Partitions :
           (tool.outcome[p] = "RUNNING" /\ tool'.outcome[p] = "ELECTED") => DesignatedSafely(p, partition'[p].leader)

\* Can a leader be RECOVERING?  Only an unclean, last-known-leader or designated election makes
\* one, and the state is kept with the data plane only.
TracksRecovery == DataPlane /\ (ElrEnabled \/ DesignatedEnabled \/ UncleanElection # "off" \/ MaxUncleanToggles > 0 \/ ToolOn)

\* A new leader comes from the ISR (or the ISR the leader's AlterPartition asks for), or from the
\* ELR, and then as the ISR alone: the ISR was empty (KIP-966).  Any other election is unclean,
\* and happens only where an operator or the settings allow one (a designated election, an
\* admin's unclean election, the topic's unclean.leader.election.enable); with the data plane
\* its leader is RECOVERING (KIP-704).  A failover's reverting is no election.
CleanLeaderFromIsrOrElr ==
    failoversDone' = failoversDone =>
        \A p \in CreatedAndKept :
            LET a == partition[p]
                c == partition'[p]
                asked == UNION {DOMAIN m.isr : m \in {m \in BagToSet(network) :
                                   m.kind = "AlterPartition" /\ m.partition = p /\ ControllerHandlesAlterPartition(m)}}
            IN (/\ c.leader \notin {NoLeader, a.leader}
                /\ c.leader \notin a.isr \cup asked
                /\ ~(c.leader \in a.elr /\ c.isr = {c.leader}))
               => /\ \/ UncleanIn(topicConfig)
                     \/ AdminElectsDesignatedLeader(p, c.leader)
                     \/ ToolElectsLeader(p)
                     \/ AdminElectsUncleanLeader(p)
                  /\ TracksRecovery => c.recovering

\* The step registers a new incarnation of r whose last one shut down cleanly: its request's
\* previousBrokerEpoch, read from the broker's clean-shutdown files, is the registered epoch.
CleanReregistration(r) ==
    /\ Registered(r)
    /\ \E m \in BagToSet(network) : /\ m.kind = "Register" /\ m.broker = r
                                   /\ m.incarnation = registeredIncarnation'[r]
                                   /\ m.previousBrokerEpoch = brokerEpoch[r]
\* With ELR, a replica leaves the eligible leader replicas only by joining the ISR, when the ISR
\* is back at min.insync.replicas, when its broker registers a new incarnation after an unclean
\* shutdown, when an election replaces the leader and clears them, or when min.insync.replicas
\* changes, under which they were chosen (KIP-966: a clean shutdown loses nothing).  A failover's
\* reverting is no change.
ElrLeftOnlyForCause ==
    (ElrEnabled /\ failoversDone' = failoversDone /\ MinIsrIn(topicConfig') = MinIsrIn(topicConfig)) =>
        \A p \in CreatedAndKept :
            LET a == partition[p]
                c == partition'[p]
            \* the controller's min.insync.replicas: no more than the replicas the partition had
            \* (getTopicEffectiveMinIsr); a broker a reassignment took out of the replicas may leave
            IN (Cardinality(c.isr) < Min({MinIsrIn(topicConfig'), Len(a.replicas)}) /\ c.leader \in {NoLeader, a.leader}) =>
                   \A r \in (a.elr \ (c.elr \cup c.isr)) \cap ReplicasOf(c) :
                       registeredIncarnation'[r] # registeredIncarnation[r] /\ ~CleanReregistration(r)

\* A replica joins the ISR through AlterPartition only with the broker epoch of the incarnation
\* the controller has registered (KIP-903).
IsrJoinsFromCurrentIncarnation ==
    \A m \in BagToSet(network) :
        (m.kind = "AlterPartition" /\ ControllerHandlesAlterPartition(m)) =>
            \A r \in (partition'[m.partition].isr \ partition[m.partition].isr) \cap DOMAIN m.isr :
                m.isr[r] = brokerEpoch[r]

\* A replica joins the ISR through AlterPartition only while its broker is registered and
\* unfenced (KIP-841): it may have been fenced since its leader asked (KAFKA-13916).
IsrJoinsOnlyUnfenced ==
    \A m \in BagToSet(network) :
        (m.kind = "AlterPartition" /\ ControllerHandlesAlterPartition(m)) =>
            \A r \in partition'[m.partition].isr \ partition[m.partition].isr : Registered(r) /\ ~fenced[r]

\* Below metadata version 3.6-IV0 a partition change that takes a member out of the ISR bumps the
\* leader epoch: the brokers' replica manager of those versions fences the fetchers of replicas
\* out of the ISR by the leader epoch alone (KAFKA-15021).  A failover's reverting is no change.
LeaderEpochBumpedOnIsrShrink ==
    (metadataVersion = "3.5-IV2" /\ failoversDone' = failoversDone) =>
        \A p \in CreatedAndKept :
            ~(partition[p].isr \subseteq partition'[p].isr) => partition'[p].leaderEpoch > partition[p].leaderEpoch

\* A broker's registered epoch changes only when a new incarnation registers (KAFKA-16952).
BrokerEpochOnlyForNewIncarnation ==
    \A b \in Brokers : brokerEpoch'[b] # brokerEpoch[b] => registeredIncarnation'[b] # registeredIncarnation[b]

\* When the recovery tool elects, the replica it designates holds every acknowledged record that
\* some replica it heard from holds, those an earlier election gave up too (KIP-1275: the tool is
\* to lose as little as possible).
RecoveryToolKeepsCommitted ==
    ToolOn =>
        \A p \in Partitions :
            (tool.outcome[p] = "RUNNING" /\ tool'.outcome[p] = "ELECTED")
                => \A e \in acked[p] : (\E b \in Answered(p) : Holds(replicaLog[b][p], e))
                                        => Holds(replicaLog[partition'[p].leader][p], e)

\* KIP-1066: a new partition places no replica on a broker whose every online directory it has
\* reported cordoned, in the last heartbeat the controller handled from it (the KIP keeps cordons in
\* the metadata log so that an offline broker's are still there when partitions are placed).
PlacementHonoursReportedCordons ==
    CordonsOn =>
        \A p \in Partitions :
            (partition[p] = NoPartition /\ partition'[p] # NoPartition) =>
                \A r \in ReplicasOf(partition'[p]) :
                    ~(reportedCordons[r] # <<>> /\ onlineDirs[r] # {} /\ onlineDirs[r] \subseteq reportedCordons[r][1])

\* KIP-1066: a broker places a new replica in a directory its cordoned.log.dirs names only when
\* every one of its online directories is cordoned, or only one is online.
NewReplicasAvoidCordonedDirs ==
    CordonsOn =>
        \A b \in Brokers, p \in Partitions :
            (/\ cordoned[b] # {}
             /\ Cardinality(OnlineSlots(b)) > 1
             /\ ~(OnlineSlots(b) \subseteq cordoned[b])
             /\ \A i \in Slots : p \notin logs[b][i])
                => \A i \in cordoned[b] : p \notin logs'[b][i]

\* Broker b's metadata names another broker p's leader: b follows it.
Follows(b, p) == BrokerView(b).partition[p] # NoPartition /\ BrokerView(b).partition[p].leader \notin {NoLeader, b}
FollowedLog(b, p) == replicaLog'[BrokerView(b).partition[p].leader][p]
\* A follower's high watermark moves up only over records its leader's log holds: a reader of the
\* follower (KIP-392) sees nothing the leader does not have (KAFKA-14704: a diverging epoch's
\* truncation comes before the high watermark; KAFKA-10554: the truncation is made).
FetchExposesOnlyLeaderRecords ==
    DataPlane =>
        \A b \in Brokers, p \in Partitions :
            (Follows(b, p) /\ highWatermark'[b][p] > highWatermark[b][p])
                => Agreement(replicaLog'[b][p], FollowedLog(b, p)) >= highWatermark'[b][p]
\* Records a follower takes leave its log a prefix of its leader's: it truncates by leader epoch
\* until its log agrees with the leader's before it takes anything (KIP-101, KIP-279).
FetchAppendsOnlyToLeaderPrefix ==
    DataPlane =>
        \A b \in Brokers, p \in Partitions :
            (Follows(b, p) /\ Agreement(replicaLog[b][p], replicaLog'[b][p]) < Len(replicaLog'[b][p]))
                => Agreement(replicaLog'[b][p], FollowedLog(b, p)) = Len(replicaLog'[b][p])

StaleEpochChangesNothingProp == [][StaleEpochChangesNothing]_vars
EpochsNeverDecreaseProp == [][EpochsNeverDecrease]_vars
UpdatesOnlyOfflinePartitionsProp == [][UpdatesOnlyOfflinePartitions]_vars
FencedUntilAssignedProp == [][FencedUntilAssigned]_vars
DesignatedElectionSafeProp == [][DesignatedElectionSafe]_vars
BrokerEpochOnlyForNewIncarnationProp == [][BrokerEpochOnlyForNewIncarnation]_vars
CleanLeaderFromIsrOrElrProp == [][CleanLeaderFromIsrOrElr]_vars
IsrJoinsFromCurrentIncarnationProp == [][IsrJoinsFromCurrentIncarnation]_vars
IsrJoinsOnlyUnfencedProp == [][IsrJoinsOnlyUnfenced]_vars
ElrLeftOnlyForCauseProp == [][ElrLeftOnlyForCause]_vars
RecoveryToolKeepsCommittedProp == [][RecoveryToolKeepsCommitted]_vars
LeaderEpochBumpedOnIsrShrinkProp == [][LeaderEpochBumpedOnIsrShrink]_vars
PlacementHonoursReportedCordonsProp == [][PlacementHonoursReportedCordons]_vars
NewReplicasAvoidCordonedDirsProp == [][NewReplicasAvoidCordonedDirs]_vars
FetchExposesOnlyLeaderRecordsProp == [][FetchExposesOnlyLeaderRecords]_vars
FetchAppendsOnlyToLeaderPrefixProp == [][FetchAppendsOnlyToLeaderPrefix]_vars

-----------------------------------------------------------------------------
(* Progress (model/progress.py): a situation that needs someone to act does not last for ever *)

\* A running broker leads partition p from a failed directory (its log only on failed disks).
LeadsFromFailedDir(p) ==
    /\ partition[p] # NoPartition
    /\ partition[p].leader # NoLeader
    /\ LET b == partition[p].leader
       IN Alive(b) /\ MainSlots(b, p) # {} /\ \A i \in MainSlots(b, p) : dirState[b][i] # "HEALTHY"
RunningButFenced(b) == brokerStatus[b] = "RUNNING" /\ fenced[b]
AssignmentPending(b, p) == brokerStatus[b] = "RUNNING" /\ queued[b][p] # NONE
\* A leaderless partition with an acceptable candidate: an ISR member, an ELR member when the ISR
\* is empty, any replica with the topic's unclean elections.
LeaderlessWithCandidate(p) ==
    /\ partition[p] # NoPartition
    /\ partition[p].leader = NoLeader
    /\ \E r \in IF UncleanIn(topicConfig) THEN ReplicasOf(partition[p])
                ELSE (IF partition[p].isr # {} \/ ~ElrEnabled THEN partition[p].isr ELSE partition[p].elr)
                     \cap ReplicasOf(partition[p]) :
           Registered(r) /\ ~fenced[r] /\ DirOnlineInMetadata(r, partition[p].dirs[r])
FailureUnacknowledged(b) == brokerStatus[b] = "RUNNING" /\ \E i \in Slots : dirState[b][i] = "FAILED"
\* A registered incarnation the controller holds unfenced that no longer runs.
DeadButUnfenced(b) == Registered(b) /\ ~fenced[b] /\ ~Alive(b)
\* Fetch = "batch": follower b can fetch p from the leader its metadata names, in that leader's
\* epoch, and its log is not a prefix of the leader's.
FollowerDiverged(b, p) ==
    /\ BrokerView(b).partition[p] # NoPartition
    /\ b \in ReplicasOf(BrokerView(b).partition[p])
    /\ ReplicaReadable(b, p)
    /\ Follows(b, p)
    /\ LET l == BrokerView(b).partition[p].leader
       IN /\ Leads(l, p)
          /\ BrokerView(l).partition[p].leaderEpoch = BrokerView(b).partition[p].leaderEpoch
          /\ Agreement(replicaLog[b][p], replicaLog[l][p]) < Len(replicaLog[b][p])

FailedDirLeadershipsMove == \A p \in Partitions : LeadsFromFailedDir(p) ~> ~LeadsFromFailedDir(p)
RunningBrokerUnfenced == \A b \in Brokers : RunningButFenced(b) ~> ~RunningButFenced(b)
AssignmentSettled == \A b \in Brokers, p \in Partitions : AssignmentPending(b, p) ~> ~AssignmentPending(b, p)
LeaderlessPartitionElected == \A p \in Partitions : LeaderlessWithCandidate(p) ~> ~LeaderlessWithCandidate(p)
ReportedFailureSettled == \A b \in Brokers : FailureUnacknowledged(b) ~> ~FailureUnacknowledged(b)
DeadBrokerFenced == \A b \in Brokers : DeadButUnfenced(b) ~> ~DeadButUnfenced(b)
DivergedFollowerTruncates == \A b \in Brokers, p \in Partitions : FollowerDiverged(b, p) ~> ~FollowerDiverged(b, p)

=============================================================================
