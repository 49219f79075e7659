"""``kraftcheck trace replay``: the checker's traces replay, edited ones are rejected with the step and why."""

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kraftcheck.checker.cli import main
from kraftcheck.model import MUTANTS, make_model
from kraftcheck.traces.replay import UntrustedModel, model_for
from kraftcheck.traces.trace import load_trace
from tests.trace_helpers import CONFIGS, kraftcheck, mutant_config, mutant_params, run

#: The test models are not shipped with kraftcheck: their traces replay when the reader names them.
DIEHARD = ("--model", "tests.models:diehard")


@pytest.fixture(scope="module")
def diehard_trace(tmp_path_factory):
    directory = tmp_path_factory.mktemp("diehard")
    p = kraftcheck("check", "--model", "tests.models:diehard", "--trace-dir", directory, "--quiet")
    assert p.returncode == 12, p.stderr
    return directory / "diehard_NotFourGallons.itf.json"


def edited(path: Path, tmp_path: Path, edit) -> Path:
    document = json.loads(path.read_text())
    edit(document)
    out = tmp_path / "edited.itf.json"
    out.write_text(json.dumps(document))
    return out


def test_the_checkers_trace_replays(capsys, diehard_trace):
    code, out, err = run(capsys, "trace", "replay", diehard_trace, *DIEHARD)
    assert (code, err) == (0, "")
    assert out == "valid: 7 states, every step a legal transition of tests.models:diehard; state 7 violates NotFourGallons\n"


def test_a_changed_value_is_rejected_at_its_step(capsys, diehard_trace, tmp_path):
    def edit(d):
        d["states"][3]["big"] = 3

    code, out, _ = run(capsys, "trace", "replay", edited(diehard_trace, tmp_path, edit), *DIEHARD)
    assert code == 1
    assert out == "invalid: step 4: EmptySmall leads to big = 2, but the trace has 3\n"


def test_a_changed_action_is_rejected_at_its_step(capsys, diehard_trace, tmp_path):
    def edit(d):
        d["states"][2]["#meta"]["action"] = "FillSmall"

    code, out, _ = run(capsys, "trace", "replay", edited(diehard_trace, tmp_path, edit), *DIEHARD)
    assert (code, out) == (1, "invalid: step 3: FillSmall leads to big = 5, but the trace has 2\n")


def test_an_unknown_action_is_not_enabled(capsys, diehard_trace, tmp_path):
    def edit(d):
        d["states"][1]["#meta"]["action"] = "Teleport"

    code, out, _ = run(capsys, "trace", "replay", edited(diehard_trace, tmp_path, edit), *DIEHARD)
    assert (code, out) == (1, "invalid: step 2: Teleport is not enabled in state 1\n")


def test_a_wrong_initial_state_is_rejected(capsys, diehard_trace, tmp_path):
    def edit(d):
        d["states"][0]["small"] = 1

    code, out, _ = run(capsys, "trace", "replay", edited(diehard_trace, tmp_path, edit), *DIEHARD)
    assert (code, out) == (1, "invalid: state 1: no initial state of the model matches: "
                              "it has small = 0, the trace has 1\n")


def test_a_trace_that_stops_short_of_the_violation_is_rejected(capsys, diehard_trace, tmp_path):
    def edit(d):
        d["states"].pop()

    code, out, _ = run(capsys, "trace", "replay", edited(diehard_trace, tmp_path, edit), *DIEHARD)
    assert (code, out) == (1, "invalid: state 6 does not violate NotFourGallons\n")


def test_a_parameter_that_is_not_enabled(capsys, tmp_path):
    p = kraftcheck("check", "--model", "tests.models:countdown", "--set", "start=3", "--trace-dir", tmp_path, "--quiet")
    assert p.returncode == 11
    path = tmp_path / "countdown,start=3_Deadlock.itf.json"
    code, out, _ = run(capsys, "trace", "replay", path, "--model", "tests.models:countdown")
    assert (code, out) == (0, "valid: 4 states, every step a legal transition of tests.models:countdown; "
                              "state 4 is a deadlock\n")

    def edit(d):
        d["states"][2]["#meta"]["params"] = [7]

    code, out, _ = run(capsys, "trace", "replay", edited(path, tmp_path, edit), "--model", "tests.models:countdown")
    assert (code, out) == (1, "invalid: step 3: Tick(7) is not enabled in state 2\n")

    def cut(d):
        d["states"].pop()

    code, out, _ = run(capsys, "trace", "replay", edited(path, tmp_path, cut), "--model", "tests.models:countdown")
    assert (code, out) == (1, "invalid: state 3 is not a deadlock: Tick(1) is enabled\n")


