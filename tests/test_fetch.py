"""Kafka's fetch protocol (model setting fetch = "batch"): the leader-epoch cache's lookups, the
truncation rounds of KIP-279, the entry a new leader assigns before it has a record, and the three
mutants that let a follower's high watermark pass records its leader lacks.  fetch.toml's whole
search: tests/test_kafka_model.py; fetchprogress.toml's, and KAFKA-7415's mutant (liveness only):
tests/test_progress.py."""

from __future__ import annotations

from collections import Counter, deque

import pytest

from kraftcheck.checker.bfs import explore
from kraftcheck.model import make_model
from kraftcheck.model.config import parse_settings
from kraftcheck.model.data import end_offset_for
from kraftcheck.model.state import (
    EPOCH_ENTRY, FOLLOWER_END, HIGH_WATERMARK, LEADER, LEADER_EPOCH, PARTITION, REPLICA_LOG, except_at,
)
from tests.test_kafka_findings import labels
from tests.test_kafka_model import config

#: LeaderEpochFileCache.endOffsetFor on epochs 1 (from offset 0), 2 (from 5) and 4 (from 8), the
#: log ending at 10 (LeaderEpochFileCacheTest's cases)
CACHE = ((1, 0), (2, 5), (4, 8))


@pytest.mark.parametrize("requested,expected", [
    (4, (4, 10)),    # the latest epoch: the log end offset
    (2, (2, 8)),     # an epoch it has: where the next one starts
    (3, (2, 8)),     # one it skipped: the largest below it, and where the next above it starts
    (1, (1, 5)),
    (0, (0, 0)),     # below every entry: the epoch asked for, and the first entry's start
    (5, (-1, -1)),   # above every entry: UNDEFINED
    (-1, (-1, -1)),  # none asked for
])
def test_the_cache_places_an_epoch_as_kafkas_does(requested, expected):
    assert end_offset_for(CACHE, 10, requested) == expected


def test_an_empty_cache_places_nothing():
    assert end_offset_for((), 0, 3) == (-1, -1)


def test_fetch_needs_records_and_a_known_value():
    with pytest.raises(ValueError) as raised:
        parse_settings({"fetch": "batch"})
    assert str(raised.value) == "model setting 'fetch' needs records > 0: only the replicas' logs are fetched"
    with pytest.raises(ValueError) as raised:
        parse_settings({"fetch": "partial", "records": 1})
    assert str(raised.value) == "model setting 'fetch' must be one of whole_log, batch, not 'partial'"
    assert parse_settings({"fetch": "batch", "records": 1}).fetch == "batch"


def test_whole_log_fetches_keep_their_state_space():
    """The data plane's configs without the setting explore what they did before it."""
    result = explore(make_model(config("dataplane")), check_deadlock=False)
    assert (result.distinct_states, result.generated_states, result.depth) == (11080, 38904, 37)
    batch = explore(make_model(dict(config("dataplane"), fetch="batch")), check_deadlock=False)
    assert (batch.verdict, batch.distinct_states, batch.generated_states, batch.depth) == ("ok", 21540, 75025, 39)


def _fetch_kinds(model):
    """Every reachable state of ``model``: how many hold a cache entry no record follows, and the
    fetches enabled from them by what the leader answers."""
    init = next(iter(model.init_states()))
    seen, queue, kinds = {init}, deque([init]), Counter()
    while queue:
        s = queue.popleft()
        for b in model.brokers:
            for p in model.partitions:
                entry = s[EPOCH_ENTRY][b][p]
                if entry != -1:
                    kinds["entry"] += 1
                    log = s[REPLICA_LOG][b][p]
                    # the entry makeLeader assigned is above every record of the log
                    assert not log or log[-1] < entry
        for action, n in model.successors(s):
            if action[0] == "FollowerFetches":
                b, p = action[1], action[2]
                leader = model.broker_view(s, b)[PARTITION][p][LEADER]
                mine, theirs = s[REPLICA_LOG][b][p], s[REPLICA_LOG][leader][p]
                last = model.latest_epoch(s, b, p)
                epoch, end = end_offset_for(model.epoch_cache(s, leader, p), len(theirs), last)
                if last != -1 and (epoch < last or end < len(mine)):
                    kinds["truncation"] += 1
                    assert len(n[REPLICA_LOG][b][p]) < len(mine) or n[EPOCH_ENTRY][b][p] != s[EPOCH_ENTRY][b][p]
                else:
                    kinds["read"] += 1
            if n not in seen:
                seen.add(n)
                queue.append(n)
    return len(seen), kinds


@pytest.mark.slow
def test_fetches_read_or_truncate_as_the_leader_answers():
    states, kinds = _fetch_kinds(make_model(config("fetch")))
    assert (states, dict(kinds)) == (227175, {"entry": 12402, "read": 6910, "truncation": 180})


