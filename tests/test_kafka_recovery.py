"""KIP-1275's recovery tool (kafka-unclean-recovery.sh): its actions, and finding 10.

The tool takes up a partition the operator sees offline, asks each replica for its log
(GetReplicaLogInfo), designates the replica with the highest leader epoch, then the longest log,
and retries until its deadline.  RecoveryToolKeepsCommitted: if a replica it heard from holds
every committed record, the one it designates holds them too.  On spec/configs/recovery.toml it
does not (finding 10, spec/README.md): nothing tells the tool that an answer predates the
partition's last leader.
"""

from __future__ import annotations

import pytest

from kraftcheck.checker.bfs import OnlyProperty, explore
from kraftcheck.model import make_model
from kraftcheck.model.picture import CHANGED
from kraftcheck.model.state import FOUND_ONLINE, PARTITION, RUNNING_TOOL, TOOL

from tests.test_cli import REPO, kraftcheck
from tests.test_kafka_findings import check, labels, settings, violation


def finding_trace(**overrides):
    model = make_model(settings("recovery", **overrides))
    return model, violation(check(config="recovery", **overrides), "RecoveryToolKeepsCommitted").trace


def with_tool(model, s, answers, requests=0, taken_up=-1):
    """State s with the tool's answers for partition 0 (a tuple per replica, () for none)."""
    outcome = (RUNNING_TOOL,)
    return model._with(s, tool=((tuple(answers),), outcome, requests, (taken_up,)))


# -------------------------------------------------------------------------------------------
# The tool's actions
# -------------------------------------------------------------------------------------------
def test_a_fenced_broker_answers_and_a_broker_down_does_not():
    model, trace = finding_trace()
    offline = trace[-9][1]  # p0 leaderless in leader epoch 1; both brokers running, both fenced
    assert model.describe(offline)["fenced"] == [True, True]
    fresh = with_tool(model, offline, [(), ()])
    asked = model.ToolAsksReplicaLogInfo(fresh, 0, 1)
    assert asked[TOOL] == ((((), (1, 0)),), (RUNNING_TOOL,), 1, (1,))
    down = trace[-3][1]  # broker 0 has crashed
    assert model.describe(down)["brokerStatus"] == ["OFF", "RUNNING"]
    assert model.ToolAsksReplicaLogInfo(with_tool(model, down, [(), ()]), 0, 0) is None
    # a replica is asked once
    assert model.ToolAsksReplicaLogInfo(asked, 0, 1) is None


def test_the_tool_takes_up_only_a_partition_the_operator_sees_offline():
    model, trace = finding_trace()
    led = trace[-5][1]  # broker 0 leads and has written the record
    assert model.describe(led)["partition"][0]["leader"] == 0
    fresh = with_tool(model, led, [(), ()])
    assert model.ToolAsksReplicaLogInfo(fresh, 0, 0) is None
    assert model.ToolElectsLeader(fresh, 0) is None


def test_the_choice_ranks_the_epoch_then_the_log_then_replica_order():
    model, trace = finding_trace()
    s = trace[-2][1]
    assert model.tool_choice(with_tool(model, s, [(2, 0), (1, 5)], taken_up=1), 0) == 0
    assert model.tool_choice(with_tool(model, s, [(1, 3), (1, 5)], taken_up=1), 0) == 1
    assert model.tool_choice(with_tool(model, s, [(1, 5), (1, 5)], taken_up=1), 0) == 0
    assert model.tool_choice(with_tool(model, s, [(), (0, 0)], taken_up=1), 0) == 1
    assert model.tool_choice(with_tool(model, s, [(), ()]), 0) is None


def test_the_answers_leader_epoch_under_each_reading():
    """KIP-1275's PartitionLeaderEpoch is the partition's leader epoch in the broker's metadata;
    KIP-966's LastWrittenLeaderEpoch is the epoch of the log's last record (-1: empty)."""
    s = finding_trace()[1][-2][1]  # broker 0's log holds a record of epoch 2; the partition is in epoch 3
    current = make_model(settings("recovery"))
    last_written = make_model(settings("recovery", tool_epoch="last_written"))
    assert [current.replica_log_info(s, b, 0) for b in (0, 1)] == [(3, 1), (3, 0)]
    assert [last_written.replica_log_info(s, b, 0) for b in (0, 1)] == [(2, 1), (-1, 0)]


def test_a_refused_election_is_tried_again_until_the_deadline():
    model, trace = finding_trace()
    s = with_tool(model, trace[-2][1], [(5, 1), (3, 0)], requests=1, taken_up=1)  # broker 0 ranks first: fenced
    refused = model.ToolElectsLeader(s, 0)
    assert refused[PARTITION] == s[PARTITION] and refused[TOOL][1:3] == ((RUNNING_TOOL,), 2)
    last = model.ToolElectsLeader(refused, 0)
    assert last[TOOL][2] == 3 == model.settings.recovery_tool
    assert model.ToolElectsLeader(last, 0) is None  # the deadline: no request left


