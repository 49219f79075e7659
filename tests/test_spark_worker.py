"""What the Spark engine's executors run, without Spark: admission, visited sets, and the
levels run in one task.

Rows go from function to function as Spark would hand them on: a level's output batches are
the next level's input.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import socket
import sys
from collections import Counter

import pytest

from kraftcheck.checker.config import CheckConfig
from kraftcheck.checker import spark_worker as worker
from tests.spark_helpers import REPO


def test_admission_keeps_the_least_parent_and_skips_the_visited():
    """A partition's admission, without Spark: one record per new fingerprint, the least
    ``(parent, ordinal)`` whatever the order of the candidates, none already visited, sorted,
    and the visited set grown by exactly those."""
    import numpy as np

    from kraftcheck.checker.spark_worker import Visited, admit, records_batch

    visited = Visited(np.array([5, 20], np.int64), np.array([0, 5], np.int64), np.array([0, 1], np.int32))
    first = records_batch([30, 20, 7], [9, 9, 9], [2, 0, 1], ["A", "B", "C"], [b"x", b"y", b"z"])
    second = records_batch([7, 30, 30], [8, 9, 3], [4, 0, 5], ["D", "E", "F"], [b"p", b"q", b"r"])
    for candidates in ([first, second], [second, first]):
        admitted, grown = admit(visited, candidates)
        assert admitted.column("fp").to_pylist() == [7, 30]
        assert admitted.column("parent").to_pylist() == [8, 3]
        assert admitted.column("action").to_pylist() == ["D", "F"]
        assert grown.fp.tolist() == [5, 7, 20, 30]
        assert grown.parent.tolist() == [0, 8, 5, 3] and grown.ordinal.tolist() == [0, 4, 1, 5]
    admitted, grown = admit(visited, [first, second], quota=1)
    assert admitted.column("fp").to_pylist() == [7] and grown.fp.tolist() == [5, 7, 20]


def test_visited_pieces_bear_their_least_fingerprint_and_hold_the_parent_records():
    """A visited set goes out in pieces of VISITED_PER_ROW records, each row's ``parent`` its
    least fingerprint (what a counterexample's lookup picks the piece by); a piece finds the
    parent records it holds and no others."""
    import numpy as np

    from kraftcheck.checker.spark_worker import VISITED, VISITED_PER_ROW, Visited, find_parent, visited_rows

    count = 2 * VISITED_PER_ROW + 1000
    fps = np.arange(count, dtype=np.int64) * 3 - 100_000
    visited = Visited(fps, fps + 1, (np.arange(count) % 7).astype(np.int32))
    [rows] = list(visited_rows(42, visited))
    assert rows.column("kind").to_pylist() == [VISITED] * 3 and rows.column("fp").to_pylist() == [42] * 3
    assert rows.column("n").to_pylist() == [VISITED_PER_ROW, VISITED_PER_ROW, 1000]
    assert rows.column("parent").to_pylist() == [int(fps[0]), int(fps[VISITED_PER_ROW]), int(fps[2 * VISITED_PER_ROW])]
    pieces = rows.column("state").to_pylist()
    wanted = int(fps[VISITED_PER_ROW + 5])
    assert find_parent(wanted, pieces[1]) == (wanted + 1, (VISITED_PER_ROW + 5) % 7)
    assert find_parent(wanted, pieces[0]) is None and find_parent(wanted + 1, pieces[1]) is None
    [empty] = list(visited_rows(42, Visited(fps[:0], fps[:0], np.zeros(0, np.int32))))
    assert empty.column("n").to_pylist() == [0] and empty.column("parent").to_pylist() == [None]


# ---------------------------------------------------------------- levels run in one task

#: two partitions, as in the engine's tests on local[2]
KEYS = worker.partition_keys(2)


def first_rows(model_ref: str, settings: dict | None = None) -> list:
    from kraftcheck.checker.config import build_model

    model = build_model(CheckConfig(model=model_ref, settings=settings or {}))
    records, _, _ = worker.initial_records(model, len(KEYS))
    return worker.first_level_rows(records, KEYS)


def run_levels(rows: list, model_ref: str, settings: dict | None = None, **job) -> list:
    config = CheckConfig(model=model_ref, settings=settings or {})
    options = {"levels": 100, "step_levels": 100, "narrow": 1000, **job}
    job = worker.Job(config_json=worker.job_config(config), keys=KEYS, **options)
    return list(worker.levels_in_one_task(job, iter(rows)))


def notes(rows: list) -> dict[int, Counter]:
    """Per level, the sum of ``n`` per kind of note (one for a note without ``n``; the seconds left out)."""
    per_level: dict[int, Counter] = {}
    for batch in rows:
        for kind, n, level in zip(*(batch.column(c).to_pylist() for c in ("kind", "n", "level"))):
            if kind not in worker.BLOCK_KINDS and kind != worker.SECONDS:
                per_level.setdefault(level, Counter())[kind] += 1 if n is None else n
    return per_level


def held(rows: list, kind: int) -> dict[int, int]:
    """Per partition key, how many records the rows of ``kind`` (visited, successor) hold."""
    counts: Counter = Counter()
    for batch in rows:
        for k, key, n in zip(*(batch.column(c).to_pylist() for c in ("kind", "fp", "n"))):
            if k == kind:
                counts[key] += n
    return dict(counts)


# Two counters 0..2 (tests.models:counters n=2 limit=2): levels of 1, 2, 3, 2, 1 states that
# generate 2, 6, 8, 6, 2 transitions.
COUNTERS = ("tests.models:counters", {"n": 2, "limit": 2})


def test_levels_in_one_task_stop_after_a_wide_level_and_hand_on_its_successors():
    rows = run_levels(first_rows(*COUNTERS), *COUNTERS, narrow=5)
    per_level = notes(rows)
    assert sorted(per_level) == [0, 1]
    assert [per_level[i][worker.ADMITTED] for i in (0, 1)] == [1, 2]
    assert [per_level[i][worker.GENERATED] for i in (0, 1)] == [2, 6]
    assert sum(held(rows, worker.VISITED).values()) == 3
    # level 3's candidates: (2,0), (1,1), (0,2), each once; (0,0) is visited and stays behind
    assert sum(held(rows, worker.SUCCESSOR).values()) == 3
    assert set(held(rows, worker.VISITED)) == set(KEYS) and set(held(rows, worker.SUCCESSOR)) <= set(KEYS)

    # the rows handed on are what the next task starts from: it runs to the end
    rest = notes(run_levels(rows, *COUNTERS))
    assert [rest[i][worker.ADMITTED] for i in sorted(rest)] == [3, 2, 1, 0]
    assert [rest[i][worker.GENERATED] for i in sorted(rest)] == [8, 6, 2, 0]


def test_levels_in_one_task_match_one_level_per_partition():
    """A task running several levels hands on the visited sets of the level-by-level path,
    record for record, and the same new candidates (that path may send some twice, or some
    another partition has visited: admission drops them)."""
    config = CheckConfig(model=COUNTERS[0], settings=COUNTERS[1])
    job = worker.Job(config_json=worker.job_config(config), keys=KEYS)
    rows = first_rows(*COUNTERS)
    for _ in range(2):
        rows = [batch for key in KEYS for batch in worker.level_partition(job, iter(_of_key(rows, key)))]
    together = run_levels(first_rows(*COUNTERS), *COUNTERS, levels=2)
    assert visited_records(together) == visited_records(rows)
    assert new_candidates(together) == new_candidates(rows) and len(new_candidates(rows)) == 3


def visited_records(rows: list) -> dict[int, list]:
    """Per partition key, its visited set's parent records in order."""
    per_key: dict[int, list] = {}
    for batch in rows:
        for kind, key, data in zip(*(batch.column(c).to_pylist() for c in ("kind", "fp", "state"))):
            if kind == worker.VISITED and data:
                records = worker.unpack(data)
                per_key.setdefault(key, []).extend(zip(*(records.column(c).to_pylist() for c in worker.PARENT_COLUMNS)))
    return per_key


def new_candidates(rows: list) -> set[int]:
    visited = {fp for records in visited_records(rows).values() for fp, _, _ in records}
    candidates = set()
    for batch in rows:
        for kind, data in zip(batch.column("kind").to_pylist(), batch.column("state").to_pylist()):
            if kind == worker.SUCCESSOR:
                candidates.update(worker.unpack(data).column("fp").to_pylist())
    return candidates - visited


def _of_key(rows: list, key: int) -> list:
    import pyarrow.compute as pc

    return [batch.filter(pc.equal(batch.column("fp"), key)) for batch in rows]


def test_levels_in_one_task_leave_a_level_past_max_states_to_the_level_by_level_path():
    rows = run_levels(first_rows(*COUNTERS), *COUNTERS, max_new=2)
    assert sorted(notes(rows)) == [0]  # level 2 would make three states: not run
    assert sum(held(rows, worker.VISITED).values()) == 1
    assert sum(held(rows, worker.SUCCESSOR).values()) == 2  # level 2's candidates, as they came


def test_levels_in_one_task_stop_after_a_level_that_finds_something():
    # Die Hard: the first state with four gallons in the big jug is at level 7
    per_level = notes(run_levels(first_rows("tests.models:diehard"), "tests.models:diehard"))
    assert sorted(per_level) == list(range(7))
    assert [i for i in per_level if worker.BAD_STATE in per_level[i]] == [6]
    assert per_level[6][worker.BAD_STATE] == 1  # the index of NotFourGallons
    # a countdown from 2 deadlocks at its third level
    per_level = notes(run_levels(first_rows("tests.models:countdown", {"start": 2}), "tests.models:countdown",
                                 {"start": 2}))
    assert sorted(per_level) == [0, 1, 2] and worker.DEADLOCK in per_level[2]


@pytest.mark.parametrize("step_levels, last_level, found", [(100, 2, worker.BAD_STEP), (2, 3, worker.BAD_STATE)])
def test_levels_in_one_task_check_steps_only_where_told(step_levels, last_level, found):
    """A counter 0..3 whose step property forbids 2 -> 3 (found expanding level 3) and whose
    invariant forbids 3 (found at level 4): at the depth bound no step property is checked."""
    steps = "tests.test_spark_engine:steps"
    per_level = notes(run_levels(first_rows(steps), steps, step_levels=step_levels))
    assert max(per_level) == last_level and found in per_level[last_level]


def test_levels_in_one_task_run_at_most_levels():
    rows = run_levels(first_rows(*COUNTERS), *COUNTERS, levels=3)
    assert sorted(notes(rows)) == [0, 1, 2] and sum(held(rows, worker.SUCCESSOR).values()) == 2


def test_levels_in_one_task_stop_after_a_level_that_leaves_too_many_states_visited():
    rows = run_levels(first_rows(*COUNTERS), *COUNTERS, max_visited=3)
    assert sorted(notes(rows)) == [0, 1, 2] and sum(held(rows, worker.VISITED).values()) == 6


def test_a_worker_freezes_what_it_keeps_once_the_model_is_built():
    """PySpark's daemon collects garbage after every task: the modules and the model, built
    once per worker, are frozen out of those collections (built once, frozen once)."""
    import gc

    config = CheckConfig(model="tests.models:counters", settings={"n": 2, "limit": 5})
    job = worker.Job(config_json=worker.job_config(config))
    worker._MODELS.pop(job.config_json, None)
    gc.unfreeze()
    try:
        model = worker.model_for(job)
        assert gc.get_freeze_count() > 0
        gc.unfreeze()
        assert worker.model_for(job) is model and gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
        worker._MODELS.pop(job.config_json, None)


def test_warm_up_builds_the_model_and_yields_nothing():
    import gc

    config = CheckConfig(model="tests.models:counters", settings={"n": 3, "limit": 4})
    job = worker.Job(config_json=worker.job_config(config))
    worker._MODELS.pop(job.config_json, None)
    try:
        assert list(worker.warm_up(job, iter(first_rows("tests.models:counters", {"n": 3, "limit": 4})))) == []
        assert job.config_json in worker._MODELS
    finally:
        gc.unfreeze()
        worker._MODELS.pop(job.config_json, None)


@pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK") or not os.path.isdir("/proc/self/fd"), reason="Linux only")
def test_prompt_acknowledgements_are_asked_of_loopback_tcp_connections_only():
    listener = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(listener.getsockname())
    server, _ = listener.accept()
    left, right = socket.socketpair()  # a Unix socket: no Nagle's algorithm to work around
    datagrams = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    datagrams.bind(("127.0.0.1", 0))
    with listener, client, server, left, right, datagrams:
        for end in (client, server):  # delayed acknowledgements, as on a connection in use
            end.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 0)
        found = worker.acknowledge_promptly()
        assert {(client.getsockname(), client.getpeername()), (server.getsockname(), server.getpeername())} <= found
        assert [end.getsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK) for end in (client, server)] == [1, 1]
        # (a session's Py4J connections may be among them: all on loopback)
        assert all(ipaddress.ip_address(peer[0]).is_loopback for _, peer in found)
        assert all(datagrams.getsockname() not in connection for connection in found)


