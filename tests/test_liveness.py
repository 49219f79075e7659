"""The liveness phase: temporal properties under weak and strong fairness, lassos as ITF with
their loop, replay's checks of a lasso, and what the phase refuses."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import networkx
import pytest
from hypothesis import given, settings, strategies as st

from kraftcheck.checker import liveness
from kraftcheck.checker.liveness import StateGraph, check_liveness, lasso_trace, tarjan
from kraftcheck.checker.temporal import declared_fairness, declared_properties, lasso_violates, loop_unfairness
from kraftcheck.examples.lock import make_model as make_lock
from tests.models import channel

REPO = Path(__file__).resolve().parent.parent


def kraftcheck(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})


def lassos(model) -> dict[str, tuple[list[str], int]]:
    """name -> (the lasso's actions, its loop's first state) for each property that fails."""
    live = check_liveness(model, declared_properties(model), declared_fairness(model))
    found = {}
    for name, (chain, loop) in live.lassos.items():
        trace = lasso_trace(model, chain, loop)
        found[name] = ([str(a) if a is None or isinstance(a, str) else f"{a[0]}({a[1]})" for a, _ in trace], loop)
    return found


# ---------------------------------------------------------------------------------------------
# Verdicts and lassos
# ---------------------------------------------------------------------------------------------

def test_without_fairness_a_state_may_stutter_for_ever():
    assert lassos(channel({"fairness": "none"})) == {
        "Delivered": (["None"], 0),                       # the initial state stutters
        "Settles": (["None", "Send", "Lose"], 0),         # the loop must pass where the wire is busy
        "SentLeadsToDone": (["None", "Send"], 1),         # sent, then nothing happens
    }


def test_weak_fairness_does_not_force_a_step_enabled_only_now_and_then():
    """Deliver is enabled only while the message is on the wire; the channel may lose it each
    time, and weak fairness asks nothing of a step that is not enabled for ever."""
    assert lassos(channel({"fairness": "weak"})) == {
        "Delivered": (["None", "Send", "Lose"], 0),
        "Settles": (["None", "Send", "Lose"], 0),
        "SentLeadsToDone": (["None", "Send", "Lose", "Send"], 1),
    }


def test_strong_fairness_does():
    assert lassos(channel({"fairness": "strong"})) == {}


def test_the_lock_starves_a_waiter_under_weak_fairness_and_not_under_strong():
    assert lassos(make_lock({})) == {"NoStarvation": (["None", "Request(0)", "Request(1)", "Acquire(1)", "Release(1)"], 1)}
    assert lassos(make_lock({"fairness": "strong"})) == {}


def test_strong_fairness_per_parameter_is_what_keeps_a_waiter_from_starving():
    """SF over every Acquire step is kept by process 1 taking the lock again and again; only
    one condition per process forbids process 0's starvation."""
    from kraftcheck.checker.temporal import strong_fairness, weak_fairness

    lock = make_lock({})
    lock.fairness = [strong_fairness("Acquire"), weak_fairness("Release", per_parameter=True)]
    assert list(lassos(lock)) == ["NoStarvation"]
    lock.fairness = [strong_fairness("Acquire", per_parameter=True), weak_fairness("Release", per_parameter=True)]
    assert lassos(lock) == {}


def test_a_deadlock_is_a_state_that_stutters():
    """Once delivered, nothing is enabled: ``<>[]~Done`` fails there, on a stuttering loop, and no
    fairness condition can forbid it (none is enabled)."""
    from kraftcheck.checker.temporal import eventually_always

    model = channel({"fairness": "strong"})
    model.temporal_properties = {"NeverDone": eventually_always(lambda s: s[0] != "done")}
    assert lassos(model) == {"NeverDone": (["None", "Send", "Deliver"], 2)}


def test_both_decompositions_give_the_same_verdicts_and_lassos(monkeypatch):
    expected = {f: lassos(channel({"fairness": f})) for f in ("none", "weak", "strong")}
    expected_lock = lassos(make_lock({"processes": 3}))
    monkeypatch.setattr(liveness, "NETWORKX_EDGES", 0)  # Tarjan's, on the arrays, for every graph
    assert {f: lassos(channel({"fairness": f})) for f in ("none", "weak", "strong")} == expected
    assert lassos(make_lock({"processes": 3})) == expected_lock


