"""The example models kraftcheck ships (kraftcheck.examples): their figures, as the README's
tour and their docstrings give them, and their traces, which name a shipped model."""

import pytest

import kraftcheck
from kraftcheck.checker.cli import main


def test_two_phase_commit_reaches_tlcs_288_states_and_each_is_consistent():
    result = kraftcheck.check("kraftcheck.examples.twophase:make_model", deadlock=False)
    assert (result.verdict, result.distinct_states, result.generated_states, result.depth) == ("ok", 288, 762, 11)


def test_two_phase_commit_ends_and_deadlock_detection_says_so():
    result = kraftcheck.check("kraftcheck.examples.twophase:make_model")
    assert (result.verdict, result.deadlock.length) == ("deadlock", 5)


def test_committing_early_breaks_consistency():
    result = kraftcheck.check("kraftcheck.examples.twophase:make_model", deadlock=False, mutant="commit_early")
    [violation] = result.violations
    assert (violation.name, violation.length) == ("TCConsistent", 6)
    assert [step[0] for step in violation.trace] == [
        None, ("RMPrepare", 0), ("TMRcvPrepared", 0), "TMCommit", ("RMRcvCommitMsg", 0), ("RMChooseToAbort", 1)]


def test_the_jugs(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nobody"))  # an unsigned trace: the model is shipped
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--model", "kraftcheck.examples.diehard:make_model", "--quiet", "--no-picture"]) == 12
    out = capsys.readouterr().out
    assert out.startswith("error: invariant NotFourGallons is violated; shortest trace: 7 states\n"
                          "  trace: out/diehard_NotFourGallons.itf.json\n14 distinct states, 73 generated, depth 7")
    assert main(["trace", "replay", "out/diehard_NotFourGallons.itf.json"]) == 0


@pytest.mark.parametrize("setting", ["cups=2", "mutant=nothing"])
def test_a_bad_setting_is_bad_input(capsys, setting):
    assert main(["check", "--model", "kraftcheck.examples.twophase:make_model", "--set", setting]) == 2
    assert capsys.readouterr().err.startswith("kraftcheck: error: ")
