"""KRaft controller, brokers and log directories (KIP-858 JBOD, KIP-589, KIP-1275), TLA+-style.

Every action is one method named like its TLA+ operator in ``spec/KRaftJBOD.tla``: a guard,
then the new state, everything else unchanged.  A method returns the next state, or
``None`` when its guard is false.  The actions are split by role: the brokers' in
``broker.py``, the controller's handlers and the administrator's in ``controller.py``, the
data plane's in ``data.py``, the network's in ``network.py``; records and their replay in
``records.py``, the shared operators in ``operators.py``, invariants and step properties in
``invariants.py``, the state's layout in ``state.py``.  This module puts them together: the constants, Init, Next, and what a
trace shows.
"""

from __future__ import annotations

from itertools import permutations

from .broker import BrokerActions
from .config import Settings
from .controller import ControllerHandlers
from .data import DataPlaneActions
from .invariants import Invariants
from .mutants import CAUGHT_AT, MUTANTS
from .network import DELIVERY_ACTION, NetworkActions, message_label
from .operators import Operators
from .picture import picture
from .progress import Progress
from .tool import RecoveryToolActions
from .records import Records, record_label
from .rules import KafkaRules
from .sequence import sequence
from .state import (
    AWAITED_HEARTBEATS, CLEAN_SHUTDOWNS, CLEAN_SHUTDOWN_EPOCH, IN_CONTROLLED_SHUTDOWN, WANT_SHUTDOWN, RUNNING_TOOL, SESSION, SESSIONS_EXPIRED, TOOL, TOOL_OUTCOME_NAMES, ACKED, ACTIONS, ELR, LAST_KNOWN_ELR, RECOVERING, REPLICAS, REMOVING, ADDING, BROKER_EPOCH, BROKER_IMAGE, FLUSHED, FOLLOWER_END, HIGH_WATERMARK, PRODUCED, REPLICA_LOG, COMMITTED_IMAGE, DIRS, DIR_FAILURES, DIR_IDS, DIR_STATE, DIR_STATE_NAMES,
    FAILOVERS_DONE, FUTURE, HEALTHY, HEARTBEAT, INCARNATION, ISR, KNOWN_EPOCH, LEADER, LEADER_EPOCH,
    LOGS, LOST_MESSAGES, METADATA_VERSION, METADATA_VERSION_NAMES, MOVES_STARTED,
    NETWORK, NEXT_UUID, NONE, OFF, ONLINE_DIRS, PARTITION_EPOCH, QUEUED, REGISTER,
    REGISTERED_INCARNATION, REPAIRED, REPLACED, RUNNING, STARTING, STATUS, STATUS_NAMES, UNCOMMITTED,
    describe_loss, dir_name, CONFIG_CHANGES, TOPIC_CONFIG, CORDONED, CORDON_CHANGES, REPORTED_CORDONS, EPOCH_ENTRY, DELETED, REASSIGNMENTS_MADE,
)
from .uuids import FIRST_REAL, uuid_name


