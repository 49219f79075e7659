"""KIP-1275's recovery tool (kafka-unclean-recovery.sh): one method per TLA+ action.

The operator runs the tool on partitions that went offline.  It asks each replica for its log
(GetReplicaLogInfo: a leader epoch and the log end offset), then designates the replica with
the highest epoch, then the longest log, in an ElectLeaders DESIGNATED request.  Any running
broker answers, fenced ones too, and an answer may be stale by the time it is used; the tool
retries failed elections until its deadline (the requests it may send), and reports a
partition that has come back online instead of electing for it.  The tool works outside the
cluster: it asks nothing of the network the model bounds.
"""

from __future__ import annotations

from .state import (
    REPLICAS,
    ELECTED_BY_TOOL, FOUND_ONLINE, LEADER, LEADER_EPOCH, NO_LEADER, PARTITION, REPLICA_LOG, RUNNING_TOOL, TOOL,
    except_at,
)


class RecoveryToolActions:
    """One method per recovery-tool action of spec/KRaftJBOD.tla."""

    def _tool_may_send(self, s, p) -> bool:
        """The tool may still send a request for p: it has requests left, has not settled p, and
        has taken p up (or may now: below)."""
        _, outcome, requests, taken_up = s[TOOL]
        if requests >= self.settings.recovery_tool or outcome[p] != RUNNING_TOOL:
            return False
        return taken_up[p] != -1 or self._offline_epoch(s, p) is not None

    def _offline_epoch(self, s, p):
        """The leader epoch of p if the operator sees it offline (leaderless in the published
        metadata, what an admin client reads: --all-offline-partitions), else None.  The tool
        takes p up then, and keeps going whatever becomes of the partition."""
        part = self.published(s)[PARTITION][p]
        return part[LEADER_EPOCH] if part is not None and part[LEADER] == NO_LEADER else None

    def replica_log_info(self, s, b, p):
        """Broker b's GetReplicaLogInfo answer for p: <<leader epoch, log end offset>>.  KIP-1275's
        PartitionLeaderEpoch is the partition's current leader epoch in the broker's metadata;
        KIP-966's LastWrittenLeaderEpoch (tool_epoch = "last_written") the epoch of the log's
        last record, -1 for an empty log."""
        log = s[REPLICA_LOG][b][p]
        if self.settings.tool_epoch == "last_written":
            # UnifiedLog.latestEpoch: the leader-epoch cache's last entry (with fetch = "batch", the
            # entry a leader assigns before it has a record of its epoch too)
            return (self.latest_epoch(s, b, p), len(log))
        return (self.broker_view(s, b)[PARTITION][p][LEADER_EPOCH], len(log))

    def ToolAsksReplicaLogInfo(self, s, p, b):
        """GetReplicaLogInfo to replica b of p, once: a running broker whose log of p is readable
        answers (a fenced one too); a broker down, or whose disk failed, does not, and the tool
        may ask again later."""
        if not self._tool_may_send(s, p) or s[TOOL][0][p][b]:
            return None
        if not self.replica_readable(s, b, p) or self.broker_view(s, b)[PARTITION][p] is None:
            return None
        answers, outcome, requests, taken_up = s[TOOL]
        answers = except_at(answers, p, except_at(answers[p], b, self.replica_log_info(s, b, p)))
        if taken_up[p] == -1:
            taken_up = except_at(taken_up, p, self._offline_epoch(s, p))
        return self._with(s, tool=(answers, outcome, requests + 1, taken_up))

    def tool_choice(self, s, p):
        """The replica the tool designates: the highest leader epoch, then the longest log, among
        the answers it holds (the first in replica order on a tie); None without an answer."""
        replicas = s[PARTITION][p][REPLICAS]
        answered = [(s[TOOL][0][p][b], -replicas.index(b), b) for b in replicas if s[TOOL][0][p][b]]
        return max(answered)[2] if answered else None

    def ToolElectsLeader(self, s, p):
        """ElectLeaders DESIGNATED for the chosen replica, as the controller handles it: elected;
        or, for a partition that has a leader again, ELECTION_NOT_NEEDED, which the tool reports
        as online; or refused (the replica is fenced or its directory offline), and the tool
        tries again while it may.  Nothing is written unless a leader is elected."""
        if not self._tool_may_send(s, p):
            return None
        chosen = self.tool_choice(s, p)
        if chosen is None:
            return None
        answers, outcome, requests, taken_up = s[TOOL]
        part = s[PARTITION][p]
        if self.settings.tool_epoch_check and part[LEADER_EPOCH] != taken_up[p]:
            elected = None  # FENCED_LEADER_EPOCH: the partition has had a leader since
        else:
            elected = self.designated_election(s, p, chosen)
        if elected is not None:
            return self._with(elected, tool=(answers, except_at(outcome, p, ELECTED_BY_TOOL), requests + 1, taken_up))
        if part[LEADER] != NO_LEADER:
            return self._with(s, tool=(answers, except_at(outcome, p, FOUND_ONLINE), requests + 1, taken_up))
        return self._with(s, tool=(answers, outcome, requests + 1, taken_up))
