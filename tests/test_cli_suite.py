"""check with several configs (one table, the worst exit code, one summary), --junit,
--version and --no-symmetry, through a subprocess."""

import importlib.metadata
import json
import re
from pathlib import Path

import pytest

from kraftcheck.checker.check import EXIT_SEVERITY, worst_exit_code
from kraftcheck.checker.workers import available_cores
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


#: The line after the table when every config checks one model: which actions no config took.
ACTIONS_LINE = re.compile(r"^(every action was taken in some config|never enabled in any config: .*)$")


def table_of(stdout: str) -> list[list[str]]:
    """The table at the end of the output: its lines split on runs of two spaces or more, the
    time column dropped (it varies)."""
    lines = stdout.splitlines()
    start = max(i for i, line in enumerate(lines) if line.startswith("config "))
    end = next((i for i, line in enumerate(lines) if i > start and ACTIONS_LINE.match(line)), len(lines))
    rows = [re.split(r" {2,}", line.strip()) for line in lines[start:end]]
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
    assert p.stdout.startswith("config ")  # --quiet: the table only
    assert sorted(f.name for f in (tmp_path / "traces").iterdir()) == [
        "jugs_NotFourGallons.itf.json", "stuck_Deadlock.itf.json"]
    assert p.stderr == ""


def without_times(text: str) -> str:
    return re.sub(r"\d+\.\d\d s\b|\([\d,]+ states/s\)", "T", text)


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_a_line_per_config_as_it_finishes_then_the_table(tmp_path, suite, jobs):
    p = kraftcheck("check", *suite, "--trace-dir", str(tmp_path / "traces"), "--no-picture", "-j", jobs)
    assert p.returncode == 12, p.stderr
    traces = tmp_path / "traces"
    assert without_times(p.stdout).splitlines()[:3] == [
        f"[1/3] {suite[0]}: ok, 4 states, depth 4, T",
        f"[2/3] {suite[1]}: violation, 14 states, depth 7, T; NotFourGallons (7 states): "
        f"{traces / 'jugs_NotFourGallons.itf.json'}",
        f"[3/3] {suite[2]}: deadlock, 6 states, depth 6, T; Deadlock (6 states): {traces / 'stuck_Deadlock.itf.json'}",
    ]
    assert p.stdout.splitlines()[3].startswith("config ")
    assert p.stderr == ""


def test_verbose_reports_each_config_whole_and_any_number_of_jobs_prints_the_same(tmp_path, suite):
    outputs = []
    for jobs in ("1", "2", "3"):
        p = kraftcheck("check", *suite, "--trace-dir", str(tmp_path / jobs), "--no-picture", "--verbose", "-j", jobs)
        assert p.returncode == 12, p.stderr
        outputs.append(without_times(p.stdout.replace(str(tmp_path / jobs), "DIR")))
    assert outputs[0] == outputs[1] == outputs[2]
    # each config reported as a single one is, under its name, coverage included
    assert f"checking tests.models:diehard with {suite[1]} (local engine)\n" in outputs[0]
    assert "error: invariant NotFourGallons is violated; shortest trace: 7 states\n" in outputs[0]
    assert outputs[0].count("coverage:\n") == 3


