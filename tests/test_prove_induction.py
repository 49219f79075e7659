"""``kraftcheck prove --induction``: which of the controller's actions keep which invariants
inductively, for every value, and the counterexamples to induction of those that do not."""

from __future__ import annotations

import json

import pytest
import z3

from kraftcheck.proofs import rules
from kraftcheck.proofs.induction import ACTIONS, PROPERTIES, ControllerState, check_induction, handles_heartbeat
from tests.trace_helpers import kraftcheck

#: The steps that are not proven under Kafka's code: the heartbeat that unfences its broker and
#: reports its replica's directory offline (finding 1) leaves it leader there, and, with another
#: unacceptable ISR member, leader outside the ISR (whether a run reaches that is not yet looked
#: up); a new incarnation's registration keeps its leaderships (finding 3): fenced, and on
#: directories it may no longer list.
NOT_INDUCTIVE = {
    ("ControllerHandlesHeartbeat", "LeaderOnOnlineDir"),
    ("ControllerHandlesHeartbeat", "LeaderInIsr"),
    ("ControllerHandlesRegistration", "LeaderOnOnlineDir"),
    ("ControllerHandlesRegistration", "FencedBrokerLeadsNothing"),
}


def results(n: int, mutant: str = "none") -> dict[tuple[str, str], str]:
    return {(c.action, c.prop): c.result for c in check_induction(n, 2, mutant)}


@pytest.mark.parametrize("n", [2, 3])
def test_every_step_but_the_findings_is_proven(n):
    table = results(n)
    assert set(table) == {(a, p.name) for a in ["Init"] + [a.name for a in ACTIONS] for p in PROPERTIES}
    assert {cell for cell, result in table.items() if result != "proven"} == NOT_INDUCTIVE
    assert {table[cell] for cell in NOT_INDUCTIVE} == {"counterexample"}


@pytest.mark.parametrize("mutant,cell", [
    ("fenced_leader_kept", ("ControllerFencesExpiredBroker", "FencedBrokerLeadsNothing")),
    ("elect_ignoring_dirs", ("AdminElectsDesignatedLeader", "LeaderOnOnlineDir")),
])
def test_a_mutant_breaks_the_step_it_puts_a_bug_into(mutant, cell):
    table = results(3, mutant)
    assert table[cell] == "counterexample"
    assert results(3)[cell] == "proven"


def test_the_heartbeat_counterexample_is_finding_1():
    """Fenced broker 0 leads nothing; its heartbeat both unfences it and reports its replica's
    directory offline: both records are computed from the image, so the election makes it leader
    and the offline record, finding no leader change against the image, leaves it so."""
    pre, post = ControllerState(2, 2, ""), ControllerState(2, 2, "'")
    solver = z3.Solver()
    r0 = pre.registrations[0]
    solver.add(*[p.holds(pre, "none") for p in PROPERTIES], handles_heartbeat(pre, post, 0, "none"),
               pre.created, pre.partition.leader == -1, pre.partition.isr[0], r0.fenced, r0.dirs[0][0],
               pre.partition.dirs[0] == r0.dirs[0][1], pre.registrations[1].fenced,
               r0.dirs[1][0], z3.Bool("reports_dir0_offline_b0'"), z3.Not(z3.Bool("reports_dir1_offline_b0'")),
               z3.Not(z3.Bool("want_fence_b0'")))
    assert solver.check() == z3.sat
    model = solver.model()
    assert model.eval(post.partition.leader).as_long() == 0
    assert z3.is_false(model.eval(rules.is_online(post.partition.dirs[0], post.registrations[0]), model_completion=True))


def test_prove_induction_exits_12_with_its_table_and_counterexamples(tmp_path):
    summary = tmp_path / "induction.json"
    p = kraftcheck("prove", "--induction", "--n", "3", "--json", summary)
    assert p.returncode == 12, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == ("checking 36 induction steps for 3 brokers with up to 2 directories each, 128-bit directory "
                        "IDs, 64-bit broker epochs")
    assert "ControllerHandlesHeartbeat does not keep LeaderOnOnlineDir: a counterexample to induction" in lines
    assert "  IsrNotEmpty (helper)" in p.stdout.replace("Init                           ", "")
    assert lines[-1].startswith("not inductive: a counterexample to induction (reachable or not: not looked up) (")
    data = json.loads(summary.read_text())
    assert (data["verdict"], data["exit_code"], data["brokers"]) == ("not inductive", 12, 3)
    assert {(s["action"], s["property"]) for s in data["steps"] if s["result"] == "counterexample"} == NOT_INDUCTIVE
    heartbeat = next(s for s in data["steps"] if (s["action"], s["property"]) == (
        "ControllerHandlesHeartbeat", "LeaderOnOnlineDir"))
    assert heartbeat["before"][-1].startswith("partition: leader none, isr [")
    assert heartbeat["after"][-1].startswith("partition: leader ")
