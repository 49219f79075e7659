"""The data plane: replicas' logs, producers writing to leaders with acks=all, followers fetching,
high watermarks, and the ISR changes a leader asks for with AlterPartition (Kafka's Partition and
ReplicaManager, as far as the controller's safety rests on them).

A log is the leader epoch of each record, by offset: records written in one leader epoch come from
its one leader, so two logs holding the same epoch at an offset hold the same record there and
agree on everything before it.  A fetch is one step, request and answer together: the follower
truncates by leader epoch to where its log and the leader's agree, takes everything the leader has
after that (its log becomes the leader's), and the leader learns the follower's new log end offset
at once (in Kafka it learns it from the follower's next fetch).

With the model setting ``fetch = "batch"`` a fetch is Kafka's instead (AbstractFetcherThread,
Partition.fetchRecords, LeaderEpochFileCache): the follower sends its log end offset and the epoch of
its leader-epoch cache's last entry; the leader answers with the epoch and end offset at which their
logs diverge, which the follower truncates by (round after round, KIP-279), or else records the
fetch offset as the follower's position and answers with one record batch (here one record) and its
high watermark as it stood before the fetch.  A leader takes the lead explicitly
(LeaderStartsEpoch: Partition.makeLeader), assigning its epoch in its cache before it has a record.
"""

from __future__ import annotations

