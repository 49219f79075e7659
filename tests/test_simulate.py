"""``kraftcheck simulate``: seeded walks, reproducible from their seed and index alone, their
figures computed again here from :func:`kraftcheck.checker.walk.random_walk`, and their
violations written as ``check`` writes them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from kraftcheck.checker.bfs import explore
from kraftcheck.checker.simulation import simulate
from kraftcheck.checker.walk import random_walk
from kraftcheck.examples.diehard import DieHard

REPO = Path(__file__).resolve().parent.parent
DIEHARD = "kraftcheck.examples.diehard:make_model"
TIMING = re.compile(r"\d+\.\d\d s \([\d,]+ steps/s\)")


def kraftcheck(*args, cwd=REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def expected_figures(model, seed: int, walks: int, depth: int) -> tuple[int, int, int, dict]:
    """Steps, distinct states, the longest walk and the steps per action, from the walker itself."""
    steps, seen, longest, taken = 0, set(), 0, {}
    for index in range(walks):
        walk = random_walk(model, seed, index, depth - 1, by_action=True)
        seen.add(walk.start)
        seen.update(state for _, state in walk.steps)
        steps += len(walk.steps)
        longest = max(longest, len(walk.steps) + 1)
        for action, _ in walk.steps:
            taken[action] = taken.get(action, 0) + 1
    return steps, len(seen), longest, taken


def test_walks_that_meet_no_violation_are_counted_as_the_walker_takes_them():
    """A goal no jug can hold: every walk runs to its depth, and the figures are the walker's."""
    model = DieHard(goal=6)
    result = simulate(model, walks=40, depth=12, seed=5)
    steps, distinct, longest, taken = expected_figures(model, 5, 40, 12)
    assert (result.verdict, result.stopped_by, result.exit_code) == ("incomplete", "walks", 3)
    assert (result.walks, result.steps, result.distinct_states, result.depth) == (40, 40 * 11, distinct, 12)
    assert steps == 40 * 11 and longest == 12
    assert {name: c["generated"] for name, c in result.coverage.items() if c["generated"]} == taken
    # the walks stay near the empty jugs: 9 of the 16 states BFS reaches
    assert (distinct, explore(model).distinct_states) == (9, 16)


def test_the_first_violation_ends_the_simulation_after_its_walk():
    model = DieHard()
    result = simulate(model, walks=1000, depth=30, seed=11)
    [cx] = result.violations
    index = result.walk_of[("invariant", "NotFourGallons")]
    assert result.walks == index + 1
    walk = random_walk(model, 11, index, 29, by_action=True)
    states = [walk.start] + [s for _, s in walk.steps]
    first_bad = next(i for i, s in enumerate(states) if s[1] == 4)
    assert [s for _, s in cx.trace] == states[:first_bad + 1]
    assert [a for a, _ in cx.trace[1:]] == [a for a, _ in walk.steps[:first_bad]]
    # the walks before it met no four gallons
    for earlier in range(index):
        walk = random_walk(model, 11, earlier, 29, by_action=True)
        assert all(s[1] != 4 for _, s in walk.steps)


def test_continue_keeps_the_shortest_trace_found():
    model = DieHard()
    found = simulate(model, walks=1000, depth=30, seed=2, stop_on_violation=False)
    assert found.walks == 1000
    [cx] = found.violations
    shortest = min(
        next(i for i, s in enumerate([w.start] + [s for _, s in w.steps]) if s[1] == 4) + 1
        for w in (random_walk(model, 2, i, 29, by_action=True) for i in range(1000))
        if any(s[1] == 4 for _, s in w.steps))
    assert cx.length == shortest
    # BFS's shortest trace to four gallons has 7 states: no walk beats it; walk 375 takes 26
    assert (shortest, found.walk_of[("invariant", "NotFourGallons")]) == (26, 375)


def test_the_same_seed_gives_the_same_run_and_another_seed_another(tmp_path):
    def run(seed: str, name: str):
        p = kraftcheck("simulate", "--model", DIEHARD, "--set", "goal=6", "--walks", "50", "--depth", "9", "--seed", seed,
                       "--json", str(tmp_path / name), "--trace-dir", str(tmp_path / "out"))
        assert (p.returncode, p.stderr) == (3, ""), p.stderr
        summary = json.loads((tmp_path / name).read_text())
        for key in ("elapsed_s", "states_per_s"):
            summary.pop(key)
        return TIMING.sub("T", p.stdout), summary

    first, again, other = run("8", "a.json"), run("8", "b.json"), run("9", "c.json")
    assert first == again
    assert first[0] != other[0]
    out, summary = first
    assert (summary["verdict"], summary["seed"], summary["walks"], summary["steps"]) == ("incomplete", 8, 50, 400)
    assert summary["config"]["search"] == {"walks": 50, "depth": 9, "seed": 8, "time_s": None, "check_deadlock": True,
                                           "stop_on_violation": True, "pick": "action"}
    lines = out.splitlines()
    assert lines[0] == f"simulating {DIEHARD} with no config file: 50 walks of at most 9 states, seed 8"
    assert lines[1] == "incomplete: no violation in 50 walks (the walks were done); the states no walk reached are unchecked"
    steps, distinct, _, _ = expected_figures(DieHard(goal=6), 8, 50, 9)
    assert lines[2] == f"50 walks, {steps} steps, {distinct} distinct states, longest walk 9 states, T"
    assert not (tmp_path / "out").exists()


