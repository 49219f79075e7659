"""The command line through a subprocess: exit codes, the JSON summary, error messages."""

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def kraftcheck(*args, cwd=REPO, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "kraftcheck.checker.cli", *args],
        capture_output=True, text=True, cwd=cwd, timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_diehard_exit_12_with_trace_and_summary(tmp_path):
    summary = tmp_path / "summary.json"
    p = kraftcheck("check", "--model", "tests.models:diehard", "--json", str(summary),
                   "--trace-dir", str(tmp_path / "traces"))
    assert p.returncode == 12, p.stderr
    data = json.loads(summary.read_text())
    assert data["verdict"] == "violation" and data["engine"] == "local"
    assert (data["distinct_states"], data["generated_states"], data["depth"]) == (14, 73, 7)
    [v] = data["violations"]
    assert v["invariant"] == "NotFourGallons" and v["length"] == 7
    assert set(data) >= {"coverage", "elapsed_s", "states_per_s", "fingerprint_collision_probability", "config"}
    assert data["config"]["model"] == "tests.models:diehard"
    trace = json.loads(Path(v["trace"]).read_text())
    assert len(trace["states"]) == 7 and trace["vars"] == ["small", "big"]
    assert trace["states"][-1]["big"] == 4
    assert [s["#meta"]["action"] for s in trace["states"]] == [
        "Init", "FillBig", "BigToSmall", "EmptySmall", "BigToSmall", "FillBig", "BigToSmall"]
    assert f"trace: {v['trace']}" in p.stdout


def test_traces_go_to_out_by_default(tmp_path):
    p = kraftcheck("check", "--model", "tests.models:diehard", "--quiet", cwd=tmp_path)
    # tests.models is importable from the current directory only through PYTHONPATH here
    assert p.returncode == 12, p.stderr
    assert (tmp_path / "out" / "diehard_NotFourGallons.itf.json").is_file()


def test_deadlock_exit_11_and_no_deadlock_exit_0(tmp_path):
    p = kraftcheck("check", "--model", "tests.models:countdown", "--trace-dir", str(tmp_path))
    assert p.returncode == 11 and "deadlock reached; shortest trace: 6 states" in p.stdout
    assert (tmp_path / "countdown_Deadlock.itf.json").is_file()
    p = kraftcheck("check", "--model", "tests.models:countdown", "--no-deadlock")
    assert p.returncode == 0 and "ok: every invariant holds" in p.stdout


def test_bound_exit_3_says_incomplete(tmp_path):
    summary = tmp_path / "s.json"
    p = kraftcheck("check", "--model", "tests.models:counters", "--max-states", "10", "--json", str(summary))
    assert p.returncode == 3 and "incomplete" in p.stdout
    assert json.loads(summary.read_text())["verdict"] == "incomplete"


def test_continue_and_set_override(tmp_path):
    summary = tmp_path / "s.json"
    p = kraftcheck("check", "--model", "tests.models:diehard", "--set", "goal=3", "--continue",
                   "--json", str(summary), "--trace-dir", str(tmp_path))
    data = json.loads(summary.read_text())
    assert p.returncode == 12
    assert data["distinct_states"] == 16 and data["config"]["settings"] == {"goal": 3}
    assert [v["length"] for v in data["violations"]] == [3]  # FillBig, BigToSmall: big = 2... small = 3


def test_continue_in_the_check_table_goes_on_as_the_flag_does(tmp_path):
    config = tmp_path / "jugs.toml"
    config.write_text('[check]\nmodel = "tests.models:diehard"\ncontinue = true\n\n[model]\ngoal = 3\n')
    summary = tmp_path / "s.json"
    p = kraftcheck("check", str(config), "--json", str(summary), "--trace-dir", str(tmp_path))
    assert p.returncode == 12
    assert json.loads(summary.read_text())["distinct_states"] == 16  # 6 when it stops at the first
    config.write_text('[check]\nmodel = "tests.models:diehard"\ncontinue = "yes"\n')
    p = kraftcheck("check", str(config))
    assert (p.returncode, p.stderr.strip()) == (2, f"kraftcheck: error: {config}: [check] continue must be a bool, not 'yes'")


def test_config_file_and_check_table(tmp_path):
    config = tmp_path / "jugs.toml"
    config.write_text('[check]\nmodel = "tests.models:countdown"\ndeadlock = false\n\n[model]\nstart = 3\n')
    summary = tmp_path / "s.json"
    p = kraftcheck("check", str(config), "--json", str(summary))
    assert p.returncode == 0, p.stderr
    assert json.loads(summary.read_text())["distinct_states"] == 4


def test_list_json():
    p = kraftcheck("list", "--model", "tests.models:diehard", "--json")
    assert p.returncode == 0
    assert json.loads(p.stdout) == {
        "invariants": ["TypeOK", "NotFourGallons"],
        "actions": ["FillSmall", "FillBig", "EmptySmall", "EmptyBig", "SmallToBig", "BigToSmall"],
        "temporal properties": [],
        "fairness": [],
        "mutants": [],
        "meanings": {},  # the jugs' invariants are lambdas, without docstrings
    }


