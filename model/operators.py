"""The TLA+ operators every role uses: what a broker's disks hold, what the controller's metadata says,
who may lead, and how a state is rebuilt with some variables changed."""

from __future__ import annotations

from .state import (
    REPLICAS,
    BROKER_EPOCH, BROKER_IMAGE, CLEAN_SHUTDOWN_EPOCH, COMMITTED_IMAGE, IN_CONTROLLED_SHUTDOWN, WANT_SHUTDOWN, FOLLOWER_END, EPOCH_ENTRY, DIRS, DIR_STATE, FAILED, FAILED_ACKED, FENCED, FUTURE, HEALTHY, INCARNATION,
    KNOWN_EPOCH, LOGS, METADATA_VERSION, MV_3_7_IV2, NETWORK, NONE, OFF, ONLINE_DIRS, QUEUED,
    REGISTERED_INCARNATION, RUNNING, STATUS, VARIABLE_INDEX, MIN_ISR, TOPIC_CONFIG, UNCLEAN_ENABLED, except_at,
    CORDONED, REGISTERED_CORDONS,
)
from .uuids import MIGRATING, UNASSIGNED, is_online


class Operators:
    """Shared operators; the constants (``self.brokers``, ``self.replicas``, ...) come from KRaftJBOD."""

    def slot_online(self, s, b, i) -> bool:
        """The broker can use slot i: its disk has not failed in this incarnation."""
        return s[DIR_STATE][b][i] == HEALTHY

    def slot_failed(self, s, b, i) -> bool:
        return s[DIR_STATE][b][i] in (FAILED, FAILED_ACKED)

    def main_slots(self, s, b, p):
        return tuple(i for i in self.slots if p in s[LOGS][b][i])

    def least_loaded_online_slot(self, s, b):
        """Where a broker places a new replica (LogManager.nextLogDirs): the online directory with
        the fewest logs, the first on a tie.  With cordoned directories (KIP-1066) it picks among the
        uncordoned ones, and takes the first online directory when every one is cordoned, or when
        only one is online, cordoned or not."""
        online = [i for i in self.slots if self.slot_online(s, b, i)]
        cordoned = s[CORDONED][b] if s[CORDONED] and self.mutant != "log_dirs_ignore_cordons" else ()
        candidates = [i for i in online if i not in cordoned] if len(online) > 1 else online
        if online and not candidates:
            return online[0]
        best, best_load = NONE, None
        for i in candidates:
            load = len(s[LOGS][b][i]) + sum(1 for p in self.partitions if s[FUTURE][b][p] == i)
            if best_load is None or load < best_load:
                best, best_load = i, load
        return best

    def has_uncordoned_dirs(self, view, b) -> bool:
        """BrokerRegistration.hasUncordonedDirs: the registration lists no directory, or holds no
        cordoned ones (null), or some online directory of it is not cordoned."""
        cordons = view[REGISTERED_CORDONS][b] if view[REGISTERED_CORDONS] else ()
        return not view[ONLINE_DIRS][b] or not cordons or not set(view[ONLINE_DIRS][b]) <= set(cordons[0])

    def replica_dir(self, part, p, b):
        """The directory metadata assigns to broker b's replica of partition p."""
        return part[DIRS][part[REPLICAS].index(b)]

    def published(self, s):
        """The state with the metadata brokers read: the committed image when the metadata log is
        modeled (brokers replay committed records only), else the controller's own state."""
        if not s[COMMITTED_IMAGE]:
            return s
        return self.with_controller_image(s, s[COMMITTED_IMAGE])

    def broker_view(self, s, b):
        """The state with the metadata broker b acts on: the image it has loaded when the brokers'
        lag is modeled, else the published metadata."""
        if not s[BROKER_IMAGE]:
            return self.published(s)
        return self.with_controller_image(s, s[BROKER_IMAGE][b])

    def caught_up(self, s, b) -> bool:
        """The broker has loaded its own registration: Kafka's broker publishes metadata to its
        replica manager, and asks to be unfenced (wantFence false), only once its metadata
        offset reaches its RegisterBrokerRecord's (BrokerServer's initial catch-up,
        BrokerHeartbeatManager.calculateNextBrokerState).  The model compares the epoch and
        incarnation of the loaded registration with the broker's own; an amended registration
        (same incarnation, same epoch) counts as loaded with the one it amends."""
        view = self.broker_view(s, b)
        return view[BROKER_EPOCH][b] == s[KNOWN_EPOCH][b] > 0 and view[REGISTERED_INCARNATION][b] == s[INCARNATION][b]

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

    def in_controlled_shutdown(self, s, b) -> bool:
        """The registration's inControlledShutdown flag (never set without clean shutdowns)."""
        return bool(s[IN_CONTROLLED_SHUTDOWN]) and s[IN_CONTROLLED_SHUTDOWN][b]

    def active(self, s, b) -> bool:
        """ClusterControlManager.isActive: registered, unfenced and not in controlled shutdown."""
        return self.registered(s, b) and not s[FENCED][b] and not self.in_controlled_shutdown(s, b)

    def acceptable_leader(self, s, b, directory) -> bool:
        """PartitionChangeBuilder's isAcceptableLeader: active (isActive), directory online."""
        return self.active(s, b) and self._controller_thinks_online(s, b, directory)

    def min_isr(self, view) -> int:
        """The topic's min.insync.replicas in the metadata ``view``: altered while the cluster runs
        (topicConfig), or as the settings give it."""
        return view[TOPIC_CONFIG][MIN_ISR] if view[TOPIC_CONFIG] else self.settings.min_isr

    def effective_min_isr(self, view, part) -> int:
        """ReplicationControlManager.getTopicEffectiveMinIsr, which the controller's builders take:
        min.insync.replicas, but no more than the partition's replicas (during a reassignment, the
        replicas it removes too); a broker's leader reads min.insync.replicas itself."""
        return min(self.min_isr(view), len(part[REPLICAS]))

    def unclean_enabled(self, view) -> bool:
        """The topic's unclean.leader.election.enable in the metadata ``view``."""
        return view[TOPIC_CONFIG][UNCLEAN_ENABLED] if view[TOPIC_CONFIG] else self.settings.unclean_election == "topic"

    def controller_unclean_enabled(self, view) -> bool:
        """unclean.leader.election.enable as the controller's elections read it
        (ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic: the topic's dynamic
        value first); the mutant reads the value the cluster started with."""
        if self.mutant == "unclean_config_read_statically":
            return self.settings.unclean_election == "topic"
        return self.unclean_enabled(view)

    def default_dir(self, s, b):
        """ClusterDescriber.defaultDir: where a new replica goes before the broker says (MIGRATING
        below 3.7-IV2)."""
        dirs = s[ONLINE_DIRS][b]
        if not dirs or not self.assignment_supported(s):
            return MIGRATING
        if len(dirs) == 1:
            return dirs[0]
        return UNASSIGNED

    def in_flight(self, s, kinds, b, epoch, *rest) -> bool:
        n = 2 + len(rest)
        key = (b, epoch) + rest
        return any(m[0] in kinds and m[1 : 1 + n] == key for m in s[NETWORK])

    def room(self, s) -> bool:
        return len(s[NETWORK]) < self.settings.max_messages

    def _with(self, s, **changes):
        n = list(s)
        for name, value in changes.items():
            n[VARIABLE_INDEX[name]] = value
        return tuple(n)

    def _broker_down(self, s, b):
        """A broker process stops: in-memory queues, epoch, what it knew of its followers and
        its shutdown request are gone; logs (their records and high watermarks), futures and
        disk health stay.  Stopped so, it wrote no clean-shutdown file (the one it read at start
        it deleted then); a clean stop writes one after this."""
        n = self._with(
            s,
            brokerStatus=except_at(s[STATUS], b, OFF),
            queued=except_at(s[QUEUED], b, (NONE,) * len(self.partitions)),
            knownEpoch=except_at(s[KNOWN_EPOCH], b, 0),
        )
        if s[FOLLOWER_END]:
            n = self._with(n, followerEnd=except_at(s[FOLLOWER_END], b, (self.no_follower_state,) * len(self.partitions)))
        if s[EPOCH_ENTRY]:
            # the next start's log recovery truncates the cache at the log's end (LogLoader), taking
            # the entry no record follows with it
            n = self._with(n, epochEntry=except_at(s[EPOCH_ENTRY], b, (-1,) * len(self.partitions)))
        if s[WANT_SHUTDOWN]:
            n = self._with(n, wantShutdown=except_at(s[WANT_SHUTDOWN], b, False),
                           cleanShutdownEpoch=except_at(s[CLEAN_SHUTDOWN_EPOCH], b, -1))
        return n
