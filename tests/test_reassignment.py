"""Partition reassignment (``reassignments``): AlterPartitionReassignments and its cancellation as
ReplicationControlManager writes them (changePartitionReassignment, cancelPartitionReassignment,
PartitionChangeBuilder's completeReassignmentIfNeeded), the brokers deleting a replica taken
away, and AssignmentsManager dropping an assignment for it (KAFKA-16886), at
``spec/configs/reassignment.toml``.  TLC's agreement: tests/test_kafka_tlc.py (states, coverage,
findings) and tests/test_progress_tlc.py (the progress verdicts)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kraftcheck
from kraftcheck.model import make_model
from kraftcheck.model.records import record_label
from kraftcheck.model.state import (
    ACKED, ADDING, ALTER_PARTITION, ALTER_PARTITION_RESPONSE, ASSIGN_RESPONSE, DIRS, DIR_IDS, HEARTBEAT, REGISTER,
    REGISTER_RESPONSE, HIGH_WATERMARK, ISR, KEPT,
    LEADER, LEADER_EPOCH, LOGS, NETWORK, PARTITION, PARTITION_CHANGE, PARTITION_EPOCH, QUEUED, REASSIGNMENTS_MADE,
    REMOVING, REPLICAS, REPLICA_LOG,
)
from tests.test_kafka_scenarios import check_invariants, start_and_register, step

CONFIG = str(Path(__file__).resolve().parent.parent / "spec" / "configs" / "reassignment.toml")
PROPERTIES = ("FailedDirLeadershipsMove", "RunningBrokerUnfenced", "AssignmentSettled", "LeaderlessPartitionElected",
              "ReportedFailureSettled", "DeadBrokerFenced")
#: what Kafka's code breaks at reassignment.toml before and besides reassignment: finding 1
FINDINGS = [("action", "FencedUntilAssigned", 14)]


def test_reassignment_config_figures_and_verdicts():
    result = kraftcheck.check(CONFIG)
    assert (result.distinct_states, result.generated_states, result.depth) == (67_321, 313_889, 35)
    assert sorted((v.kind, v.name, v.length) for v in result.violations) == FINDINGS
    assert result.liveness["properties"] == {name: "holds" for name in PROPERTIES}
    assert (result.liveness["graph_states"], result.liveness["graph_edges"]) == (67_321, 313_888)
    assert (result.coverage["AdminReassignsPartition"], result.coverage["AdminCancelsReassignment"]) == (
        {"generated": 49_610, "distinct": 13_290}, {"generated": 3_616, "distinct": 603})


def test_kafka_16886_an_assignment_retried_for_a_replica_reassigned_away_never_settles():
    """The mutant sends the assignment of a replica a reassignment took away, the controller
    answers NOT_LEADER_OR_FOLLOWER, and the broker sends it again, for ever: a 24-state lasso;
    every safety verdict is the correct model's."""
    result = kraftcheck.check(CONFIG, mutant="assignment_retried_for_reassigned_replica")
    temporal = [(v.name, v.length, v.loop) for v in result.violations if v.kind == "temporal"]
    assert temporal == [("AssignmentSettled", 24, 18)]
    assert sorted((v.kind, v.name, v.length) for v in result.violations if v.kind != "temporal") == FINDINGS
    lasso = result.violations[-1].trace
    assert [action[0] for action, _ in lasso[1:]] == [
        "BrokerStarts", "BrokerSendsRegistration", "BrokerStarts", "BrokerSendsRegistration",
        "ControllerHandlesRegistration", "ControllerHandlesRegistration", "BrokerReceivesRegistrationResponse",
        "BrokerSendsHeartbeat", "BrokerReceivesRegistrationResponse", "BrokerSendsHeartbeat", "BrokerCrashes",
        "ControllerHandlesHeartbeat", "ControllerHandlesHeartbeat", "ControllerCreatesPartition",
        "BrokerConsumesMetadata", "AdminReassignsPartition", "BrokerConsumesMetadata", "ControllerFencesExpiredBroker",
        "BrokerSendsHeartbeat", "BrokerSendsAssignment", "ControllerHandlesHeartbeat", "ControllerHandlesAssignment",
        "BrokerReceivesAssignmentResponse"]
    assert lasso[16][0] == ("AdminReassignsPartition", 0, (1,))
    # the loop: the assignment refused, and the broker's entry still queued as it was
    refused = lasso[-2][1][NETWORK]
    assert [m for m in refused if m[0] == ASSIGN_RESPONSE] == [(ASSIGN_RESPONSE, 0, 1, 0, lasso[-1][1][QUEUED][0][0], False)]


