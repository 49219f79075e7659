"""What must eventually happen: the progress properties KIP-858 and the controller promise, each a
leads-to named like its TLA+ operator, and the fairness that makes them hold (model setting
``progress``; spec/README.md gives each one's verdicts).

Each property is ``\\A x: Stuck(x) ~> ~Stuck(x)``: a situation that needs someone to act does
not last for ever.  The fairness is what the properties need under the KIP's reading, each
condition standing for something real (that no weaker set would do is not checked):

- the broker's own loops are weakly fair: its heartbeat timer, its registration and assignment
  retries (AssignmentsManager), its metadata publisher, its log-directory failure timer;
- a response's handler is weakly fair per broker (the message's ``broker``): a response
  reaches a broker that keeps running;
- the controller's handlers of a request, per sender broker, and its timers (the
  heartbeat-session check that fences an expired incarnation, the periodic unclean election with
  the topic's unclean.leader.election.enable) are strongly fair: a controller that keeps running
  serves its queue in turn.  Each of them writes records, and with the metadata log
  (``failovers``) a write waits while ``max_uncommitted`` batches are uncommitted: enabled only
  between commits, a weakly fair handler could wait for ever behind a loop of heartbeats, which
  the controller's queue does not allow;
- the quorum committing what the controller appended is weakly fair;
- sending a request needs room in the network (``max_messages``), which other messages take and
  give back: the broker's sends are strongly fair, as its retry timers keep firing however often
  the connection is busy;
- the controller may time out any one heartbeat (a request that waited too long in its queue), but
  not every heartbeat for ever: handling a heartbeat is strongly fair.

Nothing is fair for the environment: crashes, restarts, disk failures, lost messages, moves,
operators, producers and the recovery tool may act or not.  Their bounds (``restarts``,
``dir_failures``, ``max_losses``, ...) end each of them after finitely many steps.
"""

from __future__ import annotations

from kraftcheck.checker.temporal import for_each, leads_to, strong_fairness, weak_fairness

from .data import agreement
from .network import DELIVERY_ACTION
from .state import (
    REPLICAS,
    DIR_STATE, ELR, FAILED, FENCED, HEALTHY, ISR, LEADER, LEADER_EPOCH, LOGS, NONE, NO_LEADER, PARTITION, QUEUED,
    REPLICA_LOG, RUNNING, STATUS,
)

#: The broker's and the controller's duties: (action, fairness), each condition per parameter, or,
#: for a message's delivery, per the broker that sent it or is answered (TLA+ quantifies over
#: brokers, not over every message there could be).
PROGRESS_FAIRNESS = (
    ("BrokerSendsRegistration", strong_fairness),
    ("BrokerReceivesRegistrationResponse", weak_fairness),
    ("BrokerSendsHeartbeat", strong_fairness),
    ("BrokerReceivesHeartbeatResponse", weak_fairness),
    ("BrokerConsumesMetadata", weak_fairness),
    ("BrokerSendsAssignment", strong_fairness),
    ("BrokerReceivesAssignmentResponse", weak_fairness),
    ("BrokerShutsDownOnDirFailureTimeout", weak_fairness),
    ("BrokerSendsAlterReplicaState", strong_fairness),
    ("BrokerLoadsMetadata", weak_fairness),
    ("ControllerHandlesRegistration", strong_fairness),
    ("ControllerHandlesHeartbeat", strong_fairness),
    ("ControllerFencesExpiredBroker", strong_fairness),
    ("ControllerHandlesAssignment", strong_fairness),
    ("ControllerHandlesAlterReplicaState", strong_fairness),
    ("ControllerHandlesAlterPartition", strong_fairness),
    ("BrokerReceivesAlterPartitionResponse", weak_fairness),
    ("ControllerElectsUncleanLeaders", strong_fairness),
    ("ControllerCommits", weak_fairness),
)

#: With Kafka's fetch protocol (fetch = "batch"), a leader's replica manager applies the metadata
#: that makes it leader, and a follower's fetcher thread keeps fetching while its metadata names a
#: leader that answers: both weakly fair per broker and partition.  Without it a fetch is one step
#: that leaves no divergence behind, and neither is needed.
FETCH_FAIRNESS = (
    ("LeaderStartsEpoch", weak_fairness),
    ("FollowerFetches", weak_fairness),
)


def message_broker(action) -> int:
    """The broker a delivery action's message is from or to."""
    return action[1][1]


def named(predicate, name: str):
    """The predicate, named as the property's formula shows it."""
    predicate.__name__ = name
    return predicate


def lasts_not(stuck, name: str, values):
    """``\\A x \\in values: Stuck(x) ~> ~Stuck(x)``."""
    def one(x):
        label = f"{name}({', '.join(map(str, x)) if isinstance(x, tuple) else x})"
        return leads_to(named(lambda s: stuck(s, x), label), named(lambda s: not stuck(s, x), f"~{label}"))
    return for_each(values, one)


