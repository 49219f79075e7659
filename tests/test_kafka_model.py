"""The Kafka model through the engine: exact state counts, every mutant caught, random walks.

Counts and trace lengths are exact on purpose: a change to the model that changes them must
be looked at (and spec/README.md updated with the new figures).
"""

from __future__ import annotations

import importlib.resources
import json
import marshal
import random
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kraftcheck.checker.bfs import explore
from kraftcheck.model import MUTANTS, make_model
from kraftcheck.model.mutants import LIVENESS_MUTANTS
from kraftcheck.model.config import KNOWN
from kraftcheck.model.state import REPAIRED, REPLACED


def config(name: str) -> dict:
    """The ``[model]`` table of ``spec/configs/NAME.toml`` as installed with the package."""
    text = importlib.resources.files("kraftcheck.spec").joinpath("configs", f"{name}.toml").read_text()
    return tomllib.loads(text)["model"]


def check(name: str, **overrides):
    return explore(make_model(dict(config(name), **overrides)), check_deadlock=False)


# -------------------------------------------------------------------------------------------
# Configs and settings
# -------------------------------------------------------------------------------------------

CONFIGS = sorted(p.name[:-5] for p in importlib.resources.files("kraftcheck.spec").joinpath("configs").iterdir() if p.name.endswith(".toml"))


def test_every_concern_has_a_config():
    assert {"default", "ci", "epochgate", "dirfailure", "moves", "designated", "legacy", "uuids", "alterreplicastate", "lossy"} <= set(CONFIGS)


@pytest.mark.parametrize("name", CONFIGS)
def test_config_loads_and_builds(name):
    text = importlib.resources.files("kraftcheck.spec").joinpath("configs", f"{name}.toml").read_text()
    data = tomllib.loads(text)
    assert data["check"]["model"] == "kraftcheck.model:make_model"
    assert data["check"]["deadlock"] is False
    model = make_model(data["model"])
    assert len(list(model.init_states())) == 1


def test_unknown_setting_is_rejected_with_one_line():
    with pytest.raises(ValueError) as e:
        make_model({"brokerz": 2})
    assert str(e.value) == f"unknown model setting 'brokerz' (known: {', '.join(KNOWN)})"


def test_unknown_mutant_is_rejected_with_one_line():
    with pytest.raises(ValueError) as e:
        make_model({"mutant": "x"})
    assert str(e.value) == f"unknown mutant 'x' (known: {', '.join(MUTANTS)})"


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"brokers": 0}, "model setting 'brokers' must be between 1 and 5, not 0"),
        ({"brokers": "two"}, "model setting 'brokers' must be an integer, not 'two'"),
        ({"moves": True}, "model setting 'moves' must be an integer, not True"),
        ({"designated": "yes"}, "model setting 'designated' must be true or false, not 'yes'"),
        ({"brokers": 1}, "model setting 'replication_factor' must be between 1 and brokers (1), not 2"),
        ({"metadata_version": "3.8"}, "model setting 'metadata_version' must be one of 3.5-IV2, 3.6-IV2, 3.7-IV2, not '3.8'"),
        ({"metadata_upgrade": "later"}, "model setting 'metadata_upgrade' must be true or false, not 'later'"),
        ({"failovers": 1, "semantics": "kip"},
         "model setting 'failovers' needs semantics = \"code\": under the KIP's reading the controller writes no records"),
        ({"max_uncommitted": 0}, "model setting 'max_uncommitted' must be between 1 and 100, not 0"),
        ({"failovers": -1}, "model setting 'failovers' must be between 0 and 100, not -1"),
        ({"recovery_tool": -1}, "model setting 'recovery_tool' must be between 0 and 100, not -1"),
        ({"recovery_tool": 3}, "model setting 'recovery_tool' needs records > 0: the tool compares the replicas' logs"),
        ({"tool_epoch": "newest"}, "model setting 'tool_epoch' must be one of current, last_written, not 'newest'"),
        ({"tool_epoch_check": "maybe"}, "model setting 'tool_epoch_check' must be true or false, not 'maybe'"),
    ],
)
def test_bad_values_are_rejected(settings, message):
    with pytest.raises(ValueError) as e:
        make_model(settings)
    assert str(e.value) == message


