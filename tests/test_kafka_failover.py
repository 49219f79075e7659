"""The metadata log and controller failover (spec/configs/failover.toml, failoverjbod.toml).

A handler's records wait uncommitted and its answer with them; brokers read the committed
image; a failover keeps the committed records and a prefix of the uncommitted batches.  The
scenarios walk the model step by step; the searches pin the configs' figures.
"""

import importlib.resources
import tomllib
from pathlib import Path

import pytest

from kraftcheck.checker.bfs import explore
from kraftcheck.model import make_model
from kraftcheck.model.state import (
    BROKER_EPOCH, COMMITTED_IMAGE, FENCED, NETWORK, PARTITION, REGISTER_RESPONSE, STATUS, UNCOMMITTED, RUNNING,
)
from tests.test_kafka_scenarios import step
from tests.trace_helpers import config_search

SPEC = Path(importlib.resources.files("kraftcheck.spec"))


def settings(name: str, **overrides) -> dict:
    return dict(tomllib.loads((SPEC / "configs" / f"{name}.toml").read_text())["model"], **overrides)


def search(name: str, **overrides):
    return config_search(name, keep_going=True, **overrides)  # made once a run: other tests read it too


def actions_of(model, trace) -> list[str]:
    return [model.describe_action(action) for action, _ in trace[1:]]


@pytest.fixture
def model():
    return make_model(settings("failover"))


def registered(model):
    """Broker 0 starts and its registration is handled: the record waits uncommitted."""
    s = next(iter(model.init_states()))
    s = step(model, s, "BrokerStarts", 0, ())
    s = step(model, s, "BrokerSendsRegistration", 0)
    return step(model, s, "ControllerHandlesRegistration", match=lambda m: m[1] == 0)


def test_the_answer_waits_for_the_commit(model):
    s = registered(model)
    # the controller's own state has the registration; the log holds it uncommitted, with the answer
    assert s[BROKER_EPOCH] == (1, 0)
    assert [model.describe_action(a) for a, _ in model.successors(s) if a[0] == "BrokerReceivesRegistrationResponse"] == []
    assert not any(m[0] == REGISTER_RESPONSE for m in s[NETWORK])
    assert model.describe(s)["uncommitted"] == [{
        "records": ["RegisterBroker(b0, incarnation 1, epoch 1, fenced, logDirs ['dir-0'])"],
        "response": "RegisterResponse(b0, incarnation 1, epoch 1)"}]
    # brokers read the committed image, which has no registration yet
    assert model.published(s)[BROKER_EPOCH] == (0, 0)
    committed = step(model, s, "ControllerCommits")
    assert committed[NETWORK] == ((REGISTER_RESPONSE, 0, 1, 1),)
    assert committed[UNCOMMITTED] == ()
    assert model.published(committed)[BROKER_EPOCH] == (1, 0)
    running = step(model, committed, "BrokerReceivesRegistrationResponse", match=lambda m: m[1] == 0)
    assert running[STATUS][0] == RUNNING


def test_a_failover_loses_the_uncommitted_registration_and_its_answer(model):
    s = registered(model)
    lost = step(model, s, "ControllerFailsOver", 0)
    assert lost[BROKER_EPOCH] == (0, 0) and lost[UNCOMMITTED] == () and lost[NETWORK] == ()
    assert model.describe_action(("ControllerFailsOver", 0)) == "ControllerFailsOver(0 uncommitted batches kept)"
    # the broker, never answered, registers again; the new controller gives it the same epoch
    again = step(model, lost, "BrokerSendsRegistration", 0)
    again = step(model, again, "ControllerHandlesRegistration", match=lambda m: m[1] == 0)
    assert again[BROKER_EPOCH] == (1, 0)
    # no second failover: the config allows one
    assert [a for a, _ in model.successors(again) if a[0] == "ControllerFailsOver"] == []


def test_a_failover_keeps_a_prefix_and_commits_it_without_answering(model):
    s = registered(model)
    kept = step(model, s, "ControllerFailsOver", 1)
    assert model.describe_action(("ControllerFailsOver", 1)) == "ControllerFailsOver(1 uncommitted batch kept)"
    assert kept[BROKER_EPOCH] == (1, 0)
    assert model.published(kept)[BROKER_EPOCH] == (1, 0)
    assert kept[NETWORK] == ()  # the old controller's pending answer is lost with it
    assert model.ControllerStateIsReplayedLog(kept)


def test_the_log_holds_one_batch_at_once_here(model):
    """max_uncommitted = 1: a second write waits for the commit; a write with nothing to say
    (a heartbeat from a stale epoch) does not."""
    s = registered(model)
    s = step(model, s, "BrokerStarts", 1, ())
    s = step(model, s, "BrokerSendsRegistration", 1)
    assert [a for a, _ in model.successors(s) if a[0] == "ControllerHandlesRegistration"] == []
    s = step(model, s, "ControllerCommits")
    assert step(model, s, "ControllerHandlesRegistration", match=lambda m: m[1] == 1)[BROKER_EPOCH] == (1, 1)


