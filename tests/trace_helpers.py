"""Shared by the trace tests: the CLI in a subprocess or in this process, Kafka traces of every mutant."""

from __future__ import annotations

import atexit
import fcntl
import functools
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "spec" / "configs"

def mutant_config(mutant: str) -> str:
    """The smallest config of spec/configs that catches ``mutant``: the one the Kafka model's
    tests name (``ci``, which has every feature on, for a mutant they do not list)."""
    from kraftcheck.model.mutants import CAUGHT_AT, LIVENESS_MUTANTS
    from tests.test_kafka_model import CAUGHT

    if mutant in LIVENESS_MUTANTS:  # the configs with the progress properties
        return CAUGHT_AT[mutant]
    return CAUGHT[mutant][0] if mutant in CAUGHT else "ci"


def _shared_root(tmp_path_factory) -> Path:
    base = tmp_path_factory.getbasetemp()
    # a worker's directory is popen-gwN inside the run's; without workers the run's is its own
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_by_workers(tmp_path_factory, key: str, compute):
    """``compute()``, once in a test run: pytest-xdist's workers share its result through a file
    in the run's temporary directory, the first to ask computing it while the others wait.  For
    searches of a minute that tests on several workers ask for (a mutant's trace, conformed to
    each Kafka release)."""
    root = _shared_root(tmp_path_factory)
    with open(root / f"shared-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = root / f"shared-{key}.pickle"
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = compute()
        # written whole, then renamed: shared_result reads without the lock
        path.with_suffix(".partial").write_bytes(pickle.dumps(value))
        path.with_suffix(".partial").replace(path)
        return value


#: the test run's tmp_path_factory, which tests/conftest.py hands over for the run's shared
#: searches; None outside pytest (``python -m tests.test_kafka_findings``): each search made then
SHARED_RUN = None


def config_search(name: str, keep_going: bool = False, **settings):
    """``kraftcheck.check`` on spec/configs/NAME.toml, its ``[model]`` table changed by
    ``settings``, once in a test run (one process, the liveness phase included, as ``kraftcheck
    check`` runs it): the :class:`Result`, traces and coverage included.  The search goes on past
    violations when the config does (``continue``) or ``keep_going`` asks it to.  A search that
    finds no violation is the same either way, so a search made the other way serves when it found
    none.  The main job's configs, the exact figures and TLC's agreement read these searches, each
    made once a run."""
    import tomllib

    import kraftcheck

    path = CONFIGS / f"{name}.toml"
    keep_going = keep_going or tomllib.loads(path.read_text())["check"].get("continue", False)

    def search():
        result = kraftcheck.check(str(path), keep_going=keep_going, **settings)
        # the model it keeps for writing traces holds the progress properties' closures, which
        # do not pickle: the shared search is its figures, coverage and traces
        vars(result).pop("_model", None)
        return result

    if SHARED_RUN is None:
        return search()
    changes = ",".join(f"{key}={value}" for key, value in sorted(settings.items()))

    def key(whole: bool) -> str:
        return f"config-{name}-{'whole' if whole else 'first'}-{changes}"

    other = shared_result(SHARED_RUN, key(not keep_going))
    if other is not None and not other.violations:
        return other
    return shared_by_workers(SHARED_RUN, key(keep_going), search)


def shared_result(tmp_path_factory, key: str):
    """What :func:`shared_by_workers` computed for ``key`` in this run so far, or None."""
    path = _shared_root(tmp_path_factory) / f"shared-{key}.pickle"
    return pickle.loads(path.read_bytes()) if path.exists() else None


def mutant_search(tmp_path_factory, mutant: str) -> tuple[str, list[tuple[str, int, list]], int]:
    """The search of ``mutant`` at the config that catches it (tests/test_kafka_model.py's table),
    once in a test run: its verdict, each violation's (name, length, trace), and the distinct
    states it found.  A config that
    goes on past its own findings (``continue``) goes on past the mutant's first too."""
    def search():
        import tomllib

        from kraftcheck.checker.bfs import explore
        from kraftcheck.model import make_model
        from tests.test_kafka_model import CAUGHT, config

        name = CAUGHT[mutant][0]
        keep_going = tomllib.loads((CONFIGS / f"{name}.toml").read_text())["check"].get("continue", False)
        result = explore(make_model(dict(config(name), mutant=mutant)), check_deadlock=False,
                         stop_on_violation=not keep_going)
        return result.verdict, [(v.name, v.length, list(v.trace)) for v in result.violations], result.distinct_states
    return shared_by_workers(tmp_path_factory, f"mutant-{mutant}", search)


def kraftcheck(*args, cwd=REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The CLI in a subprocess, as a user runs it; ``env`` adds to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "kraftcheck.checker.cli", *map(str, args)],
        capture_output=True, text=True, cwd=cwd, timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )


