"""check with several configs (one table, the worst exit code, one summary), --junit,
--version and --no-symmetry, through a subprocess."""

import importlib.metadata
import json
import re
from pathlib import Path

import pytest

from kraftcheck.checker.cli import EXIT_SEVERITY, worst_exit_code
from tests.junit_schema import Invalid, validate
from tests.test_cli import REPO, kraftcheck


def write_config(folder: Path, name: str, model: str, deadlock: bool = True, **settings) -> str:
    lines = ["[check]", f'model = "{model}"', f"deadlock = {str(deadlock).lower()}", "", "[model]"]
    lines += [f"{key} = {value}" for key, value in settings.items()]
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def suite(tmp_path):
    """Three configs: one that holds (4 states), one with a violated invariant (the jugs, 14
    states, a trace of 7), one with a deadlock (6 states)."""
    return [
        write_config(tmp_path, "holds", "tests.models:countdown", deadlock=False, start=3),
        write_config(tmp_path, "jugs", "tests.models:diehard"),
        write_config(tmp_path, "stuck", "tests.models:countdown"),
    ]


def table_of(stdout: str) -> list[list[str]]:
    """The table at the end of the output: its lines split on runs of two spaces or more, the
    time column dropped (it varies)."""
    lines = stdout.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("config "))
    rows = [re.split(r" {2,}", line.strip()) for line in lines[start:]]
    return [row[:4] + row[5:] for row in rows]


def test_several_configs_one_table_and_the_worst_exit_code(tmp_path, suite):
    p = kraftcheck("check", *suite, "--trace-dir", str(tmp_path / "traces"), "--quiet", "--no-picture")
    assert p.returncode == 12, p.stderr
    assert table_of(p.stdout) == [
        ["config", "verdict", "states", "depth", "first violation"],
        [suite[0], "ok", "4", "4", "-"],
        [suite[1], "violation", "14", "7", "NotFourGallons (7 states)"],
        [suite[2], "deadlock", "6", "6", "Deadlock (6 states)"],
    ]
    # each config reported as a single one is, under its name
    assert f"checking tests.models:diehard with {suite[1]} (local engine)\n" in p.stdout
    assert "error: invariant NotFourGallons is violated; shortest trace: 7 states" in p.stdout
    assert sorted(f.name for f in (tmp_path / "traces").iterdir()) == [
        "jugs_NotFourGallons.itf.json", "stuck_Deadlock.itf.json"]
    assert p.stderr == ""


def test_the_summary_holds_an_entry_per_config(tmp_path, suite):
    summary = tmp_path / "summary.json"
    p = kraftcheck("check", *suite[::-1], "--json", str(summary), "--trace-dir", str(tmp_path / "t"), "--quiet")
    assert p.returncode == 12, p.stderr
    data = json.loads(summary.read_text())
    assert (data["verdict"], data["exit_code"]) == ("violation", 12)
    assert [(c["config"]["source"], c["verdict"], c["exit_code"], c["distinct_states"], c["depth"])
            for c in data["configs"]] == [
        (suite[2], "deadlock", 11, 6, 6), (suite[1], "violation", 12, 14, 7), (suite[0], "ok", 0, 4, 4)]
    [violation] = data["configs"][1]["violations"]
    assert (violation["invariant"], violation["length"]) == ("NotFourGallons", 7)
    assert data["configs"][0]["deadlock"]["length"] == 6


@pytest.mark.parametrize("chosen, code", [((0,), 0), ((0, 2), 11), ((2, 1), 12)])
def test_the_exit_code_is_the_worst_configs(tmp_path, suite, chosen, code):
    configs = [suite[i] for i in chosen] + ([suite[0]] if len(chosen) == 1 else [])
    p = kraftcheck("check", *configs, "--trace-dir", str(tmp_path), "--quiet")
    assert p.returncode == code, p.stderr


def test_worst_exit_code_order():
    assert EXIT_SEVERITY == (1, 12, 13, 11, 3, 0)
    assert worst_exit_code([0, 3, 11, 13, 12]) == 12
    assert worst_exit_code([0, 13, 11]) == 13
    assert worst_exit_code([12, 1, 0]) == 1
    assert worst_exit_code([3, 0]) == 3
    assert worst_exit_code([]) == 0