def test_brokers_see_a_partition_once_it_is_committed(model):
    s = registered(model)
    s = step(model, s, "ControllerCommits")
    s = step(model, s, "BrokerReceivesRegistrationResponse", match=lambda m: m[1] == 0)
    s = step(model, s, "BrokerSendsHeartbeat", 0)
    s = step(model, s, "ControllerHandlesHeartbeat", match=lambda m: m[1] == 0)
    assert s[FENCED] == (False, True) and model.published(s)[FENCED] == (True, True)
    s = step(model, s, "ControllerCommits")
    s = step(model, s, "BrokerStarts", 1, ())
    s = step(model, s, "BrokerSendsRegistration", 1)
    s = step(model, s, "ControllerHandlesRegistration", match=lambda m: m[1] == 1)
    s = step(model, s, "ControllerCommits")
    created = step(model, s, "ControllerCreatesPartition", 0)
    assert created[PARTITION][0] is not None and model.published(created)[PARTITION][0] is None
    assert [a for a, _ in model.successors(created) if a[0] == "BrokerConsumesMetadata"] == []
    visible = step(model, created, "ControllerCommits")
    assert [a for a, _ in model.successors(visible) if a[0] == "BrokerConsumesMetadata"] == [
        ("BrokerConsumesMetadata", 0, 0)]


def test_failover_config_holds_every_invariant_with_its_figures():
    result = search("failover")
    assert result.verdict == "ok"
    assert (result.distinct_states, result.generated_states, result.depth) == (29680, 129703, 36)
    # one directory per broker: a failure stops its broker, so no directory is reported offline
    # and nothing is assigned (failoverjbod.toml has those); brokers read the committed image at
    # once (lag.toml has their own images); no records (dataplane.toml)
    assert result.never_enabled == [
        "BrokerRefreshesRegistration", "BrokerLosesPower", "BrokerBeginsShutdown", "BrokerReceivesHeartbeatResponse", "BrokerSendsAssignment",
        "BrokerReceivesAssignmentResponse", "BrokerShutsDownOnDirFailureTimeout", "BrokerStartsMove",
        "BrokerFutureCaughtUp", "BrokerSendsAlterReplicaState", "ControllerHandlesRegistrationAfterSessionTimeout",
        "ControllerFencesSilentBroker", "ControllerHandlesAssignment", "ControllerHandlesAlterReplicaState",
        "AdminDeletesTopic", "AdminReassignsPartition", "AdminCancelsReassignment", "AdminElectsDesignatedLeader",
        "AdminElectsUncleanLeader", "ControllerElectsUncleanLeaders", "AdminUpgradesMetadataVersion",
            "AdminAltersMinIsr", "AdminTogglesUncleanElection", "AdminElectsPreferredLeader", "AdminCordonsDir", "NetworkLosesMessage", "BrokerLoadsMetadata", "LeaderStartsEpoch", "LeaderAppendsRecord", "BrokerFlushesLog", "FollowerFetches", "LeaderSendsAlterPartition",
        "LeaderAdvancesHighWatermark", "ControllerHandlesAlterPartition", "BrokerReceivesAlterPartitionResponse",
        "ToolAsksReplicaLogInfo", "ToolElectsLeader"]
    assert (result.coverage["ControllerFailsOver"]["distinct"], result.coverage["ControllerCommits"]["distinct"]) == (
        4493, 5794)


def test_failover_with_two_directories_shows_findings_1_and_2_and_nothing_else():
    """The same properties break as on heartbeat.toml (1 broker × 2 directories, no log), each
    trace longer by the commits it takes."""
    result = search("failoverjbod")
    assert (result.distinct_states, result.generated_states, result.depth) == (7093, 23408, 34)
    found = {cx.name: cx.length for cx in result.counterexamples}
    assert found == {"LeaderOnOnlineDir": 21, "IsrOnOnlineDirs": 21, "FencedUntilAssigned": 17}
    without_log = search("heartbeat")
    assert {cx.name for cx in without_log.counterexamples} == set(found)


def test_replay_ignoring_log_dirs_breaks_the_replayed_log_at_the_first_failure():
    """KAFKA-15364: the heartbeat that takes dir-0 offline is applied by the active controller
    and replayed without its logDirs."""
    model = make_model(settings("failoverjbod", mutant="replay_ignores_log_dirs"))
    result = explore(model, check_deadlock=False)
    (cx,) = result.counterexamples
    assert (cx.name, cx.length) == ("ControllerStateIsReplayedLog", 9)
    assert actions_of(model, cx.trace) == [
        "BrokerStarts(b0)",
        "BrokerSendsRegistration(b0)",
        "BrokerFailsDir(b0, slot 0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
        "ControllerCommits",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
        "BrokerSendsHeartbeat(b0)",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline ['dir-0']))",
    ]
    last = cx.trace[-1][1]
    assert model.describe(last)["onlineDirs"] == [["dir-1"]]
    assert model.describe(last)["uncommitted"][0]["records"] == [
        "BrokerRegistrationChange(b0, unfenced)", "BrokerRegistrationChange(b0, logDirs ['dir-1'])"]
    assert model.describe(last)["committedImage"]["onlineDirs"] == [["dir-0", "dir-1"]]


def test_without_failovers_the_log_is_not_there():
    model = make_model(settings("dirfailure"))
    s = next(iter(model.init_states()))
    assert (s[COMMITTED_IMAGE], s[UNCOMMITTED]) == ((), ())
    assert model.describe(s)["committedImage"] == {} and model.published(s) is s
