"""kraftcheck conform: the model's controller steps against Kafka's released controllers, 4.0.0
(the release closest to the code the model was read from) and 4.4.0 (the newest served).

Every finding trace gets its verdict from Kafka's code, every mutant's counterexample diverges at
the mutant's step (or the test says why not), and seeded random walks at every shipped config
reach more than 10,000 controller steps per version with no divergence left unexplained.
One JVM per Kafka version serves the whole module.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kraftcheck.checker.bfs import explore
from kraftcheck.checker.config import ConfigError
from kraftcheck.conform.explained import KNOWN
from kraftcheck.conform.harness import Harness, maven_classpath
from kraftcheck.conform.run import Source, _needs_a_later_kafka, conform_all, load_sources
from kraftcheck.model import make_model
from tests.test_kafka_model import CAUGHT, config
from tests.trace_helpers import mutant_params, mutant_search

REPO = Path(__file__).resolve().parent.parent
FINDINGS = REPO / "spec" / "findings"
VERSIONS = ("4.0.0", "4.4.0")
CONFIGS = sorted(glob.glob(str(REPO / "spec" / "configs" / "*.toml")))


@pytest.fixture(scope="module", params=VERSIONS)
def harness(request):
    with Harness(kafka_version=request.param) as h:
        yield h


def run_trace(harness, name: str, allow_explained: bool = False):
    sources = load_sources([str(FINDINGS / name)], [], [], 0, 0, 0)
    return conform_all(sources, harness, allow_explained)


# ---------------------------------------------------------------------------------------------
# Findings, as Kafka's code decides them (spec/README.md, "Findings": each verdict line)
# ---------------------------------------------------------------------------------------------

#: trace -> controller steps compared (the trace conforms: Kafka's controller does what the
#: model does, the finding reproduced), or (step, action, the fields that differ) of the
#: divergence, per Kafka version when they differ.
REPRODUCED = {
    "heartbeat_LeaderOnOnlineDir.itf.json": 6,  # finding 1
    "heartbeat_FencedUntilAssigned.itf.json": 5,  # finding 2
    "heartbeat_restart_AcknowledgedFailureLeadsNothing.itf.json": 6,  # finding 2, after a restart
    "heartbeat_restart_LeaderOnOnlineDir.itf.json": 7,  # finding 1, after a restart
    "oldmetadata_AcknowledgedFailureLeadsNothing.itf.json": 4,  # finding 4
    "restart_ElectedWhenPossible.itf.json": 8,  # finding 5
    "induction_assignment_LeaderOnOnlineDir.itf.json": 7,  # finding 6
    "elr_CleanLeaderFromIsrOrElr.itf.json": 6,  # finding 8
    # finding 11: the late registration taken, the running incarnation's heartbeat refused
    "heartbeat_stale_registration_RunningBrokerUnfenced.itf.json": 3,
}
SHUTDOWN_RECORDS = ["partitions.0.leader", "partitions.0.leaderEpoch", "partitions.0.partitionEpoch"]
NOT_REPRODUCED = {
    # finding 3: KAFKA-18106 (4.0.0) takes the new incarnation out of its leaderships
    "restart_FencedBrokerLeadsNothing.itf.json": (14, "ControllerHandlesRegistrationAfterSessionTimeout", SHUTDOWN_RECORDS),
    "restart_LeaderOnOnlineDir.itf.json": (14, "ControllerHandlesRegistrationAfterSessionTimeout", SHUTDOWN_RECORDS),
    # finding 7 (code's reading) goes through finding 3's window
    "disklost_LossesDeclared.itf.json": (19, "ControllerHandlesRegistrationAfterSessionTimeout", SHUTDOWN_RECORDS),
}
#: finding 9 is 4.0.0's behaviour; 4.4.0's AssignReplicasToDirs keeps the ELR (apache/kafka#20716)
#: trace -> version -> controller steps, or (step, action, the fields that differ: model, Kafka)
FINDING_9 = {
    "elr_ElrLeftOnlyForCause.itf.json": {
        "4.0.0": 7, "4.4.0": (21, "ControllerHandlesAssignment", [("partitions.0.elr", [], [1])])},
    # findings 8 and 9 lose the record an eligible replica holds, through finding 9's assignment
    "elr_CommittedRecordsSurvive.itf.json": {
        "4.0.0": 9, "4.4.0": (27, "ControllerHandlesAssignment", [("partitions.0.elr", [], [0])])},
}
#: traces of the KIP's reading: Kafka's code refuses the re-registration the KIP's reading takes
KIP_READING = {
    "disklost_kip_LossesDeclared.itf.json": 19,
    "recovery_RecoveryToolKeepsCommitted.itf.json": 16,
}


#: finding 12 (KIP-1066): reproduced by the releases that have cordons (4.3.0 on); 4.0.0 has none
CORDON_FINDING = {"cordonrestart_PlacementHonoursReportedCordons.itf.json": 6}


def test_every_finding_trace_has_a_verdict():
    assert set(REPRODUCED) | set(NOT_REPRODUCED) | set(KIP_READING) | set(FINDING_9) | set(CORDON_FINDING) == \
        {p.name for p in FINDINGS.glob("*.itf.json")}


@pytest.mark.parametrize("name", sorted(CORDON_FINDING))
def test_finding_12_by_version(harness, name):
    sources = load_sources([str(FINDINGS / name)], [], [], 0, 0, 0)
    if harness.kafka_version == "4.0.0":
        assert _needs_a_later_kafka(sources, "4.0.0") == str(FINDINGS / name)
        return
    report = conform_all(sources, harness)
    assert report.divergence is None, "\n".join(report.divergence[1].report())
    assert report.controller_steps == CORDON_FINDING[name]
    assert report.stopped == []


@pytest.mark.parametrize("name", sorted(REPRODUCED))
def test_finding_reproduced_against_kafka(harness, name):
    report = run_trace(harness, name)
    assert report.divergence is None, "\n".join(report.divergence[1].report())
    assert report.controller_steps == REPRODUCED[name]
    assert report.stopped == []


@pytest.mark.parametrize("name", sorted(NOT_REPRODUCED))
def test_finding_not_reproduced_against_kafka(harness, name):
    step, action, fields = NOT_REPRODUCED[name]
    report = run_trace(harness, name)
    _, divergence = report.divergence
    assert (divergence.step, divergence.label.split("(")[0]) == (step, action)
    assert sorted(f for f, _, _ in divergence.fields) == fields
    # Kafka's records: the broker out of the partition's leadership before its registration
    assert divergence.records[0].startswith("PartitionChangeRecord(") and "leader=-1" in divergence.records[0]
    assert divergence.records[-1].startswith("RegisterBrokerRecord(")
    assert run_trace(harness, name, allow_explained=True).explained[0][2] == "KAFKA-18106"


@pytest.mark.parametrize("name", sorted(FINDING_9))
def test_finding_9_by_version(harness, name):
    expected = FINDING_9[name][harness.kafka_version]
    report = run_trace(harness, name)
    if isinstance(expected, int):
        assert report.divergence is None and report.controller_steps == expected
    else:
        _, divergence = report.divergence
        assert (divergence.step, divergence.label.split("(")[0]) == expected[:2]
        assert [(f, m, k) for f, m, k in divergence.fields] == expected[2]


@pytest.mark.parametrize("name", sorted(KIP_READING))
def test_kip_reading_traces_diverge_where_the_code_refuses(harness, name):
    _, divergence = run_trace(harness, name).divergence
    assert divergence.step == KIP_READING[name]
    assert divergence.label.startswith("ControllerHandlesRegistration(")
    assert ("answer", "accepted", "refused") in divergence.fields


# ---------------------------------------------------------------------------------------------
# Mutants: a bug Kafka does not have diverges at the mutant's step
# ---------------------------------------------------------------------------------------------

#: mutant -> why its counterexample does not diverge at the mutant's step (all others do)
NOT_AT_MUTANT_STEP = {
    "designated_with_leader": "its step is a designated election (KIP-1275), in no Kafka release",
    "jbod_below_3_7_iv2": "its step is the broker's (BrokerStarts), which Kafka's controller does not run",
    "keep_source_after_promotion": "its step is the broker's (BrokerReceivesAssignmentResponse)",
    "no_revert_on_dest_failure": "its step is the broker's (BrokerFailsDir)",
    "recreate_elsewhere": "its step is the broker's (BrokerConsumesMetadata)",
    "reserved_uuids": "its step is the format tool's (BrokerStarts); the trace ends before a registration",
    "no_lost_on_source_failure": "its step is the broker's (BrokerFailsDir); the trace then diverges at step 19, "
                                 "moves.toml's KIP reading electing on an assignment where Kafka's code does not "
                                 "(finding 5)",
    "no_dirs_all_offline": "legacy.toml's broker without directories is refused by Kafka's controller at 3.7-IV2 "
                           "(step 3, explained: no-directories) before the mutant's step",
    "replay_ignores_log_dirs": "it changes only the committed image a failover would load, and its trace ends "
                               "before a failover: every step is also the correct model's",
    "unfence_before_assigned": "the mutant is Kafka's own behaviour (finding 2): the trace conforms",
    "log_dirs_ignore_cordons": "a broker-side bug (KAFKA-19774): Kafka's controller takes the AssignReplicasToDirs "
                               "that names the cordoned directory, as the model does: the trace conforms",
    "high_watermark_before_truncation": "a broker-side bug (KAFKA-14704): its step is a follower's fetch, which Kafka's "
                                        "controller does not see: the trace conforms",
    "diverging_epoch_ignored": "a broker-side bug (KAFKA-10554 missing): its step is a follower's fetch: the trace "
                               "conforms",
    "single_truncation": "a broker-side bug (KAFKA-6361): its step is a follower's fetch; the preferred election "
                         "before it is Kafka's controller's own: the trace conforms",
    "isr_join_below_epoch_start": "a broker-side bug (KAFKA-7128 missing): its step is the leader's choice of the ISR "
                                  "it proposes; Kafka's controller takes the AlterPartition as the model does: the "
                                  "trace conforms",
    "power_loss_reported_clean": "a broker-side bug (KAFKA-15582): given the previousBrokerEpoch the broker sends, "
                                 "Kafka's controller takes its registration as a clean shutdown and keeps it eligible, "
                                 "as the model does: the trace conforms",
}
#: 4.0.0 still has KAFKA-19522, which this mutant puts back: the trace conforms there
KAFKA_19522 = "elect_unacceptable_last_leader"


def mutant_run(mutant: str, tmp_path_factory):
    """The mutant's counterexample at its config, and the step where it leaves the correct
    model (None if it never does); searched once for both releases' harnesses."""
    name, _, _ = CAUGHT[mutant]
    start, steps, mutant_step = _mutant_trace(mutant, tmp_path_factory)
    return Source(mutant, make_model(dict(config(name), mutant=mutant)), start, steps), mutant_step