def test_settings_from_command_line_strings():
    model = make_model({"brokers": "3", "designated": "true", "mutant": "none"})
    assert model.settings.brokers == 3 and model.settings.designated is True


def test_model_declares_its_parts():
    model = make_model(config("ci"))
    assert len(model.actions) == len(set(model.actions)) == 51
    assert set(model.invariants) == {
        "LeaderOnOnlineDir", "FencedBrokerLeadsNothing", "LeaderInIsr", "IsrWithinReplicas", "IsrOnOnlineDirs",
        "OfflineDirsReallyOffline", "ReservedUUIDsNeverReal", "OneDirPerReplica", "NoReplicaRecreatedElsewhere",
        "ElectedWhenPossible", "FailedMoveReverted", "AcknowledgedFailureLeadsNothing", "ControllerStateIsReplayedLog",
        "HighWatermarkWithinLog", "CommittedRecordsSurvive", "OneLeaderCommitsPerEpoch", "IsrHoldsCommittedRecords", "LossesDeclared",
        "IsrElrDisjoint", "ElrOnlyBelowMinIsr", "RegistrationHoldsReportedCordons",
    }
    assert set(model.action_invariants) == {
        "StaleEpochChangesNothing", "EpochsNeverDecrease", "UpdatesOnlyOfflinePartitions", "FencedUntilAssigned",
        "DesignatedElectionSafe", "BrokerEpochOnlyForNewIncarnation", "CleanLeaderFromIsrOrElr",
        "IsrJoinsFromCurrentIncarnation", "IsrJoinsOnlyUnfenced", "ElrLeftOnlyForCause", "RecoveryToolKeepsCommitted",
        "LeaderEpochBumpedOnIsrShrink", "PlacementHonoursReportedCordons", "NewReplicasAvoidCordonedDirs",
        "FetchExposesOnlyLeaderRecords", "FetchAppendsOnlyToLeaderPrefix",
    }
    assert len(model.mutants) >= 10


def test_describe_names_uuids_readably():
    model = make_model(config("ci"))
    view = model.describe(next(iter(model.init_states())))
    assert view["dirIds"] == [["dir-0", "dir-1"], ["dir-2", "dir-3"]]
    assert view["partition"] == ["NoPartition"]
    assert view["brokerStatus"] == ["OFF", "OFF"]


# -------------------------------------------------------------------------------------------
# The correct model
# -------------------------------------------------------------------------------------------


def test_ci_config_all_invariants_hold_exact_count():
    result = check("ci")
    assert result.verdict == "ok"
    assert (result.distinct_states, result.generated_states, result.depth) == (141597, 350343, 48)
    # Every action of the model is taken at these bounds but the lossy network's, the metadata
    # version upgrade with the re-registration it triggers, and the code's session-timeout and
    # heartbeat-timeout paths (ci.toml follows the KIP's reading), and the metadata log's commits
    # and failovers (off without failovers), the brokers' metadata loads (off without lag), the
    # unclean elections (off), a live broker's session expiring (off), controlled shutdowns (off),
    # and the data plane (off without records).
    assert result.never_enabled == [
        "BrokerRefreshesRegistration", "BrokerLosesPower", "BrokerBeginsShutdown", "ControllerHandlesRegistrationAfterSessionTimeout", "ControllerTimesOutHeartbeat",
        "ControllerFencesSilentBroker", "AdminDeletesTopic", "AdminReassignsPartition", "AdminCancelsReassignment", "AdminElectsUncleanLeader", "ControllerElectsUncleanLeaders", "AdminUpgradesMetadataVersion",
            "AdminAltersMinIsr", "AdminTogglesUncleanElection", "AdminElectsPreferredLeader", "AdminCordonsDir", "NetworkLosesMessage", "ControllerCommits", "ControllerFailsOver",
        "BrokerLoadsMetadata", "LeaderStartsEpoch", "LeaderAppendsRecord", "BrokerFlushesLog", "FollowerFetches", "LeaderSendsAlterPartition",
        "LeaderAdvancesHighWatermark", "ControllerHandlesAlterPartition", "BrokerReceivesAlterPartitionResponse",
        "ToolAsksReplicaLogInfo", "ToolElectsLeader"]


