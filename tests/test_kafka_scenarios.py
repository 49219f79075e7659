"""Fixed action sequences taken from Apache Kafka's own controller tests.

Each scenario drives the model from its initial state through legal steps only (every
step must be one of the state's successors), then replays the request the Kafka test
sends and checks the same outcome: ``ReplicationControlManagerTest.testHandleDirectoriesOffline``,
``testHandleAssignReplicasToDirs``, ``DirectoryIdTest.testIsOnline``, and the KIP-589 epoch
gate that keeps a repaired broker from being marked offline by its own old request.
"""

from __future__ import annotations

import pytest

from kraftcheck.model import make_model
from kraftcheck.model.network import DELIVERY_ACTION
from kraftcheck.model.state import (
    ASSIGN,
    ASSIGN_RESPONSE,
    BROKER_EPOCH,
    DIRS,
    DIR_IDS,
    FENCED,
    FUTURE,
    HEARTBEAT,
    HEARTBEAT_RESPONSE,
    ISR,
    KNOWN_EPOCH,
    LEADER,
    LEADER_EPOCH,
    METADATA_VERSION,
    MV_3_6,
    NETWORK,
    ONLINE_DIRS,
    PARTITION,
    PARTITION_EPOCH,
    QUEUED,
    REGISTER,
    REGISTERED_INCARNATION,
    REGISTER_RESPONSE,
    STARTING,
    STATUS,
)
from kraftcheck.model.uuids import FIRST_REAL, LOST, MIGRATING, RESERVED3, UNASSIGNED, is_online


def step(model, state, name, *params, match=None):
    """Take the successor ``(name, *params)``; for a delivery, the message may be picked by
    ``match(message)``.  Fails when no such step is enabled: every scenario step is legal."""
    for action, nxt in model.successors(state):
        if action[0] != name:
            continue
        if match is not None:
            if match(action[1]):
                return nxt
        elif tuple(action[1:]) == params:
            return nxt
    raise AssertionError(f"{name}{params} is not enabled in {model.describe(state)}")


def deliver(model, state, kind, broker):
    """Deliver the (only) message of ``kind`` from or to ``broker``."""
    return step(model, state, DELIVERY_ACTION[kind], match=lambda m: m[0] == kind and m[1] == broker)


def inject(model, state, message):
    """Put a hand-made request on the wire, as the Kafka tests call the handler directly."""
    return state[:NETWORK] + (tuple(sorted(state[NETWORK] + (message,))),) + state[NETWORK + 1 :]


def check_invariants(model, state):
    broken = [name for name, holds in model.invariants.items() if not holds(state)]
    assert not broken, broken


def start_and_register(model, state, brokers):
    """Brokers start, register, and are unfenced by their first heartbeat."""
    for b in brokers:
        state = step(model, state, "BrokerStarts", b, ())
        state = step(model, state, "BrokerSendsRegistration", b)
        state = deliver(model, state, REGISTER, b)
        state = deliver(model, state, REGISTER_RESPONSE, b)
        state = step(model, state, "BrokerSendsHeartbeat", b)
        state = deliver(model, state, HEARTBEAT, b)
    return state


def place_replicas(model, state, broker, partitions):
    """The broker sees each new partition, picks a directory and gets the assignment acknowledged."""
    for p in partitions:
        state = step(model, state, "BrokerConsumesMetadata", broker, p)
        state = step(model, state, "BrokerSendsAssignment", broker, p)
        state = deliver(model, state, ASSIGN, broker)
        state = deliver(model, state, ASSIGN_RESPONSE, broker)
    return state


def dir_id(model, state, broker, slot):
    return state[DIR_IDS][broker][slot]


# -------------------------------------------------------------------------------------------
# DirectoryIdTest.testIsOnline
# -------------------------------------------------------------------------------------------


def test_directory_id_is_online():
    dirs = (FIRST_REAL, FIRST_REAL + 1, FIRST_REAL + 2)
    for d in dirs:
        assert is_online(d, dirs)
    assert not is_online(FIRST_REAL + 7, dirs)  # a directory the broker never registered
    assert not is_online(LOST, dirs)
    assert is_online(UNASSIGNED, dirs)
    assert is_online(MIGRATING, dirs)
    # A broker that registered no directories: everything counts as online (KAFKA-16162) ...
    assert is_online(FIRST_REAL + 7, ())
    # ... except LOST, which names an offline directory.
    assert not is_online(LOST, ())