def test_a_partition_back_online_is_reported_not_elected():
    model, trace = finding_trace()
    led = trace[-5][1]
    assert led[TOOL][3] == (1,)  # taken up in leader epoch 1, before broker 0 led again
    reported = model.ToolElectsLeader(led, 0)
    assert reported[PARTITION] == led[PARTITION]
    assert reported[TOOL][1] == (FOUND_ONLINE,)
    assert model.ToolElectsLeader(reported, 0) is None


def test_the_designated_replica_leads_as_the_isr_alone_and_recovering():
    model, trace = finding_trace()
    after = model.describe(trace[-1][1])
    partition = after["partition"][0]
    assert (partition["leader"], partition["isr"], partition["leaderEpoch"], partition["leaderRecoveryState"]) == (
        1, [1], 4, "RECOVERING")
    assert after["tool"]["outcome"] == ["ELECTED"]


def test_with_the_epoch_check_an_election_on_stale_answers_is_refused():
    model = make_model(settings("recovery", tool_epoch_check=True))
    s = finding_trace()[1][-2][1]  # taken up in leader epoch 1; the partition is in epoch 3
    refused = model.ToolElectsLeader(s, 0)
    assert refused[PARTITION] == s[PARTITION]
    assert refused[TOOL][1:3] == ((RUNNING_TOOL,), 3)


# -------------------------------------------------------------------------------------------
# Finding 10
# -------------------------------------------------------------------------------------------
#: The end of finding 10's trace: the tool takes p0 up and broker 0 answers (empty, epoch 1);
#: broker 0 leads again and writes a committed record, crashes; broker 1 answers (empty, epoch 3)
#: and outranks it.
FINDING_10_END = [
    "ToolAsksReplicaLogInfo(p0, b0)",
    "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 2, offline []))",
    "BrokerSendsHeartbeat(b1)",
    "ControllerHandlesHeartbeat(Heartbeat(b1, epoch 1, offline []))",
    "LeaderAppendsRecord(b0, p0)",
    "BrokerCrashes(b0)",
    "ControllerFencesExpiredBroker(b0)",
    "ToolAsksReplicaLogInfo(p0, b1)",
    "ToolElectsLeader(p0)",
]


@pytest.mark.slow  # over 30 s: left to CI and `make test-all`
def test_finding_10_a_stale_answer_loses_a_committed_record():
    result = check(config="recovery")
    assert sorted((v.name, v.length) for v in result.violations) == [
        ("CommittedRecordsSurvive", 21), ("IsrHoldsCommittedRecords", 21), ("RecoveryToolKeepsCommitted", 29)]
    assert (result.distinct_states, result.generated_states, result.depth) == (242752, 603789, 48)
    model, trace = finding_trace()
    assert labels(model, trace)[-9:] == FINDING_10_END
    before, after = (model.describe(trace[i][1]) for i in (-2, -1))
    assert before["tool"]["answers"] == [[{"leaderEpoch": 1, "logEndOffset": 0}, {"leaderEpoch": 3, "logEndOffset": 0}]]
    assert before["replicaLog"] == [[[2]], [[]]]
    assert before["acked"] == [[{"offset": 0, "leaderEpoch": 2, "leader": 0, "lostBy": "kept"}]]
    # given up, knowingly, by the tool's designated election: it stays in the reference
    assert (after["partition"][0]["leader"], after["acked"]) == (
        1, [[{"offset": 0, "leaderEpoch": 2, "leader": 0, "lostBy": {"election": {"leader": 1, "leaderEpoch": 4}}}]])


def test_finding_10_under_kip_966s_leader_epoch_too():
    """LastWrittenLeaderEpoch does not help: both answers came from empty logs."""
    result = check(config="recovery", tool_epoch="last_written")
    assert sorted((v.name, v.length) for v in result.violations) == [
        ("CommittedRecordsSurvive", 21), ("IsrHoldsCommittedRecords", 21), ("RecoveryToolKeepsCommitted", 29)]
    assert (result.distinct_states, result.generated_states, result.depth) == (193849, 488413, 48)
    model, trace = finding_trace(tool_epoch="last_written")
    assert model.describe(trace[-2][1])["tool"]["answers"] == [
        [{"leaderEpoch": -1, "logEndOffset": 0}, {"leaderEpoch": -1, "logEndOffset": 0}]]
    assert model.describe(trace[-2][1])["replicaLog"] == [[[]], [[2]]]


