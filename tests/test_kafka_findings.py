"""Findings: invariants that Kafka's controller code breaks where the KIP's reading keeps them.

Each finding is written up in spec/README.md ("Findings"), its traces checked in under
spec/findings/; these tests hold it to its exact figures.  ``python -m tests.test_kafka_findings``
writes the checked-in traces again.  Both findings live on spec/configs/heartbeat.toml and are
reported together past the first violation (``kraftcheck check --continue``).

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
"""

from __future__ import annotations

import importlib.resources
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from kraftcheck.checker.bfs import explore
from kraftcheck.model import make_model
from kraftcheck.model.kraft import INCARNATION, RUNNING, STATUS
from kraftcheck.traces.counterexample import counterexample_document

SPEC = Path(importlib.resources.files("kraftcheck.spec"))
REPO = Path(__file__).resolve().parent.parent
FINDINGS = SPEC / "findings"


def settings(**overrides) -> dict:
    return dict(tomllib.loads((SPEC / "configs" / "heartbeat.toml").read_text())["model"], **overrides)


def check(keep_going: bool = True, **overrides):
    return explore(make_model(settings(**overrides)), check_deadlock=False, stop_on_violation=not keep_going)


class OnlyLiveHeartbeats:
    """The model, with a heartbeat delivered only while the incarnation that sent it is running:
    no heartbeat outlives its broker's process (Kafka's controller drops a heartbeat that waited
    too long in its own queue, processExpiredBrokerHeartbeat; a network that delays one past the
    broker's session remains possible, and is in the shortest trace)."""

    def __init__(self, model):
        self.model = model
        self.invariants = model.invariants
        self.action_invariants = model.action_invariants
        self.actions = model.actions

    def init_states(self):
        return self.model.init_states()

    def successors(self, s):
        return [
            (action, t)
            for action, t in self.model.successors(s)
            if action[0] != "ControllerHandlesHeartbeat"
            or (s[STATUS][action[1][1]] == RUNNING and s[INCARNATION][action[1][1]] == action[1][2])
        ]


def after_restart(semantics: str = "code"):
    model = make_model(settings(restarts=1, semantics=semantics))
    return model, explore(OnlyLiveHeartbeats(model), check_deadlock=False, stop_on_violation=False)


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
    assert (result.distinct_states, result.generated_states, result.depth) == (693, 1298, 22)


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


def test_after_a_restart_with_no_heartbeat_outliving_its_broker():
    model, result = after_restart()
    assert [(v.name, v.length) for v in result.violations] == [
        ("LeaderOnOnlineDir", 19), ("IsrOnOnlineDirs", 19), ("AcknowledgedFailureLeadsNothing", 18),
        ("FencedUntilAssigned", 15)]
    assert labels(model, violation(result, "LeaderOnOnlineDir").trace) == [
        *REGISTERED_AND_UNFENCED,
        "BrokerCrashes(b0)",
        "BrokerStarts(b0)",
        "BrokerSendsRegistration(b0)",
        "ControllerCreatesPartition(p0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 2, dirs ['dir-0', 'dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 2))",
        "BrokerConsumesMetadata(b0, p0)",
        "BrokerFailsDir(b0, slot 0)",
        "BrokerSendsHeartbeat(b0)",
        "BrokerSendsAssignment(b0, p0)",
        "ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 2, p0 -> dir-0))",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 2, offline ['dir-0']))",
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
        "ControllerHandlesRegistration(Register(b0, incarnation 2, dirs ['dir-0', 'dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 2, epoch 2))",
        "BrokerSendsHeartbeat(b0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 2, offline ['dir-0']))",
        "BrokerReceivesHeartbeatResponse(HeartbeatResponse(b0, epoch 2, offline ['dir-0']))",
    ]
    _, kip = after_restart("kip")
    assert kip.verdict == "ok" and (kip.distinct_states, kip.depth) == (6698, 31)


#: checked-in trace -> (whether it comes from the restart search, the property it breaks)
TRACES = {
    FINDINGS / "heartbeat_LeaderOnOnlineDir.itf.json": (False, "LeaderOnOnlineDir"),
    FINDINGS / "heartbeat_FencedUntilAssigned.itf.json": (False, "FencedUntilAssigned"),
    FINDINGS / "heartbeat_restart_LeaderOnOnlineDir.itf.json": (True, "LeaderOnOnlineDir"),
    FINDINGS / "heartbeat_restart_AcknowledgedFailureLeadsNothing.itf.json": (True, "AcknowledgedFailureLeadsNothing"),
}


def documents() -> dict[Path, dict]:
    """The checked-in traces as ``kraftcheck check --continue`` writes them."""
    source = "spec/configs/heartbeat.toml"
    check_table = {"model": "kraftcheck.model:make_model", "deadlock": False}
    meta = {"model": "kraftcheck.model:make_model"}
    shortest = (make_model(settings()), check(), {"source": source, "settings": settings()})
    model, result = after_restart()
    restart = (model, result, {"source": f"{source} --set restarts=1, heartbeats only from a running broker",
                               "settings": settings(restarts=1)})
    documents = {}
    for path, (after_a_restart, name) in TRACES.items():
        model, result, config = restart if after_a_restart else shortest
        documents[path] = counterexample_document(model, violation(result, name), {
            **meta, "config": {**meta, "source": config["source"], "check": check_table, "settings": config["settings"]}})
    return documents


def test_the_checked_in_traces_are_the_findings():
    for path, document in documents().items():
        assert json.loads(path.read_text()) == json.loads(json.dumps(document)), path.name


def test_the_checked_in_traces_replay():
    assert sorted(FINDINGS.glob("*.itf.json")) == sorted(TRACES)
    for path, (_, name) in TRACES.items():
        p = subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", "trace", "replay", str(path)],
                           capture_output=True, text=True, cwd=REPO, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
        assert p.returncode == 0, p.stdout + p.stderr
        assert name in p.stdout


if __name__ == "__main__":
    for path, document in documents().items():
        path.write_text(json.dumps(document, indent=1) + "\n")
        print(f"wrote {path}")