# -------------------------------------------------------------------------------------------
# ReplicationControlManagerTest.testHandleDirectoriesOffline
# -------------------------------------------------------------------------------------------


def test_handle_directories_offline_moves_exactly_the_affected_partitions():
    # Kafka: brokers b1, b2 with two directories each; partitions a-0, a-1, b-0, b-1 on both.
    # Here: brokers 0 and 1, partitions 0..3 (replicas [0, 1] and [1, 0] alternately).
    model = make_model(dict(brokers=2, dirs_per_broker=2, partitions=4, replication_factor=2, max_messages=8))
    state = next(iter(model.init_states()))
    state = start_and_register(model, state, [0, 1])
    for p in range(4):
        state = step(model, state, "ControllerCreatesPartition", p)
    assert all(part[DIRS] == (UNASSIGNED, UNASSIGNED) for part in state[PARTITION])
    # Each broker places its replicas: least loaded first, so partitions 0, 2 go to the first
    # directory and 1, 3 to the second (Kafka: a-0, b-0 in dir1; a-1, b-1 in dir2).
    state = place_replicas(model, state, 0, range(4))
    state = place_replicas(model, state, 1, range(4))
    dir1b0, dir2b0 = dir_id(model, state, 0, 0), dir_id(model, state, 0, 1)
    dir1b1 = dir_id(model, state, 1, 0)
    replicas = model.replicas
    for p in range(4):
        assert state[PARTITION][p][DIRS][replicas[p].index(0)] == (dir1b0 if p % 2 == 0 else dir2b0)
    check_invariants(model, state)
    before = step(model, state, "BrokerFailsDir", 0, 0)
    # Broker 0 reports dir1b0 offline, and also dir1b1, which is not its own: ignored.
    heartbeat = (HEARTBEAT, 0, before[BROKER_EPOCH][0], tuple(sorted((dir1b0, dir1b1))), False, False, ())
    after = model.ControllerHandlesHeartbeat(inject(model, before, heartbeat), heartbeat)
    # The registration is rewritten with the remaining online directory only.
    assert after[ONLINE_DIRS][0] == (dir2b0,)
    assert after[ONLINE_DIRS][1] == before[ONLINE_DIRS][1]
    # Exactly the partitions with broker 0's replica in dir1b0 changed: broker 1 leads them alone.
    changed = [p for p in range(4) if after[PARTITION][p] != before[PARTITION][p]]
    assert changed == [0, 2]
    for p in changed:
        assert after[PARTITION][p][LEADER] == 1
        assert after[PARTITION][p][ISR] == (1,)
        assert after[PARTITION][p][PARTITION_EPOCH] == before[PARTITION][p][PARTITION_EPOCH] + 1
        assert after[PARTITION][p][LEADER_EPOCH] == before[PARTITION][p][LEADER_EPOCH] + 1
    assert (HEARTBEAT_RESPONSE, 0, before[BROKER_EPOCH][0], heartbeat[3], False) in after[NETWORK]
    check_invariants(model, after)
    for name, holds in model.action_invariants.items():
        assert holds(before, ("ControllerHandlesHeartbeat", heartbeat), after), name


def test_directory_failure_through_the_broker_heartbeat():
    """The same failure, raised by the broker itself: its heartbeat repeats the directory until
    the response acknowledges it."""
    model = make_model(dict(brokers=2, dirs_per_broker=2, partitions=2, replication_factor=2, max_messages=8))
    state = next(iter(model.init_states()))
    state = start_and_register(model, state, [0, 1])
    for p in range(2):
        state = step(model, state, "ControllerCreatesPartition", p)
    state = place_replicas(model, state, 0, range(2))
    state = place_replicas(model, state, 1, range(2))
    state = step(model, state, "BrokerFailsDir", 0, 0)
    state = step(model, state, "BrokerSendsHeartbeat", 0)
    sent = [m for m in state[NETWORK] if m[0] == HEARTBEAT]
    assert sent == [(HEARTBEAT, 0, 1, (dir_id(model, state, 0, 0),), False, False, ())]
    state = deliver(model, state, HEARTBEAT, 0)
    assert state[PARTITION][0][LEADER] == 1 and state[PARTITION][0][ISR] == (1,)
    assert state[PARTITION][1][ISR] == (1, 0)  # partition 1's replica on broker 0 is in the healthy dir
    state = deliver(model, state, HEARTBEAT_RESPONSE, 0)
    # Acknowledged, but still listed in every later heartbeat until the broker restarts.
    state = step(model, state, "BrokerSendsHeartbeat", 0)
    assert [m[3] for m in state[NETWORK] if m[0] == HEARTBEAT] == [(dir_id(model, state, 0, 0),)]
    check_invariants(model, state)