def _following_state():
    """A state of fetch.toml where broker 1 leads partition 0, having taken the lead, and broker 0,
    running, follows it; then given the logs of KIP-279's fast failovers: the leader's epochs 0,
    1 and 3, the follower's 0 and 2 (its records of epoch 2 the leader never had)."""
    model = make_model(config("fetch"))
    for s in _states(model):
        part = s[PARTITION][0]
        if (part is not None and part[LEADER] == 1 and s[FOLLOWER_END][1][0][0] == part[LEADER_EPOCH]
                and model.fetching_from(s, 0, 0, 1, part[LEADER_EPOCH])):
            part = part[:LEADER_EPOCH] + (3,) + part[LEADER_EPOCH + 1:]
            s = model._with(s, partition=except_at(s[PARTITION], 0, part),
                            followerEnd=except_at(s[FOLLOWER_END], 1, ((3, 3, (-1, -1), (-1, -1)),)),
                            replicaLog=(((0, 2, 2),), ((0, 1, 3),)),
                            highWatermark=((0,), (1,)), epochEntry=((-1,), (-1,)))
            return model, s
    raise AssertionError("no such state")


def _states(model):
    init = next(iter(model.init_states()))
    seen, queue = {init}, deque([init])
    while queue:
        s = queue.popleft()
        yield s
        for _, n in model.successors(s):
            if n not in seen:
                seen.add(n)
                queue.append(n)


def test_a_follower_truncates_round_after_round_until_the_logs_agree():
    """KIP-279: the leader answers the follower's epoch 2 with its epoch 1, ending at 2; the
    follower has no epoch 1, so it truncates to the end of its epoch 0 (offset 1) and asks again;
    epoch 0 then agrees, and it reads the leader's records one at a time.  The leader, alone in
    its ISR, moves its high watermark to its log end at the first fetch it reads for; the follower
    learns it a fetch later (the answer carries the high watermark from before the fetch), and the
    last fetch only tells the leader where the follower is."""
    model, s = _following_state()
    rounds = []
    while True:
        n = model.FollowerFetches(s, 0, 0)
        if n is None:
            break
        rounds.append((n[REPLICA_LOG][0][0], n[HIGH_WATERMARK][0][0]))
        s = n
    assert rounds == [((0,), 0), ((0, 1), 1), ((0, 1, 3), 3), ((0, 1, 3), 3)]
    assert s[FOLLOWER_END][1][0][2] == (3, -1)
    assert s[REPLICA_LOG][0][0] == s[REPLICA_LOG][1][0]


def test_a_new_leader_assigns_its_epoch_before_it_has_a_record():
    """makeLeader's entry (KAFKA-7415): the leader's latest epoch is its own, so a follower with
    records of a later epoch than any the leader holds gets a diverging epoch, not
    OFFSET_OUT_OF_RANGE; the recovery tool's last written epoch reads it too."""
    model, s = _following_state()
    s = model._with(s, replicaLog=(((0, 2),), ((0, 0),)), epochEntry=((-1,), (3,)))
    assert model.epoch_cache(s, 1, 0) == ((0, 0), (3, 2))
    assert model.latest_epoch(s, 1, 0) == 3
    # the leader answers epoch 2 with its epoch 0, ending at 2; the follower's epoch 0 ends at 1
    n = model.FollowerFetches(s, 0, 0)
    assert n[REPLICA_LOG][0][0] == (0,)
    tool = make_model(dict(config("fetch"), tool_epoch="last_written"))
    assert tool.replica_log_info(s, 1, 0) == (3, 2)
    # without the entry the leader cannot place epoch 2 (OFFSET_OUT_OF_RANGE), and its log is not
    # shorter than the follower's: the follower fetches again as it was, for as long as the
    # leader takes no record (the diverging record stays)
    bare = model._with(s, epochEntry=((-1,), (-1,)))
    assert model.FollowerFetches(bare, 0, 0) is None
    # a leader log shorter than the follower's: truncated to its end, no epoch compared
    short = model._with(bare, replicaLog=(((0, 2),), ((0,),)))
    assert model.FollowerFetches(short, 0, 0)[REPLICA_LOG][0][0] == (0,)


#: The run both mutants break FetchExposesOnlyLeaderRecords on: broker 0 leads, takes a record and
#: crashes; broker 1 leads in a new epoch and commits a record of its own alone; broker 0 comes
#: back and fetches, its record of the old epoch diverging at offset 0.
EXPOSED = [
    "BrokerStarts(b0)", "BrokerSendsRegistration(b0)", "BrokerStarts(b1)",
    "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
    "BrokerSendsHeartbeat(b0)", "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
    "BrokerSendsRegistration(b1)", "ControllerHandlesRegistration(Register(b1, incarnation 1, dirs ['dir-1']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b1, incarnation 1, epoch 1))",
    "BrokerSendsHeartbeat(b1)", "ControllerHandlesHeartbeat(Heartbeat(b1, epoch 1, offline []))",
    "ControllerCreatesPartition(p0)", "BrokerConsumesMetadata(b0, p0)", "BrokerConsumesMetadata(b1, p0)",
    "LeaderStartsEpoch(b0, p0)", "LeaderAppendsRecord(b0, p0)", "BrokerCrashes(b0)", "BrokerStarts(b0)",
    "BrokerSendsRegistration(b0)",
    "ControllerHandlesRegistrationAfterSessionTimeout(Register(b0, incarnation 2, dirs ['dir-0']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 2))",
    "LeaderStartsEpoch(b1, p0)", "LeaderAppendsRecord(b1, p0)", "FollowerFetches(b0, p0)",
]