def graph_of(edges: list[tuple[int, int]], n: int) -> StateGraph:
    from array import array

    out: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        out[u].append(v)
    offsets, targets = array("q"), array("I")
    for u in range(n):
        offsets.append(len(targets))
        targets.extend(sorted(out[u]))
    offsets.append(len(targets))
    return StateGraph(offsets, targets, array("I", [0] * len(targets)), ["A"], array("q", [-1] * n), {0: 0}, {})


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4 * n, unique=True),
    st.lists(st.booleans(), min_size=n, max_size=n))))
def test_tarjan_finds_networkx_components(case):
    n, edges, allowed = case
    graph = graph_of(edges, n)
    inside = bytearray(allowed)
    nodes = [u for u in range(n) if allowed[u]]
    g = networkx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from((u, v) for u, v in edges if allowed[u] and allowed[v] and u != v)
    assert sorted(tarjan(graph, nodes, inside)) == sorted(sorted(c) for c in networkx.strongly_connected_components(g))


def test_tarjan_needs_no_recursion_on_a_long_path():
    n = 200_000
    graph = graph_of([(u, u + 1) for u in range(n - 1)] + [(n - 1, 0)], n)
    [component] = tarjan(graph, list(range(n)), bytearray(b"\x01" * n))
    assert len(component) == n


def test_a_lasso_keeps_the_fairness_it_was_found_under():
    model = make_lock({})
    [(chain, loop)] = check_liveness(model, declared_properties(model), declared_fairness(model)).lassos.values()
    trace = lasso_trace(model, chain, loop)
    states = [s for _, s in trace]
    assert loop_unfairness(model, model.fairness, states[loop:-1], trace[loop + 1:]) is None
    assert lasso_violates(model.temporal_properties["NoStarvation"], states, loop)
    strong = make_lock({"fairness": "strong"})
    assert loop_unfairness(strong, strong.fairness, states[loop:-1], trace[loop + 1:]) == (
        "SF_vars(Acquire(p), for each p) is not kept: Acquire(0) is enabled in a state of the loop and never taken in it")


# ---------------------------------------------------------------------------------------------
# The command line: check, the trace, replay
# ---------------------------------------------------------------------------------------------

def test_check_reports_the_lasso_and_exits_13(tmp_path):
    done = kraftcheck("check", "--model", "kraftcheck.examples.lock:make_model", "--trace-dir", str(tmp_path),
                      "--json", str(tmp_path / "summary.json"), "--no-picture")
    assert (done.returncode, done.stderr) == (13, "")
    lines = done.stdout.splitlines()
    at = lines.index("error: temporal property NoStarvation is violated; lasso: 5 states, from state 2, the steps "
                     "to state 5 (state 2 again) repeat for ever")
    assert lines[at + 1:at + 6] == ["    1  Init", "    2  Request(0)  <- loop", "    3  Request(1)", "    4  Acquire(1)",
                                    "    5  Release(1)"]
    assert "ok: under the model's fairness, ReleasesTheLock holds on every behaviour" in lines
    assert any(line.startswith("liveness: 8 states, 14 edges, ") for line in lines)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["verdict"] == "violation"
    assert summary["violations"] == [{"invariant": "NoStarvation", "kind": "temporal", "length": 5, "loop": 1,
                                      "trace": str(tmp_path / "lock_NoStarvation.itf.json")}]
    assert summary["liveness"]["properties"] == {"ReleasesTheLock": "holds", "NoStarvation": "violated"}
    assert (summary["liveness"]["graph_states"], summary["liveness"]["graph_edges"]) == (8, 14)
    document = json.loads((tmp_path / "lock_NoStarvation.itf.json").read_text())
    assert (document["loop"], len(document["states"]), document["#meta"]["kind"]) == (1, 5, "temporal")
    assert document["states"][1]["pc"] == document["states"][4]["pc"]


def test_strong_fairness_holds_and_no_liveness_skips_the_phase(tmp_path):
    done = kraftcheck("check", "--model", "kraftcheck.examples.lock:make_model", "--set", "fairness=strong",
                      "--trace-dir", str(tmp_path), "--quiet")
    assert done.returncode == 0
    assert done.stdout.splitlines()[:2] == [
        "ok: every invariant holds in every reachable state",
        "ok: under the model's fairness, ReleasesTheLock, NoStarvation hold on every behaviour"]
    skipped = kraftcheck("check", "--model", "kraftcheck.examples.lock:make_model", "--no-liveness",
                         "--trace-dir", str(tmp_path), "--quiet")
    assert skipped.returncode == 0
    assert not any(line.startswith(("liveness", "ok: under")) for line in skipped.stdout.splitlines())