# -------------------------------------------------------------------------------------------
# ReplicationControlManagerTest.testHandleAssignReplicasToDirs
# -------------------------------------------------------------------------------------------


def test_handle_assign_replicas_to_dirs():
    # Three brokers with two directories; partitions 0:[0,1] 1:[1,2] 2:[2,0] 3:[0,1] (3 is never created).
    model = make_model(dict(brokers=3, dirs_per_broker=2, partitions=4, replication_factor=2, max_messages=16))
    state = next(iter(model.init_states()))
    state = start_and_register(model, state, [0, 1, 2])
    for p in range(3):
        state = step(model, state, "ControllerCreatesPartition", p)
    epoch = state[BROKER_EPOCH][0]
    dir1b0 = dir_id(model, state, 0, 0)
    unknown = FIRST_REAL + 99  # a directory broker 0 never registered
    before = state

    def assign(s, p, directory, epoch=epoch):
        m = (ASSIGN, 0, epoch, p, directory)
        return model.ControllerHandlesAssignment(inject(model, s, m), m)

    # Into one of its online directories: recorded, nothing else changes.
    s = assign(before, 0, dir1b0)
    assert s[PARTITION][0][DIRS] == (dir1b0, UNASSIGNED)
    assert s[PARTITION][0][LEADER] == 0 and s[PARTITION][0][ISR] == (0, 1)
    assert (ASSIGN_RESPONSE, 0, epoch, 0, dir1b0, True) in s[NETWORK]
    # Into LOST: recorded, and the replica leaves leadership and the ISR.
    s = assign(before, 0, LOST)
    assert s[PARTITION][0][DIRS] == (LOST, UNASSIGNED)
    assert s[PARTITION][0][LEADER] == 1 and s[PARTITION][0][ISR] == (1,)
    # Into a directory it never registered: the same.
    s = assign(before, 2, unknown)
    assert s[PARTITION][2][DIRS] == (UNASSIGNED, unknown)
    assert s[PARTITION][2][LEADER] == 2 and s[PARTITION][2][ISR] == (2,)
    # Not a replica of partition 1 (NOT_LEADER_OR_FOLLOWER), partition 3 does not exist
    # (UNKNOWN_TOPIC_OR_PARTITION): an error for that partition, nothing written.
    for p in (1, 3):
        s = assign(before, p, dir1b0)
        assert s[PARTITION] == before[PARTITION]
        assert (ASSIGN_RESPONSE, 0, epoch, p, dir1b0, False) in s[NETWORK]
    # A stale broker epoch (StaleBrokerEpochException): nothing written, nothing answered.
    s = assign(before, 0, LOST, epoch=epoch + 1)
    assert s[PARTITION] == before[PARTITION] and s[NETWORK] == before[NETWORK]


# -------------------------------------------------------------------------------------------
# KIP-589: the broker epoch gate
# -------------------------------------------------------------------------------------------


