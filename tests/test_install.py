"""The package as pip builds it: every data file in, and no setuptools warnings on the way."""

import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.test_cli import REPO


@pytest.mark.slow
def test_the_wheel_builds_without_warnings_and_holds_the_data(tmp_path):
    source = tmp_path / "source"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path / "dist"),
                        str(source)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    build_log = p.stdout + p.stderr
    # setuptools' warnings about folders that hold data (spec/configs, spec/findings)
    assert "absent from the `packages` configuration" not in build_log
    assert "Package would be ignored" not in build_log
    [wheel] = (tmp_path / "dist").glob("kraftcheck-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    configs = {f"kraftcheck/spec/configs/{path.name}" for path in (REPO / "spec" / "configs").glob("*.toml")}
    findings = {f"kraftcheck/spec/findings/{path.name}" for path in (REPO / "spec" / "findings").glob("*.itf.json")}
    scenarios = {f"kraftcheck/spec/scenarios/{path.name}" for path in (REPO / "spec" / "scenarios").glob("*.toml")}
    simulated = {f"kraftcheck/spec/simulation/{path.name}" for path in (REPO / "spec" / "simulation").glob("*.toml")}
    assert configs and findings and len(scenarios) == 8 and simulated
    assert configs | findings | scenarios | simulated | {"kraftcheck/spec/KRaftJBOD.tla", "kraftcheck/spec/README.md",
                                 "kraftcheck/spec/ci.cfg"} <= names
    # the Java harness, compiled where conform runs
    java = {f"kraftcheck/harness/src/main/java/org/apache/kafka/controller/{path.name}"
            for path in (REPO / "harness" / "src" / "main" / "java" / "org" / "apache" / "kafka" / "controller").glob("*.java")}
    assert len(java) == 7 and java | {"kraftcheck/harness/pom.xml"} <= names
