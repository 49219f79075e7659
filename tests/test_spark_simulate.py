"""``simulate --engine spark``: the walks spread over executors give the local engine's figures,
traces and verdict for the same seed and walk count, on one executor core or two."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.spark_helpers import REPO, loopback_env

pytestmark = pytest.mark.slow


def simulate(tmp_path, name: str, *args) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / name
    p = subprocess.run([sys.executable, "-m", "kraftcheck.checker.cli", "simulate", *args, "--json",
                        str(out / "summary.json"), "--trace-dir", str(out), "--no-picture", "--quiet"],
                       capture_output=True, text=True, cwd=REPO, timeout=600, env=loopback_env())
    summary = json.loads((out / "summary.json").read_text())
    for key in ("elapsed_s", "states_per_s", "engine"):
        summary.pop(key)
    for violation in summary["violations"]:
        document = json.loads(open(violation.pop("trace")).read())
        violation["walk"] = document["#meta"]["walk"]
        violation["actions"] = [state["#meta"]["action"] for state in document["states"]]
    return p, summary


@pytest.mark.parametrize("args, code", [
    # walk 800 of seed 1 breaks the step property StaleEpochChangesNothing alone: exit 13
    (["epochgate", "--set", "mutant=skip_epoch_check", "--walks", "2000", "--seed", "1"], 13),
    # going on, several walks break it and the invariant OfflineDirsReallyOffline, walk 1792 the
    # shortest of each: the merge keeps it whichever chunk held it
    (["epochgate", "--set", "mutant=skip_epoch_check", "--walks", "3000", "--seed", "1", "--continue"], 12),
    (["--model", "kraftcheck.examples.diehard:make_model", "--set", "goal=6", "--walks", "300", "--depth", "20",
      "--seed", "4"], 3),
], ids=["stops-at-the-first-violation", "continue", "no-violation"])
def test_spark_gives_the_local_engines_figures(tmp_path, args, code):
    local_run, local = simulate(tmp_path, "local", *args)
    assert local_run.returncode == code, local_run.stderr
    for master in ("local[1]", "local[2]"):
        spark_run, spark = simulate(tmp_path, master, *args, "--engine", "spark", "--spark-master", master)
        assert spark_run.returncode == code, spark_run.stderr
        assert spark == local, master
        assert verdict_lines(spark_run.stdout) == verdict_lines(local_run.stdout) != []


def verdict_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("error:", "incomplete:"))]
