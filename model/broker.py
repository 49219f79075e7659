"""The brokers' actions: start and format, register, heartbeat, fail a directory, consume metadata,
assign replicas to directories, move replicas between directories, shut down on the failure timeout."""

from __future__ import annotations

from itertools import product

from .state import (
    REPLICAS,
    ALTER_REPLICA_STATE, ASSIGN, ASSIGN_RESPONSE, BROKER_IMAGE, DELETED, CLEAN_SHUTDOWNS, CLEAN_SHUTDOWN_EPOCH, DIR_FAILURES, DIR_IDS, DIR_STATE, FAILED,
    ACKED, FAILED_ACKED, FUTURE, HEALTHY, HIGH_WATERMARK, REPLICA_LOG, HEARTBEAT, HEARTBEAT_RESPONSE, INCARNATION, KNOWN_EPOCH, LEADER,
    GIVEN_UP, LOGS, MOVES_STARTED, NETWORK, NEXT_UUID, NONE, OFF, ONLINE_DIRS, PARTITION, QUEUED, REGISTER,
    REGISTER_RESPONSE, REPAIRED, REPLACED, RUNNING, STARTING, STATUS, WANT_SHUTDOWN, LOST_BY_DISK, LOST_BY_POWER, FLUSHED, bag_add,
    bag_remove, except_at,
    given_up_unless, holds, CORDONED, FOLLOWER_END, EPOCH_ENTRY,
)
from .uuids import LOST, MIGRATING, RESERVED, UNASSIGNED