class Message:
    """A script's delivery: the one message in flight of ``kind`` that ``broker`` sent or is sent."""

    def __init__(self, kind, broker):
        self.kind, self.broker = kind, broker


#: Both brokers registered and unfenced (one directory each), partition 0 created on broker 0
#: alone, its replica placed, and one record acknowledged
TWO_BROKERS = [step for b in (0, 1) for step in (
    ("BrokerStarts", b, ()), ("BrokerSendsRegistration", b), ("ControllerHandlesRegistration", Message(REGISTER, b)),
    ("BrokerReceivesRegistrationResponse", Message(REGISTER_RESPONSE, b)), ("BrokerSendsHeartbeat", b),
    ("ControllerHandlesHeartbeat", Message(HEARTBEAT, b)))] + [
    ("ControllerCreatesPartition", 0), ("BrokerConsumesMetadata", 0, 0), ("LeaderAppendsRecord", 0, 0)]
#: the partition moved from broker 0 to broker 1, to the AlterPartition that completes it
MOVE = [("AdminReassignsPartition", 0, (1,)), ("BrokerConsumesMetadata", 1, 0), ("FollowerFetches", 1, 0),
        ("LeaderSendsAlterPartition", 0, 0, 1), ("ControllerHandlesAlterPartition", Message(ALTER_PARTITION, 0))]


def steps_of(model, s, script):
    """The (action, state) steps of ``script``, each an action's name and its parameters, or a
    Message it takes."""
    steps = []
    for name, *params in script:
        def wanted(action):
            if action[0] != name:
                return False
            if params and isinstance(params[0], Message):
                return action[1][0] == params[0].kind and action[1][1] == params[0].broker
            return tuple(action[1:]) == tuple(params)
        action, s = next((a, n) for a, n in model.successors(s) if wanted(a))
        steps.append((action, s))
    return steps


def two_broker_model(**settings):
    return make_model({"brokers": 2, "dirs_per_broker": 1, "replication_factor": 1, "records": 1, "restarts": 0,
                       "dir_failures": 0, "max_messages": 3, "reassignments": 2, **settings})


def two_brokers(**settings):
    """The model and its state after TWO_BROKERS."""
    model = two_broker_model(**settings)
    s = steps_of(model, next(model.init_states()), TWO_BROKERS)[-1][1]
    assert s[ACKED][0] == ((0, 0, 0, KEPT),)
    return model, s


def test_a_move_adds_first_and_removes_once_the_new_replica_is_in_sync():
    """[0] -> [1]: the record adds broker 1 (replicas [1, 0], removing [0], adding [1]) with the
    controller's default directory and leaves the leader and its epoch; the leader takes the
    caught-up follower into the ISR, which completes the reassignment in the same record: broker 0
    leaves the replicas and the ISR, broker 1 is elected, and the leader hears NEW_LEADER_ELECTED;
    broker 0 then deletes its replica, its records with it."""
    model, s = two_brokers()
    dir0, dir1 = s[DIR_IDS][0][0], s[DIR_IDS][1][0]
    moved = steps_of(model, s, MOVE)
    record = model.partition_change_record(s, 0, election="online", target_replicas=(1, 0), target_removing=(0,),
                                           target_adding=(1,))
    assert record == (PARTITION_CHANGE, 0, -2, None, (dir1, dir0), None, None, None, (1, 0), (0,), (1,))
    assert record_label(record) == ("PartitionChange(p0, dirs ['dir-1', 'dir-0'], replicas [1, 0], removingReplicas [0], "
                                    "addingReplicas [1])")
    part = moved[0][1][PARTITION][0]
    assert (part[LEADER], part[ISR], part[LEADER_EPOCH], part[PARTITION_EPOCH]) == (0, (0,), 0, 1)
    assert (part[REPLICAS], part[REMOVING], part[ADDING], moved[0][1][REASSIGNMENTS_MADE]) == ((1, 0), (0,), (1,), 1)
    assert model.describe_action(("AdminReassignsPartition", 0, (1,))) == "AdminReassignsPartition(p0 -> [1])"
    request = next(m for m in moved[3][1][NETWORK] if m[0] == ALTER_PARTITION)
    assert request == (ALTER_PARTITION, 0, 1, 0, 0, 1, ((1, 1), (0, 1)), False)
    s = moved[-1][1]
    part = s[PARTITION][0]
    assert (part[LEADER], part[ISR], part[DIRS], part[LEADER_EPOCH], part[PARTITION_EPOCH]) == (1, (1,), (dir1,), 1, 2)
    assert (part[REPLICAS], part[REMOVING], part[ADDING]) == ((1,), (), ())
    assert [m for m in s[NETWORK] if m[0] == ALTER_PARTITION_RESPONSE] == [
        (ALTER_PARTITION_RESPONSE, 0, 1, 0, 0, (1, 0), "NEW_LEADER_ELECTED")]
    s = step(model, s, "BrokerConsumesMetadata", 0, 0)
    assert (s[LOGS], s[REPLICA_LOG], s[HIGH_WATERMARK]) == ((((),), ((0,),)), (((),), ((0,),)), ((0,), (1,)))
    assert s[ACKED][0] == ((0, 0, 0, KEPT),)  # broker 1, the leader now, holds it
    check_invariants(model, s)


