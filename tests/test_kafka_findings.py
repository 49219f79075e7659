"""Findings: invariants that Kafka's controller code breaks where the KIP's reading keeps them.

Each finding is written up in spec/README.md ("Findings"), its traces checked in under
spec/findings/; these tests hold it to its exact figures.  ``python -m tests.test_kafka_findings``
writes the checked-in traces again.  Findings 1 and 2 live on spec/configs/heartbeat.toml and
are reported together past the first violation (``kraftcheck check --continue``); finding 3 on
spec/configs/restart.toml, finding 4 on spec/configs/oldmetadata.toml, finding 7 on
spec/configs/disklost.toml (with the data plane; it breaks CommittedRecordsSurvive under both
readings: KIP-858's rules without ELR keep a broker that lost its log electable).

1. One heartbeat that unfences and reports a failed directory: ``processBrokerHeartbeat``
   computes all its records from the image the heartbeat found, ``handleBrokerUnfenced``'s
   elections first, ``handleDirectoriesOffline`` after.  The elections still see the failed
   directory online, so a leaderless partition whose only ISR replica is there gets that
   replica as leader, and the directory's own records, computed from the same image, find
   nothing to undo (LeaderOnOnlineDir, IsrOnOnlineDirs).
2. A broker asks to be unfenced once it has caught up with the metadata, whether or not a
   replica of it is still UNASSIGNED (KIP-858 keeps it fenced until none is): FencedUntilAssigned,
   and after a restart, a leader on a directory whose failure was acknowledged
   (AcknowledgedFailureLeadsNothing).
3. A new incarnation registers after its old session has timed out but before the controller
   has fenced it: ``registerBroker`` writes a fenced registration and nothing else (no unclean
   shutdown handling without ELR), so the fenced broker keeps leading what it led, on a disk that
   may be gone (FencedBrokerLeadsNothing, LeaderOnOnlineDir).
4. Below metadata version 3.7-IV2 a broker with two directories runs (the validator's fault is
   not fatal); its directory failure is acknowledged by the heartbeat response and never
   handled by the controller (AcknowledgedFailureLeadsNothing).
"""

from __future__ import annotations

import importlib.resources
import json
import os
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

from kraftcheck.checker.bfs import explore
from kraftcheck.model import make_model
from kraftcheck.model.state import ASSIGN, KNOWN_EPOCH, NETWORK, RUNNING, STATUS
from kraftcheck.model.uuids import LOST
from kraftcheck.traces.counterexample import counterexample_document
from tests.trace_helpers import config_search

SPEC = Path(importlib.resources.files("kraftcheck.spec"))
REPO = Path(__file__).resolve().parent.parent
FINDINGS = SPEC / "findings"


def settings(config: str = "heartbeat", **overrides) -> dict:
    return dict(tomllib.loads((SPEC / "configs" / f"{config}.toml").read_text())["model"], **overrides)


@cache
def check(keep_going: bool = True, config: str = "heartbeat", **overrides):
    if keep_going:  # the whole state space: the search other tests of the run read too, made once
        return config_search(config, keep_going=True, **overrides)
    return explore(make_model(settings(config, **overrides)), check_deadlock=False, stop_on_violation=not keep_going)


class OnlyLiveHeartbeats:
    """The model, with a heartbeat delivered only while the incarnation that sent it is running:
    no heartbeat outlives its broker's process (a network that delays one past the broker's
    process remains possible, and is in some shortest traces).  ``session_timeouts=False`` also
    leaves out registrations accepted in the window between a session's timeout and its fencing
    (finding 3), to show findings 1 and 2 without it."""

    def __init__(self, model, session_timeouts: bool = True):
        self.model = model
        self.invariants = model.invariants
        self.action_invariants = model.action_invariants
        self.actions = model.actions
        self.session_timeouts = session_timeouts

    def init_states(self):
        return self.model.init_states()

    def successors(self, s):
        def kept(action):
            if action[0] in ("ControllerHandlesHeartbeat", "ControllerTimesOutHeartbeat"):
                b, epoch = action[1][1], action[1][2]
                return s[STATUS][b] == RUNNING and s[KNOWN_EPOCH][b] == epoch
            return self.session_timeouts or action[0] != "ControllerHandlesRegistrationAfterSessionTimeout"

        return [(action, t) for action, t in self.model.successors(s) if kept(action)]


@cache
def after_restart(semantics: str = "code"):
    model = make_model(settings(restarts=1, semantics=semantics))
    return model, explore(OnlyLiveHeartbeats(model, session_timeouts=False), check_deadlock=False, stop_on_violation=False)


#: restart.toml's bounds with a directory failure: the disk may also be replaced (finding 3's
#: second trace, finding 5)
RESTART_WITH_A_FAILURE = {"dir_failures": 1}


@cache
def restart_race():
    model = make_model(settings("restart", **RESTART_WITH_A_FAILURE))
    return model, explore(OnlyLiveHeartbeats(model), check_deadlock=False, stop_on_violation=False)


#: heartbeat.toml with a restart and no directory failure, and the progress properties: finding 11
STALE_REGISTRATION = {"restarts": 1, "dir_failures": 0, "progress": True}


@cache
def stale_registration(**overrides):
    """The search and its liveness phase (as ``kraftcheck check --continue``)."""
    from types import SimpleNamespace

    from kraftcheck.checker.check import check_temporal, liveness_properties

    model = make_model(settings(**STALE_REGISTRATION, **overrides))
    result = explore(model, check_deadlock=False, stop_on_violation=False)
    check_temporal(model, result, liveness_properties(SimpleNamespace(no_liveness=False, engine="local"), model),
                   after_violations=True)
    return model, result


