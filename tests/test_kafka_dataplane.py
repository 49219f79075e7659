"""The data plane: logs, acks=all, fetching and high watermarks, and AlterPartition.

The AlterPartition scenarios send the requests ``ReplicationControlManagerTest`` sends
(``testInvalidAlterPartitionRequestsV1``, ``testAlterPartitionShouldRejectFencedBrokers``,
``testAlterPartitionShouldRejectBrokersWithStaleEpoch``) and expect its answers, in
``validateAlterPartitionData``'s order; the others follow records from a producer to the
high watermark, and a follower truncating to a new leader's log.
"""

from __future__ import annotations

import pytest

from kraftcheck.model import make_model
from kraftcheck.model.state import (
    KEPT, LOST_BY_DISK, LOST_BY_ELECTION, describe_loss, given_up_unless, holds,
    ACKED, ALTER_PARTITION, ALTER_PARTITION_RESPONSE, BROKER_EPOCH, FENCED, FOLLOWER_END, HIGH_WATERMARK, ISR,
    HEARTBEAT, LEADER, LEADER_EPOCH, NETWORK, PARTITION, PARTITION_EPOCH, PRODUCED, REGISTER, REGISTER_RESPONSE, REPLICA_LOG,
)

from .test_kafka_scenarios import check_invariants, deliver, inject, start_and_register, step

TWO_BROKERS = {"brokers": 2, "dirs_per_broker": 1, "replication_factor": 2, "records": 2, "restarts": 1,
               "dir_failures": 0, "max_messages": 3}


def cluster(**settings):
    """Both brokers registered and unfenced, partition 0 created on both (leader b0, ISR [0, 1])
    and its replicas created on their disks."""
    model = make_model({**TWO_BROKERS, **settings})
    state = start_and_register(model, next(model.init_states()), (0, 1))
    state = step(model, state, "ControllerCreatesPartition", 0)
    for b in (0, 1):
        state = step(model, state, "BrokerConsumesMetadata", b, 0)
    assert state[PARTITION][0][:2] == (0, (0, 1))
    return model, state


def alter_partition(model, state, isr, leader=0, leader_epoch=None, partition_epoch=None, epochs=None,
                    recovering=False):
    """Inject leader's AlterPartition for partition 0 and deliver it; returns the state and the
    error the answer carries."""
    part = state[PARTITION][0]
    epochs = epochs or {}
    request = (ALTER_PARTITION, leader, state[BROKER_EPOCH][leader], 0,
               part[LEADER_EPOCH] if leader_epoch is None else leader_epoch,
               part[PARTITION_EPOCH] if partition_epoch is None else partition_epoch,
               tuple((r, epochs.get(r, state[BROKER_EPOCH][r])) for r in isr), recovering)
    state = step(model, inject(model, state, request), "ControllerHandlesAlterPartition", match=lambda m: m == request)
    answers = [m for m in state[NETWORK] if m[0] == ALTER_PARTITION_RESPONSE]
    assert len(answers) == 1
    return state, answers[0][6]


def test_a_record_is_acknowledged_once_every_isr_member_has_it():
    model, state = cluster()
    state = step(model, state, "LeaderAppendsRecord", 0, 0)
    assert state[REPLICA_LOG][0][0] == (0,) and state[PRODUCED] == 1
    assert state[HIGH_WATERMARK][0][0] == 0 and state[ACKED][0] == ()  # b1, in the ISR, has not fetched
    state = step(model, state, "FollowerFetches", 1, 0)
    assert state[REPLICA_LOG][1][0] == (0,)
    assert state[HIGH_WATERMARK] == ((1,), (1,))
    assert state[ACKED][0] == ((0, 0, 0, KEPT),)  # offset 0, leader epoch 0, acknowledged by b0, kept
    assert state[FOLLOWER_END][0][0] == (0, 0, (-1, 1), (-1, 1))  # b1: offset 1, fetched with broker epoch 1
    check_invariants(model, state)


def test_a_follower_that_stops_fetching_is_shrunk_out_and_the_high_watermark_moves_without_it():
    model, state = cluster()
    state = step(model, state, "LeaderAppendsRecord", 0, 0)
    # b1 lags but still fetches: it catches up before replica.lag.time.max.ms runs out
    assert ("LeaderSendsAlterPartition", 0, 0, 1) not in {a for a, _ in model.successors(state)}
    state = step(model, state, "BrokerCrashes", 1)
    state = step(model, state, "LeaderSendsAlterPartition", 0, 0, 1)
    request = next(m for m in state[NETWORK] if m[0] == ALTER_PARTITION)
    assert request == (ALTER_PARTITION, 0, 1, 0, 0, 0, ((0, 1),), False)
    assert model.describe_action(("LeaderSendsAlterPartition", 0, 0, 1)) == "LeaderSendsAlterPartition(b0, p0, b1)"
    state = step(model, state, "ControllerHandlesAlterPartition", match=lambda m: m == request)
    assert state[PARTITION][0][:2] == (0, (0,)) and state[PARTITION][0][3:5] == (0, 1)
    assert state[HIGH_WATERMARK][0][0] == 0  # still pending: the maximal ISR is [0, 1]
    state = deliver(model, state, ALTER_PARTITION_RESPONSE, 0)
    assert state[HIGH_WATERMARK][0][0] == 1 and state[ACKED][0] == ((0, 0, 0, KEPT),)
    check_invariants(model, state)


