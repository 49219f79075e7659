"""KRaft controller, brokers and log directories (KIP-858 JBOD, KIP-589, KIP-1275), TLA+-style.

Every action is one method named like its TLA+ operator in ``spec/KRaftJBOD.tla``: a guard,
then the new state, everything else unchanged.  A method returns the next state, or
``None`` when its guard is false.  The state is a plain tuple of the TLA+ variables, in the
order of ``VARIABLES`` below, each made of ints, bools, ``None`` and tuples only, so that it
is one-to-one with the TLA+ state and fingerprints the same in every process.
"""

from __future__ import annotations

from itertools import product

from .config import MUTANTS, Settings
from .picture import picture
from .uuids import FIRST_REAL, LOST, MIGRATING, RESERVED, RESERVED3, UNASSIGNED, is_online, is_reserved, uuid_name

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
    "partition",  # controller: partition -> NoPartition (None) | <<leader, isr, dirs, leaderEpoch, partitionEpoch>>
    "network",  # sorted bag of messages in flight
    "nextUuid",  # the next fresh directory UUID the format tool generates
    "dirFailures",  # directory failures so far
    "lostMessages",  # messages lost so far
    "movesStarted",  # replica moves between directories started so far
    "knownEpoch",  # broker -> the broker epoch its registration response gave it (0: none yet)
    "registeredIncarnation",  # controller: broker -> incarnation ID of its registration (0: none)
    "metadataVersion",  # controller: 0 below 3.7-IV2 (no directory assignment), 1 at or above
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
) = range(len(VARIABLES))

# metadata.version: below IBP_3_7_IV2 brokers register no directories and nothing is assigned
# (MetadataVersion.isDirectoryAssignmentSupported); at or above it KIP-858 is in force.
MV_3_6, MV_3_7_IV2 = 0, 1
METADATA_VERSION_NAMES = ("3.6-IV2", "3.7-IV2")

OFF, STARTING, RUNNING = 0, 1, 2
STATUS_NAMES = ("OFF", "STARTING", "RUNNING")

# A disk's health in the current incarnation; FAILED_ACKED: failed, and a heartbeat response
# acknowledged it (the broker keeps listing it until it restarts).
HEALTHY, FAILED, FAILED_ACKED = 0, 1, 2
DIR_STATE_NAMES = ("HEALTHY", "FAILED", "FAILED_ACKED")

NONE = -1  # no slot, nothing queued
NO_LEADER = -1
# The fate of a failed directory at a restart (the parameter of BrokerStarts).
REPAIRED = -1  # the disk comes back: same UUID, its logs back
REPLACED = -2  # a new disk, formatted with a fresh UUID

# Partition record fields.
LEADER, ISR, DIRS, LEADER_EPOCH, PARTITION_EPOCH = range(5)

# Metadata records, as Kafka's controller writes them: a handler computes its records from the
# image it read, and replay applies them in order (QuorumController).  Under semantics "kip"
# each record is computed from the state the records before it left.
PARTITION_CHANGE = "PartitionChange"  # <<kind, p, leader or NO_LEADER_CHANGE, isr or None, dirs or None>>
REGISTRATION_CHANGE = "BrokerRegistrationChange"  # <<kind, b, fenced (True, False or None), logDirs or None>>
REGISTER_BROKER = "RegisterBroker"  # <<kind, b, incarnation ID, broker epoch, fenced, logDirs>>
PARTITION_RECORD = "Partition"  # <<kind, p, leader, isr, dirs>>: a new partition, both epochs 0
NO_LEADER_CHANGE = -2  # PartitionChangeRecord's leader when the record leaves it alone (Kafka's -2)

# Messages: a tuple whose first item is its kind, then the sender broker and its broker epoch
# (for a registration and its response, the incarnation ID the request carries instead).
REGISTER = 1  # <<REGISTER, b, incarnation, dirs>>              BrokerRegistrationRequest
REGISTER_RESPONSE = 2  # <<REGISTER_RESPONSE, b, incarnation, epoch>> epoch 0: an error
HEARTBEAT = 3  # <<HEARTBEAT, b, epoch, offlineDirs>>            BrokerHeartbeatRequest
HEARTBEAT_RESPONSE = 4  # <<HEARTBEAT_RESPONSE, b, epoch, offlineDirs>> acknowledges offlineDirs
ASSIGN = 5  # <<ASSIGN, b, epoch, p, dir>>                       AssignReplicasToDirs
ASSIGN_RESPONSE = 6  # <<ASSIGN_RESPONSE, b, epoch, p, dir, ok>>
ALTER_REPLICA_STATE = 7  # <<ALTER_REPLICA_STATE, b, epoch, p>>  KIP-589, replica offline
MESSAGE_NAMES = {
    REGISTER: "Register",
    REGISTER_RESPONSE: "RegisterResponse",
    HEARTBEAT: "Heartbeat",
    HEARTBEAT_RESPONSE: "HeartbeatResponse",
    ASSIGN: "AssignReplicasToDirs",
    ASSIGN_RESPONSE: "AssignReplicasToDirsResponse",
    ALTER_REPLICA_STATE: "AlterReplicaState",
}
# Requests the controller gates on the broker epoch (KIP-589).
EPOCH_GATED = (HEARTBEAT, ASSIGN, ALTER_REPLICA_STATE)

ACTIONS = (
    "BrokerStarts",
    "BrokerSendsRegistration",
    "BrokerRefreshesRegistration",
    "BrokerReceivesRegistrationResponse",
    "BrokerCrashes",
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
    "ControllerHandlesAssignment",
    "ControllerHandlesAlterReplicaState",
    "ControllerCreatesPartition",
    "AdminElectsDesignatedLeader",
    "AdminUpgradesMetadataVersion",
    "NetworkLosesMessage",
)


def _set(t: tuple, i: int, v) -> tuple:
    """``t`` with item ``i`` replaced by ``v`` (TLA+'s [t EXCEPT ![i] = v])."""
    return t[:i] + (v,) + t[i + 1 :]


def _bag_add(bag: tuple, m: tuple) -> tuple:
    return tuple(sorted(bag + (m,)))


def _bag_remove(bag: tuple, m: tuple) -> tuple:
    i = bag.index(m)
    return bag[:i] + bag[i + 1 :]


