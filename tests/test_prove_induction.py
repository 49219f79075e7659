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
#: directories it may no longer list; an assignment to an offline directory elects its broker in
#: the first record, judged on the old directory, and the second, from the same image, leaves the
#: leader alone (finding 6 after finding 5's leaderless state; outside the ISR: not yet reached).
NOT_INDUCTIVE = {
    ("ControllerHandlesHeartbeat", "LeaderOnOnlineDir"),
    ("ControllerHandlesHeartbeat", "LeaderInIsr"),
    ("ControllerHandlesRegistration", "LeaderOnOnlineDir"),
    ("ControllerHandlesRegistration", "FencedBrokerLeadsNothing"),
    ("ControllerHandlesAssignment", "LeaderOnOnlineDir"),
    ("ControllerHandlesAssignment", "LeaderInIsr"),
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
    summary, ctis = tmp_path / "induction.json", tmp_path / "ctis"
    p = kraftcheck("prove", "--induction", "--n", "3", "--json", summary, "--cti-dir", ctis)
    assert p.returncode == 12, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == ("checking 48 induction steps for 3 brokers with up to 2 directories each, 128-bit directory "
                        "IDs, 64-bit broker epochs, the handlers as Kafka's code runs them")
    assert ("ControllerHandlesHeartbeat does not keep LeaderOnOnlineDir: a counterexample to induction; reachable: "
            "1 broker × 2 dirs, ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline ['dir-0'])) from a state at "
            "depth 14: a real violation") in lines
    assert ("ControllerHandlesHeartbeat does not keep LeaderInIsr: a counterexample to induction; no run reaches it "
            "at the lookup configs (1 broker × 2 dirs; 2 brokers × 1 dir): the invariant needs strengthening, or "
            "larger bounds reach it") in lines
    assert lines[-1].startswith("a step breaks an invariant from a reachable state (")
    data = json.loads(summary.read_text())
    assert (data["verdict"], data["exit_code"], data["brokers"]) == ("violated", 12, 3)
    assert {(s["action"], s["property"], s["reachable"], s.get("depth"))
            for s in data["steps"] if s["result"] == "counterexample"} == {
        ("ControllerHandlesHeartbeat", "LeaderOnOnlineDir", True, 14),
        ("ControllerHandlesHeartbeat", "LeaderInIsr", False, None),
        ("ControllerHandlesRegistration", "LeaderOnOnlineDir", True, 14),
        ("ControllerHandlesRegistration", "FencedBrokerLeadsNothing", True, 10),
        ("ControllerHandlesAssignment", "LeaderOnOnlineDir", True, 20),
        ("ControllerHandlesAssignment", "LeaderInIsr", False, None)}
    reachable = {(s["action"], s["property"]) for s in data["steps"] if s.get("reachable")}
    assert sorted(path.name for path in ctis.iterdir()) == sorted(
        [f"{action}_{prop}.itf.json" for action, prop in NOT_INDUCTIVE]
        + [f"{action}_{prop}.run.itf.json" for action, prop in reachable])
    replayed = kraftcheck("trace", "replay", ctis / "ControllerHandlesAssignment_LeaderOnOnlineDir.run.itf.json")
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.strip() == ("valid: 22 states, every step a legal transition of kraftcheck.model:make_model; "
                                       "state 22 violates LeaderOnOnlineDir")
    # a reachable one: the model's own step from the reachable state, which trace show displays
    shown = kraftcheck("trace", "show", ctis / "ControllerHandlesHeartbeat_LeaderOnOnlineDir.itf.json")
    assert shown.returncode == 0, shown.stderr
    assert "── 2/2 ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline ['dir-0']))" in shown.stdout
    assert "   partition[0].leader: -1 → 0" in shown.stdout
    document = json.loads((ctis / "ControllerHandlesHeartbeat_LeaderInIsr.itf.json").read_text())
    assert (document["#meta"]["kind"], document["#meta"]["reachable"], len(document["states"])) == (
        "counterexample to induction", False, 2)


def test_the_lookup_replays_as_a_model_step():
    """A reachable counterexample's two states are a step of the model: its successor."""
    from kraftcheck.proofs.reach import classify

    cells = [c for c in check_induction(2, 2) if c.result == "counterexample"]
    classify(cells, "none")
    for cell in cells:
        if cell.reached is not None:
            r = cell.reached
            assert (r.action, r.post) in list(r.model.successors(r.pre))
            assert not r.model.invariants[cell.prop](r.post)


def test_cti_dir_needs_induction(tmp_path):
    p = kraftcheck("prove", "--cti-dir", tmp_path)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr.strip().endswith("--cti-dir goes with --induction: the rule lemmas have no counterexamples to induction")


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_under_the_kips_reading_every_step_is_proven(n):
    """KIP-858's handlers (offline directories before the unfencing, a new incarnation out of
    its partitions, fencing out of every partition): the three invariants with the helpers
    are inductive for these actions."""
    assert {c.result for c in check_induction(n, 2, semantics="kip")} == {"proven"}


def test_prove_induction_kip_exits_0(tmp_path):
    summary = tmp_path / "induction.json"
    p = kraftcheck("prove", "--induction", "--semantics", "kip", "--n", "5", "--json", summary)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].endswith("the handlers as KIP-858 reads them")
    assert p.stdout.splitlines()[-1].startswith("every step proven: the invariants are inductive for these actions (")
    data = json.loads(summary.read_text())
    assert (data["verdict"], data["semantics"], len(data["steps"])) == ("proven", "kip", 48)


