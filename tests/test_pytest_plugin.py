"""The pytest plugin (pytest --kraftcheck), run by pytester, and kraftcheck.check from Python."""

from pathlib import Path

import pytest

import kraftcheck
from kraftcheck.checker.cli import main
from tests.models import diehard

pytest_plugins = ["pytester"]

CONFIG = """[check]
model = "{model}"
deadlock = {deadlock}

[model]
{settings}
"""


@pytest.fixture
def project(pytester):
    """A project with three configs (one that holds, the jugs, a counter with mutants), a TOML
    file that is no config, and the mutants the counter must catch."""
    pytester.makefile(".toml", holds=CONFIG.format(model="tests.models:countdown", deadlock="false", settings="start = 3"),
                      jugs=CONFIG.format(model="tests.models:diehard", deadlock="true", settings=""),
                      even=CONFIG.format(model="tests.models:bounded", deadlock="false", settings="limit = 4"),
                      other='[tool]\nname = "not a config"\n')
    pytester.makeini("[pytest]\nkraftcheck_mutants =\n    even: overflow idle\n")
    return pytester


def test_configs_and_expected_mutants_are_test_items(project):
    result = project.runpytest("--kraftcheck", "-v")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines_random([
        "even.toml::check PASSED*",
        "even.toml::mutant?overflow? PASSED*",
        "even.toml::mutant?idle? FAILED*",
        "holds.toml::check PASSED*",
        "jugs.toml::check FAILED*",
    ])
    # the jugs' failure is the trace as `trace show` prints it
    result.stdout.fnmatch_lines([
        "*kraftcheck jugs.toml::check*",
        "*/jugs.toml: invariant NotFourGallons is violated; shortest trace: 7 states",
        "jugs.toml: NotFourGallons",
        "── 1/7 Init",
        "   small = 0",
        "   big = 0",
        "── 2/7 FillBig",
        "   big: 0 → 5",
        "*── 7/7 BigToSmall",
        "   small: 2 → 3",
        "   big: 5 → 4",
    ])
    result.stdout.fnmatch_lines(["*kraftcheck even.toml::mutant?idle?*",
                                 "mutant idle escaped even.toml: no invariant caught it"])
    assert "Traceback" not in result.stdout.str()


def test_without_the_option_no_config_is_collected(project):
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_a_bad_mutants_line_is_a_usage_error(pytester):
    pytester.makefile(".toml", even=CONFIG.format(model="tests.models:bounded", deadlock="false", settings=""))
    pytester.makeini("[pytest]\nkraftcheck_mutants =\n    even overflow\n")
    result = pytester.runpytest("--kraftcheck")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*kraftcheck_mutants: expected 'STEM: MUTANT ...', got 'even overflow'*"])


# ---------------------------------------------------------------- kraftcheck.check


def test_check_a_config_with_settings():
    result = kraftcheck.check("spec/configs/epochgate.toml", mutant="skip_epoch_check")
    assert (result.verdict, result.exit_code) == ("violation", 13)
    assert [(v.name, v.kind, v.length) for v in result.violations] == [("StaleEpochChangesNothing", "action", 11)]


def test_check_a_factory_a_model_and_search_options():
    assert kraftcheck.check("tests.models:diehard", goal=3).violations[0].length == 3
    result = kraftcheck.check(diehard())
    assert (result.distinct_states, result.violations[0].length) == (14, 7)
    assert kraftcheck.check("tests.models:interchangeable", deadlock=False).distinct_states == 10
    assert kraftcheck.check("tests.models:interchangeable", deadlock=False, symmetry=False).distinct_states == 27
    result = kraftcheck.check("tests.models:counters", max_states=10)
    assert (result.verdict, result.distinct_states) == ("incomplete", 10)
    result = kraftcheck.check("tests.models:diehard", goal=3, keep_going=True)
    assert result.distinct_states == 16  # the whole space: the search went on past the violation


def test_check_refuses_what_it_cannot_use():
    with pytest.raises(ValueError, match="unknown model setting 'gaol'"):
        kraftcheck.check("tests.models:diehard", gaol=4)
    with pytest.raises(ValueError, match="a model object takes no settings, got goal"):
        kraftcheck.check(diehard(), goal=3)
    with pytest.raises(RuntimeError, match="the factory gave up"):  # the model's own error, as it is
        kraftcheck.check("tests.broken_models:factory_raises")