def test_show_and_replay_the_lasso(tmp_path):
    kraftcheck("check", "--model", "kraftcheck.examples.lock:make_model", "--trace-dir", str(tmp_path), "--no-picture")
    trace = tmp_path / "lock_NoStarvation.itf.json"
    shown = kraftcheck("trace", "show", str(trace), "--color", "never")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1] == "Waiting0 ~> Critical0: Process 0, waiting for the lock, gets it."
    assert shown.stdout.splitlines()[-2:] == [
        "state 5 is state 2 again: from step 2, the steps to state 5 repeat for ever",
        "the behaviour violates the temporal property NoStarvation"]
    replayed = kraftcheck("trace", "replay", str(trace))
    assert (replayed.returncode, replayed.stdout.strip()) == (0, (
        "valid: 5 states, every step a legal transition of kraftcheck.examples.lock:make_model; the loop from "
        "state 2 closes, keeps the model's fairness, and violates NoStarvation (Waiting0 ~> Critical0)"))
    unfair = kraftcheck("trace", "replay", str(trace), "--set", "fairness=strong")
    assert (unfair.returncode, unfair.stdout.strip()) == (1, (
        "invalid: the loop from state 2 is not fair: SF_vars(Acquire(p), for each p) is not kept: Acquire(0) is "
        "enabled in a state of the loop and never taken in it"))
    minimized = kraftcheck("trace", "minimize", str(trace), "-o", str(tmp_path / "min.itf.json"))
    assert (minimized.returncode, minimized.stderr.strip()) == (2, (
        f"kraftcheck: error: {trace} is a lasso, built from shortest paths by the liveness phase; "
        "minimize works on invariants, step properties and deadlocks"))
    document = json.loads(trace.read_text())
    document["loop"] = 2
    opened = tmp_path / "open.itf.json"
    opened.write_text(json.dumps(document))
    done = kraftcheck("trace", "replay", str(opened), "--model", "kraftcheck.examples.lock:make_model")
    assert (done.returncode, done.stdout.strip()) == (1, "invalid: the loop does not close: state 5 is not state 3 again")


@pytest.mark.parametrize("args, message", [
    (("--model", "tests.models:symmetric_lock"),
     "liveness is not checked with symmetry reduction: a loop in the reduced graph need not be one of the model's "
     "(TLC's reduction is unsound here too); add --no-symmetry, or --no-liveness"),
    (("--model", "kraftcheck.examples.lock:make_model", "--engine", "spark"),
     "the Spark engine checks invariants only: the liveness phase needs the whole state graph in one process; "
     "use --engine local, or --no-liveness"),
])
def test_what_the_liveness_phase_refuses(args, message, tmp_path):
    done = kraftcheck("check", *args, "--trace-dir", str(tmp_path))
    assert (done.returncode, done.stdout, done.stderr.strip()) == (2, "", f"kraftcheck: error: {message}")


def test_without_the_liveness_phase_symmetry_is_no_obstacle(tmp_path):
    done = kraftcheck("check", "--model", "tests.models:symmetric_lock", "--no-liveness", "--trace-dir", str(tmp_path),
                      "--quiet")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[0] == "ok: every invariant holds in every reachable state"


def test_check_liveness_itself_refuses_symmetry():
    from kraftcheck.checker.liveness import SymmetryAndLiveness
    from tests.models import symmetric_lock

    model = symmetric_lock()
    with pytest.raises(SymmetryAndLiveness, match=r"^liveness is not checked with symmetry reduction"):
        check_liveness(model, declared_properties(model), declared_fairness(model))


def test_symmetry_off_checks_liveness(tmp_path):
    done = kraftcheck("check", "--model", "tests.models:symmetric_lock", "--no-symmetry", "--trace-dir", str(tmp_path),
                      "--quiet")
    assert done.returncode == 13
    assert done.stdout.splitlines()[0].startswith("error: temporal property NoStarvation is violated; lasso: 5 states")


def test_liveness_is_skipped_after_a_safety_violation(tmp_path):
    model = make_lock({})
    model.invariants = {"NobodyWaits": lambda s: "waiting" not in s[0]}
    from kraftcheck.checker.check import check_temporal
    from kraftcheck.checker.workers import explore

    result = explore(model, workers=1)
    check_temporal(model, result, declared_properties(model))
    assert result.liveness == {"checked": False, "properties": ["ReleasesTheLock", "NoStarvation"],
                               "why": "the search's verdict is violation"}
    assert [cx.kind for cx in result.violations] == ["invariant"]


