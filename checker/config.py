"""Check configurations: a TOML file, ``--set`` overrides, and the model they build.

A config file has two tables::

    [check]                                   # how to check (all optional)
    model = "kraftcheck.model:make_model"     # MODULE:FACTORY that builds the model
    deadlock = false                          # deadlock detection (default true)
    max_states = 1000000                      # bounds (default none)
    max_depth = 40

    [model]                                   # what the factory receives
    brokers = 2

The model's factory is called with the ``[model]`` table, overridden by ``--set``.  When no
file is given, the default config embedded in the package is used (``spec/configs/default.toml``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.machinery
import importlib.resources
import importlib.util
import os
import re
import reprlib
import sys
import tomllib
from dataclasses import dataclass, field
from typing import Any

DEFAULT_MODEL = "kraftcheck.model:make_model"
DEFAULT_CONFIG_NAME = "default.toml"

#: Keys of the ``[check]`` table and the types their values must have.
CHECK_KEYS: dict[str, type | tuple[type, ...]] = {
    "model": str,
    "deadlock": bool,
    "max_states": int,
    "max_depth": int,
    "continue": bool,
}
#: ``[check]`` keys that are bounds: at least 1, as ``--max-states`` and ``--max-depth``.
BOUND_KEYS = ("max_states", "max_depth")
#: Largest config file read.  Configs are a few lines; this stops ``/dev/zero`` or a
#: mistaken multi-gigabyte file from filling memory before TOML parsing even starts.
MAX_CONFIG_BYTES = 1 << 20
#: Deepest nesting of arrays and tables in a config.  A factory receives the values as they
#: are, and a value nested a thousand deep breaks ``repr`` and JSON (the summary, the traces).
MAX_CONFIG_NESTING = 32
#: Longest part of a trace file name made from ``--set`` overrides, in characters.
MAX_OVERRIDES_IN_NAME = 80

#: Echoes of the user's values in error messages: a long or deeply nested value is cut.
_brief_repr = reprlib.Repr()
_brief_repr.maxstring = 60
_brief_repr.maxother = 60
_brief_repr.maxlong = 40


def brief(value: Any) -> str:
    """``repr(value)``, cut to a few dozen characters, for an error message."""
    return _brief_repr.repr(value)


class ConfigError(ValueError):
    """Bad input: a config, an override or a model reference that cannot be used."""


class ModelFailed(Exception):
    """The model's own code raised (while being imported, built or run): the CLI says where and
    exits 1.  ``__cause__`` is what it raised."""


#: The model setting that switches a mutant (a known bug put back) on; "none" leaves it off.
MUTANT_SETTING = "mutant"
#: Factory names that say nothing of their model: a run is named after the module instead.
GENERIC_FACTORIES = ("make_model", "make", "model", "factory", "create")


@dataclass
class CheckConfig:
    """Everything needed to build the model and run a check, as plain data."""

    model: str = DEFAULT_MODEL
    settings: dict[str, Any] = field(default_factory=dict)
    check: dict[str, Any] = field(default_factory=dict)
    #: where the config came from: a path, or "<embedded default.toml>"
    source: str = ""
    #: the ``--set`` overrides applied to ``settings``, in the order first given
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """A short name for file names: the config file's stem, else the factory's name."""
        if self.source.startswith("<embedded"):
            return os.path.splitext(DEFAULT_CONFIG_NAME)[0]
        if self.source:
            return os.path.splitext(os.path.basename(self.source))[0]
        module, _, factory = self.model.rpartition(":")
        if factory in GENERIC_FACTORIES and module:  # kraftcheck.examples.twophase:make_model -> twophase
            return module.rsplit(".", 1)[-1]
        return factory

    @property
    def run_label(self) -> str:
        """:attr:`label` and the ``--set`` overrides, for the names of a run's trace files, so that
        runs of one config with different overrides (mutants) do not overwrite each other's
        traces: ``ci,mutant=skip_epoch_check``.  Characters unsafe in a file name become ``-``;
        overrides longer than :data:`MAX_OVERRIDES_IN_NAME` are cut and end in a hash of them all."""
        if not self.overrides:
            return self.label
        text = ",".join(f"{key}={_setting_text(value)}" for key, value in self.overrides.items())
        safe = re.sub(r"[^A-Za-z0-9._=,+-]", "-", text)
        if len(safe) > MAX_OVERRIDES_IN_NAME:
            digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
            safe = f"{safe[:MAX_OVERRIDES_IN_NAME - 9]}-{digest}"
        return f"{self.label},{safe}"

    def to_json(self) -> dict[str, Any]:
        # a file name that is not UTF-8 reaches Python with surrogates, which JSON files cannot hold
        source = self.source.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        return {"model": self.model, "source": source, "check": self.check, "settings": self.settings}


def embedded_config_text(name: str = DEFAULT_CONFIG_NAME) -> str:
    """The text of a config shipped inside the package (``spec/configs/NAME``)."""
    resource = importlib.resources.files("kraftcheck.spec").joinpath("configs", name)
    try:
        return resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"the package holds no config named {name!r}") from None


def _setting_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: Where shipped configs are found by name: the exhaustive ones, then those only simulated.
SHIPPED_CONFIG_FOLDERS = ("configs", "simulation")


def shipped_config_path(name: str) -> str | None:
    """The installed path of the shipped config ``name`` (``ci`` or ``ci.toml``; ``three``, a
    config for simulation), or None."""
    if not name or os.sep in name or (os.altsep and os.altsep in name) or name.startswith("."):
        return None
    file_name = name if name.endswith(".toml") else f"{name}.toml"
    for folder in SHIPPED_CONFIG_FOLDERS:
        resource = importlib.resources.files("kraftcheck.spec").joinpath(folder, file_name)
        try:
            if resource.is_file():
                return str(resource)
        except (OSError, ValueError):  # a name no file system takes: read as given, and said so there
            return None
    return None


def read_config_file(path: str) -> str:
    """The text of a config file; bad input when it cannot be read, is too large or is not UTF-8.

    A named pipe is opened without waiting for a writer: one that has none reads as empty."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        os.set_blocking(descriptor, True)
        with open(descriptor, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror or e}") from None
    if not data and not os.path.isfile(path):
        raise ConfigError(f"config file {path} is empty: a named pipe or a device with nothing to read")
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path} is larger than {MAX_CONFIG_BYTES >> 20} MiB: not a config")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"cannot read config file {path}: not UTF-8 (byte {e.start})") from None


