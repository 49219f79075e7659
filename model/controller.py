"""The controller's handlers (QuorumController's ControllerWriteEvents) and the administrator's
operations: each reads the image, writes records, replays them, and answers."""

from __future__ import annotations

from .state import (
    ALTER_PARTITION_RESPONSE, ASSIGN_RESPONSE, AWAITED_HEARTBEATS, BROKER_EPOCH, COMMITTED_IMAGE, DIRS, FAILOVERS_DONE, REASSIGNMENTS_MADE, FEATURE_LEVEL,
    ELR, FENCED, LAST_KNOWN_ELR, LEADER_EPOCH, RECOVERING, REPLICAS, REMOVING, ADDING, NO_LEADER_CHANGE, PARTITION_EPOCH,
    HEARTBEAT_RESPONSE, ISR, LEADER, MV_3_7_IV2, NETWORK, NO_LEADER, ONLINE_DIRS, PARTITION,
    PARTITION_CHANGE, PARTITION_RECORD, SESSIONS_EXPIRED, UNCOMMITTED,
    REGISTERED_INCARNATION, REGISTER_BROKER, REGISTER_RESPONSE, REGISTRATION_CHANGE, SESSION, bag_add,
    bag_remove, except_at, CLEAR_ELR, CONFIG_CHANGES, CONFIG_RECORD, MIN_ISR, TOPIC_CONFIG, UNCLEAN_ENABLED,
    CORDONED, CORDONED_DIRS, CORDON_CHANGES, REGISTERED_CORDONS, REPORTED_CORDONS, STATUS, RUNNING, DELETED, REMOVE_TOPIC,
)
from .records import NotAReplica
from .uuids import LOST, UNASSIGNED, is_online, is_reserved


