"""kraftcheck prove: the z3 terms agree with the model's Python rules on drawn inputs, every lemma
is proven for the model as it is, and each rule mutant refutes exactly its lemmas."""

from __future__ import annotations

import json

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.model import MUTANTS, make_model
from kraftcheck.model.state import NO_LEADER_CHANGE
from kraftcheck.model.uuids import FIRST_REAL, is_online, is_reserved
from kraftcheck.proofs import rules
from kraftcheck.proofs.lemmas import LEMMAS, RULE_MUTANTS
from kraftcheck.proofs.run import prove_all
from tests.trace_helpers import kraftcheck

DIRS = 3
#: the model's small-int directory IDs: the markers, the other reserved value, a few real ones
SMALL_UUIDS = st.integers(min_value=0, max_value=FIRST_REAL + 5)


def uuid128(small: int) -> int:
    """The model's directory ID as a Kafka Uuid: the reserved ones are Uuid(0, n), a real one has a
    non-zero most significant half."""
    return small if small < FIRST_REAL else (1 << 64) | small


def truth(term) -> bool:
    value = z3.simplify(term)
    assert z3.is_true(value) or z3.is_false(value), value
    return z3.is_true(value)


def registration(epoch: int, fenced: bool, online: tuple[int, ...]) -> rules.Registration:
    slots = [(z3.BoolVal(True), z3.BitVecVal(uuid128(d), rules.UUID_BITS)) for d in online]
    slots += [(z3.BoolVal(False), z3.BitVecVal(0, rules.UUID_BITS))] * (DIRS - len(online))
    return rules.Registration(z3.BitVecVal(epoch, rules.EPOCH_BITS), z3.BoolVal(fenced), slots)


ONLINE = st.lists(st.integers(min_value=FIRST_REAL, max_value=FIRST_REAL + 5), max_size=DIRS, unique=True).map(
    lambda dirs: tuple(sorted(dirs)))


@given(st.integers(min_value=0, max_value=2 ** 128 - 1))
def test_reserved_is_kafkas_definition(uuid):
    assert truth(rules.reserved(z3.BitVecVal(uuid, 128))) == (uuid >> 64 == 0 and (uuid & (2 ** 64 - 1)) < 100)


@given(SMALL_UUIDS)
def test_reserved_agrees_with_the_models_small_ids(small):
    assert truth(rules.reserved(z3.BitVecVal(uuid128(small), 128))) == is_reserved(small)


@given(SMALL_UUIDS, ONLINE)
def test_is_online_agrees(directory, online):
    term = rules.is_online(z3.BitVecVal(uuid128(directory), 128), registration(1, False, online))
    assert truth(term) == is_online(directory, online)


def kafka(brokers: int, mutant: str = "none"):
    return make_model({"brokers": brokers, "replication_factor": brokers, "partitions": 1, "mutant": mutant})


def with_registrations(model, registrations, partition=None):
    s = next(iter(model.init_states()))
    epochs, fenced, online = zip(*registrations)
    s = model._with(s, brokerEpoch=tuple(epochs), fenced=tuple(fenced), onlineDirs=tuple(online))
    return model._with(s, partition=(partition,)) if partition is not None else s


REGISTRATIONS = st.tuples(st.integers(min_value=0, max_value=3), st.booleans(), ONLINE)


@settings(max_examples=200)
@given(st.sampled_from(["none", "elect_ignoring_dirs", "no_dirs_all_offline"]), REGISTRATIONS, SMALL_UUIDS)
def test_acceptable_leader_agrees(mutant, reg, directory):
    model = kafka(1, mutant)
    s = with_registrations(model, [reg])
    term = rules.acceptable_leader(z3.BitVecVal(uuid128(directory), 128), registration(*reg), mutant)
    assert truth(term) == model.acceptable_leader(s, 0, directory)


@settings(max_examples=300)
@given(st.integers(min_value=1, max_value=3).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(REGISTRATIONS, min_size=n, max_size=n),
    st.integers(min_value=-1, max_value=n - 1),
    st.lists(st.booleans(), min_size=n, max_size=n).filter(any),
    st.lists(SMALL_UUIDS, min_size=n, max_size=n),
    st.sampled_from([None] + list(range(n))),
    st.sampled_from([None] + list(range(n))),
    st.sampled_from(["none", "elect_ignoring_dirs", "no_dirs_all_offline", "keep_offline_replica_in_isr"]))))
