"""Careless and hostile input, second round: named pipes, shipped configs by name, odd names,
a bound that is not an integer; each one line and a documented exit code, nothing hanging."""

import json
import os

import pytest

import kraftcheck
from kraftcheck.checker.cli import main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_config_that_is_a_named_pipe_with_no_writer_does_not_hang(tmp_path, capsys):
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    code, out, err = run(capsys, "check", fifo)
    assert (code, out) == (2, "")
    assert err == f"kraftcheck: error: config file {fifo} is empty: a named pipe or a device with nothing to read\n"


def test_an_output_that_is_a_named_pipe_nobody_reads_is_said_after_the_verdict(tmp_path, capsys):
    fifo = tmp_path / "summary.json"
    os.mkfifo(fifo)
    code, out, err = run(capsys, "check", "--model", "tests.models:diehard", "--json", fifo, "--trace-dir", tmp_path,
                         "--quiet", "--no-picture")
    assert code == 12  # the verdict stands
    assert out.startswith("error: invariant NotFourGallons is violated; shortest trace: 7 states\n")
    assert err == f"kraftcheck: error: cannot write the summary to {fifo}: it is a named pipe that no process reads\n"


@pytest.mark.parametrize("name", ["heartbeat", "heartbeat.toml"])
def test_a_shipped_config_is_named_from_any_directory(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check", name, "--quiet", "--no-picture")
    assert (code, err) == (13, "")
    assert out.startswith("error: step property FencedUntilAssigned is violated; shortest trace: 12 states\n")
    assert (tmp_path / "out" / "heartbeat_FencedUntilAssigned.itf.json").is_file()


def test_a_file_of_that_name_comes_first(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "heartbeat").write_text('[check]\nmodel = "tests.models:countdown"\ndeadlock = false\n')
    code, out, err = run(capsys, "check", "heartbeat", "--quiet")
    assert (code, err) == (0, "")


@pytest.mark.parametrize("bound", [100.5, "100", True, 0])
def test_a_bound_that_is_no_positive_integer_is_refused(bound):
    with pytest.raises(ValueError, match=f"max_states must be a positive integer, got {bound!r}"):
        kraftcheck.check("tests.models:diehard", max_states=bound)


def test_a_config_whose_name_is_not_utf8_keeps_its_verdict_summary_and_report(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"\xed\xa0\x80jugs.toml")  # lone surrogates once decoded
    (tmp_path / name).write_text('[check]\nmodel = "tests.models:diehard"\n')
    (tmp_path / "plain.toml").write_text('[check]\nmodel = "tests.models:diehard"\n')
    code, out, err = run(capsys, "check", name, "plain.toml", "--json", "s.json", "--junit", "j.xml", "--no-picture")
    assert (code, err) == (12, "")
    assert "\\udced\\udca0\\udc80jugs.toml  violation" in out  # the table shows the bytes escaped
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert [c["config"]["source"] for c in summary["configs"]] == ["\ufffd\ufffd\ufffdjugs.toml", "plain.toml"]
    assert "<testcase" in (tmp_path / "j.xml").read_text(encoding="utf-8")


def test_names_with_escapes_and_bidi_controls_are_shown_escaped_in_the_table(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    name = "a\x1b[2Jb\u202e.toml"
    (tmp_path / name).write_text('[check]\nmodel = "tests.models:countdown"\ndeadlock = false\n')
    (tmp_path / "plain.toml").write_text('[check]\nmodel = "tests.models:countdown"\ndeadlock = false\n')
    code, out, err = run(capsys, "check", name, "plain.toml", "--quiet")
    assert (code, err) == (0, "")
    assert "\x1b" not in out and "\u202e" not in out
    assert out.splitlines()[1].startswith("a\\x1b[2Jb\\u202e.toml  ok")


def test_a_deleted_working_directory_is_said_as_such_not_blamed_on_the_model(tmp_path):
    import subprocess
    import sys

    gone = tmp_path / "gone"
    gone.mkdir()
    p = subprocess.run(["sh", "-c", f'cd "{gone}" && rmdir "{gone}" && exec "$0" -m kraftcheck.checker.cli check ci '
                        "--max-states 10", sys.executable], capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == "kraftcheck: error: the current directory no longer exists: cd to one that does\n"


def test_the_shipped_suite_is_named_from_any_directory(tmp_path, monkeypatch):
    from kraftcheck.checker.suite import load_suite

    monkeypatch.chdir(tmp_path)
    entries = load_suite("suite")
    assert len(entries) == 46 and entries[0].path.endswith(os.path.join("spec", "configs", "default.toml"))
    assert load_suite("suite.toml") == entries
