"""The data plane: replicas' logs, producers writing to leaders with acks=all, followers fetching,
high watermarks, and the ISR changes a leader asks for with AlterPartition (Kafka's Partition and
ReplicaManager, as far as the controller's safety rests on them).

A log is the leader epoch of each record, by offset: records written in one leader epoch come from
its one leader, so two logs holding the same epoch at an offset hold the same record there and
agree on everything before it.  A fetch is one step, request and answer together: the follower
truncates by leader epoch to where its log and the leader's agree, takes everything the leader has
after that (its log becomes the leader's), and the leader learns the follower's new log end offset
at once (in Kafka it learns it from the follower's next fetch).
"""

from __future__ import annotations

from .state import (
    ACKED, ALTER_PARTITION, ALTER_PARTITION_RESPONSE, FOLLOWER_END, HIGH_WATERMARK,
    ISR, KNOWN_EPOCH, LEADER, LEADER_EPOCH, NETWORK, NO_LEADER, PARTITION, PARTITION_EPOCH, PRODUCED,
    REPLICA_LOG, RUNNING, STATUS, KEPT, FLUSHED, bag_add, bag_remove, except_at,
)


class DataPlaneActions:
    """One method per data-plane action of spec/KRaftJBOD.tla."""

    @property
    def data_plane(self) -> bool:
        """Are replicas' logs modeled (records to produce)?"""
        return self.settings.records > 0

    @property
    def tracks_recovery(self) -> bool:
        """Can a leader be RECOVERING (LeaderRecoveryState)?  Only an unclean, a last-known-leader or
        a designated election (an operator's or the recovery tool's) makes one, and the state is
        kept with the data plane only: without logs nothing reads it."""
        s = self.settings
        return self.data_plane and (s.elr or s.designated or s.unclean_election != "off" or s.unclean_toggles > 0
                                    or s.recovery_tool > 0)

    @property
    def no_follower_state(self):
        """A leader's followerEnd before it has led: no epoch, nothing heard: each follower's log
        end offset -1 (Kafka's UnknownOffset, no fetch in this leader epoch), and the broker
        epoch its last fetch carried, -1 (unknown: AlterPartition then skips its check)."""
        return (-1, 0, (-1,) * len(self.brokers), (-1,) * len(self.brokers))

    def replica_readable(self, s, b, p) -> bool:
        """Broker b runs and holds partition p's log on a disk that has not failed."""
        return s[STATUS][b] == RUNNING and any(self.slot_online(s, b, i) for i in self.main_slots(s, b, p))

    def leading(self, s, b, p):
        """The partition as broker b leads it: the record of its metadata if that names b the leader
        and b can serve the log; else None."""
        part = self.broker_view(s, b)[PARTITION][p]
        if part is None or part[LEADER] != b or not self.replica_readable(s, b, p):
            return None
        return part

    def follower_state(self, s, b, p, part):
        """What leader b knows of its followers in the leader epoch of ``part``: a leader starts
        each epoch knowing nothing, its epoch starting at its log end offset (Partition.makeLeader)."""
        state = s[FOLLOWER_END][b][p]
        if state[0] == part[LEADER_EPOCH]:
            return state
        return (part[LEADER_EPOCH], len(s[REPLICA_LOG][b][p]), (-1,) * len(self.brokers), (-1,) * len(self.brokers))

    def pending_isr(self, s, b, p, leader_epoch) -> tuple:
        """The ISR that leader b's AlterPartition in flight proposes, in its leader epoch (Kafka's
        PendingExpandIsr/PendingShrinkIsr until the answer comes back); () if none."""
        for m in s[NETWORK]:
            if m[0] == ALTER_PARTITION and m[1] == b and m[3] == p and m[4] == leader_epoch:
                return tuple(r for r, _ in m[6])
            if m[0] == ALTER_PARTITION_RESPONSE and m[1] == b and m[3] == p and m[4] == leader_epoch:
                return m[5]
        return ()

    def alter_partition_pending(self, s, b, p) -> bool:
        return any(m[0] in (ALTER_PARTITION, ALTER_PARTITION_RESPONSE) and m[1] == b and m[3] == p for m in s[NETWORK])

    def _leader_advances(self, s, b, p, part, state):
        """Leader b, knowing ``state`` of its followers, moves its high watermark up to the least
        log end offset of its maximal ISR (the ISR, and the members its pending AlterPartition
        adds: Partition.maybeIncrementLeaderHW); the records of its own leader epoch that the
        high watermark passes are acknowledged to their producers.  Under min.insync.replicas
        the high watermark stays (KAFKA-15583, KIP-966: isUnderMinIsr reads the ISR the
        metadata holds)."""
        log = s[REPLICA_LOG][b][p]
        maximal = set(part[ISR]) | set(self.pending_isr(s, b, p, part[LEADER_EPOCH])) | {b}
        target = min(len(log) if r == b else state[2][r] for r in maximal)
        old = s[HIGH_WATERMARK][b][p]
        n = self._with(s, followerEnd=except_at(s[FOLLOWER_END], b, except_at(s[FOLLOWER_END][b], p, state)))
        if target <= old or len(part[ISR]) < self.min_isr(self.broker_view(s, b)):
            return n
        n = self._with(n, highWatermark=except_at(n[HIGH_WATERMARK], b, except_at(n[HIGH_WATERMARK][b], p, target)))
        epoch = part[LEADER_EPOCH]
        newly = {(o, epoch, b, KEPT) for o in range(old, target) if log[o] == epoch}
        if not newly:
            return n
        acked = tuple(sorted(set(n[ACKED][p]) | newly))
        return self._with(n, acked=except_at(n[ACKED], p, acked))

    def LeaderAppendsRecord(self, s, b, p):
        """A producer's record (acks=all) reaches the leader, which appends it in its leader epoch;
        with fewer than min.insync.replicas in its ISR it refuses it (NOT_ENOUGH_REPLICAS)."""
        if s[PRODUCED] >= self.settings.records:
            return None
        part = self.leading(s, b, p)
        if part is None or len(part[ISR]) < self.min_isr(self.broker_view(s, b)):
            return None
        log = s[REPLICA_LOG][b][p] + (part[LEADER_EPOCH],)
        n = self._with(s, replicaLog=except_at(s[REPLICA_LOG], b, except_at(s[REPLICA_LOG][b], p, log)),
                       produced=s[PRODUCED] + 1)
        return self._leader_advances(n, b, p, part, self.follower_state(s, b, p, part))

    def fetching_from(self, s, b, p, leader, leader_epoch) -> bool:
        """Replica b can fetch p from ``leader`` in that leader epoch: it runs, its log is
        readable, and its metadata names that leader in that epoch."""
        if b not in self.replicas[p] or not self.replica_readable(s, b, p):
            return False
        part = self.broker_view(s, b)[PARTITION][p]
        return part is not None and part[LEADER] == leader and part[LEADER_EPOCH] == leader_epoch

    def FollowerFetches(self, s, b, p):
        """Replica b fetches from the leader its metadata names, in that leader's epoch (the leader
        answers only in the epoch it leads in: else FENCED_LEADER_EPOCH or NOT_LEADER): it truncates
        by leader epoch and takes the rest, its high watermark becomes the leader's, and the leader
        learns its log end offset and may move its high watermark up."""
        if b not in self.replicas[p] or not self.replica_readable(s, b, p):
            return None
        part = self.broker_view(s, b)[PARTITION][p]
        if part is None or part[LEADER] in (NO_LEADER, b):
            return None
        leader = part[LEADER]
        served = self.leading(s, leader, p)
        if served is None or served[LEADER_EPOCH] != part[LEADER_EPOCH]:
            return None
        log = s[REPLICA_LOG][leader][p]
        n = self._with(s, replicaLog=except_at(s[REPLICA_LOG], b, except_at(s[REPLICA_LOG][b], p, log)))
        if s[FLUSHED]:
            # truncation moves the flush point back to where the logs agree (Log.truncateTo); what
            # the fetch appends is not flushed
            n = self._with(n, flushed=except_at(n[FLUSHED], b, except_at(n[FLUSHED][b], p, min(
                s[FLUSHED][b][p], agreement(s[REPLICA_LOG][b][p], log)))))
        state = self.follower_state(s, leader, p, served)
        # the fetch carries the follower's broker epoch, which the leader keeps with its offset (KIP-903)
        state = (state[0], state[1], except_at(state[2], b, len(log)), except_at(state[3], b, s[KNOWN_EPOCH][b]))
        n = self._leader_advances(n, leader, p, served, state)
        hw = n[HIGH_WATERMARK][leader][p]
        n = self._with(n, highWatermark=except_at(n[HIGH_WATERMARK], b, except_at(n[HIGH_WATERMARK][b], p, hw)))
        return None if n == s else n

    def BrokerFlushesLog(self, s, b, p):
        """Broker b's log of p reaches its disk up to its end (Kafka's log flusher, a segment
        roll, or the OS writing its page cache back; the machine may run while the process is
        down): a later power loss keeps it.  Not on a failed disk."""
        log = s[REPLICA_LOG][b][p]
        if s[FLUSHED][b][p] == len(log) or not any(self.slot_online(s, b, i) for i in self.main_slots(s, b, p)):
            return None
        return self._with(s, flushed=except_at(s[FLUSHED], b, except_at(s[FLUSHED][b], p, len(log))))

    def LeaderSendsAlterPartition(self, s, b, p, r):
        """The leader asks the controller to take follower r out of the ISR (it lags: its log end
        offset is short of the leader's, and it no longer fetches from the leader) or into it (it has caught up: it holds the high watermark
        and everything since the leader's epoch began, and the leader's metadata has it registered
        and unfenced, KIP-841), with its leader and partition epochs and each member's broker
        epoch (KIP-903).  One AlterPartition per partition in flight."""
        if r == b or r not in self.replicas[p] or not self.room(s):
            return None
        part = self.leading(s, b, p)
        if part is None or self.alter_partition_pending(s, b, p):
            return None
        view = self.broker_view(s, b)
        state = self.follower_state(s, b, p, part)
        end = state[2][r]
        if r in part[ISR]:
            if end >= len(s[REPLICA_LOG][b][p]):
                return None  # caught up: it stays
            if self.fetching_from(s, r, p, b, part[LEADER_EPOCH]):
                # replica.lag.time.max.ms, abstracted: a follower still fetching from the leader
                # catches up before its lag time runs out (else the ISR could flap forever, each
                # change a new partition epoch); one that cannot fetch falls out
                return None
            members = set(part[ISR]) - {r}
        else:
            # Kafka's leader tries an expansion as it serves the follower's fetch (maybeExpandIsr)
            if not self.fetching_from(s, r, p, b, part[LEADER_EPOCH]):
                return None
            if end < s[HIGH_WATERMARK][b][p] or end < state[1]:
                return None
            if not self.active(view, r):
                return None  # fenced or shutting down (Partition.isReplicaIsrEligible)
            members = set(part[ISR]) | {r}
        # each member with the broker epoch of its last fetch (KIP-903; the leader itself, its own)
        epochs = except_at(state[3], b, s[KNOWN_EPOCH][b])
        isr = tuple((x, epochs[x]) for x in self.replicas[p] if x in members)
        # the leader's recovery state: RECOVERED, which makeLeader set on taking the lead
        m = (ALTER_PARTITION, b, s[KNOWN_EPOCH][b], p, part[LEADER_EPOCH], part[PARTITION_EPOCH], isr, False)
        return self._with(s, network=bag_add(s[NETWORK], m))

    def BrokerReceivesAlterPartitionResponse(self, s, m):
        """The answer ends the leader's pending ISR change (the ISR it accepted the leader reads
        from the metadata, which already holds it: the controller answers once it is committed),
        and the leader, if it still leads in that epoch, moves its high watermark up over the ISR
        it has now (Partition.handleAlterPartitionUpdate)."""
        b, p, leader_epoch = m[1], m[3], m[4]
        n = self._with(s, network=bag_remove(s[NETWORK], m))
        part = self.leading(n, b, p)
        if part is None or part[LEADER_EPOCH] != leader_epoch:
            return n
        return self._leader_advances(n, b, p, part, self.follower_state(n, b, p, part))

    def LeaderAdvancesHighWatermark(self, s, b, p):
        """The leader applies an ISR the controller shrank (a fenced follower, a failed directory)
        and moves its high watermark up over it (the replica manager's makeLeader on a metadata
        change): enabled only when that moves it."""
        part = self.leading(s, b, p)
        if part is None:
            return None
        n = self._leader_advances(s, b, p, part, self.follower_state(s, b, p, part))
        return None if n[HIGH_WATERMARK] == s[HIGH_WATERMARK] else n


def agreement(mine: tuple, theirs: tuple) -> int:
    """How long a prefix two logs share: records of one leader epoch at one offset are one record."""
    n = 0
    while n < min(len(mine), len(theirs)) and mine[n] == theirs[n]:
        n += 1
    return n