def _mutant_trace(mutant: str, tmp_path_factory):
    name, invariant, _ = CAUGHT[mutant]
    correct = make_model(config(name))
    _, violations, _ = mutant_search(tmp_path_factory, mutant)
    trace = next(t for v, _, t in violations if v == invariant)
    start, steps = trace[0][1], list(trace[1:])
    mutant_step, pre = None, start
    for number, (action, post) in enumerate(steps, 1):
        if (action, post) not in correct.successors(pre):
            mutant_step = number
            break
        pre = post
    return start, steps, mutant_step


@pytest.mark.parametrize("mutant", mutant_params(CAUGHT))
def test_mutant_trace_diverges_at_the_mutant_step(harness, mutant, tmp_path_factory):
    source, mutant_step = mutant_run(mutant, tmp_path_factory)
    if source.model.settings.cordons and harness.kafka_version == "4.0.0":
        # 4.0.0's controller has no cordoned directories: conform refuses the run
        assert _needs_a_later_kafka([source], "4.0.0") == mutant
        return
    report = conform_all([source], harness)
    divergence = report.divergence[1] if report.divergence else None
    if mutant == KAFKA_19522 and harness.kafka_version == "4.0.0":
        assert divergence is None and mutant_step == 16
        return
    if mutant in NOT_AT_MUTANT_STEP:
        at = divergence.step if divergence else None
        assert at != mutant_step or mutant_step is None, NOT_AT_MUTANT_STEP[mutant]
        expected_at = {"no_lost_on_source_failure": 19, "no_dirs_all_offline": 3}.get(mutant)
        assert at == expected_at, NOT_AT_MUTANT_STEP[mutant]
        return
    assert divergence is not None, f"{mutant}: Kafka's controller did what the mutant does"
    assert divergence.step == mutant_step, "\n".join(divergence.report())


