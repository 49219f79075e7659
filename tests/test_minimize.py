"""``kraftcheck trace minimize``: a simulated trace made as short as breadth-first search's,
the result a trace that replays."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kraftcheck.checker.bfs import explore
from kraftcheck.examples.diehard import DieHard
from kraftcheck.traces.minimize import _ddmin, minimize, violation_test

REPO = Path(__file__).resolve().parent.parent
DIEHARD = "kraftcheck.examples.diehard:make_model"


def kraftcheck(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=300)


def simulated_trace(tmp_path, *args) -> Path:
    p = kraftcheck("simulate", *args, "--trace-dir", str(tmp_path / "sim"), "--no-picture", "--quiet")
    assert p.returncode in (12, 13), p.stdout + p.stderr
    [path] = [line.split("trace: ")[1] for line in p.stdout.splitlines() if "trace: " in line][:1]
    return Path(path)


def actions_of(path: Path) -> list[str]:
    return [state["#meta"].get("label", state["#meta"]["action"]) for state in json.loads(path.read_text())["states"]]


def test_a_long_walk_to_four_gallons_minimises_to_bfs_s_seven_states(tmp_path):
    trace = simulated_trace(tmp_path, "--model", DIEHARD, "--walks", "500", "--depth", "40", "--seed", "3")
    assert len(actions_of(trace)) == 37
    p = kraftcheck("trace", "minimize", str(trace))
    assert p.returncode == 0, p.stdout + p.stderr
    out = trace.with_name("diehard_NotFourGallons.min.itf.json")
    assert p.stdout == (f"37 states to 7: the search within 3 steps of the trace found 7, delta debugging left 7; "
                        f"NotFourGallons is still violated\nwrote {out}\n")
    assert explore(DieHard()).violations[0].length == 7
    assert actions_of(out)[0] == "Init" and len(actions_of(out)) == 7
    replayed = kraftcheck("trace", "replay", str(out))
    assert replayed.returncode == 0 and replayed.stdout.startswith("valid: 7 states,"), replayed.stdout
    assert json.loads(out.read_text())["#meta"]["minimized"] == {"from": str(trace), "states": 37}


def test_a_kafka_mutants_simulated_trace_minimises_to_bfs_s_length(tmp_path):
    """epochgate with skip_epoch_check: walk 800 of seed 1 breaks StaleEpochChangesNothing in 14
    states; the search near it finds 12 (its walk failed a directory that BFS's path never does),
    and delta debugging, dropping that failure and taking the restart without it, leaves 11: BFS's."""
    p = kraftcheck("simulate", "epochgate", "--set", "mutant=skip_epoch_check", "--walks", "5000", "--seed", "1",
                   "--trace-dir", str(tmp_path / "sim"), "--no-picture", "--quiet")
    assert p.returncode == 13, p.stdout
    trace = tmp_path / "sim" / "epochgate,mutant=skip_epoch_check_StaleEpochChangesNothing.itf.json"
    assert len(actions_of(trace)) == 14
    out = tmp_path / "short.itf.json"
    p = kraftcheck("trace", "minimize", str(trace), "-o", str(out))
    assert p.stdout.splitlines()[0] == ("14 states to 11: the search within 3 steps of the trace found 12, delta "
                                        "debugging left 11; StaleEpochChangesNothing is still violated")
    assert actions_of(out) == [
        "Init", "BrokerStarts(b0)", "BrokerSendsRegistration(b0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 1, dirs ['dir-0', 'dir-1']))",
        "BrokerReceivesRegistrationResponse(RegisterResponse(b0, incarnation 1, epoch 1))", "BrokerSendsHeartbeat(b0)",
        "BrokerCrashes(b0)", "BrokerStarts(b0)", "BrokerSendsRegistration(b0)",
        "ControllerHandlesRegistration(Register(b0, incarnation 2, dirs ['dir-0', 'dir-1']))",
        "ControllerHandlesHeartbeat(Heartbeat(b0, epoch 1, offline []))"]
    bfs = kraftcheck("check", "epochgate", "--set", "mutant=skip_epoch_check", "--continue", "--quiet", "--no-picture",
                     "--trace-dir", str(tmp_path / "bfs"))
    assert "error: step property StaleEpochChangesNothing is violated; shortest trace: 11 states" in bfs.stdout
    assert kraftcheck("trace", "replay", str(out)).returncode == 0


def test_ddmin_leaves_a_one_minimal_list():
    # reaches when it holds 3 and 7, in that order
    reaches = lambda items: 3 in items and 7 in items and items.index(3) < items.index(7)  # noqa: E731
    assert _ddmin(list(range(10)), reaches) == [3, 7]
    assert _ddmin([5], lambda items: True) == []
    assert _ddmin([1, 2], lambda items: items == [1, 2]) == [1, 2]


def test_radius_zero_searches_the_trace_s_own_states():
    model = DieHard()
    bad = violation_test(model, "invariant", "NotFourGallons")
    # fill big, pour into small, empty small, pour, fill big, pour: 4 gallons in 7 states, with detours
    path, state = [], (0, 0)
    for wanted in ["FillSmall", "EmptySmall", "FillBig", "BigToSmall", "EmptySmall", "BigToSmall", "FillBig",
                   "BigToSmall"]:
        state = dict(model.successors(state))[wanted]
        path.append((wanted, state))
    assert state == (3, 4)
    short = minimize(model, (0, 0), path, bad, radius=0)
    assert (short.original, short.after_search, short.length) == (9, 7, 7)
    assert [a for a, _ in short.steps] == ["FillBig", "BigToSmall", "EmptySmall", "BigToSmall", "FillBig", "BigToSmall"]


def test_bad_input_is_one_line(tmp_path):
    trace = simulated_trace(tmp_path, "--model", DIEHARD, "--walks", "500", "--depth", "40", "--seed", "3")
    cases = [
        (["--radius", "-1"], "--radius is a number of steps, 0 or more, not -1"),
        (["-o", str(trace)], f"-o {trace} would replace the input {trace}: give it a path of its own"),
        # a folder that is a file
        (["-o", str(trace / "m.itf.json")], f"cannot write {trace / 'm.itf.json'}: Not a directory"),
    ]
    for extra, message in cases:
        p = kraftcheck("trace", "minimize", str(trace), *extra)
        assert (p.returncode, p.stdout) == (2, ""), (extra, p.stdout, p.stderr)
        assert p.stderr == f"kraftcheck: error: {message}\n", p.stderr
    plain = tmp_path / "plain.itf.json"
    plain.write_text(json.dumps({"#meta": {"source": "elsewhere"}, "vars": ["x"], "states": [{"x": 1}]}))
    p = kraftcheck("trace", "minimize", str(plain))
    assert (p.returncode, p.stderr) == (2, f"kraftcheck: error: {plain} is no counterexample of kraftcheck's: it names "
                                           "no violated property to keep\n")
