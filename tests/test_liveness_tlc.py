"""TLC agrees with the liveness phase: the example lock (examples/tla/Lock.tla) and the test
model Channel (tests/data/tlc/LossyWire.tla), each property under each fairness, run in real
TLC 2.15 one property at a time (TLC names no property when several are violated).  The
verdicts and the state counts must be the same, and every lasso kraftcheck reports replays."""

from __future__ import annotations

from pathlib import Path

import pytest

from kraftcheck.checker.liveness import check_liveness, lasso_trace
from kraftcheck.checker.temporal import declared_fairness, declared_properties, lasso_violates, loop_unfairness
from kraftcheck.checker.tlc import EXIT_LIVENESS, EXIT_OK, run_tlc
from kraftcheck.examples.lock import make_model as make_lock
from tests.models import channel

REPO = Path(__file__).resolve().parent.parent
SPECS = {"none": "NoneSpec", "weak": "WeakSpec", "strong": "StrongSpec"}

CASES = [("lock", {"processes": n, "fairness": f}, p) for n in (2, 3) for f in ("weak", "strong")
         for p in ("ReleasesTheLock", "NoStarvation")] + \
        [("channel", {"fairness": f}, p) for f in ("none", "weak", "strong")
         for p in ("Delivered", "Settles", "SentLeadsToDone")]


def kraftcheck_verdict(model, name: str) -> tuple[str, int]:
    live = check_liveness(model, {name: declared_properties(model)[name]}, declared_fairness(model))
    if name in live.lassos:  # the lasso replays: it closes, keeps the fairness and breaks the property
        chain, loop = live.lassos[name]
        states = [s for _, s in lasso_trace(model, chain, loop)]
        looped = states[loop:-1] if loop < len(states) - 1 else states[loop:]
        steps = lasso_trace(model, chain, loop)[loop + 1:]
        assert loop_unfairness(model, model.fairness, looped, steps) is None
        assert lasso_violates(model.temporal_properties[name], states, loop)
    return ("violated" if name in live.lassos else "holds"), live.graph_states


@pytest.mark.parametrize("which, settings, name", CASES,
                         ids=[f"{w}-{'-'.join(map(str, s.values()))}-{p}" for w, s, p in CASES])
def test_tlc_gives_the_same_verdict(which, settings, name):
    if which == "lock":
        model = make_lock(settings)
        run = run_tlc(REPO / "examples" / "tla" / "Lock.tla",
                      f"CONSTANT N = {settings['processes']}\nSPECIFICATION {SPECS[settings['fairness']]}\n"
                      f"INVARIANT MutualExclusion\nPROPERTY {name}\n", timeout=300)
    else:
        model = channel(settings)
        run = run_tlc(REPO / "tests" / "data" / "tlc" / "LossyWire.tla",
                      f"SPECIFICATION {SPECS[settings['fairness']]}\nPROPERTY {name}\n", check_deadlock=False,
                      timeout=300)
    verdict, states = kraftcheck_verdict(model, name)
    assert run.exit_code in (EXIT_OK, EXIT_LIVENESS), run.output
    assert ({EXIT_OK: "holds", EXIT_LIVENESS: "violated"}[run.exit_code], run.distinct) == (verdict, states)


def test_the_verdicts_compared_are_not_all_alike():
    """The comparison above means something: both verdicts occur, under each model."""
    verdicts = {(w, kraftcheck_verdict(make_lock(s) if w == "lock" else channel(s), p)[0]) for w, s, p in CASES}
    assert verdicts == {("lock", "holds"), ("lock", "violated"), ("channel", "holds"), ("channel", "violated")}
