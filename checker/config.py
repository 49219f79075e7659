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

import importlib
import importlib.resources
import os
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
}


class ConfigError(ValueError):
    """Bad input: a config, an override or a model reference that cannot be used."""


@dataclass
class CheckConfig:
    """Everything needed to build the model and run a check, as plain data."""

    model: str = DEFAULT_MODEL
    settings: dict[str, Any] = field(default_factory=dict)
    check: dict[str, Any] = field(default_factory=dict)
    #: where the config came from: a path, or "<embedded default.toml>"
    source: str = ""

    @property
    def label(self) -> str:
        """A short name for file names: the config file's stem, else the factory's name."""
        if self.source.startswith("<embedded"):
            return os.path.splitext(DEFAULT_CONFIG_NAME)[0]
        if self.source:
            return os.path.splitext(os.path.basename(self.source))[0]
        return self.model.rsplit(":", 1)[-1]

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "source": self.source, "check": self.check, "settings": self.settings}


def embedded_config_text(name: str = DEFAULT_CONFIG_NAME) -> str:
    """The text of a config shipped inside the package (``spec/configs/NAME``)."""
    resource = importlib.resources.files("kraftcheck.spec").joinpath("configs", name)
    try:
        return resource.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"the package holds no config named {name!r}") from None


def load_config(path: str | None, model: str | None = None, overrides: list[str] | None = None) -> CheckConfig:
    """The config from ``path`` (or the embedded default when both ``path`` and ``model`` are None),
    with ``--model`` and ``--set KEY=VALUE`` overrides applied."""
    if path is not None:
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8")
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {path}") from None
        except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
            raise ConfigError(f"cannot read config file {path}: {e}") from None
        config = parse_config(text, path)
    elif model is None:
        config = parse_config(embedded_config_text(), f"<embedded {DEFAULT_CONFIG_NAME}>")
    else:
        config = CheckConfig()
    if model is not None:
        config.model = model
    for item in overrides or []:
        key, value = parse_override(item)
        config.settings[key] = value
    return config


def parse_config(text: str, source: str) -> CheckConfig:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source} is not valid TOML: {e}") from None
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
            raise ConfigError(f"{source}: [check] {key} must be a {expected.__name__}, not {value!r}")
    config = CheckConfig(settings=dict(settings), check=dict(check), source=source)
    config.model = check.get("model", DEFAULT_MODEL)
    return config


def parse_override(item: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE a TOML scalar (``3``, ``true``, ``"x"``); a bare word is a string."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set expects KEY=VALUE, got {item!r}")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        if not raw or any(c in raw for c in "\"'[]{}=,#"):
            raise ConfigError(f"--set {key}: {raw!r} is not a TOML value") from None
        value = raw  # a bare word such as a mutant's name
    if isinstance(value, (dict, list)):
        raise ConfigError(f"--set {key}: expected a scalar, got {raw!r}")
    return key, value


def import_factory(reference: str):
    """The factory named by ``MODULE:FACTORY``, imported from the current directory or sys.path."""
    module_name, sep, attribute = reference.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"model must be MODULE:FACTORY, got {reference!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(f"cannot import model module {module_name!r}: {e}") from None
    except Exception as e:  # a user's module that fails while importing
        raise ConfigError(f"importing model module {module_name!r} failed: {type(e).__name__}: {e}") from None
    try:
        factory = getattr(module, attribute)
    except AttributeError:
        raise ConfigError(f"module {module_name!r} has no factory {attribute!r}") from None
    if not callable(factory):
        raise ConfigError(f"{reference} is not callable")
    return factory


def build_model(config: CheckConfig):
    """Call the config's factory with its settings; a setting the model rejects is bad input."""
    factory = import_factory(config.model)
    try:
        model = factory(dict(config.settings))
    except (ValueError, TypeError, KeyError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        raise ConfigError(f"the model rejected its config: {message}") from None
    missing = [m for m in ("init_states", "successors", "invariants") if not hasattr(model, m)]
    if missing:
        raise ConfigError(f"{config.model} did not return a model: it lacks {', '.join(missing)}")
    return model
