"""Cordoned log directories (KIP-1066; issue 38, part 7), with Kafka 4.4.0's rules, held to exact
figures at ``spec/configs/cordons.toml`` and ``spec/configs/cordonrestart.toml`` (finding 12).
TLC gives the same states (tests/test_kafka_tlc.py); Kafka's 4.4.0 controller takes the same
steps, and 4.0.0's has no cordons (tests/test_conform.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kraftcheck.model import make_model
from kraftcheck.model.config import parse_settings
from kraftcheck.model.state import CORDONED, DIR_STATE, FAILED, REGISTERED_CORDONS, REPORTED_CORDONS, except_at
from tests.test_dynamic_configs import replay
from tests.test_kafka_findings import REPO, labels
from tests.test_kafka_model import config
from tests.trace_helpers import config_search, mutant_search


def run(name, **overrides):
    # the whole state space, made once a run: other tests read it too
    return make_model(dict(config(name), **overrides)), config_search(name, keep_going=True, **overrides)


#: Finding 12's trace: broker 1 reports its only directory cordoned, restarts, and registers again
#: before its new incarnation has reported anything; the partition is then placed on it.
CORDONS_LAPSE = [
    "BrokerStarts(b0)", "BrokerSendsRegistration(b0)", "BrokerStarts(b1)",
    "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
    "BrokerSendsHeartbeat(b0)", "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline [], cordoned []))",
    "BrokerSendsRegistration(b1)", "ControllerHandlesRegistration(Register(b1, incarnation 1, dirs ['dir-1']))",
    "BrokerReceivesRegistrationResponse(RegisterResponse(b1, incarnation 1, epoch 1))",
    "AdminCordonsDir(b1, slot 0)", "BrokerSendsHeartbeat(b1)", "BrokerCrashes(b1)", "BrokerStarts(b1)",
    "ControllerHandlesHeartbeat(Heartbeat(b1, epoch 1, offline [], cordoned ['dir-1']))",
    "BrokerSendsRegistration(b1)",
    "ControllerHandlesRegistrationAfterSessionTimeout(Register(b1, incarnation 2, dirs ['dir-1']))",
    "ControllerCreatesPartition(p0)",
]


def test_cordons_keep_every_invariant_but_finding_2():
    """Two brokers with two directories each, two cordons or uncordons: the only violation is
    finding 2's (Kafka's controller unfences a broker with a replica UNASSIGNED, as on
    heartbeat.toml); the registrations hold what their brokers report, and no broker places a new
    replica in a cordoned directory while it has another."""
    _, result = run("cordons")
    assert (result.distinct_states, result.generated_states, result.depth) == (229_993, 747_207, 36)
    assert {v.name: v.length for v in result.violations} == {"FencedUntilAssigned": 14}


def test_finding_12_a_brokers_cordons_lapse_when_it_registers_again():
    """The controller refuses the partition while broker 1's registration holds its directory
    cordoned; the new incarnation's RegisterBrokerRecord carries no cordonedLogDirs, and the
    partition is placed on broker 1, whose last report said every directory of it is cordoned."""
    model, result = run("cordonrestart")
    assert (result.distinct_states, result.generated_states, result.depth) == (104_445, 354_205, 38)
    assert {v.name: v.length for v in result.violations} == {"PlacementHonoursReportedCordons": 19}
    trace = next(v for v in result.violations if v.name == "PlacementHonoursReportedCordons").trace
    assert labels(model, trace) == CORDONS_LAPSE
    states = [s for _, s in trace]
    reported = states[15]  # the heartbeat that reports dir-1 cordoned, handled
    # broker 0 reported none cordoned: an empty list, not null
    assert model.describe(reported)["registeredCordons"] == [[], ["dir-1"]]
    assert "ControllerCreatesPartition" not in {a[0] for a, _ in model.successors(reported)}
    registered = states[17]
    assert model.describe(registered)["registeredCordons"] == [[], "null"]
    assert model.describe(registered)["reportedCordons"] == [[], ["dir-1"]]
    assert model.describe(states[-1])["partition"][0]["dirs"] == ["dir-0", "dir-1"]


def test_the_new_incarnations_first_heartbeat_cordons_again():
    """Past the finding: the new incarnation's first heartbeat reports the cordon again, and the
    registration holds it (RegistrationHoldsReportedCordons holds throughout the search)."""
    model = make_model(config("cordonrestart"))
    states = replay(model, CORDONS_LAPSE[:-1] + [
        "BrokerReceivesRegistrationResponse(RegisterResponse(b1, incarnation 2, epoch 2))", "BrokerSendsHeartbeat(b1)",
        "ControllerHandlesHeartbeat(Heartbeat(b1, epoch 2, offline [], cordoned ['dir-1']))"])
    assert model.describe(states[-1])["registeredCordons"] == [[], ["dir-1"]]
    assert "ControllerCreatesPartition" not in {a[0] for a, _ in model.successors(states[-1])}


def test_a_broker_places_new_replicas_in_uncordoned_directories_while_it_has_one():
    """LogManager.nextLogDirs: the least-loaded uncordoned online directory; the first online one
    when every one is cordoned; the only online one, cordoned or not.  The mutant
    log_dirs_ignore_cordons takes the least-loaded directory, cordoned or not."""
    model = make_model(config("cordons"))
    start = next(iter(model.init_states()))

    def placed(cordoned, failed=(), mutant="none"):
        m = model if mutant == "none" else make_model(dict(config("cordons"), mutant=mutant))
        s = m._with(start, cordoned=except_at(start[CORDONED], 0, cordoned))
        for i in failed:
            s = m._with(s, dirState=except_at(s[DIR_STATE], 0, except_at(s[DIR_STATE][0], i, FAILED)))
        return m.least_loaded_online_slot(s, 0)

    assert placed(()) == 0
    assert placed((0,)) == 1
    assert placed((1,)) == 0
    assert placed((0, 1)) == 0
    assert placed((1,), failed=(0,)) == 1
    assert placed((0,), mutant="log_dirs_ignore_cordons") == 0


@pytest.mark.parametrize("mutant,states,steps", [
    ("cordons_only_of_online_dirs", 246_373, [
        "BrokerStarts(b0)", "BrokerSendsRegistration(b0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
        "AdminCordonsDir(b0, slot 0)", "BrokerSendsHeartbeat(b0)", "AdminCordonsDir(b0, slot 0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline [], cordoned ['dir-0']))",
        "BrokerSendsHeartbeat(b0)", "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline [], cordoned []))"]),
    ("log_dirs_ignore_cordons", 150_483, [
        "BrokerStarts(b0)", "BrokerSendsRegistration(b0)", "BrokerStarts(b1)",
        "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
        "BrokerSendsHeartbeat(b0)", "AdminCordonsDir(b0, slot 0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline [], cordoned []))",
        "BrokerSendsRegistration(b1)", "ControllerHandlesRegistration(Register(b1, incarnation 1, dirs ['dir-2', 'dir-3']))",
        "ControllerCreatesPartition(p0)", "BrokerConsumesMetadata(b0, p0)"]),
])
def test_each_cordon_mutant_is_caught_with_its_story(mutant, states, steps, tmp_path_factory):
    """cordons_only_of_online_dirs (KAFKA-20441 missing): broker 0 cordons dir-0 and uncordons it;
    the uncordon, an empty list, is never written, and the registration keeps dir-0 cordoned.
    log_dirs_ignore_cordons (KAFKA-19774 missing): the broker places the new replica in dir-0,
    cordoned, though dir-1 is not.  (cordons.toml goes on past violations: the mutant's search,
    made once a run, is the whole state space.)"""
    model = make_model(dict(config("cordons"), mutant=mutant))
    _, violations, distinct = mutant_search(tmp_path_factory, mutant)
    invariant = {"cordons_only_of_online_dirs": "RegistrationHoldsReportedCordons",
                 "log_dirs_ignore_cordons": "NewReplicasAvoidCordonedDirs"}[mutant]
    assert distinct == states
    assert {name: length for name, length, _ in violations} == {invariant: len(steps) + 1, "FencedUntilAssigned": 14}
    trace = next(t for name, _, t in violations if name == invariant)
    assert labels(model, trace) == steps
    if mutant == "cordons_only_of_online_dirs":
        last = trace[-1][1]
        assert (last[REGISTERED_CORDONS][0], last[REPORTED_CORDONS][0]) == (((4,),), ((),))
    else:
        assert model.describe(trace[-1][1])["logs"][0] == [[0], []]


def test_cordons_need_a_release_that_has_them():
    for version in ("1eb7644", "4.0.0", "4.2.2"):
        with pytest.raises(ValueError) as raised:
            parse_settings({"cordons": 1, "kafka_version": version})
        assert str(raised.value) == (
            "model setting 'cordons' needs kafka_version 4.3.0 or later, failovers = 0, legacy_brokers = 0 and "
            "metadata_version = \"3.7-IV2\" without metadata_upgrade: cordoned directories (KIP-1066) come with "
            "Kafka 4.3.0 and metadata version 4.3-IV0, and the registrations' cordons are not rebuilt by a failover")
    assert parse_settings({"cordons": 1, "kafka_version": "4.3.0"}).cordons == 1
    with pytest.raises(ValueError):
        parse_settings({"cordons": 1, "kafka_version": "4.4.0", "failovers": 1})


def test_check_refuses_cordons_at_an_older_release_in_one_line():
    p = subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", "check", "spec/configs/cordons.toml",
                        "--set", "kafka_version=4.0.0", "--quiet"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert p.returncode == 2
    assert p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1
    assert "model setting 'cordons' needs kafka_version 4.3.0 or later" in p.stderr


def test_an_offline_directory_may_be_cordoned():
    """KAFKA-20441: the controller keeps a cordoned directory that has failed, and a broker whose
    other directory is online and uncordoned still takes new partitions (hasUncordonedDirs counts
    the registration's online directories)."""
    model = make_model(dict(config("cordons"), dir_failures=1, max_messages=2))
    states = replay(model, [
        "BrokerStarts(b0)", "BrokerSendsRegistration(b0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
        "BrokerFailsDir(b0, slot 0)", "AdminCordonsDir(b0, slot 0)", "BrokerSendsHeartbeat(b0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline ['dir-0'], cordoned ['dir-0']))",
        "BrokerStarts(b1)", "BrokerSendsRegistration(b1)",
        "ControllerHandlesRegistration(Register(b1, incarnation 1, dirs ['dir-2', 'dir-3']))"])
    seen = model.describe(states[8])
    assert (seen["onlineDirs"][0], seen["registeredCordons"][0]) == (["dir-1"], ["dir-0"])
    assert "ControllerCreatesPartition" in {a[0] for a, _ in model.successors(states[-1])}
