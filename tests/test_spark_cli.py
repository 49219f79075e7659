"""The Spark engine through the command line: summaries and traces, a failing task, a bad master,
Ctrl-C and the other stopping signals."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.processes import default_stopping_signals
from tests.spark_helpers import REPO, alive, descendants, free_port, loopback_env

pytestmark = pytest.mark.slow


def kraftcheck(*args, env=None, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "kraftcheck.checker.cli", *args],
        capture_output=True, text=True, cwd=REPO, timeout=timeout, env=env or loopback_env(),
    )


def test_summary_and_trace_equal_the_local_engines(tmp_path):
    summaries = {}
    for engine in ("local", "spark"):
        out = tmp_path / engine
        p = kraftcheck("check", "--model", "tests.models:diehard", "--engine", engine, "--spark-master", "local[2]",
                       "--json", str(out / "summary.json"), "--trace-dir", str(out))
        assert p.returncode == 12, p.stderr
        summaries[engine] = json.loads((out / "summary.json").read_text())
    local, spark = summaries["local"], summaries["spark"]
    assert spark["engine"] == "spark" and local["engine"] == "local"
    for key in ("verdict", "distinct_states", "generated_states", "depth", "stopped_by", "never_enabled"):
        assert spark[key] == local[key], key
    assert set(spark) == set(local)
    assert len(spark["level_seconds"]) == spark["depth"] == 7
    [v] = spark["violations"]
    assert (v["invariant"], v["length"]) == ("NotFourGallons", 7)
    trace = json.loads(Path(v["trace"]).read_text())
    assert len(trace["states"]) == 7 and trace["states"][-1]["big"] == 4


def test_one_line_per_level_on_stderr():
    p = kraftcheck("check", "--model", "tests.models:countdown", "--set", "start=2", "--engine", "spark",
                   "--spark-master", "local[1]")
    assert p.returncode == 11, p.stderr
    levels = [line for line in p.stderr.splitlines() if line.startswith("level ")]
    assert len(levels) == 3 and levels[-1].startswith("level 3: frontier 1, distinct 3, ")
    assert "Traceback" not in p.stderr


def test_quiet_prints_no_levels():
    p = kraftcheck("check", "--model", "tests.models:countdown", "--engine", "spark", "--spark-master", "local[1]",
                   "--quiet", "--no-deadlock")
    assert p.returncode == 0, p.stderr
    assert not [line for line in p.stderr.splitlines() if line.startswith("level ")]


def test_a_task_that_fails_once_is_retried_and_changes_nothing(tmp_path):
    marker = tmp_path / "failed-once"
    summary = tmp_path / "summary.json"
    p = kraftcheck("check", "--model", "tests.models:counters", "--engine", "spark", "--spark-master", "local[2]",
                   "--json", str(summary), "--quiet", env=loopback_env(KRAFTCHECK_SPARK_FAIL_ONCE=str(marker)))
    assert p.returncode == 0, p.stderr
    assert marker.is_file()  # a task did fail
    data = json.loads(summary.read_text())
    assert (data["distinct_states"], data["generated_states"], data["depth"]) == (64, 289, 10)
    assert data["coverage"]["Inc"]["generated"] == 144


@pytest.mark.parametrize("scheme", ["spark", "sc"])
def test_unreachable_master_is_one_line_and_exit_2(scheme):
    url = f"{scheme}://127.0.0.1:{free_port()}"
    started = time.monotonic()
    p = kraftcheck("check", "--model", "tests.models:diehard", "--engine", "spark", "--spark-master", url, timeout=120)
    assert time.monotonic() - started < 60
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [p.stderr.strip()]
    assert p.stderr.startswith(f"kraftcheck: error: cannot reach Spark master {url}")


@pytest.mark.parametrize("master, message", [
    ("bogus://x", "bad Spark master 'bogus://x': expected local[N], spark://HOST:PORT, sc://HOST:PORT, yarn or "
                  "k8s://HOST:PORT"),
    ("local[0]", "bad local master 'local[0]': the number of threads must be from 1 to 2147483647"),
    ("local[two]", "bad local master 'local[two]': expected local, local[N], local[*] or local[N,F]"),
    # passes kraftcheck's checks; spark-submit rejects it, with a stack trace of a dozen lines
    ("yarn", "cannot start Spark with master yarn: When running with master 'yarn' either HADOOP_CONF_DIR or "
             "YARN_CONF_DIR must be set in the environment."),
], ids=["bogus", "no-threads", "not-a-number", "yarn"])
def test_bad_master_is_one_line_and_exit_2(master, message):
    env = loopback_env()
    env.pop("HADOOP_CONF_DIR", None)
    env.pop("YARN_CONF_DIR", None)
    p = kraftcheck("check", "--model", "tests.models:diehard", "--engine", "spark", "--spark-master", master, env=env)
    assert p.returncode == 2
    assert p.stderr == f"kraftcheck: error: {message}\n"


def test_a_jvm_that_cannot_start_is_one_line_and_exit_2():
    p = kraftcheck("check", "--model", "tests.models:diehard", "--engine", "spark", "--spark-master", "local[1]",
                   env=loopback_env(SPARK_DRIVER_MEMORY="1k"))
    assert p.returncode == 2
    [line] = p.stderr.splitlines()
    # the JVM's own words, which its version words: "Too small maximum heap" on Java 17
    assert re.fullmatch(r"kraftcheck: error: cannot start Spark with master local\[1,2\]: Too small \w+ heap", line)


SEARCH_STOPPED = re.compile(
    r"interrupted by (SIG[A-Z]+): the search stopped after ([\d,]+) distinct states, ([\d,]+) generated, "
    r"depth ([\d,]+) \(\d+\.\d\d s\); the rest is unexplored")


@pytest.mark.parametrize("signum, code, to_group", [
    (signal.SIGINT, 130, True),  # Ctrl-C: the terminal signals the whole process group
    (signal.SIGTERM, 143, False),  # kill PID
    (signal.SIGHUP, 129, True),  # the terminal hung up
], ids=["SIGINT-group", "SIGTERM", "SIGHUP-group"])
def test_a_signal_stops_the_job_prints_the_figures_and_leaves_no_process(tmp_path, signum, code, to_group):
    process = subprocess.Popen(
        [sys.executable, "-m", "kraftcheck.checker.cli", "check", "--model", "tests.models:counters",
         "--set", "n=6", "--set", "limit=6", "--engine", "spark", "--spark-master", "local[2]",
         "--trace-dir", str(tmp_path)],
        cwd=REPO, env=loopback_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=default_stopping_signals,
    )
    levels = threading.Event()
    err: list[str] = []

    def read_stderr():
        for line in process.stderr:
            err.append(line)
            if line.startswith("level 3:"):
                levels.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert levels.wait(300), "".join(err)
        spawned = descendants(process.pid)
        assert spawned, "Spark started no process"
        if to_group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        assert process.wait(60) == code, "".join(err)
        reader.join(10)
        name = signal.Signals(signum).name
        # the levels, the progress lines, and one line more: no traceback, no JVM output
        assert [line for line in err if not line.startswith(("level ", "progress: "))] == [
            f"kraftcheck: error: interrupted by {name}\n"], "".join(err)
        stopped = SEARCH_STOPPED.fullmatch(process.stdout.read().splitlines()[-1])
        assert stopped and stopped.group(1) == name
        assert int(stopped.group(4).replace(",", "")) >= 3  # the driver had taken three levels in
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(alive(pid) for pid in spawned):
            time.sleep(0.5)
        assert not [pid for pid in spawned if alive(pid)]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_spark_submit_runs_the_command_line_in_its_session(tmp_path):
    from tests.spark_helpers import spark_home

    config = REPO / "spec" / "configs" / "epochgate.toml"
    args = ["check", str(config), "--set", "mutant=fenced_leader_kept", "--trace-dir", str(tmp_path), "--quiet"]
    local = kraftcheck(*args, "--json", str(tmp_path / "local.json"))
    assert local.returncode == 12, local.stderr
    p = subprocess.run(
        [os.path.join(spark_home(), "bin", "spark-submit"), "--master", "local[2]",
         "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
         "--conf", "spark.ui.enabled=false", "--files", str(config),
         str(REPO / "checker" / "spark_submit.py"), *args, "--engine", "spark", "--json", str(tmp_path / "spark.json")],
        capture_output=True, text=True, cwd=tmp_path, timeout=600, env=loopback_env(),
    )
    assert p.returncode == 12, p.stderr[-3000:]
    local, spark = (json.loads((tmp_path / f"{e}.json").read_text()) for e in ("local", "spark"))
    assert spark["engine"] == "spark"
    for key in ("distinct_states", "generated_states", "depth"):
        assert spark[key] == local[key], key
    assert [(v["invariant"], v["length"]) for v in spark["violations"]] == [
        (v["invariant"], v["length"]) for v in local["violations"]]


def test_a_signal_while_spark_starts_leaves_no_process(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "kraftcheck.checker.cli", "check", "--model", "tests.models:diehard",
         "--engine", "spark", "--spark-master", "local[1]", "--trace-dir", str(tmp_path)],
        cwd=REPO, env=loopback_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=default_stopping_signals,
    )
    try:
        # spark-submit's launcher, then the JVM: each takes seconds before the session exists
        deadline = time.monotonic() + 120
        spawned: set[int] = set()
        while not spawned and time.monotonic() < deadline and process.poll() is None:
            spawned = descendants(process.pid)
            time.sleep(0.005)
        assert spawned, "spark-submit did not start"
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 143
        assert err == "kraftcheck: error: interrupted by SIGTERM\n"
        # the JVM runs in a session of its own, led by the process spark-submit started
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _in_sessions(spawned):
            time.sleep(0.5)
        assert not _in_sessions(spawned)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _in_sessions(sessions: set[int]) -> list[int]:
    """The live processes of the given sessions."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) in sessions:
            found.append(int(entry))
    return found