@pytest.mark.parametrize("mutant,states", [("high_watermark_before_truncation", 45017),
                                           ("diverging_epoch_ignored", 45009)])
def test_each_fetch_mutant_exposes_a_diverging_record(mutant, states):
    model = make_model(dict(config("fetch"), mutant=mutant))
    result = explore(model, check_deadlock=False)
    assert result.distinct_states == states
    violation = result.violations[0]
    assert (violation.name, violation.length) == ("FetchExposesOnlyLeaderRecords", 26)
    assert labels(model, violation.trace) == EXPOSED
    before, after = violation.trace[-2][1], violation.trace[-1][1]
    # broker 0's record of epoch 0 now lies below its high watermark; broker 1's log holds epoch 1 there
    assert (after[REPLICA_LOG][0][0], after[REPLICA_LOG][1][0]) == ((0,), (1,))
    assert (before[HIGH_WATERMARK][0][0], after[HIGH_WATERMARK][0][0]) == (0, 1)
    # the correct model's fetch there truncates instead, and leaves the high watermark alone
    correct = make_model(config("fetch")).FollowerFetches(before, 0, 0)
    assert (correct[REPLICA_LOG][0][0], correct[HIGH_WATERMARK][0][0]) == ((), 0)


#: KAFKA-6361's run: broker 1 leads epoch 0 and takes a record broker 0 has not fetched; a
#: preferred election gives the lead to broker 0, still in the ISR, which takes its own record at
#: offset 0 in epoch 1 and crashes; broker 1 leads epoch 2, and broker 0 comes back and fetches.
KEPT = [
    "BrokerStarts(b0)", "BrokerSendsRegistration(b0)", "BrokerStarts(b1)",
    "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
    "BrokerSendsRegistration(b1)", "ControllerHandlesRegistration(Register(b1, incarnation 1, dirs ['dir-1']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b1, incarnation 1, epoch 1))",
    "BrokerSendsHeartbeat(b1)", "ControllerHandlesHeartbeat(Heartbeat(b1, epoch 1, offline []))",
    "BrokerSendsHeartbeat(b0)", "ControllerCreatesPartition(p0)", "BrokerConsumesMetadata(b0, p0)",
    "BrokerConsumesMetadata(b1, p0)", "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
    "LeaderStartsEpoch(b1, p0)", "FollowerFetches(b0, p0)",
    "ControllerHandlesAlterPartition(AlterPartition(b1, epoch 1, p0, leader epoch 0, partition epoch 0, "
    "isr [b0 epoch 1, b1 epoch 1]))",
    "BrokerReceivesAlterPartitionResponse(AlterPartitionResponse(b1, epoch 1, p0, leader epoch 0, isr [0, 1], NONE))",
    "LeaderAppendsRecord(b1, p0)", "AdminElectsPreferredLeader(p0)", "LeaderStartsEpoch(b0, p0)",
    "LeaderAppendsRecord(b0, p0)", "BrokerCrashes(b0)", "BrokerStarts(b0)", "BrokerSendsRegistration(b0)",
    "ControllerHandlesRegistrationAfterSessionTimeout(Register(b0, incarnation 2, dirs ['dir-0']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 2))",
    "LeaderStartsEpoch(b1, p0)", "FollowerFetches(b0, p0)",
]


@pytest.mark.slow  # a search of 141,690 states, shared with tests/test_kafka_model.py's
def test_a_single_truncation_keeps_a_record_its_leader_never_had(tmp_path_factory):
    """KAFKA-6361: the leader answers broker 0's epoch 1 with its epoch 0, ending at offset 1;
    truncating once to the lesser of that and its own end, 1, keeps broker 0's record of epoch 1
    at offset 0, and the fetch from offset 1 gives it the leader's high watermark, 1, over it."""
    from tests.trace_helpers import mutant_search

    verdict, violations, states = mutant_search(tmp_path_factory, "single_truncation")
    assert (verdict, states) == ("violation", 141690)
    name, length, trace = violations[0]
    assert (name, length) == ("FetchExposesOnlyLeaderRecords", 31)
    model = make_model(dict(config("fetchprogress"), mutant="single_truncation"))
    assert labels(model, trace) == KEPT
    before, after = trace[-2][1], trace[-1][1]
    assert (after[REPLICA_LOG][0][0], after[REPLICA_LOG][1][0]) == ((1,), (0,))
    assert (before[HIGH_WATERMARK][0][0], after[HIGH_WATERMARK][0][0]) == (0, 1)
    # KIP-279's truncation: broker 0 has no epoch 0 past offset 0, so it truncates to 0 and reads again
    correct = make_model(config("fetchprogress")).FollowerFetches(before, 0, 0)
    assert (correct[REPLICA_LOG][0][0], correct[HIGH_WATERMARK][0][0]) == ((), 0)
