"""The Spark engine on real Spark servers on loopback: a standalone master with one worker, and a
Spark Connect server, each started from the pyspark package and stopped by process id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.spark_helpers import (
    REPO,
    alive,
    free_port,
    loopback_env,
    master_status,
    spark_home,
    standalone_cluster,
    start_server,
    stop_server,
    wait_for_port,
)

pytestmark = pytest.mark.slow

def kraftcheck(*args):
    return subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=900, env=loopback_env())


def check_both(tmp_path, master: str, *args: str) -> tuple[dict, dict, subprocess.CompletedProcess]:
    summaries = {}
    spark_run = None
    for engine in ("local", "spark"):
        out = tmp_path / engine
        p = kraftcheck("check", *args, "--engine", engine, "--spark-master", master, "--json", str(out / "s.json"),
                       "--trace-dir", str(out), "--quiet")
        assert p.returncode in (0, 3, 11, 12), p.stderr
        summaries[engine] = json.loads((out / "s.json").read_text())
        spark_run = p
    local, spark = summaries["local"], summaries["spark"]
    for key in ("verdict", "distinct_states", "generated_states", "depth"):
        assert spark[key] == local[key], key
    assert [(v["invariant"], v["length"]) for v in spark["violations"]] == [
        (v["invariant"], v["length"]) for v in local["violations"]]
    assert {a: c["generated"] for a, c in spark["coverage"].items()} == {
        a: c["generated"] for a, c in local["coverage"].items()}
    assert spark["engine"] == "spark"
    return local, spark, spark_run


# ---------------------------------------------------------------- standalone


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("standalone")) as cluster:
        yield cluster


def test_standalone_cluster_same_answers(standalone, tmp_path):
    url, ui = standalone
    _, spark, _ = check_both(tmp_path, url, "--model", "tests.models:diehard")
    assert (spark["distinct_states"], spark["depth"], spark["violations"][0]["length"]) == (14, 7, 7)
    # the master ran the search as an application, on its worker's cores
    apps = master_status(ui)["completedapps"]
    assert [app["name"] for app in apps] == ["kraftcheck"] and apps[0]["cores"] == 2


def test_standalone_cluster_deadlock_and_coverage(standalone, tmp_path):
    url, _ = standalone
    _, spark, _ = check_both(tmp_path, url, "--model", "tests.models:countdown", "--set", "start=4")
    assert spark["verdict"] == "deadlock" and spark["deadlock"]["length"] == 5


# ---------------------------------------------------------------- Spark Connect


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    logs = tmp_path_factory.mktemp("connect")
    port = free_port()
    server = start_server([os.path.join(spark_home(), "bin", "spark-submit"),
                     "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
                     "--master", "local[2,2]",
                     "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
                     "--conf", f"spark.connect.grpc.binding.port={port}",
                     "--conf", "spark.driver.host=127.0.0.1",
                     "--conf", "spark.driver.bindAddress=127.0.0.1",
                     "--conf", "spark.ui.enabled=false",
                     "spark-internal"], logs / "connect.log")
    try:
        wait_for_port(port, server, logs / "connect.log")
        yield f"sc://127.0.0.1:{port}", server
    finally:
        stop_server(server)
    assert not alive(server.pid)


def test_spark_connect_same_answers(connect_server, tmp_path):
    url, _ = connect_server
    _, spark, _ = check_both(tmp_path, url, "--model", "tests.models:diehard")
    assert spark["violations"][0]["length"] == 7


def test_spark_connect_step_property_and_depth_bound(connect_server, tmp_path):
    url, _ = connect_server
    check_both(tmp_path, url, "--model", "tests.test_spark_engine:steps")
    check_both(tmp_path, url, "--model", "tests.models:counters", "--max-depth", "4")


def test_master_without_workers_is_one_line_and_exit_2(tmp_path):
    spark_class = os.path.join(spark_home(), "bin", "spark-class")
    port = free_port()
    master = start_server([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                     "--port", str(port), "--webui-port", str(free_port())], tmp_path / "master.log")
    try:
        wait_for_port(port, master, tmp_path / "master.log")
        started = time.monotonic()
        p = kraftcheck("check", "--model", "tests.models:diehard", "--engine", "spark",
                       "--spark-master", f"spark://127.0.0.1:{port}")
        assert time.monotonic() - started < 120
        assert p.returncode == 2
        errors = [line for line in p.stderr.splitlines() if line.startswith("kraftcheck: error:")]
        assert errors == [f"kraftcheck: error: no executor registered with Spark master spark://127.0.0.1:{port} "
                          "within 45 s (is a worker running, with free cores and memory?)"]
    finally:
        stop_server(master)
