"""The pytest plugin (entry point ``pytest11``): kraftcheck configs and suites as test items.

``pytest --kraftcheck [PATH...]`` collects the ``.toml`` files that declare themselves
kraftcheck's: a config has a ``[check]`` table, a suite ``[[config]]`` entries (a line that
says so, before anything is parsed: no other TOML file under the rootdir is read as TOML).  A
config or a suite that cannot be used is a collection error, in one line.

A config is a test file holding:

- ``check``: every invariant holds in every reachable state (an exhaustive search); or, when
  the ini option ``kraftcheck_expect`` names properties for it, the search violates some of
  them and no other (an expected finding, as a suite's ``expect``);
- ``mutant[NAME]``, for each mutant the ini option ``kraftcheck_mutants`` expects that config
  to catch: the search with ``mutant = NAME`` finds a violation the config does not have
  without it.

A suite is a test file with a ``check[STEM]`` item per config it lists, each expecting what
its entry's ``expect`` says.

Each search runs on every core (``kraftcheck check --workers auto``), unless pytest-xdist
runs the items in several processes already: then each search keeps to one.

A failure's report is the counterexample as ``kraftcheck trace show`` prints it.  The ini
options take one line per config, its file name's stem, a colon and names
(``kraftcheck_mutants = epochgate: skip_epoch_check``, ``kraftcheck_expect = heartbeat: FencedUntilAssigned``).
"""

from __future__ import annotations

import io
import os
import re
import tempfile

import pytest

MUTANTS_OPTION = "kraftcheck_mutants"
EXPECT_OPTION = "kraftcheck_expect"
#: What a kraftcheck config or suite has on a line of its own: its ``[check]`` table, or a
#: ``[[config]]`` entry.  Only such files are parsed.
CONFIG_DECLARATION = re.compile(rb"^[ \t]*\[[ \t]*check[ \t]*\][ \t]*(#.*)?$", re.M)
SUITE_DECLARATION = re.compile(rb"^[ \t]*\[\[[ \t]*config[ \t]*\]\][ \t]*(#.*)?$", re.M)


def pytest_addoption(parser) -> None:
    group = parser.getgroup("kraftcheck")
    group.addoption("--kraftcheck", action="store_true", default=False,
                    help="collect kraftcheck configs (*.toml) as tests: their check, and the mutants "
                         f"{MUTANTS_OPTION} expects them to catch")
    parser.addini(MUTANTS_OPTION, type="linelist", default=[],
                  help="one line per config: STEM: MUTANT [MUTANT ...], the mutants that config must catch")
    parser.addini(EXPECT_OPTION, type="linelist", default=[],
                  help="one line per config: STEM: PROPERTY [PROPERTY ...], the violations that config must show")


def pytest_collect_file(file_path, parent):
    if file_path.suffix != ".toml" or not parent.config.getoption("kraftcheck"):
        return None
    declared = _declaration(file_path)
    if declared == "config":
        return ConfigFile.from_parent(parent, path=file_path)
    if declared == "suite":
        return SuiteFile.from_parent(parent, path=file_path)
    return None


def _declaration(path) -> str | None:
    """``config`` or ``suite`` when the file says it is one (:data:`CONFIG_DECLARATION`), else None."""
    from kraftcheck.checker.config import MAX_CONFIG_BYTES

    try:
        with open(path, "rb") as f:
            head = f.read(MAX_CONFIG_BYTES)
    except OSError:
        return None
    if SUITE_DECLARATION.search(head):
        return "suite"
    if CONFIG_DECLARATION.search(head):
        return "config"
    return None


def named_in_option(config, option: str, stem: str, what: str = "NAME") -> list[str]:
    """The names an ini option (``STEM: NAME ...`` lines) gives the config named ``stem``."""
    names: list[str] = []
    for line in config.getini(option):
        name, sep, listed = line.partition(":")
        if not sep:
            raise pytest.UsageError(f"{option}: expected 'STEM: {what} ...', got {line!r}")
        if name.strip() == stem:
            names.extend(listed.split())
    return names


def expected_mutants(config, stem: str) -> list[str]:
    """The mutants the ini option expects the config named ``stem`` to catch."""
    return named_in_option(config, MUTANTS_OPTION, stem, "MUTANT")


def _unusable(path, e: Exception):
    """A config or suite that cannot be used: a collection error of one line."""
    return pytest.Collector.CollectError(f"{path}: {e}" if str(path) not in str(e) else str(e))


