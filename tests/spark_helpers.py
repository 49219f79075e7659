"""What the Spark tests share: a loopback environment, free ports, the parity check, process trees."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: Seconds a Spark server started by a test has to start listening (or a worker to register).
START_TIMEOUT_S = 180


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


# ---------------------------------------------------------------- servers started by a test


def start_server(args: list[str], log_path, env: dict[str, str] | None = None) -> subprocess.Popen:
    log = open(log_path, "w")
    # spark-class and spark-submit exec java: the process id is the JVM's
    return subprocess.Popen(args, env=env or loopback_env(), stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
                            stdin=subprocess.DEVNULL)


def stop_server(process: subprocess.Popen) -> None:
    """Stop a server by its process id, then whatever it started that outlives it."""
    below = descendants(process.pid)
    process.terminate()
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(alive(pid) for pid in below):
        time.sleep(0.5)
    for pid in below:
        if alive(pid):
            os.kill(pid, 9)


def wait_for_port(port: int, process: subprocess.Popen, log_path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited with {process.returncode}:\n{open(log_path).read()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                return
        except OSError:
            time.sleep(1)
    pytest.fail(f"nothing listens on 127.0.0.1:{port} after {START_TIMEOUT_S} s")


def master_status(ui_port: int) -> dict:
    """The standalone master's status page, as JSON: its workers and applications."""
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as response:
        return json.load(response)


@contextmanager
def standalone_cluster(logs: Path, *, workers: int = 1, cores: int = 2, memory: str = "2g",
                       env: dict[str, str] | None = None):
    """A standalone master and ``workers`` workers on 127.0.0.1, each with ``cores`` cores and
    its own work directory under ``logs``; yields (master URL, the master's web UI port) once
    every worker has registered, and stops them all by process id."""
    spark_class = os.path.join(spark_home(), "bin", "spark-class")
    port, ui = free_port(), free_port()
    master = start_server([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                           "--port", str(port), "--webui-port", str(ui)], logs / "master.log", env)
    started: list[subprocess.Popen] = []
    try:
        wait_for_port(port, master, logs / "master.log")
        for i in range(workers):
            (logs / f"work{i}").mkdir()
            started.append(start_server(
                [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                 "--webui-port", str(free_port()), "--cores", str(cores), "--memory", memory,
                 "--work-dir", str(logs / f"work{i}"), f"spark://127.0.0.1:{port}"], logs / f"worker{i}.log", env))
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                if sum(w.get("state") == "ALIVE" for w in master_status(ui).get("workers", [])) == workers:
                    break
            except OSError:
                pass
            time.sleep(1)
        else:
            pytest.fail(f"not every worker registered:\n{(logs / 'worker0.log').read_text()[-3000:]}")
        yield f"spark://127.0.0.1:{port}", ui
    finally:
        for worker in started:
            stop_server(worker)
        stop_server(master)