def test_a_broker_that_dies_as_the_controller_fails_over_is_fenced_by_kafkas_controller(harness):
    """KAFKA-18138, a liveness mutant: with ``failover_without_sessions`` the controller that
    takes over gives no broker a heartbeat session, so broker 0, dead between its last heartbeat
    and the failover, stays unfenced for ever (a 10-state lasso).  The same steps in the correct
    model keep broker 0's session, and the session check then fences it; Kafka's controllers
    take every one of those steps the same way, the fencing included (ClusterControlManager.activate
    records a contact time for every unfenced broker), while the mutant has no such step."""
    import kraftcheck

    version = harness.kafka_version
    result = kraftcheck.check(str(REPO / "spec" / "configs" / "failoverprogress.toml"),
                              mutant="failover_without_sessions", kafka_version=version)
    assert [(v.name, v.kind, v.length, v.loop) for v in result.violations] == [("DeadBrokerFenced", "temporal", 10, 9)]
    lasso = result.violations[0].trace
    assert [action[0] for action, _ in lasso[1:]] == [
        "BrokerStarts", "BrokerSendsRegistration", "ControllerHandlesRegistration", "ControllerCommits",
        "BrokerReceivesRegistrationResponse", "BrokerSendsHeartbeat", "BrokerCrashes", "ControllerHandlesHeartbeat",
        "ControllerFailsOver"]
    settings = dict(config("failoverprogress"), kafka_version=version)
    correct, mutated = make_model(settings), make_model(dict(settings, mutant="failover_without_sessions"))
    steps, state = [], lasso[0][1]
    for action, _ in lasso[1:]:
        state = next(post for taken, post in correct.successors(state) if taken == action)
        steps.append((action, state))
    fence = ("ControllerFencesExpiredBroker", 0)
    steps.append((fence, next(post for taken, post in correct.successors(state) if taken == fence)))
    assert fence not in {taken for taken, _ in mutated.successors(lasso[-1][1])}
    report = conform_all([Source("KAFKA-18138", correct, lasso[0][1], steps)], harness)
    assert report.divergence is None, "\n".join(report.divergence[1].report())
    assert (report.controller_steps, report.by_action["ControllerFencesExpiredBroker"]) == (4, 1)