def test_an_expected_violation_is_said_as_expected_not_as_an_error(tmp_path):
    jugs = write_config(tmp_path, "jugs", "tests.models:diehard")
    suite_file = tmp_path / "suite.toml"
    suite_file.write_text(f'[[config]]\npath = "{jugs}"\nexpect = ["NotFourGallons"]\n')
    p = kraftcheck("check", "--suite", str(suite_file), "--trace-dir", str(tmp_path / "t"), "--no-picture",
                   "--verbose")
    assert p.returncode == 0, p.stderr
    assert "expected: invariant NotFourGallons is violated; shortest trace: 7 states\n" in p.stdout
    assert "error:" not in p.stdout


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
    assert EXIT_SEVERITY == (1, 12, 13, 4, 11, 3, 0)
    assert worst_exit_code([0, 3, 11, 13, 12]) == 12
    assert worst_exit_code([0, 4, 11]) == 4
    assert worst_exit_code([4, 13]) == 13
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
                              "stop_on_violation": True,
                                  # two configs side by side, the cores shared out between them
                                  "workers": max(1, available_cores() // min(available_cores(), 2))}}}


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
    assert failure.text.splitlines()[:2] == ["jugs.toml: NotFourGallons", "── 1/7 Init"]
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


def write_suite(folder: Path, text: str) -> str:
    path = folder / "suite.toml"
    path.write_text(text)
    return str(path)


def test_a_suite_expects_violations(tmp_path, suite):
    """The jugs' violation and the deadlock are expected: both configs pass, the run exits 0, and
    the table says which were expected; paths are relative to the suite file."""
    path = write_suite(tmp_path, """
[[config]]
path = "holds.toml"

[[config]]
path = "jugs.toml"
expect = "NotFourGallons"

[[config]]
path = "stuck.toml"
expect = ["Deadlock"]
""")
    junit = tmp_path / "report.xml"
    p = kraftcheck("check", "--suite", path, "--trace-dir", str(tmp_path / "traces"), "--quiet", "--no-picture",
                   "--json", str(tmp_path / "s.json"), "--junit", str(junit))
    assert p.returncode == 0, p.stderr
    assert table_of(p.stdout) == [
        ["config", "verdict", "states", "depth", "first violation"],
        [suite[0], "ok", "4", "4", "-"],
        [suite[1], "expected", "14", "7", "NotFourGallons (7 states)"],
        [suite[2], "expected", "6", "6", "Deadlock (6 states)"],
    ]
    summary = json.loads((tmp_path / "s.json").read_text())
    assert (summary["verdict"], summary["exit_code"]) == ("ok", 0)
    assert [(c["verdict"], c.get("expect"), c.get("expectation_met"), c["exit_code"]) for c in summary["configs"]] == [
        ("ok", None, None, 0), ("violation", ["NotFourGallons"], True, 0), ("deadlock", ["Deadlock"], True, 0)]
    validate(junit.read_text())
    assert "<failure" not in junit.read_text()
    assert "expected: invariant NotFourGallons is violated; shortest trace: 7 states" in junit.read_text()


def test_an_expected_violation_that_does_not_show_exits_4(tmp_path, suite):
    path = write_suite(tmp_path, '[[config]]\npath = "holds.toml"\nexpect = "NonNegative"\n'
                                 '[[config]]\npath = "jugs.toml"\nexpect = "NotFourGallons"\n')
    junit = tmp_path / "report.xml"
    p = kraftcheck("check", "--suite", path, "--trace-dir", str(tmp_path), "--quiet", "--no-picture",
                   "--json", str(tmp_path / "s.json"), "--junit", str(junit))
    assert p.returncode == 4, p.stderr
    assert table_of(p.stdout)[1:] == [
        [suite[0], "missing", "4", "4", "none; expected NonNegative"],
        [suite[1], "expected", "14", "7", "NotFourGallons (7 states)"],
    ]
    summary = json.loads((tmp_path / "s.json").read_text())
    assert (summary["verdict"], summary["exit_code"]) == ("missing", 4)
    assert summary["configs"][0]["expectation_met"] is False
    validate(junit.read_text())
    assert 'type="ExpectedViolationMissing"' in junit.read_text()
    assert 'message="expected a violation of NonNegative; every invariant holds"' in junit.read_text()


def test_a_violation_the_suite_does_not_expect_fails_the_run(tmp_path, suite):
    """A deadlock where the suite expects an invariant: the config's own exit code, 11."""
    path = write_suite(tmp_path, '[[config]]\npath = "stuck.toml"\nexpect = "NonNegative"\n')
    p = kraftcheck("check", "--suite", path, "--trace-dir", str(tmp_path), "--quiet", "--no-picture")
    assert p.returncode == 11, p.stderr
    assert table_of(p.stdout)[1:] == [[suite[2], "deadlock", "6", "6", "Deadlock (6 states)"]]


@pytest.mark.parametrize("text,message", [
    ("", "{path}: a suite needs at least one [[config]] entry"),
    ("[check]\nmodel = 'x'\n", "{path}: unknown table or key 'check' (a suite holds [[config]] entries only)"),
    ("[[config]]\nfile = 'a.toml'\n", "{path}: [[config]] 1: unknown key 'file' (known: path, expect)"),
    ("[[config]]\npath = 3\n", "{path}: [[config]] 1: 'path' must be the config file's path, not 3"),
    ("[[config]]\npath = 'jugs.toml'\nexpect = [1]\n",
     "{path}: [[config]] 1: 'expect' must be a property's name or a list of them, not [1]"),
    ("[[config]]\npath = 'jugs.toml'\nexpect = 'NotFiveGallons'\n",
     "{folder}/jugs.toml: the suite expects 'NotFiveGallons', which the model does not check "
     "(its properties: NotFourGallons, TypeOK)"),
    ("[[config]]\npath = 'gone.toml'\n", "config file not found: {folder}/gone.toml"),
    ("[[config]\n", "{path} is not valid TOML: Expected ']]' at the end of an array declaration (at line 1, column 9)"),
])
def test_a_bad_suite_is_one_line_and_exit_2(tmp_path, suite, text, message):
    path = write_suite(tmp_path, text)
    p = kraftcheck("check", "--suite", path, "--trace-dir", str(tmp_path / "traces"))
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"kraftcheck: error: {message.format(path=path, folder=tmp_path)}\n"
    assert not (tmp_path / "traces").exists()


def test_a_suite_and_config_files_together_are_bad_usage(tmp_path, suite):
    p = kraftcheck("check", suite[0], "--suite", write_suite(tmp_path, '[[config]]\npath = "jugs.toml"\n'))
    assert p.returncode == 2
    assert p.stderr == "kraftcheck: error: give config files or --suite, not both\n"
    missing = kraftcheck("check", "--suite", str(tmp_path / "none.toml"))
    assert (missing.returncode, missing.stderr) == (2, f"kraftcheck: error: suite file not found: {tmp_path}/none.toml\n")


@pytest.mark.slow
def test_the_main_jobs_suite_takes_every_action_and_shows_every_finding():
    """spec/suite.toml, as `make run` checks it, but default.toml left out (it takes a minute and
    enables no action the others do not): every action is taken, the finding configs' violations
    are the expected ones, and every other config holds.  Each config's search is the one the
    run's other tests read too (``config_search``: the exact figures, TLC's agreement), made once;
    the suite's own rules judge them (``ConfigRun``'s expectations and exit code,
    ``never_enabled_in_any``).  The suite command around them is this file's other tests'."""
    from kraftcheck.checker.check import ConfigRun
    from kraftcheck.checker.suite import load_suite
    from kraftcheck.checker.suite_run import actions_never_enabled_line
    from tests.trace_helpers import config_search

    entries = load_suite(str(REPO / "spec" / "suite.toml"))
    names = [Path(entry.path).stem for entry in entries]
    assert names.count("default") == 1
    runs = {}
    for name, entry in zip(names, entries):
        if name != "default":
            runs[name] = ConfigRun(None, None, {}, result=config_search(name), expect=entry.expect)
    assert worst_exit_code(run.exit_code for run in runs.values()) == 0
    assert actions_never_enabled_line(list(runs.values())) == "every action was taken in some config"
    shipped = sorted(c.stem for c in (REPO / "spec" / "configs").glob("*.toml"))
    outcomes = {name: (run.verdict, list(run.expect) or None) for name, run in runs.items()}
    assert sorted([*outcomes, "default"]) == shipped
    assert {name: o for name, o in outcomes.items() if o[0] != "ok"} == {
        "heartbeat": ("violation", ["FencedUntilAssigned", "LeaderOnOnlineDir", "IsrOnOnlineDirs"]),
        "restart": ("violation", ["FencedBrokerLeadsNothing"]),
        "oldmetadata": ("violation", ["AcknowledgedFailureLeadsNothing"]),
        "failoverjbod": ("violation", ["FencedUntilAssigned", "LeaderOnOnlineDir", "IsrOnOnlineDirs"]),
        "disklost": ("violation", ["LeaderOnOnlineDir", "FencedBrokerLeadsNothing", "IsrOnOnlineDirs"]),
        "elr": ("violation", ["CleanLeaderFromIsrOrElr"]),
        "disklost44": ("violation", ["IsrOnOnlineDirs", "ElectedWhenPossible", "CommittedRecordsSurvive",
                                     "IsrHoldsCommittedRecords", "LossesDeclared"]),
        "elr40": ("violation", ["LeaderOnOnlineDir", "FencedBrokerLeadsNothing", "IsrOnOnlineDirs"]),
        "cleanshutdown": ("violation", ["CleanLeaderFromIsrOrElr"]),
        "elr44": ("violation", ["IsrOnOnlineDirs", "ElectedWhenPossible", "CleanLeaderFromIsrOrElr"]),
        "powerloss": ("violation", ["CleanLeaderFromIsrOrElr"]),
        "uncleantoggle": ("violation", ["CommittedRecordsSurvive", "IsrHoldsCommittedRecords"]),
        "cordons": ("violation", ["FencedUntilAssigned"]),
        "cordonrestart": ("violation", ["PlacementHonoursReportedCordons"]),
        "recovery": ("violation", ["CommittedRecordsSurvive", "IsrHoldsCommittedRecords", "RecoveryToolKeepsCommitted"]),
        "unclean": ("violation", ["CommittedRecordsSurvive", "IsrHoldsCommittedRecords"]),
        "uncleantopic": ("violation", ["LeaderOnOnlineDir", "FencedBrokerLeadsNothing", "IsrOnOnlineDirs",
                                       "ElectedWhenPossible", "CommittedRecordsSurvive", "IsrHoldsCommittedRecords",
                                       "LossesDeclared"]),
        "uncleanprogress": ("violation", ["LeaderOnOnlineDir", "FencedBrokerLeadsNothing", "IsrOnOnlineDirs",
                                          "ElectedWhenPossible"]),
        "designatedcode": ("violation", ["LeaderOnOnlineDir", "IsrOnOnlineDirs", "FencedUntilAssigned"]),
        "deletion": ("violation", ["LeaderOnOnlineDir", "IsrOnOnlineDirs", "FencedUntilAssigned"]),
        "reassignment": ("violation", ["FencedUntilAssigned"]),
        "movescode": ("violation", ["LeaderOnOnlineDir", "FencedBrokerLeadsNothing", "IsrOnOnlineDirs",
                                    "ElectedWhenPossible", "AcknowledgedFailureLeadsNothing", "FencedUntilAssigned"]),
    }