class KRaftJBOD:
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
        self.legacy = tuple(b < st.legacy_brokers for b in self.brokers)
        self.actions = list(ACTIONS)
        self.mutants = dict(MUTANTS)
        # The variables that few steps change: one of them changes in 13.7% of the default
        # config's transitions (``locality`` in checker/protocol.py).
        self.locality = (INCARNATION, DIR_STATE, LOGS, BROKER_EPOCH, ONLINE_DIRS, REGISTERED_INCARNATION, METADATA_VERSION)
        self.code = st.semantics == "code"
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
        }
        # The traces' picture of a state (model/picture.py), drawn from ``describe``'s output.
        self.picture = picture
        self.action_invariants = {
            "StaleEpochChangesNothing": self.StaleEpochChangesNothing,
            "EpochsNeverDecrease": self.EpochsNeverDecrease,
            "UpdatesOnlyOfflinePartitions": self.UpdatesOnlyOfflinePartitions,
            "FencedUntilAssigned": self.FencedUntilAssigned,
            "DesignatedElectionSafe": self.DesignatedElectionSafe,
            "BrokerEpochOnlyForNewIncarnation": self.BrokerEpochOnlyForNewIncarnation,
        }

    # -----------------------------------------------------------------------------------------
    # Init
    # -----------------------------------------------------------------------------------------
    def init_states(self):
        """Every broker formatted (distinct real UUIDs) and off; no registration, no partition."""
        st = self.settings
        nb, nd, npart = st.brokers, st.dirs_per_broker, st.partitions
        dir_ids = tuple(tuple(FIRST_REAL + b * nd + i for i in self.slots) for b in self.brokers)
        yield (
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
            MV_3_6 if st.metadata_version == "3.6-IV2" else MV_3_7_IV2,
        )

    # -----------------------------------------------------------------------------------------
    # Helpers (TLA+ operators)
    # -----------------------------------------------------------------------------------------
    def slot_online(self, s, b, i) -> bool:
        """The broker can use slot i: its disk has not failed in this incarnation."""
        return s[DIR_STATE][b][i] == HEALTHY

    def slot_failed(self, s, b, i) -> bool:
        return s[DIR_STATE][b][i] in (FAILED, FAILED_ACKED)

    def main_slots(self, s, b, p):
        return tuple(i for i in self.slots if p in s[LOGS][b][i])

    def least_loaded_online_slot(self, s, b):
        """Where a broker places a new replica: the online directory with the fewest logs."""
        best, best_load = NONE, None
        for i in self.slots:
            if self.slot_online(s, b, i):
                load = len(s[LOGS][b][i]) + sum(1 for p in self.partitions if s[FUTURE][b][p] == i)
                if best_load is None or load < best_load:
                    best, best_load = i, load
        return best

    def replica_dir(self, part, p, b):
        """The directory metadata assigns to broker b's replica of partition p."""
        return part[DIRS][self.replicas[p].index(b)]

    def registered(self, s, b) -> bool:
        return s[BROKER_EPOCH][b] > 0

    @staticmethod
    def assignment_supported(s) -> bool:
        """MetadataVersion.isDirectoryAssignmentSupported: 3.7-IV2 or later."""
        return s[METADATA_VERSION] == MV_3_7_IV2

    def alive(self, s, b) -> bool:
        """The registered incarnation is the broker's running process (it heartbeats)."""
        return s[STATUS][b] == RUNNING and s[INCARNATION][b] == s[REGISTERED_INCARNATION][b]

    def dir_online_in_metadata(self, s, b, directory) -> bool:
        """DirectoryId.isOnline against the controller's registration (unregistered: offline)."""
        return self.registered(s, b) and is_online(directory, s[ONLINE_DIRS][b])

    def _controller_thinks_online(self, s, b, directory) -> bool:
        """The controller's own check, where the directory mutants put their bugs back."""
        if self.mutant == "elect_ignoring_dirs":
            return True
        if self.mutant == "no_dirs_all_offline" and not s[ONLINE_DIRS][b]:
            return directory in (UNASSIGNED, MIGRATING)
        return is_online(directory, s[ONLINE_DIRS][b])

    def acceptable_leader(self, s, b, directory) -> bool:
        """PartitionChangeBuilder's isAcceptableLeader: registered, unfenced, directory online."""
        return self.registered(s, b) and not s[FENCED][b] and self._controller_thinks_online(s, b, directory)

    def default_dir(self, s, b):
        """ClusterDescriber.defaultDir: where a new replica goes before the broker says (MIGRATING
        below 3.7-IV2)."""
        dirs = s[ONLINE_DIRS][b]
        if not dirs or not self.assignment_supported(s):
            return MIGRATING
        if len(dirs) == 1:
            return dirs[0]
        return UNASSIGNED

    def partition_change_record(self, view, p, remove=NONE, add=NONE, new_dirs=None, keep_in_isr=False, acceptor_dirs=None):
        """PartitionChangeBuilder.build, reading the image ``view``: remove a broker from the ISR
        (never the last member), then elect (clean: the current leader if still acceptable, else
        the first acceptable ISR replica in replica order, else no leader).  ``remove`` is never
        an acceptable leader and ``add`` is one though the image still has it fenced
        (generateLeaderAndIsrUpdates' brokerToRemove and brokerToAdd).  A replica is judged on
        ``acceptor_dirs`` (Kafka's LeaderAcceptor reads the registration the builder started
        from), by default the new directories.  Returns the PartitionChangeRecord, holding only
        what changes, or None when nothing does."""
        part = view[PARTITION][p]
        leader, isr, dirs = part[LEADER], part[ISR], part[DIRS]
        target_dirs = dirs if new_dirs is None else new_dirs
        judged_dirs = target_dirs if acceptor_dirs is None else acceptor_dirs
        target_isr = isr
        if remove != NONE and remove in isr and len(isr) > 1 and not keep_in_isr:
            target_isr = tuple(r for r in isr if r != remove)
        replicas = self.replicas[p]

        def ok(r):
            if r == remove:
                return False
            directory = judged_dirs[replicas.index(r)]
            if r == add:
                return self.registered(view, r) and self._controller_thinks_online(view, r, directory)
            return self.acceptable_leader(view, r, directory)

        if leader != NO_LEADER and leader in target_isr and ok(leader):
            new_leader = leader
        else:
            new_leader = next((r for r in replicas if r in target_isr and ok(r)), NO_LEADER)
        if (new_leader, target_isr, target_dirs) == (leader, isr, dirs):
            return None
        return (
            PARTITION_CHANGE,
            p,
            new_leader if new_leader != leader else NO_LEADER_CHANGE,
            target_isr if target_isr != isr else None,
            target_dirs if target_dirs != dirs else None,
        )

    def replay(self, s, records):
        """Apply records in order, one replay rule per record kind, as Kafka's replay() does."""
        for record in records:
            if record[0] == PARTITION_CHANGE:
                s = self._with(s, partition=_set(s[PARTITION], record[1], self.merged(s[PARTITION][record[1]], record)))
            elif record[0] == PARTITION_RECORD:
                # ReplicationControlManager.replay(PartitionRecord): a new registration
                _, p, leader, isr, dirs = record
                s = self._with(s, partition=_set(s[PARTITION], p, (leader, isr, dirs, 0, 0)))
            elif record[0] == REGISTER_BROKER:
                # ClusterControlManager.replay(RegisterBrokerRecord): the registration is replaced
                # whole, logDirs included (none below 3.7-IV2).
                _, b, incarnation_id, epoch, fenced, log_dirs = record
                s = self._with(
                    s,
                    brokerEpoch=_set(s[BROKER_EPOCH], b, epoch),
                    registeredIncarnation=_set(s[REGISTERED_INCARNATION], b, incarnation_id),
                    fenced=_set(s[FENCED], b, fenced),
                    onlineDirs=_set(s[ONLINE_DIRS], b, tuple(sorted(set(log_dirs)))),
                )
            else:
                _, b, fenced, log_dirs = record
                if fenced is not None:
                    s = self._with(s, fenced=_set(s[FENCED], b, fenced))
                # ClusterControlManager.replay(BrokerRegistrationChangeRecord): an empty logDirs
                # means "no change", not "no directory online".
                if log_dirs:
                    s = self._with(s, onlineDirs=_set(s[ONLINE_DIRS], b, log_dirs))
        return s

    @staticmethod
    def merged(part, record):
        """PartitionRegistration.merge: the fields the record sets; the leader epoch goes up when
        it sets a leader, the partition epoch with every record."""
        _, _, leader, isr, dirs = record
        return (
            part[LEADER] if leader == NO_LEADER_CHANGE else leader,
            part[ISR] if isr is None else isr,
            part[DIRS] if dirs is None else dirs,
            part[LEADER_EPOCH] + (0 if leader == NO_LEADER_CHANGE else 1),
            part[PARTITION_EPOCH] + 1,
        )

    def change_partition(self, s, p, remove=NONE, new_dirs=None, keep_in_isr=False):
        """The partition after a PartitionChangeRecord computed from ``s`` and replayed onto it."""
        record = self.partition_change_record(s, p, remove=remove, new_dirs=new_dirs, keep_in_isr=keep_in_isr)
        return s[PARTITION][p] if record is None else self.merged(s[PARTITION][p], record)

    def in_flight(self, s, kinds, b, epoch, *rest) -> bool:
        n = 2 + len(rest)
        key = (b, epoch) + rest
        return any(m[0] in kinds and m[1 : 1 + n] == key for m in s[NETWORK])

    def room(self, s) -> bool:
        return len(s[NETWORK]) < self.settings.max_messages

    def _with(self, s, **changes):
        n = list(s)
        for name, value in changes.items():
            n[_INDEX[name]] = value
        return tuple(n)

    def _broker_down(self, s, b):
        """A broker process stops: in-memory queues and epoch are gone; logs, futures and disk
        health stay."""
        return self._with(
            s,
            brokerStatus=_set(s[STATUS], b, OFF),
            queued=_set(s[QUEUED], b, (NONE,) * len(self.partitions)),
            knownEpoch=_set(s[KNOWN_EPOCH], b, 0),
        )

    # -----------------------------------------------------------------------------------------
    # Broker actions
    # -----------------------------------------------------------------------------------------
    def format_choices(self, s, b):
        """The fates of the failed directories at a restart: per failed slot ``(slot, fate)``,
        fate REPAIRED (same UUID, logs back) or REPLACED (formatted anew with a fresh UUID);
        under the mutant reserved_uuids the format tool may also write a reserved UUID."""
        fates = (REPAIRED, REPLACED) + (RESERVED if self.mutant == "reserved_uuids" else ())
        failed = [i for i in self.slots if s[DIR_STATE][b][i] != HEALTHY]
        return list(product(*[[(i, fate) for fate in fates] for i in failed]))

    def BrokerStarts(self, s, b, choice):
        """A new incarnation: each failed directory comes back repaired or replaced, then the
        broker asks to register (KIP-858 "Broker lifecycle management")."""
        if s[STATUS][b] != OFF:
            return None
        restarts_used = sum(max(n - 1, 0) for n in s[INCARNATION])
        if s[INCARNATION][b] > 0 and restarts_used >= self.settings.restarts:
            return None
        if self.refuses_jbod(s):
            return None
        ids, logs, fut = list(s[DIR_IDS][b]), list(s[LOGS][b]), list(s[FUTURE][b])
        next_uuid = s[NEXT_UUID]
        for i, fate in choice:  # in slot order, so fresh UUIDs are handed out in slot order
            if fate == REPAIRED:
                continue
            if fate == REPLACED:
                ids[i] = next_uuid
                next_uuid += 1
            else:
                ids[i] = fate  # mutant reserved_uuids: the format tool wrote a reserved UUID
            logs[i] = ()  # a new, empty disk
            fut = [NONE if f == i else f for f in fut]
        return self._with(
            s,
            brokerStatus=_set(s[STATUS], b, STARTING),
            incarnation=_set(s[INCARNATION], b, s[INCARNATION][b] + 1),
            dirIds=_set(s[DIR_IDS], b, tuple(ids)),
            dirState=_set(s[DIR_STATE], b, (HEALTHY,) * len(self.slots)),
            logs=_set(s[LOGS], b, tuple(logs)),
            future=_set(s[FUTURE], b, tuple(fut)),
            nextUuid=next_uuid,
        )

    def refuses_jbod(self, s) -> bool:
        """KIP-858: a broker with several log directories does not run below 3.7-IV2.  Kafka's
        broker only reports a metadata publishing fault and runs on (MetadataVersionConfigValidator,
        the fix of KAFKA-16606, with a non-fatal fault handler)."""
        if self.code or self.mutant == "jbod_below_3_7_iv2":
            return False
        return len(self.slots) > 1 and not self.assignment_supported(s)

    def _registration_request(self, s, b):
        """BrokerRegistrationRequest with the incarnation ID and the LogDirs the broker loaded
        at startup, in slot order (failed since or not)."""
        dirs = () if self.legacy[b] else s[DIR_IDS][b]
        return self._with(s, network=_bag_add(s[NETWORK], (REGISTER, b, s[INCARNATION][b], dirs)))

    def BrokerSendsRegistration(self, s, b):
        """(Re)send the registration until one is answered."""
        if s[STATUS][b] != STARTING or not self.room(s):
            return None
        if self.in_flight(s, (REGISTER, REGISTER_RESPONSE), b, s[INCARNATION][b]):
            return None
        return self._registration_request(s, b)

    def BrokerRefreshesRegistration(self, s, b):
        """BrokerRegistrationTracker: at 3.7-IV2 or later, a running broker whose registration
        in the metadata lists no directories registers again, with the same incarnation ID
        (KAFKA-16162); it sends no heartbeat until that is answered."""
        if s[STATUS][b] != RUNNING or self.legacy[b] or not self.assignment_supported(s) or not self.room(s):
            return None
        if not self.registered(s, b) or s[ONLINE_DIRS][b]:
            return None
        if self.in_flight(s, (REGISTER, REGISTER_RESPONSE), b, s[INCARNATION][b]):
            return None
        return self._registration_request(s, b)

    def BrokerReceivesRegistrationResponse(self, s, m):
        """The broker runs with the epoch the controller gave it.  An error: Kafka's broker
        tries again (BrokerLifecycleManager); under the KIP's reading it fails to start."""
        _, b, incarnation_id, epoch = m
        n = self._with(s, network=_bag_remove(s[NETWORK], m))
        if s[STATUS][b] == OFF or incarnation_id != s[INCARNATION][b]:
            return n  # an answer to an earlier incarnation: ignored
        if epoch:
            return self._with(n, brokerStatus=_set(s[STATUS], b, RUNNING), knownEpoch=_set(s[KNOWN_EPOCH], b, epoch))
        if self.code or s[STATUS][b] == RUNNING:
            return n  # it registers again later
        return self._broker_down(n, b)

    def BrokerCrashes(self, s, b):
        if s[STATUS][b] == OFF:
            return None
        return self._broker_down(s, b)

    def BrokerFailsDir(self, s, b, i):
        """A log directory fails.  A move whose destination failed is reverted; one whose source
        failed is assigned to LOST (KAFKA-16297).  With no directory left the broker stops."""
        if s[STATUS][b] == OFF or not self.slot_online(s, b, i):
            return None
        if s[DIR_FAILURES] >= self.settings.dir_failures:
            return None
        states = _set(s[DIR_STATE][b], i, FAILED)
        fut, queued = list(s[FUTURE][b]), list(s[QUEUED][b])
        for p in self.partitions:
            if fut[p] == NONE:
                continue
            source = self.main_slots(s, b, p)
            if fut[p] == i:  # the destination failed: discard the future, revert the assignment
                fut[p] = NONE
                if self.mutant != "no_revert_on_dest_failure" and source:
                    queued[p] = s[DIR_IDS][b][source[0]]
            elif i in source:  # the source failed: the future cannot catch up
                fut[p] = NONE
                if self.mutant != "no_lost_on_source_failure":
                    queued[p] = LOST
        n = self._with(
            s,
            dirState=_set(s[DIR_STATE], b, states),
            future=_set(s[FUTURE], b, tuple(fut)),
            queued=_set(s[QUEUED], b, tuple(queued)),
            dirFailures=s[DIR_FAILURES] + 1,
        )
        if HEALTHY not in states:
            return self._broker_down(n, b)
        return n

    def BrokerSendsHeartbeat(self, s, b):
        """Every heartbeat repeats all directories that failed in this incarnation (OfflineLogDirs)."""
        epoch = s[KNOWN_EPOCH][b]
        if s[STATUS][b] != RUNNING or not self.room(s):
            return None
        if self.in_flight(s, (HEARTBEAT, HEARTBEAT_RESPONSE), b, epoch):
            return None
        if self.in_flight(s, (REGISTER, REGISTER_RESPONSE), b, s[INCARNATION][b]):
            return None  # registering again: heartbeats wait for the answer
        offline = tuple(sorted(s[DIR_IDS][b][i] for i in self.slots if s[DIR_STATE][b][i] != HEALTHY))
        return self._with(s, network=_bag_add(s[NETWORK], (HEARTBEAT, b, epoch, offline)))

    def BrokerReceivesHeartbeatResponse(self, s, m):
        _, b, epoch, offline = m
        n = self._with(s, network=_bag_remove(s[NETWORK], m))
        if s[STATUS][b] != RUNNING or epoch != s[KNOWN_EPOCH][b]:
            return n
        states = tuple(
            FAILED_ACKED if st == FAILED and s[DIR_IDS][b][i] in offline else st for i, st in enumerate(s[DIR_STATE][b])
        )
        return self._with(n, dirState=_set(s[DIR_STATE], b, states))

    def BrokerConsumesMetadata(self, s, b, p):
        """The broker sees the latest metadata of partition p and acts on its replica (KIP-858
        "Replica management"): place an UNASSIGNED replica in the least-loaded online directory
        and queue the assignment; create a replica in its assigned online directory; correct an
        assignment that does not name where the replica lives; promote a future replica the
        metadata already names; and never recreate a replica elsewhere while it has offline
        directories (KAFKA-16234)."""
        part = s[PARTITION][p]
        if s[STATUS][b] != RUNNING or part is None or b not in self.replicas[p]:
            return None
        if s[QUEUED][b][p] != NONE:
            return None  # an assignment is pending: the metadata will change again
        ids = s[DIR_IDS][b]
        md = self.replica_dir(part, p, b)
        main = self.main_slots(s, b, p)
        main_online = [i for i in main if self.slot_online(s, b, i)]
        has_failed = any(self.slot_failed(s, b, i) for i in self.slots)
        fut = s[FUTURE][b][p]
        named = ids.index(md) if md in ids else NONE

        # Below 3.7-IV2 nothing is assigned: the broker places replicas and tells nobody.
        tells = self.assignment_supported(s)

        def create_and_queue():
            i = self.least_loaded_online_slot(s, b)
            if i == NONE:
                return None
            logs = _set(s[LOGS][b], i, tuple(sorted(s[LOGS][b][i] + (p,))))
            n = self._with(s, logs=_set(s[LOGS], b, logs))
            return self._with(n, queued=_set(s[QUEUED], b, _set(s[QUEUED][b], p, ids[i]))) if tells else n

        def queue(i):
            if not tells:
                return None
            return self._with(s, queued=_set(s[QUEUED], b, _set(s[QUEUED][b], p, ids[i])))

        if md in (UNASSIGNED, MIGRATING):
            if main_online:
                return queue(main_online[0])
            if main:
                return None  # the only copy is on a failed disk
            return create_and_queue()
        if named != NONE and self.slot_online(s, b, named):
            if fut == named:
                return self._promote(s, b, p)
            if not main:
                logs = _set(s[LOGS][b], named, tuple(sorted(s[LOGS][b][named] + (p,))))
                return self._with(s, logs=_set(s[LOGS], b, logs))
            if named in main:
                return None  # where it lives (a move in progress is BrokerFutureCaughtUp's)
            if main_online:
                return queue(main_online[0])  # moved while the broker was down
            return None
        # The assigned directory is offline, LOST or unknown to this broker.
        if has_failed:
            if self.mutant == "recreate_elsewhere" and not main_online:
                return create_and_queue()
            return None  # it may live on the failed disk: never recreate it elsewhere
        if main_online:
            return queue(main_online[0])
        if main:
            return None
        return create_and_queue()

    def _promote(self, s, b, p):
        """Swap a caught-up future replica in: it becomes the replica, the source is deleted."""
        target = s[FUTURE][b][p]
        logs = list(s[LOGS][b])
        for i in self.slots:
            if p in logs[i] and i != target and self.mutant != "keep_source_after_promotion":
                logs[i] = tuple(x for x in logs[i] if x != p)
        logs[target] = tuple(sorted(set(logs[target]) | {p}))
        return self._with(
            s,
            logs=_set(s[LOGS], b, tuple(logs)),
            future=_set(s[FUTURE], b, _set(s[FUTURE][b], p, NONE)),
            queued=_set(s[QUEUED], b, _set(s[QUEUED][b], p, NONE)),
        )

    def BrokerSendsAssignment(self, s, b, p):
        """Send the queued AssignReplicasToDirs entry for p (one in flight per partition)."""
        epoch = s[KNOWN_EPOCH][b]
        directory = s[QUEUED][b][p]
        if s[STATUS][b] != RUNNING or directory == NONE or not self.room(s) or not self.assignment_supported(s):
            return None
        if self.in_flight(s, (ASSIGN, ASSIGN_RESPONSE), b, epoch, p):
            return None
        return self._with(s, network=_bag_add(s[NETWORK], (ASSIGN, b, epoch, p, directory)))

    def BrokerReceivesAssignmentResponse(self, s, m):
        """Success clears the queued entry (and promotes a future replica the assignment moved);
        an error drops the entry rather than retrying it forever (KAFKA-16886)."""
        _, b, epoch, p, directory, accepted = m
        n = self._with(s, network=_bag_remove(s[NETWORK], m))
        if s[STATUS][b] != RUNNING or epoch != s[KNOWN_EPOCH][b] or s[QUEUED][b][p] != directory:
            return n  # stale, or superseded by a newer entry (a revert, LOST)
        fut = s[FUTURE][b][p]
        if accepted and fut != NONE and s[DIR_IDS][b][fut] == directory:
            return self._promote(n, b, p)
        return self._with(n, queued=_set(s[QUEUED], b, _set(s[QUEUED][b], p, NONE)))

    def BrokerShutsDownOnDirFailureTimeout(self, s, b):
        """log.dir.failure.timeout.ms elapsed with a failure not yet acknowledged.  Kafka's broker
        then shuts down (BrokerLifecycleManager's OfflineDirBrokerFailureEvent); KIP-858 only if
        it leads a replica in that directory, shutting down being the only other way to get a
        new leader elected.  Leadership is read from the metadata: the model keeps no separate
        broker view of it."""
        if s[STATUS][b] != RUNNING:
            return None
        unacknowledged = [i for i in self.slots if s[DIR_STATE][b][i] == FAILED]
        if not unacknowledged:
            return None
        if self.settings.semantics == "kip" and not any(
            part is not None and part[LEADER] == b and any(p in s[LOGS][b][i] for i in unacknowledged)
            for p, part in enumerate(s[PARTITION])
        ):
            return None
        return self._broker_down(s, b)

    def BrokerStartsMove(self, s, b, p, target):
        """AlterReplicaLogDirs: start a future replica of p in another online directory."""
        if self.settings.moves == 0 or s[MOVES_STARTED] >= self.settings.moves:
            return None
        if s[STATUS][b] != RUNNING or s[FUTURE][b][p] != NONE or s[QUEUED][b][p] != NONE:
            return None
        main = self.main_slots(s, b, p)
        if len(main) != 1 or not self.slot_online(s, b, main[0]):
            return None
        if target == main[0] or not self.slot_online(s, b, target):
            return None
        return self._with(
            s,
            future=_set(s[FUTURE], b, _set(s[FUTURE][b], p, target)),
            movesStarted=s[MOVES_STARTED] + 1,
        )

    def BrokerFutureCaughtUp(self, s, b, p):
        """The future replica caught up: ask the controller to move the assignment first, and
        promote only once it acknowledges (KIP-858 "Intra-broker replica movement")."""
        target = s[FUTURE][b][p]
        if s[STATUS][b] != RUNNING or target == NONE or s[QUEUED][b][p] != NONE:
            return None
        return self._with(s, queued=_set(s[QUEUED], b, _set(s[QUEUED][b], p, s[DIR_IDS][b][target])))

    def BrokerSendsAlterReplicaState(self, s, b, p):
        """KIP-589: tell the controller a replica went offline, with the broker epoch."""
        epoch = s[KNOWN_EPOCH][b]
        if not self.settings.alter_replica_state or s[STATUS][b] != RUNNING or not self.room(s):
            return None
        if not any(self.slot_failed(s, b, i) for i in self.main_slots(s, b, p)):
            return None
        m = (ALTER_REPLICA_STATE, b, epoch, p)
        if m in s[NETWORK]:
            return None
        return self._with(s, network=_bag_add(s[NETWORK], m))

    # -----------------------------------------------------------------------------------------
    # Controller actions
    # -----------------------------------------------------------------------------------------
    def registration_valid(self, s, b, dirs) -> bool:
        """ClusterControlManager: no reserved, duplicate or foreign directory; none at all only
        for a broker of an older metadata version."""
        if not dirs and not self.legacy[b]:
            return False
        if len(set(dirs)) != len(dirs):
            return False
        if self.mutant != "reserved_uuids" and any(is_reserved(d) for d in dirs):
            return False
        for other in self.brokers:
            if other != b and any(d in s[ONLINE_DIRS][other] for d in dirs):
                return False
        return True

    def ControllerHandlesRegistration(self, s, m):
        """registerBroker.  Semantics "code" (ClusterControlManager.registerBroker): a registration
        with another incarnation ID while the registered one's session is valid (unfenced, and its
        timeout has not elapsed) is a DuplicateBrokerRegistrationException; the same incarnation
        again amends the registration, keeping epoch and flags (KAFKA-16952, KAFKA-16757); a new
        incarnation gets a new epoch (the RegisterBrokerRecord's offset) and starts fenced, and
        keeps its ISR memberships and leaderships: handleBrokerUncleanShutdown removes them only
        at metadata versions with ELR.  Semantics "kip": the incarnation number is the epoch; an
        older one is dropped, the same one answered, and a new one loses its leaderships and ISR
        memberships (unclean shutdown)."""
        if self.code:
            return self._register(s, m, session_expired=False)
        _, b, incarnation_id, dirs = m
        net = _bag_remove(s[NETWORK], m)
        current = s[BROKER_EPOCH][b]
        if incarnation_id < current and self.mutant != "accept_older_registration":
            return self._with(s, network=net)  # from an earlier incarnation: dropped
        if incarnation_id == current:
            return self._with(s, network=_bag_add(net, (REGISTER_RESPONSE, b, incarnation_id, current)))
        if self.assignment_supported(s) and not self.registration_valid(s, b, dirs):
            return self._with(s, network=_bag_add(net, (REGISTER_RESPONSE, b, incarnation_id, 0)))
        record = self._register_broker_record(s, b, incarnation_id, incarnation_id, True, dirs)
        n = self.replay(self._with(s, network=_bag_add(net, (REGISTER_RESPONSE, b, incarnation_id, incarnation_id))), [record])
        parts = tuple(
            self.change_partition(n, p, remove=b) if n[PARTITION][p] is not None and b in self.replicas[p] else n[PARTITION][p]
            for p in self.partitions
        )
        return self._with(n, partition=parts)

    def ControllerHandlesRegistrationAfterSessionTimeout(self, s, m):
        """registerBroker for a new incarnation when the registered incarnation is gone and its
        session timeout has elapsed, but maybeFenceOneStaleBroker has not fenced it yet (it fences
        one stale broker per event): hasValidSession is false, so the registration goes through
        (semantics "code" only; under "kip" a new incarnation is always accepted)."""
        _, b, incarnation_id, _ = m
        if not self.code or not self.registered(s, b) or s[FENCED][b] or self.alive(s, b):
            return None
        if incarnation_id == s[REGISTERED_INCARNATION][b]:
            return None
        return self._register(s, m, session_expired=True)

    def _register_broker_record(self, s, b, incarnation_id, epoch, fenced, dirs):
        """The RegisterBrokerRecord: logDirs only at 3.7-IV2 or later."""
        return (REGISTER_BROKER, b, incarnation_id, epoch, fenced, dirs if self.assignment_supported(s) else ())

    def _register(self, s, m, session_expired):
        """ClusterControlManager.registerBroker, the code's way: the record and the answer."""
        _, b, incarnation_id, dirs = m
        net = _bag_remove(s[NETWORK], m)

        def answer(epoch):
            return _bag_add(net, (REGISTER_RESPONSE, b, incarnation_id, epoch))

        same = self.registered(s, b) and s[REGISTERED_INCARNATION][b] == incarnation_id
        valid_session = self.registered(s, b) and not s[FENCED][b] and (self.alive(s, b) or not session_expired)
        if valid_session and not same:
            return self._with(s, network=answer(0))  # DuplicateBrokerRegistrationException
        if self.assignment_supported(s) and not self.registration_valid(s, b, dirs):
            return self._with(s, network=answer(0))  # InvalidRegistrationException
        if same:
            epoch = s[BROKER_EPOCH][b] + (1 if self.mutant == "reregistration_new_epoch" else 0)
            fenced = True if self.mutant == "reregistration_fences" else s[FENCED][b]
        else:
            # The epoch is the record's offset in the metadata log.  The model numbers a broker's
            # RegisterBrokerRecords instead, which orders its epochs as the offsets do; the
            # controller only ever compares epochs of one broker.
            epoch, fenced = s[BROKER_EPOCH][b] + 1, True
        record = self._register_broker_record(s, b, incarnation_id, epoch, fenced, dirs)
        return self.replay(self._with(s, network=answer(epoch)), [record])

    def epoch_is_current(self, s, b, epoch) -> bool:
        return self.registered(s, b) and s[BROKER_EPOCH][b] == epoch

    def ControllerHandlesHeartbeat(self, s, m):
        """processBrokerHeartbeat: epoch gate; newly offline directories (registered to the
        sender and still online) leave its registration and take the sender out of exactly the
        partitions with its replica there; a fenced broker is unfenced once no replica of it is
        UNASSIGNED, and leaderless partitions get a leader.

        Under semantics "code" every record is computed from the image the heartbeat found,
        in the code's order: the unfencing first (handleBrokerUnfenced: its elections count the
        sender acceptable on the directories its registration still lists), then
        handleDirectoriesOffline.  Under "kip" the offline directories are handled first and
        the unfencing sees them."""
        _, b, epoch, offline = m
        net = _bag_remove(s[NETWORK], m)
        current = self.epoch_is_current(s, b, epoch)
        if not current and self.mutant == "skip_epoch_check" and self.registered(s, b):
            current = True
        apply_offline = current or (self.mutant == "stale_offline_dirs" and self.registered(s, b))
        if not apply_offline:
            return self._with(s, network=net)  # STALE_BROKER_EPOCH: nothing written
        n = self._with(s, network=net)
        # Below 3.7-IV2 the controller does not look at the offline directories at all.
        offline_here = offline if self.assignment_supported(s) else ()
        if self.code:
            records = self._unfence_records(n, b) if current and n[FENCED][b] else []
            n = self.replay(n, records + self._offline_dirs_records(n, b, offline_here))
        else:
            n = self._handle_offline_dirs(n, b, offline_here)
            if current and n[FENCED][b]:
                n = self.replay(n, self._unfence_records(n, b))
        # Acknowledge the offline directories the heartbeat carried.
        if offline and current:
            n = self._with(n, network=_bag_add(n[NETWORK], (HEARTBEAT_RESPONSE, b, epoch, offline)))
        return n

    def ControllerTimesOutHeartbeat(self, s, m):
        """processExpiredBrokerHeartbeat (semantics "code"): a heartbeat that waited in the
        controller's queue past its deadline only keeps the session alive.  Nothing is written,
        no broker is unfenced, its offline directories are not looked at, and the broker gets a
        timeout error instead of a response (it sends the next heartbeat as usual)."""
        if not self.code:
            return None
        return self._with(s, network=_bag_remove(s[NETWORK], m))

    def _unfence_records(self, view, b):
        """handleBrokerUnfenced, for a fenced sender: the registration change, then an election
        for every leaderless partition with the sender an acceptable leader.  Under the KIP's
        reading a broker that registered directories asks to be unfenced only once no replica of
        it is UNASSIGNED; Kafka's broker asks once it has caught up with the metadata
        (BrokerServer: setReadyToUnfence), assigned or not."""
        unassigned = any(
            part is not None and b in self.replicas[p] and self.replica_dir(part, p, b) == UNASSIGNED
            for p, part in enumerate(view[PARTITION])
        )
        waits = self.settings.semantics == "kip" and self.mutant != "unfence_before_assigned"
        if view[ONLINE_DIRS][b] and unassigned and waits:
            return []
        records = [(REGISTRATION_CHANGE, b, False, None)]
        if self.mutant != "unfence_without_election":
            for p, part in enumerate(view[PARTITION]):
                if part is not None and part[LEADER] == NO_LEADER:
                    records.append(self.partition_change_record(view, p, add=b))
        return [r for r in records if r is not None]

    def _offline_dirs_records(self, view, b, offline):
        """handleDirectoriesOffline against the image ``view``: for every directory in the
        heartbeat that the registration lists, the sender out of each partition with its replica
        there; then the registration's remaining directories."""
        newly = tuple(d for d in offline if d in view[ONLINE_DIRS][b])
        if not newly:
            return []
        remaining = tuple(d for d in view[ONLINE_DIRS][b] if d not in newly)
        records = []
        for p, part in enumerate(view[PARTITION]):
            if part is None or b not in self.replicas[p] or self.replica_dir(part, p, b) not in newly:
                continue
            if self.mutant == "foreign_offline_dirs":
                for r in self.replicas[p]:
                    if r != b and not is_online(self.replica_dir(part, p, r), remaining):
                        records.append(self.partition_change_record(view, p, remove=r))
            records.append(
                self.partition_change_record(view, p, remove=b, keep_in_isr=self.mutant == "keep_offline_replica_in_isr")
            )
        return [r for r in records if r is not None] + [(REGISTRATION_CHANGE, b, None, remaining)]

    def _handle_offline_dirs(self, s, b, offline):
        """The KIP's reading: the registration loses the newly offline directories first, then
        each affected partition changes, each change seeing the ones before it."""
        newly = tuple(d for d in offline if d in s[ONLINE_DIRS][b])
        if not newly:
            return s
        remaining = tuple(d for d in s[ONLINE_DIRS][b] if d not in newly)
        n = self._with(s, onlineDirs=_set(s[ONLINE_DIRS], b, remaining))
        parts = list(n[PARTITION])
        for p in self.partitions:
            part = parts[p]
            if part is None or b not in self.replicas[p]:
                continue
            if self.replica_dir(part, p, b) in newly:
                if self.mutant == "foreign_offline_dirs":
                    n = self._with(n, partition=_set(n[PARTITION], p, self._remove_by_senders_dirs(n, p, b)))
                parts[p] = self.change_partition(n, p, remove=b, keep_in_isr=self.mutant == "keep_offline_replica_in_isr")
        return self._with(n, partition=tuple(parts))

    def _remove_by_senders_dirs(self, s, p, b):
        """Mutant foreign_offline_dirs: the other replicas of p are judged against the sender's
        online directories, and those found "offline" are taken out first."""
        part = s[PARTITION][p]
        for r in self.replicas[p]:
            if r != b and not is_online(self.replica_dir(part, p, r), s[ONLINE_DIRS][b]):
                part = self.change_partition(s, p, remove=r)
                s = self._with(s, partition=_set(s[PARTITION], p, part))
        return part

    def ControllerFencesExpiredBroker(self, s, b):
        """maybeFenceOneStaleBroker: the registered incarnation stopped heartbeating (it is down
        or was replaced): fence it and move its leaderships and ISR memberships away (under
        semantics "code" as handleBrokerFenced's records, computed from the image)."""
        if not self.registered(s, b) or s[FENCED][b]:
            return None
        if self.alive(s, b):
            return None  # its session is alive
        if self.code:
            return self.replay(s, self._fence_records(s, b))
        n = self._with(s, fenced=_set(s[FENCED], b, True))
        if self.mutant == "fenced_leader_kept":
            return n
        parts = tuple(
            self.change_partition(n, p, remove=b) if part is not None and b in self.replicas[p] else part
            for p, part in enumerate(n[PARTITION])
        )
        return self._with(n, partition=parts)

    def _fence_records(self, view, b):
        """handleBrokerFenced against the image ``view``: the broker out of each partition it is
        in the ISR of (brokerToRemove), then the BrokerRegistrationChangeRecord that fences it."""
        records = []
        if self.mutant != "fenced_leader_kept":
            for p, part in enumerate(view[PARTITION]):
                if part is not None and b in part[ISR]:
                    records.append(self.partition_change_record(view, p, remove=b))
        return [r for r in records if r is not None] + [(REGISTRATION_CHANGE, b, True, None)]

    def ControllerHandlesAssignment(self, s, m):
        """AssignReplicasToDirs: epoch gate; per-partition errors; record the directory, and
        if it is not online for the broker (LOST, unknown) take the replica out as for a
        failed directory.  Under semantics "code" as handleAssignReplicasToDirs writes it: a
        PartitionChangeRecord setting the directory (its election judging replicas on the
        directories the partition had), then, for a directory not online, a second record from
        the same image taking the broker out (generateLeaderAndIsrUpdates): two records, the
        partition epoch up by two.  Under "kip" one change does both."""
        _, b, epoch, p, directory = m
        net = _bag_remove(s[NETWORK], m)
        if not self.assignment_supported(s):
            # UnsupportedVersionException: the whole request fails
            return self._with(s, network=_bag_add(net, (ASSIGN_RESPONSE, b, epoch, p, directory, False)))
        if not self.epoch_is_current(s, b, epoch) and not (self.mutant == "skip_epoch_check" and self.registered(s, b)):
            return self._with(s, network=net)
        part = s[PARTITION][p]
        if part is None or b not in self.replicas[p]:
            # UNKNOWN_TOPIC_OR_PARTITION / NOT_LEADER_OR_FOLLOWER: nothing written
            return self._with(s, network=_bag_add(net, (ASSIGN_RESPONSE, b, epoch, p, directory, False)))
        n = self._with(s, network=_bag_add(net, (ASSIGN_RESPONSE, b, epoch, p, directory, True)))
        dirs = _set(part[DIRS], self.replicas[p].index(b), directory)
        online = self._controller_thinks_online(n, b, directory)
        if self.code:
            records = [self.partition_change_record(n, p, new_dirs=dirs, acceptor_dirs=part[DIRS])]
            if not online:
                records.append(self.partition_change_record(n, p, remove=b))
            return self.replay(n, [r for r in records if r is not None])
        if online:
            new_part = self.change_partition(n, p, new_dirs=dirs)
        else:
            new_part = self.change_partition(n, p, remove=b, new_dirs=dirs)
        return self._with(n, partition=_set(n[PARTITION], p, new_part))

    def ControllerHandlesAlterReplicaState(self, s, m):
        """KIP-589: epoch gate, then the replica is offline: its directory becomes LOST and it
        leaves the ISR and leadership."""
        _, b, epoch, p = m
        net = _bag_remove(s[NETWORK], m)
        if not self.epoch_is_current(s, b, epoch) and not (self.mutant == "skip_epoch_check" and self.registered(s, b)):
            return self._with(s, network=net)
        part = s[PARTITION][p]
        n = self._with(s, network=net)
        if part is None or b not in self.replicas[p]:
            return n
        dirs = _set(part[DIRS], self.replicas[p].index(b), LOST)
        return self._with(n, partition=_set(n[PARTITION], p, self.change_partition(n, p, remove=b, new_dirs=dirs)))

    def ControllerCreatesPartition(self, s, p):
        """CreateTopics with a manual assignment: every replica registered, the ISR its unfenced
        replicas (at least one), the first of them leader, directories defaultDir; createTopic's
        PartitionRecord, replayed."""
        if s[PARTITION][p] is not None:
            return None
        replicas = self.replicas[p]
        if not all(self.registered(s, r) for r in replicas):
            return None
        isr = tuple(r for r in replicas if not s[FENCED][r])
        if not isr:
            return None
        dirs = tuple(self.default_dir(s, r) for r in replicas)
        return self.replay(s, [(PARTITION_RECORD, p, isr[0], isr, dirs)])

    # -----------------------------------------------------------------------------------------
    # Admin and network
    # -----------------------------------------------------------------------------------------
    def AdminElectsDesignatedLeader(self, s, p, b):
        """KIP-1275: only for a leaderless partition; the designated replica must be in the
        replica set, unfenced and on an online directory.  Like an unclean election, the ISR
        becomes just the new leader."""
        part = s[PARTITION][p]
        if not self.settings.designated or part is None or b not in self.replicas[p]:
            return None
        if part[LEADER] != NO_LEADER and self.mutant != "designated_with_leader":
            return None
        if part[LEADER] == b:
            return None
        if not self.acceptable_leader(s, b, self.replica_dir(part, p, b)):
            return None
        new = (b, (b,), part[DIRS], part[LEADER_EPOCH] + 1, part[PARTITION_EPOCH] + 1)
        return self._with(s, partition=_set(s[PARTITION], p, new))

    def AdminUpgradesMetadataVersion(self, s):
        """kafka-features upgrade to 3.7-IV2: the controller writes a FeatureLevelRecord."""
        if not self.settings.metadata_upgrade or self.assignment_supported(s):
            return None
        return self._with(s, metadataVersion=MV_3_7_IV2)

    def NetworkLosesMessage(self, s, m):
        if s[LOST_MESSAGES] >= self.settings.max_losses:
            return None
        return self._with(s, network=_bag_remove(s[NETWORK], m), lostMessages=s[LOST_MESSAGES] + 1)

    # -----------------------------------------------------------------------------------------
    # Next
    # -----------------------------------------------------------------------------------------
    _DELIVER = {
        REGISTER: "ControllerHandlesRegistration",
        REGISTER_RESPONSE: "BrokerReceivesRegistrationResponse",
        HEARTBEAT: "ControllerHandlesHeartbeat",
        HEARTBEAT_RESPONSE: "BrokerReceivesHeartbeatResponse",
        ASSIGN: "ControllerHandlesAssignment",
        ASSIGN_RESPONSE: "BrokerReceivesAssignmentResponse",
        ALTER_REPLICA_STATE: "ControllerHandlesAlterReplicaState",
    }

    def successors(self, s):
        """Next: every enabled action instance, in a fixed order."""
        out = []

        def add(action, n):
            if n is not None:
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
        for p in self.partitions:
            add(("ControllerCreatesPartition", p), self.ControllerCreatesPartition(s, p))
        if self.settings.designated:
            for p in self.partitions:
                for b in self.replicas[p]:
                    add(("AdminElectsDesignatedLeader", p, b), self.AdminElectsDesignatedLeader(s, p, b))
        if self.settings.metadata_upgrade:
            add(("AdminUpgradesMetadataVersion",), self.AdminUpgradesMetadataVersion(s))
        previous = None
        for m in s[NETWORK]:
            if m == previous:
                continue  # a duplicate in the bag gives the same successors
            previous = m
            name = self._DELIVER[m[0]]
            add((name, m), getattr(self, name)(s, m))
            if self.code and m[0] == REGISTER:
                add(("ControllerHandlesRegistrationAfterSessionTimeout", m), self.ControllerHandlesRegistrationAfterSessionTimeout(s, m))
            if self.code and m[0] == HEARTBEAT:
                add(("ControllerTimesOutHeartbeat", m), self.ControllerTimesOutHeartbeat(s, m))
            add(("NetworkLosesMessage", m), self.NetworkLosesMessage(s, m))
        return out

    # -----------------------------------------------------------------------------------------
    # Invariants (state predicates)
    # -----------------------------------------------------------------------------------------
    def _created(self, s):
        return ((p, part) for p, part in enumerate(s[PARTITION]) if part is not None)

    def LeaderOnOnlineDir(self, s) -> bool:
        """No leader's replica is on a directory that is offline for its broker: clients would
        be sent to a replica that cannot serve them (the reason KIP-858 exists)."""
        for p, part in self._created(s):
            b = part[LEADER]
            if b != NO_LEADER and not self.dir_online_in_metadata(s, b, self.replica_dir(part, p, b)):
                return False
        return True

    def FencedBrokerLeadsNothing(self, s) -> bool:
        """A fenced or unregistered broker leads nothing: it is not heartbeating, so nobody
        would notice it failing to serve."""
        for _, part in self._created(s):
            b = part[LEADER]
            if b != NO_LEADER and (not self.registered(s, b) or s[FENCED][b]):
                return False
        return True

    def LeaderInIsr(self, s) -> bool:
        """The leader is in the ISR: otherwise committed data could be lost on the next election."""
        return all(part[LEADER] == NO_LEADER or part[LEADER] in part[ISR] for _, part in self._created(s))

    def IsrWithinReplicas(self, s) -> bool:
        """The ISR is a non-empty subset of the replica set."""
        return all(part[ISR] and set(part[ISR]) <= set(self.replicas[p]) for p, part in self._created(s))

    def IsrOnOnlineDirs(self, s) -> bool:
        """Every ISR member's replica is on an online directory, except the last member kept in
        the ISR of a leaderless partition (clean election needs someone to wait for)."""
        for p, part in self._created(s):
            if part[LEADER] == NO_LEADER and len(part[ISR]) == 1:
                continue
            for r in part[ISR]:
                if not self.dir_online_in_metadata(s, r, self.replica_dir(part, p, r)):
                    return False
        return True

    def OfflineDirsReallyOffline(self, s) -> bool:
        """Every directory the controller holds offline for a broker's current incarnation
        failed in that incarnation: a repaired, restarted broker is never marked offline by its
        own old request (KIP-589's reason for the epoch).  A registration with no directories
        (an older broker, or a metadata version below 3.7-IV2) holds none offline."""
        for b in self.brokers:
            if self.legacy[b] or not s[ONLINE_DIRS][b] or s[REGISTERED_INCARNATION][b] != s[INCARNATION][b]:
                continue
            for i in self.slots:
                if s[DIR_IDS][b][i] not in s[ONLINE_DIRS][b] and not self.slot_failed(s, b, i):
                    return False
        return True

    def ReservedUUIDsNeverReal(self, s) -> bool:
        """No disk and no registered directory carries a reserved UUID; in partition metadata
        reserved values appear only as the UNASSIGNED/LOST/MIGRATING markers.  A disk named
        UNASSIGNED or LOST would be confused with the markers and break DirectoryId.isOnline."""
        for b in self.brokers:
            if min(s[DIR_IDS][b]) < FIRST_REAL or (s[ONLINE_DIRS][b] and s[ONLINE_DIRS][b][0] < FIRST_REAL):
                return False
        for part in s[PARTITION]:
            if part is not None and RESERVED3 in part[DIRS]:
                return False
        return True

    def OneDirPerReplica(self, s) -> bool:
        """On a broker, a replica lives in at most one online directory, and a future replica
        in another one: two live copies would diverge."""
        for b in self.brokers:
            for p in self.partitions:
                online = [i for i in self.main_slots(s, b, p) if self.slot_online(s, b, i)]
                if len(online) > 1:
                    return False
                if s[FUTURE][b][p] != NONE and s[FUTURE][b][p] in online:
                    return False
        return True

    def NoReplicaRecreatedElsewhere(self, s) -> bool:
        """A replica whose log is on a failed disk is not recreated in another directory: that
        would re-stream offline replicas into the remaining disks (KAFKA-16234)."""
        for b in self.brokers:
            for p in self.partitions:
                main = self.main_slots(s, b, p)
                if any(self.slot_failed(s, b, i) for i in main) and any(self.slot_online(s, b, i) for i in main):
                    return False
        return True

    def ElectedWhenPossible(self, s) -> bool:
        """A partition is leaderless only when no ISR replica is acceptable as leader
        (registered, unfenced, on an online directory): otherwise it is needlessly unavailable."""
        for p, part in self._created(s):
            if part[LEADER] != NO_LEADER:
                continue
            for r in part[ISR]:
                if self.registered(s, r) and not s[FENCED][r] and self.dir_online_in_metadata(s, r, self.replica_dir(part, p, r)):
                    return False
        return True

    def FailedMoveReverted(self, s) -> bool:
        """When metadata puts a replica in a directory that failed while its log is safe in an
        online one, the running broker has the correcting assignment queued (KAFKA-16297):
        otherwise the controller keeps a healthy replica out for good."""
        for b in self.brokers:
            if s[STATUS][b] != RUNNING:
                continue
            ids = s[DIR_IDS][b]
            for p, part in self._created(s):
                if b not in self.replicas[p] or s[QUEUED][b][p] != NONE:
                    continue
                md = self.replica_dir(part, p, b)
                if md in ids and self.slot_failed(s, b, ids.index(md)):
                    if any(self.slot_online(s, b, i) for i in self.main_slots(s, b, p)):
                        return False
        return True

    def AcknowledgedFailureLeadsNothing(self, s) -> bool:
        """Once the controller has acknowledged a directory failure, the broker (in the
        registered incarnation) leads no replica whose log is on that disk, unless the
        assignment that tells the controller where the replica is is still on its way: the
        guarantee KIP-858 gives, and the reason a move whose source fails is assigned to LOST."""
        for p, part in enumerate(s[PARTITION]):
            if part is None or part[LEADER] == NO_LEADER:
                continue
            b = part[LEADER]
            if not self.alive(s, b) or s[QUEUED][b][p] != NONE:
                continue
            if any(s[DIR_STATE][b][i] == FAILED_ACKED and p in s[LOGS][b][i] for i in self.slots):
                return False
        return True

    # -----------------------------------------------------------------------------------------
    # Step properties ([][P]_vars, TLC PROPERTY), checked on every transition
    # -----------------------------------------------------------------------------------------
    @staticmethod
    def _controller_vars(s):
        return (s[BROKER_EPOCH], s[FENCED], s[ONLINE_DIRS], s[PARTITION], s[REGISTERED_INCARNATION], s[METADATA_VERSION])

    def StaleEpochChangesNothing(self, s, action, t) -> bool:
        """A heartbeat, AssignReplicasToDirs or AlterReplicaState whose broker epoch is not the
        broker's registered one writes nothing and answers nothing (KIP-589)."""
        if action[0] not in ("ControllerHandlesHeartbeat", "ControllerHandlesAssignment", "ControllerHandlesAlterReplicaState"):
            return True
        m = action[1]
        if self.epoch_is_current(s, m[1], m[2]):
            return True
        return self._controller_vars(s) == self._controller_vars(t) and t[NETWORK] == _bag_remove(s[NETWORK], m)

    def EpochsNeverDecrease(self, s, action, t) -> bool:
        """Broker epochs (registered and incarnation), leader epochs and partition epochs never
        go back: every fencing and conditional update in Kafka relies on it."""
        # Unchanged variables are the same objects (actions copy only what they change).
        if t[BROKER_EPOCH] is s[BROKER_EPOCH] and t[INCARNATION] is s[INCARNATION] and t[PARTITION] is s[PARTITION]:
            return True
        for b in self.brokers:
            if t[BROKER_EPOCH][b] < s[BROKER_EPOCH][b] or t[INCARNATION][b] < s[INCARNATION][b]:
                return False
        for p in self.partitions:
            a, c = s[PARTITION][p], t[PARTITION][p]
            if a is None:
                continue
            if c is None or c[LEADER_EPOCH] < a[LEADER_EPOCH] or c[PARTITION_EPOCH] < a[PARTITION_EPOCH]:
                return False
        return True

    def UpdatesOnlyOfflinePartitions(self, s, action, t) -> bool:
        """A heartbeat changes leader/ISR only of partitions whose sender's replica is in a
        directory that the heartbeat took offline, and only by removing the sender; or, when it
        unfences the sender, elects leaders of leaderless partitions."""
        if action[0] != "ControllerHandlesHeartbeat":
            return True
        b = action[1][1]
        unfenced_now = s[FENCED][b] and not t[FENCED][b]
        for p in self.partitions:
            a, c = s[PARTITION][p], t[PARTITION][p]
            if a is None or (a[LEADER], a[ISR]) == (c[LEADER], c[ISR]):
                continue
            if b in self.replicas[p]:
                md = self.replica_dir(a, p, b)
                went_offline = md in s[ONLINE_DIRS][b] and md not in t[ONLINE_DIRS][b]
                if went_offline and set(c[ISR]) >= set(a[ISR]) - {b}:
                    continue
            if unfenced_now and a[LEADER] == NO_LEADER and c[ISR] == a[ISR]:
                continue
            return False
        return True

    def FencedUntilAssigned(self, s, action, t) -> bool:
        """A broker that registered directories is never unfenced while metadata holds one of
        its replicas as UNASSIGNED: it could lead a replica whose directory nobody knows, and a
        failure of that directory would go unnoticed (KIP-858)."""
        if t[FENCED] is s[FENCED]:
            return True
        for b in self.brokers:
            if s[FENCED][b] and not t[FENCED][b] and t[ONLINE_DIRS][b]:
                for p, part in self._created(t):
                    if b in self.replicas[p] and self.replica_dir(part, p, b) == UNASSIGNED:
                        return False
        return True

    def DesignatedElectionSafe(self, s, action, t) -> bool:
        """A designated election (KIP-1275) happens only for a leaderless partition and elects
        a replica in the replica set that is unfenced and on an online directory."""
        if action[0] != "AdminElectsDesignatedLeader":
            return True
        p, b = action[1], action[2]
        part = s[PARTITION][p]
        return (
            part is not None
            and part[LEADER] == NO_LEADER
            and b in self.replicas[p]
            and self.registered(s, b)
            and not s[FENCED][b]
            and self.dir_online_in_metadata(s, b, self.replica_dir(part, p, b))
        )

    def BrokerEpochOnlyForNewIncarnation(self, s, action, t) -> bool:
        """A broker's registered epoch changes only when a new incarnation registers: the epoch
        names an incarnation, and requests, ISR entries (KIP-903) and fencing decisions carry it
        (KAFKA-16952)."""
        if t[BROKER_EPOCH] is s[BROKER_EPOCH]:
            return True
        return all(
            t[BROKER_EPOCH][b] == s[BROKER_EPOCH][b] or t[REGISTERED_INCARNATION][b] != s[REGISTERED_INCARNATION][b]
            for b in self.brokers
        )

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
        if params and isinstance(params[0], tuple):  # a message delivered or lost
            return f"{name}({message_label(params[0])})"
        kinds = _PARAM_KINDS.get(name, ())
        shown = [f"{kind}{value}" if kind in ("b", "p") else f"slot {value}" for kind, value in zip(kinds, params)]
        return f"{name}({', '.join(shown)})" if shown else name

    def describe(self, s) -> dict:
        name = _dir_name

        def part_view(part):
            if part is None:
                return "NoPartition"
            return {
                "leader": part[LEADER],
                "isr": list(part[ISR]),
                "dirs": [name(d) for d in part[DIRS]],
                "leaderEpoch": part[LEADER_EPOCH],
                "partitionEpoch": part[PARTITION_EPOCH],
            }

        return {
            "brokerStatus": [STATUS_NAMES[x] for x in s[STATUS]],
            "incarnation": list(s[INCARNATION]),
            "dirIds": [[name(d) for d in ids] for ids in s[DIR_IDS]],
            "dirState": [[DIR_STATE_NAMES[x] for x in st] for st in s[DIR_STATE]],
            "logs": [[list(slot) for slot in per] for per in s[LOGS]],
            "future": [list(f) for f in s[FUTURE]],
            "queued": [[name(d) for d in q] for q in s[QUEUED]],
            "brokerEpoch": list(s[BROKER_EPOCH]),
            "fenced": list(s[FENCED]),
            "onlineDirs": [[name(d) for d in dirs] for dirs in s[ONLINE_DIRS]],
            "partition": [part_view(part) for part in s[PARTITION]],
            "network": [message_label(m) for m in s[NETWORK]],
            "nextUuid": name(s[NEXT_UUID]),
            "dirFailures": s[DIR_FAILURES],
            "lostMessages": s[LOST_MESSAGES],
            "movesStarted": s[MOVES_STARTED],
            "knownEpoch": list(s[KNOWN_EPOCH]),
            "registeredIncarnation": list(s[REGISTERED_INCARNATION]),
            "metadataVersion": METADATA_VERSION_NAMES[s[METADATA_VERSION]],
        }