def test_kafka_refuses_a_deleted_topics_assignment_each_time_it_is_sent(harness):
    """KAFKA-17190, a liveness mutant on the broker's side: with ``assignment_retried_for_deleted_topic``
    the broker sends an assignment it queued for a topic since deleted, and again after each
    refusal (deletion.toml's 21-state lasso, its loop taken three times here).  Kafka's controller
    takes every step as the model does: DeleteTopics writes the RemoveTopicRecord, and each
    AssignReplicasToDirs for the deleted topic is answered UNKNOWN_TOPIC_ID, nothing written.
    The lasso is searched at a smaller bound than deletion.toml's (one message in flight, no
    directory failure: 5,177 states under either release's rules), where it is the same."""
    import kraftcheck

    version = harness.kafka_version
    settings = dict(mutant="assignment_retried_for_deleted_topic", kafka_version=version, max_messages=1,
                    dir_failures=0)
    result = kraftcheck.check(str(REPO / "spec" / "configs" / "deletion.toml"), **settings)
    lasso = next(v for v in result.violations if v.kind == "temporal")
    assert (result.distinct_states, lasso.name, lasso.length, lasso.loop) == (5_177, "AssignmentSettled", 21, 15)
    loop = list(lasso.trace[lasso.loop + 1:])
    assert lasso.trace[-1][1] == lasso.trace[lasso.loop][1]
    model = make_model(dict(config("deletion"), **settings))
    report = conform_all([Source("KAFKA-17190", model, lasso.trace[0][1], list(lasso.trace[1:]) + loop + loop)], harness)
    assert report.divergence is None, "\n".join(report.divergence[1].report())
    assert (report.by_action["AdminDeletesTopic"], report.by_action["ControllerHandlesAssignment"]) == (1, 3)