def violation(result, name):
    return next(v for v in result.violations if v.name == name)


#: How every trace below begins: broker 0 starts, registers and is unfenced by its first heartbeat.
REGISTERED_AND_UNFENCED = [
    "BrokerStarts(b0)",
    "BrokerSendsRegistration(b0)",
    "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
    "BrokerSendsHeartbeat(b0)",
    "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
]


def labels(model, trace) -> list[str]:
    return [model.describe_action(action) for action, _ in trace[1:]]


def test_both_findings_past_the_first_violation():
    result = check()
    assert result.exit_code == 12
    assert [(v.name, v.length) for v in result.violations] == [
        ("LeaderOnOnlineDir", 16), ("IsrOnOnlineDirs", 16), ("FencedUntilAssigned", 12)]
    assert (result.distinct_states, result.generated_states, result.depth) == (657, 1415, 22)


def test_the_first_violation_is_the_unassigned_unfencing():
    result = check(keep_going=False)
    assert [(v.name, v.kind, v.length) for v in result.violations] == [("FencedUntilAssigned", "action", 12)]
    assert result.exit_code == 13


def test_finding_1_shortest_trace_unfences_onto_the_failed_directory():
    model = make_model(settings())
    trace = violation(check(), "LeaderOnOnlineDir").trace
    assert labels(model, trace) == [
        *REGISTERED_AND_UNFENCED,
        "ControllerCreatesPartition(p0)",
        "BrokerConsumesMetadata(b0, p0)",
        "BrokerFailsDir(b0, slot 0)",
        "BrokerSendsHeartbeat(b0)",
        "BrokerSendsAssignment(b0, p0)",
        "BrokerCrashes(b0)",
        "ControllerFencesExpiredBroker(b0)",
        "ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 1, p0 -> dir-0))",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline ['dir-0']))",
    ]
    before, after = (model.describe(state) for _, state in trace[-2:])
    assert before["partition"] == [{"leader": -1, "isr": [0], "dirs": ["dir-0"], "leaderEpoch": 1, "partitionEpoch": 2}]
    assert (before["fenced"], before["onlineDirs"]) == ([True], [["dir-0", "dir-1"]])
    # unfenced and elected on dir-0 by the heartbeat that takes dir-0 offline
    assert after["partition"] == [{"leader": 0, "isr": [0], "dirs": ["dir-0"], "leaderEpoch": 2, "partitionEpoch": 3}]
    assert (after["fenced"], after["onlineDirs"]) == ([False], [["dir-1"]])


def test_finding_2_shortest_trace_unfences_with_a_replica_unassigned():
    model = make_model(settings())
    trace = violation(check(), "FencedUntilAssigned").trace
    assert labels(model, trace) == [
        *REGISTERED_AND_UNFENCED,
        "BrokerSendsHeartbeat(b0)",
        "BrokerCrashes(b0)",
        "ControllerCreatesPartition(p0)",
        "ControllerFencesExpiredBroker(b0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
    ]
    before, after = (model.describe(state) for _, state in trace[-2:])
    assert (before["fenced"], after["fenced"]) == ([True], [False])
    assert after["partition"] == [{"leader": 0, "isr": [0], "dirs": ["UNASSIGNED"], "leaderEpoch": 2, "partitionEpoch": 2}]


def test_the_kips_reading_keeps_every_invariant_on_the_same_config():
    result = check(semantics="kip")
    assert result.verdict == "ok"
    assert (result.distinct_states, result.generated_states, result.depth) == (579, 1089, 22)


def test_the_kips_reading_leaves_the_partition_leaderless_at_the_same_heartbeat():
    code, kip = make_model(settings()), make_model(settings(semantics="kip"))
    trace = violation(check(), "LeaderOnOnlineDir").trace
    before, (action, after_code) = trace[-2][1], trace[-1]
    after_kip = kip.ControllerHandlesHeartbeat(before, action[1])
    assert code.ControllerHandlesHeartbeat(before, action[1]) == after_code
    assert kip.describe(after_kip)["partition"] == [
        {"leader": -1, "isr": [0], "dirs": ["dir-0"], "leaderEpoch": 1, "partitionEpoch": 2}]
    assert all(holds(after_kip) for holds in kip.invariants.values())


#: Broker 0 restarts: the old session expires and is fenced, the new incarnation registers.
RESTARTED = [
    "BrokerCrashes(b0)",
    "BrokerStarts(b0)",
    "BrokerSendsRegistration(b0)",
    "ControllerCreatesPartition(p0)",
    "ControllerFencesExpiredBroker(b0)",
    "ControllerHandlesRegistration(Register(b0, incarnation 2, dirs ['dir-0', 'dir-1']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 2))",
]