def test_repaired_broker_is_not_marked_offline_by_its_own_old_heartbeat():
    model = make_model(dict(brokers=1, dirs_per_broker=2, partitions=1, replication_factor=1, max_messages=4))
    state = next(iter(model.init_states()))
    state = start_and_register(model, state, [0])
    failed = dir_id(model, state, 0, 0)
    state = step(model, state, "BrokerFailsDir", 0, 0)
    state = step(model, state, "BrokerSendsHeartbeat", 0)  # reports the failure, epoch 1
    state = step(model, state, "BrokerCrashes", 0)
    state = step(model, state, "BrokerStarts", 0, ((0, -1),))  # the disk comes back repaired
    assert state[DIR_IDS][0][0] == failed
    state = step(model, state, "BrokerSendsRegistration", 0)
    state = step(model, state, "ControllerFencesExpiredBroker", 0)  # the old session expires first
    state = deliver(model, state, REGISTER, 0)
    assert state[BROKER_EPOCH][0] == 2 and state[FENCED][0]
    assert failed in state[ONLINE_DIRS][0]
    before = state
    state = deliver(model, state, HEARTBEAT, 0)  # the old heartbeat arrives at last
    assert state[ONLINE_DIRS] == before[ONLINE_DIRS]
    assert state[FENCED] == before[FENCED] and state[PARTITION] == before[PARTITION]
    check_invariants(model, state)
    # With the gate removed, the repaired directory is marked offline.
    broken = make_model(dict(brokers=1, dirs_per_broker=2, partitions=1, replication_factor=1, max_messages=4, mutant="stale_offline_dirs"))
    old = [m for m in before[NETWORK] if m[0] == HEARTBEAT][0]
    after = broken.ControllerHandlesHeartbeat(before, old)
    assert failed not in after[ONLINE_DIRS][0]
    assert not broken.invariants["OfflineDirsReallyOffline"](after)


# -------------------------------------------------------------------------------------------
# Registration checks (ClusterControlManager)
# -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dirs, why",
    [
        ((), "no directories"),
        ((UNASSIGNED, FIRST_REAL + 1), "reserved UNASSIGNED"),
        ((RESERVED3, FIRST_REAL + 1), "reserved for future use"),
        ((FIRST_REAL + 1, FIRST_REAL + 1), "duplicate"),
        ((FIRST_REAL, FIRST_REAL + 3), "owned by broker 0"),
    ],
)
def test_registration_rejected(dirs, why):
    model = make_model(dict(brokers=2, dirs_per_broker=2, max_messages=4))
    state = start_and_register(model, next(iter(model.init_states())), [0])
    request = (REGISTER, 1, 1, dirs, -1)
    after = model.ControllerHandlesRegistration(inject(model, state, request), request)
    assert after[BROKER_EPOCH][1] == 0, why
    assert (REGISTER_RESPONSE, 1, 1, False) in after[NETWORK]


def test_reregistration_of_the_same_incarnation_keeps_epoch_and_fencing():
    model = make_model(dict(brokers=1, dirs_per_broker=2, replication_factor=1, max_messages=4))
    state = start_and_register(model, next(iter(model.init_states())), [0])
    assert not state[FENCED][0]
    request = (REGISTER, 0, 1, state[DIR_IDS][0], -1)
    after = model.ControllerHandlesRegistration(inject(model, state, request), request)
    assert after[BROKER_EPOCH] == state[BROKER_EPOCH] and after[FENCED] == state[FENCED]


def restarted_with_its_replica_unassigned(semantics):
    """A broker restarts before placing its replica, and its new incarnation's first heartbeat
    (asking to be unfenced) is handled while metadata still holds the replica UNASSIGNED."""
    model = make_model(dict(brokers=1, dirs_per_broker=2, partitions=1, replication_factor=1, restarts=1,
                            max_messages=4, semantics=semantics))
    state = start_and_register(model, next(iter(model.init_states())), [0])
    state = step(model, state, "ControllerCreatesPartition", 0)
    state = step(model, state, "BrokerCrashes", 0)
    state = step(model, state, "ControllerFencesExpiredBroker", 0)
    assert state[PARTITION][0][LEADER] == -1
    state = step(model, state, "BrokerStarts", 0, ())
    state = step(model, state, "BrokerSendsRegistration", 0)
    state = deliver(model, state, REGISTER, 0)
    state = deliver(model, state, REGISTER_RESPONSE, 0)
    state = step(model, state, "BrokerSendsHeartbeat", 0)
    return model, deliver(model, state, HEARTBEAT, 0)


def test_broker_stays_fenced_until_its_replicas_are_assigned():
    """KIP-858's reading: the new incarnation stays fenced while its replica is UNASSIGNED."""
    model, state = restarted_with_its_replica_unassigned("kip")
    assert state[FENCED][0]
    state = place_replicas(model, state, 0, [0])
    state = step(model, state, "BrokerSendsHeartbeat", 0)
    state = deliver(model, state, HEARTBEAT, 0)
    assert not state[FENCED][0]
    assert state[PARTITION][0][LEADER] == 0  # elected as it was unfenced
    check_invariants(model, state)


