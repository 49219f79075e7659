"""``check --workers N``: the one-worker engine's figures, coverage and counterexamples,
whatever N (3 on this 2-core machine included), at every shipped config and on the toy models
that reach what the Kafka model does not (symmetry, deadlocks, bounds in the middle of a
level); the model's failures in a worker said as in one process; signals and a lost worker.

The searches here hand over to the workers from their first level (``hand_over_at=1``), so
every level runs sharded, even those the default would keep in one process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kraftcheck.checker import bfs, workers
from kraftcheck.checker.config import build_model, load_config
from kraftcheck.checker.protocol import ModelProtocolError
from tests import broken_models
from tests.models import counters, countdown, diehard, interchangeable, two_starts, wide
from tests.processes import default_stopping_signals
from tests.spark_helpers import alive, descendants

REPO = Path(__file__).resolve().parent.parent
CONFIGS = sorted(path.stem for path in (REPO / "spec" / "configs").glob("*.toml"))
#: Each shipped config is searched three times (1, 2 and 3 workers) up to this many states: the
#: small ones to their end, the large ones to a bound that falls inside a level.
STATES_PER_CONFIG = 6_000


def figures(result) -> tuple:
    """Everything a search reports, traces included."""
    return (result.distinct_states, result.generated_states, result.depth, result.verdict, result.stopped_by,
            result.coverage, result.never_enabled,
            [(cx.kind, cx.name, cx.trace) for cx in result.counterexamples])


def both(make_model, n: int, **options):
    one = bfs.explore(make_model(), **options)
    sharded = workers.explore(make_model(), workers=n, hand_over_at=1, **options)
    return one, sharded


@pytest.mark.parametrize("name", CONFIGS)
def test_every_shipped_config_gives_one_workers_figures_with_2_and_3(name):
    config = load_config(str(REPO / "spec" / "configs" / f"{name}.toml"))
    check = config.check
    options = dict(max_states=min(check.get("max_states") or STATES_PER_CONFIG, STATES_PER_CONFIG),
                   max_depth=check.get("max_depth"), check_deadlock=check.get("deadlock", True),
                   stop_on_violation=not check.get("continue", False))
    one = bfs.explore(build_model(config), **options)
    for n in (2, 3):
        sharded = workers.explore(build_model(config), workers=n, hand_over_at=1, **options)
        assert sharded.workers == n
        assert figures(sharded) == figures(one), n


@pytest.mark.parametrize("name, keep_going, distinct", [("recovery", False, 8_177), ("restart", True, 24_889)])
def test_whole_kafka_configs_to_their_violations_and_past_them(name, keep_going, distinct):
    """recovery.toml to the level of its first violation, restart.toml past its violation
    (--continue), with one worker and two: the whole state spaces that the bounded runs above
    stop short of."""
    config = load_config(str(REPO / "spec" / "configs" / f"{name}.toml"))
    one, sharded = both(lambda: build_model(config), 2, check_deadlock=config.check.get("deadlock", True),
                        stop_on_violation=not keep_going)
    assert (one.distinct_states, one.verdict) == (distinct, "violation")
    assert figures(sharded) == figures(one)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("bound", [1, 2, 7, 100, 4_999, 5_000, 5_001])
def test_a_max_states_bound_admits_the_states_one_worker_admits(n, bound):
    """The bound falls anywhere in a level; the states admitted, and what they lead to, are the
    first in the one-worker order."""
    one, sharded = both(lambda: wide({"bad_sum": 30}), n, max_states=bound, stop_on_violation=False)
    assert figures(sharded) == figures(one)
    assert sharded.distinct_states == min(bound, 10_000)


@pytest.mark.parametrize("n", [2, 3])
def test_symmetry_depth_bounds_deadlocks_and_several_initial_states(n):
    cases = [
        (lambda: interchangeable({"n": 4, "limit": 5}), {}),
        (lambda: counters({"n": 4, "limit": 4}), {"max_depth": 6}),
        (lambda: counters({"n": 4, "limit": 4}), {"max_depth": 17}),  # the bound past the last level
        (lambda: countdown({"start": 5}), {}),
        (lambda: two_starts({"bad": -5}), {}),
        (lambda: diehard(), {"stop_on_violation": False}),
        (lambda: wide({"bad_sum": 3}), {}),
    ]
    for make_model, options in cases:
        one, sharded = both(make_model, n, **options)
        assert figures(sharded) == figures(one), (make_model(), options)


def test_the_default_keeps_narrow_searches_in_one_process():
    """Levels narrower than HAND_OVER_AT states are not worth a worker: no fork, one worker."""
    narrow = workers.explore(counters({"n": 3, "limit": 5}), workers=2)
    assert (narrow.distinct_states, narrow.workers) == (216, 1)
    handed = workers.explore(wide(), workers=2)
    assert (handed.distinct_states, handed.workers) == (10_000, 2)
    assert workers.HAND_OVER_AT == 256


def test_a_model_that_raises_in_a_worker_is_said_as_in_one_process():
    with pytest.raises(RuntimeError) as alone:
        bfs.explore(wide({"fail_sum": 21}))
    with pytest.raises(workers.WorkerFailed) as sharded:
        workers.explore(wide({"fail_sum": 21}), workers=2, hand_over_at=1)
    assert str(sharded.value) == workers.describe_failure(alone.value)
    assert re.fullmatch(r"the model raised RuntimeError: the counters reached 21 \(models\.py:\d+\)", str(sharded.value))


def test_sys_exit_and_states_of_the_wrong_type_in_a_worker():
    with pytest.raises(workers.WorkerFailed, match=r"^the model called sys.exit\(9\) \(broken_models\.py:\d+\)$"):
        workers.explore(broken_models.exiting_successors({}), workers=2, hand_over_at=1)
    for kind in ("list", "set", "dict", "float"):
        with pytest.raises(ModelProtocolError) as alone:
            bfs.explore(broken_models.badly_typed_states({"kind": kind, "at": 3}))
        with pytest.raises(ModelProtocolError) as sharded:
            workers.explore(broken_models.badly_typed_states({"kind": kind, "at": 3}), workers=3, hand_over_at=1)
        assert str(sharded.value) == str(alone.value)


def test_an_invariant_that_returns_none_in_a_worker():
    with pytest.raises(ModelProtocolError) as alone:
        bfs.explore(broken_models.silent_invariant({}))
    with pytest.raises(ModelProtocolError) as sharded:
        workers.explore(broken_models.silent_invariant({}), workers=2, hand_over_at=1)
    assert str(sharded.value) == str(alone.value)


@pytest.mark.parametrize("counts, speeds, moves", [
    ([100, 100], None, []),
    ([300, 0], None, [(0, 1, 150)]),
    ([301, 0], None, [(0, 1, 150)]),  # the odd state stays with the first worker
    ([100, 100], [1.0, 3.0], [(0, 1, 50)]),
    ([100, 100], [1.0, 1.1], []),  # 5 states off their share: not worth a move
    ([10, 0], None, []),  # below LEAST_MOVE
    ([200, 0, 100], None, [(0, 1, 100)]),
    ([0, 150, 150], None, [(2, 0, 50), (1, 0, 50)]),
    ([0, 0, 0], None, []),
])
def test_a_level_is_shared_out_by_speed_when_uneven_enough(counts, speeds, moves):
    assert workers.balance(counts, speeds) == moves


def test_workers_must_be_positive():
    with pytest.raises(ValueError, match="^workers must be at least 1$"):
        workers.explore(counters(), workers=0)


# ---------------------------------------------------------------- the command line


def kraftcheck(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", *args], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300, **kwargs)


def test_check_workers_on_the_command_line(tmp_path):
    summaries = []
    for n in ("1", "2", "3"):
        summary = tmp_path / f"{n}.json"
        p = kraftcheck("check", "--model", "tests.models:wide", "--set", "bad_sum=30", "--continue", "--workers", n,
                       "--json", str(summary), "--trace-dir", str(tmp_path / n), "--quiet", "--no-picture")
        assert p.returncode == 12, p.stderr
        summaries.append(json.loads(summary.read_text()))
        assert (tmp_path / n / "wide,bad_sum=30_SumBelow.itf.json").read_bytes() == (
            (tmp_path / "1" / "wide,bad_sum=30_SumBelow.itf.json").read_bytes())
    assert [s["workers"] for s in summaries] == [1, 2, 3]
    for s in summaries:
        for key in ("distinct_states", "generated_states", "depth", "coverage", "verdict"):
            assert s[key] == summaries[0][key], key
    assert summaries[0]["distinct_states"] == 10_000


@pytest.mark.parametrize("value, message", [
    ("0", "argument --workers: expected a positive integer or 'auto', got '0'"),
    ("two", "argument --workers: expected a positive integer or 'auto', got 'two'"),
])
def test_a_bad_workers_value_is_one_line(value, message):
    p = kraftcheck("check", "--workers", value)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"kraftcheck: error: {message} (see 'kraftcheck check --help')\n"


def test_workers_with_the_spark_engine_is_refused():
    p = kraftcheck("check", "--engine", "spark", "--workers", "2")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == ("kraftcheck: error: --workers sets the local engine's processes: the Spark engine's are its "
                        "executors (--spark-master local[N])\n")


def test_a_model_failing_in_a_worker_is_one_line_exit_1():
    p = kraftcheck("check", "--model", "tests.models:wide", "--set", "fail_sum=21", "--workers", "2", "--quiet")
    assert p.returncode == 1
    assert re.fullmatch(r"kraftcheck: error: the model raised RuntimeError: the counters reached 21 "
                        r"\(models\.py:\d+\)\n", p.stderr), p.stderr


def start_slow(tmp_path, *args) -> tuple[subprocess.Popen, Path]:
    """A search whose states from sum 12 on each take 50 ms, in workers; and the file its first
    slow expansion creates."""
    ready = tmp_path / "ready"
    process = subprocess.Popen(
        [sys.executable, "-m", "kraftcheck.checker.cli", "check", "--model", "tests.models:wide", "--workers", "2",
         "--set", "step_ms=50", "--set", "slow_from=12", "--set", f"ready={ready}", "--trace-dir",
         str(tmp_path / "out"), *args],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, start_new_session=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=default_stopping_signals)
    deadline = time.monotonic() + 120
    while not ready.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the search never reached its slow states"
        time.sleep(0.01)
    return process, ready


def workers_of(process) -> set[int]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = descendants(process.pid)
        if len(found) == 2:
            return found
        time.sleep(0.01)
    pytest.fail(f"expected 2 workers under {process.pid}, found {descendants(process.pid)}")


def gone(pids: set[int], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_stops_every_worker_and_prints_the_figures_so_far(tmp_path, signum, code):
    process, _ = start_slow(tmp_path)
    pids = workers_of(process)
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    assert process.returncode == code, err
    assert err == f"kraftcheck: error: interrupted by {signal.Signals(signum).name}\n"
    assert re.fullmatch(rf"interrupted by {signal.Signals(signum).name}: the search stopped after [\d,]+ distinct "
                        r"states, [\d,]+ generated, depth \d+ \(\d+\.\d\d s\); the rest is unexplored",
                        out.splitlines()[-1]), out
    assert gone(pids)


def test_ctrl_c_reaches_the_workers_too_and_they_leave_it_to_the_coordinator(tmp_path):
    """A terminal's Ctrl-C signals the whole process group: the workers ignore it and are
    stopped by the coordinator, which reports as on a SIGINT of its own."""
    process, _ = start_slow(tmp_path)
    pids = workers_of(process)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (130, "kraftcheck: error: interrupted by SIGINT\n")
    assert gone(pids)


def test_a_worker_killed_by_the_system_is_one_line_not_a_hang(tmp_path):
    process, _ = start_slow(tmp_path)
    victim = min(workers_of(process))
    os.kill(victim, signal.SIGKILL)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1
    assert re.fullmatch(rf"kraftcheck: error: worker [01] of the search \(pid {victim}\) was killed by SIGKILL \(the "
                        r"kernel's out-of-memory killer, if nobody else sent it\) after [\d,]+ distinct states\n",
                        err), err


def test_the_workers_die_with_the_coordinator_however_it_dies(tmp_path):
    process, _ = start_slow(tmp_path)
    pids = workers_of(process)
    process.kill()
    process.communicate(timeout=60)
    assert gone(pids)