class ConfigFile(pytest.File):
    def collect(self):
        from kraftcheck.checker.config import ConfigError, ModelFailed
        from kraftcheck.checker.suite import SuiteEntry, check_expected_names
        from kraftcheck.checker.workers import describe_failure

        expect = tuple(named_in_option(self.config, EXPECT_OPTION, self.path.stem, "PROPERTY"))
        try:
            _, model = _model(str(self.path))
            check_expected_names(SuiteEntry(str(self.path), expect), model, str(self.path))
        except ConfigError as e:
            raise _unusable(self.path, e) from None
        except ModelFailed as e:
            raise _unusable(self.path, describe_failure(e.__cause__)) from None
        yield CheckItem.from_parent(self, name="check", config_path=str(self.path), expect=expect)
        for mutant in expected_mutants(self.config, self.path.stem):
            yield MutantItem.from_parent(self, name=f"mutant[{mutant}]", mutant=mutant, config_path=str(self.path))


class SuiteFile(pytest.File):
    def collect(self):
        from kraftcheck.checker.config import ConfigError, ModelFailed
        from kraftcheck.checker.suite import check_expected_names, load_suite
        from kraftcheck.checker.workers import describe_failure

        try:
            entries = load_suite(str(self.path))
            for entry in entries:
                _, model = _model(entry.path)
                check_expected_names(entry, model, entry.path)
        except ConfigError as e:
            raise _unusable(self.path, e) from None
        except ModelFailed as e:
            raise _unusable(self.path, describe_failure(e.__cause__)) from None
        for entry in entries:
            stem = os.path.splitext(os.path.basename(entry.path))[0]
            yield CheckItem.from_parent(self, name=f"check[{stem}]", config_path=entry.path, expect=entry.expect)


class KraftcheckFailure(Exception):
    """A failed item: its report is the text, as it stands."""


class CheckItem(pytest.Item):
    def __init__(self, *, config_path: str, expect: tuple[str, ...] = (), **kwargs):
        super().__init__(**kwargs)
        self.config_path = config_path
        self.expect = expect

    def runtest(self) -> None:
        from kraftcheck.checker.api import check

        result = check(self.config_path, workers=_workers())
        found = result.counterexamples
        if self.expect:
            if found and {cx.name for cx in found} <= set(self.expect):
                return
            if not found:
                raise KraftcheckFailure(f"{self.config_path}: expected a violation of {', '.join(self.expect)}; "
                                        f"{'every invariant holds' if result.verdict == 'ok' else result.verdict}")
        elif result.verdict == "ok":
            return
        if found:
            config, model = _model(self.config_path)
            raise KraftcheckFailure("\n".join(_finding(config, model, cx) for cx in found
                                              if cx.name not in self.expect))
        raise KraftcheckFailure(f"{self.config_path}: incomplete: the search stopped at the {result.stopped_by} bound")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, KraftcheckFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"kraftcheck {self.path.name}::{self.name}"


class MutantItem(CheckItem):
    def __init__(self, *, mutant: str, **kwargs):
        super().__init__(**kwargs)
        self.mutant = mutant

    def runtest(self) -> None:
        from kraftcheck.checker.api import check
        from kraftcheck.checker.mutants import also_without_mutant

        result = check(self.config_path, mutant=self.mutant, workers=_workers())
        _, baseline = _model(self.config_path)
        if any(not also_without_mutant(baseline, cx) for cx in result.counterexamples):
            return
        raise KraftcheckFailure(f"mutant {self.mutant} escaped {self.path.name}: no invariant caught it")


def _workers() -> int | str:
    """Every core for one search, unless pytest-xdist spreads the items over the cores already."""
    return 1 if os.environ.get("PYTEST_XDIST_WORKER") else "auto"


def _model(path: str):
    from kraftcheck.checker.check import build_named_model
    from kraftcheck.checker.config import load_config

    config = load_config(path)
    return config, build_named_model(config)


def _finding(config, model, cx) -> str:
    """A counterexample as ``kraftcheck trace show`` prints it, under the report's line."""
    from kraftcheck.checker.check import finding_text
    from kraftcheck.traces.counterexample import write_counterexample
    from kraftcheck.traces.show import show_trace
    from kraftcheck.traces.trace import load_trace

    text = io.StringIO()
    text.write(f"{config.source}: {finding_text(cx)}; shortest trace: {cx.length} states\n")
    with tempfile.TemporaryDirectory() as folder:
        trace_path = os.path.join(folder, "trace.itf.json")
        write_counterexample(trace_path, model, cx, {"model": config.model, "config": config.to_json()})
        show_trace(load_trace(trace_path), file=text, color=False)
    return text.getvalue()