class KRaftJBOD(BrokerActions, ControllerHandlers, DataPlaneActions, RecoveryToolActions, NetworkActions, Records, Invariants,
                Progress, Operators):
    """The model: constants from the settings, Init, Next as named actions, invariants."""

    def __init__(self, settings: Settings):
        self.settings = st = settings
        self.mutant = st.mutant
        self.brokers = tuple(range(st.brokers))
        self.slots = tuple(range(st.dirs_per_broker))
        self.partitions = tuple(range(st.partitions))
        # A fixed replica assignment: partition p on brokers p, p+1, ... (mod brokers); the
        # first replica is the preferred leader.
        self.replicas = tuple(tuple((p + i) % st.brokers for i in range(st.replication_factor)) for p in self.partitions)
        # AdminReassignsPartition's targets: every list of distinct brokers, one to replication_factor long
        self.reassignment_targets = tuple(t for k in range(1, st.replication_factor + 1)
                                          for t in permutations(self.brokers, k)) if st.reassignments else ()
        self.legacy = tuple(b < st.legacy_brokers for b in self.brokers)
        self.actions = list(ACTIONS)
        self.mutants = dict(MUTANTS)
        # the shipped config that catches each (``kraftcheck list`` shows it)
        self.mutant_configs = {name: f"spec/configs/{config}.toml" for name, config in CAUGHT_AT.items()}
        # The variables that few steps change: one of them changes in 13.7% of the default
        # config's transitions (``locality`` in checker/protocol.py).
        self.locality = (INCARNATION, DIR_STATE, LOGS, BROKER_EPOCH, ONLINE_DIRS, REGISTERED_INCARNATION, METADATA_VERSION)
        self.code = st.semantics == "code"
        self.rules = KafkaRules.of(st.kafka_release)
        self.invariants = {
            "LeaderOnOnlineDir": self.LeaderOnOnlineDir,
            "FencedBrokerLeadsNothing": self.FencedBrokerLeadsNothing,
            "LeaderInIsr": self.LeaderInIsr,
            "IsrWithinReplicas": self.IsrWithinReplicas,
            "IsrOnOnlineDirs": self.IsrOnOnlineDirs,
            "OfflineDirsReallyOffline": self.OfflineDirsReallyOffline,
            "ReservedUUIDsNeverReal": self.ReservedUUIDsNeverReal,
            "OneDirPerReplica": self.OneDirPerReplica,
            "NoReplicaRecreatedElsewhere": self.NoReplicaRecreatedElsewhere,
            "ElectedWhenPossible": self.ElectedWhenPossible,
            "FailedMoveReverted": self.FailedMoveReverted,
            "AcknowledgedFailureLeadsNothing": self.AcknowledgedFailureLeadsNothing,
            "ControllerStateIsReplayedLog": self.ControllerStateIsReplayedLog,
            "HighWatermarkWithinLog": self.HighWatermarkWithinLog,
            "CommittedRecordsSurvive": self.CommittedRecordsSurvive,
            "OneLeaderCommitsPerEpoch": self.OneLeaderCommitsPerEpoch,
            "IsrHoldsCommittedRecords": self.IsrHoldsCommittedRecords,
            "LossesDeclared": self.LossesDeclared,
            "IsrElrDisjoint": self.IsrElrDisjoint,
            "ElrOnlyBelowMinIsr": self.ElrOnlyBelowMinIsr,
            "RegistrationHoldsReportedCordons": self.RegistrationHoldsReportedCordons,
        }
        if st.progress:
            self.temporal_properties = self.progress_properties()
            self.fairness = self.progress_fairness()
        # The traces' picture of a state (model/picture.py) and their message sequence chart
        # (model/sequence.py), drawn from ``describe``'s output.
        self.picture = picture
        self.sequence = sequence
        self.action_invariants = {
            "StaleEpochChangesNothing": self.StaleEpochChangesNothing,
            "EpochsNeverDecrease": self.EpochsNeverDecrease,
            "UpdatesOnlyOfflinePartitions": self.UpdatesOnlyOfflinePartitions,
            "FencedUntilAssigned": self.FencedUntilAssigned,
            "DesignatedElectionSafe": self.DesignatedElectionSafe,
            "BrokerEpochOnlyForNewIncarnation": self.BrokerEpochOnlyForNewIncarnation,
            "CleanLeaderFromIsrOrElr": self.CleanLeaderFromIsrOrElr,
            "IsrJoinsFromCurrentIncarnation": self.IsrJoinsFromCurrentIncarnation,
            "IsrJoinsOnlyUnfenced": self.IsrJoinsOnlyUnfenced,
            "ElrLeftOnlyForCause": self.ElrLeftOnlyForCause,
            "RecoveryToolKeepsCommitted": self.RecoveryToolKeepsCommitted,
            "LeaderEpochBumpedOnIsrShrink": self.LeaderEpochBumpedOnIsrShrink,
            "PlacementHonoursReportedCordons": self.PlacementHonoursReportedCordons,
            "NewReplicasAvoidCordonedDirs": self.NewReplicasAvoidCordonedDirs,
            "FetchExposesOnlyLeaderRecords": self.FetchExposesOnlyLeaderRecords,
            "FetchAppendsOnlyToLeaderPrefix": self.FetchAppendsOnlyToLeaderPrefix,
        }

    # -----------------------------------------------------------------------------------------
    # Init
    # -----------------------------------------------------------------------------------------
    def init_states(self):
        """Every broker formatted (distinct real UUIDs) and off; no registration, no partition."""
        st = self.settings
        nb, nd, npart = st.brokers, st.dirs_per_broker, st.partitions
        dir_ids = tuple(tuple(FIRST_REAL + b * nd + i for i in self.slots) for b in self.brokers)
        state = (
            (OFF,) * nb,
            (0,) * nb,
            dir_ids,
            ((HEALTHY,) * nd,) * nb,
            (((),) * nd,) * nb,
            ((NONE,) * npart,) * nb,
            ((NONE,) * npart,) * nb,
            (0,) * nb,
            (True,) * nb,
            ((),) * nb,
            (None,) * npart,
            (),
            FIRST_REAL + nb * nd,
            0,
            0,
            0,
            (0,) * nb,
            (0,) * nb,
            METADATA_VERSION_NAMES.index(st.metadata_version),
            (),
            (),
            0,
            (),
            (),
            (),
            (),
            (),
            0,
            (),
            (),
            (),
            0,
            (),
            (),
            (),
            (),
            0,
            (),
            (),
            (),
            (),
            (),
            0,
            (),
            (),
            0,
        )
        if self.data_plane:
            # every replica's log empty; no leader has heard from a follower yet
            state = self._with(
                state,
                replicaLog=(((),) * npart,) * nb,
                highWatermark=((0,) * npart,) * nb,
                followerEnd=((self.no_follower_state,) * npart,) * nb,
                acked=((),) * npart,
            )
        if self.batch_fetches:
            # every leader-epoch cache empty
            state = self._with(state, epochEntry=((-1,) * npart,) * nb)
        if st.power_loss:
            # nothing written, nothing to flush
            state = self._with(state, flushed=((0,) * npart,) * nb)
        if st.recovery_tool:
            # the tool has heard from nobody and elected nothing
            state = self._with(state, tool=((((),) * nb,) * npart, (RUNNING_TOOL,) * npart, 0, (-1,) * npart))
        if st.dynamic_configs:
            # the topic's configs as the settings give them; none altered yet
            state = self._with(state, topicConfig=(st.min_isr, st.unclean_election == "topic"), configChanges=(0, 0))
        if st.cordons:
            # nothing cordoned, nothing reported
            state = self._with(state, cordoned=((),) * nb, registeredCordons=((),) * nb, reportedCordons=((),) * nb)
        if st.topic_deletion:
            # no topic deleted
            state = self._with(state, deleted=(False,) * npart)
        if self.metadata_log:
            # the log starts empty: the committed image is the initial controller state
            state = self._with(state, committedImage=self.controller_image(state))
        if self.rules.sessions_by_epoch:
            # no broker has heartbeated yet
            state = self._with(state, session=(False,) * nb)
        if st.shutdown_files:
            # no broker in controlled shutdown, none asking, no clean-shutdown file
            state = self._with(state, inControlledShutdown=(False,) * nb, awaitedHeartbeats=((),) * nb,
                               wantShutdown=(False,) * nb, cleanShutdownEpoch=(-1,) * nb)
        if st.broker_lag:
            # every broker has loaded the empty metadata log
            state = self._with(state, brokerImage=(self.controller_image(state),) * nb)
        yield state


    # -----------------------------------------------------------------------------------------
    # Next
    # -----------------------------------------------------------------------------------------

    def successors(self, s):
        """Next: every enabled action instance, in a fixed order."""
        out = []

        def add(action, n):
            if n is not None:
                if action[0] != "ControllerFailsOver":
                    n = self.given_up(s, n)
                out.append((action, n))

        for b in self.brokers:
            # Only the actions a broker's status can enable are tried (the others' guards are false).
            status = s[STATUS][b]
            if status == OFF:
                for choice in self.format_choices(s, b):
                    add(("BrokerStarts", b, choice), self.BrokerStarts(s, b, choice))
            else:
                if status == STARTING:
                    add(("BrokerSendsRegistration", b), self.BrokerSendsRegistration(s, b))
                else:
                    add(("BrokerRefreshesRegistration", b), self.BrokerRefreshesRegistration(s, b))
                add(("BrokerCrashes", b), self.BrokerCrashes(s, b))
                if self.settings.power_loss:
                    add(("BrokerLosesPower", b), self.BrokerLosesPower(s, b))
                if status == RUNNING and self.settings.clean_shutdowns:
                    add(("BrokerBeginsShutdown", b), self.BrokerBeginsShutdown(s, b))
                for i in self.slots:
                    add(("BrokerFailsDir", b, i), self.BrokerFailsDir(s, b, i))
                if status == RUNNING:
                    add(("BrokerSendsHeartbeat", b), self.BrokerSendsHeartbeat(s, b))
                    for p in self.partitions:
                        add(("BrokerConsumesMetadata", b, p), self.BrokerConsumesMetadata(s, b, p))
                    for p in self.partitions:
                        add(("BrokerSendsAssignment", b, p), self.BrokerSendsAssignment(s, b, p))
                    add(("BrokerShutsDownOnDirFailureTimeout", b), self.BrokerShutsDownOnDirFailureTimeout(s, b))
                    if self.settings.moves:
                        for p in self.partitions:
                            for t in self.slots:
                                add(("BrokerStartsMove", b, p, t), self.BrokerStartsMove(s, b, p, t))
                            add(("BrokerFutureCaughtUp", b, p), self.BrokerFutureCaughtUp(s, b, p))
                    if self.settings.alter_replica_state:
                        for p in self.partitions:
                            add(("BrokerSendsAlterReplicaState", b, p), self.BrokerSendsAlterReplicaState(s, b, p))
            add(("ControllerFencesExpiredBroker", b), self.ControllerFencesExpiredBroker(s, b))
            if self.settings.session_expiries:
                add(("ControllerFencesSilentBroker", b), self.ControllerFencesSilentBroker(s, b))
        for p in self.partitions:
            add(("ControllerCreatesPartition", p), self.ControllerCreatesPartition(s, p))
        if self.settings.topic_deletion:
            for p in self.partitions:
                add(("AdminDeletesTopic", p), self.AdminDeletesTopic(s, p))
        if self.settings.reassignments:
            for p in self.partitions:
                for target in self.reassignment_targets:
                    add(("AdminReassignsPartition", p, target), self.AdminReassignsPartition(s, p, target))
                add(("AdminCancelsReassignment", p), self.AdminCancelsReassignment(s, p))
        if self.settings.designated:
            for p in self.partitions:
                for b in self.replicas[p]:
                    add(("AdminElectsDesignatedLeader", p, b), self.AdminElectsDesignatedLeader(s, p, b))
        if self.settings.unclean_election != "off":
            for p in self.partitions:
                add(("AdminElectsUncleanLeader", p), self.AdminElectsUncleanLeader(s, p))
        if self.settings.unclean_election == "topic" or self.settings.unclean_toggles:
            add(("ControllerElectsUncleanLeaders",), self.ControllerElectsUncleanLeaders(s))
        if self.settings.min_isr_changes:
            for value in range(1, self.settings.replication_factor + 1):
                add(("AdminAltersMinIsr", value), self.AdminAltersMinIsr(s, value))
        if self.settings.unclean_toggles:
            add(("AdminTogglesUncleanElection",), self.AdminTogglesUncleanElection(s))
        if self.settings.preferred_elections:
            for p in self.partitions:
                add(("AdminElectsPreferredLeader", p), self.AdminElectsPreferredLeader(s, p))
        if self.settings.cordons:
            # slot by slot, as TLC enumerates \E b \in Brokers, i \in Slots (the coverage credits a new
            # state to the first action that reaches it)
            for i in self.slots:
                for b in self.brokers:
                    add(("AdminCordonsDir", b, i), self.AdminCordonsDir(s, b, i))
        if self.settings.metadata_upgrade:
            add(("AdminUpgradesMetadataVersion",), self.AdminUpgradesMetadataVersion(s))
        previous = None
        for m in s[NETWORK]:
            if m == previous:
                continue  # a duplicate in the bag gives the same successors
            previous = m
            name = DELIVERY_ACTION[m[0]]
            add((name, m), getattr(self, name)(s, m))
            if self.code and m[0] == REGISTER:
                add(("ControllerHandlesRegistrationAfterSessionTimeout", m), self.ControllerHandlesRegistrationAfterSessionTimeout(s, m))
            if self.code and m[0] == HEARTBEAT:
                add(("ControllerTimesOutHeartbeat", m), self.ControllerTimesOutHeartbeat(s, m))
            add(("NetworkLosesMessage", m), self.NetworkLosesMessage(s, m))
        if self.metadata_log:
            add(("ControllerCommits",), self.ControllerCommits(s))
            for kept in range(len(s[UNCOMMITTED]) + 1):
                add(("ControllerFailsOver", kept), self.ControllerFailsOver(s, kept))
        if self.settings.broker_lag:
            for b in self.brokers:
                add(("BrokerLoadsMetadata", b), self.BrokerLoadsMetadata(s, b))
        if self.data_plane:
            # each action over every broker and partition in turn, as TLC takes Next's disjuncts
            pairs = [(b, p) for b in self.brokers for p in self.partitions]
            if self.batch_fetches:
                for b, p in pairs:
                    add(("LeaderStartsEpoch", b, p), self.LeaderStartsEpoch(s, b, p))
            for b, p in pairs:
                add(("LeaderAppendsRecord", b, p), self.LeaderAppendsRecord(s, b, p))
            for b, p in pairs:
                add(("FollowerFetches", b, p), self.FollowerFetches(s, b, p))
            for b, p in pairs:
                for r in self.brokers:
                    add(("LeaderSendsAlterPartition", b, p, r), self.LeaderSendsAlterPartition(s, b, p, r))
            for b, p in pairs:
                add(("LeaderAdvancesHighWatermark", b, p), self.LeaderAdvancesHighWatermark(s, b, p))
            if self.settings.power_loss:
                for b, p in pairs:
                    add(("BrokerFlushesLog", b, p), self.BrokerFlushesLog(s, b, p))
        if self.settings.recovery_tool:
            for p in self.partitions:
                for b in self.replicas[p]:
                    add(("ToolAsksReplicaLogInfo", p, b), self.ToolAsksReplicaLogInfo(s, p, b))
            for p in self.partitions:
                add(("ToolElectsLeader", p), self.ToolElectsLeader(s, p))
        return out


    # -----------------------------------------------------------------------------------------
    # Readable states
    # -----------------------------------------------------------------------------------------
    def describe_action(self, action) -> str:
        """An action as a reader of a trace wants it: brokers, partitions and messages by name."""
        name, *params = action
        if name == "BrokerStarts":
            b, fates = params
            fate_names = {REPAIRED: "repaired", REPLACED: "replaced"}
            said = [f"slot {i} {fate_names.get(fate, 'formatted as ' + uuid_name(fate))}" for i, fate in fates]
            return f"BrokerStarts(b{b}{', ' if said else ''}{', '.join(said)})"
        if name == "ControllerFailsOver":
            kept = params[0]
            return f"ControllerFailsOver({kept} uncommitted batch{'' if kept == 1 else 'es'} kept)"
        if name == "AdminAltersMinIsr":
            return f"AdminAltersMinIsr(min.insync.replicas={params[0]})"
        if name == "AdminReassignsPartition":
            return f"AdminReassignsPartition(p{params[0]} -> {list(params[1])})"
        if params and isinstance(params[0], tuple):  # a message delivered or lost
            return f"{name}({message_label(params[0])})"
        kinds = _PARAM_KINDS.get(name, ())
        shown = [f"{kind}{value}" if kind in ("b", "p") else f"slot {value}" for kind, value in zip(kinds, params)]
        return f"{name}({', '.join(shown)})" if shown else name

    def describe(self, s) -> dict:
        name = dir_name
        controller = self.describe_controller(self.controller_image(s))
        return {
            "brokerStatus": [STATUS_NAMES[x] for x in s[STATUS]],
            "incarnation": list(s[INCARNATION]),
            "dirIds": [[name(d) for d in ids] for ids in s[DIR_IDS]],
            "dirState": [[DIR_STATE_NAMES[x] for x in st] for st in s[DIR_STATE]],
            "logs": [[list(slot) for slot in per] for per in s[LOGS]],
            "future": [list(f) for f in s[FUTURE]],
            "queued": [[name(d) for d in q] for q in s[QUEUED]],
            "brokerEpoch": controller["brokerEpoch"],
            "fenced": controller["fenced"],
            "onlineDirs": controller["onlineDirs"],
            "partition": controller["partition"],
            "network": [message_label(m) for m in s[NETWORK]],
            "nextUuid": name(s[NEXT_UUID]),
            "dirFailures": s[DIR_FAILURES],
            "lostMessages": s[LOST_MESSAGES],
            "movesStarted": s[MOVES_STARTED],
            "knownEpoch": list(s[KNOWN_EPOCH]),
            "registeredIncarnation": controller["registeredIncarnation"],
            "metadataVersion": controller["metadataVersion"],
            "committedImage": self.describe_controller(s[COMMITTED_IMAGE]) if s[COMMITTED_IMAGE] else {},
            "uncommitted": [
                {"records": [record_label(r) for r in records], "response": message_label(response) if response else ""}
                for records, response in s[UNCOMMITTED]
            ],
            "failoversDone": s[FAILOVERS_DONE],
            "brokerImage": [self.describe_controller(image) for image in s[BROKER_IMAGE]],
            "replicaLog": [[list(log) for log in per] for per in s[REPLICA_LOG]],
            "highWatermark": [list(per) for per in s[HIGH_WATERMARK]],
            "followerEnd": [
                [{"leaderEpoch": epoch, "epochStart": start, "ends": list(ends), "fetchEpochs": list(epochs)}
                 for epoch, start, ends, epochs in per]
                for per in s[FOLLOWER_END]
            ],
            "acked": [[{"offset": o, "leaderEpoch": e, "leader": b, "lostBy": describe_loss(lost)} for o, e, b, lost in entries]
                      for entries in s[ACKED]],
            "produced": s[PRODUCED],
            # only when machines may lose power
            **({"flushed": [list(per) for per in s[FLUSHED]]} if s[FLUSHED] else {}),
            "tool": {
                "answers": [[{"leaderEpoch": a[0], "logEndOffset": a[1]} if a else "none" for a in per]
                            for per in s[TOOL][0]],
                "outcome": [TOOL_OUTCOME_NAMES[o] for o in s[TOOL][1]],
                "requests": s[TOOL][2],
                "takenUp": list(s[TOOL][3]),
            } if s[TOOL] else {},
            # only when a release's heartbeat sessions are modeled: traces of the code read lack it
            **({"session": list(s[SESSION])} if s[SESSION] else {}),
            **({"sessionsExpired": s[SESSIONS_EXPIRED]} if self.settings.session_expiries else {}),
            **({
                "inControlledShutdown": list(s[IN_CONTROLLED_SHUTDOWN]),
                "awaitedHeartbeats": [list(a[0]) if a else "none" for a in s[AWAITED_HEARTBEATS]],
                "wantShutdown": list(s[WANT_SHUTDOWN]),
                "cleanShutdownEpoch": list(s[CLEAN_SHUTDOWN_EPOCH]),
                "cleanShutdowns": s[CLEAN_SHUTDOWNS],
            } if self.settings.shutdown_files else {}),
            # only when the topic's configs are altered while the cluster runs
            **({"topicConfig": controller["topicConfig"],
                "configChanges": {"minInsyncReplicas": s[CONFIG_CHANGES][0], "uncleanLeaderElectionEnable": s[CONFIG_CHANGES][1]}}
               if s[TOPIC_CONFIG] else {}),
            # only when directories may be cordoned
            **({"cordoned": [list(slots) for slots in s[CORDONED]],
                "registeredCordons": controller["registeredCordons"],
                "reportedCordons": [[dir_name(d) for d in r[0]] if r else "none" for r in s[REPORTED_CORDONS]],
                "cordonChanges": s[CORDON_CHANGES]}
               if s[CORDONED] else {}),
            # only with Kafka's fetch protocol
            **({"epochEntry": [list(per) for per in s[EPOCH_ENTRY]]} if s[EPOCH_ENTRY] else {}),
            # only when topics may be deleted
            **({"deleted": controller["deleted"]} if s[DELETED] else {}),
            # only when partitions may be reassigned
            **({"reassignmentsMade": s[REASSIGNMENTS_MADE]} if self.settings.reassignments else {}),
        }

    def describe_controller(self, image) -> dict:
        """The controller's variables (in-memory, or a committed image) as traces show them."""
        (broker_epoch, fenced, online_dirs, partitions, registered_incarnation, metadata_version, topic_config,
         registered_cordons, deleted) = image

        def part_view(part):
            if part is None:
                return "NoPartition"
            view = {
                "leader": part[LEADER],
                "isr": list(part[ISR]),
                "dirs": [dir_name(d) for d in part[DIRS]],
                "leaderEpoch": part[LEADER_EPOCH],
                "partitionEpoch": part[PARTITION_EPOCH],
            }
            if self.settings.elr:
                view.update(elr=list(part[ELR]), lastKnownElr=list(part[LAST_KNOWN_ELR]))
            if self.tracks_recovery:
                view.update(leaderRecoveryState="RECOVERING" if part[RECOVERING] else "RECOVERED")
            if self.settings.reassignments:
                view.update(replicas=list(part[REPLICAS]), removingReplicas=list(part[REMOVING]), addingReplicas=list(part[ADDING]))
            return view

        return {
            "brokerEpoch": list(broker_epoch),
            "fenced": list(fenced),
            "onlineDirs": [[dir_name(d) for d in dirs] for dirs in online_dirs],
            "partition": [part_view(part) for part in partitions],
            "registeredIncarnation": list(registered_incarnation),
            "metadataVersion": METADATA_VERSION_NAMES[metadata_version],
            **({"topicConfig": {"minInsyncReplicas": topic_config[0], "uncleanLeaderElectionEnable": topic_config[1]}}
               if topic_config else {}),
            # a registration's cordonedLogDirs: "null" until a heartbeat reports them
            **({"registeredCordons": [[dir_name(d) for d in c[0]] if c else "null" for c in registered_cordons]}
               if registered_cordons else {}),
            # only when topics may be deleted
            **({"deleted": list(deleted)} if deleted else {}),
        }