def test_kafka_refuses_a_reassigned_away_replicas_assignment_each_time_it_is_sent(harness):
    """KAFKA-16886, a liveness mutant on the broker's side: with
    ``assignment_retried_for_reassigned_replica`` the broker sends an assignment it queued for a
    replica a reassignment has since taken away, and again after each refusal (reassignment.toml's
    24-state lasso, its loop taken three times here).  Kafka's controller takes every step as the
    model does: the reassignment completes at once, and each AssignReplicasToDirs is answered
    NOT_LEADER_OR_FOLLOWER, nothing written.  The lasso is searched at a smaller bound than
    reassignment.toml's (one request, one message in flight: 14,061 states under either release's
    rules), where it is the same."""
    import kraftcheck

    version = harness.kafka_version
    settings = dict(mutant="assignment_retried_for_reassigned_replica", kafka_version=version, reassignments=1,
                    max_messages=1)
    result = kraftcheck.check(str(REPO / "spec" / "configs" / "reassignment.toml"), **settings)
    lasso = next(v for v in result.violations if v.kind == "temporal")
    assert (result.distinct_states, lasso.name, lasso.length, lasso.loop) == (14_061, "AssignmentSettled", 24, 18)
    loop = list(lasso.trace[lasso.loop + 1:])
    model = make_model(dict(config("reassignment"), **settings))
    report = conform_all([Source("KAFKA-16886", model, lasso.trace[0][1], list(lasso.trace[1:]) + loop + loop)], harness)
    assert report.divergence is None, "\n".join(report.divergence[1].report())
    assert (report.by_action["AdminReassignsPartition"], report.by_action["ControllerHandlesAssignment"]) == (1, 3)


def test_kafka_completes_a_move_in_the_alter_partition_that_adds_the_new_replica(harness):
    """tests/test_reassignment.py's move of a one-replica partition from broker 0 to broker 1:
    Kafka adds broker 1 (replicas [1, 0], removing [0], adding [1]), and the leader's
    AlterPartition that takes broker 1 into the ISR completes the reassignment in the same
    record, electing broker 1: Kafka answers NEW_LEADER_ELECTED, as the model does."""
    from tests.test_reassignment import MOVE, TWO_BROKERS, steps_of, two_broker_model

    model = two_broker_model(kafka_version=harness.kafka_version)
    s = next(model.init_states())
    report = conform_all([Source("move", model, s, steps_of(model, s, TWO_BROKERS + MOVE))], harness)
    assert report.divergence is None, "\n".join(report.divergence[1].report())
    assert (report.by_action["AdminReassignsPartition"], report.by_action["ControllerHandlesAlterPartition"]) == (1, 1)


def test_kafka_clears_the_elr_when_min_isr_changes(harness):
    """KAFKA-16540: along the steps of the mutant min_isr_change_keeps_elr's lost record
    (tests/test_dynamic_configs.py), the correct model's controller steps are Kafka's own: the
    min.insync.replicas change's batch clears broker 1's ELR membership, so when broker 0, the
    only one with the record, is fenced, nobody is elected (its 8 controller steps conform).  The
    mutant's own trace parts from Kafka's controller at the change (the mutant test above)."""
    from tests.test_dynamic_configs import LOWERED_THEN_LEADER_LOST, SHRUNK_BELOW_MIN_ISR, replay

    model = make_model(dict(config("dynamicconfig"), kafka_version=harness.kafka_version))
    states = replay(model, SHRUNK_BELOW_MIN_ISR + LOWERED_THEN_LEADER_LOST)
    steps = [(next(a for a, n in model.successors(pre) if n == post), post) for pre, post in zip(states, states[1:])]
    report = conform_all([Source("KAFKA-16540", model, states[0], steps)], harness)
    assert report.divergence is None, "\n".join(report.divergence[1].report())
    assert (report.controller_steps, report.by_action["AdminAltersMinIsr"]) == (8, 1)