def test_a_violation_is_written_as_check_writes_it_and_its_walk_replays(tmp_path):
    out_dir = tmp_path / "out"
    p = kraftcheck("simulate", "--model", DIEHARD, "--walks", "500", "--depth", "40", "--seed", "3",
                   "--trace-dir", str(out_dir), "--no-picture")
    assert p.returncode == 12, p.stdout + p.stderr
    found = re.search(r"^error: invariant NotFourGallons is violated; shortest trace found: (\d+) states "
                      r"\(walk (\d+) of seed 3\)$", p.stdout, re.M)
    assert found, p.stdout
    length, index = int(found.group(1)), int(found.group(2))
    trace_path = out_dir / "diehard_NotFourGallons.itf.json"
    document = json.loads(trace_path.read_text())
    assert document["#meta"]["walk"] == {"seed": 3, "index": index, "pick": "action"}
    assert len(document["states"]) == length
    assert document["states"][-1]["big"] == 4
    actions = [state["#meta"]["action"] for state in document["states"]]
    # the trace replays as a legal path of the model
    replayed = kraftcheck("trace", "replay", str(trace_path))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    # --replay-walk takes that walk alone and prints its steps up to the violation
    again = kraftcheck("simulate", "--model", DIEHARD, "--depth", "40", "--seed", "3", "--replay-walk", str(index),
                       "--trace-dir", str(tmp_path / "again"), "--no-picture")
    assert again.returncode == 12, again.stdout
    lines = again.stdout.splitlines()
    assert lines[0] == f"simulating {DIEHARD} with no config file: walk {index} of at most 40 states, seed 3"
    assert lines[1] == f"walk {index} of seed 3:"
    assert [line.split()[1] for line in lines[2:2 + length]] == actions
    assert lines[2 + length] == (f"error: invariant NotFourGallons is violated; shortest trace found: {length} states "
                                 f"(walk {index} of seed 3)")


def test_a_time_limit_stops_the_walks(tmp_path):
    """Each expansion of the slow counter sleeps 20 ms: 0.3 s allows a few walks, not 10,000."""
    p = kraftcheck("simulate", "--model", "tests.models:slow", "--set", "limit=1000", "--set", "step_ms=20",
                   "--depth", "5", "--time", "0.3s", "--seed", "1", "--json", str(tmp_path / "s.json"),
                   "--trace-dir", str(tmp_path / "out"))
    assert p.returncode == 3, p.stdout + p.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["verdict"] == "incomplete"
    assert 1 <= summary["walks"] < 100
    assert summary["steps"] == 4 * summary["walks"]
    assert re.search(rf"^incomplete: no violation in {summary['walks']} walks \(the time limit came\);", p.stdout, re.M)
    assert p.stdout.startswith("simulating tests.models:slow with no config file: walks of at most 5 states for at "
                               "most 0.3 s, seed 1\n")


def test_bad_arguments_are_one_line(tmp_path):
    cases = [
        (["--seed", "-1"], "argument --seed: expected a non-negative integer, got '-1'"),
        (["--time", "soon"], "argument --time: expected a duration such as 90, 90s, 5m or 1h, got 'soon'"),
        (["--time", "0"], "argument --time: expected a positive duration, got '0'"),
        (["--walks", "0"], "argument --walks: expected a positive integer, got '0'"),
        (["--replay-walk", "3"], "--replay-walk needs the --seed its walk was taken with"),
        (["--replay-walk", "-2", "--seed", "1"], "--replay-walk takes a walk's index, 0 or more, not -2"),
        (["--replay-walk", "2", "--seed", "1", "--walks", "5"], "--replay-walk takes one walk: give neither --walks nor --time"),
    ]
    for extra, message in cases:
        p = kraftcheck("simulate", "--model", DIEHARD, "--trace-dir", str(tmp_path / "out"), *extra)
        assert p.returncode == 2, (extra, p.stderr)
        assert p.stdout == ""
        assert p.stderr.startswith(f"kraftcheck: error: {message}"), p.stderr
        assert p.stderr.count("\n") == 1, p.stderr