class ControllerHandlers:
    """One method per controller or admin action of spec/KRaftJBOD.tla."""

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
        _, b, incarnation_id, dirs, _ = m
        net = bag_remove(s[NETWORK], m)
        current = s[BROKER_EPOCH][b]
        if incarnation_id < current and self.mutant != "accept_older_registration":
            return self._with(s, network=net)  # from an earlier incarnation: dropped
        if incarnation_id == current:
            return self._with(s, network=bag_add(net, (REGISTER_RESPONSE, b, incarnation_id, current)))
        if self.assignment_supported(s) and not self.registration_valid(s, b, dirs):
            return self._with(s, network=bag_add(net, (REGISTER_RESPONSE, b, incarnation_id, 0)))
        record = self._register_broker_record(s, b, incarnation_id, incarnation_id, True, dirs)
        n = self.replay(self._with(s, network=bag_add(net, (REGISTER_RESPONSE, b, incarnation_id, incarnation_id))), [record])
        parts = tuple(
            self.change_partition(n, p, remove=b) if n[PARTITION][p] is not None and b in n[PARTITION][p][REPLICAS] else n[PARTITION][p]
            for p in self.partitions
        )
        return self._with(n, partition=parts)

    def ControllerHandlesRegistrationAfterSessionTimeout(self, s, m):
        """registerBroker for a new incarnation when the registered incarnation is gone and its
        session timeout has elapsed, but maybeFenceOneStaleBroker has not fenced it yet (it fences
        one stale broker per event): hasValidSession is false, so the registration goes through
        (semantics "code" only; under "kip" a new incarnation is always accepted)."""
        b, incarnation_id = m[1], m[2]
        if not self.code or not self.registered(s, b) or not self.has_session(s, b) or self.alive(s, b):
            return None
        if incarnation_id == s[REGISTERED_INCARNATION][b]:
            return None
        return self._register(s, m, session_expired=True)

    def _register_broker_record(self, s, b, incarnation_id, epoch, fenced, dirs):
        """The RegisterBrokerRecord: logDirs (as a set: replay keeps no order) only at 3.7-IV2 or later."""
        return (REGISTER_BROKER, b, incarnation_id, epoch, fenced, tuple(sorted(set(dirs))) if self.assignment_supported(s) else ())

    def _register(self, s, m, session_expired):
        """ClusterControlManager.registerBroker, the code's way: the record and the answer."""
        _, b, incarnation_id, dirs, previous_epoch = m
        n = self._with(s, network=bag_remove(s[NETWORK], m))

        def answer(epoch):
            return (REGISTER_RESPONSE, b, incarnation_id, epoch)

        def refuse():
            # an exception: the request fails at once, nothing written
            return self._with(n, network=bag_add(n[NETWORK], answer(0)))

        same = self.registered(s, b) and s[REGISTERED_INCARNATION][b] == incarnation_id
        valid_session = self.registered(s, b) and self.has_session(s, b) and (self.alive(s, b) or not session_expired)
        if valid_session and not same:
            return refuse()  # DuplicateBrokerRegistrationException
        if self.assignment_supported(s) and not self.registration_valid(s, b, dirs):
            return refuse()  # InvalidRegistrationException
        if same:
            epoch = s[BROKER_EPOCH][b] + (1 if self.mutant == "reregistration_new_epoch" else 0)
            fenced = True if self.mutant == "reregistration_fences" else s[FENCED][b]
        else:
            # The epoch is the record's offset in the metadata log.  The model numbers a broker's
            # RegisterBrokerRecords instead, which orders its epochs as the offsets do; the
            # controller only ever compares epochs of one broker.
            epoch, fenced = s[BROKER_EPOCH][b] + 1, True
        record = self._register_broker_record(s, b, incarnation_id, epoch, fenced, dirs)
        shutdown = [] if same else self._shutdown_records(n, b, self._taken_as_clean(s, b, previous_epoch))
        if not same and self.rules.sessions_by_epoch:
            n = self._with(n, session=except_at(n[SESSION], b, False))  # the new epoch has no session yet
        return self.write(n, shutdown + [record], answer(epoch))

    def _taken_as_clean(self, s, b, previous_epoch) -> bool:
        """registerBroker's isCleanShutdown: the registration's previousBrokerEpoch (the epoch of
        the broker's clean-shutdown files) is the registered epoch (KAFKA-15586), with detection
        on (KAFKA-18635, 4.0.0; the code read takes every new incarnation as unclean)."""
        if self.mutant == "unclean_shutdown_kept_in_elr":
            return True
        if not self.rules.clean_shutdown_detection or self.mutant == "clean_shutdown_undetected":
            return False
        return self.registered(s, b) and previous_epoch == s[BROKER_EPOCH][b]

    def _shutdown_records(self, view, b, clean):
        """handleBrokerShutdown for a new incarnation.  An unclean shutdown with ELR
        (handleBrokerUncleanShutdown): the broker out of the ISR, then out of the ELR, of every
        partition it is in, and not acceptable as leader.  A clean one, or one without ELR: the
        broker leaves ISRs and leaderships as when fenced (since 4.0.0, KAFKA-18106; the code
        read wrote nothing without ELR: finding 3).  Each record from the image."""
        if self.mutant == "unclean_reregistration_keeps_epochs":
            return []
        if not self.settings.elr and not self.rules.shutdown_records_without_elr:
            return []
        if not self.settings.elr or clean:
            return self._out_of_isrs_records(view, b)
        records = []
        for members in (ISR, ELR):
            for p, part in enumerate(view[PARTITION]):
                if part is not None and b in part[members]:
                    records.append(self.partition_change_record(view, p, unclean_shutdown=b))
        return [r for r in records if r is not None]

    def has_session(self, s, b) -> bool:
        """Does the registered incarnation have a heartbeat session (BrokerHeartbeatManager
        .hasValidSession, timing apart)?  The code read: while it is unfenced.  Since 4.0.0
        (BrokerHeartbeatTracker): once its epoch has heartbeated, fenced or not, until that
        session expires or a new incarnation registers."""
        return s[SESSION][b] if self.rules.sessions_by_epoch else not s[FENCED][b]

    def _heard_from(self, s, b, epoch):
        """QuorumController.trackBrokerHeartbeat, before the heartbeat is handled: a heartbeat of
        the registered epoch gives it a session (with the releases' sessions by epoch)."""
        if not self.rules.sessions_by_epoch or not self.epoch_is_current(s, b, epoch) or s[SESSION][b]:
            return s
        return self._with(s, session=except_at(s[SESSION], b, True))

    def epoch_is_current(self, s, b, epoch) -> bool:
        return self.registered(s, b) and s[BROKER_EPOCH][b] == epoch

    def ControllerHandlesHeartbeat(self, s, m):
        """processBrokerHeartbeat: epoch gate; newly offline directories (registered to the
        sender and still online) leave its registration and take the sender out of exactly the
        partitions with its replica there; a fenced broker is unfenced once no replica of it is
        UNASSIGNED, and leaderless partitions get a leader.

        Under semantics "code" every record is computed from the image the heartbeat found,
        in the code's order: the broker's next state (calculateNextBrokerState) and its records
        first (handleBrokerUnfenced: its elections count the sender acceptable on the
        directories its registration still lists; handleBrokerFenced;
        handleBrokerInControlledShutdown), then handleDirectoriesOffline.  Under "kip" the
        offline directories are handled first and the unfencing sees them.  A broker that asks
        to stay fenced (wantFence) stays fenced.  Last come the cordoned directories
        (handleDirectoriesCordoned, from metadata version 4.3-IV0)."""
        _, b, epoch, offline, want_fence, want_shutdown, cordoned = m
        net = bag_remove(s[NETWORK], m)
        current = self.epoch_is_current(s, b, epoch)
        if not current and self.mutant == "skip_epoch_check" and self.registered(s, b):
            current = True
        apply_offline = current or (self.mutant == "stale_offline_dirs" and self.registered(s, b))
        if not apply_offline:
            return self._with(s, network=net)  # STALE_BROKER_EPOCH: nothing written
        n = self._heard_from(self._with(s, network=net), b, epoch)
        # Below 3.7-IV2 the controller does not look at the offline directories at all.
        offline_here = offline if self.assignment_supported(s) else ()
        if self.code:
            was, will = self._broker_states(n, b, want_fence, want_shutdown) if current else ("", "")
            records = self._broker_state_records(n, b, will) if will != was else []
            records += self._offline_dirs_records(n, b, offline_here)
            if current and cordoned:
                records += self._cordoned_dirs_records(n, b, cordoned[0])
                n = self._with(n, reportedCordons=except_at(n[REPORTED_CORDONS], b, cordoned))
            should_shut_down = will == "SHUTDOWN_NOW"
            # The response acknowledges the offline directories the heartbeat carried.
            response = (HEARTBEAT_RESPONSE, b, epoch, offline, should_shut_down) if (offline or should_shut_down) and current else ()
            if current:
                n = self._metadata_offset_reported(n, b, fenced=will in ("FENCED", "SHUTDOWN_NOW"))
            n = self.write(n, records, response)
            if n is not None and will == "CONTROLLED_SHUTDOWN" and not n[AWAITED_HEARTBEATS][b]:
                # maybeUpdateControlledShutdownOffset: the batch's end offset, which no other
                # broker's heartbeat has reported yet
                n = self._with(n, awaitedHeartbeats=except_at(n[AWAITED_HEARTBEATS], b, (tuple(x for x in self.brokers if x != b),)))
            return n
        response = (HEARTBEAT_RESPONSE, b, epoch, offline, False) if offline and current else ()
        n = self._handle_offline_dirs(n, b, offline_here)
        if current and n[FENCED][b] and not want_fence:
            n = self.replay(n, self._unfence_records(n, b))
        return self._with(n, network=bag_add(n[NETWORK], response)) if response else n

    def _broker_states(self, s, b, want_fence, want_shutdown):
        """BrokerHeartbeatManager.calculateNextBrokerState: the sender's state (CONTROLLED_SHUTDOWN
        while the heartbeat manager has it shutting down, else FENCED or UNFENCED as registered)
        and the next one.  A broker in controlled shutdown may stop once it leads nothing and
        every active broker has heartbeated since it entered (lowestActiveOffset); the model's
        heartbeats report the offset the controller has written when it handles them (a broker
        that asks to be unfenced has loaded its registration: ``caught_up``)."""
        if s[AWAITED_HEARTBEATS] and s[AWAITED_HEARTBEATS][b]:
            if self._has_leaderships(s, b):
                return "CONTROLLED_SHUTDOWN", "CONTROLLED_SHUTDOWN"
            waiting = any(self._heartbeat_active(s, x) for x in s[AWAITED_HEARTBEATS][b][0])
            return "CONTROLLED_SHUTDOWN", "CONTROLLED_SHUTDOWN" if waiting else "SHUTDOWN_NOW"
        if s[FENCED][b]:
            if want_shutdown:
                return "FENCED", "SHUTDOWN_NOW"
            return "FENCED", "FENCED" if want_fence else "UNFENCED"
        if want_fence:
            return "UNFENCED", "SHUTDOWN_NOW" if want_shutdown else "FENCED"
        if want_shutdown:
            return "UNFENCED", "CONTROLLED_SHUTDOWN" if self._has_leaderships(s, b) else "SHUTDOWN_NOW"
        return "UNFENCED", "UNFENCED"

    def _has_leaderships(self, s, b) -> bool:
        """BrokersToIsrs.hasLeaderships: some partition has ``b`` as its leader."""
        return any(part is not None and part[LEADER] == b for part in s[PARTITION])

    def _heartbeat_active(self, s, b) -> bool:
        """In BrokerHeartbeatManager's active set: unfenced and not shutting down."""
        return self.registered(s, b) and not s[FENCED][b] and not (s[AWAITED_HEARTBEATS] and s[AWAITED_HEARTBEATS][b])

    def _broker_state_records(self, view, b, will):
        """processBrokerHeartbeat's records for a change of state."""
        if will in ("FENCED", "SHUTDOWN_NOW"):
            return self._fence_records(view, b)
        if will == "UNFENCED":
            return self._unfence_records(view, b)
        # handleBrokerInControlledShutdown: the flag, then the broker out of every ISR and leadership
        flag = [] if self.in_controlled_shutdown(view, b) else [(REGISTRATION_CHANGE, b, None, None, True)]
        return flag + self._out_of_isrs_records(view, b)

    def _metadata_offset_reported(self, s, b, fenced=False):
        """BrokerHeartbeatManager.touch for a heartbeat of the registered epoch: the sender's
        metadata offset is the one the controller has written, so no controlled shutdown awaits
        its heartbeat any more; fenced, it leaves its own controlled shutdown."""
        awaited = s[AWAITED_HEARTBEATS]
        if not awaited:
            return s
        awaited = tuple(((tuple(x for x in a[0] if x != b),) if a else ()) for a in awaited)
        if fenced:
            awaited = except_at(awaited, b, ())
        return self._with(s, awaitedHeartbeats=awaited)

    def ControllerTimesOutHeartbeat(self, s, m):
        """processExpiredBrokerHeartbeat (semantics "code"): a heartbeat that waited in the
        controller's queue past its deadline only keeps the session alive and reports the
        broker's metadata offset (touch).  Nothing is written, no broker is unfenced, its offline
        directories are not looked at, and the broker gets a timeout error instead of a response
        (it sends the next heartbeat as usual)."""
        if not self.code:
            return None
        b, epoch = m[1], m[2]
        n = self._heard_from(self._with(s, network=bag_remove(s[NETWORK], m)), b=b, epoch=epoch)
        return self._metadata_offset_reported(n, b) if self.epoch_is_current(s, b, epoch) else n

    def _unfence_records(self, view, b):
        """handleBrokerUnfenced, for a fenced sender: the registration change, then an election
        for every leaderless partition with the sender an acceptable leader.  Under the KIP's
        reading a broker that registered directories asks to be unfenced only once no replica of
        it is UNASSIGNED; Kafka's broker asks once it has caught up with the metadata
        (BrokerServer: setReadyToUnfence), assigned or not."""
        unassigned = any(
            part is not None and b in part[REPLICAS] and self.replica_dir(part, p, b) == UNASSIGNED
            for p, part in enumerate(view[PARTITION])
        )
        waits = self.settings.semantics == "kip" and self.mutant != "unfence_before_assigned"
        if view[ONLINE_DIRS][b] and unassigned and waits:
            return []
        records = [(REGISTRATION_CHANGE, b, False, None, None)]
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
            if part is None or b not in part[REPLICAS] or self.replica_dir(part, p, b) not in newly:
                continue
            if self.mutant == "foreign_offline_dirs":
                for r in part[REPLICAS]:
                    if r != b and not is_online(self.replica_dir(part, p, r), remaining):
                        records.append(self.partition_change_record(view, p, remove=r))
            records.append(
                self.partition_change_record(view, p, remove=b, keep_in_isr=self.mutant == "keep_offline_replica_in_isr")
            )
        return [r for r in records if r is not None] + [(REGISTRATION_CHANGE, b, None, remaining, None)]

    def _cordoned_dirs_records(self, view, b, cordoned):
        """handleDirectoriesCordoned against the image ``view``: a record setting the registration's
        cordoned directories to those the heartbeat lists, when the registration holds none (null)
        or others (BrokerRegistration.cordonedDirChanged compares them as sets).  Kafka takes the
        list as it comes: a failed directory may be cordoned too (KAFKA-20441)."""
        held = view[REGISTERED_CORDONS][b]
        if self.mutant == "cordons_only_of_online_dirs":
            # trunk before KAFKA-20441: the registration's online directories among those reported,
            # and nothing written when there are none
            cordoned = tuple(d for d in view[ONLINE_DIRS][b] if d in cordoned)
            if not cordoned:
                return []
        if held and set(held[0]) == set(cordoned):
            return []
        return [(CORDONED_DIRS, b, tuple(sorted(cordoned)))]

    def _handle_offline_dirs(self, s, b, offline):
        """The KIP's reading: the registration loses the newly offline directories first, then
        each affected partition changes, each change seeing the ones before it."""
        newly = tuple(d for d in offline if d in s[ONLINE_DIRS][b])
        if not newly:
            return s
        remaining = tuple(d for d in s[ONLINE_DIRS][b] if d not in newly)
        n = self._with(s, onlineDirs=except_at(s[ONLINE_DIRS], b, remaining))
        parts = list(n[PARTITION])
        for p in self.partitions:
            part = parts[p]
            if part is None or b not in part[REPLICAS]:
                continue
            if self.replica_dir(part, p, b) in newly:
                if self.mutant == "foreign_offline_dirs":
                    n = self._with(n, partition=except_at(n[PARTITION], p, self._remove_by_senders_dirs(n, p, b)))
                parts[p] = self.change_partition(n, p, remove=b, keep_in_isr=self.mutant == "keep_offline_replica_in_isr")
        return self._with(n, partition=tuple(parts))

    def _remove_by_senders_dirs(self, s, p, b):
        """Mutant foreign_offline_dirs: the other replicas of p are judged against the sender's
        online directories, and those found "offline" are taken out first."""
        part = s[PARTITION][p]
        for r in part[REPLICAS]:
            if r != b and not is_online(self.replica_dir(part, p, r), s[ONLINE_DIRS][b]):
                part = self.change_partition(s, p, remove=r)
                s = self._with(s, partition=except_at(s[PARTITION], p, part))
        return part

    def ControllerFencesExpiredBroker(self, s, b):
        """maybeFenceOneStaleBroker: the registered incarnation stopped heartbeating (it is down
        or was replaced): fence it and move its leaderships and ISR memberships away (under
        semantics "code" as handleBrokerFenced's records, computed from the image)."""
        if not self.registered(s, b) or not self.has_session(s, b):
            return None
        if self.alive(s, b):
            return None  # its session is alive
        return self._fence_expired(s, b)

    def ControllerFencesSilentBroker(self, s, b):
        """maybeFenceOneStaleBroker for a broker whose process still runs: its heartbeats have
        not reached the controller within the session timeout (a long pause, heartbeats lost or
        late), at most ``session_expiries`` times in the run.  The controller fences it as any
        expired broker; the broker keeps running as the same incarnation, with the same epoch,
        and its next heartbeat that the controller handles may unfence it again
        (BrokerLifecycleManager ignores isFenced while RUNNING and keeps heartbeating)."""
        if s[SESSIONS_EXPIRED] >= self.settings.session_expiries:
            return None
        if not self.registered(s, b) or not self.has_session(s, b) or not self.alive(s, b):
            return None
        return self._fence_expired(self._with(s, sessionsExpired=s[SESSIONS_EXPIRED] + 1), b)

    def _fence_expired(self, s, b):
        """handleBrokerFenced for a broker whose session expired."""
        if self.code:
            n = self._with(s, session=except_at(s[SESSION], b, False)) if self.rules.sessions_by_epoch else s
            return self.write(n, self._fence_records(s, b))
        n = self._with(s, fenced=except_at(s[FENCED], b, True))
        if self.mutant == "fenced_leader_kept":
            return n
        parts = tuple(
            self.change_partition(n, p, remove=b) if part is not None and b in part[REPLICAS] else part
            for p, part in enumerate(n[PARTITION])
        )
        return self._with(n, partition=parts)

    def _fence_records(self, view, b):
        """handleBrokerFenced against the image ``view``: the broker out of each partition it is
        in the ISR of (brokerToRemove), then the BrokerRegistrationChangeRecord that fences it
        (written also for a broker fenced already, whose session the releases let expire)."""
        records = [] if self.mutant == "fenced_leader_kept" else self._out_of_isrs_records(view, b)
        return records + [(REGISTRATION_CHANGE, b, True, None, None)]

    def _out_of_isrs_records(self, view, b):
        """generateLeaderAndIsrUpdates with ``b`` to remove, for every partition with ``b`` in its
        ISR: ``b`` out of the ISR (not the last member without ELR) and not acceptable as leader."""
        records = [self.partition_change_record(view, p, remove=b)
                   for p, part in enumerate(view[PARTITION]) if part is not None and b in part[ISR]]
        return [r for r in records if r is not None]

    def ControllerHandlesAssignment(self, s, m):
        """AssignReplicasToDirs: epoch gate; per-partition errors; record the directory, and
        if it is not online for the broker (LOST, unknown) take the replica out as for a
        failed directory.  Under semantics "code" as handleAssignReplicasToDirs writes it: a
        PartitionChangeRecord setting the directory (its election judging replicas on the
        directories the partition had), then, for a directory not online, a second record from
        the same image taking the broker out (generateLeaderAndIsrUpdates): two records, the
        partition epoch up by two.  Under "kip" one change does both."""
        _, b, epoch, p, directory = m
        net = bag_remove(s[NETWORK], m)
        if not self.assignment_supported(s):
            # UnsupportedVersionException: the whole request fails
            return self._with(s, network=bag_add(net, (ASSIGN_RESPONSE, b, epoch, p, directory, False)))
        if not self.epoch_is_current(s, b, epoch) and not (self.mutant == "skip_epoch_check" and self.registered(s, b)):
            return self._with(s, network=net)
        part = s[PARTITION][p]
        n = self._with(s, network=net)
        if part is None or b not in part[REPLICAS]:
            # UNKNOWN_TOPIC_OR_PARTITION / NOT_LEADER_OR_FOLLOWER in the response: nothing written
            return self.write(n, [], (ASSIGN_RESPONSE, b, epoch, p, directory, False))
        dirs = except_at(part[DIRS], part[REPLICAS].index(b), directory)
        online = self._controller_thinks_online(n, b, directory)
        if self.code:
            # handleAssignReplicasToDirs' builder: neither ELR nor the topic's unclean election set
            # (with ELR off before apache/kafka#20716, 4.3.0: finding 9)
            records = [self.partition_change_record(n, p, new_dirs=dirs, acceptor_dirs=part[DIRS], election="online",
                                                    elr_enabled=None if self.rules.assignment_keeps_elr else False)]
            if not online:
                records.append(self.partition_change_record(n, p, remove=b))
            return self.write(n, records, (ASSIGN_RESPONSE, b, epoch, p, directory, True))
        n = self._with(n, network=bag_add(net, (ASSIGN_RESPONSE, b, epoch, p, directory, True)))
        if online:
            new_part = self.change_partition(n, p, new_dirs=dirs)
        else:
            new_part = self.change_partition(n, p, remove=b, new_dirs=dirs)
        return self._with(n, partition=except_at(n[PARTITION], p, new_part))

    def ControllerHandlesAlterReplicaState(self, s, m):
        """KIP-589: epoch gate, then the replica is offline: its directory becomes LOST and it
        leaves the ISR and leadership."""
        _, b, epoch, p = m
        net = bag_remove(s[NETWORK], m)
        if not self.epoch_is_current(s, b, epoch) and not (self.mutant == "skip_epoch_check" and self.registered(s, b)):
            return self._with(s, network=net)
        part = s[PARTITION][p]
        n = self._with(s, network=net)
        if part is None or b not in part[REPLICAS]:
            return n
        dirs = except_at(part[DIRS], part[REPLICAS].index(b), LOST)
        return self.write(n, [self.partition_change_record(n, p, remove=b, new_dirs=dirs)])

    def ControllerHandlesAlterPartition(self, s, m):
        """ReplicationControlManager.alterPartition: the broker epoch (a stale one fails the
        request whole: nothing written, and the leader's pending change ends with it), then
        validateAlterPartitionData's checks in Kafka's order, each an error answered with nothing
        written; then the builder's record with the ISR asked for, its election keeping the
        leader if it is still acceptable (else NEW_LEADER_ELECTED, the record written all the
        same).  The answer goes out once the records are committed."""
        _, b, epoch, p, leader_epoch, partition_epoch, isr_with_epochs, recovering = m
        n = self._with(s, network=bag_remove(s[NETWORK], m))
        proposed = tuple(r for r, _ in isr_with_epochs)

        def answer(error):
            return (ALTER_PARTITION_RESPONSE, b, epoch, p, leader_epoch, proposed, error)

        if not self.epoch_is_current(s, b, epoch) and not (self.mutant == "skip_epoch_check" and self.registered(s, b)):
            return n  # STALE_BROKER_EPOCH
        error = self._alter_partition_error(s, b, p, leader_epoch, partition_epoch, isr_with_epochs, recovering)
        if error != "NONE":
            return self.write(n, [], answer(error))
        record = self.partition_change_record(s, p, target_isr=proposed, recovered=not recovering)
        if record is not None and record[2] not in (NO_LEADER_CHANGE, b):
            return self.write(n, [record], answer("NEW_LEADER_ELECTED"))
        return self.write(n, [record], answer("NONE"))

    def _alter_partition_error(self, s, b, p, leader_epoch, partition_epoch, isr_with_epochs, recovering) -> str:
        """validateAlterPartitionData: the first check the request fails, or NONE."""
        part = s[PARTITION][p]
        proposed = [r for r, _ in isr_with_epochs]
        if leader_epoch > part[LEADER_EPOCH] or partition_epoch > part[PARTITION_EPOCH]:
            return "NOT_CONTROLLER"  # the sender knows a newer partition: this controller is stale
        if leader_epoch < part[LEADER_EPOCH]:
            return "FENCED_LEADER_EPOCH"
        if b != part[LEADER]:
            return "INVALID_REQUEST"
        if partition_epoch < part[PARTITION_EPOCH]:
            return "INVALID_UPDATE_VERSION"
        if len(set(proposed)) != len(proposed) or not set(proposed) <= set(part[REPLICAS]) or part[LEADER] not in proposed:
            return "INVALID_REQUEST"  # Replicas.validateIsr; the ISR must hold the leader
        if recovering and len(proposed) > 1:
            return "INVALID_REQUEST"  # a leader still recovering from an unclean election is the ISR alone
        if recovering and not s[PARTITION][p][RECOVERING]:
            return "INVALID_REQUEST"  # RECOVERED never goes back to RECOVERING
        for r, broker_epoch in isr_with_epochs:
            # ineligibleReplicasForIsr: not registered, fenced, or another incarnation (KIP-903;
            # -1: the leader does not know the epoch, and the check is skipped)
            if not self.registered(s, r) or self.in_controlled_shutdown(s, r):
                return "INELIGIBLE_REPLICA"  # not registered, or shutting down
            if s[FENCED][r] and self.mutant != "fenced_replica_joins_isr":
                return "INELIGIBLE_REPLICA"
            if broker_epoch != -1 and broker_epoch != s[BROKER_EPOCH][r] and self.mutant != "alter_partition_stale_broker_epoch":
                return "INELIGIBLE_REPLICA"
        return "NONE"

    def ControllerCreatesPartition(self, s, p):
        """CreateTopics with a manual assignment: every replica registered, the ISR its unfenced
        replicas (at least one), the first of them leader, directories defaultDir; createTopic's
        PartitionRecord, replayed.  With cordoned directories, a replica on a broker whose
        registration has every directory cordoned refuses the assignment
        (validateManualPartitionAssignment: InvalidReplicaAssignmentException)."""
        if s[PARTITION][p] is not None or (s[DELETED] and s[DELETED][p]):
            return None  # there, or deleted: a topic created anew under its name is another topic
        replicas = self.replicas[p]
        if not all(self.registered(s, r) for r in replicas):
            return None
        if s[REGISTERED_CORDONS] and not all(self.has_uncordoned_dirs(s, r) for r in replicas):
            return None
        isr = tuple(r for r in replicas if self.active(s, r))
        if not isr:
            return None
        dirs = tuple(self.default_dir(s, r) for r in replicas)
        return self.write(s, [(PARTITION_RECORD, p, isr[0], isr, dirs)])

    def AdminDeletesTopic(self, s, p):
        """DeleteTopics (kafka-topics --delete): ControllerApis looks the topic's ID up in the
        committed metadata (findTopicIds reads at the last stable offset), then
        ReplicationControlManager.deleteTopics writes a RemoveTopicRecord for it, which replay
        takes the topic out with (an ID gone from the controller's own state by then:
        UNKNOWN_TOPIC_ID, nothing written)."""
        if self.published(s)[PARTITION][p] is None or s[PARTITION][p] is None:
            return None
        return self.write(s, [(REMOVE_TOPIC, p)])

    def AdminReassignsPartition(self, s, p, target):
        """AlterPartitionReassignments with target replicas ``target`` for p
        (ReplicationControlManager.changePartitionReassignment, on the controller's own state):
        every target broker registered (validateManualPartitionAssignment, else
        InvalidReplicaAssignmentException: nothing written); the replicas it removes are the
        current ones not in the target, those it adds the target's not current ones
        (PartitionReassignmentReplicas), and the replicas the target, then the removed ones.
        The builder's record (an ONLINE election, replicas judged on the partition's directories)
        completes the reassignment at once when the ISR allows it.  A request that changes
        nothing writes nothing."""
        if s[REASSIGNMENTS_MADE] >= self.settings.reassignments:
            return None
        part = s[PARTITION][p]
        if part is None or not all(self.registered(s, r) for r in target):
            return None  # UNKNOWN_TOPIC_OR_PARTITION, or InvalidReplicaAssignmentException
        current = part[REPLICAS]
        removing = tuple(sorted(set(current) - set(target)))
        adding = tuple(sorted(set(target) - set(current)))
        replicas = tuple(target) + removing
        # the builder is told only what differs, and no empty removing or adding
        try:
            record = self.partition_change_record(s, p, election="online", acceptor_dirs=part[DIRS],
                                                  target_replicas=replicas if replicas != current else None,
                                                  target_removing=removing or None, target_adding=adding or None)
        except NotAReplica:
            return None  # the partition's error: UNKNOWN_SERVER_ERROR, nothing written
        if record is None:
            return None
        return self.write(self._with(s, reassignmentsMade=s[REASSIGNMENTS_MADE] + 1), [record])

    def AdminCancelsReassignment(self, s, p):
        """AlterPartitionReassignments with null replicas for p: the reassignment under way is
        reverted (cancelPartitionReassignment, PartitionReassignmentRevert): the replicas it adds
        leave the replicas and the ISR; an ISR left empty takes the first remaining replica, an
        unclean election, refused (InvalidReplicaAssignmentException) unless the topic's
        unclean.leader.election.enable is on.  No reassignment under way:
        NoReassignmentInProgressException.  Either error writes nothing."""
        if s[REASSIGNMENTS_MADE] >= self.settings.reassignments:
            return None
        part = s[PARTITION][p]
        if part is None or not (part[REMOVING] or part[ADDING]):
            return None
        original = tuple(r for r in part[REPLICAS] if r not in part[ADDING])
        isr = tuple(r for r in part[ISR] if r not in part[ADDING])
        unclean = self.controller_unclean_enabled(s)
        if not isr:
            if not unclean:
                return None
            isr = (original[0],)
        try:
            record = self.partition_change_record(s, p, target_isr=isr, election="unclean" if unclean else "online",
                                                  acceptor_dirs=part[DIRS], target_replicas=original, target_removing=(),
                                                  target_adding=())
        except NotAReplica:
            return None
        if record is None:
            return None
        return self.write(self._with(s, reassignmentsMade=s[REASSIGNMENTS_MADE] + 1), [record])

    # -----------------------------------------------------------------------------------------
    # Admin and network
    # -----------------------------------------------------------------------------------------
    def AdminElectsDesignatedLeader(self, s, p, b):
        """KIP-1275: only for a leaderless partition; the designated replica must be in the
        replica set, unfenced and on an online directory.  Like an unclean election, the ISR
        becomes just the new leader, the ELR and the last known leader are cleared, and with
        the data plane the leader is RECOVERING."""
        if not self.settings.designated:
            return None
        return self.designated_election(s, p, b)

    def designated_election(self, s, p, b):
        """ElectLeaders DESIGNATED (KIP-1275), the controller's side: the checks, then the record;
        None when the request fails (nothing written)."""
        part = s[PARTITION][p]
        if part is None or b not in part[REPLICAS]:
            return None
        if part[LEADER] != NO_LEADER and self.mutant != "designated_with_leader":
            return None
        if part[LEADER] == b:
            return None
        if not self.acceptable_leader(s, b, self.replica_dir(part, p, b)):
            return None
        record = (PARTITION_CHANGE, p, b, (b,) if part[ISR] != (b,) else None, None,
                  () if part[ELR] else None, () if part[LAST_KNOWN_ELR] else None,
                  True if self.settings.records and not part[RECOVERING] else None, None, None, None)
        return self.write(s, [record])

    def AdminElectsUncleanLeader(self, s, p):
        """kafka-leader-election --election-type unclean (ReplicationControlManager.electLeader):
        ELECTION_NOT_NEEDED for a partition with a leader; else the builder's UNCLEAN election,
        and ELIGIBLE_LEADERS_NOT_AVAILABLE (nothing written) when it elects nobody."""
        part = s[PARTITION][p]
        if self.settings.unclean_election == "off" or part is None or part[LEADER] != NO_LEADER:
            return None
        record = self.partition_change_record(s, p, election="unclean")
        return None if record is None else self.write(s, [record])

    def ControllerElectsUncleanLeaders(self, s):
        """maybeElectUncleanLeaders, the controller's periodic task with the topic's
        unclean.leader.election.enable: an UNCLEAN election (electLeader) for every leaderless
        partition, all in one batch."""
        if not self.controller_unclean_enabled(s) or self.mutant == "unclean_election_not_retried":
            return None
        records = [self.partition_change_record(s, p, election="unclean")
                   for p, part in enumerate(s[PARTITION]) if part is not None and part[LEADER] == NO_LEADER]
        records = [r for r in records if r is not None]
        return self.write(s, records) if records else None

    def AdminUpgradesMetadataVersion(self, s):
        """kafka-features upgrade to 3.7-IV2: the controller writes a FeatureLevelRecord."""
        if not self.settings.metadata_upgrade or self.assignment_supported(s):
            return None
        return self.write(s, [(FEATURE_LEVEL, MV_3_7_IV2)])

    def AdminAltersMinIsr(self, s, value):
        """kafka-configs --alter --add-config min.insync.replicas=``value`` on the topic
        (ConfigurationControlManager.incrementalAlterConfigs), once it exists: a ConfigRecord, and
        with ELR a ClearElrRecord in the same batch (createClearElrRecordsAsNeeded, KAFKA-16540):
        the eligible leader replicas were chosen under the old value."""
        changes = s[CONFIG_CHANGES]
        if (not changes or changes[MIN_ISR] >= self.settings.min_isr_changes or value == s[TOPIC_CONFIG][MIN_ISR]
                or all(part is None for part in s[PARTITION])):
            return None
        records = [(CONFIG_RECORD, MIN_ISR, value)]
        if self.settings.elr and self.mutant != "min_isr_change_keeps_elr":
            records.append((CLEAR_ELR,))
        n = self.write(s, records)
        return None if n is None else self._with(n, configChanges=except_at(changes, MIN_ISR, changes[MIN_ISR] + 1))

    def AdminTogglesUncleanElection(self, s):
        """kafka-configs --alter on the topic's unclean.leader.election.enable, once it exists: a
        ConfigRecord turning it on or off.  Nothing is elected at once: the controller's periodic
        unclean election (ControllerElectsUncleanLeaders) reads the new value."""
        changes = s[CONFIG_CHANGES]
        if (not changes or changes[UNCLEAN_ENABLED] >= self.settings.unclean_toggles
                or all(part is None for part in s[PARTITION])):
            return None
        n = self.write(s, [(CONFIG_RECORD, UNCLEAN_ENABLED, not s[TOPIC_CONFIG][UNCLEAN_ENABLED])])
        return None if n is None else self._with(n, configChanges=except_at(changes, UNCLEAN_ENABLED, changes[UNCLEAN_ENABLED] + 1))

    def AdminElectsPreferredLeader(self, s, p):
        """kafka-leader-election --election-type preferred (ReplicationControlManager.electLeader),
        as the controller's auto.leader.rebalance.enable also runs it: ELECTION_NOT_NEEDED when
        the first replica leads; else the builder's PREFERRED election (the first replica if in
        the ISR and acceptable, else as any election), and PREFERRED_LEADER_NOT_AVAILABLE
        (nothing written) when that changes nothing."""
        part = s[PARTITION][p]
        if not self.settings.preferred_elections or part is None or part[LEADER] == part[REPLICAS][0]:
            return None
        record = self.partition_change_record(s, p, election="preferred")
        return None if record is None else self.write(s, [record])

    # -----------------------------------------------------------------------------------------
    # The metadata log (with failovers)
    # -----------------------------------------------------------------------------------------
    def AdminCordonsDir(self, s, b, i):
        """KIP-1066: an operator cordons broker b's directory in slot i, or uncordons it
        (kafka-configs --alter --entity-type brokers --entity-name b: cordoned.log.dirs).  Sent to a
        running broker, which checks the path against its log.dirs and forwards it to the
        controller, any change goes; sent to the controller while the broker is not running, only
        an uncordon does, the controller taking a new value only within the current one
        (ConfigurationControlManager.isCordonedLogDirsInvalid).  The broker applies the new value at
        once (DynamicLogConfig.reconfigure), and reads it when it starts."""
        if s[CORDON_CHANGES] >= self.settings.cordons:
            return None
        cordoned = s[CORDONED][b]
        if s[STATUS][b] != RUNNING and i not in cordoned:
            return None
        toggled = tuple(x for x in cordoned if x != i) if i in cordoned else tuple(sorted(cordoned + (i,)))
        return self._with(s, cordoned=except_at(s[CORDONED], b, toggled), cordonChanges=s[CORDON_CHANGES] + 1)

    def ControllerCommits(self, s):
        """The quorum commits the oldest uncommitted batch: the committed image replays it, and
        its answer goes out (QuorumController completes a write's future once its offset is
        committed)."""
        if not s[UNCOMMITTED]:
            return None
        (records, response), rest = s[UNCOMMITTED][0], s[UNCOMMITTED][1:]
        n = self._with(s, committedImage=self.rebuilt_image(s, s[COMMITTED_IMAGE], records), uncommitted=rest)
        return self._with(n, network=bag_add(n[NETWORK], response)) if response else n

    def ControllerFailsOver(self, s, kept):
        """The active controller fails and another takes over (QuorumController.renounce, then the
        new leader's claim).  Raft's new leader holds the committed records and may hold some of
        the uncommitted ones, a prefix: the first ``kept`` batches, which it commits; the rest are
        lost.  The new controller rebuilds its state by replaying the log, and the old one's
        pending answers are lost, those of the kept batches too.  Requests in flight reach the
        new controller: a broker whose request the old one answered NOT_CONTROLLER, or never
        answered, sends it again to the new one."""
        if s[FAILOVERS_DONE] >= self.settings.failovers or kept > len(s[UNCOMMITTED]):
            return None
        records = tuple(record for batch, _ in s[UNCOMMITTED][:kept] for record in batch)
        image = self.rebuilt_image(s, s[COMMITTED_IMAGE], records)
        n = self.with_controller_image(s, image)
        if self.rules.sessions_by_epoch:
            # ClusterControlManager.activate: a session for every registered broker (4.0.x), or
            # every unfenced one (4.1.0 and later); the mutant: none (KAFKA-18138)
            n = self._with(n, session=tuple(self.registered(n, b) and (self.rules.failover_sessions_for_fenced or not n[FENCED][b])
                                             and self.mutant != "failover_without_sessions" for b in self.brokers))
        return self._with(n, committedImage=image, uncommitted=(), failoversDone=s[FAILOVERS_DONE] + 1)
