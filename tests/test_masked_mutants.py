"""The mutants the code's reading masks at their configs (spec/README.md, "Mutants"):
moves.toml and designated.toml pin the KIP's reading, and under the code's their searches stop at
findings 1 and 2 before a mutant's violation.  movescode.toml and designatedcode.toml are the same
bounds under the code's reading, going on past what Kafka's code breaks there (``continue``): a
mutant is caught there by a violation whose trace the model without it cannot take."""

from __future__ import annotations

import pytest

from tests.test_cli import REPO, kraftcheck
from tests.test_mutants import rows_of
from tests.trace_helpers import config_search

CONFIGS = REPO / "spec" / "configs"


@pytest.mark.parametrize("name, states, generated, depth, violations", [
    ("movescode", 54_756, 166_230, 43, {"LeaderOnOnlineDir": 16, "FencedBrokerLeadsNothing": 12, "IsrOnOnlineDirs": 16,
                                        "ElectedWhenPossible": 19, "AcknowledgedFailureLeadsNothing": 18,
                                        "FencedUntilAssigned": 12}),
    ("designatedcode", 56_449, 159_171, 39, {"LeaderOnOnlineDir": 21, "IsrOnOnlineDirs": 21, "FencedUntilAssigned": 14}),
])
def test_the_code_configs_show_kafkas_violations_and_go_on(name, states, generated, depth, violations):
    result = config_search(name, keep_going=True)  # made once a run: other tests read it too
    assert (result.distinct_states, result.generated_states, result.depth) == (states, generated, depth)
    assert {v.name: v.length for v in result.violations} == violations


#: mutant -> (config, trace length, the properties its own traces break, shortest first)
CAUGHT_UNDER_CODE = {
    "foreign_offline_dirs": ("designatedcode", 23, "ElectedWhenPossible, LeaderInIsr, AcknowledgedFailureLeadsNothing, "
                                                   "FencedBrokerLeadsNothing"),
    "keep_source_after_promotion": ("movescode", 17, "OneDirPerReplica, NoReplicaRecreatedElsewhere, FailedMoveReverted"),
    # ElectedWhenPossible fails without the mutant too, in as many states: the mutant's shortest
    # trace is not a run of the correct model (the baseline's is finding 5's assignment)
    "no_lost_on_source_failure": ("movescode", 19, "ElectedWhenPossible"),
    "no_revert_on_dest_failure": ("movescode", 18, "FailedMoveReverted"),
    "recreate_elsewhere": ("movescode", 14, "NoReplicaRecreatedElsewhere, OneDirPerReplica, ElectedWhenPossible"),
}


def test_the_masked_mutants_are_caught_under_the_codes_reading():
    """Five of the eight; keep_offline_replica_in_isr stays masked: finding 1 breaks its
    invariant, IsrOnOnlineDirs, in as many states, by a run both models take."""
    mutants = [*CAUGHT_UNDER_CODE, "keep_offline_replica_in_isr"]
    selection = [arg for mutant in mutants for arg in ("--mutant", mutant)]
    p = kraftcheck("mutants", CONFIGS / "movescode.toml", CONFIGS / "designatedcode.toml", *selection, "--quiet")
    assert p.returncode == 4, p.stdout + p.stderr
    rows = {row[0]: row for row in rows_of(p.stdout)[1:-1]}
    for mutant, (name, length, violated) in CAUGHT_UNDER_CODE.items():
        assert rows[mutant] == [mutant, "caught", name, str(length), violated]
    assert rows["keep_offline_replica_in_isr"] == ["keep_offline_replica_in_isr", "missed", "-", "-", "-"]
    assert rows_of(p.stdout)[-1] == ["mutation score: 5/6 caught; missed: keep_offline_replica_in_isr"]


def test_the_code_reading_never_reads_the_older_registration_switch():
    """accept_older_registration removes the KIP's reading's check of a registration's epoch; the
    code's registration has no such check (the controller gives each new incarnation the next
    epoch), so the mutant changes nothing there."""
    plain = config_search("designatedcode", keep_going=True)
    mutated = config_search("designatedcode", keep_going=True, mutant="accept_older_registration")
    assert (mutated.distinct_states, mutated.generated_states) == (plain.distinct_states, plain.generated_states)
