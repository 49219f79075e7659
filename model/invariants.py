"""What must hold: invariants (state predicates) and step properties ([][P]_vars, TLC PROPERTY),
each named like its TLA+ operator; spec/README.md gives each one's source."""

from __future__ import annotations

from .state import (
    REPLICAS,
    ELECTED_BY_TOOL, TOOL, ACKED, ELR, LAST_KNOWN_ELR, RECOVERING, HIGH_WATERMARK, REPLICA_LOG, BROKER_EPOCH, COMMITTED_IMAGE, DIRS, DIR_IDS, DIR_STATE, FAILED_ACKED, FENCED, FUTURE, INCARNATION, ISR, LEADER,
    LEADER_EPOCH, LOGS, METADATA_VERSION, MV_3_5, NETWORK, NONE, NO_LEADER, ONLINE_DIRS, PARTITION,
    PARTITION_EPOCH, QUEUED, REGISTERED_INCARNATION, RUNNING, STATUS, UNCOMMITTED, FAILOVERS_DONE, bag_remove,
    KEPT, holds, CORDONED, REGISTERED_CORDONS, REPORTED_CORDONS, DELETED,
)
from .data import agreement
from .uuids import FIRST_REAL, RESERVED3, UNASSIGNED


class Invariants:
    """State predicates, then step properties checked on every transition."""

    def _created(self, s):
        return ((p, part) for p, part in enumerate(s[PARTITION]) if part is not None)

    def ControllerStateIsReplayedLog(self, s) -> bool:
        """The active controller's state is what replaying the metadata log gives: the committed
        image with the uncommitted batches replayed onto it.  A standby, or a controller taking
        over, rebuilds exactly this state (QuorumController replays every record it writes)."""
        if not s[COMMITTED_IMAGE]:
            return True
        records = tuple(record for batch, _ in s[UNCOMMITTED] for record in batch)
        return self.controller_image(s) == self.rebuilt_image(s, s[COMMITTED_IMAGE], records)

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
        """The ISR is a subset of the replica set, non-empty without ELR (KIP-966 lets an ISR
        shrink to nothing, its members kept as eligible leader replicas)."""
        return all((part[ISR] or self.settings.elr) and set(part[ISR]) <= set(part[REPLICAS])
                   for p, part in self._created(s))

    def IsrElrDisjoint(self, s) -> bool:
        """With ELR: no replica is both in the ISR and an eligible leader replica (KIP-966)."""
        return not self.settings.elr or all(not set(part[ISR]) & set(part[ELR]) for _, part in self._created(s))

    def ElrOnlyBelowMinIsr(self, s) -> bool:
        """With ELR: the ELR is empty while the ISR has min.insync.replicas members (KIP-966:
        the ELR holds what the ISR lost below min.insync.replicas)."""
        return not self.settings.elr or all(
            not part[ELR] for _, part in self._created(s) if len(part[ISR]) >= self.min_isr(s))

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
        (registered, unfenced, not in controlled shutdown, on an online directory): otherwise it
        is needlessly unavailable."""
        for p, part in self._created(s):
            if part[LEADER] != NO_LEADER:
                continue
            # with ELR, an empty ISR elects from the eligible leader replicas; an election looks at
            # the replicas only (an ELR may keep a broker a reassignment removed)
            candidates = part[ISR] or (part[ELR] if self.settings.elr else ())
            for r in (r for r in candidates if r in part[REPLICAS]):
                if self.active(s, r) and self.dir_online_in_metadata(s, r, self.replica_dir(part, p, r)):
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
                if b not in part[REPLICAS] or s[QUEUED][b][p] != NONE:
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

    def HighWatermarkWithinLog(self, s) -> bool:
        """No replica's high watermark is beyond its log end offset."""
        return all(hw <= len(log) for hws, logs in zip(s[HIGH_WATERMARK], s[REPLICA_LOG]) for hw, log in zip(hws, logs))

    def CommittedRecordsSurvive(self, s) -> bool:
        """Every record ever acknowledged to its producer (below its leader's high watermark,
        acks=all) is in the log of every broker that acts as the partition's leader (running,
        named leader by its metadata, its log readable): a clean election only ever picks a
        replica that holds it, and followers truncate to what their leader holds.  A record an
        election gave up, or a replaced disk took the last copy of, stays in the reference: it
        is lost, and its entry names the loss (LossesDeclared checks that every loss is one)."""
        return self._acting_leaders_hold(s, lambda e: True)

    def LossesDeclared(self, s) -> bool:
        """Every acknowledged record that a broker acting as the partition's leader lacks was
        given up by a declared loss: an election that declares itself unclean (its new leader
        RECOVERING) whose new leader lacked it, or a replaced disk that took its last copy.  Any
        other way of losing a committed record is a bug; CommittedRecordsSurvive counts these
        losses too."""
        return self._acting_leaders_hold(s, lambda e: e[3] == KEPT)

    def _acting_leaders_hold(self, s, judged) -> bool:
        """Every broker acting as a partition's leader holds each acknowledged record ``judged`` picks."""
        if not s[ACKED]:
            return True
        for p, entries in enumerate(s[ACKED]):
            entries = [e for e in entries if judged(e)]
            if not entries:
                continue
            for b in self.brokers:
                if self.leading(s, b, p) is None:
                    continue
                log = s[REPLICA_LOG][b][p]
                if not all(holds(log, e) for e in entries):
                    return False
        return True

    def IsrHoldsCommittedRecords(self, s) -> bool:
        """Every ISR member running as the incarnation the controller registered, its log
        readable, holds every record ever acknowledged: the ISR is the set a clean election
        picks from, so each member must hold what was committed (KIP-903: a member restarted
        without its log must not be let back in on the strength of its old incarnation's
        fetches).  A record lost to an unclean election or a replaced disk counts: the ISR that
        election left lacks it."""
        if not s[ACKED]:
            return True
        for p, part in self._created(s):
            entries = s[ACKED][p]
            if not entries:
                continue
            for r in part[ISR]:
                if s[REGISTERED_INCARNATION][r] != s[INCARNATION][r] or not self.replica_readable(s, r, p):
                    continue
                log = s[REPLICA_LOG][r][p]
                if not all(holds(log, e) for e in entries):
                    return False
        return True

    def OneLeaderCommitsPerEpoch(self, s) -> bool:
        """The records acknowledged in a leader epoch were all acknowledged by one broker: two
        brokers that both think they lead in one epoch never both commit (the controller design's
        "multiple leaders in transition")."""
        for entries in s[ACKED]:
            leaders = {}
            for _, epoch, b, _ in entries:
                if leaders.setdefault(epoch, b) != b:
                    return False
        return True

    def RegistrationHoldsReportedCordons(self, s) -> bool:
        """KIP-1066: a registration's cordoned directories are those its broker last reported, or
        null, before its incarnation has reported any; what an operator uncordons is uncordoned at
        the controller too, and a cordoned directory is not dropped for being offline (KAFKA-20441)."""
        if not s[REGISTERED_CORDONS]:
            return True
        return all(not s[REGISTERED_CORDONS][b] or s[REGISTERED_CORDONS][b] == s[REPORTED_CORDONS][b]
                   for b in self.brokers if self.registered(s, b))

    # -----------------------------------------------------------------------------------------
    # Step properties ([][P]_vars, TLC PROPERTY), checked on every transition
    # -----------------------------------------------------------------------------------------
    @staticmethod
    def _controller_vars(s):
        """The controller's state: in memory, and its metadata log (TLA+'s controllerVars)."""
        return (s[BROKER_EPOCH], s[FENCED], s[ONLINE_DIRS], s[PARTITION], s[REGISTERED_INCARNATION], s[METADATA_VERSION], s[REGISTERED_CORDONS],
                s[REPORTED_CORDONS],
                s[COMMITTED_IMAGE], s[UNCOMMITTED], s[FAILOVERS_DONE])

    def StaleEpochChangesNothing(self, s, action, t) -> bool:
        """A heartbeat, AssignReplicasToDirs, AlterReplicaState or AlterPartition whose broker epoch
        is not the broker's registered one writes nothing and answers nothing (KIP-589)."""
        if action[0] not in ("ControllerHandlesHeartbeat", "ControllerHandlesAssignment", "ControllerHandlesAlterReplicaState",
                             "ControllerHandlesAlterPartition"):
            return True
        m = action[1]
        if self.epoch_is_current(s, m[1], m[2]):
            return True
        return self._controller_vars(s) == self._controller_vars(t) and t[NETWORK] == bag_remove(s[NETWORK], m)

    def EpochsNeverDecrease(self, s, action, t) -> bool:
        """Broker epochs (registered and incarnation), leader epochs and partition epochs never
        go back: every fencing and conditional update in Kafka relies on it.  In the metadata
        brokers read: with the log modeled, the committed image (a failover drops uncommitted
        changes, which nobody outside the controller has seen)."""
        s, t = self.published(s), self.published(t)
        # Unchanged variables are the same objects (actions copy only what they change).
        if t[BROKER_EPOCH] is s[BROKER_EPOCH] and t[INCARNATION] is s[INCARNATION] and t[PARTITION] is s[PARTITION]:
            return True
        for b in self.brokers:
            if t[BROKER_EPOCH][b] < s[BROKER_EPOCH][b] or t[INCARNATION][b] < s[INCARNATION][b]:
                return False
        for p in self.partitions:
            a, c = s[PARTITION][p], t[PARTITION][p]
            if a is None or (c is None and t[DELETED] and t[DELETED][p]):
                continue  # not yet created, or its topic deleted
            if c is None or c[LEADER_EPOCH] < a[LEADER_EPOCH] or c[PARTITION_EPOCH] < a[PARTITION_EPOCH]:
                return False
        return True

    def UpdatesOnlyOfflinePartitions(self, s, action, t) -> bool:
        """A heartbeat changes leader/ISR only of partitions whose sender's replica is in a
        directory that the heartbeat took offline, and only by removing the sender; or, when it
        unfences the sender, elects leaders of leaderless partitions; or, when it fences the
        sender or asks to shut down (a controlled shutdown, or a shutdown at once), only by
        removing the sender."""
        if action[0] != "ControllerHandlesHeartbeat":
            return True
        b = action[1][1]
        unfenced_now = s[FENCED][b] and not t[FENCED][b]
        leaves = action[1][5] or (not s[FENCED][b] and t[FENCED][b])
        for p in self.partitions:
            a, c = s[PARTITION][p], t[PARTITION][p]
            if a is None or (a[LEADER], a[ISR]) == (c[LEADER], c[ISR]):
                continue
            if b in a[REPLICAS]:
                md = self.replica_dir(a, p, b)
                went_offline = md in s[ONLINE_DIRS][b] and md not in t[ONLINE_DIRS][b]
                if (went_offline or leaves) and set(c[ISR]) >= set(a[ISR]) - {b}:
                    continue
            # an election from the ELR, of the last known leader (KIP-966) or an unclean one makes
            # its leader the ISR alone
            alone = c[LEADER] != NO_LEADER and c[ISR] == (c[LEADER],)
            from_elr = self.settings.elr and alone and c[LEADER] in set(a[ISR]) | set(a[ELR]) | set(a[LAST_KNOWN_ELR])
            unclean = self.unclean_enabled(s) and alone
            if unfenced_now and a[LEADER] == NO_LEADER and (c[ISR] == a[ISR] or from_elr or unclean):
                continue
            return False
        return True

    def CleanLeaderFromIsrOrElr(self, s, action, t) -> bool:
        """A new leader comes from the ISR (or the ISR the leader's AlterPartition asks for), or
        from the ELR, and then as the ISR alone: the ISR was empty (KIP-966's isValidNewLeader).
        Any other election is unclean, and happens only where an operator or the settings allow
        one: a designated election, an admin's unclean election, or the topic's
        unclean.leader.election.enable (KIP-1275: with it off "the controller will do nothing and
        the partition will remain offline until an ELR / ISR partition recovers"); with the data
        plane its leader is RECOVERING (KIP-704: the election knows it is unclean)."""
        if t[PARTITION] is s[PARTITION] or action[0] == "ControllerFailsOver":
            return True
        for p in self.partitions:
            a, c = s[PARTITION][p], t[PARTITION][p]
            if a is None or c is None or c[LEADER] in (NO_LEADER, a[LEADER]):
                continue
            clean = set(a[ISR])
            if action[0] == "ControllerHandlesAlterPartition" and action[1][3] == p:
                clean |= {r for r, _ in action[1][6]}
            if c[LEADER] in clean or (c[LEADER] in a[ELR] and c[ISR] == (c[LEADER],)):
                continue
            allowed = action[0] in ("AdminElectsDesignatedLeader", "AdminElectsUncleanLeader", "ToolElectsLeader") or (
                self.unclean_enabled(s))
            if not allowed or (self.tracks_recovery and not c[RECOVERING]):
                return False
        return True

    def ElrLeftOnlyForCause(self, s, action, t) -> bool:
        """With ELR, a replica leaves the eligible leader replicas only by joining the ISR, when the
        ISR is back at min.insync.replicas, when its broker registers a new incarnation after an
        unclean shutdown, when an election replaces the leader and clears them, or when
        min.insync.replicas changes, under which they were chosen (KIP-966: the
        ELR keeps, while the ISR is short, the replicas that hold everything committed; a clean
        shutdown loses nothing), or once a reassignment has taken it out of the replicas.  The
        controller reads min.insync.replicas as no more than the replicas the partition had
        (getTopicEffectiveMinIsr).  A failover's reverting is no change."""
        if (not self.settings.elr or t[PARTITION] is s[PARTITION] or action[0] == "ControllerFailsOver"
                or self.min_isr(t) != self.min_isr(s)):
            return True
        for p in self.partitions:
            a, c = s[PARTITION][p], t[PARTITION][p]
            if (a is None or c is None or len(c[ISR]) >= self.effective_min_isr(t, a)
                    or c[LEADER] not in (NO_LEADER, a[LEADER])):
                continue
            for r in (set(a[ELR]) - set(c[ELR]) - set(c[ISR])) & set(c[REPLICAS]):
                if t[REGISTERED_INCARNATION][r] == s[REGISTERED_INCARNATION][r] or self._clean_reregistration(s, action, r):
                    return False
        return True

    def _clean_reregistration(self, s, action, r) -> bool:
        """The step registers a new incarnation of ``r`` whose last one shut down cleanly: the
        request's previousBrokerEpoch, read from the broker's clean-shutdown files, is the
        registered epoch."""
        if action[0] not in ("ControllerHandlesRegistration", "ControllerHandlesRegistrationAfterSessionTimeout"):
            return False
        m = action[1]
        return m[1] == r and self.registered(s, r) and m[4] == s[BROKER_EPOCH][r]

    def RecoveryToolKeepsCommitted(self, s, action, t) -> bool:
        """When the recovery tool elects, the replica it designates holds every acknowledged
        record that some replica it heard from holds (KIP-1275: the tool exists to pick the
        replica that loses the least).  Every record ever acknowledged counts, those an earlier
        election gave up too: a responder that still holds one has it to give back."""
        if action[0] != "ToolElectsLeader":
            return True
        p = action[1]
        if t[TOOL][1][p] != ELECTED_BY_TOOL:
            return True  # refused, or found online: nobody elected
        heard = [s[REPLICA_LOG][b][p] for b in self.brokers if s[TOOL][0][p][b]]
        chosen = s[REPLICA_LOG][t[PARTITION][p][LEADER]][p]
        return all(holds(chosen, e) for e in s[ACKED][p] if any(holds(log, e) for log in heard))

    def LeaderEpochBumpedOnIsrShrink(self, s, action, t) -> bool:
        """Below metadata version 3.6-IV0 a partition change that takes a member out of the ISR
        bumps the leader epoch: the brokers' replica manager of those versions fences the
        fetchers of replicas out of the ISR by the leader epoch alone (KAFKA-15021,
        MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink).  A failover's reverting is no
        change."""
        if t[PARTITION] is s[PARTITION] or action[0] == "ControllerFailsOver" or s[METADATA_VERSION] != MV_3_5:
            return True
        return all(a is None or c is None or set(a[ISR]) <= set(c[ISR]) or c[LEADER_EPOCH] > a[LEADER_EPOCH]
                   for a, c in zip(s[PARTITION], t[PARTITION]))

    def _joined_through_alter_partition(self, s, action, t):
        """The replicas an AlterPartition step adds to its partition's ISR (none for other steps)."""
        if action[0] != "ControllerHandlesAlterPartition":
            return set()
        p = action[1][3]
        before, after = s[PARTITION][p], t[PARTITION][p]
        if after is None or after[ISR] == before[ISR]:
            return set()
        return set(after[ISR]) - set(before[ISR])

    def IsrJoinsFromCurrentIncarnation(self, s, action, t) -> bool:
        """A replica joins the ISR through AlterPartition only on what the leader heard from the
        incarnation the controller has registered: the broker epoch the request carries for it is
        its registered one (KIP-903; a follower restarted since its fetch may have lost what it
        held)."""
        joined = self._joined_through_alter_partition(s, action, t)
        return all(e == s[BROKER_EPOCH][r] for r, e in action[1][6] if r in joined) if joined else True

    def IsrJoinsOnlyUnfenced(self, s, action, t) -> bool:
        """A replica joins the ISR through AlterPartition only while its broker is registered and
        unfenced (KIP-841): the leader saw it unfenced when it asked, but the broker may have been
        fenced since (its session expired, live or dead), and a fenced broker in the ISR could be
        elected without a session, or shrink min.insync.replicas' promise (KAFKA-13916)."""
        joined = self._joined_through_alter_partition(s, action, t)
        return all(self.registered(s, r) and not s[FENCED][r] for r in joined)

    def _followers(self, s):
        """<<b, p, l>> for each broker b whose metadata names another broker l the leader of p."""
        for b in self.brokers:
            for p, part in enumerate(self.broker_view(s, b)[PARTITION]):
                if part is not None and part[LEADER] not in (NO_LEADER, b):
                    yield b, p, part[LEADER]

    def FetchExposesOnlyLeaderRecords(self, s, action, t) -> bool:
        """A follower's high watermark moves up only over records its leader's log holds: a reader
        of the follower (KIP-392) sees nothing the leader does not have (KAFKA-14704: a diverging
        epoch's truncation comes before the high watermark; KAFKA-10554: the truncation is made)."""
        if t[HIGH_WATERMARK] == s[HIGH_WATERMARK]:
            return True
        return all(agreement(t[REPLICA_LOG][b][p], t[REPLICA_LOG][l][p]) >= t[HIGH_WATERMARK][b][p]
                   for b, p, l in self._followers(s) if t[HIGH_WATERMARK][b][p] > s[HIGH_WATERMARK][b][p])

    def FetchAppendsOnlyToLeaderPrefix(self, s, action, t) -> bool:
        """Records a follower takes leave its log a prefix of its leader's: the follower truncates
        by leader epoch until its log agrees with the leader's before it takes anything (KIP-101,
        KIP-279), so two logs never diverge below what both hold."""
        if t[REPLICA_LOG] == s[REPLICA_LOG]:
            return True
        for b, p, l in self._followers(s):
            log = t[REPLICA_LOG][b][p]
            if agreement(s[REPLICA_LOG][b][p], log) < len(log) and agreement(log, t[REPLICA_LOG][l][p]) < len(log):
                return False
        return True

    def FencedUntilAssigned(self, s, action, t) -> bool:
        """A broker that registered directories is never unfenced while metadata holds one of
        its replicas as UNASSIGNED: it could lead a replica whose directory nobody knows, and a
        failure of that directory would go unnoticed (KIP-858).  In the metadata brokers read."""
        s, t = self.published(s), self.published(t)
        if t[FENCED] is s[FENCED]:
            return True
        for b in self.brokers:
            if s[FENCED][b] and not t[FENCED][b] and t[ONLINE_DIRS][b]:
                for p, part in self._created(t):
                    if b in part[REPLICAS] and self.replica_dir(part, p, b) == UNASSIGNED:
                        return False
        return True

    def DesignatedElectionSafe(self, s, action, t) -> bool:
        """A designated election (KIP-1275), an operator's or the recovery tool's, happens only for
        a leaderless partition and elects a replica in the replica set that is unfenced and on an
        online directory."""
        if action[0] == "AdminElectsDesignatedLeader":
            p, b = action[1], action[2]
        elif action[0] == "ToolElectsLeader" and t[TOOL][1][action[1]] == ELECTED_BY_TOOL:
            p = action[1]
            b = t[PARTITION][p][LEADER]
        else:
            return True
        part = s[PARTITION][p]
        return (
            part is not None
            and part[LEADER] == NO_LEADER
            and b in part[REPLICAS]
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

    def PlacementHonoursReportedCordons(self, s, action, t) -> bool:
        """KIP-1066: a new partition places no replica on a broker whose every online directory it
        has reported cordoned, in the last heartbeat the controller handled from it.  The KIP keeps
        the cordons in the metadata log so that "if a broker is offline, its cordoned log
        directories are still available to the controller when assigning partitions"."""
        if not s[REPORTED_CORDONS] or t[PARTITION] is s[PARTITION]:
            return True
        for p, (before, after) in enumerate(zip(s[PARTITION], t[PARTITION])):
            if before is not None or after is None:
                continue
            for r in after[REPLICAS]:
                reported = s[REPORTED_CORDONS][r]
                if reported and s[ONLINE_DIRS][r] and set(s[ONLINE_DIRS][r]) <= set(reported[0]):
                    return False
        return True

    def NewReplicasAvoidCordonedDirs(self, s, action, t) -> bool:
        """KIP-1066: a broker places a new replica in a directory its cordoned.log.dirs names only
        when every one of its online directories is cordoned, or only one is online
        (LogManager.nextLogDirs falls back to it: the replica has to live somewhere)."""
        if not s[CORDONED] or t[LOGS] is s[LOGS]:
            return True
        for b in self.brokers:
            cordoned = s[CORDONED][b]
            online = [i for i in self.slots if self.slot_online(s, b, i)]
            if not cordoned or len(online) <= 1 or all(i in cordoned for i in online):
                continue
            for p in self.partitions:
                if any(p in logs for logs in s[LOGS][b]):
                    continue  # not new: a move's promotion, or a replica already placed
                if any(p in t[LOGS][b][i] for i in cordoned):
                    return False
        return True