def test_the_kafka_model_simulates_a_shipped_config_and_finds_a_mutant(tmp_path):
    """epochgate's mutant skip_epoch_check, which BFS catches there, found by walks too: walk 800
    of seed 1 breaks the step property StaleEpochChangesNothing."""
    p = kraftcheck("simulate", "epochgate", "--set", "mutant=skip_epoch_check", "--walks", "5000", "--seed", "1",
                   "--quiet", "--no-picture", "--trace-dir", str(tmp_path / "out"))
    assert p.returncode == 13, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == ("error: step property StaleEpochChangesNothing is violated; shortest trace found: 14 states "
                        "(walk 800 of seed 1)")
    assert TIMING.sub("T", lines[2]) == "801 walks, 6,534 steps, 484 distinct states, longest walk 23 states, T"


def _comparable(result):
    summary = result.summary()
    for key in ("elapsed_s", "states_per_s", "engine"):
        summary.pop(key)
    return summary, [(cx.kind, cx.name, cx.trace) for cx in result.counterexamples], result.walk_of


def test_chunks_merge_to_the_same_result_whatever_their_split():
    """What the Spark engine relies on: the walks taken in chunks, merged in any order, give the
    result of one process taking them all, with and without stopping at the first violation."""
    from kraftcheck.checker.simulation import merge, take_walks

    model = DieHard()
    for stop in (True, False):
        whole = simulate(model, walks=400, depth=30, seed=11, stop_on_violation=stop)
        for bounds in ([(0, 400)], [(0, 150), (150, 250)], [(0, 7), (7, 393)], [(a, 40) for a in range(0, 400, 40)]):
            chunks = [take_walks(model, first, count, depth=30, seed=11, stop_on_violation=stop)
                      for first, count in bounds]
            merged = merge(reversed(chunks), model, seed=11, stop_on_violation=stop, elapsed_s=0.0)
            assert _comparable(merged) == _comparable(whole), (stop, bounds)
        # stopping, only the walks up to the first bad one count; going on, all 400
        assert whole.walks == (whole.walk_of[("invariant", "NotFourGallons")] + 1 if stop else 400)


def test_chunk_ranges_cover_every_walk_once():
    from kraftcheck.checker.spark_simulation import chunk_range

    for walks, chunks in ((10, 3), (7, 7), (1000, 8), (5, 1)):
        ranges = [chunk_range(walks, chunks, c) for c in range(chunks)]
        indices = [i for first, count in ranges for i in range(first, first + count)]
        assert indices == list(range(walks))
        assert max(c for _, c in ranges) - min(c for _, c in ranges) <= 1


def test_three_brokers_by_name_and_an_expected_finding(tmp_path):
    """spec/simulation/three.toml, by its name: walk 286 of seed 1 meets finding 9's
    ElrLeftOnlyForCause; expected, it is said so and the exit code is 0."""
    args = ["simulate", "three", "--walks", "300", "--seed", "1", "--quiet", "--no-picture",
            "--trace-dir", str(tmp_path / "out")]
    p = kraftcheck(*args)
    assert p.returncode == 13, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == ("error: step property ElrLeftOnlyForCause is violated; shortest trace found: 43 states "
                        "(walk 286 of seed 1)")
    assert TIMING.sub("T", lines[2]) == "287 walks, 5,770 steps, 4,351 distinct states, longest walk 43 states, T"
    expected = kraftcheck(*args, "--expect", "ElrLeftOnlyForCause")
    assert expected.returncode == 0, expected.stdout
    assert expected.stdout.splitlines()[0] == lines[0].replace("error:", "expected:")
    assert kraftcheck("trace", "replay", str(tmp_path / "out" / "three_ElrLeftOnlyForCause.itf.json")).returncode == 0
    unknown = kraftcheck(*args, "--expect", "Nope")
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr.startswith("kraftcheck: error: --expect Nope: the model checks no property of that name "
                                     "(known: LeaderOnOnlineDir, ")


def test_a_stopping_signal_reports_the_walks_done(tmp_path):
    """SIGTERM while the slow counter walks: one error line, exit 143, and the figures of the
    walks done so far (none written: no trace)."""
    import signal
    import time

    from tests.processes import default_stopping_signals

    ready = tmp_path / "ready"
    process = subprocess.Popen(
        [sys.executable, "-m", "kraftcheck.checker.cli", "simulate", "--model", "tests.models:slow", "--set",
         "limit=100000", "--set", "step_ms=20", "--set", f"ready={ready}", "--depth", "5", "--seed", "1",
         "--trace-dir", str(tmp_path / "out")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=default_stopping_signals)
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert process.poll() is None and time.monotonic() < deadline, "the walks never reached the state 2"
        time.sleep(0.01)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (143, "kraftcheck: error: interrupted by SIGTERM\n")
    last = out.splitlines()[-1]
    assert re.fullmatch(r"interrupted by SIGTERM: the search stopped after [\d,]+ distinct states, [\d,]+ generated, "
                        r"depth \d \(\d+\.\d\d s\); the rest is unexplored", last), out
    assert not (tmp_path / "out").exists()
