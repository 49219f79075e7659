"""Suite files: the configs one ``check --suite`` runs, and the violations some of them expect.

A suite is a TOML file of ``[[config]]`` entries, each with a ``path`` (relative to the suite
file) and optionally ``expect``: the names of the properties (invariants, step properties, or
``Deadlock``) whose violation is the config's expected outcome.  A model whose real counterpart
breaks a property (a finding) keeps its config in the suite that way: the run passes while the
finding still shows, and fails, with :data:`EXIT_EXPECTED_MISSING`, once it no longer does.

The suite names configs only; which model they load is decided as for any config (its
``[check] model`` or ``--model``), never by the suite.
"""

from __future__ import annotations

import importlib.resources
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .config import MAX_CONFIG_BYTES, ConfigError, brief
from .result import DEADLOCK_NAME

#: An expected violation did not occur: a suite's finding no longer shows (and, for
#: ``kraftcheck mutants``, a mutant escaped every config).
EXIT_EXPECTED_MISSING = 4
#: The suite ``make run`` checks: every shipped config.
SHIPPED_SUITE = "suite.toml"
ENTRY_KEYS = ("path", "expect")


@dataclass(frozen=True)
class SuiteEntry:
    """One config of a suite, and the properties whose violation it expects (none: it must pass)."""

    path: str
    expect: tuple[str, ...] = ()


def shipped_suite() -> str:
    """The path of the suite installed with the package (``spec/suite.toml``)."""
    return str(importlib.resources.files("kraftcheck.spec").joinpath(SHIPPED_SUITE))


def load_suite(path: str) -> list[SuiteEntry]:
    """The entries of the suite file ``path`` (or ``suite``/``suite.toml``: the shipped one, from
    any directory); bad input (one line) when it is not a suite."""
    if path in ("suite", SHIPPED_SUITE) and not os.path.exists(path):
        path = shipped_suite()
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"suite file not found: {path}") from None
    except OSError as e:
        raise ConfigError(f"cannot read suite file {path}: {e.strerror or e}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"suite file {path} is larger than {MAX_CONFIG_BYTES >> 20} MiB: not a suite")
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"cannot read suite file {path}: not UTF-8 (byte {e.start})") from None
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    unknown = sorted(set(document) - {"config"})
    if unknown:
        raise ConfigError(f"{path}: unknown table or key {unknown[0]!r} (a suite holds [[config]] entries only)")
    entries = document.get("config")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"{path}: a suite needs at least one [[config]] entry")
    folder = Path(path).parent
    return [_entry(path, folder, number, entry) for number, entry in enumerate(entries, 1)]


def _entry(path: str, folder: Path, number: int, entry: dict) -> SuiteEntry:
    where = f"{path}: [[config]] {number}"
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(ENTRY_KEYS)})")
    config = entry.get("path")
    if not isinstance(config, str) or not config:
        raise ConfigError(f"{where}: 'path' must be the config file's path, not {brief(config)}")
    expect = entry.get("expect", [])
    if isinstance(expect, str):
        expect = [expect]
    if not isinstance(expect, list) or not all(isinstance(name, str) and name for name in expect):
        raise ConfigError(f"{where}: 'expect' must be a property's name or a list of them, not {brief(expect)}")
    return SuiteEntry(str(folder / config) if folder != Path(".") else config, tuple(expect))


def check_expected_names(entry: SuiteEntry, model, source: str) -> None:
    """Every expected name is one of the model's properties (or ``Deadlock``): a misspelt one is
    bad input before the search, not a finding that never shows."""
    known = (set(getattr(model, "invariants", {}) or {}) | set(getattr(model, "action_invariants", {}) or {})
             | set(getattr(model, "temporal_properties", {}) or {}))
    for name in entry.expect:
        if name not in known and name != DEADLOCK_NAME:
            raise ConfigError(f"{source}: the suite expects {name!r}, which the model does not check "
                              f"(its properties: {', '.join(sorted(known)) or 'none'})")
