"""Unclean leader elections at the shipped configs: the classic loss given up knowingly, counted
as lost against every record ever acknowledged, the two ways to ask for it, and what unclean
elections do not change (findings 3, 5 and 7)."""

from __future__ import annotations

import pytest

from .test_kafka_findings import check, labels, make_model, settings, violation


#: What an unclean election's knowing loss breaks: the properties judged against every record
#: ever acknowledged.  LossesDeclared holds: no record is lost but by such an election.
DECLARED_LOSS = [("CommittedRecordsSurvive", 20), ("IsrHoldsCommittedRecords", 20)]


def test_the_topics_setting_gives_the_classic_loss_up_knowingly():
    """unclean.toml under the topic's unclean.leader.election.enable: the record given up counts
    as lost, declared (LossesDeclared holds), and the controller's own elections are the
    unclean ones (no admin election is ever needed)."""
    result = check(config="unclean", unclean_election="topic")
    # the controller's election comes with the fencing: a step sooner than the admin's
    assert [(v.name, v.length + 1) for v in result.violations] == DECLARED_LOSS
    assert (result.distinct_states, result.generated_states, result.depth) == (8880, 21365, 34)
    assert {"AdminElectsUncleanLeader", "ControllerElectsUncleanLeaders"} <= set(result.never_enabled)


def test_the_admins_election_loses_the_record_knowingly_and_nothing_else():
    result = check(config="unclean")
    assert [(v.name, v.length) for v in result.violations] == DECLARED_LOSS
    assert (result.distinct_states, result.generated_states, result.depth) == (9957, 25262, 36)
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
    assert sorted((v.name, v.length) for v in result.violations) == [
        ("CommittedRecordsSurvive", 19), ("ElectedWhenPossible", 22), ("FencedBrokerLeadsNothing", 16),
        ("IsrHoldsCommittedRecords", 19), ("IsrOnOnlineDirs", 16), ("LeaderOnOnlineDir", 16), ("LossesDeclared", 22)]
    assert (result.distinct_states, result.generated_states, result.depth) == (431255, 1165976, 51)
    assert result.coverage["ControllerElectsUncleanLeaders"]["generated"] > 0
    # finding 7: the recreated empty replica leads, a loss no election declared
    assert labels(model, violation(result, "LossesDeclared").trace)[-1] == "BrokerConsumesMetadata(b0, p0)"


def test_the_classic_unclean_loss_is_caught_by_committed_records_survive_when_unaccounted():
    """The mutant unclean_not_recovering: an unclean election that does not declare itself
    (no RECOVERING, nothing given up) is the classic loss: broker 0 acknowledges a record alone
    in the ISR and crashes; the operator's unclean election makes broker 1, empty, the leader.
    LossesDeclared catches it at that election (20 states, past CleanLeaderFromIsrOrElr's 17):
    the record is lost, and no election declared it; with unclean elections off, the test
    above: nothing."""
    model = make_model(settings("unclean", mutant="unclean_not_recovering"))
    result = check(config="unclean", mutant="unclean_not_recovering")
    assert [(v.name, v.length) for v in result.violations] == [
        ("CommittedRecordsSurvive", 20), ("IsrHoldsCommittedRecords", 20), ("LossesDeclared", 20),
        ("CleanLeaderFromIsrOrElr", 17)]
    trace = violation(result, "LossesDeclared").trace
    assert labels(model, trace)[-4:] == [
        "LeaderAppendsRecord(b0, p0)", "BrokerCrashes(b0)", "ControllerFencesExpiredBroker(b0)",
        "AdminElectsUncleanLeader(p0)"]
    after = model.describe(trace[-1][1])
    assert after["replicaLog"] == [[[0]], [[]]]
    assert after["acked"] == [[{"offset": 0, "leaderEpoch": 0, "leader": 0, "lostBy": "kept"}]]
    assert (after["partition"][0]["leader"], after["partition"][0]["leaderRecoveryState"]) == (1, "RECOVERED")
