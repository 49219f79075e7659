"""The Kafka model's progress properties (model/progress.py, model setting ``progress``) under the
liveness phase: where they hold, and the lassos of the two readings' findings (spec/README.md,
"Progress")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kraftcheck.checker.temporal import always_eventually, for_each, lasso_violates, leads_to
from tests.trace_helpers import config_search

REPO = Path(__file__).resolve().parent.parent
PROPERTIES = ["FailedDirLeadershipsMove", "RunningBrokerUnfenced", "AssignmentSettled", "LeaderlessPartitionElected",
              "ReportedFailureSettled", "DeadBrokerFenced"]


def check(config: str, tmp_path: Path, *extra: str):
    """``check`` on a shipped config, with the progress properties (set where the config does not)."""
    progress = [] if config.endswith("progress") or config in ("deletion", "reassignment") else ["--set", "progress=true"]
    done = subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", "check", f"spec/configs/{config}.toml",
                           *progress, "--quiet", "--no-picture", "--trace-dir", str(tmp_path),
                           "--json", str(tmp_path / "summary.json"), *extra],
                          capture_output=True, text=True, cwd=REPO, timeout=900, env={**os.environ})
    assert done.stderr == "", done.stderr
    return done, json.loads((tmp_path / "summary.json").read_text())


def test_for_each_is_every_value_s_property():
    def above(n):
        p = lambda s: s >= n  # noqa: E731
        p.__name__ = f"AtLeast({n})"
        return always_eventually(p)

    prop = for_each((1, 3), above)
    assert prop.formula == "([]<>AtLeast(1)) /\\ ([]<>AtLeast(3))"
    # a loop through 1 and 2 for ever: AtLeast(1) holds again and again, AtLeast(3) never
    assert lasso_violates(prop, [0, 1, 2, 1], loop=1)
    assert not lasso_violates(prop, [0, 3, 1, 3], loop=1)
    with pytest.raises(TypeError, match=r"^for_each's property for 2 is not one made by leads_to, always_eventually "
                                        r"or eventually_always$"):
        for_each((2,), lambda n: for_each((n,), lambda m: leads_to(bool, bool)))


@pytest.mark.parametrize("config, states, edges", [
    ("dirfailure", 62_800, 197_020),  # a directory failure, the KIP's reading
    ("lossy", 69_457, 194_705),  # and a lost message
    ("heartbeat", 657, 1_414),  # the code's reading, its safety findings kept going past (--continue)
])
def test_every_progress_property_holds(config, states, edges, tmp_path):
    done, entry = check(config, tmp_path, "--continue")
    assert ("ok: under the model's fairness, " + ", ".join(PROPERTIES) + " hold on every behaviour") in done.stdout
    liveness = entry["liveness"]
    assert liveness["checked"] and liveness["properties"] == {name: "holds" for name in PROPERTIES}
    assert (liveness["graph_states"], liveness["graph_edges"]) == (states, edges)


def test_the_kips_reading_keeps_a_running_broker_fenced_for_ever(tmp_path):
    """Under KIP-858's text the controller unfences a broker only once none of its replicas is
    UNASSIGNED, and the broker never assigns a replica whose only log is on a failed disk: a
    broker restarted after placing an unassigned replica, with that disk failed, heartbeats for
    ever and stays fenced.  Kafka's code unfences it once it has caught up (the code's reading
    holds the property at the same config)."""
    done, entry = check("uuids", tmp_path)
    assert done.returncode == 13
    assert ("error: temporal property RunningBrokerUnfenced is violated; lasso: 21 states, from state 18, the steps "
            "to state 21 (state 18 again) repeat for ever") in done.stdout
    trace = json.loads((tmp_path / "uuids,progress=true_RunningBrokerUnfenced.itf.json").read_text())
    assert (trace["loop"], len(trace["states"])) == (17, 21)
    assert entry["liveness"]["properties"]["RunningBrokerUnfenced"] == "violated"
    (tmp_path / "code").mkdir()
    _, code_entry = check("uuids", tmp_path / "code", "--set", "semantics=code", "--continue")
    assert code_entry["liveness"]["properties"]["RunningBrokerUnfenced"] == "holds"


@pytest.mark.slow  # two minutes: left to CI and `make test-all`
def test_the_codes_reading_leaves_a_partition_leaderless_with_an_acceptable_isr_member(tmp_path):
    """Finding 5's path as a liveness finding: broker 1's new incarnation, its disk replaced, is
    unfenced while its replica is on the old disk's directory; its assignment to the new disk
    then takes away its leadership (the election judges the directories the partition had) and
    nothing elects it again, although it is the ISR's only member, unfenced, on an online
    directory.  The same on a real 4.0.0 cluster: ``kraftcheck cluster disklost`` settles
    leaderless with ISR [0] (tests/test_cluster_kafka.py)."""
    done, entry = check("disklost", tmp_path, "--continue")
    assert ("error: temporal property LeaderlessPartitionElected is violated; lasso: 26 states, from state 24, the "
            "steps to state 26 (state 24 again) repeat for ever") in done.stdout
    assert entry["liveness"]["properties"] == {name: "violated" if name == "LeaderlessPartitionElected" else "holds"
                                               for name in PROPERTIES}
    assert (entry["liveness"]["graph_states"], entry["liveness"]["graph_edges"]) == (236_101, 711_754)


@pytest.mark.parametrize("config, states, edges", [
    ("lossyprogress", 69_457, 194_705),
    ("uncleanprogress", 57_389, 176_625),  # past findings 3 and 5 (continue = true)
    ("failoverprogress", 52_444, 226_554),  # Kafka 4.4.0's failover: a dead broker is fenced by the next controller
])
def test_the_progress_configs_hold_every_progress_property(config, states, edges):
    result = config_search(config)  # the main job's search
    assert result.liveness["properties"] == {name: "holds" for name in PROPERTIES}
    assert (result.liveness["graph_states"], result.liveness["graph_edges"]) == (states, edges)


@pytest.mark.parametrize("mutant, config, violated, lasso", [
    ("assignment_not_retried", "lossyprogress",
     {"FailedDirLeadershipsMove": (23, 19), "RunningBrokerUnfenced": (19, 16), "AssignmentSettled": (18, 15)},
     ["BrokerSendsAssignment", "NetworkLosesMessage"]),
    ("unclean_election_not_retried", "uncleanprogress", {"LeaderlessPartitionElected": (26, 23)},
     ["ControllerHandlesAssignment", "BrokerReceivesAssignmentResponse"]),
    # KAFKA-18138: broker 0 crashes after its last heartbeat, and the next controller never fences it
    ("failover_without_sessions", "failoverprogress", {"DeadBrokerFenced": (10, 9)},
     ["BrokerCrashes", "ControllerHandlesHeartbeat", "ControllerFailsOver"]),
    # KAFKA-7415: broker 0, made leader by a preferred election, writes a record at an offset where
    # broker 1 holds one of an earlier epoch; it crashes, and broker 1 leads again with no entry
    # for its new epoch in its cache: it cannot place broker 0's epoch, and broker 0 never truncates
    ("new_epoch_not_cached", "fetchprogress", {"DivergedFollowerTruncates": (36, 31)},
     ["AdminElectsPreferredLeader", "LeaderAppendsRecord", "BrokerCrashes", "LeaderStartsEpoch"]),
    # KAFKA-17190: the topic deleted under a queued assignment, which is sent and refused for ever
    ("assignment_retried_for_deleted_topic", "deletion", {"AssignmentSettled": (21, 15)},
     ["BrokerConsumesMetadata", "AdminDeletesTopic", "ControllerHandlesAssignment", "BrokerReceivesAssignmentResponse"]),
    # KAFKA-16886: the replica reassigned away under a queued assignment, which is sent and refused for ever
    ("assignment_retried_for_reassigned_replica", "reassignment", {"AssignmentSettled": (24, 18)},
     ["BrokerConsumesMetadata", "AdminReassignsPartition", "ControllerHandlesAssignment", "BrokerReceivesAssignmentResponse"]),
])
@pytest.mark.slow  # two searches and a replay per mutant; make test has them in test_mutants.py's table run
def test_each_liveness_mutant_is_caught_with_a_lasso_that_replays(mutant, config, violated, lasso, tmp_path):
    """The mutant breaks only progress properties (no invariant or step property fails that
    does not fail without it), and each lasso replays: its loop closes, keeps the fairness and
    breaks the property."""
    done, entry = check(config, tmp_path, "--set", f"mutant={mutant}")
    # the correct model's search, the main job's (each of these configs has the progress properties)
    plain = config_search(config)
    # 13: temporal and step properties alone (reassignment's finding 1 is the step property
    # FencedUntilAssigned); 12: the invariant findings of uncleanprogress and deletion, with or without it
    assert done.returncode == (12 if config in ("uncleanprogress", "deletion") else 13)
    temporal = {v["invariant"]: (v["length"], v["loop"]) for v in entry["violations"] if v["kind"] == "temporal"}
    assert temporal == violated
    safety = {(v["kind"], v["invariant"]) for v in entry["violations"] if v["kind"] != "temporal"}
    assert safety == {(v.kind, v.name) for v in plain.violations}
    # without the mutant every progress property holds (fetch = "batch" adds its own)
    properties = PROPERTIES + (["DivergedFollowerTruncates"] if config == "fetchprogress" else [])
    assert plain.liveness["properties"] == {name: "holds" for name in properties}
    if config == "fetchprogress":  # the other configs' graphs: test_the_progress_configs_hold_every_progress_property
        assert (plain.liveness["graph_states"], plain.liveness["graph_edges"]) == (435_834, 1_286_506)
    for name, (length, loop) in violated.items():
        trace = tmp_path / f"{config},mutant={mutant}_{name}.itf.json"
        replayed = subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", "trace", "replay", str(trace)],
                                  capture_output=True, text=True, cwd=REPO, timeout=300)
        assert (replayed.returncode, replayed.stderr) == (0, ""), replayed.stdout
        # a loop of steps closes; a loop of none is the last state stuttering
        closes = "closes" if length > loop + 1 else f"state {length} stutters for ever"
        assert f"{closes}, keeps the model's fairness, and violates {name} (" in replayed.stdout, replayed.stdout
    # the steps that lose the assignment, or take the leadership away for good, lead into the loop
    states = json.loads((tmp_path / f"{config},mutant={mutant}_{next(iter(violated))}.itf.json").read_text())["states"]
    actions = [s["#meta"]["action"] for s in states[1:]]
    assert all(a in actions for a in lasso)


def test_the_python_api_judges_liveness_past_the_safety_findings_when_kept_going():
    """As ``check --continue``: below 3.7-IV2 (finding 4) the failed directory's leadership
    also stays for ever; without ``keep_going`` the search stops at the finding, unjudged."""
    import kraftcheck

    config = str(REPO / "spec" / "configs" / "oldmetadata.toml")
    kept_going = kraftcheck.check(config, keep_going=True, progress=True)
    assert [(cx.kind, cx.name, cx.length, cx.loop) for cx in kept_going.violations] == [
        ("invariant", "AcknowledgedFailureLeadsNothing", 13, None), ("temporal", "FailedDirLeadershipsMove", 16, 12)]
    assert kept_going.liveness["properties"] == {name: "violated" if name == "FailedDirLeadershipsMove" else "holds"
                                                 for name in PROPERTIES}
    stopped = kraftcheck.check(config, progress=True)
    assert (stopped.liveness["checked"], stopped.liveness["why"]) == (False, "the search's verdict is violation")