def test_after_a_restart_with_no_heartbeat_outliving_its_broker():
    model, result = after_restart()
    assert [(v.name, v.length) for v in result.violations] == [
        ("LeaderOnOnlineDir", 20), ("IsrOnOnlineDirs", 20), ("ElectedWhenPossible", 23),
        ("AcknowledgedFailureLeadsNothing", 19), ("FencedUntilAssigned", 16)]
    assert labels(model, violation(result, "LeaderOnOnlineDir").trace) == [
        *REGISTERED_AND_UNFENCED,
        *RESTARTED,
        "BrokerConsumesMetadata(b0, p0)",
        "BrokerFailsDir(b0, slot 0)",
        "BrokerSendsHeartbeat(b0)",
        "BrokerSendsAssignment(b0, p0)",
        "ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 2, p0 -> dir-0))",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 2, offline ['dir-0']))",
    ]
    assert labels(model, violation(result, "FencedUntilAssigned").trace) == [
        *REGISTERED_AND_UNFENCED,
        *RESTARTED,
        "BrokerSendsHeartbeat(b0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 2, offline []))",
    ]
    # Finding 2's consequence: unfenced with p0 UNASSIGNED, broker 0 is elected leader of a replica
    # whose log is on dir-0, a failure the controller has just acknowledged.
    assert labels(model, violation(result, "AcknowledgedFailureLeadsNothing").trace) == [
        *REGISTERED_AND_UNFENCED,
        "ControllerCreatesPartition(p0)",
        "BrokerConsumesMetadata(b0, p0)",
        "BrokerCrashes(b0)",
        "BrokerStarts(b0)",
        "BrokerSendsRegistration(b0)",
        "BrokerFailsDir(b0, slot 0)",
        "ControllerFencesExpiredBroker(b0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 2, dirs ['dir-0', 'dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 2))",
        "BrokerSendsHeartbeat(b0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 2, offline ['dir-0']))",
        "BrokerReceivesHeartbeatResponse(HeartbeatResponse(b0, epoch 2, offline ['dir-0']))",
    ]
    _, kip = after_restart("kip")
    assert kip.verdict == "ok" and (kip.distinct_states, kip.depth) == (6698, 31)


# -- Finding 3: a registration in the window between a session's timeout and its fencing --------

#: Both brokers register, broker 0 is unfenced by its first heartbeat, broker 1 stays fenced.
TWO_REGISTERED = [
    "BrokerStarts(b0)",
    "BrokerSendsRegistration(b0)",
    "BrokerStarts(b1)",
    "BrokerSendsRegistration(b1)",
    "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0']))",
    "ControllerHandlesRegistration(Register(b1, incarnation 1, dirs ['dir-1']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
    "BrokerSendsHeartbeat(b0)",
    "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
]


#: Broker 0's only disk fails (it stops) and comes back replaced; p0 is created on it meanwhile.
DISK_REPLACED = [
    "BrokerFailsDir(b0, slot 0)",
    "BrokerStarts(b0, slot 0 replaced)",
    "BrokerSendsRegistration(b0)",
    "ControllerCreatesPartition(p0)",
]


def test_finding_3_the_config_stops_at_the_restart_race():
    result = check(keep_going=False, config="restart")
    assert [(v.name, v.kind, v.length) for v in result.violations] == [("FencedBrokerLeadsNothing", "invariant", 15)]
    assert result.exit_code == 12
    result = check(config="restart")
    assert [(v.name, v.length) for v in result.violations] == [("FencedBrokerLeadsNothing", 15)]
    assert (result.distinct_states, result.generated_states, result.depth) == (24889, 102379, 36)
    # with the disk replaceable too (every heartbeat, the window included)
    result = check(config="restart", **RESTART_WITH_A_FAILURE)
    assert [(v.name, v.length) for v in result.violations] == [
        ("LeaderOnOnlineDir", 15), ("FencedBrokerLeadsNothing", 15), ("IsrOnOnlineDirs", 15),
        ("ElectedWhenPossible", 21)]
    assert (result.distinct_states, result.generated_states, result.depth) == (112915, 469641, 39)


def test_finding_3_a_new_incarnation_registers_before_the_old_one_is_fenced():
    model, result = restart_race()
    assert [(v.name, v.length) for v in result.violations] == [
        ("LeaderOnOnlineDir", 15), ("FencedBrokerLeadsNothing", 15), ("IsrOnOnlineDirs", 15),
        ("ElectedWhenPossible", 21)]
    trace = violation(result, "FencedBrokerLeadsNothing").trace
    assert labels(model, trace) == [
        *TWO_REGISTERED,
        "BrokerCrashes(b0)",
        "BrokerStarts(b0)",
        "BrokerSendsRegistration(b0)",
        "ControllerCreatesPartition(p0)",
        "ControllerHandlesRegistrationAfterSessionTimeout(Register(b0, incarnation 2, dirs ['dir-0']))",
    ]
    before, after = (model.describe(state) for _, state in trace[-2:])
    assert (before["fenced"], before["brokerEpoch"], before["registeredIncarnation"]) == ([False, True], [1, 1], [1, 1])
    # RegisterBrokerRecord fences broker 0 under its new epoch; no PartitionChangeRecord moves p0
    assert (after["fenced"], after["brokerEpoch"], after["registeredIncarnation"]) == ([True, True], [2, 1], [2, 1])
    assert after["partition"] == before["partition"] == [
        {"leader": 0, "isr": [0], "dirs": ["dir-0", "dir-1"], "leaderEpoch": 0, "partitionEpoch": 0}]


def test_finding_3_with_a_replaced_disk_the_leader_has_no_log():
    model, result = restart_race()
    trace = violation(result, "LeaderOnOnlineDir").trace
    assert labels(model, trace) == [
        *TWO_REGISTERED,
        *DISK_REPLACED,
        "ControllerHandlesRegistrationAfterSessionTimeout(Register(b0, incarnation 2, dirs ['dir-2']))",
    ]
    after = model.describe(trace[-1][1])
    assert after["onlineDirs"] == [["dir-2"], ["dir-1"]]
    assert after["partition"][0]["leader"] == 0 and after["partition"][0]["dirs"] == ["dir-0", "dir-1"]


@cache
def restart_without_the_window():
    model = make_model(settings("restart", **RESTART_WITH_A_FAILURE))
    return model, explore(OnlyLiveHeartbeats(model, session_timeouts=False), check_deadlock=False, stop_on_violation=False)