def test_under_the_kips_reading_a_mutant_is_a_reachable_violation():
    p = kraftcheck("prove", "--induction", "--semantics", "kip", "--mutant", "fenced_leader_kept")
    assert p.returncode == 12, p.stderr
    assert ("ControllerFencesExpiredBroker does not keep FencedBrokerLeadsNothing: a counterexample to induction; "
            "reachable: 1 broker × 2 dirs, ControllerFencesExpiredBroker(b0) from a state at depth 8: a real "
            "violation") in p.stdout.splitlines()
    assert "note:" not in p.stderr


def test_semantics_needs_induction():
    p = kraftcheck("prove", "--semantics", "kip")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr.strip().endswith("--semantics goes with --induction: the rule lemmas hold under both readings")


def test_a_counterexample_that_cannot_be_written_loses_neither_the_table_nor_the_verdict(tmp_path, monkeypatch,
                                                                                       capsys):
    import errno

    from kraftcheck.checker.cli import main
    from kraftcheck.proofs import reach

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(reach, "write_cti", full_disk)
    assert main(["prove", "--induction", "--n", "1", "--cti-dir", str(tmp_path / "ctis")]) == 12
    out, err = capsys.readouterr()
    assert out.rstrip().splitlines()[-1].startswith("a step breaks an invariant from a reachable state (")
    assert "ControllerHandlesHeartbeat does not keep LeaderOnOnlineDir: a counterexample to induction" in out
    assert "written to" not in out
    assert err.splitlines()[0] == (f"kraftcheck: error: cannot write the counterexample of ControllerHandlesHeartbeat "
                                   f"against LeaderOnOnlineDir to {tmp_path / 'ctis'}: No space left on device")


def test_a_counterexample_folder_that_is_a_dangling_link_is_refused_before_the_proof(tmp_path, capsys):
    from kraftcheck.checker.cli import main

    (tmp_path / "ctis").symlink_to(tmp_path / "gone" / "ctis")
    assert main(["prove", "--induction", "--n", "1", "--cti-dir", str(tmp_path / "ctis")]) == 2
    assert capsys.readouterr().err == (f"kraftcheck: error: cannot write counterexamples to {tmp_path / 'ctis'}: "
                                       "it is a symbolic link to a missing folder\n")