#: config -> (distinct states, depth) of the correct model; recorded in spec/README.md.
#: default.toml (1,022,723 states, about a minute) is left to `kraftcheck check` and the bench.
COUNTS = {
    "epochgate": (14893, 37),
    "legacy": (40386, 44),
    "designated": (28936, 39),
    "moves": (29712, 45),
    "alterreplicastate": (35973, 38),
    "uuids": (47531, 40),
    "dirfailure": (62800, 36),
    "lossy": (69457, 36),
    "upgrade": (58175, 38),
    "jbodupgrade": (580, 23),
    "failover": (29680, 36),
    "lag": (202971, 51),
    "dataplane": (11080, 37),
    "rejoin": (30744, 44),
    "livefencing": (51629, 48),
    "isrshrink": (7268, 34),
    "dynamicconfig": (12034, 35),
    "fetch": (227175, 48),
    "fetchelection": (135994, 46),
}


def test_every_config_has_a_recorded_count():
    # heartbeat, restart and oldmetadata hold findings: tests/test_kafka_findings.py asserts their
    # figures; failoverjbod shows findings 1 and 2 through the log: tests/test_kafka_failover.py;
    # disklost, finding 7, and elr, findings 8 and 9: tests/test_kafka_findings.py; uncleantopic
    # (findings 3, 5 and 7 with unclean elections): tests/test_kafka_unclean.py; recovery, finding
    # 10: tests/test_kafka_recovery.py; disklost44 and elr40, Kafka releases' rules:
    # tests/test_kafka_releases.py; lossyprogress, uncleanprogress, failoverprogress and fetchprogress, the progress properties:
    # tests/test_progress.py; cleanshutdown and elr44, finding 8 with Kafka 4.4.0's rules:
    # tests/test_clean_shutdown.py; unclean, its election's declared loss: tests/test_kafka_unclean.py;
    # powerloss, finding 8 on the way: tests/test_power_loss.py; uncleantoggle, its elections'
    # declared losses: tests/test_dynamic_configs.py; cordons and cordonrestart (finding 12):
    # tests/test_cordons.py; movescode and designatedcode, the code's reading past its findings:
    # tests/test_masked_mutants.py; deletion, findings 1 and 2 on the way: tests/test_topic_deletion.py;
    # reassignment, finding 1 on the way: tests/test_reassignment.py
    assert set(COUNTS) | {"ci", "default", "heartbeat", "restart", "oldmetadata", "failoverjbod", "disklost", "elr",
                          "unclean", "uncleantopic", "recovery", "disklost44", "elr40", "lossyprogress",
                          "uncleanprogress", "failoverprogress", "fetchprogress", "cleanshutdown", "elr44", "powerloss",
                          "uncleantoggle", "cordons", "cordonrestart", "movescode", "designatedcode", "deletion",
                          "reassignment"} == set(CONFIGS)


#: searches of over 20 s here, left to CI (`make test`'s 15 minutes; bench/README.md)
SLOW_SEARCHES = {"fetch", "fetchelection", "power_loss_reported_clean", "clean_shutdown_undetected",
                 "unclean_shutdown_kept_in_elr", "single_truncation", "isr_join_below_epoch_start"}


def slow_if_long(names):
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_SEARCHES else n for n in sorted(names)]


@pytest.mark.parametrize("name", slow_if_long(COUNTS))
def test_focused_config_holds_exact_count(name):
    from tests.trace_helpers import config_search

    # the search the main job's test and TLC's agreement read too, made once a run
    result = config_search(name)
    assert result.verdict == "ok"
    assert (result.distinct_states, result.depth) == COUNTS[name]


# -------------------------------------------------------------------------------------------
# Mutants: each caught, by the invariant it is there for, with a shortest trace of known length
# -------------------------------------------------------------------------------------------