def test_finding_3_is_the_window_not_the_restart():
    """Without registrations in the window (the controller fences the old session first) only
    finding 5 is left on the same config; under the KIP's reading every invariant holds."""
    _, result = restart_without_the_window()
    assert [(v.name, v.length) for v in result.violations] == [("ElectedWhenPossible", 22)]
    kip = check(config="restart", semantics="kip", **RESTART_WITH_A_FAILURE)
    assert kip.verdict == "ok" and (kip.distinct_states, kip.generated_states, kip.depth) == (69677, 238521, 38)
    kip = check(config="restart", semantics="kip")
    assert kip.verdict == "ok" and (kip.distinct_states, kip.generated_states, kip.depth) == (15729, 53407, 35)


# -- Finding 5: an assignment judged on the directory the replica had -----------------------------

#: A new incarnation on a replaced disk registers, is unfenced, recreates its replica and assigns
#: it to the new directory (findings 5 and 7).
REREGISTERED_AND_ASSIGNED = [
    "ControllerHandlesRegistration(Register(b0, incarnation 2, dirs ['dir-2']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 2))",
    "BrokerSendsHeartbeat(b0)",
    "BrokerConsumesMetadata(b0, p0)",
    "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 2, offline []))",
    "BrokerSendsAssignment(b0, p0)",
    "ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 2, p0 -> dir-2))",
]

def test_finding_5_an_assignment_to_an_online_directory_leaves_the_partition_leaderless():
    model, result = restart_without_the_window()
    trace = violation(result, "ElectedWhenPossible").trace
    assert labels(model, trace) == [
        *TWO_REGISTERED,
        *DISK_REPLACED,
        "ControllerFencesExpiredBroker(b0)",
        *REREGISTERED_AND_ASSIGNED,
    ]
    before, after = trace[-2][1], trace[-1][1]
    assert model.describe(before)["partition"] == [
        {"leader": -1, "isr": [0], "dirs": ["dir-0", "dir-1"], "leaderEpoch": 1, "partitionEpoch": 1}]
    # one record: the directory set, no election (broker 0 judged on dir-0, no longer registered)
    assert model.describe(after)["partition"] == [
        {"leader": -1, "isr": [0], "dirs": ["dir-2", "dir-1"], "leaderEpoch": 1, "partitionEpoch": 2}]
    assert model.describe(after)["fenced"] == [False, True] and model.describe(after)["logs"] == [[[0]], [[]]]
    # The KIP's reading judges broker 0 on dir-2 and elects it: a replica created empty on the new disk.
    kip = make_model(settings("restart", semantics="kip", **RESTART_WITH_A_FAILURE))
    elected = kip.ControllerHandlesAssignment(before, trace[-1][0][1])
    assert kip.describe(elected)["partition"][0]["leader"] == 0
    # Kafka elects it too, at the next unfencing of any broker (handleBrokerUnfenced judges the
    # replica on the directories the partition has then).
    unfenced_b1 = model.replay(after, model._unfence_records(after, 1))
    assert model.describe(unfenced_b1)["partition"][0]["leader"] == 0


def test_finding_5_a_two_record_assignment_raises_the_partition_epoch_by_two():
    """handleAssignReplicasToDirs to a directory not online: the directory record, then the
    broker taken out, both computed from the image: two PartitionChangeRecords."""
    model, result = restart_race()
    state = violation(result, "FencedBrokerLeadsNothing").trace[-1][1]  # broker 0 leads p0 on dir-0
    view = model.describe(state)["partition"][0]
    assert (view["leader"], view["partitionEpoch"]) == (0, 0)
    lost = (ASSIGN, 0, 2, 0, LOST)
    after = model.ControllerHandlesAssignment(state[:NETWORK] + ((lost,),) + state[NETWORK + 1:], lost)
    # each record sets the leader (none): the leader epoch goes up twice too
    assert model.describe(after)["partition"][0] == {
        "leader": -1, "isr": [0], "dirs": ["LOST", "dir-1"], "leaderEpoch": 2, "partitionEpoch": 2}
    kip = make_model(settings("restart", semantics="kip", **RESTART_WITH_A_FAILURE))
    after = kip.ControllerHandlesAssignment(state[:NETWORK] + ((lost,),) + state[NETWORK + 1:], lost)
    assert kip.describe(after)["partition"][0] == {
        "leader": -1, "isr": [0], "dirs": ["LOST", "dir-1"], "leaderEpoch": 1, "partitionEpoch": 1}


# -- Finding 4: several log directories below 3.7-IV2 ---------------------------------------------

ASSIGNED_TO_LOST = [
    "BrokerStarts(b0)", "BrokerSendsRegistration(b0)",
    "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))", "BrokerSendsHeartbeat(b0)",
    "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))", "ControllerCreatesPartition(p0)",
    "BrokerConsumesMetadata(b0, p0)", "BrokerSendsAssignment(b0, p0)",
    "ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 1, p0 -> dir-0))",
    "BrokerReceivesAssignmentResponse(AssignReplicasToDirsResponse(b0, epoch 1, p0 -> dir-0, ok))",
    "BrokerStartsMove(b0, p0, slot 1)", "BrokerFutureCaughtUp(b0, p0)", "BrokerSendsAssignment(b0, p0)",
    "BrokerFailsDir(b0, slot 0)", "BrokerSendsHeartbeat(b0)",
    "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline ['dir-0']))",
    "ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 1, p0 -> dir-1))",
    "BrokerReceivesAssignmentResponse(AssignReplicasToDirsResponse(b0, epoch 1, p0 -> dir-1, ok))",
    "BrokerSendsAssignment(b0, p0)",
    "ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 1, p0 -> LOST))",
]