@pytest.mark.parametrize("tool_epoch,figures", [("current", (227981, 582561, 47)), ("last_written", (182551, 471020, 47))])
def test_the_epoch_check_keeps_every_committed_record_on_the_config(tool_epoch, figures):
    """With the check the tool keeps every record a replica it heard from holds, judged against
    every record ever acknowledged; what it loses no responder held (a broker down answers
    nothing), a declared loss: CommittedRecordsSurvive and IsrHoldsCommittedRecords count it."""
    result = check(config="recovery", tool_epoch=tool_epoch, tool_epoch_check=True)
    assert sorted((v.name, v.length) for v in result.violations) == [
        ("CommittedRecordsSurvive", 21), ("IsrHoldsCommittedRecords", 21)]
    assert (result.distinct_states, result.generated_states, result.depth) == figures


@pytest.mark.slow
def test_finding_10_with_the_epoch_check_kip_1275s_epoch_ties_fresh_answers():
    """With the epoch check every answer is fresh, and KIP-1275's PartitionLeaderEpoch is the
    same in each: the log end offset alone decides, and a deposed leader's uncommitted record
    counts as much as the committed one of its successor (two records, two restarts: about a
    minute)."""
    overrides = dict(records=2, restarts=2, tool_epoch_check=True)
    model = make_model(settings("recovery", **overrides))
    # the property alone, to its first violation: the tool's declared loss (CommittedRecordsSurvive,
    # 21 states) would stop the search first, and the whole state space is some millions of states
    result = explore(OnlyProperty(model, "action", "RecoveryToolKeepsCommitted"), check_deadlock=False,
                     stop_on_violation=True)
    trace = violation(result, "RecoveryToolKeepsCommitted").trace
    assert len(trace) == 33
    assert labels(model, trace)[-11:] == [
        "BrokerSendsHeartbeat(b0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 2, offline []))",
        "LeaderAppendsRecord(b1, p0)",
        "BrokerCrashes(b1)",
        "BrokerStarts(b1)",
        "BrokerSendsRegistration(b1)",
        "ControllerHandlesRegistration(Register(b1, incarnation 2, dirs ['dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b1, incarnation 2, epoch 2))",
        "ToolAsksReplicaLogInfo(p0, b0)",
        "ToolAsksReplicaLogInfo(p0, b1)",
        "ToolElectsLeader(p0)",
    ]
    before = model.describe(trace[-2][1])
    assert before["tool"]["answers"] == [[{"leaderEpoch": 2, "logEndOffset": 1}, {"leaderEpoch": 2, "logEndOffset": 1}]]
    assert before["replicaLog"] == [[[0]], [[1]]]
    assert before["acked"] == [[{"offset": 0, "leaderEpoch": 1, "leader": 1, "lostBy": "kept"}]]
    assert model.describe(trace[-1][1])["partition"][0]["leader"] == 0


def test_the_picture_shows_what_the_tool_heard_and_its_outcome():
    model, trace = finding_trace()
    drawn = model.picture(model.describe(trace[-1][1]), model.describe(trace[-2][1]))
    assert "recovery tool (ELECTED, taken up in epoch 1): b0 epoch 1 end 0, b1 epoch 3 end 0" in drawn
    assert "RECOVERING" in drawn
    untouched = model.picture(model.describe(trace[0][1]))
    assert "recovery tool" not in untouched
    # an answer alone changes the partition's row: it is highlighted; a step that changes neither is not
    row = f'<TR><TD ALIGN="LEFT" BGCOLOR="{CHANGED}"><B>p0</B>'
    assert row in model.picture(model.describe(trace[-2][1]), model.describe(trace[-3][1]))  # broker 1 answers
    assert labels(model, trace)[-7] == "BrokerSendsHeartbeat(b1)"
    assert row not in model.picture(model.describe(trace[-7][1]), model.describe(trace[-8][1]))


def test_the_tools_elections_are_held_to_the_designated_elections_rules():
    """DesignatedElectionSafe covers the tool's elections too: with the mutant that lets a
    designated election through for a partition that has a leader, the tool's election of
    broker 1 while broker 0 leads again breaks it (21 states, the length of the tool's declared
    loss, which the search stops at too)."""
    model = make_model(settings("recovery", mutant="designated_with_leader"))
    result = check(keep_going=False, config="recovery", mutant="designated_with_leader")
    assert [(v.name, v.length) for v in result.violations] == [
        ("CommittedRecordsSurvive", 21), ("IsrHoldsCommittedRecords", 21), ("DesignatedElectionSafe", 21)]
    trace = violation(result, "DesignatedElectionSafe").trace
    assert labels(model, trace)[-1] == "ToolElectsLeader(p0)"
    before, after = (model.describe(trace[i][1])["partition"][0] for i in (-2, -1))
    assert (before["leader"], after["leader"]) == (0, 1)


def test_a_bad_tool_setting_on_the_command_line_is_one_line_and_exit_2():
    p = kraftcheck("check", str(REPO / "spec" / "configs" / "recovery.toml"), "--set", "tool_epoch=newest")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == ("kraftcheck: error: the model rejected its config: model setting 'tool_epoch' must be one of "
                        "current, last_written, not 'newest'\n")
