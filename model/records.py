"""Metadata records and their replay, as Kafka's controller writes them: a handler computes its records
from the image it read (PartitionChangeBuilder), and replay applies them in order, one rule per record
kind (ReplicationControlManager.replay, ClusterControlManager.replay)."""

from __future__ import annotations

from .state import (
    METADATA_VERSION, METADATA_VERSION_NAMES, MV_3_5, dir_name, CONTROLLER_VARIABLES, FEATURE_LEVEL, NETWORK, UNCOMMITTED, bag_add,
    ACKED, REPLICA_LOG, BROKER_EPOCH, DIRS, ELR, FENCED, ISR, LAST_KNOWN_ELR, LEADER, RECOVERING, REPLICAS, REMOVING, ADDING, LEADER_EPOCH, NONE, NO_LEADER, NO_LEADER_CHANGE,
    ONLINE_DIRS, PARTITION, PARTITION_CHANGE, PARTITION_EPOCH, PARTITION_RECORD,
    REGISTERED_INCARNATION, REGISTER_BROKER, AWAITED_HEARTBEATS, IN_CONTROLLED_SHUTDOWN, LOST_BY_ELECTION, except_at,
    given_up_unless, holds, CLEAR_ELR, CONFIG_RECORD, TOPIC_CONFIG, MIN_ISR, CORDONED_DIRS, REGISTERED_CORDONS, DELETED, REMOVE_TOPIC,
)


class NotAReplica(Exception):
    """PartitionRegistration.directory's IllegalArgumentException: a builder's LeaderAcceptor asked
    for the directory of a broker that is not among the registration's replicas (an eligible leader
    replica a reassignment removed, then added back); the request fails, nothing written."""

    def __init__(self, p, b):
        super().__init__(f"Replica {b} is not assigned to partition {p}")