def test_finding_6_an_assignment_to_lost_elects_its_broker_on_the_lost_directory():
    """After finding 5's assignment left p0 leaderless with broker 0 acceptable, the next
    assignment, to LOST, elects broker 0 in its first record (judged on dir-1) and the second
    record, from the same image, leaves the leader alone: broker 0 leads p0 on LOST."""
    r = induction_run("ControllerHandlesAssignment", "LeaderOnOnlineDir")
    model = r.model
    steps = list(r.run) + [(r.action, r.post)]
    assert (r.config, r.depth, len(steps)) == ("1 broker × 2 dirs", 20, 22)
    assert [model.describe_action(a) for a, _ in steps[1:]] == ASSIGNED_TO_LOST
    assert not model.ElectedWhenPossible(r.pre) and model.LeaderOnOnlineDir(r.pre)
    assert model.describe(r.pre)["partition"][0]["leader"] == -1
    after = model.describe(r.post)["partition"][0]
    assert (after["leader"], after["isr"], after["dirs"]) == (0, [0], ["LOST"])
    assert not model.LeaderOnOnlineDir(r.post)
    # under the KIP's reading the assignment step keeps LeaderOnOnlineDir inductively
    from kraftcheck.proofs.induction import check_induction

    assert {(c.action, c.prop): c.result for c in check_induction(1, 2, semantics="kip")}[
        "ControllerHandlesAssignment", "LeaderOnOnlineDir"] == "proven"


def test_finding_4_a_failure_below_3_7_iv2_is_acknowledged_and_never_handled():
    model = make_model(settings("oldmetadata"))
    result = check(config="oldmetadata")
    assert [(v.name, v.length) for v in result.violations] == [("AcknowledgedFailureLeadsNothing", 13)]
    assert (result.distinct_states, result.generated_states, result.depth) == (236, 506, 19)
    # upgraded during the run, findings 1 and 2 show too
    upgraded = check(config="oldmetadata", metadata_upgrade=True)
    assert [(v.name, v.length) for v in upgraded.violations] == [
        ("LeaderOnOnlineDir", 17), ("IsrOnOnlineDirs", 17), ("AcknowledgedFailureLeadsNothing", 13),
        ("FencedUntilAssigned", 13)]
    assert (upgraded.distinct_states, upgraded.generated_states, upgraded.depth) == (3275, 8536, 26)
    trace = violation(result, "AcknowledgedFailureLeadsNothing").trace
    assert labels(model, trace) == [
        *REGISTERED_AND_UNFENCED,
        "ControllerCreatesPartition(p0)",
        "BrokerConsumesMetadata(b0, p0)",
        "BrokerFailsDir(b0, slot 0)",
        "BrokerSendsHeartbeat(b0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline ['dir-0']))",
        "BrokerReceivesHeartbeatResponse(HeartbeatResponse(b0, epoch 1, offline ['dir-0']))",
    ]
    after = model.describe(trace[-1][1])
    assert (after["metadataVersion"], after["onlineDirs"], after["dirState"]) == (
        "3.6-IV2", [[]], [["FAILED_ACKED", "HEALTHY"]])
    assert after["partition"] == [{"leader": 0, "isr": [0], "dirs": ["MIGRATING"], "leaderEpoch": 0, "partitionEpoch": 0}]
    assert after["logs"] == [[[0], []]]


def test_finding_4_under_the_kips_reading_the_broker_waits_for_the_upgrade():
    kip = check(config="oldmetadata", semantics="kip")
    assert kip.verdict == "ok" and (kip.distinct_states, kip.generated_states, kip.depth) == (1, 1, 1)
    kip = check(config="oldmetadata", semantics="kip", metadata_upgrade=True)
    assert kip.verdict == "ok" and (kip.distinct_states, kip.generated_states, kip.depth) == (580, 1090, 23)
    first = make_model(settings("oldmetadata", semantics="kip", metadata_upgrade=True))
    (_, start), = [(a, t) for a, t in first.successors(next(first.init_states())) if a[0] == "AdminUpgradesMetadataVersion"]
    assert [a[0] for a, _ in first.successors(next(first.init_states()))] == ["AdminUpgradesMetadataVersion"]
    assert [a[0] for a, _ in first.successors(start)][0] == "BrokerStarts"


#: Finding 7's runs share their start: broker 1 is fenced when partition 0 is created on broker 0
#: alone; broker 0 writes a record, acknowledged (ISR [0]); broker 1 fetches it; broker 0's only
#: disk fails and is replaced, and its new incarnation registers.
DISK_LOST_START = [
    "BrokerStarts(b0)",
    "BrokerSendsRegistration(b0)",
    "BrokerStarts(b1)",
    "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
    "BrokerSendsHeartbeat(b0)",
    "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
    "BrokerSendsRegistration(b1)",
    "ControllerHandlesRegistration(Register(b1, incarnation 1, dirs ['dir-1']))",
    "ControllerCreatesPartition(p0)",
    "BrokerConsumesMetadata(b0, p0)",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b1, incarnation 1, epoch 1))",
    "BrokerConsumesMetadata(b1, p0)",
    "LeaderAppendsRecord(b0, p0)",
    "FollowerFetches(b1, p0)",
    "BrokerFailsDir(b0, slot 0)",
    "BrokerStarts(b0, slot 0 replaced)",
    "BrokerSendsRegistration(b0)",
]


