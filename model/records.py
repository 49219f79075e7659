"""Metadata records and their replay, as Kafka's controller writes them: a handler computes its records
from the image it read (PartitionChangeBuilder), and replay applies them in order, one rule per record
kind (ReplicationControlManager.replay, ClusterControlManager.replay)."""

from __future__ import annotations

from .state import (
    BROKER_EPOCH, DIRS, FENCED, ISR, LEADER, LEADER_EPOCH, NONE, NO_LEADER, NO_LEADER_CHANGE,
    ONLINE_DIRS, PARTITION, PARTITION_CHANGE, PARTITION_EPOCH, PARTITION_RECORD,
    REGISTERED_INCARNATION, REGISTER_BROKER, except_at,
)


class Records:
    """Building PartitionChangeRecords from an image, and replaying every record kind."""

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
            else:
                _, b, fenced, log_dirs = record
                if fenced is not None:
                    s = self._with(s, fenced=except_at(s[FENCED], b, fenced))
                # ClusterControlManager.replay(BrokerRegistrationChangeRecord): an empty logDirs
                # means "no change", not "no directory online".
                if log_dirs:
                    s = self._with(s, onlineDirs=except_at(s[ONLINE_DIRS], b, log_dirs))
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