#: mutant -> (smallest config that catches it, invariant, trace length in states)
CAUGHT = {
    "skip_epoch_check": ("epochgate", "StaleEpochChangesNothing", 11),
    "stale_offline_dirs": ("epochgate", "OfflineDirsReallyOffline", 12),
    "accept_older_registration": ("epochgate", "EpochsNeverDecrease", 8),
    "elect_ignoring_dirs": ("alterreplicastate", "LeaderOnOnlineDir", 19),
    "no_dirs_all_offline": ("legacy", "ElectedWhenPossible", 11),
    "reserved_uuids": ("uuids", "ReservedUUIDsNeverReal", 5),
    "unfence_before_assigned": ("alterreplicastate", "FencedUntilAssigned", 14),
    "recreate_elsewhere": ("moves", "NoReplicaRecreatedElsewhere", 14),
    "foreign_offline_dirs": ("designated", "UpdatesOnlyOfflinePartitions", 25),
    "designated_with_leader": ("designated", "DesignatedElectionSafe", 15),
    "no_revert_on_dest_failure": ("moves", "FailedMoveReverted", 18),
    "no_lost_on_source_failure": ("moves", "AcknowledgedFailureLeadsNothing", 21),
    "keep_source_after_promotion": ("moves", "OneDirPerReplica", 17),
    "fenced_leader_kept": ("epochgate", "FencedBrokerLeadsNothing", 10),
    "keep_offline_replica_in_isr": ("designated", "IsrOnOnlineDirs", 21),
    "unfence_without_election": ("epochgate", "ElectedWhenPossible", 14),
    "reregistration_new_epoch": ("upgrade", "BrokerEpochOnlyForNewIncarnation", 8),
    "reregistration_fences": ("upgrade", "FencedBrokerLeadsNothing", 14),
    "jbod_below_3_7_iv2": ("jbodupgrade", "AcknowledgedFailureLeadsNothing", 13),
    "replay_ignores_log_dirs": ("failoverjbod", "ControllerStateIsReplayedLog", 9),
    "elect_unacceptable_last_leader": ("elr", "FencedBrokerLeadsNothing", 17),
    "unclean_reregistration_keeps_epochs": ("elr", "FencedBrokerLeadsNothing", 16),
    "alter_partition_stale_broker_epoch": ("rejoin", "IsrJoinsFromCurrentIncarnation", 24),
    "fenced_replica_joins_isr": ("livefencing", "IsrJoinsOnlyUnfenced", 20),
    "clean_shutdown_undetected": ("cleanshutdown", "ElrLeftOnlyForCause", 21),
    "unclean_shutdown_kept_in_elr": ("elr44", "LossesDeclared", 30),
    "unclean_not_recovering": ("unclean", "CleanLeaderFromIsrOrElr", 17),
    "power_loss_reported_clean": ("powerloss", "LossesDeclared", 27),
    "no_leader_epoch_bump_on_isr_shrink": ("isrshrink", "LeaderEpochBumpedOnIsrShrink", 16),
    "min_isr_change_keeps_elr": ("dynamicconfig", "ElrOnlyBelowMinIsr", 17),
    "unclean_config_read_statically": ("uncleantoggle", "UpdatesOnlyOfflinePartitions", 17),
    "cordons_only_of_online_dirs": ("cordons", "RegistrationHoldsReportedCordons", 11),
    "log_dirs_ignore_cordons": ("cordons", "NewReplicasAvoidCordonedDirs", 13),
    "high_watermark_before_truncation": ("fetch", "FetchExposesOnlyLeaderRecords", 26),
    "diverging_epoch_ignored": ("fetch", "FetchExposesOnlyLeaderRecords", 26),
    "single_truncation": ("fetchprogress", "FetchExposesOnlyLeaderRecords", 31),
    "isr_join_below_epoch_start": ("fetchelection", "IsrHoldsCommittedRecords", 38),
}


def test_every_mutant_has_an_expectation():
    # the liveness mutants: tests/test_progress.py
    assert set(CAUGHT) == set(MUTANTS) - set(LIVENESS_MUTANTS)