def test_min_insync_replicas_refuses_records_and_withholds_acknowledgements():
    model, state = cluster(min_isr=2)
    state, error = alter_partition(model, state, (0,))
    assert error == "NONE"
    state = deliver(model, state, ALTER_PARTITION_RESPONSE, 0)
    assert "LeaderAppendsRecord" not in {a[0] for a, _ in model.successors(state)}  # NOT_ENOUGH_REPLICAS


def test_a_follower_truncates_to_the_new_leader():
    """b0 leads in epoch 0 and writes a record b1 never fetches; b0 crashes and is fenced, b1 leads
    in epoch 1 and writes its own; b0 restarts and, following b1, loses its uncommitted record."""
    model, state = cluster()
    state = step(model, state, "LeaderAppendsRecord", 0, 0)
    state = step(model, state, "BrokerCrashes", 0)
    state = step(model, state, "ControllerFencesExpiredBroker", 0)
    assert state[PARTITION][0][:2] == (1, (1,)) and state[PARTITION][0][LEADER_EPOCH] == 1
    state = step(model, state, "LeaderAppendsRecord", 1, 0)
    assert state[ACKED][0] == ((0, 1, 1, KEPT),)
    state = step(model, state, "BrokerStarts", 0, ())
    state = step(model, state, "BrokerSendsRegistration", 0)
    state = deliver(model, state, REGISTER, 0)
    state = deliver(model, state, REGISTER_RESPONSE, 0)
    assert state[REPLICA_LOG][0][0] == (0,)  # the crash kept the log
    state = step(model, state, "FollowerFetches", 0, 0)
    assert state[REPLICA_LOG] == (((1,),), ((1,),))
    check_invariants(model, state)


# -------------------------------------------------------------------------------------------
# ReplicationControlManagerTest: validateAlterPartitionData, in its order
# -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_fields, error",
    [
        (dict(isr=(0,), leader_epoch=1), "NOT_CONTROLLER"),  # a newer leader epoch than the controller's
        (dict(isr=(0,), partition_epoch=1), "NOT_CONTROLLER"),  # a newer partition epoch
        (dict(isr=(0, 1), leader=1), "INVALID_REQUEST"),  # not the leader
        (dict(isr=(1,)), "INVALID_REQUEST"),  # an ISR without the leader
        (dict(isr=(0, 1), epochs={1: 7}), "INELIGIBLE_REPLICA"),  # KIP-903: another broker epoch
        (dict(isr=(0,)), "NONE"),
    ],
)
def test_alter_partition_validation(request_fields, error):
    model, state = cluster()
    before = state[PARTITION][0]
    state, answered = alter_partition(model, state, **request_fields)
    assert answered == error
    assert (state[PARTITION][0] == before) == (error != "NONE")


def test_alter_partition_stale_epochs():
    """A leader epoch the controller has moved past is FENCED_LEADER_EPOCH; a partition epoch,
    INVALID_UPDATE_VERSION (after a first change, both epochs as the leader last knew them)."""
    model, state = cluster()
    state, error = alter_partition(model, state, (0,))
    assert error == "NONE" and state[PARTITION][0][3:5] == (0, 1)
    state = deliver(model, state, ALTER_PARTITION_RESPONSE, 0)
    state, error = alter_partition(model, state, (0, 1), partition_epoch=0)
    assert error == "INVALID_UPDATE_VERSION"
    state = deliver(model, state, ALTER_PARTITION_RESPONSE, 0)
    state = step(model, state, "BrokerCrashes", 0)
    state = step(model, state, "ControllerFencesExpiredBroker", 0)
    assert state[PARTITION][0][LEADER] == -1 and state[PARTITION][0][LEADER_EPOCH] == 1
    state, error = alter_partition(model, state, (0,), leader_epoch=0, partition_epoch=2)
    assert error == "FENCED_LEADER_EPOCH"


def test_alter_partition_rejects_fenced_brokers():
    model, state = cluster()
    state = step(model, state, "BrokerCrashes", 1)
    state = step(model, state, "ControllerFencesExpiredBroker", 1)
    assert state[FENCED][1] and state[PARTITION][0][ISR] == (0,)
    state, error = alter_partition(model, state, (0, 1))
    assert error == "INELIGIBLE_REPLICA"