def test_a_bound_makes_a_config_incomplete(tmp_path, suite):
    bounded = write_config(tmp_path, "bounded", "tests.models:counters", deadlock=False)
    summary = tmp_path / "s.json"
    p = kraftcheck("check", suite[0], bounded, "--max-states", "10", "--json", str(summary),
                   "--trace-dir", str(tmp_path), "--quiet")
    assert p.returncode == 3, p.stderr
    assert table_of(p.stdout)[2] == [bounded, "incomplete", "10", "3", "-"]
    assert json.loads(summary.read_text())["verdict"] == "incomplete"


def test_a_failing_model_is_its_configs_error_and_the_others_are_checked(tmp_path, suite):
    failing = write_config(tmp_path, "failing", "tests.broken_models:exiting_successors")
    summary = tmp_path / "s.json"
    p = kraftcheck("check", failing, suite[1], "--json", str(summary), "--trace-dir", str(tmp_path), "--quiet")
    assert p.returncode == 1
    assert p.stderr == (f"kraftcheck: error: {failing}: the model called sys.exit(9) (broken_models.py:113)\n")
    assert table_of(p.stdout)[1:] == [
        [failing, "error", "-", "-", "the model failed (stderr says where)"],
        [suite[1], "violation", "14", "7", "NotFourGallons (7 states)"],
    ]
    data = json.loads(summary.read_text())
    assert (data["verdict"], data["exit_code"]) == ("error", 1)
    assert data["configs"][0] == {
        "verdict": "error", "error": "the model called sys.exit(9) (broken_models.py:113)", "exit_code": 1,
        "config": {"model": "tests.broken_models:exiting_successors", "source": failing,
                   "check": {"model": "tests.broken_models:exiting_successors", "deadlock": True}, "settings": {},
                   "search": {"max_states": None, "max_depth": None, "check_deadlock": True,
                              "stop_on_violation": True}}}


def test_a_bad_config_among_several_stops_before_any_search(tmp_path, suite):
    rejected = write_config(tmp_path, "rejected", "tests.models:diehard", gaol=4)
    p = kraftcheck("check", suite[1], rejected, "--trace-dir", str(tmp_path / "t"))
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == (f"kraftcheck: error: {rejected}: the model rejected its config: unknown model setting "
                        "'gaol' (known: big, goal, small)\n")
    p = kraftcheck("check", suite[1], str(tmp_path / "missing.toml"), "--trace-dir", str(tmp_path / "t"))
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"kraftcheck: error: config file not found: {tmp_path / 'missing.toml'}\n"
    assert not (tmp_path / "t").exists()


def test_two_configs_of_one_name_are_refused(tmp_path, suite):
    (tmp_path / "other").mkdir()
    twin = write_config(tmp_path / "other", "jugs", "tests.models:diehard")
    p = kraftcheck("check", suite[1], twin)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == (f"kraftcheck: error: {suite[1]} and {twin} would write the same trace files (jugs_*): "
                        "give each config a name of its own\n")


# ---------------------------------------------------------------- JUnit XML


def test_junit_report_of_several_configs(tmp_path, suite):
    report = tmp_path / "report.xml"
    p = kraftcheck("check", *suite, "--junit", str(report), "--trace-dir", str(tmp_path / "t"), "--quiet")
    assert p.returncode == 12, p.stderr
    root = validate(report.read_text(encoding="utf-8"))
    [testsuite] = root
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "2", "0")
    cases = testsuite.findall("testcase")
    assert [(c.get("name"), c.get("classname")) for c in cases] == [(path, "kraftcheck.check") for path in suite]
    assert cases[0].find("failure") is None
    assert re.fullmatch(r"4 distinct states, 4 generated, depth 4, \d+\.\d\d s\n", cases[0].find("system-out").text)
    failure = cases[1].find("failure")
    assert failure.get("message") == "invariant NotFourGallons is violated; shortest trace: 7 states"
    assert failure.get("type") == "NotFourGallons"
    shown = kraftcheck("trace", "show", str(tmp_path / "t" / "jugs_NotFourGallons.itf.json"), "--color", "never")
    assert failure.text == shown.stdout  # the trace as `trace show` prints it
    assert failure.text.splitlines()[:2] == ["tests.models:diehard: NotFourGallons", "── 0/6 Init"]
    deadlock = cases[2].find("failure")
    assert (deadlock.get("message"), deadlock.get("type")) == ("deadlock reached; shortest trace: 6 states",
                                                               "Deadlock")