def load_config(path: str | None, model: str | None = None, overrides: list[str] | None = None) -> CheckConfig:
    """The config from ``path`` (or the embedded default when both ``path`` and ``model`` are None),
    with ``--model`` and ``--set KEY=VALUE`` overrides applied."""
    if path is not None:
        if not os.path.exists(path):  # a shipped config by its name (`ci`, `ci.toml`), from any directory
            path = shipped_config_path(path) or path
        config = parse_config(read_config_file(path), path)
    elif model is None:
        config = parse_config(embedded_config_text(), f"<embedded {DEFAULT_CONFIG_NAME}>")
    else:
        config = CheckConfig()
    if model is not None:
        config.model = model
    for item in overrides or []:
        key, value = parse_override(item)
        config.settings[key] = value
        config.overrides[key] = value
    return config


def parse_config(text: str, source: str) -> CheckConfig:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source} is not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{source} is not valid TOML: arrays or tables nested too deeply") from None
    except ValueError as e:  # an integer of more than 4,300 digits
        raise ConfigError(f"{source} is not valid TOML: {e}") from None
    _check_values(data, source)
    unknown = sorted(set(data) - {"check", "model"})
    if unknown:
        raise ConfigError(f"{source}: unknown table or key {unknown[0]!r} (expected [check] and [model])")
    check = data.get("check", {})
    settings = data.get("model", {})
    if not isinstance(check, dict) or not isinstance(settings, dict):
        raise ConfigError(f"{source}: 'check' and 'model' must be tables")
    for key, value in check.items():
        if key not in CHECK_KEYS:
            raise ConfigError(f"{source}: unknown [check] key {key!r} (known: {', '.join(CHECK_KEYS)})")
        expected = CHECK_KEYS[key]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(f"{source}: [check] {key} must be a {expected.__name__}, not {brief(value)}")
        if key in BOUND_KEYS and value < 1:
            raise ConfigError(f"{source}: [check] {key} must be at least 1, not {value}")
    config = CheckConfig(settings=dict(settings), check=dict(check), source=source)
    config.model = check.get("model", DEFAULT_MODEL)
    return config


#: The values a config holds: TOML's, without its dates and times (which JSON, hence the
#: summary and the traces that record the config, cannot hold).
CONFIG_SCALARS = (str, int, float, bool)


def _check_values(data: dict, source: str) -> None:
    """Bad input when arrays and tables nest deeper than :data:`MAX_CONFIG_NESTING`, or a value
    is a date or a time."""
    level: list = [data]
    for _ in range(MAX_CONFIG_NESTING):
        nested = []
        for container in level:
            for item in container.values() if isinstance(container, dict) else container:
                if isinstance(item, (dict, list)):
                    nested.append(item)
                elif not isinstance(item, CONFIG_SCALARS):
                    raise ConfigError(f"{source}: {brief(item)} is a {type(item).__name__}: a config holds "
                                      "strings, numbers, booleans, arrays and tables")
        if not nested:
            return
        level = nested
    raise ConfigError(f"{source}: arrays or tables nested more than {MAX_CONFIG_NESTING} deep")


