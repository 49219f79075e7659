"""Unclean leader elections at the shipped configs: the classic loss given up knowingly, the two
ways to ask for it, and what unclean elections do not change (findings 3, 5 and 7)."""

from __future__ import annotations

import pytest

from .test_kafka_findings import check, labels, make_model, settings, violation


def test_the_topics_setting_gives_the_classic_loss_up_knowingly():
    """unclean.toml under the topic's unclean.leader.election.enable: every invariant holds, and
    the controller's own elections are the unclean ones (no admin election is ever needed)."""
    result = check(config="unclean", unclean_election="topic")
    assert result.verdict == "ok"
    assert (result.distinct_states, result.generated_states, result.depth) == (8808, 21329, 34)
    assert {"AdminElectsUncleanLeader", "ControllerElectsUncleanLeaders"} <= set(result.never_enabled)


def test_the_admins_election_is_taken_and_every_invariant_holds():
    result = check(config="unclean")
    assert result.verdict == "ok"
    assert (result.distinct_states, result.generated_states, result.depth) == (9885, 25226, 36)
    assert result.coverage["AdminElectsUncleanLeader"]["distinct"] > 0
    assert "ControllerElectsUncleanLeaders" in result.never_enabled


def test_without_unclean_elections_the_same_bounds_give_nothing_up():
    """The same cluster with unclean elections off: the partition stays leaderless, and the
    mutant that hides an unclean election's loss has nothing to hide."""
    assert check(config="unclean", unclean_election="off").verdict == "ok"
    assert check(config="unclean", unclean_election="off", mutant="unclean_not_recovering").verdict == "ok"


@pytest.mark.slow  # over 30 s: left to CI and `make test-all`
def test_uncleantopic_takes_the_periodic_election_past_findings_3_5_and_7():
    """With a restart too, the controller's periodic election has a leaderless partition to elect
    for (finding 5's assignment leaves one); unclean elections keep nothing a clean one loses."""
    model = make_model(settings("uncleantopic"))
    result = check(config="uncleantopic")
    assert [(v.name, v.length) for v in result.violations] == [
        ("LeaderOnOnlineDir", 16), ("FencedBrokerLeadsNothing", 16), ("IsrOnOnlineDirs", 16),
        ("ElectedWhenPossible", 22), ("CommittedRecordsSurvive", 22), ("IsrHoldsCommittedRecords", 22)]
    assert (result.distinct_states, result.generated_states, result.depth) == (389319, 1071280, 51)
    assert result.coverage["ControllerElectsUncleanLeaders"]["generated"] > 0
    assert labels(model, violation(result, "CommittedRecordsSurvive").trace)[-1] == "BrokerConsumesMetadata(b0, p0)"


def test_the_classic_unclean_loss_is_caught_by_committed_records_survive_when_unaccounted():
    """The mutant unclean_not_recovering: an unclean election that does not declare itself
    (no RECOVERING, nothing given up) is the classic loss: broker 0 acknowledges a record alone
    in the ISR and crashes; the operator's unclean election makes broker 1, empty, the leader.
    CommittedRecordsSurvive and IsrHoldsCommittedRecords catch it at that election (20 states,
    past CleanLeaderFromIsrOrElr's 17); with unclean elections off, the test above: nothing."""
    model = make_model(settings("unclean", mutant="unclean_not_recovering"))
    result = check(config="unclean", mutant="unclean_not_recovering")
    assert [(v.name, v.length) for v in result.violations] == [
        ("CommittedRecordsSurvive", 20), ("IsrHoldsCommittedRecords", 20), ("CleanLeaderFromIsrOrElr", 17)]
    trace = violation(result, "CommittedRecordsSurvive").trace
    assert labels(model, trace)[-4:] == [
        "LeaderAppendsRecord(b0, p0)", "BrokerCrashes(b0)", "ControllerFencesExpiredBroker(b0)",
        "AdminElectsUncleanLeader(p0)"]
    after = model.describe(trace[-1][1])
    assert after["replicaLog"] == [[[0]], [[]]]
    assert after["acked"] == [[{"offset": 0, "leaderEpoch": 0, "leader": 0}]]
    assert (after["partition"][0]["leader"], after["partition"][0]["leaderRecoveryState"]) == (1, "RECOVERED")