def test_junit_report_of_one_config_and_of_a_failing_model(tmp_path, suite):
    report = tmp_path / "report.xml"
    p = kraftcheck("check", suite[0], "--junit", str(report), "--quiet")
    assert p.returncode == 0, p.stderr
    [case] = validate(report.read_text())[0].findall("testcase")
    assert case.get("name") == suite[0] and list(case) == [case.find("system-out")]
    failing = write_config(tmp_path, "failing", "tests.broken_models:exiting_successors")
    p = kraftcheck("check", failing, suite[0], "--junit", str(report), "--trace-dir", str(tmp_path), "--quiet")
    assert p.returncode == 1
    root = validate(report.read_text())
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "0", "1")
    error = root[0].find("testcase").find("error")
    assert (error.get("message"), error.get("type")) == ("the model called sys.exit(9) (broken_models.py:113)",
                                                         "model failed")
    p = kraftcheck("check", failing, "--junit", str(report), "--trace-dir", str(tmp_path), "--quiet")
    assert p.returncode == 1
    [case] = validate(report.read_text())[0].findall("testcase")
    assert case.find("error").get("message") == "the model called sys.exit(9) (broken_models.py:113)"


def test_the_junit_validator_rejects_what_the_schema_does_not_allow(tmp_path, suite):
    report = tmp_path / "report.xml"
    kraftcheck("check", suite[1], "--junit", str(report), "--trace-dir", str(tmp_path), "--quiet")
    text = report.read_text()
    validate(text)
    for change, error in [
        (('classname="kraftcheck.check" ', ""), "required attribute 'classname' is missing"),
        (("<properties />", "<properties /><bogus />"), "unexpected <bogus> at child 2"),
        (('tests="1"', 'tests="one"'), "'one' is not an xs:int"),
        (("</failure>", "</failure><error />"), "unexpected <error> at child 2"),
    ]:
        with pytest.raises(Invalid, match=re.escape(error)):
            validate(text.replace(*change, 1))


def test_an_unwritable_junit_path_is_refused_before_the_search(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    p = kraftcheck("check", "--model", "tests.models:diehard", "--junit", str(blocker / "r.xml"),
                   "--trace-dir", str(tmp_path / "t"))
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"kraftcheck: error: cannot write the JUnit report to {blocker / 'r.xml'}: Not a directory\n"


# ---------------------------------------------------------------- --version, --no-symmetry


def test_version():
    p = kraftcheck("--version")
    assert (p.returncode, p.stdout, p.stderr) == (0, f"kraftcheck {importlib.metadata.version('kraftcheck')}\n", "")


def test_no_symmetry_switches_canonical_off(tmp_path):
    summary = tmp_path / "s.json"
    p = kraftcheck("check", "--model", "tests.models:interchangeable", "--no-deadlock", "--json", str(summary))
    assert p.returncode == 0, p.stderr
    assert json.loads(summary.read_text())["distinct_states"] == 10  # multisets of 3 counters in 0..2
    p = kraftcheck("check", "--model", "tests.models:interchangeable", "--no-deadlock", "--no-symmetry",
                   "--json", str(summary))
    assert p.returncode == 0, p.stderr
    assert json.loads(summary.read_text())["distinct_states"] == 27  # 3 ** 3


def test_no_symmetry_is_refused_with_spark():
    p = kraftcheck("check", "--model", "tests.models:interchangeable", "--no-symmetry", "--engine", "spark")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == ("kraftcheck: error: --no-symmetry works with the local engine only: the Spark engine's "
                        "workers build the model from the config\n")


def test_repository_config_paths_in_one_run(tmp_path):
    configs = [str(REPO / "spec" / "configs" / f"{name}.toml") for name in ("heartbeat", "epochgate")]
    p = kraftcheck("check", *configs, "--trace-dir", str(tmp_path), "--quiet", "--no-picture")
    assert p.returncode == 13, p.stderr  # heartbeat's finding: a step property
    assert table_of(p.stdout)[1:] == [
        [configs[0], "violation", "198", "12", "FencedUntilAssigned (12 states)"],
        [configs[1], "ok", "14,893", "37", "-"],
    ]