def test_finding_7_under_the_code_the_fenced_leader_leads_its_recreated_empty_replica():
    """Finding 3's window with a replaced disk: the new incarnation registers before the old
    session is fenced and stays leader; it recreates its replica, empty, and leads it, so the
    record broker 1 holds is no longer in the leader's log (and broker 1, fetching, would
    truncate it).  No declared loss gave the record up: LossesDeclared breaks.  (A replaced
    disk that took a record's only copy, broker 1 not having fetched it, is a declared loss:
    CommittedRecordsSurvive and IsrHoldsCommittedRecords count it, in 20 states.)"""
    model = make_model(settings("disklost"))
    result = check(config="disklost")
    assert [(v.name, v.length) for v in result.violations] == [
        ("LeaderOnOnlineDir", 16), ("FencedBrokerLeadsNothing", 16), ("IsrOnOnlineDirs", 16),
        ("ElectedWhenPossible", 22), ("CommittedRecordsSurvive", 20), ("IsrHoldsCommittedRecords", 20),
        ("LossesDeclared", 22)]
    assert (result.distinct_states, result.generated_states, result.depth) == (236101, 711755, 49)
    declared = model.describe(violation(result, "CommittedRecordsSurvive").trace[-1][1])
    assert declared["acked"] == [[{"offset": 0, "leaderEpoch": 0, "leader": 0,
                                   "lostBy": {"replacedDisk": {"broker": 0, "incarnation": 2}}}]]
    trace = violation(result, "LossesDeclared").trace
    assert labels(model, trace) == [
        *DISK_LOST_START,
        "ControllerHandlesRegistrationAfterSessionTimeout(Register(b0, incarnation 2, dirs ['dir-2']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 2))",
        "BrokerConsumesMetadata(b0, p0)",
    ]
    after = model.describe(trace[-1][1])
    assert after["partition"][0]["leader"] == 0 and after["fenced"] == [True, True]
    assert after["replicaLog"] == [[[]], [[0]]]
    assert after["acked"] == [[{"offset": 0, "leaderEpoch": 0, "leader": 0, "lostBy": "kept"}]]


def test_finding_7_under_the_kips_reading_the_last_isr_member_is_elected_empty():
    """The registration takes broker 0's leadership away but keeps it as the ISR's last member;
    once its recreated replica is assigned, the election picks it: clean, and empty."""
    model = make_model(settings("disklost", semantics="kip"))
    result = check(config="disklost", semantics="kip")
    assert [(v.name, v.length) for v in result.violations] == [
        ("IsrOnOnlineDirs", 24), ("CommittedRecordsSurvive", 24), ("IsrHoldsCommittedRecords", 20),
        ("LossesDeclared", 26)]
    assert (result.distinct_states, result.generated_states, result.depth) == (150091, 392234, 48)
    trace = violation(result, "LossesDeclared").trace
    assert labels(model, trace) == [
        *DISK_LOST_START,
        *REREGISTERED_AND_ASSIGNED,
    ]
    after = model.describe(trace[-1][1])["partition"][0]
    assert (after["leader"], after["isr"], after["dirs"], after["leaderEpoch"]) == (0, [0], ["dir-2", "dir-1"], 2)
    assert model.describe(trace[-1][1])["replicaLog"] == [[[]], [[0]]]


def test_finding_7_needs_the_records():
    """Without the data plane the same bounds show findings 3 and 5 and nothing about records."""
    result = check(config="disklost", records=0)
    assert [v.name for v in result.violations] == [
        "LeaderOnOnlineDir", "FencedBrokerLeadsNothing", "IsrOnOnlineDirs", "ElectedWhenPossible"]


@pytest.mark.slow  # over 30 s: left to CI and `make test-all`
def test_finding_8_with_elr_the_last_known_leader_is_elected_unclean_with_unclean_elections_off():
    """Broker 0, the ISR's only member, restarts in finding 3's window: with ELR the registration
    is an unclean shutdown (ISR and ELR empty, broker 0 the last known leader); its unfencing
    elects it again, as the last known leader: unclean, RECOVERING, with unclean elections off."""
    model = make_model(settings("elr"))
    result = check(config="elr")
    assert [(v.name, v.length) for v in result.violations] == [
        ("IsrOnOnlineDirs", 24), ("ElectedWhenPossible", 29), ("CommittedRecordsSurvive", 31),
        ("IsrHoldsCommittedRecords", 31), ("CleanLeaderFromIsrOrElr", 19), ("ElrLeftOnlyForCause", 22)]
    assert (result.distinct_states, result.generated_states, result.depth) == (199651, 541133, 51)
    trace = violation(result, "CleanLeaderFromIsrOrElr").trace
    assert labels(model, trace)[-4:] == [
        "ControllerHandlesRegistrationAfterSessionTimeout(Register(b0, incarnation 2, dirs ['dir-0']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 2))",
        "BrokerSendsHeartbeat(b0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 2, offline []))",
    ]
    before, after = (model.describe(trace[i][1])["partition"][0] for i in (-2, -1))
    assert (before["leader"], before["isr"], before["elr"], before["lastKnownElr"]) == (-1, [], [], [0])
    assert (after["leader"], after["isr"], after["lastKnownElr"], after["leaderRecoveryState"]) == (0, [0], [], "RECOVERING")
    # with the topic's unclean.leader.election.enable, that election is one the settings allow
    assert "CleanLeaderFromIsrOrElr" not in {v.name for v in check(config="elr", unclean_election="topic").violations}


def test_finding_9_an_assignment_clears_the_elr():
    """handleAssignReplicasToDirs' builder leaves ELR off, so its record clears the partition's
    ELR: broker 1, fenced and the only eligible replica, is no longer one."""
    model = make_model(settings("elr"))
    trace = violation(check(config="elr"), "ElrLeftOnlyForCause").trace
    assert labels(model, trace)[-1] == "ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 2, p0 -> dir-2))"
    before, after = (model.describe(trace[i][1])["partition"][0] for i in (-2, -1))
    assert (before["leader"], before["isr"], before["elr"]) == (-1, [], [1])
    assert (after["leader"], after["isr"], after["elr"], after["dirs"]) == (-1, [], [], ["dir-2", "dir-1"])


