"""Topic configs altered while the cluster runs (issue 38, part 5): min.insync.replicas with the
ELR clearing it causes (KAFKA-16540), unclean.leader.election.enable turned off and on (the
dynamic path of KAFKA-12670), and preferred leader elections, held to exact figures at
``spec/configs/dynamicconfig.toml`` and ``spec/configs/uncleantoggle.toml``.  TLC gives the same
states (tests/test_kafka_tlc.py); Kafka's controllers take the same steps (tests/test_conform.py)."""

from __future__ import annotations

import pytest

from kraftcheck.checker.bfs import OnlyProperty, explore
from kraftcheck.model import make_model
from kraftcheck.model.config import parse_settings
from kraftcheck.model.state import ELR, ISR, LEADER, LEADER_EPOCH, PARTITION, RECOVERING, TOPIC_CONFIG
from tests.test_kafka_findings import labels
from tests.test_kafka_model import config
from tests.test_power_loss import POWER_LOSS
from tests.trace_helpers import config_search

#: Both brokers registered and unfenced, the partition created on them (as in
#: tests/test_power_loss.py), broker 0 leading; broker 0's AlterPartition takes broker 1 (which
#: has not fetched) out of the ISR: with min.insync.replicas 2 it becomes an eligible leader replica.
SHRUNK_BELOW_MIN_ISR = POWER_LOSS[:13] + [
    "BrokerConsumesMetadata(b0, p0)", "LeaderSendsAlterPartition(b0, p0, b1)",
    "BrokerConsumesMetadata(b1, p0)",
    "ControllerHandlesAlterPartition(AlterPartition(b0, epoch 1, p0, leader epoch 0, partition epoch 0, isr [b0 epoch 1]))",
]
#: ... an operator lowers min.insync.replicas to 1; broker 0 takes a record alone (acknowledged),
#: crashes, and is fenced.
LOWERED_THEN_LEADER_LOST = [
    "AdminAltersMinIsr(min.insync.replicas=1)", "LeaderAppendsRecord(b0, p0)", "BrokerCrashes(b0)",
    "ControllerFencesExpiredBroker(b0)",
]


def run(name, **overrides):
    # the whole state space, made once a run: other tests read it too
    return make_model(dict(config(name), **overrides)), config_search(name, keep_going=True, **overrides)


def replay(model, trace_labels, state=None):
    """The states of ``model`` along actions given by their labels, from its initial state."""
    state = next(iter(model.init_states())) if state is None else state
    states = [state]
    for label in trace_labels:
        state = next(n for a, n in model.successors(state) if model.describe_action(a) == label)
        states.append(state)
    return states


def test_min_isr_changes_keep_every_committed_record():
    """Kafka 4.4.0's rules with ELR, min.insync.replicas 2 lowered once to 1, preferred elections:
    the ClearElrRecord that comes with the change keeps every committed record, and every
    invariant holds."""
    _, result = run("dynamicconfig")
    assert (result.verdict, result.distinct_states, result.generated_states, result.depth) == ("ok", 12_034, 34_022, 35)


def test_lowering_min_isr_clears_the_elr():
    """The change's batch clears the ELR (ClearElrRecord): broker 1, eligible under
    min.insync.replicas 2, is not once the value is 1.  Broker 0 then commits a record alone,
    and when it is fenced it is the partition's only eligible leader."""
    model = make_model(config("dynamicconfig"))
    states = replay(model, SHRUNK_BELOW_MIN_ISR + LOWERED_THEN_LEADER_LOST)
    shrunk, lowered, fenced = states[len(SHRUNK_BELOW_MIN_ISR)], states[len(SHRUNK_BELOW_MIN_ISR) + 1], states[-1]
    assert (shrunk[PARTITION][0][ISR], shrunk[PARTITION][0][ELR], shrunk[TOPIC_CONFIG]) == ((0,), (1,), (2, False))
    assert (lowered[PARTITION][0][ISR], lowered[PARTITION][0][ELR], lowered[TOPIC_CONFIG]) == ((0,), (), (1, False))
    assert lowered[PARTITION][0][4] == shrunk[PARTITION][0][4] + 1  # the ClearElrRecord's partition epoch
    assert (fenced[PARTITION][0][LEADER], fenced[PARTITION][0][ISR], fenced[PARTITION][0][ELR]) == (-1, (), (0,))


def test_kafka_16540_an_elr_kept_across_the_change_loses_a_committed_record():
    """The mutant min_isr_change_keeps_elr (no ClearElrRecord): broker 1, eligible while
    min.insync.replicas was 2, stays so once it is 1; broker 0 commits a record alone and is
    fenced, and broker 1 is elected from the ELR without it: the record is lost, and no
    declared loss gave it up (22 states; CommittedRecordsSurvive and IsrHoldsCommittedRecords
    break in the same state, tests/test_kafka_model.py).  ElrOnlyBelowMinIsr shows the kept
    ELR at once (below)."""
    model = make_model(dict(config("dynamicconfig"), mutant="min_isr_change_keeps_elr"))
    result = explore(OnlyProperty(model, "invariant", "LossesDeclared"), check_deadlock=False)
    assert [(v.name, v.length) for v in result.violations] == [("LossesDeclared", 22)]
    lost = result.violations[0]
    assert labels(model, lost.trace) == SHRUNK_BELOW_MIN_ISR + LOWERED_THEN_LEADER_LOST
    last = lost.trace[-1][1][PARTITION][0]
    assert (last[LEADER], last[ISR], last[ELR], last[RECOVERING]) == (1, (1,), (0,), False)