def test_election_agrees_with_partition_change_record(case):
    n, regs, leader, isr_flags, dirs, remove, add = case[:7]
    mutant = case[7]
    model = kafka(n, mutant)
    isr = tuple(r for r in range(n) if isr_flags[r])
    part = (leader, isr, tuple(dirs), 0, 0, (), (), False, model.replicas[0], (), ())  # no reassignment under way
    s = with_registrations(model, regs, part)
    keep = mutant == "keep_offline_replica_in_isr" and remove is not None
    record = model.partition_change_record(s, 0, remove=-1 if remove is None else remove,
                                           add=-1 if add is None else add, keep_in_isr=keep)
    if record is None:
        expected_leader, expected_isr = leader, isr
    else:
        expected_leader = leader if record[2] == NO_LEADER_CHANGE else record[2]
        expected_isr = isr if record[3] is None else record[3]
    partition = rules.Partition(z3.IntVal(leader), [z3.BoolVal(f) for f in isr_flags],
                                [z3.BitVecVal(uuid128(d), 128) for d in dirs])
    new_leader, new_isr = rules.elect(partition, [registration(*r) for r in regs], mutant, remove=remove, add=add,
                                      keep_in_isr=keep)
    assert z3.simplify(new_leader).as_long() == expected_leader
    assert tuple(r for r in range(n) if truth(new_isr[r])) == expected_isr


@given(st.sampled_from(["none", "skip_epoch_check"]), REGISTRATIONS, st.integers(min_value=-2, max_value=4))
def test_epoch_gate_agrees(mutant, reg, epoch):
    model = kafka(1, mutant)
    s = with_registrations(model, [reg])
    passes = model.epoch_is_current(s, 0, epoch) or (mutant == "skip_epoch_check" and model.registered(s, 0))
    assert truth(rules.epoch_gate(registration(*reg), z3.BitVecVal(epoch, 64), mutant)) == passes


@settings(max_examples=200)
@given(st.sampled_from(["none", "reserved_uuids"]), st.booleans(),
       st.lists(SMALL_UUIDS, max_size=DIRS), ONLINE)
def test_registration_valid_agrees(mutant, legacy, dirs, others_online):
    model = make_model({"brokers": 2, "replication_factor": 1, "legacy_brokers": 1 if legacy else 0, "mutant": mutant})
    s = with_registrations(model, [(0, True, ()), (1, False, others_online)])
    request = [(z3.BoolVal(True), z3.BitVecVal(uuid128(d), 128)) for d in dirs]
    request += [(z3.BoolVal(False), z3.BitVecVal(0, 128))] * (DIRS - len(dirs))
    term = rules.registration_valid(request, legacy, [registration(1, False, others_online)], mutant)
    assert truth(term) == model.registration_valid(s, 0, tuple(dirs))


# ------------------------------------------------------------------ the lemmas


def test_every_lemma_is_proven_for_every_size_the_command_takes():
    """As the README says: every --n from 1 to 10, every --dirs from 1 to 4."""
    for n in range(1, 11):
        for dirs in range(1, 5):
            outcomes = prove_all(n, dirs)
            assert [(o.name, o.result) for o in outcomes] == [(lemma.name, "proven") for lemma in LEMMAS], (n, dirs)


def test_the_rule_mutants_and_the_lemmas_they_break():
    assert RULE_MUTANTS == {
        "reserved_uuids": ("RegistrationRejectsReserved",),
        "skip_epoch_check": ("EpochGateExact",),
        "elect_ignoring_dirs": ("ElectedLeaderAcceptable", "DesignatedElectionSafe"),
        "no_dirs_all_offline": ("ElectedWhenPossible",),
        "keep_offline_replica_in_isr": ("FailedReplicaLeaves",),
        "fenced_leader_kept": ("FencedBrokerLeadsNothing",),
        "designated_with_leader": ("DesignatedElectionSafe",),
    }
    assert set(RULE_MUTANTS) <= set(MUTANTS)