class BrokerActions:
    """One method per broker action of spec/KRaftJBOD.tla."""

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
        emptied = ()  # partitions whose log was on a replaced disk
        for i, fate in choice:  # in slot order, so fresh UUIDs are handed out in slot order
            if fate == REPAIRED:
                continue
            if fate == REPLACED:
                ids[i] = next_uuid
                next_uuid += 1
            else:
                ids[i] = fate  # mutant reserved_uuids: the format tool wrote a reserved UUID
            emptied += s[LOGS][b][i]
            logs[i] = ()  # a new, empty disk
            fut = [NONE if f == i else f for f in fut]
        n = self._with(
            s,
            brokerStatus=except_at(s[STATUS], b, STARTING),
            incarnation=except_at(s[INCARNATION], b, s[INCARNATION][b] + 1),
            dirIds=except_at(s[DIR_IDS], b, tuple(ids)),
            dirState=except_at(s[DIR_STATE], b, (HEALTHY,) * len(self.slots)),
            logs=except_at(s[LOGS], b, tuple(logs)),
            future=except_at(s[FUTURE], b, tuple(fut)),
            nextUuid=next_uuid,
        )
        if emptied and n[REPLICA_LOG]:
            # their records and high watermarks went with the old disk
            n = self._with(
                n,
                replicaLog=except_at(n[REPLICA_LOG], b, tuple(() if p in emptied else log for p, log in enumerate(n[REPLICA_LOG][b]))),
                highWatermark=except_at(n[HIGH_WATERMARK], b,
                                        tuple(0 if p in emptied else hw for p, hw in enumerate(n[HIGH_WATERMARK][b]))),
            )
            if n[FLUSHED]:
                n = self._with(n, flushed=except_at(n[FLUSHED], b, tuple(0 if p in emptied else k
                                                                         for p, k in enumerate(n[FLUSHED][b]))))
            cause = (LOST_BY_DISK, b, n[INCARNATION][b])
            n = self._with(n, acked=tuple(given_up_unless(entries, lambda e, p=p: self.on_some_replica(n, p, e), cause)
                                          for p, entries in enumerate(n[ACKED])))
        return n

    def on_some_replica(self, s, p, entry) -> bool:
        """Some replica's log of p holds the acknowledged record: a replaced disk that took its
        last copy gave it up (no protocol can keep what no disk holds)."""
        return any(holds(s[REPLICA_LOG][r][p], entry) for r in self.brokers)

    def refuses_jbod(self, s) -> bool:
        """KIP-858: a broker with several log directories does not run below 3.7-IV2.  Kafka's
        broker only reports a metadata publishing fault and runs on (MetadataVersionConfigValidator,
        the fix of KAFKA-16606, with a non-fatal fault handler)."""
        if self.code or self.mutant == "jbod_below_3_7_iv2":
            return False
        return len(self.slots) > 1 and not self.assignment_supported(s)

    def _registration_request(self, s, b):
        """BrokerRegistrationRequest with the incarnation ID, the LogDirs the broker loaded at
        startup, in slot order (failed since or not), and the previousBrokerEpoch its clean-shutdown
        files held (-1: none)."""
        dirs = () if self.legacy[b] else s[DIR_IDS][b]
        previous = s[CLEAN_SHUTDOWN_EPOCH][b] if s[CLEAN_SHUTDOWN_EPOCH] else -1
        return self._with(s, network=bag_add(s[NETWORK], (REGISTER, b, s[INCARNATION][b], dirs, previous)))

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
        view = self.broker_view(s, b)
        if s[STATUS][b] != RUNNING or self.legacy[b] or not self.assignment_supported(view) or not self.room(s):
            return None
        if not self.registered(view, b) or view[ONLINE_DIRS][b]:
            return None
        if self.in_flight(s, (REGISTER, REGISTER_RESPONSE), b, s[INCARNATION][b]):
            return None
        return self._registration_request(s, b)

    def BrokerReceivesRegistrationResponse(self, s, m):
        """The broker runs with the epoch the controller gave it.  An error: Kafka's broker
        tries again (BrokerLifecycleManager); under the KIP's reading it fails to start."""
        _, b, incarnation_id, epoch = m
        n = self._with(s, network=bag_remove(s[NETWORK], m))
        if s[STATUS][b] == OFF or incarnation_id != s[INCARNATION][b]:
            return n  # an answer to an earlier incarnation: ignored
        if epoch:
            return self._with(n, brokerStatus=except_at(s[STATUS], b, RUNNING), knownEpoch=except_at(s[KNOWN_EPOCH], b, epoch))
        if self.code or s[STATUS][b] == RUNNING:
            return n  # it registers again later
        return self._broker_down(n, b)

    def BrokerCrashes(self, s, b):
        if not self.settings.crashes or s[STATUS][b] == OFF:
            return None
        return self._broker_down(s, b)

    def BrokerLosesPower(self, s, b):
        """The broker's machine loses power (model setting ``power_loss``): the process stops as in
        a crash, and each of its replicas' logs keeps only what it had flushed, the page cache
        gone with the machine; the checkpointed high watermark is capped at the log's end, as the
        log's recovery at the next start does.  An acknowledged record whose last copy went so is
        given up, marked with this power loss.  Under the mutant power_loss_reported_clean the
        broker's clean-shutdown file holds its epoch all the same (KAFKA-15582 missing)."""
        if s[STATUS][b] == OFF:
            return None
        n = self._broker_down(s, b)
        logs = tuple(log[:k] for log, k in zip(s[REPLICA_LOG][b], s[FLUSHED][b]))
        n = self._with(n, replicaLog=except_at(n[REPLICA_LOG], b, logs),
                       highWatermark=except_at(n[HIGH_WATERMARK], b, tuple(min(hw, len(log)) for hw, log in
                                                                           zip(n[HIGH_WATERMARK][b], logs))))
        cause = (LOST_BY_POWER, b, s[INCARNATION][b])
        n = self._with(n, acked=tuple(given_up_unless(entries, lambda e, p=p: self.on_some_replica(n, p, e), cause)
                                      for p, entries in enumerate(n[ACKED])))
        if self.mutant == "power_loss_reported_clean" and n[CLEAN_SHUTDOWN_EPOCH] and s[KNOWN_EPOCH][b]:
            n = self._with(n, cleanShutdownEpoch=except_at(n[CLEAN_SHUTDOWN_EPOCH], b, s[KNOWN_EPOCH][b]))
        return n

    def BrokerBeginsShutdown(self, s, b):
        """A running broker begins a controlled shutdown (BrokerLifecycleManager
        .beginControlledShutdown): from now on its heartbeats ask to shut down (wantShutDown),
        and it stops when a heartbeat response says it should, at most ``clean_shutdowns``
        times in the run."""
        if s[STATUS][b] != RUNNING or not s[WANT_SHUTDOWN] or s[WANT_SHUTDOWN][b]:
            return None
        if s[CLEAN_SHUTDOWNS] >= self.settings.clean_shutdowns:
            return None
        return self._with(s, wantShutdown=except_at(s[WANT_SHUTDOWN], b, True), cleanShutdowns=s[CLEAN_SHUTDOWNS] + 1)

    def BrokerFailsDir(self, s, b, i):
        """A log directory fails.  A move whose destination failed is reverted; one whose source
        failed is assigned to LOST (KAFKA-16297).  With no directory left the broker stops."""
        if s[STATUS][b] == OFF or not self.slot_online(s, b, i):
            return None
        if s[DIR_FAILURES] >= self.settings.dir_failures:
            return None
        states = except_at(s[DIR_STATE][b], i, FAILED)
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
            dirState=except_at(s[DIR_STATE], b, states),
            future=except_at(s[FUTURE], b, tuple(fut)),
            queued=except_at(s[QUEUED], b, tuple(queued)),
            dirFailures=s[DIR_FAILURES] + 1,
        )
        if HEALTHY not in states:
            return self._broker_down(n, b)
        return n

    def BrokerSendsHeartbeat(self, s, b):
        """Every heartbeat repeats all directories that failed in this incarnation (OfflineLogDirs),
        asks to stay fenced (wantFence) until the broker has loaded its registration, and asks
        to shut down (wantShutDown) once the broker has begun a controlled shutdown."""
        epoch = s[KNOWN_EPOCH][b]
        if s[STATUS][b] != RUNNING or not self.room(s):
            return None
        if self.in_flight(s, (HEARTBEAT, HEARTBEAT_RESPONSE), b, epoch):
            return None
        if self.in_flight(s, (REGISTER, REGISTER_RESPONSE), b, s[INCARNATION][b]):
            return None  # registering again: heartbeats wait for the answer
        offline = tuple(sorted(s[DIR_IDS][b][i] for i in self.slots if s[DIR_STATE][b][i] != HEALTHY))
        want_fence = bool(s[BROKER_IMAGE]) and not self.caught_up(s, b)
        want_shutdown = bool(s[WANT_SHUTDOWN]) and s[WANT_SHUTDOWN][b]
        cordoned = ()
        if s[CORDONED] and (not s[BROKER_IMAGE] or self.caught_up(s, b)):
            cordoned = (tuple(sorted(s[DIR_IDS][b][i] for i in s[CORDONED][b])),)
        return self._with(s, network=bag_add(s[NETWORK], (HEARTBEAT, b, epoch, offline, want_fence, want_shutdown, cordoned)))

    def BrokerReceivesHeartbeatResponse(self, s, m):
        """The broker marks the offline directories the response acknowledges; a response that
        says shouldShutDown ends its controlled shutdown: the process stops, and writes its broker
        epoch in the clean-shutdown file of every directory (LogManager.shutdown; a failed
        directory gets none, so the next incarnation reads no epoch)."""
        _, b, epoch, offline, should_shut_down = m
        n = self._with(s, network=bag_remove(s[NETWORK], m))
        if s[STATUS][b] != RUNNING or epoch != s[KNOWN_EPOCH][b]:
            return n
        states = tuple(
            FAILED_ACKED if st == FAILED and s[DIR_IDS][b][i] in offline else st for i, st in enumerate(s[DIR_STATE][b])
        )
        n = self._with(n, dirState=except_at(s[DIR_STATE], b, states))
        if not should_shut_down:
            return n
        written = epoch if all(st == HEALTHY for st in states) else -1
        n = self._broker_down(n, b)
        if n[FLUSHED]:
            # LogManager.shutdown flushes every log before it writes the clean-shutdown files
            n = self._with(n, flushed=except_at(n[FLUSHED], b, tuple(len(log) for log in n[REPLICA_LOG][b])))
        return self._with(n, cleanShutdownEpoch=except_at(n[CLEAN_SHUTDOWN_EPOCH], b, written))

    def BrokerConsumesMetadata(self, s, b, p):
        """The broker acts on its replica of partition p as the metadata it has loaded describes
        it (KIP-858 "Replica management"; ReplicaManager.applyDelta): place an UNASSIGNED
        replica in the least-loaded online directory and queue the assignment; create a replica
        in its assigned online directory; correct an assignment that does not name where the
        replica lives; promote a future replica the metadata already names; and never recreate
        elsewhere a replica whose log is on a failed disk (KAFKA-16234).  With the brokers' lag
        modeled, only once it has loaded its own registration."""
        view = self.broker_view(s, b)
        part = view[PARTITION][p]
        if s[STATUS][b] != RUNNING or (s[BROKER_IMAGE] and not self.caught_up(s, b)):
            return None
        if view[DELETED] and view[DELETED][p]:
            return self._delete_replica(s, b, p)
        if part is None:
            return None
        if b not in part[REPLICAS]:
            # reassigned away: stopPartitions deletes the replica as for a deleted topic
            return self._delete_replica(s, b, p)
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
        tells = self.assignment_supported(view)

        def create_and_queue():
            i = self.least_loaded_online_slot(s, b)
            if i == NONE:
                return None
            logs = except_at(s[LOGS][b], i, tuple(sorted(s[LOGS][b][i] + (p,))))
            n = self._with(s, logs=except_at(s[LOGS], b, logs))
            return self._with(n, queued=except_at(s[QUEUED], b, except_at(s[QUEUED][b], p, ids[i]))) if tells else n

        def queue(i):
            if not tells:
                return None
            return self._with(s, queued=except_at(s[QUEUED], b, except_at(s[QUEUED][b], p, ids[i])))

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
                logs = except_at(s[LOGS][b], named, tuple(sorted(s[LOGS][b][named] + (p,))))
                return self._with(s, logs=except_at(s[LOGS], b, logs))
            if named in main:
                return None  # where it lives (a move in progress is BrokerFutureCaughtUp's)
            if main_online:
                return queue(main_online[0])  # moved while the broker was down
            return None
        # The assigned directory is offline, LOST or unknown to this broker.
        if has_failed and not self.code:
            # KIP-858: it may live on the failed disk: never create it elsewhere
            if self.mutant == "recreate_elsewhere" and not main_online:
                return create_and_queue()
            return None
        if main_online:
            return queue(main_online[0])
        if main:
            # Its log is on a failed disk: Kafka's replica manager holds the partition offline
            # (HostedPartition.Offline) and creates nothing.
            return create_and_queue() if self.mutant == "recreate_elsewhere" else None
        # No log of it on any of the broker's disks: the replica manager hosts no such partition
        # and creates it as new (getOrCreatePartition's isNew, which LogManager.getOrCreateLog
        # lets through while directories are offline), in the least-loaded online directory.
        return create_and_queue()

    def _delete_replica(self, s, b, p):
        """The topic of p is deleted, or b is no longer among p's replicas: ReplicaManager.applyDelta
        stops the replica and deletes its logs (stopPartitions, deleting the future replica's
        too), records, high watermark and leader-epoch cache with them.  A log on a failed disk
        cannot be deleted: it stays until the disk is back, and is deleted then (a stray of a
        partition the metadata no longer gives the broker).  A directory assignment the broker
        queued for p stays queued: nothing tells AssignmentsManager, which drops it when it next
        sends (Assignment.valid)."""
        logs = tuple(tuple(x for x in held if x != p) if self.slot_online(s, b, i) else held
                     for i, held in enumerate(s[LOGS][b]))
        if logs == s[LOGS][b] and s[FUTURE][b][p] == NONE:
            return None
        n = self._with(s, logs=except_at(s[LOGS], b, logs), future=except_at(s[FUTURE], b, except_at(s[FUTURE][b], p, NONE)))
        if n[REPLICA_LOG] and not any(p in held for held in logs):
            n = self._with(n, replicaLog=except_at(n[REPLICA_LOG], b, except_at(n[REPLICA_LOG][b], p, ())),
                           highWatermark=except_at(n[HIGH_WATERMARK], b, except_at(n[HIGH_WATERMARK][b], p, 0)),
                           followerEnd=except_at(n[FOLLOWER_END], b, except_at(n[FOLLOWER_END][b], p, self.no_follower_state)))
            if n[FLUSHED]:
                n = self._with(n, flushed=except_at(n[FLUSHED], b, except_at(n[FLUSHED][b], p, 0)))
            if n[EPOCH_ENTRY]:
                n = self._with(n, epochEntry=except_at(n[EPOCH_ENTRY], b, except_at(n[EPOCH_ENTRY][b], p, -1)))
        return n

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
            logs=except_at(s[LOGS], b, tuple(logs)),
            future=except_at(s[FUTURE], b, except_at(s[FUTURE][b], p, NONE)),
            queued=except_at(s[QUEUED], b, except_at(s[QUEUED][b], p, NONE)),
        )

    def BrokerSendsAssignment(self, s, b, p):
        """AssignmentsManager.maybeSendAssignments: send the queued AssignReplicasToDirs entry for p
        (one in flight per partition), or drop it unsent if the metadata the broker has loaded no
        longer has the broker hold a replica of p (Assignment.valid): the topic deleted (without
        that check, KAFKA-17190), or the broker reassigned away (without it, KAFKA-16886)."""
        epoch = s[KNOWN_EPOCH][b]
        directory = s[QUEUED][b][p]
        if s[STATUS][b] != RUNNING or directory in (NONE, GIVEN_UP):
            return None
        view = self.broker_view(s, b)
        if not self.assignment_supported(view):
            return None
        if self.in_flight(s, (ASSIGN, ASSIGN_RESPONSE), b, epoch, p):
            return None
        part = view[PARTITION][p]
        gone = part is None and self.mutant != "assignment_retried_for_deleted_topic"
        moved = part is not None and b not in part[REPLICAS] and self.mutant != "assignment_retried_for_reassigned_replica"
        if gone or moved:
            return self._with(s, queued=except_at(s[QUEUED], b, except_at(s[QUEUED][b], p, NONE)))
        if not self.room(s):
            return None
        return self._with(s, network=bag_add(s[NETWORK], (ASSIGN, b, epoch, p, directory)))

    def BrokerReceivesAssignmentResponse(self, s, m):
        """Success clears the queued entry (and promotes a future replica the assignment moved);
        after an error the entry stays queued and is sent again (AssignmentsManager's
        handleAssignmentResponse puts it back among the ready ones), unless the broker's metadata
        then says it is no longer valid (BrokerSendsAssignment)."""
        _, b, epoch, p, directory, accepted = m
        n = self._with(s, network=bag_remove(s[NETWORK], m))
        if s[STATUS][b] != RUNNING or epoch != s[KNOWN_EPOCH][b] or s[QUEUED][b][p] != directory:
            return n  # stale, or superseded by a newer entry (a revert, LOST)
        if not accepted:
            return n
        fut = s[FUTURE][b][p]
        if fut != NONE and s[DIR_IDS][b][fut] == directory:
            return self._promote(n, b, p)
        return self._with(n, queued=except_at(s[QUEUED], b, except_at(s[QUEUED][b], p, NONE)))

    def BrokerShutsDownOnDirFailureTimeout(self, s, b):
        """log.dir.failure.timeout.ms elapsed with a failure not yet acknowledged.  Kafka's broker
        then shuts down (BrokerLifecycleManager's OfflineDirBrokerFailureEvent); KIP-858 only if
        it leads a replica in that directory, shutting down being the only other way to get a
        new leader elected, as the metadata the broker has loaded says."""
        if s[STATUS][b] != RUNNING:
            return None
        unacknowledged = [i for i in self.slots if s[DIR_STATE][b][i] == FAILED]
        if not unacknowledged:
            return None
        if self.settings.semantics == "kip" and not any(
            part is not None and part[LEADER] == b and any(p in s[LOGS][b][i] for i in unacknowledged)
            for p, part in enumerate(self.broker_view(s, b)[PARTITION])
        ):
            return None
        return self._broker_down(s, b)

    def BrokerStartsMove(self, s, b, p, target):
        """AlterReplicaLogDirs: start a future replica of p in another online directory, not a
        cordoned one (ReplicaManager.alterReplicaLogDirs refuses it: InvalidReplicaAssignmentException)."""
        if self.settings.moves == 0 or s[MOVES_STARTED] >= self.settings.moves:
            return None
        if s[STATUS][b] != RUNNING or s[FUTURE][b][p] != NONE or s[QUEUED][b][p] != NONE:
            return None
        main = self.main_slots(s, b, p)
        if len(main) != 1 or not self.slot_online(s, b, main[0]):
            return None
        if target == main[0] or not self.slot_online(s, b, target):
            return None
        if s[CORDONED] and target in s[CORDONED][b]:
            return None
        return self._with(
            s,
            future=except_at(s[FUTURE], b, except_at(s[FUTURE][b], p, target)),
            movesStarted=s[MOVES_STARTED] + 1,
        )

    def BrokerFutureCaughtUp(self, s, b, p):
        """The future replica caught up: ask the controller to move the assignment first, and
        promote only once it acknowledges (KIP-858 "Intra-broker replica movement")."""
        target = s[FUTURE][b][p]
        if s[STATUS][b] != RUNNING or target == NONE or s[QUEUED][b][p] != NONE:
            return None
        return self._with(s, queued=except_at(s[QUEUED], b, except_at(s[QUEUED][b], p, s[DIR_IDS][b][target])))

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
        return self._with(s, network=bag_add(s[NETWORK], m))

    def BrokerLoadsMetadata(self, s, b):
        """The broker's metadata listener loads what has been committed since it last looked
        (with the brokers' lag modeled): its image becomes the latest committed one.  A broker
        keeps its metadata across restarts (its copy of the metadata log is on disk)."""
        if not s[BROKER_IMAGE] or s[STATUS][b] == OFF:
            return None
        image = self.controller_image(self.published(s))
        if s[BROKER_IMAGE][b] == image:
            return None
        return self._with(s, brokerImage=except_at(s[BROKER_IMAGE], b, image))
