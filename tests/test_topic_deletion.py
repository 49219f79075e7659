"""Topic deletion (``topic_deletion``) with directory assignments queued: the controller's
RemoveTopicRecord, the brokers deleting their replicas, and AssignmentsManager dropping an
assignment the broker's metadata no longer backs (KAFKA-17190), at ``spec/configs/deletion.toml``.
TLC's agreement: tests/test_kafka_tlc.py (states, coverage, findings) and
tests/test_progress_tlc.py (the progress verdicts, one broker); Kafka's: tests/test_conform.py."""

from __future__ import annotations

from pathlib import Path

import pytest

import kraftcheck
from kraftcheck.model import make_model
from kraftcheck.model.state import (
    ASSIGN, ASSIGN_RESPONSE, DELETED, DIR_IDS, LOGS, NETWORK, PARTITION, QUEUED, REGISTER_RESPONSE,
)
from tests.test_kafka_scenarios import deliver, start_and_register, step

CONFIG = str(Path(__file__).resolve().parent.parent / "spec" / "configs" / "deletion.toml")
PROPERTIES = ("FailedDirLeadershipsMove", "RunningBrokerUnfenced", "AssignmentSettled", "LeaderlessPartitionElected",
              "ReportedFailureSettled", "DeadBrokerFenced")
#: what Kafka's code breaks at deletion.toml before and besides deletion: findings 2 and 1
FINDINGS = [("action", "FencedUntilAssigned", 14), ("invariant", "IsrOnOnlineDirs", 20),
            ("invariant", "LeaderOnOnlineDir", 20)]


def one_broker():
    return make_model({"brokers": 1, "replication_factor": 1, "dir_failures": 1, "topic_deletion": True})


def placed_and_deleted(model):
    """Broker 0 runs, unfenced; partition 0 is created UNASSIGNED, the broker places its replica
    in dir-0 and queues the assignment; then the topic is deleted."""
    s = next(model.init_states())
    s = start_and_register(model, s, [0])
    s = step(model, s, "ControllerCreatesPartition", 0)
    s = step(model, s, "BrokerConsumesMetadata", 0, 0)
    assert (s[LOGS][0], s[QUEUED][0]) == (((0,), ()), (s[DIR_IDS][0][0],))
    s = step(model, s, "AdminDeletesTopic", 0)
    assert (s[PARTITION], s[DELETED]) == ((None,), (True,))
    return s


def test_deletion_config_figures_and_verdicts():
    result = kraftcheck.check(CONFIG)
    assert (result.distinct_states, result.generated_states, result.depth) == (137_905, 678_135, 36)
    assert sorted((v.kind, v.name, v.length) for v in result.violations) == FINDINGS
    assert result.liveness["properties"] == {name: "holds" for name in PROPERTIES}
    assert (result.liveness["graph_states"], result.liveness["graph_edges"]) == (137_905, 678_134)
    assert "AdminDeletesTopic" not in result.never_enabled
    assert result.coverage["AdminDeletesTopic"]["distinct"] > 0


def test_kafka_17190_an_assignment_retried_for_a_deleted_topic_never_settles():
    """The mutant sends the assignment of a deleted topic, the controller answers
    UNKNOWN_TOPIC_ID, and the broker sends it again, for ever: a 21-state lasso; every safety
    verdict is the correct model's."""
    result = kraftcheck.check(CONFIG, mutant="assignment_retried_for_deleted_topic")
    temporal = [(v.name, v.length, v.loop) for v in result.violations if v.kind == "temporal"]
    assert temporal == [("AssignmentSettled", 21, 15)]
    assert sorted((v.kind, v.name, v.length) for v in result.violations if v.kind != "temporal") == FINDINGS
    lasso = result.violations[-1].trace
    assert [action[0] for action, _ in lasso[1:]] == [
        "BrokerStarts", "BrokerSendsRegistration", "BrokerStarts", "BrokerSendsRegistration", "BrokerCrashes",
        "ControllerHandlesRegistration", "ControllerHandlesRegistration", "BrokerReceivesRegistrationResponse",
        "BrokerSendsHeartbeat", "BrokerReceivesRegistrationResponse", "ControllerHandlesHeartbeat",
        "ControllerCreatesPartition", "BrokerConsumesMetadata", "AdminDeletesTopic", "BrokerConsumesMetadata",
        "BrokerSendsHeartbeat", "BrokerSendsAssignment", "ControllerHandlesHeartbeat", "ControllerHandlesAssignment",
        "BrokerReceivesAssignmentResponse"]
    # the loop: the assignment refused, and the broker's entry still queued as it was
    refused = lasso[-2][1][NETWORK]
    assert [m for m in refused if m[0] == ASSIGN_RESPONSE] == [(ASSIGN_RESPONSE, 0, 1, 0, lasso[-1][1][QUEUED][0][0], False)]