class Records:
    """Building PartitionChangeRecords from an image, and replaying every record kind."""

    def partition_change_record(self, view, p, remove=NONE, add=NONE, new_dirs=None, keep_in_isr=False, acceptor_dirs=None,
                                target_isr=None, unclean_shutdown=NONE, election=None, elr_enabled=None, recovered=False,
                                target_replicas=None, target_removing=None, target_adding=None):
        """PartitionChangeBuilder.build, reading the image ``view``: remove a broker from the ISR
        (without ELR never the last member), then elect: the current leader if still valid, else
        the first valid replica in replica order (valid: in the ISR, or in the ELR when the ISR
        is empty, and acceptable), else with ELR the last known leader when ISR and ELR are empty
        (KIP-966's last-known-leader election, unclean), else for an ``"unclean"`` election the
        first acceptable replica, else no leader.  ``remove`` is never an acceptable leader and
        ``add`` is one though the image still has it fenced (generateLeaderAndIsrUpdates'
        brokerToRemove and brokerToAdd).  A replica is judged on ``acceptor_dirs`` (Kafka's
        LeaderAcceptor reads the registration the builder started from), by default the new
        directories.  ``target_isr``: the ISR a leader's AlterPartition asks for
        (setTargetIsrWithBrokerStates), instead; ``recovered``: it also reports its recovery
        done (setTargetLeaderRecoveryState).  ``unclean_shutdown`` leaves the ISR and the ELR
        and may not lead (handleBrokerUncleanShutdown).  ``election``: "online", "unclean" or
        "preferred" (the first replica if valid, then as "online"),
        by default the topic's unclean.leader.election.enable; ``elr_enabled``: by default the
        metadata version's (handleAssignReplicasToDirs' builder leaves it off).  ``target_replicas``,
        ``target_removing``, ``target_adding``: a reassignment's replicas, and the replicas it removes
        and adds (setTargetReplicas, setTargetRemoving, setTargetAdding), by default the
        registration's.  A reassignment under way completes first (completeReassignmentIfNeeded):
        once the target ISR less the replicas it removes is not empty and holds every remaining
        replica (from 4.3.0, KAFKA-19975: every replica it adds, and every remaining one only when
        it removes more than it adds), those are the replicas and that the ISR.  A new replica's directory is the
        controller's default one (setAssignmentChanges), and a record that drops a replica bumps
        the leader epoch (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded).  With ELR an ISR
        shorter than min.insync.replicas keeps the members it lost as eligible leader replicas,
        one at least as long clears them.  An unclean election's leader is the ISR alone and,
        with the data plane, RECOVERING.  Returns the PartitionChangeRecord, holding only what
        changes, or None when nothing does."""
        part = view[PARTITION][p]
        leader, isr, dirs, elr, known = part[LEADER], part[ISR], part[DIRS], part[ELR], part[LAST_KNOWN_ELR]
        elr_on = self.settings.elr if elr_enabled is None else elr_enabled
        if election is None:
            election = "unclean" if self.controller_unclean_enabled(view) else "online"
        target_dirs = dirs if new_dirs is None else new_dirs
        judged_dirs = target_dirs if acceptor_dirs is None else acceptor_dirs
        if target_isr is None:
            target_isr = isr
            leaving = {remove, unclean_shutdown} & set(isr)
            if leaving and not keep_in_isr:
                target_isr = tuple(r for r in isr if r not in leaving)
        replicas = part[REPLICAS] if target_replicas is None else target_replicas
        removing = part[REMOVING] if target_removing is None else target_removing
        adding = part[ADDING] if target_adding is None else target_adding
        if removing or adding:
            # completeReassignmentIfNeeded (PartitionReassignmentReplicas.maybeCompleteReassignment)
            kept_isr = tuple(r for r in target_isr if r not in removing)
            kept = tuple(r for r in replicas if r not in removing)
            if self.rules.reassignment_completes_once_added_in_sync:  # KAFKA-19975
                in_sync = set(adding) <= set(kept_isr) and (len(adding) >= len(removing) or set(kept) <= set(kept_isr))
            else:
                in_sync = set(kept) <= set(kept_isr)
            if kept_isr and kept and in_sync:
                target_isr, replicas, removing, adding = kept_isr, kept, (), ()
        # Kafka's LeaderAcceptor looks a replica's directory up in the registration the builder
        # started from (PartitionRegistration.directory)
        judged = dict(zip(part[REPLICAS], judged_dirs))
        # maybePopulateTargetElr (its lastKnownElr is not used: Kafka's controller keeps the last
        # known leader there instead, useLastKnownLeaderInBalancedRecovery)
        target_elr = elr
        if elr_on:
            if len(target_isr) >= self.effective_min_isr(view, part):
                target_elr = ()
            else:
                candidates = set(elr) | set(isr)
                target_elr = tuple(sorted(r for r in candidates if r not in target_isr and r != unclean_shutdown))

        def acceptable(r):
            # LeaderAcceptor: the broker first (isActive; brokerToAdd need only be registered), then
            # its directory, which PartitionRegistration.directory finds only for a replica of the
            # registration: for another broker it throws, and the handler fails
            if r in (remove, unclean_shutdown) or not (self.registered(view, r) if r == add else self.active(view, r)):
                return False
            if r not in judged:
                raise NotAReplica(p, r)
            return self._controller_thinks_online(view, r, judged[r])

        def valid(r):  # isValidNewLeader
            return (r in target_isr or (not target_isr and r in target_elr)) and acceptable(r)

        unclean = False
        if election == "preferred" and valid(replicas[0]):
            new_leader = replicas[0]  # electPreferredLeader: the first replica first
        elif leader != NO_LEADER and valid(leader):
            new_leader = leader
        else:
            new_leader = next((r for r in replicas if valid(r)), NO_LEADER)
            if (new_leader == NO_LEADER and elr_on and not target_elr and not target_isr and len(known) == 1
                    and (acceptable(known[0]) or self.mutant == "elect_unacceptable_last_leader"
                         or self.rules.last_known_leader_unchecked)):
                new_leader, unclean = known[0], True  # canElectLastKnownLeader (KAFKA-19522 fixed)
            elif new_leader == NO_LEADER and election == "unclean":
                new_leader = next((r for r in replicas if acceptable(r)), NO_LEADER)
                unclean = new_leader != NO_LEADER
        record_isr, record_recovering = None, None
        if new_leader != leader:
            if new_leader in target_elr:
                target_isr, target_elr = (new_leader,), tuple(r for r in target_elr if r != new_leader)
            if unclean:
                record_isr = (new_leader,)
                if self.settings.records and not part[RECOVERING] and self.mutant != "unclean_not_recovering":
                    record_recovering = True  # isLeaderRecoverySupported
        record_leader = new_leader if new_leader != leader else NO_LEADER_CHANGE
        if record_leader == NO_LEADER_CHANGE and not set(part[REPLICAS]) <= set(replicas):
            record_leader = leader  # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded
        if not elr_on or record_isr is not None:  # maybeUpdateRecordElr
            target_elr = ()
        record_elr = target_elr if target_elr != elr else None
        if record_isr is None and (target_isr or elr_on) and target_isr != isr:
            record_isr = target_isr
        if (record_leader == NO_LEADER_CHANGE and record_isr is not None and not set(isr) <= set(record_isr)
                and view[METADATA_VERSION] == MV_3_5 and self.mutant != "no_leader_epoch_bump_on_isr_shrink"):
            # triggerLeaderEpochBumpForIsrShrinkIfNeeded: below 3.6-IV0 the brokers' replica manager
            # needs a new leader epoch whenever the ISR shrinks (KAFKA-15021)
            record_leader = leader
        record_known = None  # maybeUpdateLastKnownLeader
        if elr_on and self.rules.last_known_leader_when_leaderless:
            if record_leader == NO_LEADER and not known:
                record_known = (leader,)
            elif record_leader >= 0 and known:
                record_known = ()
        elif elr_on and record_isr == () and not (len(known) == 1 and known[0] == leader):
            record_known = (leader,)
        elif elr_on and (record_leader >= 0 or (leader != NO_LEADER and record_leader != NO_LEADER)) and known:
            record_known = ()
        if recovered and part[RECOVERING]:
            record_recovering = False
        # setAssignmentChanges: each replica's directory, the controller's default one for a new replica
        if replicas != part[REPLICAS]:
            assigned = dict(zip(part[REPLICAS], target_dirs))
            target_dirs = tuple(assigned[r] if r in assigned else self.default_dir(view, r) for r in replicas)
        record_dirs = target_dirs if target_dirs != dirs else None
        record = (PARTITION_CHANGE, p, record_leader, record_isr, record_dirs, record_elr, record_known, record_recovering,
                  replicas if replicas != part[REPLICAS] else None, removing if removing != part[REMOVING] else None,
                  adding if adding != part[ADDING] else None)
        return None if record[2:] == (NO_LEADER_CHANGE,) + (None,) * 8 else record

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
                fresh = (leader, isr, dirs, 0, 0, (), (), False, self.replicas[p], (), ())
                s = self._with(s, partition=except_at(s[PARTITION], p, fresh))
            elif record[0] == REGISTER_BROKER:
                # ClusterControlManager.replay(RegisterBrokerRecord): the registration is replaced
                # whole, logDirs included (none below 3.7-IV2).
                _, b, incarnation_id, epoch, fenced, log_dirs = record
                if s[IN_CONTROLLED_SHUTDOWN]:
                    # registerBroker amends a registration with its inControlledShutdown flag; a new
                    # incarnation's record has the default, false
                    amended = s[REGISTERED_INCARNATION][b] == incarnation_id and s[IN_CONTROLLED_SHUTDOWN][b]
                    s = self._with(s, inControlledShutdown=except_at(s[IN_CONTROLLED_SHUTDOWN], b, amended))
                s = self._with(
                    s,
                    brokerEpoch=except_at(s[BROKER_EPOCH], b, epoch),
                    registeredIncarnation=except_at(s[REGISTERED_INCARNATION], b, incarnation_id),
                    fenced=except_at(s[FENCED], b, fenced),
                    onlineDirs=except_at(s[ONLINE_DIRS], b, tuple(sorted(set(log_dirs)))),
                )
                # the heartbeat manager's entry is made anew: no controlled shutdown, no offset
                s = self._offset_forgotten(s, b, leaves_controlled_shutdown=True)
                if s[REGISTERED_CORDONS]:
                    # the record carries no cordonedLogDirs: null until a heartbeat reports them
                    s = self._with(s, registeredCordons=except_at(s[REGISTERED_CORDONS], b, ()))
            elif record[0] == FEATURE_LEVEL:
                # FeatureControlManager.replay(FeatureLevelRecord)
                s = self._with(s, metadataVersion=record[1])
            elif record[0] == CONFIG_RECORD:
                # ConfigurationControlManager.replay(ConfigRecord)
                s = self._with(s, topicConfig=except_at(s[TOPIC_CONFIG], record[1], record[2]))
            elif record[0] == CORDONED_DIRS:
                # ClusterControlManager.replay(BrokerRegistrationChangeRecord) with cordonedLogDirs set;
                # as every registration change, it makes the heartbeat manager's entry anew
                b = record[1]
                s = self._with(s, registeredCordons=except_at(s[REGISTERED_CORDONS], b, (record[2],)))
                s = self._offset_forgotten(s, b, leaves_controlled_shutdown=s[FENCED][b])
            elif record[0] == REMOVE_TOPIC:
                # ReplicationControlManager.replay(RemoveTopicRecord): the topic and its partitions gone
                p = record[1]
                s = self._with(s, partition=except_at(s[PARTITION], p, None), deleted=except_at(s[DELETED], p, True))
            elif record[0] == CLEAR_ELR:
                # ReplicationControlManager.replay(ClearElrRecord): every partition that has an ELR or
                # a last known leader merges a record emptying both (its partition epoch goes up)
                cleared = tuple(part if part is None or not (part[ELR] or part[LAST_KNOWN_ELR])
                                else self.merged(part, (PARTITION_CHANGE, p, NO_LEADER_CHANGE, None, None, (), (), None, None,
                                                        None, None))
                                for p, part in enumerate(s[PARTITION]))
                s = self._with(s, partition=cleared)
            else:
                _, b, fenced, log_dirs, in_controlled_shutdown = record
                if fenced is not None:
                    s = self._with(s, fenced=except_at(s[FENCED], b, fenced))
                # ClusterControlManager.replay(BrokerRegistrationChangeRecord): an empty logDirs
                # means "no change", not "no directory online".
                if log_dirs and not (rebuilding and self.mutant == "replay_ignores_log_dirs"):
                    s = self._with(s, onlineDirs=except_at(s[ONLINE_DIRS], b, log_dirs))
                if in_controlled_shutdown is not None:
                    s = self._with(s, inControlledShutdown=except_at(s[IN_CONTROLLED_SHUTDOWN], b, in_controlled_shutdown))
                s = self._offset_forgotten(s, b, leaves_controlled_shutdown=s[FENCED][b])
        return s

    def _offset_forgotten(self, s, b, leaves_controlled_shutdown):
        """BrokerHeartbeatManager.register, which replaying a registration record calls: the
        broker's metadata offset is forgotten (-1, unless its fencing changed, and a fenced
        broker is not active anyway), so every controlled shutdown under way awaits its next
        heartbeat; a new entry, or a fenced broker, is in no controlled shutdown.  (So the
        heartbeat that unfences a broker does not count towards another's controlled shutdown.)"""
        awaited = s[AWAITED_HEARTBEATS]
        if not awaited:
            return s
        awaited = tuple(a if x == b or not a or b in a[0] else (tuple(sorted(a[0] + (b,))),) for x, a in enumerate(awaited))
        if leaves_controlled_shutdown:
            awaited = except_at(awaited, b, ())
        return self._with(s, awaitedHeartbeats=awaited)

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

    def given_up(self, s, n):
        """The ghost ``acked`` after a controller step from ``s`` to ``n``: an election that
        declares itself unclean (its record marks the new leader RECOVERING: an unclean, a
        last-known-leader or a designated election) gives up the acknowledged records its new
        leader's log lacks, and they stay in ``acked`` marked with that election (the new leader
        and its leader epoch); a clean election gives up nothing.  (With failovers the
        controller's own state decides: an election the failover then drops has given them up
        all the same.)"""
        if not s[ACKED] or n[PARTITION] is s[PARTITION]:
            return n
        acked = list(n[ACKED])
        for p, (before, after) in enumerate(zip(s[PARTITION], n[PARTITION])):
            if before is None or after is None or after[LEADER] in (NO_LEADER, before[LEADER]) or not after[RECOVERING]:
                continue
            log = n[REPLICA_LOG][after[LEADER]][p]
            acked[p] = given_up_unless(acked[p], lambda e: holds(log, e), (LOST_BY_ELECTION, after[LEADER], after[LEADER_EPOCH]))
        return self._with(n, acked=tuple(acked))

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
        _, _, leader, isr, dirs, elr, known, recovering, replicas, removing, adding = record
        return (
            part[LEADER] if leader == NO_LEADER_CHANGE else leader,
            part[ISR] if isr is None else isr,
            part[DIRS] if dirs is None else dirs,
            part[LEADER_EPOCH] + (0 if leader == NO_LEADER_CHANGE else 1),
            part[PARTITION_EPOCH] + 1,
            part[ELR] if elr is None else elr,
            part[LAST_KNOWN_ELR] if known is None else known,
            part[RECOVERING] if recovering is None else recovering,
            part[REPLICAS] if replicas is None else replicas,
            part[REMOVING] if removing is None else removing,
            part[ADDING] if adding is None else adding,
        )

    def change_partition(self, s, p, remove=NONE, new_dirs=None, keep_in_isr=False):
        """The partition after a PartitionChangeRecord computed from ``s`` and replayed onto it."""
        record = self.partition_change_record(s, p, remove=remove, new_dirs=new_dirs, keep_in_isr=keep_in_isr)
        return s[PARTITION][p] if record is None else self.merged(s[PARTITION][p], record)