def test_kafkas_broker_is_unfenced_with_its_replica_unassigned():
    """Kafka's code: the broker asks to be unfenced once caught up, and is, with its replica
    UNASSIGNED; it is elected leader on a directory nobody knows (finding 2, spec/README.md)."""
    model, state = restarted_with_its_replica_unassigned("code")
    assert not state[FENCED][0]
    assert state[PARTITION][0][LEADER] == 0 and state[PARTITION][0][DIRS] == (UNASSIGNED,)


# -------------------------------------------------------------------------------------------
# Intra-broker moves (KIP-858 "Intra-broker replica movement", KAFKA-16297) and KAFKA-16234
# -------------------------------------------------------------------------------------------


def enabled(model, state, name, *params):
    return any(action[0] == name and tuple(action[1:]) == params for action, _ in model.successors(state))


def one_broker_with_a_placed_replica(**extra):
    model = make_model(dict(brokers=1, dirs_per_broker=2, partitions=1, replication_factor=1, max_messages=4, **extra))
    state = start_and_register(model, next(iter(model.init_states())), [0])
    state = step(model, state, "ControllerCreatesPartition", 0)
    state = place_replicas(model, state, 0, [0])
    return model, state


def test_move_promoted_only_after_the_assignment_is_acknowledged():
    model, state = one_broker_with_a_placed_replica(moves=1)
    source, target = dir_id(model, state, 0, 0), dir_id(model, state, 0, 1)
    assert state[PARTITION][0][DIRS] == (source,)
    state = step(model, state, "BrokerStartsMove", 0, 0, 1)
    state = step(model, state, "BrokerFutureCaughtUp", 0, 0)
    state = step(model, state, "BrokerSendsAssignment", 0, 0)
    state = deliver(model, state, ASSIGN, 0)
    assert state[PARTITION][0][DIRS] == (target,)
    assert model.main_slots(state, 0, 0) == (0,)  # not promoted yet
    state = deliver(model, state, ASSIGN_RESPONSE, 0)
    assert model.main_slots(state, 0, 0) == (1,)  # promoted, source deleted
    check_invariants(model, state)


def test_move_reverted_when_the_destination_fails_before_promotion():
    model, state = one_broker_with_a_placed_replica(moves=1)
    source = dir_id(model, state, 0, 0)
    state = step(model, state, "BrokerStartsMove", 0, 0, 1)
    state = step(model, state, "BrokerFutureCaughtUp", 0, 0)
    state = step(model, state, "BrokerSendsAssignment", 0, 0)
    state = deliver(model, state, ASSIGN, 0)  # metadata now names the destination
    state = step(model, state, "BrokerFailsDir", 0, 1)  # the destination fails first
    assert state[QUEUED][0][0] == source  # the assignment is reverted
    check_invariants(model, state)
    state = deliver(model, state, ASSIGN_RESPONSE, 0)  # the old acknowledgement: superseded
    assert model.main_slots(state, 0, 0) == (0,) and state[QUEUED][0][0] == source
    state = step(model, state, "BrokerSendsAssignment", 0, 0)
    state = deliver(model, state, ASSIGN, 0)
    state = deliver(model, state, ASSIGN_RESPONSE, 0)
    assert state[PARTITION][0][DIRS] == (source,) and state[QUEUED][0][0] == -1
    check_invariants(model, state)
    # Without the revert (KAFKA-16297) the metadata keeps naming the failed directory.
    broken = make_model(dict(brokers=1, dirs_per_broker=2, partitions=1, replication_factor=1, max_messages=4, moves=1,
                             mutant="no_revert_on_dest_failure"))
    _, s = one_broker_with_a_placed_replica(moves=1, mutant="no_revert_on_dest_failure")
    for name, *params in [("BrokerStartsMove", 0, 0, 1), ("BrokerFutureCaughtUp", 0, 0), ("BrokerSendsAssignment", 0, 0)]:
        s = step(broken, s, name, *params)
    s = deliver(broken, s, ASSIGN, 0)
    s = step(broken, s, "BrokerFailsDir", 0, 1)
    s = deliver(broken, s, ASSIGN_RESPONSE, 0)
    assert not broken.invariants["FailedMoveReverted"](s)