def run(capsys, *args) -> tuple[int, str, str]:
    """The CLI in this process: (exit code, stdout, stderr)."""
    from kraftcheck.checker.cli import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


#: mutants whose traces take long to write, their configs going on past their own findings
#: (powerloss.toml's mutant explores 442,223 states, cleanshutdown.toml's 30 s of search), or large
#: (fetchprogress.toml's two: 141,690 states, and 434,606 with a liveness phase): the trace and
#: conformance tests take them in CI and `make test-all` only (tests/test_kafka_model.py catches
#: the first two in `make test`)
SLOW_TRACE_MUTANTS = frozenset({"power_loss_reported_clean", "clean_shutdown_undetected", "single_truncation",
                                "new_epoch_not_cached"})


def mutant_params(mutants, exhaustive: bool = False) -> list:
    """``mutants`` as pytest parameters, the slow ones marked slow (and ``exhaustive``: left to
    `make test-all`, for a test whose every mutant makes a search of its own)."""
    import pytest

    marks = [pytest.mark.slow, pytest.mark.exhaustive] if exhaustive else [pytest.mark.slow]
    return [pytest.param(m, marks=marks) if m in SLOW_TRACE_MUTANTS else m for m in sorted(mutants)]


class _KafkaTraces(dict):
    """mutant -> its traces, each mutant's written the first time it is asked for."""

    def __missing__(self, mutant: str) -> list[Path]:
        if SHARED_RUN is None:
            self[mutant] = _write_kafka_traces(_trace_root() / mutant, mutant)
        else:  # written once a run, in the run's directory, whichever worker asks first
            root = _shared_root(SHARED_RUN) / "traces" / mutant
            self[mutant] = shared_by_workers(SHARED_RUN, f"traces-{mutant}",
                                             lambda: _write_kafka_traces(root, mutant))
        return self[mutant]


@functools.cache
def _trace_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="kraftcheck-traces-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def _write_kafka_traces(root: Path, mutant: str) -> list[Path]:
    """The traces the checker writes for ``mutant`` at its config, in ``root``."""
    from kraftcheck.checker.bfs import explore
    from kraftcheck.checker.check import check_temporal
    from kraftcheck.checker.temporal import declared_properties
    from kraftcheck.checker.config import load_config
    from kraftcheck.model import make_model
    from kraftcheck.traces.counterexample import write_counterexample

    path = CONFIGS / f"{mutant_config(mutant)}.toml"
    config = load_config(str(path), None, [f"mutant={mutant}"])
    model = make_model(config.settings)
    keep_going = bool(config.check.get("continue", False))
    result = explore(model, check_deadlock=False, stop_on_violation=not keep_going)
    properties = declared_properties(model)
    if properties:  # a liveness mutant's lasso
        check_temporal(model, result, properties, after_violations=keep_going)
    meta = {"model": config.model, "config": config.to_json()}
    return [write_counterexample(root / f"{config.label}_{cx.name}.itf.json", model, cx, meta)
            for cx in result.counterexamples]


@functools.cache
def kafka_traces() -> dict[str, list[Path]]:
    """mutant -> the traces the checker writes for it at its config (each written once per
    session, when a test first asks for it)."""
    return _KafkaTraces()