@pytest.mark.parametrize("mutant", slow_if_long(CAUGHT))
def test_mutant_is_caught(mutant, tmp_path_factory):
    from tests.trace_helpers import mutant_search

    name, invariant, length = CAUGHT[mutant]
    # a config that goes on past its own findings (`continue`) goes on past the mutant's first too
    verdict, violations, _ = mutant_search(tmp_path_factory, mutant)
    assert verdict == "violation"
    found = {v: n for v, n, _ in violations}
    assert invariant in found, found
    assert found[invariant] == length
    # The trace is a legal run of the mutated model from its initial state.
    model = make_model(dict(config(name), mutant=mutant))
    trace = next(t for v, _, t in violations if v == invariant)
    assert trace[0][0] is None and trace[0][1] in list(model.init_states())
    for (_, before), (action, after) in zip(trace, trace[1:]):
        assert (action, after) in model.successors(before)


# -------------------------------------------------------------------------------------------
# Random walks (hypothesis): the correct model never breaks an invariant
# -------------------------------------------------------------------------------------------

WALK_MODELS = {
    name: make_model(dict(config("ci"), **extra))
    for name, extra in {
        "ci": {},
        "bigger": {"brokers": 3, "partitions": 2, "restarts": 2, "dir_failures": 2, "max_messages": 3, "max_losses": 2, "moves": 2},
        "legacy": {"legacy_brokers": 1, "restarts": 1, "max_messages": 2},
    }.items()
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(WALK_MODELS)), st.lists(st.integers(min_value=0, max_value=10**6), max_size=80))
def test_random_walks_never_violate_an_invariant(which, choices):
    model = WALK_MODELS[which]
    state = next(iter(model.init_states()))
    for choice in choices:
        for name, holds in model.invariants.items():
            assert holds(state), (name, model.describe(state))
        steps = model.successors(state)
        if not steps:
            break
        action, nxt = steps[choice % len(steps)]
        for name, holds in model.action_invariants.items():
            assert holds(state, action, nxt), (name, action, model.describe(state))
        assert plain(nxt), nxt
        state = nxt
    json.dumps(model.describe(state))


def plain(value) -> bool:
    """Made only of ints, bools, None and plain tuples: what the engines fingerprint with marshal."""
    if value is None or type(value) in (int, bool):
        return True
    return type(value) is tuple and all(plain(v) for v in value)


def test_successors_are_deterministic_and_states_plain():
    model = make_model(config("ci"))
    init = next(iter(model.init_states()))
    state, rng, seen_actions = init, random.Random(7), set()
    for _ in range(400):
        steps = model.successors(state)
        if not steps:
            state = init
            continue
        assert steps == model.successors(state)
        assert all(plain(action[1:]) and isinstance(action[0], str) for action, _ in steps)
        assert marshal.dumps(state, 2)
        action, state = steps[rng.randrange(len(steps))]
        seen_actions.add(action[0])
    assert len(seen_actions) > 10


def test_stale_heartbeat_counterexample_reads_as_a_story():
    """The skip_epoch_check trace, action by action as a reader sees it: broker 0's heartbeat
    from its first incarnation reaches the controller after the broker re-registered."""
    result = check("epochgate", mutant="skip_epoch_check")
    model = make_model(dict(config("epochgate"), mutant="skip_epoch_check"))
    trace = next(v for v in result.violations if v.name == "StaleEpochChangesNothing").trace
    assert [model.describe_action(a) for a, _ in trace[1:]] == [
        "BrokerStarts(b0)",
        "BrokerSendsRegistration(b0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))",
        "BrokerSendsHeartbeat(b0)",
        "BrokerCrashes(b0)",
        "BrokerStarts(b0)",
        "BrokerSendsRegistration(b0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 2, dirs ['dir-0', 'dir-1']))",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))",
    ]


def test_describe_action_names_restart_fates_and_slots():
    model = make_model(config("ci"))
    assert model.describe_action(("BrokerStarts", 1, ((0, REPAIRED), (1, REPLACED)))) == (
        "BrokerStarts(b1, slot 0 repaired, slot 1 replaced)")
    assert model.describe_action(("BrokerFailsDir", 0, 1)) == "BrokerFailsDir(b0, slot 1)"
    assert model.describe_action(("AdminElectsDesignatedLeader", 0, 1)) == "AdminElectsDesignatedLeader(p0, b1)"