def test_turned_off_unclean_elections_stay_off_and_on_again_elect():
    """uncleantoggle.toml (Kafka 4.4.0, no ELR, unclean elections on at the start, toggled at most
    twice): every unclean election gives up the record its leader lacks (19 states), and the
    run goes on.  Turned off, the partition whose ISR member is fenced stays leaderless when
    broker 1 is unfenced; turned on again, the periodic unclean election elects broker 1."""
    _, result = run("uncleantoggle")
    assert (result.distinct_states, result.generated_states, result.depth) == (21_872, 68_198, 37)
    assert [(v.name, v.length) for v in result.violations] == [("CommittedRecordsSurvive", 19),
                                                              ("IsrHoldsCommittedRecords", 19)]
    mutated, result = run("uncleantoggle", mutant="unclean_config_read_statically")
    elected = next(v for v in result.violations if v.name == "CleanLeaderFromIsrOrElr")
    assert elected.length == 17
    steps = labels(mutated, elected.trace)
    assert steps == [
        "BrokerStarts(b0)", "BrokerSendsRegistration(b0)", "BrokerStarts(b1)",
        "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))", "BrokerSendsHeartbeat(b0)",
        "BrokerCrashes(b0)", "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
        "BrokerSendsRegistration(b1)", "ControllerHandlesRegistration(Register(b1, incarnation 1, dirs ['dir-1']))",
        "ControllerCreatesPartition(p0)", "ControllerFencesExpiredBroker(b0)", "AdminTogglesUncleanElection",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b1, incarnation 1, epoch 1))", "BrokerSendsHeartbeat(b1)",
        "ControllerHandlesHeartbeat(Heartbeat(b1, epoch 1, offline []))"]
    assert elected.trace[-1][1][PARTITION][0][LEADER] == 1
    # the correct model takes the same steps, and its heartbeat elects nobody
    model = make_model(config("uncleantoggle"))
    off = replay(model, steps)[-1]
    assert (off[PARTITION][0][LEADER], off[PARTITION][0][ISR], off[TOPIC_CONFIG]) == (-1, (0,), (1, False))
    assert "ControllerElectsUncleanLeaders" not in {a[0] for a, _ in model.successors(off)}
    on, elected_again = replay(model, ["AdminTogglesUncleanElection", "ControllerElectsUncleanLeaders"], off)[1:]
    assert on[TOPIC_CONFIG] == (1, True)
    part = elected_again[PARTITION][0]
    assert (part[LEADER], part[ISR], part[LEADER_EPOCH], part[RECOVERING]) == (1, (1,), off[PARTITION][0][LEADER_EPOCH] + 1, True)


def test_a_preferred_election_elects_the_first_replica_only_from_the_isr():
    """ElectLeaders PREFERRED (and auto.leader.rebalance.enable): at every reachable state of
    uncleantoggle.toml where the first replica does not lead, the election is taken exactly
    when the first replica is in the ISR and acceptable, and it moves the leadership there in a
    new leader epoch, the ISR unchanged."""
    model = make_model(config("uncleantoggle"))
    seen, frontier, elections, refused = set(), list(model.init_states()), 0, 0
    while frontier:
        state = frontier.pop()
        if state in seen:
            continue
        seen.add(state)
        moves = model.successors(state)
        frontier += [n for _, n in moves]
        part = state[PARTITION][0]
        if part is None or part[LEADER] == 0:
            continue
        taken = [n for a, n in moves if a == ("AdminElectsPreferredLeader", 0)]
        could = 0 in part[ISR] and model.acceptable_leader(state, 0, model.replica_dir(part, 0, 0))
        assert bool(taken) == could
        if taken:
            elections += 1
            after = taken[0][PARTITION][0]
            assert (after[LEADER], after[ISR], after[LEADER_EPOCH]) == (0, part[ISR], part[LEADER_EPOCH] + 1)
        else:
            refused += 1
    # 150: the states TLC's coverage credits AdminElectsPreferredLeader with generating
    assert (len(seen), elections, refused) == (21_872, 150, 14_447)


def test_min_isr_changes_need_another_value():
    with pytest.raises(ValueError) as raised:
        parse_settings({"brokers": 1, "replication_factor": 1, "min_isr_changes": 1})
    assert str(raised.value) == ("model setting 'min_isr_changes' needs replication_factor >= 2: "
                                 "min.insync.replicas has no other value to take")


def test_the_mutant_breaks_elr_only_below_min_isr_at_the_change():
    """Checked with that invariant alone, the search stops at the change itself (17 states):
    broker 0, fenced after a crash, left the ISR as an eligible leader replica under
    min.insync.replicas 2, and stays one when the value becomes 1, beside an ISR of one."""
    model = make_model(dict(config("dynamicconfig"), mutant="min_isr_change_keeps_elr"))
    result = explore(OnlyProperty(model, "invariant", "ElrOnlyBelowMinIsr"), check_deadlock=False)
    assert [(v.name, v.length) for v in result.violations] == [("ElrOnlyBelowMinIsr", 17)]
    assert labels(model, result.violations[0].trace) == [
        "BrokerStarts(b0)", "BrokerSendsRegistration(b0)", "BrokerStarts(b1)",
        "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))", "BrokerSendsHeartbeat(b0)",
        "BrokerCrashes(b0)", "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
        "BrokerSendsRegistration(b1)", "ControllerHandlesRegistration(Register(b1, incarnation 1, dirs ['dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b1, incarnation 1, epoch 1))", "BrokerSendsHeartbeat(b1)",
        "ControllerHandlesHeartbeat(Heartbeat(b1, epoch 1, offline []))", "ControllerCreatesPartition(p0)",
        "ControllerFencesExpiredBroker(b0)", "AdminAltersMinIsr(min.insync.replicas=1)"]
    last = result.violations[0].trace[-1][1]
    assert (last[PARTITION][0][ISR], last[PARTITION][0][ELR], last[TOPIC_CONFIG]) == ((1,), (0,), (1, False))