def test_findings_8_and_9_give_up_a_record_an_eligible_replica_holds():
    """Both brokers hold the record; broker 0 crashes and is fenced (ELR [0]); broker 1's disk is
    replaced and its new incarnation registers (out of the ISR, the last known leader); its
    assignment clears the ELR (finding 9), and its unfencing elects it as the last known leader
    (finding 8), empty: the record is given up while broker 0, which holds it, was eligible.
    The reference keeps it, marked with that election: CommittedRecordsSurvive counts it lost,
    and the loss is a declared one (LossesDeclared holds)."""
    model = make_model(settings("elr"))
    result = check(config="elr")
    assert "LossesDeclared" not in {v.name for v in result.violations}
    trace = violation(result, "CommittedRecordsSurvive").trace
    assert len(trace) == 31 and len(violation(result, "IsrHoldsCommittedRecords").trace) == 31
    assert labels(model, trace)[-13:] == [
        "BrokerCrashes(b0)",
        "ControllerFencesExpiredBroker(b0)",
        "BrokerFailsDir(b1, slot 0)",
        "BrokerStarts(b1, slot 0 replaced)",
        "BrokerSendsRegistration(b1)",
        "ControllerHandlesRegistrationAfterSessionTimeout(Register(b1, incarnation 2, dirs ['dir-2']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b1, incarnation 2, epoch 2))",
        "BrokerConsumesMetadata(b1, p0)",
        "BrokerSendsAssignment(b1, p0)",
        "ControllerHandlesAssignment(AssignReplicasToDirs(b1, epoch 2, p0 -> dir-2))",
        "BrokerReceivesAssignmentResponse(AssignReplicasToDirsResponse(b1, epoch 2, p0 -> dir-2, ok))",
        "BrokerSendsHeartbeat(b1)",
        "ControllerHandlesHeartbeat(Heartbeat(b1, epoch 2, offline []))",
    ]
    after = model.describe(trace[-1][1])
    assert (after["partition"][0]["leader"], after["partition"][0]["leaderRecoveryState"]) == (1, "RECOVERING")
    assert after["replicaLog"] == [[[0]], [[]]]
    assert after["acked"] == [[{"offset": 0, "leaderEpoch": 0, "leader": 0,
                                "lostBy": {"election": {"leader": 1, "leaderEpoch": 3}}}]]


#: checked-in trace -> (the search it comes from, the property it breaks)
TRACES = {
    FINDINGS / "heartbeat_LeaderOnOnlineDir.itf.json": ("heartbeat", "LeaderOnOnlineDir"),
    FINDINGS / "heartbeat_FencedUntilAssigned.itf.json": ("heartbeat", "FencedUntilAssigned"),
    FINDINGS / "heartbeat_restart_LeaderOnOnlineDir.itf.json": ("heartbeat_restart", "LeaderOnOnlineDir"),
    FINDINGS / "heartbeat_restart_AcknowledgedFailureLeadsNothing.itf.json": (
        "heartbeat_restart", "AcknowledgedFailureLeadsNothing"),
    FINDINGS / "restart_FencedBrokerLeadsNothing.itf.json": ("restart", "FencedBrokerLeadsNothing"),
    FINDINGS / "restart_LeaderOnOnlineDir.itf.json": ("restart", "LeaderOnOnlineDir"),
    FINDINGS / "oldmetadata_AcknowledgedFailureLeadsNothing.itf.json": ("oldmetadata", "AcknowledgedFailureLeadsNothing"),
    FINDINGS / "restart_ElectedWhenPossible.itf.json": ("restart_fenced_first", "ElectedWhenPossible"),
    FINDINGS / "disklost_LossesDeclared.itf.json": ("disklost", "LossesDeclared"),
    FINDINGS / "disklost_kip_LossesDeclared.itf.json": ("disklost_kip", "LossesDeclared"),
    FINDINGS / "elr_CleanLeaderFromIsrOrElr.itf.json": ("elr", "CleanLeaderFromIsrOrElr"),
    FINDINGS / "elr_CommittedRecordsSurvive.itf.json": ("elr", "CommittedRecordsSurvive"),
    FINDINGS / "elr_ElrLeftOnlyForCause.itf.json": ("elr", "ElrLeftOnlyForCause"),
    FINDINGS / "recovery_RecoveryToolKeepsCommitted.itf.json": ("recovery", "RecoveryToolKeepsCommitted"),
    FINDINGS / "heartbeat_stale_registration_RunningBrokerUnfenced.itf.json": (
        "heartbeat_stale_registration", "RunningBrokerUnfenced"),
    FINDINGS / "cordonrestart_PlacementHonoursReportedCordons.itf.json": ("cordonrestart", "PlacementHonoursReportedCordons"),
}


