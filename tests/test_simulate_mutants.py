"""Simulation and minimisation on every shipped mutant, at the config that catches it (seed 1,
walks of at most 300 states): the walks that meet the mutant's violation, and its trace made as
short as breadth-first search's, as bench/README.md's table has them.  The mutants no walk
meets need an interleaving too rare for random walks: the test says so by taking walks that
do not meet them."""

from __future__ import annotations

import pytest

from kraftcheck.checker.bfs import OnlyProperty, explore
from kraftcheck.checker.config import CheckConfig, build_model, load_config
from kraftcheck.checker.simulation import simulate
from kraftcheck.model.mutants import CAUGHT_AT, LIVENESS_MUTANTS
from kraftcheck.traces.minimize import minimize, violation_test

pytestmark = pytest.mark.slow

#: mutant -> (walks up to the first that meets it, its property, the trace's states, minimised
#: and BFS's shortest); None: no walk of the first 5,000 meets it
FOUND = {
    "accept_older_registration": (28, "EpochsNeverDecrease", 12, 8),
    "fenced_leader_kept": (20, "FencedBrokerLeadsNothing", 13, 10),
    "keep_source_after_promotion": (3871, "OneDirPerReplica", 29, 17),
    "no_dirs_all_offline": (1008, "ElectedWhenPossible", 20, 11),
    "replay_ignores_log_dirs": (108, "ControllerStateIsReplayedLog", 10, 9),
    "reregistration_fences": (1778, "FencedBrokerLeadsNothing", 19, 14),
    "reregistration_new_epoch": (38, "BrokerEpochOnlyForNewIncarnation", 13, 8),
    "reserved_uuids": (1, "ReservedUUIDsNeverReal", 10, 5),
    "skip_epoch_check": (801, "StaleEpochChangesNothing", 14, 11),
    "stale_offline_dirs": (1793, "StaleEpochChangesNothing", 12, 12),
    "unfence_before_assigned": (672, "FencedUntilAssigned", 19, 14),
    "unfence_without_election": (1112, "ElectedWhenPossible", 18, 14),
    "cordons_only_of_online_dirs": (194, "RegistrationHoldsReportedCordons", 15, 11),
    "log_dirs_ignore_cordons": (3013, "NewReplicasAvoidCordonedDirs", 16, 13),
}
#: mutants whose config breaks another property of its own first (cordons.toml: finding 2's
#: FencedUntilAssigned, which random walks meet before the mutant's): walked with the mutant's
#: property alone, (its kind)
OWN_PROPERTY_ONLY = {"log_dirs_ignore_cordons": "action"}
UNMET_WALKS = 5000
#: fewer for the config whose walks run long: fetchelection.toml has no crash to end a run early,
#: and every walk runs to the depth bound (300 walks: 89,700 steps, 31 s; 5,000 took 476 s in CI)
UNMET_WALKS_OF = {"isr_join_below_epoch_start": 300}


def mutant_model(mutant: str):
    config = load_config(CAUGHT_AT[mutant])
    model = build_model(CheckConfig(config.model, {**config.settings, "mutant": mutant}, dict(config.check),
                                    config.source))
    if mutant in OWN_PROPERTY_ONLY:
        return OnlyProperty(model, OWN_PROPERTY_ONLY[mutant], FOUND[mutant][1])
    return model


def test_every_mutant_is_in_the_table_or_unmet():
    assert set(FOUND) <= set(CAUGHT_AT)
    assert len(CAUGHT_AT) == 43 and len(FOUND) == 14


#: simulation checks invariants and step properties only: the liveness mutants are the liveness
#: phase's (tests/test_progress.py)
@pytest.mark.parametrize("mutant", sorted(set(CAUGHT_AT) - set(LIVENESS_MUTANTS)))
def test_a_simulated_trace_minimises_to_bfs_s_length(mutant):
    model = mutant_model(mutant)
    if mutant not in FOUND:
        walks = UNMET_WALKS_OF.get(mutant, UNMET_WALKS)
        unmet = simulate(model, walks=walks, depth=300, seed=1, check_deadlock=False)
        assert (unmet.verdict, unmet.walks) == ("incomplete", walks)
        return
    walks, name, length, shortest = FOUND[mutant]
    found = simulate(model, walks=20000, depth=300, seed=1, check_deadlock=False)
    cx = found.violations[0]
    assert (found.walks, cx.name, cx.length) == (walks, name, length)
    short = minimize(model, cx.trace[0][1], cx.trace[1:], violation_test(model, cx.kind, cx.name))
    bfs = explore(OnlyProperty(model, cx.kind, cx.name), check_deadlock=False).violations[0]
    assert (short.length, bfs.length) == (shortest, shortest)
    # the minimised run is the model's and still breaks the property at its end
    state = short.start
    for action, successor in short.steps:
        assert (action, successor) in list(model.successors(state))
        state = successor
    bad = violation_test(model, cx.kind, cx.name)
    previous = short.steps[-2][1] if len(short.steps) > 1 else short.start
    assert bad(previous, short.steps[-1][0], state)