def test_a_removal_the_isr_allows_completes_at_once_with_a_leader_epoch_bump():
    """[0, 1] -> [1] with broker 1 in the ISR: nothing to wait for; the leader (broker 0) is
    removed, broker 1 elected.  [0, 1] -> [0]: the leader stays, and the record sets it all the
    same so that its epoch goes up (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded)."""
    model = make_model({"brokers": 2, "dirs_per_broker": 1, "replication_factor": 2, "restarts": 0, "dir_failures": 0,
                        "reassignments": 1})
    s = start_and_register(model, next(model.init_states()), (0, 1))
    s = step(model, s, "ControllerCreatesPartition", 0)
    dir0, dir1 = s[DIR_IDS][0][0], s[DIR_IDS][1][0]
    assert s[PARTITION][0][:3] == (0, (0, 1), (dir0, dir1))
    kept_leader = step(model, s, "AdminReassignsPartition", 0, (0,))[PARTITION][0]
    assert (kept_leader[LEADER], kept_leader[ISR], kept_leader[DIRS], kept_leader[LEADER_EPOCH]) == (0, (0,), (dir0,), 1)
    assert (kept_leader[REPLICAS], kept_leader[REMOVING], kept_leader[ADDING]) == ((0,), (), ())
    moved = step(model, s, "AdminReassignsPartition", 0, (1,))[PARTITION][0]
    assert (moved[LEADER], moved[ISR], moved[DIRS], moved[LEADER_EPOCH], moved[PARTITION_EPOCH]) == (1, (1,), (dir1,), 1, 1)
    # a reorder needs no replica to catch up, and moves no epoch: the leader stays
    reordered = step(model, s, "AdminReassignsPartition", 0, (1, 0))[PARTITION][0]
    assert (reordered[LEADER], reordered[REPLICAS], reordered[DIRS], reordered[LEADER_EPOCH]) == (0, (1, 0), (dir1, dir0), 0)
    # the same replicas in the same order change nothing: no record, the request not counted
    assert ("AdminReassignsPartition", 0, (0, 1)) not in {action for action, _ in model.successors(s)}


def test_a_cancelled_move_reverts_to_the_original_replicas():
    model, s = two_brokers()
    s = step(model, s, "AdminReassignsPartition", 0, (1,))
    before = s[PARTITION][0]
    s = step(model, s, "AdminCancelsReassignment", 0)
    part = s[PARTITION][0]
    # broker 1 leaves the replicas: the leader epoch goes up
    assert (part[LEADER], part[ISR], part[DIRS], part[LEADER_EPOCH], part[PARTITION_EPOCH]) == (
        0, (0,), (s[DIR_IDS][0][0],), 1, before[PARTITION_EPOCH] + 1)
    assert (part[REPLICAS], part[REMOVING], part[ADDING], s[REASSIGNMENTS_MADE]) == ((0,), (), (), 2)
    # nothing under way any more: NoReassignmentInProgressException (and the bound is reached anyway)
    assert ("AdminCancelsReassignment", 0) not in {action for action, _ in model.successors(s)}


def test_a_cancellation_that_needs_an_unclean_election_is_refused_unless_the_topic_allows_it():
    """PartitionReassignmentRevert: when every ISR member is one the reassignment adds, the revert
    puts the first original replica in the ISR alone, an unclean election that
    cancelPartitionReassignment refuses without unclean.leader.election.enable."""
    for unclean, enabled in (("off", False), ("topic", True)):
        model, s = two_brokers(unclean_election=unclean)
        s = step(model, s, "AdminReassignsPartition", 0, (1,))
        # as if the ISR held the added replica alone (broker 0 shrunk out): its leader is broker 1
        part = s[PARTITION][0]
        s = model._with(s, partition=((1, (1,)) + part[2:],))
        assert (("AdminCancelsReassignment", 0) in {action for action, _ in model.successors(s)}) == enabled
        if enabled:
            s = step(model, s, "AdminCancelsReassignment", 0)
            assert s[PARTITION][0][:2] == (0, (0,)) and s[PARTITION][0][REPLICAS] == (0,)