def test_list_shows_what_each_property_and_action_means_and_where_each_mutant_is_caught():
    p = kraftcheck("list", "spec/configs/ci.toml")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert re.fullmatch(r"  LeaderOnOnlineDir +No leader's replica is on a directory that is offline for its broker: "
                        r"clients would be sent to a replica that cannot serve them \(the reason KIP-858 exists\)\.",
                        lines[1])
    assert re.fullmatch(r"  BrokerSendsRegistration +\(Re\)send the registration until one is answered\.",
                        next(line for line in lines if line.startswith("  BrokerSendsRegistration ")))
    assert ("  skip_epoch_check: the controller acts on heartbeats, AssignReplicasToDirs and AlterReplicaState whatever "
            "their broker epoch (KIP-589's epoch gate removed) (caught by spec/configs/epochgate.toml)") in lines


def test_a_trace_says_what_its_property_and_actions_mean(tmp_path):
    p = kraftcheck("check", "spec/configs/heartbeat.toml", "--trace-dir", str(tmp_path), "--no-picture", "--quiet")
    assert p.returncode == 13, p.stderr
    shown = kraftcheck("trace", "show", str(tmp_path / "heartbeat_FencedUntilAssigned.itf.json")).stdout.splitlines()
    assert shown[:3] == [
        "heartbeat.toml: FencedUntilAssigned",
        "A broker that registered directories is never unfenced while metadata holds one of its replicas as "
        "UNASSIGNED: it could lead a replica whose directory nobody knows, and a failure of that directory wo…",
        "── 1/12 Init"]
    # each action's meaning once, under its first step
    assert shown.count("   (Re)send the registration until one is answered.") == 1


@pytest.mark.parametrize("args, message", [
    (["check", "missing.toml"], "kraftcheck: error: config file not found: missing.toml"),
    (["check", "--model", "no_such_module:f"],
     "kraftcheck: error: cannot import model module 'no_such_module': No module named 'no_such_module'"),
    (["check", "--model", "tests.models:nothing"], "kraftcheck: error: module 'tests.models' has no factory 'nothing'"),
    (["check", "--model", "tests.models"], "kraftcheck: error: model must be MODULE:FACTORY, got 'tests.models'"),
    (["check", "--model", "tests.models:diehard", "--set", "gaol=4"],
     "kraftcheck: error: the model rejected its config: unknown model setting 'gaol' (known: big, goal, small)"),
    (["check", "--model", "tests.models:diehard", "--set", "goal"],
     "kraftcheck: error: --set expects KEY=VALUE, got 'goal'"),
    (["check", "--model", "tests.models:diehard", "--max-depth", "x"],
     "kraftcheck: error: argument --max-depth: expected a positive integer, got 'x' (see 'kraftcheck check --help')"),
    (["check", "--engine", "warp"],
     "kraftcheck: error: argument --engine: unknown engine 'warp' (known: local, spark) (see 'kraftcheck check --help')"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    p = kraftcheck(*args)
    assert p.returncode == 2
    assert p.stderr.strip() == message
    assert "Traceback" not in p.stderr


def test_malformed_config_is_one_line(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[model\nbrokers = 2\n")
    p = kraftcheck("check", str(config))
    assert p.returncode == 2
    assert p.stderr.startswith(f"kraftcheck: error: {config} is not valid TOML: ")
    assert len(p.stderr.strip().splitlines()) == 1


def test_unknown_check_key(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('[check]\nmodel = "tests.models:diehard"\nspeed = 3\n')
    p = kraftcheck("check", str(config))
    assert p.returncode == 2
    assert p.stderr.strip() == (
        f"kraftcheck: error: {config}: unknown [check] key 'speed' (known: model, deadlock, max_states, max_depth, continue)")


def test_unwritable_json_is_refused_before_the_search(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    p = kraftcheck("check", "--model", "tests.models:diehard", "--trace-dir", str(tmp_path / "t"),
                   "--json", str(blocker / "s.json"))
    assert p.returncode == 2
    assert p.stderr.strip() == f"kraftcheck: error: cannot write the summary to {blocker / 's.json'}: Not a directory"
    assert p.stdout == "" and not (tmp_path / "t").exists()


def test_a_violated_step_property_exits_13_as_in_tlc(tmp_path):
    summary = tmp_path / "summary.json"
    p = kraftcheck("check", str(REPO / "spec" / "configs" / "epochgate.toml"), "--set", "mutant=accept_older_registration",
                   "--trace-dir", str(tmp_path), "--json", str(summary), "--quiet")
    assert p.returncode == 13, p.stderr
    assert "error: step property EpochsNeverDecrease is violated; shortest trace: 8 states" in p.stdout
    [v] = json.loads(summary.read_text())["violations"]
    assert (v["invariant"], v["kind"], v["length"]) == ("EpochsNeverDecrease", "action", 8)