@pytest.mark.parametrize("mutant", sorted(RULE_MUTANTS))
def test_each_rule_mutant_refutes_exactly_its_lemmas(mutant):
    outcomes = prove_all(3, 2, mutant)
    assert sorted(o.name for o in outcomes if o.result == "refuted") == sorted(RULE_MUTANTS[mutant])
    assert all(o.result in ("proven", "refuted") for o in outcomes)
    refuted = next(o for o in outcomes if o.result == "refuted")
    assert refuted.counterexample[0].startswith("broker 0: ") and len(refuted.counterexample) >= 4


# ------------------------------------------------------------------ the command


def test_prove_exit_0_and_its_summary(tmp_path):
    summary = tmp_path / "proof.json"
    p = kraftcheck("prove", "--n", "4", "--json", summary)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == ("proving 8 lemmas for 4 brokers with up to 2 directories each, 128-bit directory IDs, "
                        "64-bit broker epochs")
    assert [line.split()[:2] for line in lines[1:9]] == [[lemma.name, "proven"] for lemma in LEMMAS]
    assert lines[-1].startswith("every lemma proven (")
    data = json.loads(summary.read_text())
    assert (data["verdict"], data["exit_code"], data["brokers"], data["dirs"], data["mutant"]) == (
        "proven", 0, 4, 2, "none")
    assert [(entry["name"], entry["result"], entry["counterexample"]) for entry in data["lemmas"]] == [
        (lemma.name, "proven", []) for lemma in LEMMAS]


def test_a_refuted_lemma_exits_12_with_its_counterexample():
    p = kraftcheck("prove", "--mutant", "skip_epoch_check")
    assert p.returncode == 12, p.stderr
    assert ("EpochGateExact is refuted: it is not so that the broker-epoch gate lets a request through exactly when "
            "its broker is registered and the request carries the registered epoch. Counterexample:") in p.stdout
    assert "  broker 0: registered, broker epoch " in p.stdout
    assert "  request's broker epoch (for broker 0): " in p.stdout
    assert p.stdout.splitlines()[-1].startswith("a lemma is refuted (")


def test_a_mutant_outside_the_rules_is_said_so():
    p = kraftcheck("prove", "--mutant", "recreate_elsewhere")
    assert p.returncode == 0
    assert p.stderr == ("kraftcheck: note: mutant recreate_elsewhere changes no rule these lemmas state (the rule "
                        f"mutants: {', '.join(sorted(RULE_MUTANTS))}); the lemmas are proven as without it\n")


@pytest.mark.parametrize("args, message", [
    (["--n", "0"], "argument --n: expected an integer from 1 to 10, got '0'"),
    (["--n", "x"], "argument --n: expected an integer from 1 to 10, got 'x'"),
    (["--dirs", "5"], "argument --dirs: expected an integer from 1 to 4, got '5'"),
    (["--timeout", "0"], "argument --timeout: expected a positive integer, got '0'"),
])
def test_bad_arguments_are_one_line(args, message):
    p = kraftcheck("prove", *args)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"kraftcheck: error: {message} (see 'kraftcheck prove --help')\n"


def test_an_unknown_mutant_is_one_line():
    p = kraftcheck("prove", "--mutant", "nothing")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"kraftcheck: error: unknown mutant 'nothing' (known: {', '.join(MUTANTS)})\n"


def test_an_unwritable_summary_is_refused_before_proving(tmp_path):
    p = kraftcheck("prove", "--json", tmp_path)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr.startswith(f"kraftcheck: error: cannot write the summary to {tmp_path}: ")


def test_a_lemma_the_solver_gives_up_on_is_incomplete_never_proven(capsys):
    """z3's `unknown` (a timeout): exit 3, reported as incomplete, whatever else is proven."""
    import argparse
    import sys

    from kraftcheck.proofs.run import EXIT_INCOMPLETE, Outcome, exit_code, print_outcomes

    outcomes = [Outcome("A", "a holds", "proven", 0.1), Outcome("B", "b holds", "incomplete", 60.0, reason="timeout")]
    assert exit_code(outcomes) == EXIT_INCOMPLETE == 3
    assert exit_code(outcomes + [Outcome("C", "c holds", "refuted", 0.1, ["x"])]) == 12
    print_outcomes(outcomes, argparse.Namespace(n=3, dirs=2, mutant="none"), sys.stdout)
    out = capsys.readouterr().out
    assert "B is incomplete: the solver gave up (timeout); it is not proven" in out
    assert out.splitlines()[-1] == "incomplete: a lemma is neither proven nor refuted (60.10 s)"