def test_a_temporal_property_that_is_not_one_is_the_models_error():
    lock = make_lock({})
    lock.temporal_properties = {"Bad": lambda s: True}
    with pytest.raises(TypeError, match="^temporal property Bad is a function, not one made by leads_to, "
                                        "always_eventually, eventually_always or for_each$"):
        declared_properties(lock)


def test_random_lock_sizes_agree_between_networkx_and_tarjan(monkeypatch):
    """Three and four processes: the same lasso whichever decomposition runs."""
    rng = random.Random(7)
    for processes in (3, 4):
        fairness = rng.choice(["weak", "strong"])
        expected = lassos(make_lock({"processes": processes, "fairness": fairness}))
        monkeypatch.setattr(liveness, "NETWORKX_EDGES", 0)
        assert lassos(make_lock({"processes": processes, "fairness": fairness})) == expected
        monkeypatch.undo()


def test_the_python_api_runs_the_liveness_phase_too():
    import kraftcheck

    result = kraftcheck.check("kraftcheck.examples.lock:make_model")
    [cx] = result.violations
    assert (result.verdict, result.exit_code, cx.kind, cx.name, cx.length, cx.loop) == (
        "violation", 13, "temporal", "NoStarvation", 5, 1)
    assert kraftcheck.check("kraftcheck.examples.lock:make_model", liveness=False).verdict == "ok"
    assert kraftcheck.check("kraftcheck.examples.lock:make_model", fairness="strong").liveness["properties"] == {
        "ReleasesTheLock": "holds", "NoStarvation": "holds"}


def test_a_mutant_that_breaks_only_liveness_is_caught(tmp_path):
    """The channel's black hole breaks no invariant: only the liveness phase, which ``mutants``
    runs after each search, catches it."""
    config = tmp_path / "strong.toml"
    config.write_text('[model]\nfairness = "strong"\n[check]\ndeadlock = false\n')
    done = kraftcheck("mutants", "--model", "tests.models:channel", str(config))
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "mutant      verdict  config  trace  violated",
        "black_hole  caught   strong      3  Delivered, Settles, SentLeadsToDone",
        "mutation score: 1/1 caught"]
    safety_only = kraftcheck("check", "--model", "tests.models:channel", str(config), "--set", "mutant=black_hole",
                             "--no-liveness", "--quiet", "--trace-dir", str(tmp_path))
    assert safety_only.returncode == 0


def test_the_sequence_chart_says_where_the_loop_goes(tmp_path):
    kraftcheck("check", "--model", "kraftcheck.examples.lock:make_model", "--trace-dir", str(tmp_path), "--no-picture")
    dot = tmp_path / "chart.dot"
    done = kraftcheck("trace", "render", str(tmp_path / "lock_NoStarvation.itf.json"), "-o", str(dot), "--style",
                      "sequence")
    assert (done.returncode, done.stderr) == (0, "")
    source = dot.read_text()
    assert "head_lane2 [label=<<B>lock</B>>" in source
    assert "<I>(the loop starts here)</I>" in source.split("r1_step")[1].split("]")[0]
    assert "<I>state 5 is state 2 again: from step 2, the steps to state 5 repeat for ever</I>" in source
    assert source.count("xlabel=<take>") == 1 and source.count("xlabel=<give back>") == 1


def test_a_suite_may_expect_a_temporal_property_to_fail(tmp_path):
    (tmp_path / "weak.toml").write_text('[check]\nmodel = "kraftcheck.examples.lock:make_model"\n')
    (tmp_path / "strong.toml").write_text('[check]\nmodel = "kraftcheck.examples.lock:make_model"\n'
                                          '[model]\nfairness = "strong"\n')
    suite = tmp_path / "suite.toml"
    suite.write_text('[[config]]\npath = "weak.toml"\nexpect = ["NoStarvation"]\n[[config]]\npath = "strong.toml"\n')
    done = kraftcheck("check", "--suite", str(suite), "--trace-dir", str(tmp_path / "out"), "-j", "1",
                      "--json", str(tmp_path / "summary.json"))
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    rows = {row["config"]["source"].rsplit("/", 1)[-1]: row for row in json.loads((tmp_path / "summary.json").read_text())["configs"]}
    assert (rows["weak.toml"]["expectation_met"], rows["weak.toml"]["violations"][0]["loop"]) == (True, 1)
    assert (rows["strong.toml"]["verdict"], rows["strong.toml"]["liveness"]["properties"]) == (
        "ok", {"ReleasesTheLock": "holds", "NoStarvation": "holds"})