def test_the_broker_deletes_its_replica_and_drops_the_queued_assignment_unsent():
    model = one_broker()
    s = placed_and_deleted(model)
    # the broker deletes its log; AssignmentsManager is not told: the entry stays queued
    s = step(model, s, "BrokerConsumesMetadata", 0, 0)
    assert (s[LOGS][0], s[QUEUED][0]) == (((), ()), (s[DIR_IDS][0][0],))
    # maybeSendAssignments: no longer valid, dropped, nothing sent
    before = s[NETWORK]
    s = step(model, s, "BrokerSendsAssignment", 0, 0)
    assert (s[QUEUED][0], s[NETWORK]) == ((-1,), before)
    # nothing left to do for the partition; it is not created again
    enabled = {action[0] for action, _ in model.successors(s) if action[1:2] == (0,) or action[2:3] == (0,)}
    assert not enabled & {"BrokerConsumesMetadata", "BrokerSendsAssignment", "ControllerCreatesPartition", "AdminDeletesTopic"}


def test_a_log_on_a_failed_disk_outlives_the_deletion():
    model = one_broker()
    s = placed_and_deleted(model)
    s = step(model, s, "BrokerFailsDir", 0, 0)
    assert ("BrokerConsumesMetadata", 0, 0) not in {action for action, _ in model.successors(s)}
    assert s[LOGS][0] == ((0,), ())


def test_an_error_answer_keeps_the_assignment_queued_for_another_try():
    """AssignmentsManager.handleAssignmentResponse puts a refused assignment back among the ready
    ones; the mutant, sending it though the topic is gone, gets UNKNOWN_TOPIC_ID every time."""
    model = make_model({"brokers": 1, "replication_factor": 1, "topic_deletion": True,
                        "mutant": "assignment_retried_for_deleted_topic"})
    s = placed_and_deleted(model)
    queued = s[QUEUED]
    s = step(model, s, "BrokerSendsAssignment", 0, 0)
    assert [m for m in s[NETWORK] if m[0] == ASSIGN] == [(ASSIGN, 0, 1, 0, queued[0][0])]
    s = deliver(model, s, ASSIGN, 0)
    assert [m for m in s[NETWORK] if m[0] == ASSIGN_RESPONSE] == [(ASSIGN_RESPONSE, 0, 1, 0, queued[0][0], False)]
    s = deliver(model, s, ASSIGN_RESPONSE, 0)
    assert s[QUEUED] == queued
    assert ("BrokerSendsAssignment", 0, 0) in {action for action, _ in model.successors(s)}


def test_a_topic_is_deleted_only_once_its_creation_is_committed():
    """With the metadata log, DeleteTopics finds the topic's ID in the committed metadata only."""
    model = make_model({"brokers": 1, "replication_factor": 1, "dir_failures": 0, "failovers": 1,
                        "topic_deletion": True})
    s = next(model.init_states())
    s = step(model, s, "BrokerStarts", 0, ())
    s = step(model, s, "BrokerSendsRegistration", 0)
    s = step(model, s, "ControllerHandlesRegistration", match=lambda m: m[1] == 0)
    s = step(model, s, "ControllerCommits")
    s = deliver(model, s, REGISTER_RESPONSE, 0)
    s = step(model, s, "BrokerSendsHeartbeat", 0)
    s = step(model, s, "ControllerHandlesHeartbeat", match=lambda m: m[1] == 0)
    s = step(model, s, "ControllerCommits")
    s = step(model, s, "ControllerCreatesPartition", 0)
    assert ("AdminDeletesTopic", 0) not in {action for action, _ in model.successors(s)}
    s = step(model, s, "ControllerCommits")
    s = step(model, s, "AdminDeletesTopic", 0)
    assert (s[PARTITION], s[DELETED]) == ((None,), (True,))


@pytest.mark.parametrize("settings, message", [
    ({"records": 1}, "model setting 'topic_deletion' needs records = 0 and recovery_tool = 0: a deleted topic's "
                     "records are not modeled"),
])
def test_deletion_refuses_the_data_plane(settings, message):
    with pytest.raises(ValueError) as raised:
        make_model(dict(settings, topic_deletion=True))
    assert str(raised.value) == message