#: What the integer parameters of the actions that take no message are: broker, partition, slot.
_PARAM_KINDS = {
    "BrokerSendsRegistration": ("b",),
    "BrokerRefreshesRegistration": ("b",),
    "BrokerCrashes": ("b",),
    "BrokerLosesPower": ("b",),
    "BrokerFlushesLog": ("b", "p"),
    "BrokerBeginsShutdown": ("b",),
    "BrokerLoadsMetadata": ("b",),
    "BrokerFailsDir": ("b", "slot"),
    "BrokerSendsHeartbeat": ("b",),
    "BrokerConsumesMetadata": ("b", "p"),
    "BrokerSendsAssignment": ("b", "p"),
    "BrokerShutsDownOnDirFailureTimeout": ("b",),
    "BrokerStartsMove": ("b", "p", "slot"),
    "BrokerFutureCaughtUp": ("b", "p"),
    "BrokerSendsAlterReplicaState": ("b", "p"),
    "ControllerFencesExpiredBroker": ("b",),
    "ControllerFencesSilentBroker": ("b",),
    "ControllerCreatesPartition": ("p",),
    "AdminDeletesTopic": ("p",),
    "AdminCancelsReassignment": ("p",),
    "AdminElectsDesignatedLeader": ("p", "b"),
    "AdminElectsUncleanLeader": ("p",),
    "AdminElectsPreferredLeader": ("p",),
    "AdminCordonsDir": ("b", "slot"),
    "ToolAsksReplicaLogInfo": ("p", "b"),
    "ToolElectsLeader": ("p",),
    "LeaderStartsEpoch": ("b", "p"),
    "LeaderAppendsRecord": ("b", "p"),
    "FollowerFetches": ("b", "p"),
    "LeaderSendsAlterPartition": ("b", "p", "b"),
    "LeaderAdvancesHighWatermark": ("b", "p"),
}
