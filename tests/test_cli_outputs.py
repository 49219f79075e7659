"""An output never replaces an input, another output or a trace the search writes: each such
path is refused in one line, exit 2, before any search starts; and the extras a command needs."""

import os
import shutil
import subprocess
import sys

import pytest

from kraftcheck.checker.cli import main
from tests.test_cli import REPO

CI = REPO / "spec" / "configs" / "ci.toml"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    shutil.copy(CI, tmp_path / "ci.toml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, message", [
    (["check", "ci.toml", "--json", "ci.toml"], "--json ci.toml would replace the input ci.toml"),
    (["check", "ci.toml", "--junit", "./ci.toml"], "--junit ./ci.toml would replace the input ci.toml"),
    (["check", "ci.toml", "--json", "r.xml", "--junit", "r.xml"], "--junit r.xml would replace --json r.xml"),
    (["check", "ci.toml", "--json", "out/ci_Deadlock.itf.json"],
     "--json out/ci_Deadlock.itf.json would replace the trace out/ci_Deadlock.itf.json"),
    (["check", "ci.toml", "--json", "t/ci_LeaderOnOnlineDir.svg", "--trace-dir", "t"],
     "--json t/ci_LeaderOnOnlineDir.svg would replace the picture t/ci_LeaderOnOnlineDir.svg"),
    (["check", "ci.toml", "ci.toml", "--junit", "ci.toml"], "--junit ci.toml would replace the input ci.toml"),
    (["mutants", "ci.toml", "--junit", "ci.toml"], "--junit ci.toml would replace the input ci.toml"),
])
def test_an_output_that_would_replace_an_input_or_an_output_is_refused(folder, capsys, argv, message):
    before = (folder / "ci.toml").read_bytes()
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err == f"kraftcheck: error: {message}: give it a path of its own\n"
    assert (folder / "ci.toml").read_bytes() == before
    assert not (folder / "out").exists() and not (folder / "t").exists()


def test_a_suite_file_is_an_input_too(folder, capsys):
    suite = folder / "suite.toml"
    suite.write_text('[[config]]\npath = "ci.toml"\n')
    code, out, err = run(capsys, "check", "--suite", "suite.toml", "--json", str(suite))
    assert code == 2
    assert err == f"kraftcheck: error: --json {suite} would replace the input suite.toml: give it a path of its own\n"


def test_a_symbolic_link_to_an_input_is_that_input(folder, capsys):
    os.symlink(folder / "ci.toml", folder / "link.json")
    code, out, err = run(capsys, "check", "ci.toml", "--json", "link.json")
    assert code == 2
    assert err == "kraftcheck: error: --json link.json would replace the input ci.toml: give it a path of its own\n"


def test_the_trace_commands_do_not_write_over_the_trace(tmp_path, capsys):
    assert main(["check", "--model", "tests.models:diehard", "--trace-dir", str(tmp_path), "--quiet", "--no-picture"]) == 12
    [trace] = tmp_path.glob("*.itf.json")
    html = tmp_path / "t.html"
    shutil.copy(trace, html)
    capsys.readouterr()
    code, out, err = run(capsys, "trace", "html", str(html), "-o", str(html))
    assert code == 2
    assert err == f"kraftcheck: error: -o {html} would replace the input {html}: give it a path of its own\n"


def without(module: str, *argv: str) -> subprocess.CompletedProcess:
    """kraftcheck as it runs where ``module`` is not installed."""
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            f"from kraftcheck.checker.cli import main\nsys.exit(main({list(argv)!r}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)


@pytest.mark.parametrize("module, argv, extra, what", [
    ("z3", ["prove"], "prove", "kraftcheck prove"),
    ("z3", ["prove", "--induction"], "prove", "kraftcheck prove"),
    ("pyspark", ["check", "--engine", "spark"], "spark", "--engine spark"),
    ("pyarrow", ["check", "--engine", "spark", "spec/configs/ci.toml"], "spark", "--engine spark"),
])
def test_a_command_whose_extra_is_missing_says_which_in_one_line(module, argv, extra, what):
    p = without(module, *argv)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == (f"kraftcheck: error: {what} needs kraftcheck[{extra}], which is not installed here "
                        f"(no module {module!r}): pip install 'kraftcheck[{extra}]'\n")


def test_the_core_checks_without_the_extras(tmp_path):
    p = without("pyspark", "check", "--model", "tests.models:diehard", "--trace-dir", str(tmp_path), "--no-picture")
    assert p.returncode == 12, p.stderr
    assert "pyspark" not in p.stderr