def test_the_package_lists_what_it_offers():
    assert dir(kraftcheck) == ["CheckResult", "Counterexample", "Result", "__version__", "check"]


def test_a_result_writes_and_prints_its_counterexample(tmp_path, monkeypatch):
    result = kraftcheck.check("tests.models:diehard")
    path = result.write_trace(path=tmp_path / "jugs.itf.json")
    assert path == tmp_path / "jugs.itf.json"
    assert main(["trace", "replay", str(path), "--model", "tests.models:diehard"]) == 0
    text = result.trace_text()
    assert text.startswith("tests.models:diehard: NotFourGallons\n── 1/7 Init\n")
    assert text.endswith("── 7/7 BigToSmall\n   small: 2 → 3\n   big: 5 → 4\nstate 7 violates the invariant NotFourGallons\n")
    monkeypatch.chdir(tmp_path)  # by default where `kraftcheck check` writes it
    assert result.write_trace() == Path("out") / "diehard_NotFourGallons.itf.json"
    held = kraftcheck.check("tests.models:diehard", goal=9)
    with pytest.raises(ValueError, match="the search found no counterexample"):
        held.trace_text()


def test_only_files_that_declare_themselves_kraftcheck_configs_are_read(pytester):
    """A TOML file without a [check] table or [[config]] entries is not even parsed; one that
    declares itself and cannot be used is a collection error of one line."""
    pytester.makefile(".toml", huge="[tool]\nnumber = " + "9" * 5000 + "\n",
                      holds=CONFIG.format(model="tests.models:countdown", deadlock="false", settings="start = 3"),
                      typo='[check]\nmodel = "tests.models:countdown"\n\n[modle]\nstart = 3\n')
    result = pytester.runpytest("--kraftcheck", "-v", "--continue-on-collection-errors")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR collecting typo.toml*",
        f"{pytester.path / 'typo.toml'}: unknown table or key 'modle' (expected [check] and [model])",
    ])
    assert "number" not in result.stdout.str() and "Traceback" not in result.stdout.str()


def test_an_expected_finding_passes_while_it_shows(pytester):
    pytester.makefile(".toml", jugs=CONFIG.format(model="tests.models:diehard", deadlock="true", settings=""),
                      held=CONFIG.format(model="tests.models:diehard", deadlock="true", settings="goal = 9"))
    pytester.makeini("[pytest]\nkraftcheck_expect =\n    jugs: NotFourGallons\n    held: NotFourGallons\n")
    result = pytester.runpytest("--kraftcheck", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines_random([
        "jugs.toml::check PASSED*",
        "held.toml::check FAILED*",
        f"{pytester.path / 'held.toml'}: expected a violation of NotFourGallons; every invariant holds",
    ])


def test_a_suite_is_a_test_file_of_its_configs_each_with_its_expectation(pytester):
    pytester.makefile(".toml", jugs=CONFIG.format(model="tests.models:diehard", deadlock="true", settings=""),
                      holds=CONFIG.format(model="tests.models:countdown", deadlock="false", settings="start = 3"),
                      stuck=CONFIG.format(model="tests.models:countdown", deadlock="true", settings="start = 3"))
    pytester.makefile(".toml", suite='[[config]]\npath = "jugs.toml"\nexpect = ["NotFourGallons"]\n\n'
                                     '[[config]]\npath = "holds.toml"\n\n[[config]]\npath = "stuck.toml"\n')
    result = pytester.runpytest("--kraftcheck", "-v", "suite.toml")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines_random([
        "suite.toml::check?jugs? PASSED*",
        "suite.toml::check?holds? PASSED*",
        "suite.toml::check?stuck? FAILED*",
        "*/stuck.toml: deadlock reached; shortest trace: 4 states",
    ])


def test_an_expectation_naming_no_property_is_a_collection_error(pytester):
    pytester.makefile(".toml", jugs=CONFIG.format(model="tests.models:diehard", deadlock="true", settings=""))
    pytester.makeini("[pytest]\nkraftcheck_expect =\n    jugs: NotFiveGallons\n")
    result = pytester.runpytest("--kraftcheck")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"{pytester.path / 'jugs.toml'}: the suite expects 'NotFiveGallons', which the "
                                 "model does not check (its properties: NotFourGallons, TypeOK)"])