def test_a_task_asks_for_prompt_acknowledgements_before_it_reads_its_input(monkeypatch):
    """The schema's acknowledgement is what a small input waits for: asked for once the input
    is read, it changes nothing."""
    config = CheckConfig(model=COUNTERS[0], settings=COUNTERS[1])
    job = worker.Job(config_json=worker.job_config(config), keys=KEYS)
    events = []
    monkeypatch.setattr(worker, "acknowledge_promptly", lambda: events.append("acknowledge"))

    def read(rows):
        for batch in rows:
            events.append("read")
            yield batch

    rows = first_rows(*COUNTERS)
    list(worker.level_partition(job, read(_of_key(rows, KEYS[0]))))
    assert events[:2] == ["acknowledge", "read"] and events.count("acknowledge") == 1
    events.clear()
    list(worker.levels_in_one_task(dataclasses.replace(job, levels=100, step_levels=100, narrow=1000), read(rows)))
    assert events[:2] == ["acknowledge", "read"] and events.count("acknowledge") == 1


# ---------------------------------------------------------------- placing states by the model's locality

def every_state(model) -> list:
    """Every reachable state of ``model``, in BFS order."""
    states, seen = list(model.init_states()), set()
    seen.update(states)
    for state in states:
        for _, target in model.successors(state):
            if target not in seen:
                seen.add(target)
                states.append(target)
    return states