def searches() -> dict[str, tuple]:
    """search -> (model, result, where its config comes from, its settings)."""
    heartbeat = "spec/configs/heartbeat.toml"
    model, restarted = after_restart()
    race_model, race = restart_race()
    fenced_first_model, fenced_first = restart_without_the_window()
    return {
        "heartbeat": (make_model(settings()), check(), heartbeat, settings()),
        "heartbeat_restart": (model, restarted, f"{heartbeat} --set restarts=1, heartbeats only from a running broker, "
                              "no registration between a session's timeout and its fencing", settings(restarts=1)),
        "restart": (race_model, race, "spec/configs/restart.toml --set dir_failures=1, heartbeats only from a "
                    "running broker", settings("restart", **RESTART_WITH_A_FAILURE)),
        "restart_fenced_first": (fenced_first_model, fenced_first, "spec/configs/restart.toml --set dir_failures=1, "
                                 "heartbeats only from a running broker, no registration between a session's "
                                 "timeout and its fencing", settings("restart", **RESTART_WITH_A_FAILURE)),
        "oldmetadata": (make_model(settings("oldmetadata")), check(config="oldmetadata"),
                        "spec/configs/oldmetadata.toml", settings("oldmetadata")),
        "disklost": (make_model(settings("disklost")), check(config="disklost"), "spec/configs/disklost.toml",
                     settings("disklost")),
        "disklost_kip": (make_model(settings("disklost", semantics="kip")), check(config="disklost", semantics="kip"),
                         "spec/configs/disklost.toml --set semantics=kip", settings("disklost", semantics="kip")),
        "elr": (make_model(settings("elr")), check(config="elr"), "spec/configs/elr.toml", settings("elr")),
        "recovery": (make_model(settings("recovery")), check(config="recovery"), "spec/configs/recovery.toml",
                     settings("recovery")),
        "heartbeat_stale_registration": (*stale_registration(), f"{heartbeat} --set restarts=1 --set dir_failures=0 "
                                         "--set progress=true --continue", settings(**STALE_REGISTRATION)),
        "cordonrestart": (make_model(settings("cordonrestart")), check(config="cordonrestart"),
                          "spec/configs/cordonrestart.toml", settings("cordonrestart")),
    }


def test_finding_11_a_crashed_incarnations_late_registration_leaves_the_running_one_fenced_for_ever():
    """Broker 0 sends its registration and crashes; its next incarnation registers (epoch 1) and
    then the first one's registration, late, is handled: the registered incarnation has no
    session (it has not heartbeated), so registerBroker takes it (epoch 2).  The running
    incarnation's heartbeats carry epoch 1 and are refused for ever; nothing makes it register
    again.  The KIP's reading (incarnation numbers, an older one dropped) holds the property;
    Kafka 4.4.0's rules break it the same way (of the safety findings, only finding 2's on the
    way: KAFKA-18106 takes the new incarnation out of what it led)."""
    model, result = stale_registration()
    assert (result.distinct_states, result.generated_states) == (1_005, 2_764)
    assert [(v.name, v.kind, v.length, v.loop) for v in result.violations] == [
        ("FencedBrokerLeadsNothing", "invariant", 12, None), ("FencedUntilAssigned", "action", 12, None),
        ("RunningBrokerUnfenced", "temporal", 12, 9)]
    lasso = violation(result, "RunningBrokerUnfenced")
    assert labels(model, lasso.trace) == [
        "BrokerStarts(b0)", "BrokerSendsRegistration(b0)", "BrokerCrashes(b0)", "BrokerStarts(b0)",
        "BrokerSendsRegistration(b0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 2, dirs ['dir-0', 'dir-1']))",
        "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 2))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 1))",
        # the loop, from state 10: a heartbeat of the epoch the controller has given away
        "BrokerSendsHeartbeat(b0)", "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))"]
    _, kip = stale_registration(semantics="kip")
    assert (kip.distinct_states, kip.liveness["properties"]["RunningBrokerUnfenced"]) == (427, "holds")
    release_model, release = stale_registration(kafka_version="4.4.0")
    assert [(v.name, v.length, v.loop) for v in release.violations] == [
        ("FencedUntilAssigned", 12, None), ("RunningBrokerUnfenced", 12, 9)]  # finding 2 on the way, not 3
    assert labels(release_model, violation(release, "RunningBrokerUnfenced").trace) == labels(model, lasso.trace)


#: the finding ``prove --induction``'s lookup found: checked-in trace -> (action, property)
INDUCTION_TRACES = {
    FINDINGS / "induction_assignment_LeaderOnOnlineDir.itf.json": ("ControllerHandlesAssignment", "LeaderOnOnlineDir"),
}


def induction_run(action: str, prop: str):
    """The shortest run the lookup of ``prove --induction`` finds for a step of ``action`` that
    breaks ``prop`` (code's semantics)."""
    from kraftcheck.proofs.induction import ACTIONS, PROPERTIES
    from kraftcheck.proofs.reach import look_up

    return look_up(next(a for a in ACTIONS if a.name == action), next(p for p in PROPERTIES if p.name == prop), "none")


def documents() -> dict[Path, dict]:
    """The checked-in traces as ``kraftcheck check --continue`` writes them (and as the
    lookup of ``prove --induction`` writes its runs)."""
    check_table = {"model": "kraftcheck.model:make_model", "deadlock": False}
    meta = {"model": "kraftcheck.model:make_model"}
    found = searches()
    documents = {}
    for path, (search, name) in TRACES.items():
        model, result, source, config = found[search]
        documents[path] = counterexample_document(model, violation(result, name), {
            **meta, "config": {**meta, "source": source, "check": check_table, "settings": config}})
    from kraftcheck.proofs.reach import run_document

    for path, (action, prop) in INDUCTION_TRACES.items():
        documents[path] = run_document(induction_run(action, prop), prop)
    return documents


@pytest.mark.slow  # over 30 s: left to CI and `make test-all`
def test_the_checked_in_traces_are_the_findings():
    for path, document in documents().items():
        assert json.loads(path.read_text()) == json.loads(json.dumps(document)), path.name


def test_the_checked_in_traces_replay():
    assert sorted(FINDINGS.glob("*.itf.json")) == sorted([*TRACES, *INDUCTION_TRACES])
    for path, (_, name) in [*TRACES.items(), *INDUCTION_TRACES.items()]:
        p = subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", "trace", "replay", str(path)],
                           capture_output=True, text=True, cwd=REPO, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
        assert p.returncode == 0, p.stdout + p.stderr
        assert name in p.stdout


if __name__ == "__main__":
    for path, document in documents().items():
        path.write_text(json.dumps(document, indent=1) + "\n")
        print(f"wrote {path}")