def test_settings_come_from_the_trace(capsys, tmp_path):
    p = kraftcheck("check", "--model", "tests.models:diehard", "--set", "goal=3", "--trace-dir", tmp_path, "--quiet")
    assert p.returncode == 12
    path = tmp_path / "diehard,goal=3_NotFourGallons.itf.json"
    code, out, _ = run(capsys, "trace", "replay", path, *DIEHARD)
    assert (code, out) == (0, "valid: 3 states, every step a legal transition of tests.models:diehard; "
                              "state 3 violates NotFourGallons\n")
    # other settings give another model, under which the trace's end is no violation
    code, out, _ = run(capsys, "trace", "replay", path, *DIEHARD, "--set", "goal=4")
    assert (code, out) == (1, "invalid: state 3 does not violate NotFourGallons\n")


def test_a_foreign_trace_needs_a_model(capsys, diehard_trace, tmp_path):
    document = json.loads(diehard_trace.read_text())
    document["#meta"] = {"format": "ITF", "source": "jugs.qnt", "status": "violation"}
    for state in document["states"]:
        state["#meta"] = {"index": state["#meta"]["index"]}
    path = tmp_path / "jugs.itf.json"
    path.write_text(json.dumps(document))
    code, out, err = run(capsys, "trace", "replay", path)
    assert code == 2 and out == ""
    assert err == (f"kraftcheck: error: {path} was not written by kraftcheck (jugs.qnt): replay needs a kraftcheck "
                   "model, given with --model MODULE:FACTORY (and --set KEY=VALUE for its settings)\n")
    # with a model, the steps are matched by state alone
    code, out, _ = run(capsys, "trace", "replay", path, "--model", "tests.models:diehard")
    assert (code, out) == (0, "valid: 7 states, every step a legal transition of tests.models:diehard; "
                              "the trace names no invariant to check at its end\n")
    document["states"][4]["big"] = 1
    path.write_text(json.dumps(document))
    code, out, _ = run(capsys, "trace", "replay", path, "--model", "tests.models:diehard")
    assert (code, out) == (1, "invalid: step 5: no action of the model leads from state 4 to state 5\n")


# ----------------------------------------------------------------------- every Kafka mutant


class _CheckedMutants(dict):
    """mutant -> its trace directory, the mutant checked by the CLI at its config the first time
    a test asks for it (each worker checks only the mutants of the tests it runs)."""

    def __init__(self, root: Path):
        super().__init__()
        self.root = root

    def __missing__(self, mutant: str) -> Path:
        directory = self.root / mutant
        p = kraftcheck("check", CONFIGS / f"{mutant_config(mutant)}.toml", "--set", f"mutant={mutant}",
                       "--trace-dir", directory, "--quiet")
        names = {trace.name.removesuffix(".itf.json").rsplit("_", 1)[1] for trace in directory.glob("*.itf.json")}
        # 13: step properties, or a liveness mutant's temporal properties, alone
        only_steps = names <= set(make_model({"mutant": mutant}).action_invariants) | set(
            make_model({"mutant": mutant, "progress": True, "records": 1, "fetch": "batch"}).temporal_properties)
        assert p.returncode == (13 if only_steps else 12), (mutant, p.stdout, p.stderr)  # TLC's codes
        # check leaves the trace and its picture beside it, and says where
        for trace in directory.glob("*.itf.json"):
            svg = trace.with_name(trace.name.removesuffix(".itf.json") + ".svg")
            assert f"  trace: {trace}\n  picture: {svg}\n" in p.stdout
            texts = "".join(ET.parse(svg).getroot().itertext())  # valid SVG, drawn with the Kafka picture
            assert "broker 0" in texts and "controller's metadata" in texts
        self[mutant] = directory
        return directory


@pytest.fixture(scope="module")
def mutant_traces(tmp_path_factory):
    """Every mutant checked by the CLI at its config, when first asked for: mutant -> its trace directory."""
    return _CheckedMutants(tmp_path_factory.mktemp("mutants"))