def test_a_stale_broker_epoch_fails_the_request_unanswered():
    model, state = cluster()
    part = state[PARTITION][0]
    request = (ALTER_PARTITION, 0, 99, 0, part[LEADER_EPOCH], part[PARTITION_EPOCH], ((0, 1),), False)
    state = step(model, inject(model, state, request), "ControllerHandlesAlterPartition", match=lambda m: m == request)
    assert state[PARTITION][0] == part and not state[NETWORK]


def test_records_need_broker_lag_off():
    with pytest.raises(ValueError, match="model setting 'records' needs broker_lag = false"):
        make_model({"records": 1, "broker_lag": True})
    with pytest.raises(ValueError, match=r"model setting 'min_isr' must be between 1 and replication_factor \(2\), not 3"):
        make_model({"min_isr": 3})


def test_the_picture_shows_each_replicas_log_and_the_acknowledged_records():
    model, state = cluster()
    state = step(model, state, "LeaderAppendsRecord", 0, 0)
    before = state
    state = step(model, state, "FollowerFetches", 1, 0)
    drawn = model.picture(model.describe(state), model.describe(before))
    assert drawn.count("p0 log [e0]  end 1, hw 1") == 2
    assert "acknowledged: 0 (e0)" in drawn
    assert "p0 log [e0]  end 1, hw 0" in model.picture(model.describe(before))


def test_kip_903_a_follower_restarted_since_its_fetch_is_ineligible():
    """The leader learned broker 1's offset from a fetch of its first incarnation; broker 1
    restarts and registers anew; the leader's expansion carries the epoch that fetch carried,
    and the controller refuses it (KAFKA-14617's fix)."""
    model, state = cluster()
    state = step(model, state, "LeaderAppendsRecord", 0, 0)
    state, error = alter_partition(model, state, (0,))  # the leader takes the lagging follower out
    assert error == "NONE"
    state = deliver(model, state, ALTER_PARTITION_RESPONSE, 0)
    state = step(model, state, "FollowerFetches", 1, 0)
    assert state[FOLLOWER_END][0][0] == (0, 0, (-1, 1), (-1, 1))  # offset 1, fetched with epoch 1
    state = step(model, state, "BrokerCrashes", 1)
    state = step(model, state, "ControllerFencesExpiredBroker", 1)
    state = step(model, state, "BrokerStarts", 1, ())
    state = step(model, state, "BrokerSendsRegistration", 1)
    state = deliver(model, state, REGISTER, 1)
    state = deliver(model, state, REGISTER_RESPONSE, 1)
    state = step(model, state, "BrokerSendsHeartbeat", 1)
    state = deliver(model, state, HEARTBEAT, 1)
    assert state[BROKER_EPOCH][1] == 2 and not state[FENCED][1]
    state = step(model, state, "LeaderSendsAlterPartition", 0, 0, 1)
    request = next(m for m in state[NETWORK] if m[0] == ALTER_PARTITION)
    assert request[6] == ((0, 1), (1, 1))
    state = step(model, state, "ControllerHandlesAlterPartition", match=lambda m: m == request)
    assert next(m for m in state[NETWORK] if m[0] == ALTER_PARTITION_RESPONSE)[6] == "INELIGIBLE_REPLICA"
    assert state[PARTITION][0][ISR] == (0,)


def test_the_picture_marks_a_leader_without_the_acknowledged_records():
    model, state = cluster()
    state = step(model, state, "LeaderAppendsRecord", 0, 0)
    state = step(model, state, "FollowerFetches", 1, 0)
    described = model.describe(state)
    described["replicaLog"][0][0] = []  # as a replaced disk leaves it
    drawn = model.picture(described)
    assert "p0 log [empty]  end 0, hw 1; as leader in e0 heard b1 at 1 (epoch 1), leader without acknowledged records" in drawn
    assert "leader without" not in model.picture(model.describe(state))


def test_a_record_lost_keeps_the_loss_that_first_gave_it_up():
    """The reference forgets nothing: a record given up is marked with its loss, and a later
    loss (here a replaced disk) neither unmarks nor renames it; a record some log holds stays kept."""
    entries = ((0, 0, 0, KEPT), (1, 0, 0, KEPT))
    lost = given_up_unless(entries, lambda e: holds((0,), e), (LOST_BY_ELECTION, 1, 2))
    assert lost == ((0, 0, 0, KEPT), (1, 0, 0, (LOST_BY_ELECTION, 1, 2)))
    assert given_up_unless(lost, lambda e: False, (LOST_BY_DISK, 0, 3)) == (
        (0, 0, 0, (LOST_BY_DISK, 0, 3)), (1, 0, 0, (LOST_BY_ELECTION, 1, 2)))
    assert describe_loss((LOST_BY_DISK, 0, 3)) == {"replacedDisk": {"broker": 0, "incarnation": 3}}
    assert describe_loss(KEPT) == "kept"