def parse_override(item: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE a TOML scalar (``3``, ``true``, ``"x"``); a bare word is a string."""
    if any(c in item for c in "\r\n"):
        # TOML would read the rest as more keys, and they would be dropped without a word
        raise ConfigError(f"--set expects one KEY=VALUE on one line, got {brief(item)}")
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set expects KEY=VALUE, got {brief(item)}")
    raw = raw.strip()
    try:
        parsed = tomllib.loads(f"value = {raw}")
    except tomllib.TOMLDecodeError:
        if not raw or any(c in raw for c in "\"'[]{}=,#"):
            raise ConfigError(f"--set {key}: {brief(raw)} is not a TOML value") from None
        parsed = {"value": raw}  # a bare word such as a mutant's name
    except (RecursionError, ValueError):  # nested a thousand deep; an integer of 4,300 digits
        raise ConfigError(f"--set {key}: {brief(raw)} is not a TOML value") from None
    value = parsed["value"]
    if not isinstance(value, CONFIG_SCALARS):
        raise ConfigError(f"--set {key}: expected a string, a number or a boolean, got {brief(raw)}")
    return key, value


def _is_current_directory(entry: str, cwd: str) -> bool:
    return entry in ("", ".") or os.path.realpath(entry) == cwd


@contextlib.contextmanager
def _current_directory_last():
    """The current directory at the end of ``sys.path`` for a while, and only there.

    A user's model module and the modules beside it are found in the current directory, but
    nothing there can stand in for an installed module (``graphviz.py``, ``rich.py``): those
    are found first, where they are installed."""
    try:
        cwd = os.path.realpath(os.getcwd())
    except FileNotFoundError:  # the directory was deleted under the command: bad input, not the model's fault
        raise ConfigError("the current directory no longer exists: cd to one that does") from None
    saved = list(sys.path)
    sys.path[:] = [entry for entry in saved if not _is_current_directory(entry, cwd)] + [cwd]
    try:
        yield cwd
    finally:
        sys.path[:] = saved


def _origin(spec) -> str | None:
    """Where a module spec loads from: a real path, "built-in" or "frozen"; None for a namespace package."""
    if spec is None or spec.origin in (None, "namespace"):
        return None
    return os.path.realpath(spec.origin) if spec.has_location else spec.origin


def _import_model_module(module_name: str):
    """Import ``module_name`` with the current directory last on ``sys.path``.

    A module or package in the current directory with the top-level name of an installed one
    that is not imported yet is refused: which one the user means is not clear, and kraftcheck
    would later import the user's file in place of the installed module it needs itself."""
    top = module_name.partition(".")[0]
    with _current_directory_last() as cwd:
        if top not in sys.modules:
            try:
                local = importlib.machinery.PathFinder.find_spec(top, [cwd])
            except (ImportError, OSError):
                local = None
            if _origin(local) is not None:
                sys.path.remove(cwd)
                try:
                    installed = importlib.util.find_spec(top)
                except (ImportError, ValueError):
                    installed = None
                finally:
                    sys.path.append(cwd)
                if _origin(installed) not in (None, _origin(local)):
                    raise ConfigError(
                        f"model module {top!r} in the current directory has the name of an installed module "
                        f"({_origin(installed)}): rename it")
        return importlib.import_module(module_name)


def import_factory(reference: str):
    """The factory named by ``MODULE:FACTORY``, imported from sys.path or, after it, the current directory."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"model must be MODULE:FACTORY, got {brief(reference)}")
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise ConfigError(f"model module {brief(module_name)} is not a Python module name")
    try:
        module = _import_model_module(module_name)
    except ImportError as e:
        if e.name is not None and (module_name == e.name or module_name.startswith(e.name + ".")):
            raise ConfigError(f"cannot import model module {brief(module_name)}: {e}") from None
        raise ModelFailed() from e  # the module itself imports something missing
    except (ConfigError, KeyboardInterrupt):
        raise
    except BaseException as e:  # the user's module fails while importing (SystemExit included)
        raise ModelFailed() from e
    try:
        factory = getattr(module, attribute)
    except AttributeError:
        raise ConfigError(f"module {brief(module_name)} has no factory {brief(attribute)}") from None
    except Exception as e:  # a module-level __getattr__ of the model's
        raise ModelFailed() from e
    if not callable(factory):
        raise ConfigError(f"{brief(reference)} is not callable")
    return factory


def build_model(config: CheckConfig):
    """Call the config's factory with its settings; a setting the model rejects is bad input.

    The current directory stays last on ``sys.path`` while the factory runs, so that a model
    importing its own helpers from there while it is built finds them."""
    factory = import_factory(config.model)
    try:
        with _current_directory_last():
            model = factory(dict(config.settings))
    except (ValueError, TypeError, KeyError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        raise ConfigError(f"the model rejected its config: {message}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # RuntimeError, RecursionError, MemoryError, sys.exit() ...
        raise ModelFailed() from e
    try:
        missing = [m for m in ("init_states", "successors", "invariants") if not hasattr(model, m)]
    except Exception as e:  # a property of the model's that raises
        raise ModelFailed() from e
    if missing:
        raise ConfigError(f"{config.model} did not return a model: it lacks {', '.join(missing)}")
    return model