def record_label(record: tuple) -> str:
    """A metadata record as a trace shows it: ``PartitionChange(p0, leader 1, isr [1])``."""
    kind = record[0]
    if kind == PARTITION_CHANGE:
        _, p, leader, isr, dirs, elr, known, recovering, replicas, removing, adding = record
        said = [] if leader == NO_LEADER_CHANGE else [f"leader {leader}"]
        said += [] if isr is None else [f"isr {list(isr)}"]
        said += [] if dirs is None else [f"dirs {[dir_name(d) for d in dirs]}"]
        said += [] if elr is None else [f"elr {list(elr)}"]
        said += [] if known is None else [f"lastKnownElr {list(known)}"]
        said += [] if recovering is None else ["RECOVERING" if recovering else "RECOVERED"]
        said += [] if replicas is None else [f"replicas {list(replicas)}"]
        said += [] if removing is None else [f"removingReplicas {list(removing)}"]
        said += [] if adding is None else [f"addingReplicas {list(adding)}"]
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
    if kind == CONFIG_RECORD:
        key = "min.insync.replicas" if record[1] == MIN_ISR else "unclean.leader.election.enable"
        value = str(record[2]).lower() if isinstance(record[2], bool) else record[2]
        return f"Config({key}={value})"
    if kind == CLEAR_ELR:
        return "ClearElr"
    if kind == REMOVE_TOPIC:
        return f"RemoveTopic(p{record[1]})"
    if kind == CORDONED_DIRS:
        return f"BrokerRegistrationChange(b{record[1]}, cordonedLogDirs {[dir_name(d) for d in record[2]]})"
    _, b, fenced, log_dirs, in_controlled_shutdown = record
    said = [] if fenced is None else ["fenced" if fenced else "unfenced"]
    said += [f"logDirs {[dir_name(d) for d in log_dirs]}"] if log_dirs else []
    said += ["inControlledShutdown"] if in_controlled_shutdown else []
    return f"BrokerRegistrationChange(b{b}{', ' if said else ''}{', '.join(said)})"