def test_the_broker_reassigned_away_drops_its_queued_assignment_unsent():
    """Broker 0 (two directories) places its replica and queues the assignment; a reassignment from
    [0, 1] to [1] completes at once; broker 0 deletes its replica and AssignmentsManager drops the
    entry without sending it (Assignment.valid: no longer a replica)."""
    model = make_model({"brokers": 2, "replication_factor": 2, "restarts": 0, "dir_failures": 0, "reassignments": 1})
    s = start_and_register(model, next(model.init_states()), (0, 1))
    s = step(model, s, "ControllerCreatesPartition", 0)
    s = step(model, s, "BrokerConsumesMetadata", 0, 0)
    assert (s[LOGS][0], s[QUEUED][0]) == (((0,), ()), (s[DIR_IDS][0][0],))
    s = step(model, s, "AdminReassignsPartition", 0, (1,))
    assert s[PARTITION][0][REPLICAS] == (1,)  # broker 1 is in the ISR: the removal completes at once
    s = step(model, s, "BrokerConsumesMetadata", 0, 0)
    assert (s[LOGS][0], s[QUEUED][0]) == (((), ()), (s[DIR_IDS][0][0],))
    before = s[NETWORK]
    s = step(model, s, "BrokerSendsAssignment", 0, 0)
    assert (s[QUEUED][0], s[NETWORK]) == ((-1,), before)


@pytest.mark.parametrize("settings, why", [
    ({"recovery_tool": 1, "records": 1}, "recovery_tool = 0 and cordons = 0"),
    ({"reassignments": -1}, None),
])
def test_reassignment_settings_refused_in_one_line(settings, why):
    with pytest.raises(ValueError) as error:
        make_model({"reassignments": 1, **settings})
    if why is None:
        assert str(error.value) == "model setting 'reassignments' must be between 0 and 100, not -1"
    else:
        assert str(error.value) == ("model setting 'reassignments' needs recovery_tool = 0 and cordons = 0: the tool's "
                                    "replicas and the cordoned brokers' placement are not modeled for a reassigned "
                                    "partition")


def test_kafka_19975_a_reassignment_completes_once_its_added_replicas_are_in_sync():
    """A move [0] -> [1] under way (replicas [1, 0], removing [0], adding [1]), then a reassignment
    back to [0]: it removes broker 1 and adds nothing, so the builder keeps the adding list.  The
    code read (and Kafka before 4.3.0) completes it at once, every kept replica being in the ISR;
    from 4.3.0 (KAFKA-19975) broker 1, still being added, must be in the ISR first, and the
    reassignment stays under way (as Kafka 4.4.0's controller answered in the conform walks)."""
    outcomes = {}
    for version in ("1eb7644", "4.2.2", "4.3.0"):
        model, s = two_brokers(kafka_version=version, semantics="code")
        s = step(model, s, "AdminReassignsPartition", 0, (1,))
        part = step(model, s, "AdminReassignsPartition", 0, (0,))[PARTITION][0]
        outcomes[version] = (part[REPLICAS], part[REMOVING], part[ADDING])
    assert outcomes == {"1eb7644": ((0,), (), ()), "4.2.2": ((0,), (), ()), "4.3.0": ((0, 1), (1,), (1,))}


def test_with_elr_a_reassignment_whose_election_judges_a_replica_it_added_back_fails(monkeypatch):
    """ELR and reassignments together (tests/test_kafka_tlc.py's ELR_REASSIGNMENTS): an eligible
    leader replica a reassignment removed stays eligible, and once a reassignment adds it back its
    election asks PartitionRegistration.directory for a broker the registration does not hold,
    which throws: Kafka's controller fails the request, nothing written (the model's NotAReplica).
    The search takes that path for both brokers (324 times, a state's successors each computed
    once), and TLC's JudgesNonReplica agrees on every state."""
    from kraftcheck.checker.bfs import explore
    from kraftcheck.model import records
    from tests.test_kafka_tlc import ELR_REASSIGNMENTS, toml

    judged = []
    raising = records.NotAReplica.__init__

    def counted(self, p, b):
        judged.append((p, b))
        raising(self, p, b)

    monkeypatch.setattr(records.NotAReplica, "__init__", counted)
    model = make_model(dict(toml("reassignment")["model"], **ELR_REASSIGNMENTS))
    result = explore(model, check_deadlock=False, stop_on_violation=False)
    assert (result.distinct_states, result.generated_states, result.verdict) == (10_129, 36_193, "ok")
    assert (len(judged), set(judged)) == (324, {(0, 0), (0, 1)})