@pytest.mark.parametrize("partitions", [2, 3, 5])
def test_a_state_lies_in_the_partition_of_its_locality_key(partitions):
    """With the model's locality hint (here the first counter), every state's fingerprint lies
    in the partition its key hashes to: alike whether the driver encodes it (initial states)
    or an expansion generates it, through a step that kept its parent's key or changed it."""
    from kraftcheck.checker.config import build_model
    from kraftcheck.checker.fingerprint import fingerprint

    model = build_model(CheckConfig(model="tests.models:counters", settings={"n": 3, "limit": 2, "locality": [0]}))
    encode = worker.encoder(model, partitions)
    states = every_state(model)
    fps = [encode(state)[0] for state in states]
    assert len(set(fps)) == len(states) == 27
    assert list(worker.partition_of(fps, partitions)) == [fingerprint(state[0]) % partitions for state in states]
    # each fingerprint within `partitions` of the state's plain one
    assert all(abs(fp - worker.signed(fingerprint(state))) < partitions for fp, state in zip(fps, states))

    expansion = worker._Expansion(model, False, partitions)
    new, _ = expansion.successors(states, fps, [], worker._Rows())
    by_fp = dict(zip(fps, states))
    generated = new.column("fp").to_pylist()
    assert sorted(generated) == sorted(fps)  # every state is some state's successor, each once
    assert all(worker.decode(data) == by_fp[fp] for fp, data in zip(generated, new.column("state").to_pylist()))


