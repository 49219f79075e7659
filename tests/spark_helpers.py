"""What the Spark tests share: a loopback environment, free ports, the parity check, process trees."""

from __future__ import annotations

import os
import socket
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def loopback_env(**extra: str) -> dict[str, str]:
    """The environment of a Spark process started by a test: loopback only, this venv's Python."""
    return {
        **os.environ,
        "SPARK_HOME": spark_home(),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYTHONPATH": str(REPO),
        **extra,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def figures(result) -> dict:
    """What must be equal between the engines."""
    return {
        "distinct": result.distinct_states,
        "generated": result.generated_states,
        "depth": result.depth,
        "verdict": result.verdict,
        "stopped_by": result.stopped_by,
        "violations": [(cx.kind, cx.name, cx.length) for cx in result.counterexamples],
        "generated_by_action": {name: c["generated"] for name, c in result.coverage.items()},
        "never_enabled": result.never_enabled,
    }


def assert_replays(model, result) -> None:
    """Every counterexample starts in an initial state, takes real steps and ends where it says."""
    inits = list(model.init_states())
    for cx in result.counterexamples:
        assert cx.trace[0][0] is None and cx.trace[0][1] in inits
        for (_, before), (action, after) in zip(cx.trace, cx.trace[1:]):
            assert (action, after) in list(model.successors(before))
        last = cx.trace[-1][1]
        if cx.kind == "invariant":
            assert not model.invariants[cx.name](last)
        elif cx.kind == "deadlock":
            assert not list(model.successors(last))
        else:
            (_, before), (action, after) = cx.trace[-2], cx.trace[-1]
            assert not model.action_invariants[cx.name](before, action, after)


def assert_same(local, spark, model) -> None:
    assert spark.engine == "spark"
    assert figures(spark) == figures(local)
    initial = len({s for s in model.init_states()}) if local.depth else 0
    if local.stopped_by is None:
        # which parent first reaches a state may differ; how many states each level adds may not
        assert sum(c["distinct"] for c in spark.coverage.values()) == spark.distinct_states - initial
    assert_replays(model, spark)


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextmanager
def narrow_level(handle, value: str | None):
    """The session's ``spark.kraftcheck.narrowLevel`` set to ``value`` (None: its default) meanwhile."""
    from kraftcheck.checker.spark_session import NARROW_KEY

    if value is not None:
        handle.spark.conf.set(NARROW_KEY, value)
    try:
        yield
    finally:
        handle.spark.conf.unset(NARROW_KEY)


@pytest.fixture(scope="module")
def local_spark():
    """One local[2] session for a test module: the engine uses a running session and leaves it running."""
    from kraftcheck.checker.spark_session import open_session

    with pytest.MonkeyPatch.context() as mp:
        for key, value in loopback_env().items():
            mp.setenv(key, value)
        handle = open_session("local[2]")
        yield handle
        handle.stop()
