"""The pytest plugin (entry point ``pytest11``): kraftcheck configs as test items.

``pytest --kraftcheck [PATH...]`` collects every ``.toml`` file it meets that is a kraftcheck
config (its tables are ``[check]`` and ``[model]`` only) as a test file holding:

- ``check``: every invariant holds in every reachable state (an exhaustive search);
- ``mutant[NAME]``, for each mutant the ini option ``kraftcheck_mutants`` expects that config
  to catch: the search with ``mutant = NAME`` finds a violation the config does not have
  without it.

Each search runs on every core (``kraftcheck check --workers auto``), unless pytest-xdist
runs the items in several processes already: then each search keeps to one.

A failure's report is the counterexample as ``kraftcheck trace show`` prints it.  The ini
option ``kraftcheck_mutants`` takes one line per config, its file name's stem, a colon and the
mutants (``epochgate: skip_epoch_check accept_older_registration``).
"""

from __future__ import annotations

import io
import os
import tempfile
import tomllib

import pytest

MUTANTS_OPTION = "kraftcheck_mutants"


def pytest_addoption(parser) -> None:
    group = parser.getgroup("kraftcheck")
    group.addoption("--kraftcheck", action="store_true", default=False,
                    help="collect kraftcheck configs (*.toml) as tests: their check, and the mutants "
                         f"{MUTANTS_OPTION} expects them to catch")
    parser.addini(MUTANTS_OPTION, type="linelist", default=[],
                  help="one line per config: STEM: MUTANT [MUTANT ...], the mutants that config must catch")


def pytest_collect_file(file_path, parent):
    if file_path.suffix != ".toml" or not parent.config.getoption("kraftcheck"):
        return None
    if not _is_kraftcheck_config(file_path):
        return None
    return ConfigFile.from_parent(parent, path=file_path)


def _is_kraftcheck_config(path) -> bool:
    try:
        tables = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return bool(tables) and set(tables) <= {"check", "model"}


def expected_mutants(config, stem: str) -> list[str]:
    """The mutants the ini option expects the config named ``stem`` to catch."""
    mutants: list[str] = []
    for line in config.getini(MUTANTS_OPTION):
        name, sep, names = line.partition(":")
        if not sep:
            raise pytest.UsageError(f"{MUTANTS_OPTION}: expected 'STEM: MUTANT ...', got {line!r}")
        if name.strip() == stem:
            mutants.extend(names.split())
    return mutants


class ConfigFile(pytest.File):
    def collect(self):
        yield CheckItem.from_parent(self, name="check")
        for mutant in expected_mutants(self.config, self.path.stem):
            yield MutantItem.from_parent(self, name=f"mutant[{mutant}]", mutant=mutant)


class KraftcheckFailure(Exception):
    """A failed item: its report is the text, as it stands."""


class CheckItem(pytest.Item):
    def runtest(self) -> None:
        from kraftcheck.checker.api import check

        result = check(str(self.path), workers=_workers())
        if result.verdict == "ok":
            return
        if result.counterexamples:
            config, model = _model(str(self.path))
            raise KraftcheckFailure("\n".join(_finding(config, model, cx) for cx in result.counterexamples))
        raise KraftcheckFailure(f"{self.path}: incomplete: the search stopped at the {result.stopped_by} bound")

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

        result = check(str(self.path), mutant=self.mutant, workers=_workers())
        _, baseline = _model(str(self.path))
        if any(not also_without_mutant(baseline, cx) for cx in result.counterexamples):
            return
        raise KraftcheckFailure(f"mutant {self.mutant} escaped {self.path.name}: no invariant caught it")


def _workers() -> int | str:
    """Every core for one search, unless pytest-xdist spreads the items over the cores already."""
    return 1 if os.environ.get("PYTEST_XDIST_WORKER") else "auto"


def _model(path: str):
    from kraftcheck.checker.config import build_model, load_config

    config = load_config(path)
    return config, build_model(config)


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