def test_locality_is_ignored_with_one_partition_without_a_hint_and_with_symmetry():
    from kraftcheck.checker.config import build_model
    from kraftcheck.checker.fingerprint import fingerprint

    hinted = build_model(CheckConfig(model="tests.models:counters", settings={"n": 2, "limit": 2, "locality": [1]}))
    plain = build_model(CheckConfig(model="tests.models:counters", settings={"n": 2, "limit": 2}))
    assert worker.locality_key(hinted, 2)((7, 8)) == 8
    assert worker.locality_key(hinted, 1) is None and worker.locality_key(plain, 2) is None
    for state in every_state(plain):
        assert worker.encoder(plain, 2)(state)[0] == worker.encoder(hinted, 1)(state)[0] == worker.signed(fingerprint(state))
    hinted.canonical = lambda state: tuple(sorted(state))
    assert worker.locality_key(hinted, 2) is None


@pytest.mark.parametrize("fp", [2**63 - 1, 2**63 - 2, -2**63, -2**63 + 1, 0, -1])
@pytest.mark.parametrize("partitions", [2, 3, 7])
def test_a_placed_fingerprint_stays_a_signed_64_bit_integer(fp, partitions):
    for residue in range(partitions):
        moved = worker.placed(fp, residue, partitions)
        assert -2**63 <= moved < 2**63 and abs(moved - fp) < partitions
        assert int(worker.partition_of([moved], partitions)[0]) == residue