def test_move_assigned_to_lost_when_the_source_fails():
    model, state = one_broker_with_a_placed_replica(moves=1)
    state = step(model, state, "BrokerStartsMove", 0, 0, 1)
    state = step(model, state, "BrokerFutureCaughtUp", 0, 0)
    state = step(model, state, "BrokerFailsDir", 0, 0)  # the source fails mid-move
    assert state[QUEUED][0][0] == LOST and state[FUTURE][0][0] == -1
    state = step(model, state, "BrokerSendsAssignment", 0, 0)
    state = deliver(model, state, ASSIGN, 0)
    assert state[PARTITION][0][DIRS] == (LOST,)
    assert state[PARTITION][0][LEADER] == -1  # LOST is offline: nobody acceptable
    check_invariants(model, state)


def test_replica_in_an_offline_directory_is_not_recreated_elsewhere():
    model, state = one_broker_with_a_placed_replica()
    state = step(model, state, "BrokerFailsDir", 0, 0)
    assert not enabled(model, state, "BrokerConsumesMetadata", 0, 0)
    broken = make_model(dict(brokers=1, dirs_per_broker=2, partitions=1, replication_factor=1, max_messages=4,
                             mutant="recreate_elsewhere"))
    after = broken.BrokerConsumesMetadata(state, 0, 0)
    assert broken.main_slots(after, 0, 0) == (0, 1)
    assert not broken.invariants["NoReplicaRecreatedElsewhere"](after)


# -------------------------------------------------------------------------------------------
# Registration as ClusterControlManager.registerBroker does it (semantics "code")
# -------------------------------------------------------------------------------------------


def registered_and_unfenced(**settings):
    model = make_model(dict(brokers=1, dirs_per_broker=1, partitions=1, replication_factor=1, max_messages=4, **settings))
    return model, start_and_register(model, next(iter(model.init_states())), [0])


def test_the_same_incarnation_keeps_its_epoch_a_new_one_gets_the_next():
    """ClusterControlManagerTest.testReRegistrationAndBrokerEpoch: registering again with the
    same incarnation ID keeps the epoch; a new incarnation ID gets the new record's offset."""
    model, state = registered_and_unfenced()
    request = (REGISTER, 0, 1, state[DIR_IDS][0], -1)
    again = model.ControllerHandlesRegistration(_with_message(state, request), request)
    assert (again[BROKER_EPOCH], again[REGISTERED_INCARNATION], again[FENCED]) == ((1,), (1,), (False,))
    assert (REGISTER_RESPONSE, 0, 1, 1) in again[NETWORK]
    # The mutants: KAFKA-16952 (a new epoch) and KAFKA-16757 (the record's default flags).
    for mutant, expected in (("reregistration_new_epoch", ((2,), (False,))), ("reregistration_fences", ((1,), (True,)))):
        broken = make_model(dict(model.settings.__dict__, mutant=mutant))
        after = broken.ControllerHandlesRegistration(_with_message(state, request), request)
        assert (after[BROKER_EPOCH], after[FENCED]) == expected
    # A new incarnation once the old session is fenced: the next epoch, fenced.
    state = step(model, step(model, state, "BrokerCrashes", 0), "ControllerFencesExpiredBroker", 0)
    state = step(model, step(model, state, "BrokerStarts", 0, ()), "BrokerSendsRegistration", 0)
    state = deliver(model, state, REGISTER, 0)
    assert (state[BROKER_EPOCH], state[REGISTERED_INCARNATION], state[FENCED]) == ((2,), (2,), (True,))
    assert (REGISTER_RESPONSE, 0, 2, 2) in state[NETWORK]


def _with_message(state, m):
    return state[:NETWORK] + (tuple(sorted(state[NETWORK] + (m,))),) + state[NETWORK + 1:]


