"""A live broker fenced, and back (model setting ``session_expiries``): the controller's session
of a running broker expires (a pause, heartbeats lost or late), it is fenced as any expired
broker, and it comes back as the same incarnation through its own heartbeats.  Exact figures,
a run step by step, TLC's counts, and Kafka's controllers on the same steps."""

from __future__ import annotations

import importlib.resources
import re
import tomllib
from pathlib import Path

import pytest

from kraftcheck.model import make_model
from kraftcheck.model.state import FENCED, INCARNATION, KNOWN_EPOCH, PARTITION, RUNNING, SESSIONS_EXPIRED, STATUS
from tests.trace_helpers import config_search

SPEC = Path(importlib.resources.files("kraftcheck.spec"))


def settings(name: str, **overrides) -> dict:
    return dict(tomllib.loads((SPEC / "configs" / f"{name}.toml").read_text())["model"], **overrides)


@pytest.mark.parametrize("name, overrides, figures, violated", [
    # one broker, a failure: findings 1 and 2 come sooner (15 and 11 states instead of 16 and 12)
    ("heartbeat", {}, (657, 1_415, 22), [("LeaderOnOnlineDir", 16), ("IsrOnOnlineDirs", 16), ("FencedUntilAssigned", 12)]),
    ("heartbeat", {"session_expiries": 1}, (1_833, 4_441, 23),
     [("LeaderOnOnlineDir", 15), ("IsrOnOnlineDirs", 15), ("AcknowledgedFailureLeadsNothing", 17),
      ("FencedUntilAssigned", 11)]),
    # two brokers, a restart, the KIP's reading: every invariant holds with a live broker fenced
    ("restart", {"semantics": "kip", "session_expiries": 1}, (45_065, 164_459, 38), []),
    ("restart", {"session_expiries": 1}, (72_785, 319_897, 39), [("FencedBrokerLeadsNothing", 15)]),
])
def test_exact_figures(name, overrides, figures, violated):
    result = config_search(name, keep_going=True, **overrides)  # made once a run: other tests read it too
    assert (result.distinct_states, result.generated_states, result.depth) == figures
    assert [(v.name, v.length) for v in result.violations] == violated


def run(model, labels: list[str]):
    """The states of the run taking the steps ``labels`` name, in order, from the first initial state."""
    [state] = model.init_states()
    states = [state]
    for label in labels:
        steps = {model.describe_action(a): t for a, t in model.successors(state)}
        assert label in steps, (label, sorted(steps))
        state = steps[label]
        states.append(state)
    return states


STARTED = ["BrokerStarts(b0)", "BrokerSendsRegistration(b0)",
           "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
           "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
           "BrokerSendsHeartbeat(b0)", "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
           "ControllerCreatesPartition(p0)"]


@pytest.mark.parametrize("semantics", ["code", "kip"])
def test_a_running_leader_fenced_loses_its_leadership_and_its_next_heartbeat_brings_it_back(semantics):
    model = make_model(settings("heartbeat", session_expiries=1, semantics=semantics, dir_failures=0))
    states = run(model, STARTED + [
        # its replica placed and assigned (the KIP's reading unfences no broker with one UNASSIGNED)
        "BrokerConsumesMetadata(b0, p0)", "BrokerSendsAssignment(b0, p0)",
        "ControllerHandlesAssignment(AssignReplicasToDirs(b0, epoch 1, p0 -> dir-0))",
        "BrokerReceivesAssignmentResponse(AssignReplicasToDirsResponse(b0, epoch 1, p0 -> dir-0, ok))",
        "ControllerFencesSilentBroker(b0)",
        "BrokerSendsHeartbeat(b0)", "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))"])
    led, fenced, back = states[-4], states[-3], states[-1]
    assert (led[PARTITION][0][0], led[FENCED][0]) == (0, False)
    # fenced while its process runs, as the same incarnation with the same epoch
    assert (fenced[FENCED][0], fenced[PARTITION][0][0], fenced[SESSIONS_EXPIRED]) == (True, -1, 1)
    assert (fenced[STATUS][0], fenced[INCARNATION][0], fenced[KNOWN_EPOCH][0]) == (RUNNING, 1, 1)
    # its heartbeat unfences it and the leaderless partition elects it again
    assert (back[FENCED][0], back[PARTITION][0][0]) == (False, 0)
    # once: the bound is used up
    assert "ControllerFencesSilentBroker(b0)" not in {model.describe_action(a) for a, _ in model.successors(back)}


def test_without_session_expiries_no_running_broker_is_fenced_by_its_session():
    model = make_model(settings("heartbeat", dir_failures=0))
    [led] = run(model, STARTED)[-1:]
    assert not any(a[0] == "ControllerFencesSilentBroker" for a, _ in model.successors(led))


def test_a_dead_broker_is_fenced_by_the_other_action_and_uses_no_expiry():
    model = make_model(settings("heartbeat", session_expiries=1, dir_failures=0))
    states = run(model, STARTED + ["BrokerCrashes(b0)", "ControllerFencesExpiredBroker(b0)"])
    assert (states[-1][FENCED][0], states[-1][SESSIONS_EXPIRED]) == (True, 0)
    assert not any(a[0] == "ControllerFencesSilentBroker" for a, _ in model.successors(states[-2]))


def test_the_setting_is_bounded():
    with pytest.raises(ValueError, match=r"^model setting 'session_expiries' must be between 0 and 100, not -1$"):
        make_model({"session_expiries": -1})


@pytest.mark.slow
@pytest.mark.exhaustive  # TLC over a minute: `make test-all`, not CI
@pytest.mark.parametrize("name, overrides, figures", [
    ("heartbeat", {"MaxSessionExpiries": "1"}, (1_833, 4_441, 23)),
    ("restart", {"MaxSessionExpiries": "1", "Semantics": '"kip"'}, (45_065, 164_459, 38)),
])
def test_tlc_finds_the_same_states(name, overrides, figures):
    theirs = tlc_with(name, overrides)
    assert (theirs.distinct, theirs.generated, theirs.depth) == figures, theirs.output[-2000:]


def tlc_with(name: str, overrides: dict[str, str]):
    """TLC on spec/NAME.cfg with some constants set otherwise, going on past violations."""
    from kraftcheck.checker.tlc import run_tlc

    cfg = (SPEC / f"{name}.cfg").read_text()
    for constant, value in overrides.items():
        cfg, changed = re.subn(rf"(?m)^(\s+{constant} = ).*$", lambda m: m.group(1) + value, cfg)
        assert changed == 1, constant
    return run_tlc(SPEC / "KRaftJBOD.tla", cfg, check_deadlock=False, keep_going=True)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["4.0.0", "4.4.0"])
def test_walks_with_a_live_broker_fenced_conform_to_kafkas_controller(version):
    """Kafka's controller cannot tell a paused broker from a dead one: the same fencing."""
    from kraftcheck.conform.harness import Harness
    from kraftcheck.conform.run import conform_all, load_sources

    configs = [str(SPEC / "configs" / f"{name}.toml") for name in ("restart", "elr", "dirfailure", "heartbeat")]
    sources = load_sources([], configs, ["session_expiries=1", "semantics=code"], 150, 40, 3, follow=version)
    with Harness(kafka_version=version) as harness:
        report = conform_all(sources, harness, allow_explained=False)
    assert report.divergence is None, "\n".join([report.divergence[0]] + report.divergence[1].report())
    assert report.runs == 600
    assert report.by_action["ControllerFencesSilentBroker"] >= 100