#: each mutant checked by the CLI in a process of its own, as a user runs it: the four slow ones'
#: searches (290 s in CI) are left to `make test-all`.  CI follows their traces step by step all
#: the same: tests/test_kafka_model.py's test_mutant_is_caught (the three safety mutants), and
#: tests/test_progress.py's lasso test, through `trace replay` (new_epoch_not_cached)
@pytest.mark.parametrize("mutant", mutant_params(MUTANTS, exhaustive=True))
def test_every_trace_of_every_mutant_replays(capsys, mutant_traces, mutant):
    traces = sorted(mutant_traces[mutant].glob("*.itf.json"))
    assert traces
    for trace in traces:
        document = json.loads(trace.read_text())
        length, invariant = len(document["states"]), document["#meta"]["invariant"]
        code, out, err = run(capsys, "trace", "replay", trace)
        assert (code, err) == (0, ""), out
        assert out.startswith(f"valid: {length} states, every step a legal transition of kraftcheck.model:make_model; ")
        # a lasso's line goes on with the property's formula
        assert out.endswith(f" violates {invariant}\n") or f"keeps the model's fairness, and violates {invariant} (" in out


def test_an_edited_kafka_trace_is_rejected(capsys, mutant_traces, tmp_path):
    path = mutant_traces["skip_epoch_check"] / "epochgate,mutant=skip_epoch_check_StaleEpochChangesNothing.itf.json"
    document = json.loads(path.read_text())
    assert document["states"][1]["#meta"] == {
        "index": 1, "action": "BrokerStarts", "params": [0, {"#tup": []}], "label": "BrokerStarts(b0)"}
    assert document["states"][1]["incarnation"] == [1]
    document["states"][1]["incarnation"] = [2]
    out_path = tmp_path / "edited.itf.json"
    out_path.write_text(json.dumps(document))
    code, out, _ = run(capsys, "trace", "replay", out_path)
    assert (code, out) == (1, "invalid: step 2: BrokerStarts(b0) leads to incarnation[0] = 1, "
                              "but the trace has 2\n")


def test_an_edited_field_is_named_by_its_path(capsys, mutant_traces, tmp_path):
    from kraftcheck.traces.trace import load_trace

    path = sorted(mutant_traces["fenced_leader_kept"].glob("*.itf.json"))[0]
    document = json.loads(path.read_text())
    i = next(i for i, s in enumerate(document["states"]) if isinstance(s["partition"][0], dict))
    leader = document["states"][i]["partition"][0]["leader"]
    document["states"][i]["partition"][0]["leader"] = leader + 7
    out_path = tmp_path / "edited.itf.json"
    out_path.write_text(json.dumps(document))
    label = load_trace(out_path).steps[i].label
    code, out, _ = run(capsys, "trace", "replay", out_path)
    assert (code, out) == (1, f"invalid: step {i + 1}: {label} leads to partition[0].leader = {leader}, "
                              f"but the trace has {leader + 7}\n")


def test_a_trace_this_user_wrote_names_its_model_and_an_edited_one_does_not(tmp_path, monkeypatch):
    """Signed with this user's key (traces/signature.py): trusted as written, and only so."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert main(["check", "--model", "tests.models:diehard", "--trace-dir", str(tmp_path), "--quiet", "--no-picture"]) == 12
    trace = tmp_path / "diehard_NotFourGallons.itf.json"
    key = tmp_path / "config" / "kraftcheck" / "trace-key"
    assert oct(key.stat().st_mode & 0o777) == "0o600" and len(key.read_text().strip()) == 64
    assert main(["trace", "replay", str(trace)]) == 0
    untrusted = ("the trace names model tests.models:diehard, which kraftcheck does not ship, and it is not a trace "
                 "this user's kraftcheck wrote as it stands; pass --model tests.models:diehard to trust it")
    document = json.loads(trace.read_text())
    edited = json.loads(trace.read_text())
    edited["states"][6]["big"] = 5  # one value changed: no longer what was signed
    for name, changed in [("edited", edited), ("unsigned", {**document, "#meta": {
            k: v for k, v in document["#meta"].items() if k != "signature"}})]:
        path = tmp_path / f"{name}.itf.json"
        path.write_text(json.dumps(changed))
        with pytest.raises(UntrustedModel, match=re.escape(untrusted)):
            model_for(load_trace(path))
    # another user's key: the same trace is no longer one of ours
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))
    with pytest.raises(UntrustedModel, match=re.escape(untrusted)):
        model_for(load_trace(trace))
