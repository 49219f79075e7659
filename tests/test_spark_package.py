"""What spark-submit ships to executors that lack kraftcheck (``kraftcheck spark-package``), the
executors' Python, and the line a task that cannot import a module becomes; no Spark started."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile

import pytest

from kraftcheck.checker import spark_package
from kraftcheck.checker.spark import missing_on_executors
from kraftcheck.checker.spark_session import pick_executor_python
from tests.spark_helpers import REPO


def kraftcheck(*args, cwd):
    return subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_the_packages_are_pyprojects():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert list(spark_package.PACKAGES) == project["packages"]
    assert {name: list(globs) for name, globs in spark_package.PACKAGE_DATA.items()} == project["package-data"]


def test_the_zip_holds_every_module_and_config_as_a_wheel_lays_them_out(tmp_path):
    p = kraftcheck("spark-package", "--out", tmp_path / "ship", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    archive = tmp_path / "ship" / "kraftcheck.zip"
    names = zipfile.ZipFile(archive).namelist()
    expected = [f"kraftcheck/{f.name}" for f in (REPO / "kraftcheck").glob("*.py")]
    for folder in ("checker", "examples", "model", "proofs", "traces", "spec", "conform", "cluster", "harness"):
        expected += [f"kraftcheck/{folder}/{f.name}" for f in (REPO / folder).glob("*.py")]
    expected += [f"kraftcheck/spec/configs/{f.name}" for f in (REPO / "spec" / "configs").glob("*.toml")]
    expected += [f"kraftcheck/spec/findings/{f.name}" for f in (REPO / "spec" / "findings").glob("*.itf.json")]
    expected += [f"kraftcheck/spec/scenarios/{f.name}" for f in (REPO / "spec" / "scenarios").glob("*.toml")]
    expected += [f"kraftcheck/spec/simulation/{f.name}" for f in (REPO / "spec" / "simulation").glob("*.toml")]
    expected += [f"kraftcheck/spec/{f.name}" for f in (REPO / "spec").iterdir() if f.suffix in (".tla", ".cfg")]
    expected += ["kraftcheck/spec/README.md", "kraftcheck/spec/suite.toml"]
    expected += ["kraftcheck/harness/pom.xml", "kraftcheck/harness/README.md"]
    java = REPO / "harness" / "src" / "main" / "java" / "org" / "apache" / "kafka" / "controller"
    expected += [f"kraftcheck/harness/src/main/java/org/apache/kafka/controller/{f.name}" for f in java.glob("*.java")]
    assert names == sorted(expected)
    assert p.stdout.splitlines() == [
        f"wrote {archive}: kraftcheck 0.1.0, {len(names)} files (spark-submit --py-files)",
        f"wrote {tmp_path / 'ship' / 'spark_submit.py'}: the driver script (spark-submit's application)",
        "the executors' Python needs xxhash, pyarrow, numpy installed",
    ]
    assert (tmp_path / "ship" / "spark_submit.py").read_bytes() == (REPO / "checker" / "spark_submit.py").read_bytes()


def test_two_builds_are_the_same_bytes(tmp_path):
    first, second = spark_package.build(tmp_path / "a"), spark_package.build(tmp_path / "b")
    assert first.archive.read_bytes() == second.archive.read_bytes()


def test_kraftcheck_runs_from_the_zip_alone(tmp_path):
    """A Python that imports kraftcheck from the zip only (``-S``: without this venv's editable
    install, but with its site-packages for the dependencies) builds the model and finds the
    embedded default config in the zip."""
    import sysconfig

    archive = spark_package.build(tmp_path).archive
    script = (f"import sys; sys.path.append({sysconfig.get_path('purelib')!r}); "
              "import importlib.util; print(importlib.util.find_spec('kraftcheck')); "
              f"sys.path.insert(0, {str(archive)!r}); "
              "from kraftcheck.checker.config import load_config, build_model; import kraftcheck; "
              "c = load_config(None, None, []); m = build_model(c); "
              "print(kraftcheck.__file__, c.source, len(list(m.init_states())))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["None", f"{archive}/kraftcheck/__init__.py <embedded default.toml> 1"]


def test_an_out_that_is_a_file_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "taken").write_text("")
    p = kraftcheck("spark-package", "--out", "taken", cwd=tmp_path)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", "kraftcheck: error: cannot write to taken: it is not a directory\n")


def test_spark_package_is_in_the_help(tmp_path):
    p = kraftcheck("--help", cwd=tmp_path)
    assert "spark-package" in p.stdout
    assert "build what spark-submit ships to executors that lack kraftcheck" in " ".join(p.stdout.split())


# ---------------------------------------------------------------- the executors' Python


@pytest.mark.parametrize("on_this_machine, configured, environ, expected", [
    (True, None, {}, (sys.executable, None)),
    (True, None, {"PYSPARK_PYTHON": "/env/bin/python"}, ("/env/bin/python", "PYSPARK_PYTHON")),
    (True, "/conf/python", {"PYSPARK_PYTHON": "/env/bin/python"}, ("/conf/python", "spark.pyspark.python")),
    (False, None, {}, ("python3", "Spark's default; set spark.pyspark.python or PYSPARK_PYTHON to choose")),
    (False, None, {"PYSPARK_PYTHON": "/env/bin/python"}, ("/env/bin/python", "PYSPARK_PYTHON")),
    (False, "/conf/python", {"PYSPARK_PYTHON": "/env/bin/python"}, ("/conf/python", "spark.pyspark.python")),
], ids=["here", "here-env", "here-conf", "remote", "remote-env", "remote-conf"])
def test_the_executors_python(on_this_machine, configured, environ, expected):
    assert pick_executor_python(on_this_machine, configured, environ) == expected


@pytest.mark.parametrize("master, expected", [
    ("local[2]", True), ("spark://127.0.0.1:7077", True), ("spark://localhost:7077", True),
    ("spark://[::1]:7077", True), ("spark://10.0.0.5:7077", False), ("spark://spark-master:7077", False),
    ("spark://10.0.0.5:7077,127.0.0.1:7077", False), ("yarn", False), ("k8s://https://10.0.0.1:6443", False),
])
def test_which_masters_are_on_this_machine(master, expected):
    from kraftcheck.checker.spark_session import _on_this_machine

    assert _on_this_machine(master) is expected


def test_a_remote_master_says_which_python_the_executors_run(monkeypatch):
    from kraftcheck.checker.spark_session import _use_executor_python

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    said = []
    _use_executor_python(False, "/opt/env/bin/python", said.append)
    assert said == ["executors' Python: /opt/env/bin/python (spark.pyspark.python)"]
    assert os.environ["PYSPARK_PYTHON"] == "/opt/env/bin/python"
    said.clear()
    monkeypatch.delenv("PYSPARK_PYTHON")
    _use_executor_python(True, None, said.append)
    assert said == [] and os.environ["PYSPARK_PYTHON"] == sys.executable


# ---------------------------------------------------------------- a module the executors lack


FAILURE = ("An exception was thrown from the Python worker:\nTraceback (most recent call last):\n"
           '  File "pyspark/worker.py", line 598, in read_single_udf\n'
           "ModuleNotFoundError: No module named '{}'\n")


@pytest.mark.parametrize("module, line", [
    ("kraftcheck", "the executors' Python (/x/python) cannot import kraftcheck (no module named 'kraftcheck'): "
                   "ship kraftcheck.zip, built by 'kraftcheck spark-package --out DIR', with spark-submit "
                   "--py-files DIR/kraftcheck.zip"),
    ("kraftcheck.checker", "the executors' Python (/x/python) cannot import kraftcheck (no module named "
                           "'kraftcheck.checker'): ship kraftcheck.zip, built by 'kraftcheck spark-package --out "
                           "DIR', with spark-submit --py-files DIR/kraftcheck.zip"),
    ("xxhash", "the executors' Python (/x/python) has no module named 'xxhash': install xxhash, pyarrow, numpy "
               "there, or set spark.pyspark.python to a Python that has them"),
    ("tests.models", "the executors' Python (/x/python) cannot import 'tests.models', which the driver imports: "
                     "ship it with spark-submit --py-files (a .py file, or a .zip of its package), or install it "
                     "there"),
    # missing on the driver too: the model's own code failed, as the local engine would say
    ("no_such_module_anywhere", None),
], ids=["kraftcheck", "a-part-of-it", "a-dependency", "the-models-module", "missing-everywhere"])
def test_a_module_the_executors_lack_is_one_line_naming_the_fix(monkeypatch, module, line):
    monkeypatch.setenv("PYSPARK_PYTHON", "/x/python")
    assert missing_on_executors(FAILURE.format(module)) == line
    assert missing_on_executors("PythonException: ValueError: bad state") is None


def test_a_shipped_file_is_found_by_its_name_in_client_mode(tmp_path, monkeypatch):
    sys.path.insert(0, str(REPO / "checker"))
    try:
        import spark_submit
    finally:
        sys.path.remove(str(REPO / "checker"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "here.toml").write_text("")
    shipped = {"ci.toml": "/abs/spec/configs/ci.toml", "here.toml": "/abs/here.toml"}
    assert spark_submit.with_shipped_paths(["check", "ci.toml", "here.toml", "--json", "s.json"], shipped) == [
        "check", "/abs/spec/configs/ci.toml", "here.toml", "--json", "s.json"]


def test_the_driver_script_without_the_zip_says_how_to_pass_it(tmp_path):
    p = kraftcheck("spark-package", "--out", tmp_path / "ship", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    # -S: no site-packages, as on a driver where kraftcheck is neither installed nor shipped
    p = subprocess.run([sys.executable, "-S", str(tmp_path / "ship" / "spark_submit.py"), "check", "ci"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == ("kraftcheck: error: this driver script needs kraftcheck: pass the zip `kraftcheck spark-package` "
                        "wrote beside it, with spark-submit --py-files kraftcheck.zip\n")