def shipped(settings: dict, partitions: int) -> tuple[int, int, int]:
    """(levels, states, successor records shipped) of a whole search of the counters over
    ``partitions`` partitions, run in this process."""
    from kraftcheck.checker.config import build_model

    config = CheckConfig(model="tests.models:counters", settings=settings)
    job = worker.Job(config_json=worker.job_config(config), check_deadlock=False, keys=worker.partition_keys(partitions))
    return worker.search_in_process(build_model(config), job)


def test_placing_states_by_locality_ships_fewer_successors_and_finds_the_same_states():
    """Four counters 0..3 (256 states, 13 levels).  With one partition a task knows every
    visited state: one record shipped per state but the first.  Over two partitions placed by
    fingerprint, a successor bound for the other partition travels even when visited; placed
    by the first counter, only those of the steps that change it (a quarter) can."""
    base = {"n": 4, "limit": 3}
    assert shipped(base, 1) == (13, 256, 255)
    assert shipped(base, 2) == (13, 256, 635)
    assert shipped({**base, "locality": [0]}, 2) == (13, 256, 509)


def test_a_worker_builds_a_shipped_model_whose_driver_copy_is_on_its_path_too(tmp_path, monkeypatch):
    """spark-submit --py-files mymodel.py: the executor's work directory (its current
    directory) holds the shipped copy, and on a cluster on the driver's machine the driver's
    copy is on the path too (the job's paths); both are the same model, not a namesake."""
    import uuid

    name = f"shipped_{uuid.uuid4().hex}"
    source = (REPO / "tests" / "models.py").read_bytes()
    for folder in ("work", "driver"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{name}.py").write_bytes(source)
    monkeypatch.chdir(tmp_path / "work")
    # as PySpark's worker puts it: the directory of the shipped files first
    monkeypatch.setattr(sys, "path", [str(tmp_path / "work"), *(p for p in sys.path if p not in ("", "."))])
    config = CheckConfig(model=f"{name}:diehard", settings={})
    job = worker.Job(config_json=worker.job_config(config), paths=(str(tmp_path / "driver"),))
    try:
        model = worker.model_for(job)
        assert len(list(model.init_states())) == 1
        assert sys.modules[name].__file__ == str(tmp_path / "work" / f"{name}.py")
    finally:
        worker._MODELS.pop(job.config_json, None)
        sys.modules.pop(name, None)