def test_a_new_incarnation_while_the_session_is_valid_is_a_duplicate_registration():
    """DuplicateBrokerRegistrationException: nothing written, an error answered; the broker
    stays starting and registers again later."""
    model, state = registered_and_unfenced()
    state = step(model, state, "BrokerCrashes", 0)
    state = step(model, step(model, state, "BrokerStarts", 0, ()), "BrokerSendsRegistration", 0)
    rejected = deliver(model, state, REGISTER, 0)
    assert (REGISTER_RESPONSE, 0, 2, 0) in rejected[NETWORK]
    assert model._controller_vars(rejected) == model._controller_vars(state)
    rejected = deliver(model, rejected, REGISTER_RESPONSE, 0)
    assert rejected[STATUS][0] == STARTING
    assert ("BrokerSendsRegistration", 0) in [a for a, _ in model.successors(rejected)]
    # The same request after the session timed out but before the fencing: accepted, and the
    # broker, fenced by the record, still leads p0 (finding 3).
    state = step(model, state, "ControllerCreatesPartition", 0)
    raced = step(model, state, "ControllerHandlesRegistrationAfterSessionTimeout", match=lambda m: m[0] == REGISTER)
    assert (raced[BROKER_EPOCH], raced[FENCED], raced[PARTITION][0][LEADER]) == ((2,), (True,), 0)
    assert not model.invariants["FencedBrokerLeadsNothing"](raced)


def test_a_timed_out_heartbeat_changes_nothing_but_the_network():
    """processExpiredBrokerHeartbeat: the session is touched; no unfencing, no offline directory."""
    model = make_model(dict(brokers=1, dirs_per_broker=2, partitions=1, replication_factor=1, max_messages=4))
    state = next(iter(model.init_states()))
    state = step(model, state, "BrokerStarts", 0, ())
    state = step(model, state, "BrokerSendsRegistration", 0)
    state = deliver(model, deliver(model, state, REGISTER, 0), REGISTER_RESPONSE, 0)
    state = step(model, step(model, state, "BrokerFailsDir", 0, 0), "BrokerSendsHeartbeat", 0)
    after = step(model, state, "ControllerTimesOutHeartbeat", match=lambda m: m[0] == HEARTBEAT)
    assert after[:NETWORK] + after[NETWORK + 1:] == state[:NETWORK] + state[NETWORK + 1:]
    assert not after[NETWORK]
    kip = make_model(dict(model.settings.__dict__, semantics="kip"))
    assert "ControllerTimesOutHeartbeat" not in [a[0] for a, _ in kip.successors(state)]


def test_upgrade_to_3_7_iv2_makes_running_brokers_register_their_directories():
    """BrokerRegistrationTrackerTest: at 3.7-IV2 or later a registration without directories is
    sent again; the controller amends it, keeping the epoch and the flags."""
    model, state = registered_and_unfenced(metadata_version="3.6-IV2", metadata_upgrade=True)
    assert state[ONLINE_DIRS] == ((),) and state[METADATA_VERSION] == MV_3_6
    assert "BrokerRefreshesRegistration" not in [a[0] for a, _ in model.successors(state)]
    state = step(model, state, "ControllerCreatesPartition", 0)
    assert state[PARTITION][0][DIRS] == (MIGRATING,)
    state = step(model, state, "AdminUpgradesMetadataVersion")
    state = step(model, state, "BrokerRefreshesRegistration", 0)
    assert "BrokerSendsHeartbeat" not in [a[0] for a, _ in model.successors(state)]
    state = deliver(model, state, REGISTER, 0)
    assert state[ONLINE_DIRS] == ((FIRST_REAL,),)
    assert (state[BROKER_EPOCH], state[FENCED], state[PARTITION][0][LEADER]) == ((1,), (False,), 0)
    state = deliver(model, state, REGISTER_RESPONSE, 0)
    assert state[KNOWN_EPOCH] == (1,)
    # the broker now tells the controller where its MIGRATING replica lives
    state = step(model, state, "BrokerConsumesMetadata", 0, 0)
    state = step(model, state, "BrokerSendsAssignment", 0, 0)
    state = deliver(model, state, ASSIGN, 0)
    assert state[PARTITION][0][DIRS] == (FIRST_REAL,)
    check_invariants(model, state)


def test_below_3_7_iv2_a_jbod_broker_runs_under_the_code_and_waits_under_the_kip():
    code = make_model(dict(brokers=1, dirs_per_broker=2, partitions=1, replication_factor=1, metadata_version="3.6-IV2"))
    kip = make_model(dict(code.settings.__dict__, semantics="kip"))
    init = next(iter(code.init_states()))
    assert [a[0] for a, _ in code.successors(init)] == ["BrokerStarts"]
    assert [a[0] for a, _ in kip.successors(init)] == []
    mutant = make_model(dict(kip.settings.__dict__, mutant="jbod_below_3_7_iv2"))
    assert [a[0] for a, _ in mutant.successors(init)] == ["BrokerStarts"]
