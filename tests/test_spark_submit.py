"""spark-submit the cluster way: the reference's commands (docs/reference.md), verbatim, on a standalone master with two
one-core workers on 127.0.0.1 whose executors run a Python without kraftcheck (a venv with only
what the executors import), against the local engine; and the one line a task that cannot
import kraftcheck becomes."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import time

import pytest

from kraftcheck.checker.spark_package import EXECUTOR_REQUIREMENTS
from tests.spark_helpers import REPO, master_status, spark_home, standalone_cluster

pytestmark = pytest.mark.slow

MUTANT = "keep_offline_replica_in_isr"


def readme_block(containing: str) -> str:
    """The ``sh`` block of the reference (docs/reference.md, once the README's) that holds ``containing``, as it stands."""
    blocks = re.findall(r"^```sh\n(.*?)^```$", (REPO / "docs" / "reference.md").read_text(), re.M | re.S)
    [block] = [b for b in blocks if containing in b]
    return block


@pytest.fixture(scope="module")
def executor_python(tmp_path_factory) -> str:
    """A venv with the executors' requirements only, at this venv's versions: no kraftcheck, no pyspark."""
    venv = tmp_path_factory.mktemp("executors") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    pins = [f"{name}=={importlib.metadata.version(name)}" for name in EXECUTOR_REQUIREMENTS]
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *pins],
                   check=True, timeout=900, capture_output=True)
    missing = subprocess.run([python, "-c", "import kraftcheck"], capture_output=True, text=True, cwd=venv,
                             env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert "ModuleNotFoundError: No module named 'kraftcheck'" in missing.stderr
    return python


def cluster_env(conf_dir, **extra: str) -> dict[str, str]:
    """A node of this machine's cluster: loopback only (in its spark-defaults.conf, as a
    cluster configures it), and no kraftcheck on any path but what is shipped."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_MASTER", "SPARK_HOME")}
    return {**env, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_CONF_DIR": str(conf_dir), **extra}


@pytest.fixture(scope="module")
def conf_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("conf")
    (directory / "spark-defaults.conf").write_text(
        "spark.driver.host 127.0.0.1\nspark.driver.bindAddress 127.0.0.1\nspark.ui.enabled false\n")
    return directory


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory, conf_dir):
    with standalone_cluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1, memory="1g",
                            env=cluster_env(conf_dir)) as cluster:
        yield cluster


def submit(workdir, block: str, master: str, executor_python: str, conf_dir) -> subprocess.CompletedProcess:
    """Run ``block`` with bash in ``workdir``, where ``spec/`` is the checkout's, as a user
    would on the machine they submit from: this venv's ``kraftcheck``, ``python3`` and
    ``spark-submit`` first on the path."""
    workdir.mkdir(exist_ok=True)
    (workdir / "spec").symlink_to(REPO / "spec")
    env = cluster_env(conf_dir, MASTER_URL=master, EXECUTOR_PYTHON=executor_python,
                      PATH=f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run(["bash", "-e", "-c", block], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=900)


def local_check(tmp_path, *args: str) -> dict:
    summary = tmp_path / "local.json"
    p = subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", "check", str(REPO / "spec/configs/ci.toml"),
                        *args, "--quiet", "--no-picture", "--trace-dir", str(tmp_path / "local"),
                        "--json", str(summary)], capture_output=True, text=True, cwd=REPO, timeout=900)
    assert p.returncode in (0, 12), p.stderr
    return json.loads(summary.read_text())


def errors(p: subprocess.CompletedProcess) -> list[str]:
    """kraftcheck's error lines (spark-submit passes the driver's stderr on to its stdout)."""
    return [line for line in (p.stdout + p.stderr).splitlines() if line.startswith("kraftcheck: error:")]


def test_the_readmes_spark_submit_runs_on_a_cluster_whose_nodes_lack_kraftcheck(
        tmp_path, two_workers, executor_python, conf_dir):
    master, ui = two_workers
    block = readme_block("spark-submit --master")
    assert "kraftcheck spark-package --out dist" in block and block.rstrip().endswith("--json summary.json")
    started = time.monotonic()
    p = submit(tmp_path / "ci", block, master, executor_python, conf_dir)
    seconds = time.monotonic() - started
    assert p.returncode == 0, (p.stdout + p.stderr)[-5000:]
    assert errors(p) == [] and "executors' Python:" not in p.stdout + p.stderr  # a master on this machine: no note
    assert "ok: every invariant holds in every reachable state" in p.stdout
    spark = json.loads((tmp_path / "ci" / "summary.json").read_text())
    local = local_check(tmp_path)
    assert (spark["engine"], spark["verdict"], spark["distinct_states"]) == ("spark", "ok", 141_597)
    for key in ("verdict", "distinct_states", "generated_states", "depth"):
        assert spark[key] == local[key], key
    # the applications ran on both workers' cores, in executors that had only the shipped kraftcheck
    assert {(app["name"], app["cores"]) for app in master_status(ui)["completedapps"]} == {("kraftcheck", 2)}
    print(f"spark-submit of ci.toml: {seconds:.1f} s")


def test_the_readmes_spark_submit_finds_a_mutants_violation_as_the_local_engine_does(
        tmp_path, two_workers, executor_python, conf_dir):
    master, _ = two_workers
    block = readme_block("spark-submit --master").rstrip() + f" --set mutant={MUTANT}\n"
    p = submit(tmp_path / "mutant", block, master, executor_python, conf_dir)
    assert p.returncode == 12, (p.stdout + p.stderr)[-5000:]
    assert errors(p) == []
    spark = json.loads((tmp_path / "mutant" / "summary.json").read_text())
    local = local_check(tmp_path, "--set", f"mutant={MUTANT}")
    assert [(v["invariant"], v["length"]) for v in spark["violations"]] == [("IsrOnOnlineDirs", 21)]
    for key in ("violations", "distinct_states", "generated_states", "depth"):
        strip = (lambda vs: [(v["invariant"], v["length"]) for v in vs]) if key == "violations" else (lambda v: v)
        assert strip(spark[key]) == strip(local[key]), key
    trace = json.loads((tmp_path / "mutant" / spark["violations"][0]["trace"]).read_text())
    assert len(trace["states"]) == 21


def test_a_users_model_ships_with_py_files_as_the_readme_says(tmp_path, two_workers, executor_python, conf_dir):
    master, _ = two_workers
    block = readme_block("spark-submit --master")
    block = block.replace("--py-files dist/kraftcheck.zip", "--py-files dist/kraftcheck.zip,models/jugs.py")
    block = block.replace("check ci.toml", "check --model jugs:diehard")
    assert block.count("jugs") == 2
    (tmp_path / "user" / "models").mkdir(parents=True)
    (tmp_path / "user" / "models" / "jugs.py").write_bytes((REPO / "tests" / "models.py").read_bytes())
    p = submit(tmp_path / "user", block, master, executor_python, conf_dir)
    assert p.returncode == 12, (p.stdout + p.stderr)[-5000:]
    assert errors(p) == []
    spark = json.loads((tmp_path / "user" / "summary.json").read_text())
    assert (spark["distinct_states"], [(v["invariant"], v["length"]) for v in spark["violations"]]) == (
        14, [("NotFourGallons", 7)])


def test_executors_that_cannot_import_kraftcheck_are_one_line_and_exit_2(tmp_path, executor_python):
    """Executors running a Python without kraftcheck, nothing shipped (local mode: the same
    Python workers, started faster)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_MASTER")}
    env.update(SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=executor_python)
    p = subprocess.run([os.path.join(os.path.dirname(sys.executable), "kraftcheck"), "check", "--engine", "spark",
                        "--spark-master", "local[1]", "--quiet"], capture_output=True, text=True, cwd=tmp_path,
                       env=env, timeout=600)
    assert p.returncode == 2, p.stderr[-3000:]
    assert errors(p) == [
        f"kraftcheck: error: the executors' Python ({executor_python}) cannot import kraftcheck (no module named "
        "'kraftcheck'): ship kraftcheck.zip, built by 'kraftcheck spark-package --out DIR', with spark-submit "
        "--py-files DIR/kraftcheck.zip"]
    assert "Traceback" not in p.stderr.split("kraftcheck: error:")[-1]