from .state import (
    REPLICAS,
    ACKED, ALTER_PARTITION, ALTER_PARTITION_RESPONSE, FOLLOWER_END, HIGH_WATERMARK,
    ISR, KNOWN_EPOCH, LEADER, LEADER_EPOCH, NETWORK, NO_LEADER, PARTITION, PARTITION_EPOCH, PRODUCED,
    REPLICA_LOG, RUNNING, STATUS, KEPT, FLUSHED, EPOCH_ENTRY, bag_add, bag_remove, except_at,
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
        if self.batch_fetches and s[FOLLOWER_END][b][p][0] != part[LEADER_EPOCH]:
            return None  # it has not taken the lead yet (LeaderStartsEpoch)
        return part

    @property
    def batch_fetches(self) -> bool:
        """Do followers fetch as Kafka's fetch protocol does (model setting fetch = "batch")?"""
        return self.settings.fetch == "batch"

    def epoch_cache(self, s, b, p) -> tuple:
        """Broker b's leader-epoch cache of p (LeaderEpochFileCache): <<epoch, start offset>> of each
        run of records of one leader epoch in its log, then the entry makeLeader assigned at the
        log's end, if no record has followed it yet."""
        log = s[REPLICA_LOG][b][p]
        entries = [(e, o) for o, e in enumerate(log) if o == 0 or log[o - 1] != e]
        if s[EPOCH_ENTRY] and s[EPOCH_ENTRY][b][p] != -1:
            entries.append((s[EPOCH_ENTRY][b][p], len(log)))
        return tuple(entries)

    def latest_epoch(self, s, b, p) -> int:
        """The epoch of the last entry of b's leader-epoch cache of p (UnifiedLog.latestEpoch), -1
        if it is empty: what a follower sends as its last fetched epoch, and what KIP-966's
        LastWrittenLeaderEpoch reads."""
        cache = self.epoch_cache(s, b, p)
        return cache[-1][0] if cache else -1

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
        if s[EPOCH_ENTRY]:
            # the cache's entry for its epoch now starts a run of records
            n = self._with(n, epochEntry=except_at(n[EPOCH_ENTRY], b, except_at(n[EPOCH_ENTRY][b], p, -1)))
        return self._leader_advances(n, b, p, part, self.follower_state(s, b, p, part))

    def fetching_from(self, s, b, p, leader, leader_epoch) -> bool:
        """Replica b can fetch p from ``leader`` in that leader epoch: it runs, its log is
        readable, and its metadata names that leader in that epoch."""
        known = self.broker_view(s, b)[PARTITION][p]
        if known is None or b not in known[REPLICAS] or not self.replica_readable(s, b, p):
            return False
        part = self.broker_view(s, b)[PARTITION][p]
        return part is not None and part[LEADER] == leader and part[LEADER_EPOCH] == leader_epoch

    def FollowerFetches(self, s, b, p):
        """Replica b fetches from the leader its metadata names, in that leader's epoch (the leader
        answers only in the epoch it leads in: else FENCED_LEADER_EPOCH or NOT_LEADER): it truncates
        by leader epoch and takes the rest, its high watermark becomes the leader's, and the leader
        learns its log end offset and may move its high watermark up."""
        part = self.broker_view(s, b)[PARTITION][p]
        if part is None or b not in part[REPLICAS] or not self.replica_readable(s, b, p):
            return None
        if part[LEADER] in (NO_LEADER, b):
            return None
        leader = part[LEADER]
        served = self.leading(s, leader, p)
        if served is None or served[LEADER_EPOCH] != part[LEADER_EPOCH]:
            return None
        if self.batch_fetches:
            return self._fetches_batch(s, b, p, leader, served)
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

    def _fetches_batch(self, s, b, p, leader, served):
        """FollowerFetches under Kafka's fetch protocol: the follower's fetch offset is its log end
        offset, its last fetched epoch its cache's latest (AbstractFetcherThread); the leader checks
        that epoch against its own cache (Partition.readRecords)."""
        mine, theirs = s[REPLICA_LOG][b][p], s[REPLICA_LOG][leader][p]
        fetch_offset = len(mine)
        last_fetched = self.latest_epoch(s, b, p)
        if last_fetched != -1:
            epoch, end = end_offset_for(self.epoch_cache(s, leader, p), len(theirs), last_fetched)
            if epoch == -1 or end == -1:
                # OFFSET_OUT_OF_RANGE: the leader cannot place the epoch.  The follower truncates to
                # the leader's log end offset if its own is beyond it, no epoch compared, and else
                # fetches again as it was (fetchOffsetAndTruncate)
                return self._truncated(s, b, p, len(theirs)) if len(theirs) < fetch_offset else None
            if epoch < last_fetched or end < fetch_offset:
                # a diverging epoch: the leader neither reads nor records the follower's position
                # (KAFKA-13141), and the follower truncates and fetches again
                if self.mutant == "single_truncation":
                    # KIP-101's one truncation: to the lesser of the leader's end offset and its
                    # own, no epoch compared, then a fetch from there
                    offset = min(end, fetch_offset)
                    if offset < fetch_offset:
                        return self._truncated(s, b, p, offset)
                    return self._reads_batch(s, b, p, leader, served)
                hw = min(s[HIGH_WATERMARK][leader][p], fetch_offset)
                exposed = self._with(s, highWatermark=except_at(s[HIGH_WATERMARK], b, except_at(s[HIGH_WATERMARK][b], p, hw)))
                if self.mutant == "diverging_epoch_ignored":
                    # taken for an empty answer: the high watermark, and no truncation
                    return None if exposed == s else exposed
                if self.mutant == "high_watermark_before_truncation" and exposed != s:
                    # processPartitionData before truncateOnFetchResponse: the high watermark first
                    return exposed
                return self._truncated(s, b, p, self._truncation_offset(s, b, p, epoch, end))
        return self._reads_batch(s, b, p, leader, served)

    def _reads_batch(self, s, b, p, leader, served):
        """The leader records the fetch offset as the follower's log end offset, with its broker
        epoch (KIP-903), tries to take it into the ISR, and may move its high watermark up; it
        answers with the high watermark it had before (readRecords' initialHighWatermark) and the
        next record batch (here one record), which the follower appends."""
        mine, theirs = s[REPLICA_LOG][b][p], s[REPLICA_LOG][leader][p]
        fetch_offset = len(mine)
        hw = s[HIGH_WATERMARK][leader][p]
        state = self.follower_state(s, leader, p, served)
        state = (state[0], state[1], except_at(state[2], b, fetch_offset), except_at(state[3], b, s[KNOWN_EPOCH][b]))
        n = s
        if (b not in served[ISR] and self.room(s) and not self.alter_partition_pending(s, leader, p)
                and self.joins_isr(s, leader, p, served, state, b)):
            # Partition.updateFollowerFetchState: maybeExpandIsr, before the high watermark moves
            members = set(served[ISR]) | {b}
            n = self._with(n, network=bag_add(n[NETWORK], self.alter_partition(s, leader, p, served, state, members)))
        n = self._leader_advances(n, leader, p, served, state)
        log = mine + theirs[fetch_offset:fetch_offset + 1]
        if len(log) > len(mine):
            # appending past the cache's last entry replaces an entry no record followed
            n = self._with(n, replicaLog=except_at(n[REPLICA_LOG], b, except_at(n[REPLICA_LOG][b], p, log)),
                           epochEntry=except_at(n[EPOCH_ENTRY], b, except_at(n[EPOCH_ENTRY][b], p, -1)))
        n = self._with(n, highWatermark=except_at(n[HIGH_WATERMARK], b, except_at(n[HIGH_WATERMARK][b], p, min(hw, len(log)))))
        return None if n == s else n

    def _truncation_offset(self, s, b, p, epoch, end) -> int:
        """Where follower b truncates to on the leader's diverging ``epoch`` and its ``end`` offset
        (AbstractFetcherThread.getOffsetTruncationState): if its own cache holds that epoch, to
        the lesser of the two end offsets; if not, to the end of its largest epoch below it, and it
        asks again (KIP-279); if its cache has nothing that low, to the leader's offset."""
        leo = len(s[REPLICA_LOG][b][p])
        own_epoch, own_end = end_offset_for(self.epoch_cache(s, b, p), leo, epoch)
        if own_end == -1:
            return min(end, leo)
        if own_epoch != epoch:
            return min(own_end, leo)
        return min(own_end, end, leo)

    def _truncated(self, s, b, p, offset):
        """Broker b's log of p truncated to ``offset`` (UnifiedLog.truncateTo): its cache loses
        every entry from there, the entry makeLeader assigned at the log's end with them (so even
        a truncation to the log end offset takes that one away); the high watermark and the flush
        point come back to the log's end.  None if nothing changes."""
        log = s[REPLICA_LOG][b][p][:offset]
        n = self._with(s, replicaLog=except_at(s[REPLICA_LOG], b, except_at(s[REPLICA_LOG][b], p, log)),
                       epochEntry=except_at(s[EPOCH_ENTRY], b, except_at(s[EPOCH_ENTRY][b], p, -1)),
                       highWatermark=except_at(s[HIGH_WATERMARK], b, except_at(s[HIGH_WATERMARK][b], p,
                                                                               min(s[HIGH_WATERMARK][b][p], len(log)))))
        if s[FLUSHED]:
            n = self._with(n, flushed=except_at(n[FLUSHED], b, except_at(n[FLUSHED][b], p, min(s[FLUSHED][b][p], len(log)))))
        return None if n == s else n

    def LeaderStartsEpoch(self, s, b, p):
        """Broker b applies the metadata that names it p's leader in a new leader epoch
        (Partition.makeLeader; model setting fetch = "batch"): the epoch starts at its log end
        offset, it knows nothing of its followers yet, and it assigns the epoch from its log end
        offset in its leader-epoch cache, so that a follower holding records of a later epoch than
        any record it has can truncate (KAFKA-7415).  Until then it acts as no leader: it takes
        no record and answers no fetch."""
        if not self.batch_fetches:
            return None
        part = self.broker_view(s, b)[PARTITION][p]
        if part is None or part[LEADER] != b or not self.replica_readable(s, b, p):
            return None
        epoch = part[LEADER_EPOCH]
        if s[FOLLOWER_END][b][p][0] == epoch:
            return None
        log = s[REPLICA_LOG][b][p]
        state = (epoch, len(log), (-1,) * len(self.brokers), (-1,) * len(self.brokers))
        n = s
        if (not log or log[-1] != epoch) and self.mutant != "new_epoch_not_cached":
            # LeaderEpochFileCache.assign: an entry at the log's end replaces one there before
            n = self._with(n, epochEntry=except_at(n[EPOCH_ENTRY], b, except_at(n[EPOCH_ENTRY][b], p, epoch)))
        # makeLeader ends with maybeIncrementLeaderHW: alone in its ISR, it commits what it holds
        return self._leader_advances(n, b, p, part, state)

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
        known = self.broker_view(s, b)[PARTITION][p]
        if r == b or known is None or r not in known[REPLICAS] or not self.room(s):
            return None
        part = self.leading(s, b, p)
        if part is None or self.alter_partition_pending(s, b, p):
            return None
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
            # Kafka's leader tries an expansion as it serves the follower's fetch (maybeExpandIsr);
            # with fetch = "batch" it does so in the fetch itself (FollowerFetches)
            if self.batch_fetches or not self.fetching_from(s, r, p, b, part[LEADER_EPOCH]):
                return None
            if not self.joins_isr(s, b, p, part, state, r):
                return None
            members = set(part[ISR]) | {r}
        return self._with(s, network=bag_add(s[NETWORK], self.alter_partition(s, b, p, part, state, members)))

    def joins_isr(self, s, b, p, part, state, r) -> bool:
        """Leader b, knowing ``state`` of its followers, takes follower r into the ISR
        (Partition.isFollowerInSync and isReplicaIsrEligible): r holds the high watermark and all
        since the leader's epoch began (KAFKA-7128; under the mutant isr_join_below_epoch_start
        only the high watermark), and b's metadata has it registered and unfenced, not shutting
        down (KIP-841)."""
        end = state[2][r]
        if end < s[HIGH_WATERMARK][b][p] or (end < state[1] and self.mutant != "isr_join_below_epoch_start"):
            return False
        return self.active(self.broker_view(s, b), r)

    def alter_partition(self, s, b, p, part, state, members) -> tuple:
        """Leader b's AlterPartition proposing the ISR ``members``: each member with the broker
        epoch of its last fetch (KIP-903; the leader itself, its own), and the leader's recovery
        state RECOVERED, which makeLeader set on taking the lead."""
        epochs = except_at(state[3], b, s[KNOWN_EPOCH][b])
        isr = tuple((x, epochs[x]) for x in part[REPLICAS] if x in members)
        return (ALTER_PARTITION, b, s[KNOWN_EPOCH][b], p, part[LEADER_EPOCH], part[PARTITION_EPOCH], isr, False)

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


def end_offset_for(cache: tuple, log_end: int, requested: int) -> tuple:
    """LeaderEpochFileCache.endOffsetFor: <<the largest epoch at most ``requested``, the start of
    the next epoch>> (the log end offset for the latest epoch itself), <<-1, -1>> when the cache
    cannot place it (nothing above it: UNDEFINED_EPOCH_OFFSET); an epoch below every entry gives
    <<requested, the first entry's start>>."""
    if requested == -1 or not cache:
        return (-1, -1)
    if cache[-1][0] == requested:
        return (requested, log_end)
    higher = [start for epoch, start in cache if epoch > requested]
    if not higher:
        return (-1, -1)
    floor = [epoch for epoch, _ in cache if epoch <= requested]
    return (floor[-1] if floor else requested, higher[0])


def agreement(mine: tuple, theirs: tuple) -> int:
    """How long a prefix two logs share: records of one leader epoch at one offset are one record."""
    n = 0
    while n < min(len(mine), len(theirs)) and mine[n] == theirs[n]:
        n += 1
    return n