class Progress:
    """The progress properties and their fairness (with the model setting ``progress``)."""

    def progress_properties(self) -> dict:
        pairs = tuple((b, p) for b in self.brokers for p in self.partitions)
        properties = {
            "FailedDirLeadershipsMove": lasts_not(self.LeadsFromFailedDir, "LeadsFromFailedDir", self.partitions),
            "RunningBrokerUnfenced": lasts_not(self.RunningButFenced, "RunningButFenced", self.brokers),
            "AssignmentSettled": lasts_not(self.AssignmentPending, "AssignmentPending", pairs),
            "LeaderlessPartitionElected": lasts_not(self.LeaderlessWithCandidate, "LeaderlessWithCandidate",
                                                    self.partitions),
            "ReportedFailureSettled": lasts_not(self.FailureUnacknowledged, "FailureUnacknowledged", self.brokers),
            "DeadBrokerFenced": lasts_not(self.DeadButUnfenced, "DeadButUnfenced", self.brokers),
        }
        if self.batch_fetches:
            properties["DivergedFollowerTruncates"] = lasts_not(self.FollowerDiverged, "FollowerDiverged", pairs)
        return properties

    def progress_fairness(self) -> list:
        duties = PROGRESS_FAIRNESS + (FETCH_FAIRNESS if self.batch_fetches else ())
        return [fair(action, per=message_broker) if action in DELIVERY_ACTION.values() else fair(action, per_parameter=True)
                for action, fair in duties]

    def FailedDirLeadershipsMove(self):
        """A running broker that leads partition p from a failed directory (its log only on
        failed disks) stops leading it: the controller moves the leadership, or the broker stops."""

    def RunningBrokerUnfenced(self):
        """A running broker (its registration answered) that the controller holds fenced is
        eventually unfenced, or stops running."""

    def AssignmentSettled(self):
        """A directory assignment the broker has queued is eventually settled, accepted or given
        up, and not retried for ever (KAFKA-16886, KAFKA-17190), or the broker stops."""

    def LeaderlessPartitionElected(self):
        """A leaderless partition with an acceptable candidate (an ISR member, an ELR member when
        the ISR is empty, any replica with the topic's unclean elections) eventually has a
        leader, or loses its candidates."""

    def ReportedFailureSettled(self):
        """A directory failure a running broker has noticed is eventually acknowledged by the
        controller, or the broker shuts down (log.dir.failure.timeout.ms)."""

    def DeadBrokerFenced(self):
        """A registered incarnation that the controller holds unfenced but that no longer runs (it
        crashed, or shut down) is eventually fenced, or a new incarnation registers: its heartbeat
        session expires, also when it died as another controller took over (KAFKA-18138)."""

    def DivergedFollowerTruncates(self):
        """With Kafka's fetch protocol, a follower that can fetch from the leader its metadata names,
        in that leader's epoch, and whose log is not a prefix of the leader's, eventually truncates
        until it is (KIP-279; a new leader's cache entry for its epoch, KAFKA-7415), or stops
        following that leader."""

    # The stuck situations, one per property.
    def LeadsFromFailedDir(self, s, p) -> bool:
        part = s[PARTITION][p]
        if part is None or part[LEADER] == NO_LEADER:
            return False
        b = part[LEADER]
        if not self.alive(s, b):
            return False
        on = [i for i in self.slots if p in s[LOGS][b][i]]
        return bool(on) and all(s[DIR_STATE][b][i] != HEALTHY for i in on)

    def RunningButFenced(self, s, b) -> bool:
        return s[STATUS][b] == RUNNING and s[FENCED][b]

    def AssignmentPending(self, s, bp) -> bool:
        b, p = bp
        return s[STATUS][b] == RUNNING and s[QUEUED][b][p] != NONE

    def LeaderlessWithCandidate(self, s, p) -> bool:
        part = s[PARTITION][p]
        if part is None or part[LEADER] != NO_LEADER:
            return False
        candidates = part[ISR] or (part[ELR] if self.settings.elr else ())
        if self.unclean_enabled(s):
            candidates = part[REPLICAS]
        return any(r in part[REPLICAS] and self.registered(s, r) and not s[FENCED][r]
                   and self.dir_online_in_metadata(s, r, self.replica_dir(part, p, r)) for r in candidates)

    def DeadButUnfenced(self, s, b) -> bool:
        return self.registered(s, b) and not s[FENCED][b] and not self.alive(s, b)

    def FailureUnacknowledged(self, s, b) -> bool:
        return s[STATUS][b] == RUNNING and FAILED in s[DIR_STATE][b]

    def FollowerDiverged(self, s, bp) -> bool:
        b, p = bp
        part = self.broker_view(s, b)[PARTITION][p]
        if part is None or part[LEADER] in (NO_LEADER, b) or not self.fetching_from(s, b, p, part[LEADER], part[LEADER_EPOCH]):
            return False
        served = self.leading(s, part[LEADER], p)
        if served is None or served[LEADER_EPOCH] != part[LEADER_EPOCH]:
            return False
        mine = s[REPLICA_LOG][b][p]
        return agreement(mine, s[REPLICA_LOG][part[LEADER]][p]) < len(mine)