def _dir_name(d) -> str:
    return "NONE" if d == NONE else uuid_name(d)


def message_label(m: tuple) -> str:
    """A message in flight as a trace shows it: ``Heartbeat(b0, epoch 1, offline [dir-1])``."""
    kind = MESSAGE_NAMES[m[0]]
    if m[0] == REGISTER:
        return f"{kind}(b{m[1]}, incarnation {m[2]}, dirs {[_dir_name(d) for d in m[3]]})"
    if m[0] == REGISTER_RESPONSE:
        return f"{kind}(b{m[1]}, incarnation {m[2]}, {f'epoch {m[3]}' if m[3] else 'error'})"
    if m[0] in (HEARTBEAT, HEARTBEAT_RESPONSE):
        return f"{kind}(b{m[1]}, epoch {m[2]}, offline {[_dir_name(d) for d in m[3]]})"
    if m[0] == ASSIGN:
        return f"{kind}(b{m[1]}, epoch {m[2]}, p{m[3]} -> {_dir_name(m[4])})"
    if m[0] == ASSIGN_RESPONSE:
        return f"{kind}(b{m[1]}, epoch {m[2]}, p{m[3]} -> {_dir_name(m[4])}, {'ok' if m[5] else 'error'})"
    return f"{kind}(b{m[1]}, epoch {m[2]}, p{m[3]})"


#: What the integer parameters of the actions that take no message are: broker, partition, slot.
_PARAM_KINDS = {
    "BrokerSendsRegistration": ("b",),
    "BrokerRefreshesRegistration": ("b",),
    "BrokerCrashes": ("b",),
    "BrokerFailsDir": ("b", "slot"),
    "BrokerSendsHeartbeat": ("b",),
    "BrokerConsumesMetadata": ("b", "p"),
    "BrokerSendsAssignment": ("b", "p"),
    "BrokerShutsDownOnDirFailureTimeout": ("b",),
    "BrokerStartsMove": ("b", "p", "slot"),
    "BrokerFutureCaughtUp": ("b", "p"),
    "BrokerSendsAlterReplicaState": ("b", "p"),
    "ControllerFencesExpiredBroker": ("b",),
    "ControllerCreatesPartition": ("p",),
    "AdminElectsDesignatedLeader": ("p", "b"),
}

_INDEX = {name: i for i, name in enumerate(VARIABLES)}
