"""The network: messages in flight as a bag, lost at most ``max_losses`` times, delivered to the
action that handles their kind, and shown in traces by ``message_label``."""

from __future__ import annotations

from .state import (
    ALTER_PARTITION, ALTER_PARTITION_RESPONSE, ALTER_REPLICA_STATE, ASSIGN, ASSIGN_RESPONSE, HEARTBEAT, HEARTBEAT_RESPONSE, LOST_MESSAGES,
    GIVEN_UP, KNOWN_EPOCH, MESSAGE_NAMES, NETWORK, QUEUED, REGISTER, REGISTER_RESPONSE, RUNNING, STATUS, bag_remove, dir_name,
    except_at,
)


#: The action that handles a message's delivery, by message kind.
DELIVERY_ACTION = {
    REGISTER: "ControllerHandlesRegistration",
    REGISTER_RESPONSE: "BrokerReceivesRegistrationResponse",
    HEARTBEAT: "ControllerHandlesHeartbeat",
    HEARTBEAT_RESPONSE: "BrokerReceivesHeartbeatResponse",
    ASSIGN: "ControllerHandlesAssignment",
    ASSIGN_RESPONSE: "BrokerReceivesAssignmentResponse",
    ALTER_REPLICA_STATE: "ControllerHandlesAlterReplicaState",
    ALTER_PARTITION: "ControllerHandlesAlterPartition",
    ALTER_PARTITION_RESPONSE: "BrokerReceivesAlterPartitionResponse",
}


class NetworkActions:
    """The network's own action: losing a message."""

    def NetworkLosesMessage(self, s, m):
        if s[LOST_MESSAGES] >= self.settings.max_losses:
            return None
        n = self._with(s, network=bag_remove(s[NETWORK], m), lostMessages=s[LOST_MESSAGES] + 1)
        if self.mutant == "assignment_not_retried" and m[0] in (ASSIGN, ASSIGN_RESPONSE):
            # the broker's wait for the answer times out and nothing reschedules the entry
            b, epoch, p, directory = m[1:5]
            if s[STATUS][b] == RUNNING and epoch == s[KNOWN_EPOCH][b] and s[QUEUED][b][p] == directory:
                return self._with(n, queued=except_at(s[QUEUED], b, except_at(s[QUEUED][b], p, GIVEN_UP)))
        return n


def message_label(m: tuple) -> str:
    """A message in flight as a trace shows it: ``Heartbeat(b0, epoch 1, offline [dir-1])``."""
    kind = MESSAGE_NAMES[m[0]]
    if m[0] == REGISTER:
        previous = f", previousBrokerEpoch {m[4]}" if m[4] >= 0 else ""
        return f"{kind}(b{m[1]}, incarnation {m[2]}, dirs {[dir_name(d) for d in m[3]]}{previous})"
    if m[0] == REGISTER_RESPONSE:
        return f"{kind}(b{m[1]}, incarnation {m[2]}, {f'epoch {m[3]}' if m[3] else 'error'})"
    if m[0] in (HEARTBEAT, HEARTBEAT_RESPONSE):
        flags = [name for name, on in ((("wantFence", m[4]), ("wantShutDown", m[5])) if m[0] == HEARTBEAT
                                       else (("shouldShutDown", m[4]),)) if on]
        cordoned = f", cordoned {[dir_name(d) for d in m[6][0]]}" if m[0] == HEARTBEAT and m[6] else ""
        return f"{kind}(b{m[1]}, epoch {m[2]}, offline {[dir_name(d) for d in m[3]]}{''.join(', ' + f for f in flags)}{cordoned})"
    if m[0] == ASSIGN:
        return f"{kind}(b{m[1]}, epoch {m[2]}, p{m[3]} -> {dir_name(m[4])})"
    if m[0] == ASSIGN_RESPONSE:
        return f"{kind}(b{m[1]}, epoch {m[2]}, p{m[3]} -> {dir_name(m[4])}, {'ok' if m[5] else 'error'})"
    if m[0] == ALTER_PARTITION:
        isr = ", ".join(f"b{r} epoch {e}" for r, e in m[6])
        recovering = ", RECOVERING" if m[7] else ""
        return f"{kind}(b{m[1]}, epoch {m[2]}, p{m[3]}, leader epoch {m[4]}, partition epoch {m[5]}, isr [{isr}]{recovering})"
    if m[0] == ALTER_PARTITION_RESPONSE:
        return f"{kind}(b{m[1]}, epoch {m[2]}, p{m[3]}, leader epoch {m[4]}, isr {list(m[5])}, {m[6]})"
    return f"{kind}(b{m[1]}, epoch {m[2]}, p{m[3]})"