def test_kip_966s_motivating_loss_without_elr_is_kafkas_own(harness):
    """powerloss.toml without ELR: broker 1, the ISR's last member, loses its unflushed record
    in a power loss and is elected again (LossesDeclared, 27 states, tests/test_power_loss.py).
    Every controller step of that run is the release's own: the loss KIP-966 was made for."""
    from kraftcheck.checker.bfs import OnlyProperty

    model = make_model(dict(config("powerloss"), elr=False, kafka_version=harness.kafka_version))
    lost = explore(OnlyProperty(model, "invariant", "LossesDeclared"), check_deadlock=False).violations[0]
    assert lost.length == 27
    report = conform_all([Source("powerloss without ELR", model, lost.trace[0][1], list(lost.trace[1:]))], harness)
    assert report.divergence is None, "\n".join(report.divergence[1].report())
    assert (report.controller_steps, report.stopped) == (8, [])


# ---------------------------------------------------------------------------------------------
# Random walks at every shipped config, the code's reading
# ---------------------------------------------------------------------------------------------

WALKS = 40


@pytest.mark.parametrize("follow", [True, False], ids=["release-rules", "code-read"])
def test_random_walks_conform_under_the_codes_reading(harness, follow):
    """Walks whose model follows the release's rules (kafka_version) conform but for the model's
    legacy brokers, which no release lets register; walks of the code read reach exactly the
    rules the releases changed (conform/explained.py)."""
    version = harness.kafka_version
    overrides = ["semantics=code"] if follow else ["semantics=code", "kafka_version=1eb7644"]
    sources, refused = [], set()
    for path in CONFIGS:
        try:
            sources += load_sources([], [path], overrides, WALKS, 40, 0, follow=version if follow else None)
        except ConfigError:  # cordoned directories need a release that has them (4.3.0 on)
            refused.add(Path(path).stem)
    assert refused == (set() if follow and version == "4.4.0" else {"cordons", "cordonrestart"})
    report = conform_all(sources, harness, allow_explained=True)
    assert report.divergence is None, "\n".join([report.divergence[0]] + report.divergence[1].report())
    assert report.runs == WALKS * (len(CONFIGS) - len(refused))
    assert report.controller_steps >= 10_000
    expected = {"no-directories"} if follow else {
        "4.0.0": {"KAFKA-18106", "fenced-session", "no-directories", "KAFKA-19522"},
        "4.4.0": {"KAFKA-18106", "fenced-session", "no-directories"}}[version]
    assert {name for _, _, name in report.explained} == expected
    # every controller action of the code's reading is exercised but the periodic unclean election,
    # which uncleantopic.toml's walks do not reach at these bounds
    assert set(report.by_action) >= {
        "ControllerHandlesRegistration", "ControllerHandlesRegistrationAfterSessionTimeout", "ControllerHandlesHeartbeat",
        "ControllerTimesOutHeartbeat", "ControllerFencesExpiredBroker", "ControllerHandlesAssignment",
        "ControllerHandlesAlterPartition", "ControllerCreatesPartition", "AdminElectsUncleanLeader",
        "AdminUpgradesMetadataVersion", "ControllerFailsOver", "AdminAltersMinIsr", "AdminTogglesUncleanElection",
        "AdminElectsPreferredLeader", "AdminDeletesTopic", "AdminReassignsPartition", "AdminCancelsReassignment"}


KIP_WALKS = 45


def test_random_walks_under_the_kips_reading_diverge_only_where_the_findings_say(harness):
    """Under the KIP's reading the model parts from Kafka's code exactly where spec/README.md says
    the readings differ: findings 1, 2 and 5, and registration (finding 3's reading)."""
    sources = []
    for path in CONFIGS:
        try:
            sources += load_sources([], [path], ["semantics=kip", "kafka_version=1eb7644"], KIP_WALKS, 40, 0)
        except ConfigError:  # ELR and failovers come with the code's reading only
            assert Path(path).stem in ("elr", "elr40", "elr44", "cleanshutdown", "failover", "failoverjbod",
                                       "livefencing", "failoverprogress", "powerloss", "dynamicconfig", "cordons",
                                       "cordonrestart")
    report = conform_all(sources, harness, allow_explained=True)
    assert report.divergence is None, "\n".join([report.divergence[0]] + report.divergence[1].report())
    assert report.controller_steps >= 10_000
    assert {name for _, _, name in report.explained} == {
        "kip:fenced-until-assigned", "kip:registration", "kip:offline-dirs-first", "kip:assignment", "no-directories"}


