"""Metadata records and their replay, as Kafka's controller writes them: a handler computes its records
from the image it read (PartitionChangeBuilder), and replay applies them in order, one rule per record
kind (ReplicationControlManager.replay, ClusterControlManager.replay)."""

from __future__ import annotations

from .state import (
    METADATA_VERSION_NAMES, dir_name, CONTROLLER_VARIABLES, FEATURE_LEVEL, NETWORK, UNCOMMITTED, bag_add,
    BROKER_EPOCH, DIRS, FENCED, ISR, LEADER, LEADER_EPOCH, NONE, NO_LEADER, NO_LEADER_CHANGE,
    ONLINE_DIRS, PARTITION, PARTITION_CHANGE, PARTITION_EPOCH, PARTITION_RECORD,
    REGISTERED_INCARNATION, REGISTER_BROKER, except_at,
)


class Records:
    """Building PartitionChangeRecords from an image, and replaying every record kind."""

    def partition_change_record(self, view, p, remove=NONE, add=NONE, new_dirs=None, keep_in_isr=False, acceptor_dirs=None,
                                target_isr=None):
        """PartitionChangeBuilder.build, reading the image ``view``: remove a broker from the ISR
        (never the last member), then elect (clean: the current leader if still acceptable, else
        the first acceptable ISR replica in replica order, else no leader).  ``remove`` is never
        an acceptable leader and ``add`` is one though the image still has it fenced
        (generateLeaderAndIsrUpdates' brokerToRemove and brokerToAdd).  A replica is judged on
        ``acceptor_dirs`` (Kafka's LeaderAcceptor reads the registration the builder started
        from), by default the new directories.  ``target_isr``: the ISR a leader's AlterPartition
        asks for (setTargetIsrWithBrokerStates), instead.  Returns the PartitionChangeRecord,
        holding only what changes, or None when nothing does."""
        part = view[PARTITION][p]
        leader, isr, dirs = part[LEADER], part[ISR], part[DIRS]
        target_dirs = dirs if new_dirs is None else new_dirs
        judged_dirs = target_dirs if acceptor_dirs is None else acceptor_dirs
        if target_isr is None:
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

    def replay(self, s, records, rebuilding=False):
        """Apply records in order, one replay rule per record kind, as Kafka's replay() does.
        ``rebuilding``: replayed from the metadata log (a standby controller, or one taking over),
        where the mutant replay_ignores_log_dirs puts KAFKA-15364 back; the active controller's
        own handlers apply their changes as they meant them."""
        for record in records:
            if record[0] == PARTITION_CHANGE:
                s = self._with(s, partition=except_at(s[PARTITION], record[1], self.merged(s[PARTITION][record[1]], record)))
            elif record[0] == PARTITION_RECORD:
                # ReplicationControlManager.replay(PartitionRecord): a new registration
                _, p, leader, isr, dirs = record
                s = self._with(s, partition=except_at(s[PARTITION], p, (leader, isr, dirs, 0, 0)))
            elif record[0] == REGISTER_BROKER:
                # ClusterControlManager.replay(RegisterBrokerRecord): the registration is replaced
                # whole, logDirs included (none below 3.7-IV2).
                _, b, incarnation_id, epoch, fenced, log_dirs = record
                s = self._with(
                    s,
                    brokerEpoch=except_at(s[BROKER_EPOCH], b, epoch),
                    registeredIncarnation=except_at(s[REGISTERED_INCARNATION], b, incarnation_id),
                    fenced=except_at(s[FENCED], b, fenced),
                    onlineDirs=except_at(s[ONLINE_DIRS], b, tuple(sorted(set(log_dirs)))),
                )
            elif record[0] == FEATURE_LEVEL:
                # FeatureControlManager.replay(FeatureLevelRecord)
                s = self._with(s, metadataVersion=record[1])
            else:
                _, b, fenced, log_dirs = record
                if fenced is not None:
                    s = self._with(s, fenced=except_at(s[FENCED], b, fenced))
                # ClusterControlManager.replay(BrokerRegistrationChangeRecord): an empty logDirs
                # means "no change", not "no directory online".
                if log_dirs and not (rebuilding and self.mutant == "replay_ignores_log_dirs"):
                    s = self._with(s, onlineDirs=except_at(s[ONLINE_DIRS], b, log_dirs))
        return s

    @property
    def metadata_log(self) -> bool:
        """Is the metadata log modeled (its committed image, its uncommitted batches)?"""
        return self.settings.failovers > 0

    def write(self, s, records, response=()):
        """QuorumController's write path for a handler's result: its records (those that change
        something) replayed into the controller's in-memory state, and its answer sent once they
        are committed.  Without a modeled log both happen at once.  With one, the batch waits
        among the uncommitted ones, an answer with it even when there are no records (a result
        read from uncommitted state is answered once what it read is committed); None, the
        handler waiting, while ``max_uncommitted`` batches are."""
        records = tuple(r for r in records if r is not None)
        if not self.metadata_log:
            n = self.replay(s, records)
            return self._with(n, network=bag_add(n[NETWORK], response)) if response else n
        if not records and not response:
            return s
        if len(s[UNCOMMITTED]) >= self.settings.max_uncommitted:
            return None
        n = self.replay(s, records)
        return self._with(n, uncommitted=s[UNCOMMITTED] + ((records, response),))

    @staticmethod
    def controller_image(s) -> tuple:
        """The controller's in-memory state, as a committed image holds it."""
        return tuple(s[i] for i in CONTROLLER_VARIABLES)

    @staticmethod
    def with_controller_image(s, image) -> tuple:
        """``s`` with the controller's variables taken from ``image``."""
        n = list(s)
        for i, value in zip(CONTROLLER_VARIABLES, image):
            n[i] = value
        return tuple(n)

    def rebuilt_image(self, s, image, records) -> tuple:
        """What replaying ``records`` from the metadata log onto ``image`` gives (``s`` lends the
        other variables, which replay does not touch)."""
        return self.controller_image(self.replay(self.with_controller_image(s, image), records, rebuilding=True))

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


def record_label(record: tuple) -> str:
    """A metadata record as a trace shows it: ``PartitionChange(p0, leader 1, isr [1])``."""
    kind = record[0]
    if kind == PARTITION_CHANGE:
        _, p, leader, isr, dirs = record
        said = [] if leader == NO_LEADER_CHANGE else [f"leader {leader}"]
        said += [] if isr is None else [f"isr {list(isr)}"]
        said += [] if dirs is None else [f"dirs {[dir_name(d) for d in dirs]}"]
        return f"PartitionChange(p{p}{', ' if said else ''}{', '.join(said)})"
    if kind == PARTITION_RECORD:
        _, p, leader, isr, dirs = record
        return f"Partition(p{p}, leader {leader}, isr {list(isr)}, dirs {[dir_name(d) for d in dirs]})"
    if kind == REGISTER_BROKER:
        _, b, incarnation_id, epoch, fenced, log_dirs = record
        return (f"RegisterBroker(b{b}, incarnation {incarnation_id}, epoch {epoch}, "
                f"{'fenced' if fenced else 'unfenced'}, logDirs {[dir_name(d) for d in log_dirs]})")
    if kind == FEATURE_LEVEL:
        return f"FeatureLevel(metadata.version {METADATA_VERSION_NAMES[record[1]]})"
    _, b, fenced, log_dirs = record
    said = [] if fenced is None else ["fenced" if fenced else "unfenced"]
    said += [f"logDirs {[dir_name(d) for d in log_dirs]}"] if log_dirs else []
    return f"BrokerRegistrationChange(b{b}{', ' if said else ''}{', '.join(said)})"