#: config -> its violations (name: trace length) under a release's rules, the search stopping at
#: the first (or going on: disklost44.toml's ``continue``); every one a run whose controller steps
#: the release's own controller takes the same way
RELEASE_VIOLATIONS = {
    ("heartbeat", "4.0.0"): {"FencedUntilAssigned": 12},
    ("oldmetadata", "4.0.0"): {"AcknowledgedFailureLeadsNothing": 13},
    ("elr40", "4.0.0"): {"LeaderOnOnlineDir": 17, "FencedBrokerLeadsNothing": 17, "IsrOnOnlineDirs": 17},
    ("disklost44", "4.4.0"): {"IsrOnOnlineDirs": 24, "ElectedWhenPossible": 22, "CommittedRecordsSurvive": 25,
                              "IsrHoldsCommittedRecords": 20, "LossesDeclared": 27},
    ("elr", "4.4.0"): {"CleanLeaderFromIsrOrElr": 19},
    ("failoverjbod", "4.4.0"): {"FencedUntilAssigned": 17},
    ("powerloss", "4.4.0"): {"CleanLeaderFromIsrOrElr": 19},
    ("cordonrestart", "4.4.0"): {"PlacementHonoursReportedCordons": 19},
}


@pytest.mark.parametrize("name,version", sorted(RELEASE_VIOLATIONS))
def test_violations_under_a_releases_rules_conform_to_that_release(name, version):
    from tests.test_kafka_releases import run

    model = make_model(dict(config(name), kafka_version=version))
    result = run(name) if name == "disklost44" else run(name, keep_going=False, kafka_version=version)
    assert {v.name: len(v.trace) for v in result.violations} == RELEASE_VIOLATIONS[(name, version)]
    with Harness(kafka_version=version) as harness:
        for violation in result.violations:
            source = Source(f"{name} {violation.name}", model, violation.trace[0][1], list(violation.trace[1:]))
            report = conform_all([source], harness)
            assert report.divergence is None, "\n".join(report.divergence[1].report())
            assert report.controller_steps > 0 and report.stopped == []


def test_every_explanation_names_its_reason():
    assert len({e.name for e in KNOWN}) == len(KNOWN)
    assert all(len(e.why) > 60 for e in KNOWN)


# ---------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------

def kraftcheck(*args, env=None, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=600)


def test_conform_prints_steps_and_traces():
    done = kraftcheck("conform", str(FINDINGS / "heartbeat_LeaderOnOnlineDir.itf.json"),
                      str(FINDINGS / "oldmetadata_AcknowledgedFailureLeadsNothing.itf.json"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("conforms: 10 controller steps over 2 traces against Kafka 4.0.0's controller "
                                  "(17 steps the model's alone, ")


def test_divergence_is_exit_14_with_the_fields_side_by_side():
    done = kraftcheck("conform", str(FINDINGS / "restart_FencedBrokerLeadsNothing.itf.json"))
    assert done.returncode == 14
    lines = done.stdout.splitlines()
    assert lines[0] == f"diverges from Kafka 4.0.0's controller: {FINDINGS / 'restart_FencedBrokerLeadsNothing.itf.json'}"
    assert lines[1] == "step 14: ControllerHandlesRegistrationAfterSessionTimeout(Register(b0, incarnation 2, dirs ['dir-0']))"
    assert lines[-4:] == ["  field              model  Kafka",
                          "  p0 leader          0      -1",
                          "  p0 leaderEpoch     0      1",
                          "  p0 partitionEpoch  0      1"]


def test_missing_java_is_one_line_exit_2(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = dict(os.environ, PATH=str(bin_dir), KRAFTCHECK_CACHE=str(tmp_path / "cache"))
    done = kraftcheck("conform", str(FINDINGS / "heartbeat_LeaderOnOnlineDir.itf.json"), env=env)
    assert done.returncode == 2
    assert done.stderr == "error: Java ('java', 17 or later) is needed to run Kafka's controller, and it is not on PATH\n"


def test_bad_kafka_classpath_is_one_line_exit_2(tmp_path):
    done = kraftcheck("conform", "--kafka-classpath", str(tmp_path / "nowhere"), str(FINDINGS / "heartbeat_LeaderOnOnlineDir.itf.json"))
    assert (done.returncode, done.stderr) == (2, f"error: --kafka-classpath: no such file or directory: {tmp_path / 'nowhere'}\n")
    (tmp_path / "empty.jar").write_bytes(b"")
    done = kraftcheck("conform", "--kafka-classpath", str(tmp_path), str(FINDINGS / "heartbeat_LeaderOnOnlineDir.itf.json"))
    assert (done.returncode, done.stderr) == (2, f"error: --kafka-classpath: no kafka-metadata jar (Kafka's controller) in {tmp_path}\n")


def test_no_runs_is_one_line_exit_2():
    done = kraftcheck("conform")
    assert (done.returncode, done.stderr) == (
        2, "error: conform needs TRACE files or --config CONFIG.toml (see 'kraftcheck conform --help')\n")


def test_a_contributors_kafka_by_path(tmp_path):
    """A released version's jars given by path, as a contributor's build would be: the same verdicts."""
    libs = tmp_path / "libs"
    libs.mkdir()
    for jar in maven_classpath("4.4.0"):
        shutil.copy(jar, libs)
    done = kraftcheck("conform", "--kafka-classpath", str(libs), str(FINDINGS / "elr_ElrLeftOnlyForCause.itf.json"),
                      env=dict(os.environ, KRAFTCHECK_CACHE=str(tmp_path / "cache")))
    assert done.returncode == 14
    assert done.stdout.splitlines()[:2] == [
        f"diverges from Kafka 4.4.0's controller: {FINDINGS / 'elr_ElrLeftOnlyForCause.itf.json'}",
        "step 21: ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 2, p0 -> dir-2))"]


def test_an_unreleased_kafka_version_is_one_line_exit_2(tmp_path):
    done = kraftcheck("conform", "--kafka-version", "9.9.9", str(FINDINGS / "heartbeat_LeaderOnOnlineDir.itf.json"),
                      env=dict(os.environ, KRAFTCHECK_CACHE=str(tmp_path / "cache")))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == ("error: Maven could not resolve Kafka 9.9.9's controller jars (org.apache.kafka:kafka-metadata:jar:9.9.9 "
                           "and others): no such release, or Maven Central out of reach\n")


def test_classpath_and_version_exclude_each_other(tmp_path):
    done = kraftcheck("conform", "--kafka-version", "4.0.0", "--kafka-classpath", str(tmp_path),
                      str(FINDINGS / "heartbeat_LeaderOnOnlineDir.itf.json"))
    assert (done.returncode, done.stderr) == (
        2, "error: --kafka-classpath and --kafka-version exclude each other: the classpath is the Kafka to run\n")


def test_walks_report_the_explained_divergences_and_a_json_summary(tmp_path):
    summary = tmp_path / "conform.json"
    done = kraftcheck("conform", "--config", "spec/configs/legacy.toml", "--walks", "3", "--allow-explained",
                      "--json", str(summary))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("conforms: ") and " over 3 traces against Kafka 4.0.0's controller " in lines[0]
    assert lines[1].startswith("  3 runs ended at an explained divergence, no-directories: Kafka's controller refuses")
    [entry] = json.loads(summary.read_text())["conform"]
    assert (entry["kafkaVersion"], entry["runs"], entry["verdict"]) == ("4.0.0", 3, "conforms")
    assert [e["explanation"] for e in entry["explained"]] == ["no-directories"] * 3
    assert [(e["step"], e["action"]) for e in entry["explained"]] == [
        (4, "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs []))"),
        (4, "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs []))"),
        (7, "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs []))")]
